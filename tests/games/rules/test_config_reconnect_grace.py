"""``reconnect_grace_seconds`` (RULES.md §9): its default, its range, its JSON form, and the
engine's command line, whose answers it never changes (ENGINE_CLI.md)."""

from __future__ import annotations

import pytest

from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.errors import ConfigError
from tests.games.rules.test_cli import GOOD, Run, cli

__all__ = ["cli"]  # the command line run in-process, a fixture of test_cli


def test_9_grace_defaults_to_ten_seconds() -> None:
    assert DEFAULT_CONFIG.reconnect_grace_seconds == 10
    assert DEFAULT_CONFIG.to_dict()["reconnect_grace_seconds"] == 10


@pytest.mark.parametrize("seconds", [0, 1, 30, 60])
def test_9_grace_round_trips_through_json(seconds: int) -> None:
    config = RuleConfig(reconnect_grace_seconds=seconds)
    assert RuleConfig.from_json(config.to_json()) == config
    assert RuleConfig.from_dict(config.to_dict()).reconnect_grace_seconds == seconds


@pytest.mark.parametrize("value", [-1, 61, 3600, 1.5, "10", True, None])
def test_9_grace_out_of_range_is_refused(value: object) -> None:
    with pytest.raises(ConfigError) as refused:
        RuleConfig.from_dict({"reconnect_grace_seconds": value})
    assert str(refused.value).startswith("reconnect_grace_seconds must be")


def test_9_a_stored_configuration_without_the_grace_gets_the_default() -> None:
    stored = DEFAULT_CONFIG.to_dict()
    del stored["reconnect_grace_seconds"]
    assert RuleConfig.from_dict(stored) == DEFAULT_CONFIG


@pytest.mark.parametrize("command", sorted(GOOD))
def test_the_command_line_answers_the_same_whatever_the_grace(cli: Run, command: str) -> None:
    plain = cli(command, GOOD[command])
    graced = cli(command, {**GOOD[command], "config": {"reconnect_grace_seconds": 0}})
    assert plain.answer and graced.stdout == plain.stdout


def test_the_command_line_refuses_a_grace_out_of_range(cli: Run) -> None:
    bad = {**GOOD["arrange"], "config": {"reconnect_grace_seconds": 61}}
    assert cli("arrange", bad).code == "bad_config"

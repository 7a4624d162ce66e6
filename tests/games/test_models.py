"""Stored rule configurations: the default after migrate, snapshots, defaults, permissions."""

import dataclasses
import json

import numpy as np
import pytest
from django.core.management import call_command
from django.db import IntegrityError, transaction

from accounts.models import User
from games.models import RuleConfiguration, SpecialHandSetting
from games.rules import stats
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.setup import selectors as setup_selectors
from games.setup.selectors import rule_configuration_default, special_deals_get
from games.setup.services import (
    rule_configuration_save,
    rule_configuration_set_default,
    special_hands_save,
)

pytestmark = pytest.mark.django_db


def make_config(name: str, **fields: object) -> RuleConfiguration:
    return RuleConfiguration.from_engine(DEFAULT_CONFIG, name=name, **fields)


# The Standard rules after `migrate`: RULES.md's defaults, with the brisker comparison of
# games/migrations/0010_brisker_comparison (tempo).
MIGRATED_DEFAULT = dataclasses.replace(DEFAULT_CONFIG, reveal_interval_ms=500)


def test_the_default_configuration_after_migrate_is_rules_md() -> None:
    default = rule_configuration_default()
    assert RuleConfiguration.objects.filter(is_default=True).count() == 1
    assert default.engine_config() == MIGRATED_DEFAULT
    rows = list(default.special_hands.order_by("order"))
    assert [row.special for row in rows] == [s.id for s in DEFAULT_CONFIG.specials]
    assert [row.order for row in rows] == list(range(1, len(SPECIAL_IDS) + 1))
    # History starts with the state the migration made, then the tempo change.
    assert default.history.count() == 2
    assert default.history.first().history_change_reason.startswith("Tempo")
    assert SpecialHandSetting.history.filter(configuration_id=default.pk).count() == 15


def test_7_4_entry_minimum() -> None:
    default = rule_configuration_default()
    assert default.entry_minimum() == 108 * 100 * 3 == DEFAULT_CONFIG.entry_minimum
    assert default.entry_minimum(base_score=5) == 108 * 5 * 3
    default.special_hands.filter(special="supreme_dragon").update(enabled=False)
    assert default.entry_minimum() == 36 * 100 * 3


def test_a_snapshot_does_not_change_when_the_configuration_is_edited() -> None:
    config = rule_configuration_default()
    snapshot = config.snapshot()
    frozen = json.dumps(snapshot, sort_keys=True)

    config.base_score = 500
    config.gun_water = 5
    config.save()
    six_pairs = config.special_hands.get(special="six_pairs")
    six_pairs.water = 40
    six_pairs.save()

    assert json.dumps(snapshot, sort_keys=True) == frozen
    assert json.loads(frozen) == snapshot  # plain JSON, as a round will store it
    old = RuleConfiguration.engine_config_from_snapshot(json.loads(frozen))
    assert old == MIGRATED_DEFAULT
    assert old.special("six_pairs").water == 4
    new = RuleConfiguration.engine_config_from_snapshot(config.snapshot())
    assert (new.base_score, new.gun_water, new.special("six_pairs").water) == (500, 5, 40)


def test_a_snapshot_is_the_engines_canonical_json() -> None:
    config = RuleConfiguration.from_engine(RuleConfig(base_score=7), name="Two")
    assert config.snapshot() == config.engine_config().to_dict()
    assert RuleConfig.from_json(json.dumps(config.snapshot())) == config.engine_config()


def test_only_one_configuration_can_be_the_default() -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        make_config("Second default", is_default=True)


def test_saving_a_new_default_unsets_the_old_one() -> None:
    old = rule_configuration_default()
    new = make_config("Fast")
    new.is_default = True
    rule_configuration_save(configuration=new)

    old.refresh_from_db()
    assert not old.is_default
    assert rule_configuration_default() == new
    assert old.history.first().is_default is False  # the switch is recorded


def test_set_default_switches_and_is_idempotent() -> None:
    old = rule_configuration_default()
    new = make_config("Slow")
    rule_configuration_set_default(configuration=new)
    rule_configuration_set_default(configuration=new)
    assert rule_configuration_default() == new
    old.refresh_from_db()
    assert not old.is_default


def test_special_hands_can_swap_ranks() -> None:
    config = rule_configuration_default()
    flushes = config.special_hands.get(special="three_flushes")
    straights = config.special_hands.get(special="three_straights")
    assert (straights.order, flushes.order) == (14, 15)
    flushes.order, straights.order = straights.order, flushes.order
    special_hands_save(rows=[flushes, straights])

    order = config.engine_config().enabled_specials
    assert [s.id for s in order[-2:]] == ["three_flushes", "three_straights"]
    assert straights.history.first().order == 15
    assert flushes.history.first().order == 14


def test_staff_groups_have_their_permissions(make_staff) -> None:
    admin = make_staff("rules_admin")
    support = make_staff("support")
    admin = User.objects.get(pk=admin.pk)  # fresh permission cache
    support = User.objects.get(pk=support.pk)
    for model in ("ruleconfiguration", "specialhandsetting"):
        for action in ("view", "add", "change"):
            assert admin.has_perm(f"games.{action}_{model}")
        assert not admin.has_perm(f"games.delete_{model}")
        assert support.has_perm(f"games.view_{model}")
        for action in ("add", "change", "delete"):
            assert not support.has_perm(f"games.{action}_{model}")


def test_special_stats_are_simulated_once_then_read_from_the_cache(
    settings, tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = 30
    settings.SPECIAL_STATS_SEED = 4
    first = special_deals_get()
    assert (first.deals, first.seed) == (30, 4)
    assert (tmp_path / stats.cache_filename(30, 4)).exists()

    def fail(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated again")

    monkeypatch.setattr(stats, "simulate_deals", fail)
    assert special_deals_get() is first  # the same process keeps it
    setup_selectors._loaded.clear()
    assert np.array_equal(special_deals_get().masks, first.masks)  # another reads the file


def test_warm_special_stats_builds_the_cache_and_prints_the_table(
    settings, tmp_path, capsys
) -> None:
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = 25
    call_command("warm_special_stats", workers=1)
    out = capsys.readouterr().out
    assert "25 deals (100 hands, seed 13)" in out
    assert "Six pairs" in out
    assert "entry minimum 32,400 coins" in out
    assert (tmp_path / stats.cache_filename(25, 13)).exists()
    # And each variant deck a stored configuration plays (the migrations' preset ones).
    for extra_suits, jokers, spare in ((1, 0, 0), (0, 2, 0), (1, 0, 3)):
        shape = stats.DealShape(extra_suits, jokers, spare)
        assert (tmp_path / stats.cache_filename(25, 13, shape=shape)).exists(), shape
        assert f"{shape}: 25 deals" in out

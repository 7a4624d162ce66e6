"""The soak script (benchmarks.soak) against the live platform: 200 rounds at 8 tables with every
kind of fault, then its checks — coins conserved, no negative balance, one settlement per
round, every client's view equal to the stored result, the protocol kept, ledger_audit clean."""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys

import pytest
from django.core.management import CommandError, call_command

from benchmarks.soak import CLOCKS
from benchmarks.soak_faults import FAULTS
from games.models import RuleConfiguration
from tests.games.table_helpers import default_rules
from tests.live_server import ROOT, LivePlatform

CHECKS = {
    "rounds",
    "one_settlement_per_round",
    "coins_conserved",
    "no_negative_balance",
    "client_views",
    "protocol",
    "ledger_audit",
}
ROUNDS = 200


def test_soak_plays_200_rounds_with_faults_and_loses_nothing(live_platform: LivePlatform) -> None:
    default_rules()  # the lobby needs a default configuration; the script adds "Soak"
    env = {
        **os.environ,
        "DATABASE_URL": live_platform.database_url,
        "REDIS_URL": live_platform.redis_url,
        "DJANGO_SETTINGS_MODULE": live_platform.settings_module,
    }
    # Fault rates well above the defaults, so that every kind happens in 200 rounds (the
    # faults are seeded per table, round and seat: about 16-24 of each here).
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "benchmarks.soak",
            "--url",
            live_platform.url,
            "--rounds",
            str(ROUNDS),
            "--tables",
            "8",
            "--seed",
            "7",
            "--open-signups",
            "--p-disconnect=0.03",
            "--p-reload=0.03",
            "--p-timeout=0.02",
            "--p-escape=0.02",
            "--p-drop=0.03",
            "--timeout",
            "150",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
    )
    output = run.stdout + run.stderr
    print(run.stdout)  # the figures, shown with -s
    verdicts = re.findall(r"^(PASS|FAIL) (\w+):", run.stdout, re.MULTILINE)
    assert {name for _verdict, name in verdicts} == CHECKS, output
    assert all(verdict == "PASS" for verdict, _name in verdicts), output
    assert run.returncode == 0, output
    figures = dict(re.findall(r"^(\w+): (.*)$", run.stdout, re.MULTILINE))
    assert figures["rounds"].startswith(f"{ROUNDS} started of {ROUNDS}"), output
    injected = dict(re.findall(r"(\w+)=(\d+)", figures["faults"].split("(")[0]))
    for kind in (*FAULTS, "special"):
        assert int(injected[kind]) >= 1, f"no {kind} was injected:\n{output}"


@pytest.mark.django_db
def test_the_soak_rules_get_the_clocks_asked_for() -> None:
    """`load_test_rules --name Soak --<clock>-seconds N`: created with those clocks, updated to
    new ones (same configuration), an invalid clock refused with nothing changed."""
    default_rules()
    clocks = [f"--{name.replace('_', '-')}={value}" for name, value in CLOCKS.items()]
    first, again = io.StringIO(), io.StringIO()
    call_command("load_test_rules", "--name=Soak", *clocks, stdout=first)
    rules = RuleConfiguration.objects.get(pk=int(first.getvalue()))
    config = rules.engine_config()
    assert {name: getattr(config, name) for name in CLOCKS} == CLOCKS
    assert (config.deal_interval_ms, config.reveal_interval_ms) == (0, 0)

    call_command(
        "load_test_rules", "--name=Soak", "--arrange-seconds=3", stdout=again, stderr=io.StringIO()
    )
    assert again.getvalue() == first.getvalue()
    rules.refresh_from_db()
    assert rules.arrange_seconds == 3 and rules.ready_seconds == CLOCKS["ready_seconds"]

    with pytest.raises(CommandError, match="arrange_seconds"):
        call_command("load_test_rules", "--name=Soak", "--arrange-seconds=0", stdout=io.StringIO())
    rules.refresh_from_db()
    assert rules.arrange_seconds == 3

"""benchmarks/services.py runs: a few rounds through the table services on its own database,
its figures printed and the ledger checked (the figures themselves are not asserted)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    database = os.environ.get("DATABASE_URL", "")
    if urlsplit(database).scheme not in ("postgres", "postgresql"):
        pytest.skip("the services' figures need PostgreSQL (DATABASE_URL)")
    redis = urlsplit(os.environ.get("REDIS_URL") or "redis://127.0.0.1:6379/0")
    env = {
        **os.environ,
        "BENCH_REDIS_URL": urlunsplit(redis._replace(path="/15")),
    }
    env.pop("DJANGO_SETTINGS_MODULE", None)
    return subprocess.run(
        [sys.executable, "-m", "benchmarks.services", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_a_few_rounds_print_their_figures_and_the_ledger_reconciles() -> None:
    run = _run("--rounds", "3", "--runs", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    figures = [line for line in lines if line.startswith("run ")]
    assert len(figures) == 2
    for line in figures:
        found = re.search(
            r"services (\d+\.\d+) CPU-ms/round, PostgreSQL backend (\d+\.\d+) CPU-ms/round, "
            r"(\d+\.\d+) statements/round",
            line,
        )
        assert found, line
        assert float(found[1]) > 0 and float(found[3]) >= 16  # 8 commands: a lock, a save
    assert any(line.startswith("median: services ") for line in lines)
    assert "ledger_audit: ok" in lines


def test_bots_at_the_table_play_their_rounds_too() -> None:
    run = _run("--rounds", "2", "--runs", "1", "--bots", "3")
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    assert len([line for line in lines if line.startswith("run ")]) == 1
    assert "ledger_audit: ok" in lines


def test_leaves_print_their_figures_between_the_rounds() -> None:
    run = _run("--rounds", "2", "--runs", "2", "--leaves", "2")
    assert run.returncode == 0, run.stdout + run.stderr
    lines = run.stdout.splitlines()
    leaves = [line for line in lines if "8 leaves, each:" in line]
    assert len(leaves) == 2 and len([line for line in lines if line.startswith("run ")]) == 2
    for line in leaves:
        found = re.search(r"services (\d+\.\d+) CPU-ms, .* (\d+\.\d+) statements", line)
        assert found, line
        # The table's lock, its save; the lobby's room, seats, DELETE and UPDATE
        # (tests/games/live/test_query_budget.py counts BEGIN and COMMIT too).
        assert float(found[1]) > 0 and float(found[2]) == 6.0
    assert any(line.startswith("median: a leave ") for line in lines)
    assert "ledger_audit: ok" in lines


def test_bad_arguments_are_refused_before_anything_is_touched() -> None:
    for args, message in (
        (("--rounds", "0"), "--rounds and --runs must be at least 1"),
        (("--leaves", "-1"), "--leaves and --standings at least 0"),
        (("--bots", "4"), "--bots must be from 0 to 3: a table needs a person"),
        (("--standings", "-5"), "--leaves and --standings at least 0"),
    ):
        run = _run(*args)
        assert run.returncode == 2, args
        assert message in run.stderr, args


def test_the_standings_job_is_timed_both_ways_recounting_and_counting_the_new_rounds() -> None:
    # 10 warming rounds and 2 measured are played: copied to 40 settled rounds.
    run = _run("--rounds", "2", "--runs", "1", "--standings", "40")
    assert run.returncode == 0, run.stdout + run.stderr
    found = re.findall(
        r"standings over (\d+) settled rounds, (one statement|in Python), ([a-z0-9 ]+): "
        r"(\d+) rows, this process (\d+) CPU-ms, PostgreSQL backend (\d+) CPU-ms",
        run.stdout,
    )
    # 4 players, this week and all time: 8 rows written by a run that counts any round.
    assert [(f[0], f[1], f[2], f[3]) for f in found] == [
        ("40", way, runs, rows)
        for way in ("one statement", "in Python")
        for runs, rows in (("every round counted again", "8"), ("2 new", "8"), ("none new", "0"))
    ]
    assert "ledger_audit: ok" in run.stdout.splitlines()

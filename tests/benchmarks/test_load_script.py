"""The load script (benchmarks.load) against the live platform: it plays and reports figures;
and the "Load test" rules it plays with."""

from __future__ import annotations

import asyncio
import io
import json
import math
import re
import subprocess
import sys
import time
from collections import namedtuple

import pytest
from django.core.management import call_command

from benchmarks.host_probes import StallProbe, host_speed_ms, steal_share
from benchmarks.load import next_ramp_step, parse_args
from benchmarks.load_result import rounds_settled_between, tail_windows
from benchmarks.load_step import step_rounds
from benchmarks.server_usage import window_cpu
from benchmarks.table_client import LatencyTracker, TableClient, action_class
from games.management.commands.load_test_rules import LOAD_TEST_RULES
from games.models import RuleConfiguration
from tests.games.table_helpers import default_rules, fast_rules
from tests.live_server import ROOT, LivePlatform


def run_module(module: str, *args: str) -> subprocess.CompletedProcess[str]:
    """``python -m module args`` from the project's root; it must exit 0 within 2 minutes."""
    run = subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run


def test_load_script_plays_a_round_and_prints_its_figures(live_platform: LivePlatform) -> None:
    # Clocks long enough that no seat is auto-arranged on a busy machine; the bots act at once.
    # No reveal pacing, as the "Load test" rules: the last submission settles the round at once.
    rules = fast_rules(
        name="Load smoke", special_choice_seconds=30, arrange_seconds=30, reveal_interval_ms=0
    )
    run = run_module(
        "benchmarks.load",
        *("--url", live_platform.url, "--tables", "1", "--seats", "2", "--rounds", "1"),
        *("--rules-name", rules.name, "--timeout", "60", "--stagger", "0.5"),
    )
    assert "first Ready: 0-0.5 s" in run.stdout
    figures = dict(re.findall(r"^(\w+): (.*)$", run.stdout, re.MULTILINE))
    assert int(figures["tables"]) == 1
    assert int(figures["clients"]) == 2
    assert int(figures["rounds"]) == 1
    assert float(figures["rounds_per_minute"]) > 0
    latency = dict(re.findall(r"(\w+)=([\d.]+)", figures["latency_ms"]))
    # Each of the 2 seats sees the other's ready and submitted: 4 samples, but a Ready sent
    # before the other seat's hello reaches it in its welcome's snapshot, not as a broadcast
    # (nothing is sent before the hello): at the round's start one of the two may be missing.
    assert int(latency["n"]) in (3, 4)
    assert 0 < float(latency["p50"]) <= float(latency["p99"]) <= float(latency["max"])
    steady = dict(re.findall(r"(\w+)=([\d.]+)", figures["latency_steady_ms"]))
    assert int(steady["n"]) <= int(latency["n"])  # a subset: between connecting and leaving
    assert figures["errors"].split()[0] == "0"
    rss = dict(re.findall(r"(\w+)=([\d.]+)", figures["server_rss_mb"]))
    assert float(rss["daphne"]) > 0 and float(rss["celery"]) > 0
    steal = float(re.search(r"steal=([\d.]+)", figures["server_cpu_percent"]).group(1))
    assert 0 <= steal <= 100
    stalls = dict(re.findall(r"(\w+)=([\d.]+)", figures["host_stall_ms"]))
    assert float(stalls["max"]) >= 0 and int(stalls["over_50"]) >= int(stalls["over_100"]) >= 0
    # CI's PostgreSQL runs with autovacuum off: the script then vacuums as autovacuum would
    # (benchmarks.vacuum), every naptime (a minute): none within this run.
    assert figures["autovacuum_stand_in"] in (
        "0 tables vacuumed during the step",
        "not running (the server's autovacuum, or --autovacuum off)",
    )
    lag = dict(re.findall(r"(\w+)=([\d.]+)", figures["client_loop_lag_ms"]))
    assert 0 <= float(lag["p50"]) <= float(lag["p99"]) <= float(lag["max"])
    speed = float(figures["host_speed_ms"].split()[0])
    assert 0 < speed < 10_000
    # The samples by what the broadcast carried: the last Ready dealt and the last submission
    # settled; each is seen by the other seat, as a broadcast (both seats said hello by then).
    by_action = {
        name: dict(re.findall(r"(\w+)=([\d.]+)", text))
        for name, text in re.findall(
            r"([a-z+]+) (p50=\S+ p99=\S+ n=\d+)", figures["latency_by_action_ms"]
        )
    }
    assert list(by_action) == ["ready", "ready+deal", "submitted", "submitted+settled"]
    assert sum(int(v["n"]) for v in by_action.values()) == int(latency["n"])
    assert int(by_action["ready+deal"]["n"]) == int(by_action["submitted+settled"]["n"]) == 1
    assert int(by_action["submitted"]["n"]) == 1
    tail = re.match(r"(\d+) samples at or over the p99; (\d+) % of them", figures["p99_tail"])
    assert tail is not None and int(tail.group(1)) >= 1 and int(tail.group(2)) == 100
    # One round: the steady window (the last welcome to the first leave) holds it or not.
    steady_rounds = int(re.search(r"rounds=(\d+)", figures["cpu_ms_per_round_steady"]).group(1))
    assert steady_rounds in (0, 1)


def test_a_sample_is_classed_by_what_its_broadcast_carried() -> None:
    assert action_class("ready", frozenset({"ready"})) == "ready"
    assert action_class("ready", frozenset({"ready", "phase", "deal", "round_start"})) == (
        "ready+deal"
    )
    assert action_class("submitted", frozenset({"submitted"})) == "submitted"
    assert action_class("submitted", frozenset({"submitted", "reveal", "settled"})) == (
        "submitted+settled"
    )
    # A deal in a submission's batch (a next round at once) does not make it a Ready's.
    assert action_class("submitted", frozenset({"submitted", "deal"})) == "submitted"
    tracker = LatencyTracker()
    tracker.sent((1, "ready", 0, 1), 10.0)
    tracker.sent((1, "submitted", 0, 1), 20.0)
    tracker.arrived((1, "ready", 0, 1), 10.25, frozenset({"ready", "deal"}))
    tracker.arrived((1, "submitted", 0, 1), 20.5, frozenset({"submitted"}))
    tracker.arrived((2, "ready", 0, 1), 30.0)  # never sent by this process: no sample
    assert tracker.samples == [0.25, 0.5]
    assert tracker.by_class == {
        "ready": [],
        "ready+deal": [0.25],
        "submitted": [0.5],
        "submitted+settled": [],
    }


def test_the_tail_is_located_in_the_windows_that_hold_most_of_it() -> None:
    # 200 samples of 10 ms spread over 20 s, and a stall at 7.2 s: 5 samples of 300 ms.
    timed = [(100 + i / 10, 0.010) for i in range(200)]
    timed += [(107.2 + i / 100, 0.300) for i in range(5)]
    timed.append((115.0, 0.200))
    tail = tail_windows(timed, 100.0, width=0.5, top=2)
    # The p99 of 206 samples (nearest rank: the 204th) is 300 ms: the stall's 5 samples.
    assert tail["samples"] == 5
    assert tail["windows"] == [(7.0, 5)]
    assert tail["share"] == 1.0
    # How busy the stall's window was: its 5 slow samples and 5 of the steady ones, against
    # 206 over the 40 windows that sent any.
    assert tail["sent"] == [10] and tail["mean_sent"] == 206 / 40
    empty = tail_windows([], 0.0)
    assert empty["samples"] == 0 and empty["windows"] == [] and math.isnan(empty["share"])


def test_host_speed_is_the_cpu_time_of_a_fixed_piece_of_work(monkeypatch) -> None:
    # A process clock that advances 40, 90 and 50 ms over the three repeats: their median.
    ticks = iter([0.0, 0.040, 1.0, 1.090, 2.0, 2.050])
    monkeypatch.setattr(time, "process_time", lambda: next(ticks))
    assert host_speed_ms() == pytest.approx(50.0)


@pytest.mark.django_db
def test_load_test_rules_are_created_once_without_pacing() -> None:
    default_rules()
    first, second = io.StringIO(), io.StringIO()
    call_command("load_test_rules", stdout=first)
    call_command("load_test_rules", stdout=second)
    assert first.getvalue() == second.getvalue()
    config = RuleConfiguration.objects.get(pk=int(first.getvalue())).engine_config()
    assert (config.deal_interval_ms, config.reveal_interval_ms) == (0, 0)
    assert config.arrange_seconds == LOAD_TEST_RULES["arrange_seconds"]


@pytest.mark.django_db
def test_load_test_rules_lift_the_signup_limit_only_when_asked() -> None:
    from accounts.economy import economy_settings

    default_rules()
    limit = economy_settings().signups_per_address_per_day
    assert limit > 0
    call_command("load_test_rules", stdout=io.StringIO(), stderr=io.StringIO())
    assert economy_settings().signups_per_address_per_day == limit
    call_command("load_test_rules", "--open-signups", stdout=io.StringIO(), stderr=io.StringIO())
    assert economy_settings().signups_per_address_per_day == 0


def _ramp(largest_held: int, *, last: int = 256, refine: int = 2) -> list[tuple[int, bool]]:
    """The steps the ramp takes against a platform that holds up to ``largest_held`` tables."""
    tried: list[tuple[int, bool]] = []
    step = next_ramp_step(tried, 1, last, refine)
    while step is not None:
        tried.append((step, step <= largest_held))
        step = next_ramp_step(tried, 1, last, refine)
    return tried


def test_steal_is_the_share_of_all_cpu_time_the_hypervisor_took() -> None:
    times = namedtuple("times", "user system idle steal")
    assert steal_share(times(10, 5, 80, 5), times(40, 15, 120, 25)) == pytest.approx(20.0)
    assert steal_share(times(1, 1, 1, 0), times(1, 1, 1, 0)) == 0.0  # no time passed
    bare = namedtuple("bare", "user system idle")  # a platform without steal
    assert steal_share(bare(1, 1, 1), bare(2, 2, 2)) == 0.0


def test_the_steady_cpu_is_taken_between_the_first_and_last_samples_inside_the_window() -> None:
    timeline = [
        (0.0, {"daphne": 0.0}),
        (1.0, {"daphne": 0.5, "postgres": 0.1}),
        (2.0, {"daphne": 1.5, "postgres": 0.3}),
        (3.0, {"daphne": 1.75, "postgres": 0.4}),
        (4.0, {"daphne": 3.0, "postgres": 0.6}),
    ]
    first, last, cpu = window_cpu(timeline, 0.5, 3.5)
    assert (first, last) == (1.0, 3.0)
    assert cpu == pytest.approx({"daphne": 1.25, "postgres": 0.3})
    assert window_cpu(timeline, 0.5, 1.5) is None  # one sample: no interval
    assert window_cpu(timeline, 5.0, math.inf) is None


def test_a_round_counts_once_when_the_first_of_its_table_saw_its_result() -> None:
    settled = {
        7: [{1: 1.0, 2: 5.0}, {1: 1.2, 2: 4.0}],  # round 2: first seen at 4.0
        8: [{1: 3.0}, {}],
    }
    assert rounds_settled_between(settled, 0.0, 10.0) == 3
    assert rounds_settled_between(settled, 1.1, 4.5) == 2  # table 7's round 2, table 8's 1
    assert rounds_settled_between(settled, 4.5, 10.0) == 0
    assert rounds_settled_between({}, 0.0, 10.0) == 0


def test_the_ramp_doubles_then_halves_the_gap_after_the_first_step_that_fails() -> None:
    assert [t for t, _ in _ramp(40)] == [1, 2, 4, 8, 16, 32, 64, 48, 40]
    assert [t for t, _ in _ramp(60)] == [1, 2, 4, 8, 16, 32, 64, 48, 56]
    assert [t for t, _ in _ramp(40, refine=0)] == [1, 2, 4, 8, 16, 32, 64]
    assert [t for t, _ in _ramp(2)] == [1, 2, 4, 3]


def test_the_ramp_tries_its_last_step_and_stops_when_one_table_fails() -> None:
    assert [t for t, _ in _ramp(1000, last=100)] == [1, 2, 4, 8, 16, 32, 64, 100]
    assert _ramp(0) == [(1, False)]
    assert next_ramp_step([], 5, 4, 2) is None


def test_the_stall_probe_reports_how_late_an_idle_process_woke() -> None:
    probe = StallProbe()
    time.sleep(1)
    stalls = probe.stop()
    assert set(stalls) == {"max", "over_50", "over_100"}
    assert 0 <= stalls["max"] < 10_000 and stalls["over_50"] >= stalls["over_100"] >= 0
    assert probe.process.returncode == 0


def test_stagger_delays_only_the_first_action_by_the_table_s_delay() -> None:
    """--stagger: a table's first Ready waits its delay; the actions after it do not."""
    sent: list[tuple[float, dict[str, object]]] = []

    class Socket:
        async def send(self, text: str) -> None:
            sent.append((time.monotonic(), json.loads(text)))

    async def play() -> float:
        client = TableClient(
            ws_url="ws://127.0.0.1:1", room_id=1, cookie={}, origin="", first_delay=0.3
        )
        client._ws, client.position, client.phase = Socket(), 0, "waiting"
        started = time.monotonic()
        await client._act()  # thinks: nothing sent yet
        assert sent == []
        await asyncio.sleep(0.5)
        client.round_no, client.ready = 1, False  # the next round's Ready: sent at once
        await client._act()
        return started

    started = asyncio.run(play())
    assert [m["type"] for _at, m in sent] == ["ready", "ready"]
    assert 0.3 <= sent[0][0] - started < 0.5 and sent[1][0] - started >= 0.5
    assert sent[1][0] - sent[0][0] < 0.45  # the second was not delayed again
    assert parse_args(["--stagger", "5"]).stagger == 5 and parse_args([]).stagger == 0
    for bad in ("-1", "61"):
        with pytest.raises(SystemExit):
            parse_args(["--stagger", bad])


def test_a_ramp_s_small_steps_play_rounds_enough_for_400_samples() -> None:
    # A table of four: each round times 2 actions x 4 seats x 3 others = 24 samples.
    assert [step_rounds(4, t, 4, 400) for t in (1, 2, 4, 8, 64)] == [17, 9, 5, 4, 4]
    assert step_rounds(4, 1, 2, 400) == 100  # two seats: 4 samples a round
    assert step_rounds(4, 1, 4, 0) == 4
    assert step_rounds(None, 1, 4, 400) is None  # --duration decides
    assert parse_args(["--ramp"]).min_samples == 400
    assert parse_args(["--tables", "2"]).min_samples == 0
    assert parse_args(["--ramp", "--min-samples", "0"]).min_samples == 0
    with pytest.raises(SystemExit):
        parse_args(["--min-samples", "-1"])


def test_sockets_script_connects_every_seat_and_prints_its_cpu_per_socket(
    live_platform: LivePlatform,
) -> None:
    rules = fast_rules(name="Sockets smoke", special_choice_seconds=30, arrange_seconds=30)
    run = run_module(
        "benchmarks.sockets",
        *("--url", live_platform.url, "--tables", "1", "--runs", "2", "--rules-name", rules.name),
    )
    runs = re.findall(
        r"^run (\d): 4 sockets in [\d.]+ s, cpu_ms_per_socket (.*)$", run.stdout, re.M
    )
    assert [n for n, _ in runs] == ["1", "2"]
    for _, figures in runs:
        cpu = {k: float(v) for k, v in re.findall(r"(\w+)=([\d.]+)", figures)}
        assert cpu["daphne"] > 0 and cpu["redis"] >= 0
        assert cpu["total"] == pytest.approx(sum(v for k, v in cpu.items() if k != "total"), 0.01)
    assert re.search(r"^median of 2: cpu_ms_per_socket .*total=[\d.]+$", run.stdout, re.M)


@pytest.mark.parametrize(
    "argv", [["--tables", "0"], ["--tables", "65"], ["--runs", "6"], ["--concurrency", "0"]]
)
def test_sockets_script_refuses_bad_arguments(argv: list[str]) -> None:
    from benchmarks import sockets

    with pytest.raises(SystemExit) as exited:
        sockets.main(["--url", "http://127.0.0.1:9", *argv])
    assert exited.value.code == 2  # argparse's usage error, before any connection

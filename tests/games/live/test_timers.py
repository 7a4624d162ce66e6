"""The deadline poller (games.live.timers): the one timer of every table, read from the table rows.

The first tests play a real table in the database with a moved clock (the services' and the
poller's alike); the others give the poller rows of their own to check its waits, retries and
batches, and the worker bootstep that runs it.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from django.test import override_settings

from accounts.models import User
from games.live import notify as table_notify
from games.live import services as table_services
from games.live import store as table_store
from games.live import timers
from games.live import timers as live_timers
from games.models import Table
from games.table.state import Phase
from lobby.models import Room
from shisanshui.celery import TableDeadlines
from tests.games.table_helpers import fast_rules, make_player, open_table, press_ready, state_of

INTERVAL = 0.2


@dataclass
class Clock:
    now: float

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    """One clock for the services and the poller, an hour behind so nothing else is due."""
    c = Clock(time.time() - 3600)
    monkeypatch.setattr(table_store, "clock", c)
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, messages: None)
    return c


@pytest.fixture
def dealt(clock: Clock) -> tuple[Room, list[User]]:
    """Two players whose Readies dealt a paced round: the table waits in ``dealing``."""
    players = [make_player("tima"), make_player("timb")]
    room = open_table(players, rules=fast_rules(name="Timers", deal_interval_ms=500))
    press_ready(players, room)
    assert state_of(room).phase is Phase.DEALING
    return room, players


@pytest.fixture
def poller(clock: Clock) -> timers.DeadlinePoller:
    return timers.DeadlinePoller(interval=INTERVAL, clock=clock)


@pytest.mark.django_db(transaction=True)
def test_a_deadline_is_not_asked_for_before_it_passes_and_the_poller_sleeps_until_it(
    clock: Clock, dealt: tuple[Room, list[User]], poller: timers.DeadlinePoller
) -> None:
    state = state_of(dealt[0])
    assert state.deadline is not None

    clock.now = state.deadline - 5  # beyond the next poll: a whole interval's sleep
    assert poller.poll_once() == INTERVAL
    clock.now = state.deadline - 0.05  # within it: sleep until the deadline, not longer
    assert poller.poll_once() == pytest.approx(0.05)
    assert state_of(dealt[0]).version == state.version  # nothing was asked


@pytest.mark.django_db(transaction=True)
def test_a_passed_deadline_is_asked_for_once_and_the_table_moves_on(
    clock: Clock, dealt: tuple[Room, list[User]], poller: timers.DeadlinePoller
) -> None:
    room = dealt[0]
    deadline = state_of(room).deadline
    assert deadline is not None

    clock.now = deadline + 0.001
    poller.poll_once()

    after = state_of(room)
    assert after.phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING)
    assert after.deadline is not None and after.deadline > clock.now
    table = Table.objects.get(room=room)
    assert (table.phase, table.version) == (after.phase.value, after.version)
    # The next phase's deadline is what the next look finds; nothing is due now.
    assert poller.poll_once() == INTERVAL
    assert state_of(room).version == after.version


@pytest.mark.django_db(transaction=True)
def test_the_round_is_played_to_its_settlement_by_the_poller_alone(
    clock: Clock, dealt: tuple[Room, list[User]], poller: timers.DeadlinePoller
) -> None:
    """Nobody acts: every phase ends at its deadline, and the round settles once."""
    room, _players = dealt
    for _ in range(10):
        state = state_of(room)
        if state.phase is Phase.SETTLED:
            break
        assert state.deadline is not None, state.phase
        clock.now = state.deadline + 0.001
        poller.poll_once()
    settled = state_of(room)
    assert settled.phase is Phase.SETTLED
    assert all(s.auto == "timeout" for s in settled.round_seats)
    assert settled.deadline is None or settled.deadline > clock.now


# -- the poller's own rules, on rows of its own --------------------------------------------------


class Rows:
    """``live_timers.table_deadlines_before`` over a list of rows; the asks recorded."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.rows: list[tuple[int, int, str, float]] = []
        self.asked: list[dict[str, Any]] = []
        self.fail = False
        monkeypatch.setattr(timers, "table_deadlines_before", self.before)
        monkeypatch.setattr(table_services, "table_timeout", self.timeout)

    def before(self, *, until: float, limit: int) -> list[tuple[int, int, str, float]]:
        return sorted((r for r in self.rows if r[3] <= until), key=lambda r: r[3])[:limit]

    def timeout(self, **kwargs: Any) -> None:
        self.asked.append(kwargs)
        if self.fail:
            raise RuntimeError("the database is restarting")


@pytest.fixture
def rows(monkeypatch: pytest.MonkeyPatch) -> Rows:
    return Rows(monkeypatch)


def test_each_passed_deadline_is_asked_for_with_its_exact_phase_and_deadline(rows: Rows) -> None:
    rows.rows = [(1, 7, "arranging", 99.5), (2, 3, "ready", 100.0), (3, 9, "dealing", 100.1)]
    poller = timers.DeadlinePoller(interval=INTERVAL, clock=lambda: 100.0)

    wait = poller.poll_once()

    assert rows.asked == [
        {"table_id": 1, "version": 7, "phase": "arranging", "deadline": 99.5},
        {"table_id": 2, "version": 3, "phase": "ready", "deadline": 100.0},
    ]
    assert wait == pytest.approx(0.1)  # until table 3's deadline


def test_a_deadline_still_due_after_its_ask_is_asked_again_only_after_the_retry_time(
    rows: Rows, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock(100.0)
    rows.rows = [(1, 7, "arranging", 99.0)]
    rows.fail = True
    poller = timers.DeadlinePoller(interval=INTERVAL, clock=clock)

    poller.poll_once()
    assert len(rows.asked) == 1
    assert "the deadline of table 1 failed" in caplog.text  # logged, the poller goes on
    clock.now += timers.RETRY_SECONDS / 2
    poller.poll_once()
    assert len(rows.asked) == 1  # not hammered every poll
    clock.now += timers.RETRY_SECONDS
    poller.poll_once()
    assert len(rows.asked) == 2

    # A new deadline of the same table (it moved on) is asked for at once.
    rows.rows = [(1, 8, "arranging", 100.5)]
    poller.poll_once()
    assert len(rows.asked) == 3


def test_a_full_batch_of_due_deadlines_is_followed_by_another_look_at_once(rows: Rows) -> None:
    rows.rows = [(n, 1, "ready", 50.0 + n) for n in range(5)]
    poller = timers.DeadlinePoller(interval=INTERVAL, clock=lambda: 100.0, batch=3)

    assert poller.poll_once() == 0.0
    assert [a["table_id"] for a in rows.asked] == [0, 1, 2]
    rows.rows = rows.rows[3:]  # those three moved on
    assert poller.poll_once() == INTERVAL
    assert [a["table_id"] for a in rows.asked] == [0, 1, 2, 3, 4]


def test_the_poll_interval_must_be_positive() -> None:
    with pytest.raises(ValueError):
        timers.DeadlinePoller(interval=0)


def test_the_poller_thread_survives_a_failed_look_and_stops_when_asked(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    looks: list[float] = []

    def before(*, until: float, limit: int) -> list[tuple[int, int, str, float]]:
        looks.append(until)
        if len(looks) == 1:
            raise RuntimeError("connection refused")
        return []

    monkeypatch.setattr(timers, "table_deadlines_before", before)
    monkeypatch.setattr(timers, "close_old_connections", lambda: None)
    monkeypatch.setattr(timers, "connection", type("C", (), {"close": lambda self: None})())
    stop = threading.Event()
    poller = timers.DeadlinePoller(interval=0.01)
    thread = threading.Thread(target=poller.run, args=(stop,))
    thread.start()
    deadline = time.monotonic() + 5
    while len(looks) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    thread.join(timeout=5)

    assert not thread.is_alive()
    assert len(looks) >= 3
    assert "polling the table deadlines failed" in caplog.text


@pytest.fixture
def no_thread(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    """``timers.start`` recorded, with a real (idle) thread and event."""
    started: list[float] = []

    def start(interval: float) -> tuple[threading.Thread, threading.Event]:
        started.append(interval)
        stop = threading.Event()
        thread = threading.Thread(target=stop.wait)
        thread.start()
        return thread, stop

    monkeypatch.setattr(timers, "start", start)
    yield started


def test_the_worker_bootstep_starts_the_poller_and_joins_it_when_the_worker_stops(
    no_thread: list[float],
) -> None:
    step = TableDeadlines(parent=None)
    with override_settings(TABLE_DEADLINE_POLL_MS=250):
        step.start(parent=None)
    assert no_thread == [0.25]
    thread = step.thread
    assert thread is not None and thread.is_alive()
    step.stop(parent=None)
    assert not thread.is_alive() and step.thread is None


def test_a_poll_interval_of_zero_runs_no_poller(no_thread: list[float]) -> None:
    step = TableDeadlines(parent=None)
    with override_settings(TABLE_DEADLINE_POLL_MS=0):
        step.start(parent=None)
    assert no_thread == [] and step.thread is None
    step.stop(parent=None)  # nothing to stop


@pytest.mark.django_db(transaction=True)
def test_the_plain_sql_of_postgresql_reads_the_deadlines_the_orm_reads(
    clock: Clock, dealt: tuple[Room, list[User]]
) -> None:
    """The poller's query is plain SQL on PostgreSQL and the ORM elsewhere (SQLite, without
    DATABASE_URL): both find the same rows, with the state's exact float."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("compares PostgreSQL's plain SQL with the ORM")
    room, _players = dealt
    deadline = state_of(room).deadline
    assert deadline is not None
    found = {
        until: live_timers.table_deadlines_before(until=until, limit=10)
        for until in (deadline - 0.001, deadline, deadline + 60)
    }
    assert found[deadline - 0.001] == []
    assert found[deadline] == found[deadline + 60] != []
    assert found[deadline][0][3] == deadline
    for until, rows in found.items():
        orm = live_timers._deadline_rows(bound=datetime.fromtimestamp(until, tz=UTC), limit=10)
        orm = [row for row in orm if row[3] <= until]
        assert [(*row[:3], float(row[3])) for row in orm] == rows


def test_the_poll_interval_setting_is_checked_when_the_settings_load() -> None:
    """``TABLE_DEADLINE_POLL_MS``: 0 (off) or 10 to 10,000; anything else stops the start."""
    import os
    import subprocess
    import sys

    script = (
        "import importlib, os, sys\n"
        "from django.core.exceptions import ImproperlyConfigured\n"
        "import shisanshui.settings.base as base\n"
        "for value in sys.argv[1:]:\n"
        "    os.environ['TABLE_DEADLINE_POLL_MS'] = value\n"
        "    try:\n"
        "        print(value, importlib.reload(base).TABLE_DEADLINE_POLL_MS)\n"
        "    except ImproperlyConfigured as error:\n"
        "        print(value, 'refused:', error)\n"
    )
    values = ["0", "10", "200", "10000", "5", "10001", "-1", "fast"]
    done = subprocess.run(
        [sys.executable, "-c", script, *values],
        capture_output=True,
        text=True,
        timeout=60,
        env={k: v for k, v in os.environ.items() if k != "TABLE_DEADLINE_POLL_MS"},
        check=True,
    )
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert [lines[v] for v in values[:4]] == ["0", "10", "200", "10000"]
    for value in values[4:]:
        assert lines[value].startswith("refused:"), lines[value]


@pytest.mark.django_db(transaction=True)
def test_a_deadline_is_found_at_its_exact_float_whatever_its_microsecond_rounding(
    clock: Clock, dealt: tuple[Room, list[User]]
) -> None:
    """The column holds the float rounded to the microsecond; a look at exactly the deadline
    finds it, and a look at the float just below does not (PostgreSQL's own conversion of
    the float rounds differently about once in ten: this once made a look miss its table)."""
    import math
    import random

    room = dealt[0]
    table = Table.objects.get(room=room)
    rng = random.Random(5)
    for _ in range(40):
        # Deadlines a hair either side of half a microsecond, where roundings disagree.
        deadline = (
            math.floor(clock.now) + rng.randrange(10**6) / 1e6 + 5e-7 + rng.uniform(-1, 1) * 1e-9
        )
        state = {**table.state, "deadline": deadline}
        Table.objects.filter(pk=table.pk).update(
            state=state, deadline=datetime.fromtimestamp(deadline, tz=UTC)
        )
        found = live_timers.table_deadlines_before(until=deadline, limit=10)
        assert [row[0] for row in found] == [table.pk], deadline
        assert found[0][3] == deadline
        below = math.nextafter(deadline, 0.0)
        assert live_timers.table_deadlines_before(until=below, limit=10) == [], deadline

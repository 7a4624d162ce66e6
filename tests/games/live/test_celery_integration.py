"""The table's timeouts through a real Celery worker on the real Redis broker.

A timer only asks; the game decides: rounds nobody plays still end (the worker's deadline
poller, ``games.live.timers``, asks for each deadline), a worker killed mid-round is replaced and
the round settles once, the beat's sweeper settles an overdue round without a poller, and
duplicated timeout tasks settle once. Each test starts its own worker process (``celery worker
--pool=solo``) on a queue private to the test, so stray workers or tasks of other runs never
interfere; the worker talks to the test database, so the tests are transactional (rows are
committed).

Every wait has a deadline: a failure fails, it never hangs.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import redis
from django.conf import settings
from django.db import connection

from accounts.models import Transaction, TransactionKind, User
from accounts.selectors import ledger_audit, wallet_balance
from games.live import services as table_services
from games.live import tasks
from games.models import Round, RoundPlayer, TableEvent
from games.rules.arrange import best_arrangement
from games.rules.cards import format_cards
from games.table.state import Phase
from lobby.models import Room
from tests.games.table_helpers import (
    ensure_at_table,
    fast_rules,
    make_player,
    open_table,
    press_ready,
    settlements_of,
    state_of,
    table_id,
    total_coins,
)

ROOT = Path(__file__).resolve().parents[3]
CELERY = Path(sys.executable).with_name("celery")
WORKER_START_SECONDS = 30
BROKER = str(getattr(settings, "CELERY_BROKER_URL", ""))

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not BROKER.startswith("redis://"), reason="needs REDIS_URL (a real Redis broker)"
    ),
]


def wait_until(what: str, check: Callable[[], Any], *, seconds: float, every: float = 0.05) -> Any:
    """Poll ``check`` until it returns something truthy; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {seconds} s waiting for {what}")
        time.sleep(every)


@dataclass
class Worker:
    process: subprocess.Popen[bytes]
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def succeeded(self, task_id: str) -> bool:
        return any(task_id in line and "succeeded" in line for line in self.output().splitlines())

    def kill(self) -> None:
        """SIGKILL: no warm shutdown, the tasks it holds are neither run nor given back."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()


@dataclass
class Celery:
    """A private queue on the real broker, and the workers started on it."""

    queue: str
    env: dict[str, str]
    workers: list[Worker] = field(default_factory=list)
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="celery-it-")))

    def start_worker(self, *, poll_ms: int | None = None, pool: str = "solo") -> Worker:
        """A worker on the private queue (``pool``: solo, threads or prefork, one of each
        process or thread); ``poll_ms=0`` without its deadline poller."""
        log = self.directory / f"worker-{len(self.workers)}.log"
        command = [
            str(CELERY),
            "-A",
            "tests.games.celery_worker_app",
            "worker",
            f"--pool={pool}",
            "--concurrency=1",
            "-Q",
            self.queue,
            "-n",
            f"{self.queue}-{len(self.workers)}@%h",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
            "-l",
            "info",
        ]
        with log.open("wb") as out:
            process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.env
                if poll_ms is None
                else {**self.env, "TABLE_DEADLINE_POLL_MS": str(poll_ms)},
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        worker = Worker(process, log)
        self.workers.append(worker)

        def ready() -> bool:
            if process.poll() is not None:
                pytest.fail(f"the worker exited ({process.returncode}):\n{worker.output()}")
            return " ready." in worker.output()

        wait_until("the worker to be ready", ready, seconds=WORKER_START_SECONDS, every=0.1)
        return worker

    def send(self, task: Any, *args: Any) -> str:
        """Send ``task`` to the private queue."""
        return str(task.apply_async(args=args, queue=self.queue).id)


def _database_url() -> str:
    db = connection.settings_dict
    auth = quote(db["USER"] or "", safe="")
    if db["PASSWORD"]:
        auth += ":" + quote(db["PASSWORD"], safe="")
    host = db["HOST"] or "127.0.0.1"
    port = f":{db['PORT']}" if db["PORT"] else ""
    return f"postgres://{auth}@{host}{port}/{quote(db['NAME'], safe='')}"


@pytest.fixture
def celery(transactional_db: None) -> Iterator[Celery]:
    """A private queue; workers are stopped (and the queue deleted) whatever happens."""
    if connection.vendor != "postgresql":
        pytest.skip("the worker process needs the PostgreSQL test database")
    queue = f"shisanshui-it-{uuid.uuid4().hex[:12]}"
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "shisanshui.settings.test",
        "DATABASE_URL": _database_url(),
        "REDIS_URL": str(settings.REDIS_URL),
        "SHISANSHUI_TEST_QUEUE": queue,
        "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
    }
    broker = Celery(queue=queue, env=env)
    try:
        yield broker
    finally:
        for worker in broker.workers:
            worker.stop()
        client = redis.Redis.from_url(BROKER)
        try:
            client.delete(queue)
        finally:
            client.close()


def two_players(name: str) -> list[User]:
    return [make_player(f"{name}a"), make_player(f"{name}b")]


def settled_round(room: Room) -> Round | None:
    return Round.objects.filter(table__room=room, settled_at__isnull=False).first()


def assert_settled_once(room: Room, players: list[User], before: dict[int, int]) -> Round:
    """One settled round; one settlement posting moving exactly its deltas; books balance."""
    rounds = list(Round.objects.filter(table__room=room))
    assert len(rounds) == 1
    round_ = rounds[0]
    assert round_.settled_at is not None and round_.result is not None
    assert TableEvent.objects.filter(table__room=room, type="settled").count() == 1
    net = {int(p["id"]): p["delta"] + p["penalty"] for p in round_.result["players"]}
    assert sum(net.values()) == 0
    postings = settlements_of(round_.pk)
    assert len(postings) == (1 if any(net.values()) else 0)
    assert Transaction.objects.filter(kind=TransactionKind.SETTLEMENT).count() == len(postings)
    if postings:
        assert round_.transaction_id == postings[0].pk
    room.refresh_from_db()
    for user in players:
        after = before[user.pk] + net[user.pk]
        # A bot left short of the entry minimum is funded again before its next Ready.
        assert wallet_balance(user=user) == after
    audit = ledger_audit()
    assert audit.ok, audit
    assert total_coins() == 0
    return round_


@pytest.mark.parametrize("pool", ["solo", "threads", "prefork"])
def test_a_round_nobody_plays_times_out_and_settles(celery: Celery, pool: str) -> None:
    """Whatever the worker's pool (solo in these tests, threads in ``make run`` and the
    deployment docs, prefork by Celery's default), its poller plays every deadline."""
    rules = fast_rules()
    players = two_players(f"idle{pool[:2]}")
    room = open_table(players, rules=rules)
    before = {u.pk: wallet_balance(user=u) for u in players}
    celery.start_worker(pool=pool)

    started = time.monotonic()
    press_ready(players, room)

    config = rules.engine_config()
    budget = config.special_choice_seconds + config.arrange_seconds + 15
    wait_until("the round to settle", lambda: settled_round(room), seconds=budget)
    elapsed = time.monotonic() - started

    round_ = assert_settled_once(room, players, before)
    assert elapsed >= config.arrange_seconds - 0.5  # nobody moved it on early
    for row in RoundPlayer.objects.filter(round=round_):
        assert row.auto == "timeout" and not row.escaped and row.penalty == 0
    assert state_of(room).phase is Phase.SETTLED


def press_ready_and_wait_for_the_play(players: list[User], room: Room) -> None:
    """Everyone presses Ready; the round's play begins (dealt by the worker when paced)."""
    press_ready(players, room)
    wait_until(
        "the arrange phase",
        lambda: state_of(room).phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING),
        seconds=15,
    )


def test_a_killed_worker_is_replaced_and_the_round_settles_once(
    celery: Celery,
) -> None:
    rules = fast_rules(arrange_seconds=4)
    players = two_players("kill")
    room = open_table(players, rules=rules)
    before = {u.pk: wallet_balance(user=u) for u in players}
    first = celery.start_worker()

    press_ready_and_wait_for_the_play(players, room)
    first.kill()  # mid-round, the arrange deadline still to come
    state = state_of(room)
    assert state.phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING), state.phase
    assert settled_round(room) is None
    assert state.deadline is not None and state.arrange_deadline is not None

    second = celery.start_worker()
    # Nothing of the deadline died with the first worker: it is the table row's, and the new
    # worker's poller asks for it.
    budget = state.arrange_deadline - time.time() + 15
    wait_until("the new worker to settle the round", lambda: settled_round(room), seconds=budget)
    assert time.time() >= state.arrange_deadline - 0.05

    round_ = assert_settled_once(room, players, before)
    assert {row.auto for row in RoundPlayer.objects.filter(round=round_)} <= {"timeout"}
    # Sweeps and a late timeout task for the old deadline change nothing.
    late = (table_id(room), state.version, state.phase.value, state.deadline)
    ids = [celery.send(tasks.sweep_deadlines) for _ in range(2)]
    ids.append(celery.send(tasks.table_timeout, *late))
    wait_until("the extra tasks to run", lambda: all(map(second.succeeded, ids)), seconds=15)
    assert_settled_once(room, players, before)


def test_without_a_poller_the_sweeper_settles_an_overdue_round(celery: Celery) -> None:
    """The beat's sweeper is the backstop of a poller that stopped: a deadline overdue past
    ``SWEEP_GRACE_SECONDS`` is asked for, once."""
    # No pacing: the last Ready deals and begins the play, with no worker asked.
    rules = fast_rules(arrange_seconds=2, deal_interval_ms=0, reveal_interval_ms=0)
    players = two_players("sweep")
    room = open_table(players, rules=rules)
    before = {u.pk: wallet_balance(user=u) for u in players}
    worker = celery.start_worker(poll_ms=0)

    press_ready_and_wait_for_the_play(players, room)
    arrange_deadline = state_of(room).arrange_deadline
    assert arrange_deadline is not None
    time.sleep(max(0.0, arrange_deadline + 1.0 - time.time()))
    assert settled_round(room) is None  # nobody asked: no poller, no task

    overdue = arrange_deadline + tasks.SWEEP_GRACE_SECONDS + 0.2
    time.sleep(max(0.0, overdue - time.time()))

    def swept() -> Round | None:
        if settled_round(room) is None:
            celery.send(tasks.sweep_deadlines)
        return settled_round(room)

    wait_until("the sweeper to settle the round", swept, seconds=30, every=1.0)
    round_ = assert_settled_once(room, players, before)
    assert {row.auto for row in RoundPlayer.objects.filter(round=round_)} <= {"timeout"}
    ids = [celery.send(tasks.sweep_deadlines) for _ in range(2)]
    wait_until("the extra sweeps to run", lambda: all(map(worker.succeeded, ids)), seconds=15)
    assert_settled_once(room, players, before)


def test_duplicate_timeout_tasks_settle_once(celery: Celery) -> None:
    rules = fast_rules()
    players = two_players("dup")
    room = open_table(players, rules=rules)
    before = {u.pk: wallet_balance(user=u) for u in players}
    # No deadline poller: only the duplicates below ask the worker for the deadline.
    worker = celery.start_worker(poll_ms=0)

    press_ready(players, room)
    state = state_of(room)
    assert state.phase is Phase.DEALING
    wait_until("the deal's deadline", lambda: time.time() >= (state.deadline or 0), seconds=5)
    table_services.table_timeout(table_id=table_id(room), version=state.version, phase="dealing")
    for user in players:
        ensure_at_table(user, room)
        seat = state_of(room).seat_of(str(user.pk))
        assert seat is not None and seat.hand is not None
        if seat.choosing:
            table_services.table_choose_special(user=user, room=room, play_special=False)
        best = best_arrangement(seat.hand, state_of(room).config)
        table_services.table_submit(
            user=user,
            room=room,
            front=format_cards(best.front),
            middle=format_cards(best.middle),
            back=format_cards(best.back),
        )
    comparing = state_of(room)
    assert comparing.phase is Phase.COMPARING and comparing.deadline is not None
    wait_until("the comparison's deadline", lambda: time.time() >= comparing.deadline, seconds=5)

    args = (table_id(room), comparing.version, "comparing")
    ids = [celery.send(tasks.table_timeout, *args) for _ in range(3)]
    wait_until("the three tasks to run", lambda: all(map(worker.succeeded, ids)), seconds=20)

    round_ = assert_settled_once(room, players, before)
    assert all(row.auto == "" for row in RoundPlayer.objects.filter(round=round_))
    assert state_of(room).phase is Phase.SETTLED

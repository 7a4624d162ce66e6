"""Soak test of the running platform: many rounds with faults, then a check that nothing was lost.

    python -m benchmarks.soak --url http://127.0.0.1:8000 --rounds 10000 --tables 8 --seed 1

``--tables`` × 4 players sign up (or log in) over HTTP and meet at private rooms with the
"Soak" rules (benchmarks.load), then play ``--rounds`` rounds in total over real WebSockets
(benchmarks.table_client), every table at once. At random — seeded by ``--seed``, per table,
round and seat, at most one fault per seat and round — a seat:

- ``disconnect``: closes its socket mid-round; the client reconnects and says ``hello {since}``
  (if the table settled meanwhile, the seat escaped: it rejoins the room by its code);
- ``reload``: is replaced mid-round by a brand-new client (a browser reload: no memory, a
  snapshot), the old socket closing before or (``overlap``) after the new one opens;
- ``timeout``: does not act in the round's play phase, so the table's deadline plays for it;
- ``escape``: leaves mid-round, pays the penalty at settlement, and rejoins the room by code;
- ``drop``: ignores an incoming ``events`` frame, as if lost, and every one after it until its
  silence (1 s) makes it ``hello {since}`` again;
- and a seat offered a special hand plays it, or declines it (``--p-decline``).

Then, reading the platform's database (Django, ``DJANGO_SETTINGS_MODULE`` — by default
``shisanshui.settings.local`` — and ``DATABASE_URL`` from the environment: the platform's own
database), it prints one line per check, PASS or FAIL, with its figures: every requested round
played and settled; coins conserved; no negative balance; exactly one settlement per round;
every client's view of each result equal to the stored one; the protocol kept (no ``events``
frame before a connection's ``welcome``, a player let go is told so); ``ledger_audit`` clean.
The exit status is 1 when a check fails. Players send at most one frame per 0.12 s, under the
platform's frame budget per player.

Before playing it makes sure the "Soak" rule configuration exists (``manage.py
load_test_rules --name Soak`` with 2-second clocks, so that a timeout costs ~2 s); sign-ups
from one address are limited unless ``--open-signups`` (or ``load_test_rules
--open-signups`` once) lifts the limit. Talks only to the loopback URL it is given, and stops
by itself after ``--timeout`` seconds. docs/load-and-faults.md has the details and figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import hashlib
import io
import json
import os
import random
import sys
import time
import urllib.error
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.exceptions import InvalidHandshake, InvalidStatus

from benchmarks.seating import Lobby, Sessions, find_rules, open_table
from benchmarks.table_client import LOBBY_PHASES, PLAY_PHASES, TableClient

RULES_NAME = "Soak"
SEATS = 4
# The Soak rules' clocks: a timed-out seat costs ~2 s; a Ready is never due before 30 s.
CLOCKS = {"ready_seconds": 30, "special_choice_seconds": 2, "arrange_seconds": 2}
# Faults per seat and round, at most one: the probabilities of each (--p-<kind>).
FAULTS = ("disconnect", "reload", "timeout", "escape", "drop")
# Tries of a lobby socket whose handshake fails on the way (Seat._lobby).
LOBBY_ATTEMPTS = 5
DEFAULT_P = {"disconnect": 0.01, "reload": 0.005, "timeout": 0.004, "escape": 0.004, "drop": 0.01}
DEFAULT_P_DECLINE = 0.25
SILENCE_SECONDS = 1.0  # no frame for this long while playing: hello {since} again
SEND_INTERVAL = 0.12  # seconds between two frames of a player: at most 500 a minute
MAX_CRASHES = 3  # per seat: a client that raised is replaced this many times, then the seat stops


def digest(result: Any) -> str:
    """SHA-256 of the canonical JSON of a round's result (a client keeps this, not the result)."""
    text = json.dumps(result, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class Fault:
    """What one seat does wrong in one round."""

    kind: str | None  # one of FAULTS, or None: a normal round
    at_frame: int  # disconnect, reload, drop: at the n-th events frame of the round (1-3)
    overlap: bool  # reload: the new connection opens before the old one closes
    decline: bool  # a special hand offered this round is declined

    @classmethod
    def plan(
        cls, seed: int, table: int, round_no: int, position: int, p: dict[str, float]
    ) -> Fault:
        """The same for the same seed, table, round and position, whatever the timing."""
        rng = random.Random(f"{seed}:{table}:{round_no}:{position}")
        draw, kind, below = rng.random(), None, 0.0
        for name in FAULTS:
            below += p[name]
            if draw < below:
                kind = name
                break
        return cls(kind, rng.randint(1, 3), rng.random() < 0.5, rng.random() < p["decline"])


@dataclass
class View:
    """A client saw round ``round_no`` of ``room`` settle, from ``position``."""

    room: int
    round_no: int
    position: int
    sha256: str


@dataclass
class Run:
    """What the whole run shares: its options, the round budget, the counters."""

    args: argparse.Namespace
    origin: str
    ws_base: str
    remaining: int  # rounds not yet given to a table
    deadline: float  # time.monotonic() when everything stops
    injected: Counter[str] = field(default_factory=Counter)
    notes: Counter[str] = field(default_factory=Counter)
    views: list[View] = field(default_factory=list)
    # (room, round, position): the player's page reloaded over the round's settlement.
    reloaded_over: set[tuple[int, int, int]] = field(default_factory=set)
    clients: list[SoakClient] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)

    trace_file: Any = None

    def trace(self, client: SoakClient, direction: str, frame: dict[str, Any]) -> None:
        """With --trace: every frame sent and received, one JSON line each."""
        if self.trace_file is not None:
            line = {"t": round(time.monotonic(), 4), "c": client.name, "d": direction, "f": frame}
            self.trace_file.write(json.dumps(line) + "\n")

    def take_round(self) -> bool:
        if self.remaining <= 0:
            return False
        self.remaining -= 1
        return True


@dataclass
class Table:
    """One room and its table: whether it plays each round is decided once, for every seat."""

    run: Run
    index: int
    room: int
    code: str = ""
    decisions: dict[int, bool] = field(default_factory=dict)

    def wants(self, round_no: int) -> bool:
        if round_no not in self.decisions:
            self.decisions[round_no] = self.run.take_round()
        return self.decisions[round_no]


class SoakClient(TableClient):
    """A TableClient that injects its seat's faults; see the module docstring."""

    def __init__(self, *, seat: Seat, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.seat = seat
        self.want_round = seat.table.wants
        self.deaf = False  # an events frame was dropped: drop them all until the next welcome
        self.frames: tuple[int, int] = (0, 0)  # (round, events frames received playing it)
        self.reloading = False  # replaced by a new client (a browser reload)
        self.removed = False  # refused at the handshake: no longer seated in the room
        self.left_reason: str | None = None
        self.welcomed = False  # this connection's hello has been answered
        self.early: list[dict[str, Any]] = []  # events frames that came before the welcome
        self.unseated = False  # a snapshot without this player's seat
        self.successor: tuple[SoakClient, asyncio.Task[None]] | None = None
        # A reload's new client: the round the old one was playing (None: none), until the
        # new one's first snapshot says whether that round's settlement is still to come.
        self.reloaded_from: int | None = None

    @property
    def finished(self) -> bool:
        return self.reloading or self.removed or super().finished

    def fault(self) -> Fault:
        assert self.position is not None
        return self.seat.fault(self.round_no, self.position)

    @property
    def playing(self) -> bool:
        """In a round this seat plays, before its settlement."""
        return self.in_round and self.phase is not None and self.phase not in LOBBY_PHASES

    def inject(self, kind: str) -> bool:
        """Count ``kind`` once per seat and round; False if it was injected already."""
        key = (kind, self.round_no)
        if key in self.seat.injected:
            return False
        self.seat.injected.add(key)
        self.seat.table.run.injected[kind] += 1
        return True

    # -- hooks of TableClient ---------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        if self.unseated:  # a silence, and still no close 4000
            self._unannounced()
            return
        # Under the platform's frame budget per player (table.message: 20 a second, 600 a
        # minute): a table left alone on the machine plays several rounds a second.
        wait = self.seat.last_send + SEND_INTERVAL - time.monotonic()
        if wait > 0:
            await asyncio.sleep(wait)
        self.seat.last_send = time.monotonic()
        self.seat.table.run.trace(self, ">", message)
        await super()._send(message)

    def _handle(self, frame: dict[str, Any], at: float) -> None:
        self.seat.table.run.trace(self, "<", frame)
        if self.unseated:
            self._unannounced()
            return
        kind = frame.get("type")
        if kind == "events" and not self.welcomed:
            # docs/protocol.md: nothing is sent until the client speaks, and the welcome
            # brings what was missed. Applied now, a newer event would make the client skip
            # the welcome's: counted (a protocol failure), and applied after the welcome.
            self.seat.table.run.notes["events_before_welcome"] += 1
            self.early.append(frame)
            return
        if kind == "events" and self.position is not None:
            if self.deaf:
                return
            if self.playing:
                count = self.frames[1] + 1 if self.frames[0] == self.round_no else 1
                self.frames = (self.round_no, count)
                fault = self.fault()
                if fault.kind == "drop" and count == fault.at_frame and self.inject("drop"):
                    self.deaf = True
                    return
        elif kind == "welcome":
            self.welcomed = True
            self.deaf = False  # the welcome brings what was dropped, in order
        super()._handle(frame, at)
        if kind == "welcome" and self.early:
            early, self.early = self.early, []
            for held in early:
                super()._handle(held, at)

    @property
    def playing_round(self) -> int | None:
        """The round this seat plays and has not seen settled, if any."""
        if self.in_round and self.round_no not in self.results:
            return self.round_no
        return None

    def _apply_snapshot(self, snap: dict[str, Any]) -> None:
        super()._apply_snapshot(snap)
        reloaded_from, self.reloaded_from = self.reloaded_from, None
        if reloaded_from is not None and reloaded_from not in self.results:
            past = self.round_no > reloaded_from or (
                self.round_no == reloaded_from and self.phase == "waiting"
            )
            if past and self.position is not None:
                # A reloaded page opens on the table as it is: the round settled while the page
                # was away and the table moved on, so this player cannot have seen it.
                self.seat.table.run.reloaded_over.add((self.room_id, reloaded_from, self.position))
        if not self.left and all(s["position"] != self.position for s in snap["seats"]):
            self.unseated = True  # the table let this player go: a close 4000 must follow

    def _unannounced(self) -> None:
        """Let go by the table, but the connection goes on (no `left` event, no close 4000):
        counted (a protocol failure), and taken as a `left`."""
        self.seat.table.run.notes["left_unannounced"] += 1
        self.left, self.left_reason = True, "unannounced"

    def _apply_event(
        self, event: dict[str, Any], at: float, batch: frozenset[str] = frozenset()
    ) -> None:
        payload = event["payload"]
        newer = self.version is None or event["version"] > self.version
        if newer and event["type"] == "left" and payload.get("position") == self.position:
            self.left_reason = payload.get("reason")
        super()._apply_event(event, at, batch)

    def _record_result(self, round_no: int, result: dict[str, Any]) -> None:
        if round_no in self.results:
            return
        sha = digest(result)
        self.results[round_no] = {"sha256": sha}  # not the result: 10,000 rounds add up
        self.rounds_played += 1
        assert self.position is not None
        self.seat.table.run.views.append(View(self.room_id, round_no, self.position, sha))

    def _next_action(self) -> dict[str, Any] | None:
        if self.deaf or self.reloading or self.unseated or self.position is None:
            return None
        fault = self.fault()
        if self.phase in PLAY_PHASES and self.in_round and not self.done and self.hand:
            if fault.kind == "timeout":
                self.inject("timeout")
                return None
            if fault.kind == "escape":
                self.inject("escape")
                return {"type": "leave"}
        self.play_special = not fault.decline
        action = super()._next_action()
        if action is not None and action["type"] == "choose_special":
            key = ("special", self.round_no)
            if key not in self.seat.injected:
                self.inject("special")
                run = self.seat.table.run
                run.notes["special_played" if self.play_special else "special_declined"] += 1
        return action

    async def _act(self) -> None:
        if self.position is not None and self.playing and not self.deaf:
            fault = self.fault()
            due = fault.kind in ("disconnect", "reload") and self.frames == (
                self.round_no,
                fault.at_frame,
            )
            if due and fault.kind is not None and self.inject(fault.kind):
                if fault.kind == "disconnect":
                    await self._ws.close()  # the session's next recv raises: reconnect
                else:
                    await self._reload(overlap=fault.overlap)
                return
        await super()._act()

    async def _reload(self, *, overlap: bool) -> None:
        """Give way to a new client of the same player; with ``overlap`` it connects first."""
        if overlap:
            self.seat.table.run.notes["reload_overlap"] += 1
            successor = self.seat.new_client()
            successor.reloaded_from = self.playing_round
            self.successor = (successor, self.seat.start(successor))
            for _ in range(100):  # until its welcome, at most ~2 s
                if successor.phase is not None or successor.finished:
                    break
                await asyncio.sleep(0.02)
        self.reloading = True  # the session ends, and its socket closes

    async def _session(self) -> None:
        self.welcomed, self.early, self.unseated = False, [], False
        try:
            await super()._session()
        except InvalidStatus as exc:
            # 403: not seated. The table let the player go (it was away at the settlement:
            # an escape); the seat then rejoins the room. Anything else is retried.
            if exc.response.status_code == 403 and not await self.seat.is_seated():
                self.removed = True
                return
            raise


class Seat:
    """One player at one table, through as many clients as its faults need."""

    def __init__(self, table: Table, name: str, cookie: dict[str, str]) -> None:
        self.table = table
        self.name = name
        self.cookie = cookie
        self.injected: set[tuple[str, int]] = set()  # (fault, round): injected once per seat
        self.crashes = 0
        self.last_send = 0.0  # time.monotonic() of the player's last frame
        self.client: SoakClient | None = None  # the current one
        self.done = False
        self.ended = ""  # why it stopped
        self._faults: dict[tuple[int, int], Fault] = {}

    def fault(self, round_no: int, position: int) -> Fault:
        key = (round_no, position)
        if key not in self._faults:
            run = self.table.run
            p = {**run.args.p, "decline": run.args.p_decline}
            self._faults[key] = Fault.plan(run.args.seed, self.table.index, round_no, position, p)
        return self._faults[key]

    def new_client(self) -> SoakClient:
        run = self.table.run
        client = SoakClient(
            seat=self,
            ws_url=run.ws_base,
            room_id=self.table.room,
            cookie=self.cookie,
            origin=run.origin,
            name=f"{self.name}-{len(run.clients)}",
            silence_seconds=SILENCE_SECONDS,
            max_backoff=0.5,
        )
        run.clients.append(client)
        self.client = client
        return client

    def state(self) -> str:
        """Where the seat is, for a run that did not finish."""
        c = self.client
        if c is None:
            return f"{self.name}: no client"
        return (
            f"{self.name} (table {self.table.index}, room {self.table.room}): position "
            f"{c.position} round {c.round_no} phase {c.phase} version {c.version} in_round "
            f"{c.in_round} ready {c.ready} done {c.done} hand {bool(c.hand)} deaf {c.deaf} "
            f"left {c.left} ({c.left_reason}) removed {c.removed} close {c.close_code} "
            f"stats {c.stats.actions} ended {self.ended or '-'}; "
            f"table decisions {sorted(k for k, v in self.table.decisions.items() if v)[-3:]}"
        )

    def start(self, client: SoakClient) -> asyncio.Task[None]:
        seconds = max(1.0, self.table.run.deadline - time.monotonic())
        return asyncio.create_task(client.play(seconds=seconds, leave=True))

    async def _lobby(self, join: bool) -> bool:
        """Whether the player sits in the table's room; with ``join``, rejoin it by code.

        A handshake that fails on the way (the server busy: no valid HTTP response, a reset,
        a timeout) is tried again with back-off, as the lobby page's socket does; a refusal
        (an HTTP status) is not."""
        for attempt in range(LOBBY_ATTEMPTS):
            try:
                return await self._lobby_once(join)
            except InvalidStatus:
                raise
            except (OSError, InvalidHandshake, TimeoutError):
                self.table.run.notes["lobby_connect_retries"] += 1
                if attempt == LOBBY_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.2 * 2**attempt * random.uniform(0.5, 1.0))
        raise AssertionError("unreachable")

    async def _lobby_once(self, join: bool) -> bool:
        run = self.table.run
        lobby = Lobby(run.ws_base, run.origin, self.cookie)
        async with websockets.connect(
            lobby.url, additional_headers=lobby.headers, open_timeout=30, ping_interval=None
        ) as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 30))
            seat = snapshot.get("seat")
            if seat and seat["room"]["id"] == self.table.room:
                return True
            if not join:
                return False
            if seat:  # seated elsewhere: never expected
                run.failures.append(f"{self.name} sat in room {seat['room']['id']}")
                await lobby.request(ws, {"type": "room.leave"})
            reply = await lobby.request(ws, {"type": "room.join_by_code", "code": self.table.code})
            if reply["type"] != "ok":
                raise RuntimeError(f"{self.name} could not rejoin: {reply['error']}")
            run.notes["rejoins"] += 1
            return True

    async def is_seated(self) -> bool:
        return await self._lobby(join=False)

    async def play(self) -> None:
        """Play until the table stops: new clients after reloads, rejoins after escapes."""
        try:
            await self._play()
        except Exception as exc:  # e.g. the lobby refused a rejoin: this seat stops
            self.table.run.failures.append(f"{self.name}: {type(exc).__name__}: {exc}")
        finally:
            self.done = True

    async def _play(self) -> None:
        client = self.new_client()
        task = self.start(client)
        while True:
            try:
                await task
            except TimeoutError:
                self.table.run.failures.append(f"{self.name}: out of time (--timeout)")
                return
            except Exception as exc:  # a client crashed: count it, and go on with a new one
                self.crashes += 1
                self.table.run.failures.append(f"{self.name}: {type(exc).__name__}: {exc}")
                if self.crashes > MAX_CRASHES:
                    return
                await self._lobby(join=True)
                client = self.new_client()
                task = self.start(client)
                continue
            if client.reloading:
                if client.successor is not None:
                    client, task = client.successor
                else:
                    reloaded_from = client.playing_round
                    client = self.new_client()
                    client.reloaded_from = reloaded_from
                    task = self.start(client)
                continue
            if client.left_reason == "left" or not (client.left or client.removed):
                self.ended = f"left ({client.left_reason}) after round {client.round_no}"
                return  # left at the end (or done): the table plays no further round
            # Let go by the table (escaped, or away at the settlement): back for the next round.
            if not self.table.wants(client.round_no + 1):
                self.ended = f"let go ({client.left_reason}) after round {client.round_no}"
                return
            await self._lobby(join=True)
            client = self.new_client()
            task = self.start(client)


# -- setting up and playing --------------------------------------------------------------------


def setup_django() -> None:
    """Django for the platform's database: DJANGO_SETTINGS_MODULE (default
    shisanshui.settings.local) and DATABASE_URL from the environment."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shisanshui.settings.local")
    import django  # noqa: PLC0415 - only the database phases need it

    django.setup()


def ensure_rules(args: argparse.Namespace) -> int:
    """The Soak rule configuration's id (created, or its clocks set, if needed)."""
    from django.core.management import call_command  # noqa: PLC0415

    options = [f"--{name.replace('_', '-')}={value}" for name, value in CLOCKS.items()]
    if args.open_signups:
        options.append("--open-signups")
    out = io.StringIO()
    call_command("load_test_rules", f"--name={args.rules_name}", *options, stdout=out)
    return int(out.getvalue().strip())


async def seat_players(args: argparse.Namespace, origin: str, ws_base: str, rules: int) -> Any:
    """Sign the players up, check the platform sees the same rules, open the tables."""
    sessions = Sessions(args.url, args.prefix)
    players = await sessions.get(args.tables * SEATS)
    seen = find_rules(args.url, players[0][1], args.rules_name)
    if seen != rules:
        raise SystemExit(
            f"The platform shows {args.rules_name!r} as #{seen}, this database as #{rules}: "
            "DATABASE_URL must be the platform's database."
        )
    groups = [players[i * SEATS : (i + 1) * SEATS] for i in range(args.tables)]
    semaphore = asyncio.Semaphore(8)

    async def one(group: list[tuple[str, dict[str, str]]]) -> int:
        async with semaphore:
            return await open_table(ws_base, origin, group, rules, SEATS)

    rooms = await asyncio.gather(*(one(g) for g in groups))
    return list(zip(rooms, groups, strict=True))


async def play(run: Run, seats: list[Seat]) -> float:
    """Every seat plays until the rounds are given out; returns the seconds it took."""
    started = time.monotonic()
    tasks = [asyncio.create_task(seat.play()) for seat in seats]
    try:
        _done, pending = await asyncio.wait(tasks, timeout=max(1.0, run.deadline - started))
        if pending:
            run.failures.append("the run did not finish before --timeout")
            run.failures += [
                f"unfinished: {s.state()}"
                for s, t in zip(seats, tasks, strict=True)
                if t in pending
            ]
    finally:
        for client in run.clients:
            with contextlib.suppress(Exception):
                if client._ws is not None:
                    await client._ws.close()
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return time.monotonic() - started


# -- the checks (Django) -----------------------------------------------------------------------


@dataclass
class StoredRound:
    pk: int
    room: int
    number: int
    settled_at: Any
    result: Any
    tx: int | None


@dataclass
class Check:
    name: str
    ok: bool
    figures: str

    def line(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'} {self.name}: {self.figures}"


def chunks(items: list[Any], size: int = 1000) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def balances_of(names: Iterable[str]) -> dict[str, int]:
    from accounts.models import Account, AccountKind  # noqa: PLC0415

    rows = Account.objects.filter(kind=AccountKind.WALLET, user__username__in=list(names))
    return dict(rows.values_list("user__username", "balance"))


def room_codes(rooms: list[int]) -> dict[int, str]:
    from lobby.models import Room  # noqa: PLC0415

    return dict(Room.objects.filter(pk__in=rooms).values_list("pk", "code"))


def away_at_settlements(rooms: list[int]) -> set[tuple[int, int, int]]:
    """(room, round, position) of the players who were disconnected when their round settled,
    from the tables' event logs. Such a player with its hand in is settled without escaping
    (docs/protocol.md, "Leaving a round") and may be let go at the Ready deadline before it is
    back: it need not have seen the settlement."""
    from games.models import TableEvent  # noqa: PLC0415

    away: set[tuple[int, int, int]] = set()
    connected: dict[tuple[int, int], bool] = {}
    events = (
        TableEvent.objects.filter(
            table__room_id__in=rooms,
            type__in=("seated", "disconnected", "reconnected", "left", "settled"),
        )
        .order_by("table_id", "version")
        .values_list("table__room_id", "type", "payload")
        .iterator(chunk_size=2000)
    )
    for room, kind, payload in events:
        if kind == "settled":
            away.update(
                (room, payload["round_no"], position)
                for (at, position), here in connected.items()
                if at == room and not here
            )
        elif kind == "left":
            connected.pop((room, payload["position"]), None)
        else:
            connected[(room, payload["position"])] = kind != "disconnected"
    return away


def run_checks(
    run: Run, tables: list[Table], start_balances: dict[str, int], rounds_requested: int
) -> tuple[list[Check], list[str]]:
    """The checks, and figures read from the database (auto-played seats, escapes …)."""
    from django.core.management import CommandError, call_command  # noqa: PLC0415
    from django.db.models import Sum  # noqa: PLC0415

    from accounts.models import Account, AccountKind, Entry, Transaction  # noqa: PLC0415
    from accounts.models import TransactionKind as Kind  # noqa: PLC0415
    from games.models import Round, RoundPlayer  # noqa: PLC0415

    checks: list[Check] = []
    figures: list[str] = []
    rows = (
        Round.objects.filter(table__room_id__in=[t.room for t in tables])
        .values_list("pk", "table__room_id", "number", "settled_at", "result", "transaction")
        .iterator(chunk_size=500)
    )
    rounds = [StoredRound(*row) for row in rows]
    settled = [r for r in rounds if r.settled_at is not None and r.result is not None]
    unsettled = len(rounds) - len(settled)

    # Rounds: all given out and settled, every seat finished.
    checks.append(
        Check(
            "rounds",
            len(settled) == rounds_requested and not unsettled and not run.failures,
            f"{len(settled)} settled of {rounds_requested} requested, {unsettled} unsettled; "
            f"{len(run.failures)} client failures"
            + (f" (first: {run.failures[0]})" if run.failures else ""),
        )
    )

    # The ledger's transactions of these rounds.
    txs: dict[int, tuple[str, str, str]] = {}  # pk -> (kind, idempotency key, reference)
    for part in chunks([f"round:{r.pk}" for r in rounds]):
        for pk, kind, key, ref in Transaction.objects.filter(reference__in=part).values_list(
            "pk", "kind", "idempotency_key", "reference"
        ):
            txs[pk] = (kind, key, ref)
    entries: dict[int, dict[int | None, int]] = defaultdict(dict)  # tx -> {user id: amount}
    house_in = 0
    for part in chunks(list(txs)):
        for tx, user, account_kind, amount in Entry.objects.filter(
            transaction_id__in=part
        ).values_list("transaction_id", "account__user_id", "account__kind", "amount"):
            entries[tx][user] = amount  # the house's user is None
            if account_kind == AccountKind.HOUSE:
                house_in += amount
    by_ref: dict[str, list[int]] = defaultdict(list)
    for pk, (_kind, _key, ref) in txs.items():
        by_ref[ref].append(pk)

    # Exactly one settlement per round, moving what the stored result says.
    problems: Counter[str] = Counter()
    deltas: Counter[int] = Counter()  # user id -> coins won in these rounds
    penalties = zero_sum_broken = 0
    for r in settled:
        players = r.result["players"]
        net = {int(p["id"]): p["delta"] + p["penalty"] for p in players}
        net = {user: amount for user, amount in net.items() if amount}
        for p in players:
            deltas[int(p["id"])] += p["delta"]
            penalties += p["penalty"]
        if sum(p["delta"] + p["penalty"] for p in players) != 0:
            zero_sum_broken += 1
        mine = by_ref[f"round:{r.pk}"]
        settlements = [t for t in mine if txs[t][0] == Kind.SETTLEMENT]
        if net:
            if len(settlements) != 1:
                problems[f"{len(settlements)} settlements"] += 1
            elif txs[settlements[0]][1] != f"round:{r.pk}:settlement" or settlements[0] != r.tx:
                problems["settlement not the round's"] += 1
            elif entries[settlements[0]] != net:
                problems["settlement differs from the result"] += 1
        elif settlements or r.tx is not None:
            problems["a settlement of a round without coins"] += 1
        expected = {
            f"round:{r.pk}:penalty:{p['id']}": {int(p["id"]): -p["penalty"], None: p["penalty"]}
            for p in players
            if p["penalty"] > 0
        }
        paid = {txs[t][1]: entries[t] for t in mine if txs[t][0] == Kind.ESCAPE_PENALTY}
        if paid != expected:
            problems["penalties differ from the result"] += 1
        if len(mine) != len(settlements) + len(paid):
            problems["other transactions"] += 1
    checks.append(
        Check(
            "one_settlement_per_round",
            not problems and not unsettled,
            f"{len(settled)} rounds, "
            f"{sum(1 for t in txs.values() if t[0] == Kind.SETTLEMENT)} settlement and "
            f"{sum(1 for t in txs.values() if t[0] == Kind.ESCAPE_PENALTY)} penalty "
            f"transactions; {unsettled} unsettled; problems: {dict(problems) or 'none'}",
        )
    )

    # Coins conserved: the ledger as a whole, and this run's players and house.
    total = Account.objects.aggregate(total=Sum("balance"))["total"] or 0
    entry_total = Entry.objects.aggregate(total=Sum("amount"))["total"] or 0
    minted = -(Account.objects.filter(kind=AccountKind.MINT).aggregate(s=Sum("balance"))["s"] or 0)
    end_balances = balances_of(start_balances)
    ids = dict(
        Account.objects.filter(user__username__in=list(start_balances)).values_list(
            "user__username", "user_id"
        )
    )
    wrong_players = [
        name
        for name, start in start_balances.items()
        if end_balances.get(name, 0) - start != deltas.get(ids.get(name, -1), 0)
    ]
    moved = sum(end_balances.values()) - sum(start_balances.values())
    checks.append(
        Check(
            "coins_conserved",
            total == 0
            and entry_total == 0
            and not wrong_players
            and not zero_sum_broken
            and house_in == penalties
            and moved == sum(deltas.values()),
            f"all accounts sum to {total} (minted {minted:,}); players {moved:+,} = results "
            f"{sum(deltas.values()):+,}; house {house_in:+,} = penalties {penalties:+,}; "
            f"{len(wrong_players)} of {len(start_balances)} wallets off"
            + (f" ({', '.join(wrong_players[:5])})" if wrong_players else "")
            + f"; {zero_sum_broken} rounds not zero-sum",
        )
    )

    # No negative balance, now or after any entry.
    negative_now = Account.objects.exclude(kind=AccountKind.MINT).filter(balance__lt=0).count()
    negative_ever = Entry.objects.filter(
        account__kind=AccountKind.WALLET, balance_after__lt=0
    ).count()
    lowest = min(end_balances.values(), default=0)
    checks.append(
        Check(
            "no_negative_balance",
            negative_now == 0 and negative_ever == 0,
            f"{negative_now} accounts below 0 now, {negative_ever} wallet entries ever left "
            f"one below 0; lowest soak wallet {lowest:,}",
        )
    )

    # Every client's view equals the stored result; every player there at the end saw it.
    stored = {(r.room, r.number): digest(r.result) for r in settled}
    seen: set[tuple[int, int, int]] = set()
    wrong = unknown = 0
    for view in run.views:
        expected = stored.get((view.room, view.round_no))
        if expected is None:
            unknown += 1
        elif expected != view.sha256:
            wrong += 1
        seen.add((view.room, view.round_no, view.position))
    away = away_at_settlements([t.room for t in tables])
    missing = [
        (r.room, r.number, p["position"])
        for r in settled
        for p in r.result["players"]
        if not p["escaped"]
        and (r.room, r.number, p["position"]) not in seen
        and (r.room, r.number, p["position"]) not in away
        and (r.room, r.number, p["position"]) not in run.reloaded_over
    ]
    checks.append(
        Check(
            "client_views",
            wrong == 0 and unknown == 0 and not missing,
            f"{len(run.views)} views of {len(stored)} results: {wrong} differ, {unknown} of "
            f"no stored round; {len(missing)} players present at a settlement saw none "
            f"({len(run.reloaded_over)} reloaded over theirs)"
            + (f" (first: room {missing[0][0]} round {missing[0][1]})" if missing else ""),
        )
    )

    # The protocol as the clients saw it.
    early, unannounced = run.notes["events_before_welcome"], run.notes["left_unannounced"]
    errors: Counter[str] = Counter()
    for client in run.clients:
        errors.update(client.stats.errors)
    checks.append(
        Check(
            "protocol",
            early == 0 and unannounced == 0 and not errors["server_error"],
            f"{early} events frames before the welcome of their connection; {unannounced} "
            f"players let go without a `left` event or close 4000; {errors['server_error']} "
            f"server errors; error frames {dict(errors) or 0}",
        )
    )

    # ledger_audit.
    out = io.StringIO()
    try:
        call_command("ledger_audit", stdout=out)
        audit_ok, said = True, out.getvalue().strip().splitlines()
    except CommandError as error:
        audit_ok, said = False, [*out.getvalue().strip().splitlines(), str(error)]
    checks.append(Check("ledger_audit", audit_ok, " ".join(said)))

    # What the database says the faults did.
    players = RoundPlayer.objects.filter(round_id__in=[r.pk for r in settled])
    autos = Counter(players.exclude(auto="").values_list("auto", flat=True))
    escaped = players.filter(escaped=True).count()
    specials = players.exclude(special="").count()
    sizes = Counter(len(r.result["players"]) for r in settled)
    figures.append(
        f"stored: auto-played seats {dict(autos)}, escaped {escaped}, specials played "
        f"{specials}, rounds by players {dict(sorted(sizes.items()))}"
    )
    return checks, figures


# -- the run -----------------------------------------------------------------------------------


def client_figures(run: Run) -> str:
    errors: Counter[str] = Counter()
    benign: Counter[str] = Counter()
    closes: Counter[int | None] = Counter()
    for c in run.clients:
        errors.update(c.stats.errors)
        benign.update(c.stats.benign)
        closes.update(c.stats.close_codes)
    return (
        f"clients: {len(run.clients)} client objects, "
        f"reconnects {sum(c.stats.reconnects for c in run.clients)} "
        f"(closes {dict(closes) or 0}, failed connects "
        f"{sum(c.stats.connect_failures for c in run.clients)}, lobby retries "
        f"{run.notes['lobby_connect_retries']}), "
        f"resyncs {sum(c.stats.resyncs for c in run.clients)}, "
        f"snapshots {sum(c.stats.snapshots for c in run.clients)}, "
        f"errors {dict(errors) or 0}, benign refusals {dict(benign) or 0}"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    parsed = urllib.parse.urlsplit(args.url)
    origin = f"{parsed.scheme}://{parsed.netloc}"
    ws_base = f"{'wss' if parsed.scheme == 'https' else 'ws'}://{parsed.netloc}"
    setup_django()
    rules = ensure_rules(args)
    print(
        f"url: {args.url} prefix: {args.prefix} rules: {args.rules_name} #{rules} "
        f"tables: {args.tables} rounds: {args.rounds} seed: {args.seed}",
        flush=True,
    )
    print(
        "fault probabilities per seat and round: "
        + " ".join(f"{k}={v:g}" for k, v in args.p.items())
        + f" (special declined: {args.p_decline:g})",
        flush=True,
    )
    try:
        seated = asyncio.run(seat_players(args, origin, ws_base, rules))
    except urllib.error.URLError as exc:
        print(f"cannot reach {args.url}: {exc}", file=sys.stderr)
        return 2
    run = Run(
        args, origin, ws_base, remaining=args.rounds, deadline=time.monotonic() + args.timeout
    )
    if args.trace:
        run.trace_file = open(args.trace, "w")  # noqa: SIM115 - closed after the run
    codes = room_codes([room for room, _ in seated])
    tables = [Table(run, i, room, codes[room]) for i, (room, _) in enumerate(seated)]
    seats = [Seat(t, n, c) for t, (_, group) in zip(tables, seated, strict=True) for n, c in group]
    start_balances = balances_of(s.name for s in seats)
    from django.db import close_old_connections  # noqa: PLC0415

    close_old_connections()

    seconds = asyncio.run(play(run, seats))
    if run.trace_file is not None:
        run.trace_file.close()
    played = sum(sum(t.decisions.values()) for t in tables)
    print(f"rounds: {played} started of {args.rounds}", flush=True)
    print(f"seconds: {seconds:.1f}", flush=True)
    print(f"rounds_per_minute: {60 * played / seconds if seconds else 0:.1f}", flush=True)
    kinds = [*FAULTS, "special"]
    print(
        "faults: "
        + " ".join(f"{k}={run.injected[k]}" for k in kinds)
        + f" (reload overlapping: {run.notes['reload_overlap']}, specials played "
        f"{run.notes['special_played']} / declined {run.notes['special_declined']}, "
        f"rejoins {run.notes['rejoins']})",
        flush=True,
    )
    print(client_figures(run), flush=True)
    checks, figures = run_checks(run, tables, start_balances, args.rounds)
    for line in figures:
        print(line, flush=True)
    for check in checks:
        print(check.line(), flush=True)
    for failure in run.failures[:40]:
        print(f"  failure: {failure}", flush=True)
    return 0 if all(c.ok for c in checks) else 1


def probability(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("a probability is between 0 and 1")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the platform's URL")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds in all (default 1000)")
    parser.add_argument("--tables", type=int, default=8, help="tables of 4 at once (default 8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the faults (default 1)")
    parser.add_argument("--timeout", type=float, help="stop after this many seconds")
    parser.add_argument("--prefix", help="player names' prefix (default: sk<time>)")
    parser.add_argument("--rules-name", default=RULES_NAME, help="the rule configuration's name")
    parser.add_argument("--trace", help="write every frame to this file (JSON lines)")
    parser.add_argument(
        "--open-signups",
        action="store_true",
        help="lift the limit of sign-ups per address (test machines only)",
    )
    for kind in FAULTS:
        parser.add_argument(
            f"--p-{kind}",
            type=probability,
            default=DEFAULT_P[kind],
            help=f"probability of a {kind} per seat and round (default {DEFAULT_P[kind]:g})",
        )
    parser.add_argument(
        "--p-decline",
        type=probability,
        default=DEFAULT_P_DECLINE,
        help=f"probability of declining a special hand (default {DEFAULT_P_DECLINE:g})",
    )
    args = parser.parse_args(argv)
    args.p = {kind: getattr(args, f"p_{kind}") for kind in FAULTS}
    if sum(args.p.values()) > 1:
        parser.error("the fault probabilities add up to more than 1")
    if args.rounds < 1 or args.tables < 1:
        parser.error("--rounds and --tables must be at least 1")
    if args.timeout is None:
        args.timeout = 300 + 6 * args.rounds / args.tables
    args.prefix = args.prefix or f"sk{int(time.time()) % 1_000_000}"
    if urllib.parse.urlsplit(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the soak script only talks to the loopback interface")
    return args


if __name__ == "__main__":
    sys.exit(main())

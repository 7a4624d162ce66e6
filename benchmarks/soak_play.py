"""Playing the soak: the run's shared state, its tables, and seats that play on through as
many clients as their faults need.

A table decides once, for every seat, whether it plays each round, while the run's budget of
rounds lasts. A seat goes on with a new client after a reload, rejoins its room by code after
an escape or being let go, and replaces a client that crashed up to ``MAX_CRASHES`` times;
what has not finished by ``--timeout`` is recorded as a failure, with where each seat was.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.exceptions import InvalidHandshake, InvalidStatus

from benchmarks.seating import Lobby, Sessions, find_rules, open_table
from benchmarks.soak_faults import Fault, SoakClient, View

SEATS = 4
# Tries of a lobby socket whose handshake fails on the way (Seat._lobby).
LOBBY_ATTEMPTS = 5
SILENCE_SECONDS = 1.0  # no frame for this long while playing: hello {since} again
MAX_CRASHES = 3  # per seat: a client that raised is replaced this many times, then the seat stops


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

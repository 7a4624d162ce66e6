"""The soak's faults: what a seat does wrong in a round, and the table client that does it.

At random — seeded per table, round and seat, at most one fault per seat and round — a seat:

- ``disconnect``: closes its socket mid-round; the client reconnects and says ``hello {since}``
  (if the table settled meanwhile, the seat escaped: it rejoins the room by its code);
- ``reload``: is replaced mid-round by a brand-new client (a browser reload: no memory, a
  snapshot), the old socket closing before or (``overlap``) after the new one opens;
- ``timeout``: does not act in the round's play phase, so the table's deadline plays for it;
- ``escape``: leaves mid-round, pays the penalty at settlement, and rejoins the room by code;
- ``drop``: ignores an incoming ``events`` frame, as if lost, and every one after it until its
  silence makes it ``hello {since}`` again;
- and a seat offered a special hand plays it, or declines it (``--p-decline``).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from websockets.exceptions import InvalidStatus

from benchmarks.table_client import LOBBY_PHASES, PLAY_PHASES, TableClient

if TYPE_CHECKING:
    from benchmarks.soak_play import Seat

# Faults per seat and round, at most one: the probabilities of each (--p-<kind>).
FAULTS = ("disconnect", "reload", "timeout", "escape", "drop")
DEFAULT_P = {"disconnect": 0.01, "reload": 0.005, "timeout": 0.004, "escape": 0.004, "drop": 0.01}
DEFAULT_P_DECLINE = 0.25
SEND_INTERVAL = 0.12  # seconds between two frames of a player: at most 500 a minute


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

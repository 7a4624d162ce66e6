"""A bot client of the table's WebSocket (docs/protocol.md), for the load script and fault tests.

One :class:`TableClient` is one seated player: it connects with a session cookie and an
Origin header, says ``hello`` with the last version it saw, applies the events in version
order, and plays — Ready, answer the special choice, submit the first suggestion — with a fresh
action id for every new action (the same id when it retries one after a reconnect, so the
server applies it once). It never stalls on a lost frame:

- the socket drops or the handshake fails: reconnect with exponential backoff (and jitter),
  then ``hello {since}`` to get what was missed (or a snapshot);
- no frame for ``silence_seconds`` while it is still playing: ``hello {since}`` again, so a
  broadcast lost in the channel layer (Redis restarted) is fetched from the table's log.

A shared :class:`LatencyTracker` times the actions; ``stats`` counts errors, closes, resyncs.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import random
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

LOBBY_PHASES = frozenset({"waiting", "settled"})
PLAY_PHASES = frozenset({"special_choice", "arranging"})
# The player is no longer at the table (docs/protocol.md, "Close codes"): do not reconnect.
CLOSE_LEFT = 4000
# Handshakes refused (403: not logged in, not seated) in a row before giving up.
MAX_REFUSED_HANDSHAKES = 10
# Refusals a client can get after a reconnect when its view was a step behind: not errors of
# the server, but counted apart so a run can show them.
BENIGN_REFUSALS = frozenset(
    {"already_ready", "already_submitted", "already_chosen", "already_left", "wrong_phase"}
)


def cookie_header(cookie: dict[str, str] | str) -> str:
    if isinstance(cookie, str):
        return cookie
    return "; ".join(f"{name}={value}" for name, value in cookie.items())


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0..100) by nearest rank; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


class LatencyTracker:
    """Action → broadcast latency, across every client of one process: when a client sent
    ``ready`` / ``submit`` and when the matching public event (``ready`` / ``submitted`` at
    that position) reached each OTHER seat, with ``time.monotonic``."""

    def __init__(self) -> None:
        self._sent: dict[tuple[Any, ...], float] = {}
        self.samples: list[float] = []  # seconds
        self.timed: list[tuple[float, float]] = []  # (sent at, seconds), as samples
        self.replies: list[float] = []  # action -> its own ok, seconds
        # The samples by what the action's broadcast carried (ACTION_CLASSES): a Ready, the
        # Ready that dealt the round, a submission, the submission that settled it.
        self.by_class: dict[str, list[float]] = {name: [] for name in ACTION_CLASSES}

    def sent(self, key: tuple[Any, ...], at: float) -> None:
        self._sent.setdefault(key, at)

    def replied(self, seconds: float) -> None:
        self.replies.append(seconds)

    def arrived(self, key: tuple[Any, ...], at: float, batch: frozenset[str] = frozenset()) -> None:
        """The public event of ``key`` arrived at ``at``, in a frame whose events were of the
        types ``batch``."""
        sent = self._sent.get(key)
        if sent is not None:
            self.samples.append(at - sent)
            self.timed.append((sent, at - sent))
            self.by_class[action_class(key[1], batch)].append(at - sent)


# What an action's broadcast carried: the action alone, or the round's deal (the last Ready)
# or its settlement (the last submission) with it, which cost the platform several times more.
ACTION_CLASSES = ("ready", "ready+deal", "submitted", "submitted+settled")


def action_class(kind: str, batch: frozenset[str]) -> str:
    """The class of a ``ready`` / ``submitted`` sample whose frame held events of ``batch``."""
    if kind == "ready" and "deal" in batch:
        return "ready+deal"
    if kind == "submitted" and "settled" in batch:
        return "submitted+settled"
    return kind


@dataclass
class ClientStats:
    errors: Counter[str] = field(default_factory=Counter)  # error codes of error frames
    benign: Counter[str] = field(default_factory=Counter)
    unexpected_closes: int = 0
    close_codes: Counter[int | None] = field(default_factory=Counter)  # of unexpected closes
    connect_failures: int = 0
    reconnects: int = 0
    resyncs: int = 0  # hello sent after a silence
    snapshots: int = 0
    broadcasts: int = 0  # `events` frames (pushed by the server, not asked for)
    timeouts: int = 0
    actions: Counter[str] = field(default_factory=Counter)


class TableClient:
    """One seated player's connection to the table of ``room_id``; see the module docstring."""

    def __init__(
        self,
        *,
        ws_url: str,
        room_id: int,
        cookie: dict[str, str] | str,
        origin: str,
        name: str = "",
        tracker: LatencyTracker | None = None,
        play_special: bool = False,
        silence_seconds: float = 2.0,
        max_backoff: float = 2.0,
        on_event: Callable[[TableClient, dict[str, Any]], None] | None = None,
        think: tuple[float, float] | None = None,
        first_delay: float = 0.0,
    ) -> None:
        self.url = f"{ws_url.rstrip('/')}/ws/table/{room_id}/"
        self.room_id = room_id
        self.headers = {"Cookie": cookie_header(cookie), "Origin": origin}
        self.name = name or f"room{room_id}"
        self.tracker = tracker
        self.play_special = play_special
        self.silence_seconds = silence_seconds
        self.max_backoff = max_backoff
        self.on_event = on_event
        # Seconds (uniformly between the two) a person would take before each action; None
        # acts at once (every seat of a table in the same millisecond: the worst case).
        self.think = think
        # Seconds the first action (the first Ready) waits, on top of any thinking: a table
        # that sits down later than the others (the load script's --stagger).
        self.first_delay = first_delay
        self._started = first_delay <= 0
        self._thinking: set[tuple[str, int]] = set()  # actions being thought about
        self._thought: set[tuple[str, int]] = set()  # actions thought about: send now
        self._tasks: set[asyncio.Task[None]] = set()
        self.stats = ClientStats()
        # The table as this seat sees it.
        self.position: int | None = None
        self.version: int | None = None
        self.phase: str | None = None
        self.round_no = 0
        self.in_round = False
        self.ready = False
        self.done = False
        self.hand: list[str] | None = None
        self.special: str | None = None
        self.special_choice: bool | None = None
        self.suggestions: list[dict[str, Any]] | None = None
        # The hand came live with ``"suggestions": null``: they follow in a
        # ``hand_suggestions`` frame, which a person looks at before arranging (so this seat
        # waits for it).
        self.awaiting_suggestions = False
        self.results: dict[int, dict[str, Any]] = {}  # round_no -> settled result
        self.settled_at: dict[int, float] = {}  # round_no -> when its result came (monotonic)
        self.rounds_played = 0
        self.left = False
        self.close_code: int | None = None
        # Playing.
        self.target_rounds: int | None = None
        self.hold_play = False  # Ready, but neither choose nor submit (until released)
        self.leave_at_end = False  # leave the table (and the room) once done playing
        self.want_round: Callable[[int], bool] | None = None
        self._ws: Any = None
        self._ids = itertools.count(1)
        self._action_ids: dict[tuple[str, int], str] = {}
        self._pending: dict[str, tuple[str, int]] = {}  # id -> (action, round_no)
        self._sent_at: dict[str, float] = {}  # id -> when first sent
        self._applied: set[tuple[str, int]] = set()  # (action, round_no) answered ok
        # When the first welcome came, and when the leave was first sent (time.monotonic).
        self.welcomed_at: float | None = None
        self.leaving_at: float | None = None

    # -- the view ---------------------------------------------------------------------------

    def wants_round(self, round_no: int) -> bool:
        """Whether to press Ready for round ``round_no`` (the load script may decide per table,
        so that every seat of a table stops after the same round)."""
        if self.want_round is not None:
            return self.want_round(round_no)
        return self.target_rounds is None or self.rounds_played < self.target_rounds

    @property
    def done_playing(self) -> bool:
        """Between rounds, not Ready, and no further round wanted."""
        return (
            self.phase in LOBBY_PHASES
            and not self.ready
            and not self.wants_round(self.round_no + 1)
        )

    @property
    def finished(self) -> bool:
        return self.left or (self.done_playing and not self.leave_at_end)

    def _apply_snapshot(self, snap: dict[str, Any]) -> None:
        self.stats.snapshots += 1
        me = snap.get("you") or {}
        self.version = snap["version"]
        self.phase = snap["phase"]
        self.round_no = snap["round_no"] or 0
        seat = next((s for s in snap["seats"] if s["position"] == self.position), None)
        self.ready = bool(seat and seat["ready"])
        self.in_round = bool(seat and seat["in_round"])
        self.done = bool(seat and seat["done"])
        self.hand = me.get("hand")
        self.special = me.get("special")
        self.special_choice = me.get("special_choice")
        self.suggestions = me.get("suggestions")
        self.awaiting_suggestions = False  # a snapshot's hand comes with them
        result = snap.get("result")
        if self.phase == "settled" and result is not None and self.in_round:
            self._record_result(self.round_no, result)

    def _record_result(self, round_no: int, result: dict[str, Any]) -> None:
        if round_no not in self.results:
            self.results[round_no] = result
            self.settled_at[round_no] = time.monotonic()
            self.rounds_played += 1

    def _apply_event(
        self, event: dict[str, Any], at: float, batch: frozenset[str] = frozenset()
    ) -> None:
        version, kind, payload = event["version"], event["type"], event["payload"]
        if self.version is not None and version <= self.version:
            return
        self.version = version
        mine = payload.get("position") == self.position
        if kind in ("ready", "submitted") and self.tracker is not None and not mine:
            key = (self.room_id, kind, payload["position"], self.round_no)
            self.tracker.arrived(key, at, batch)
        if kind == "phase":
            self.phase = payload["phase"]
            if self.phase in LOBBY_PHASES:
                self.ready = False
        elif kind == "ready" and mine:
            self.ready = True
        elif kind == "round_start":
            self.round_no = payload["round_no"]
            self.in_round = self.position in payload["positions"]
            self.done = False
            self.hand = self.special = self.special_choice = self.suggestions = None
            self.awaiting_suggestions = False
        elif kind == "hand" and mine:
            self.hand = payload["cards"]
            self.special = payload["special"]
            self.suggestions = payload["suggestions"]
            self.awaiting_suggestions = self.suggestions is None
        elif kind == "special_chosen" and mine:
            self.special_choice = payload["play_special"]
        elif kind in ("submitted", "arrangement") and mine:
            self.done = True
        elif kind == "settled":
            if self.in_round:
                self._record_result(payload["round_no"], payload["result"])
        elif kind == "left" and mine:
            self.left = True
        if self.on_event is not None:
            self.on_event(self, event)

    # -- deciding ---------------------------------------------------------------------------

    def _next_action(self) -> dict[str, Any] | None:
        if self.left or self.phase is None:
            return None
        if self.phase in LOBBY_PHASES:
            if self.ready:
                return None
            if self.wants_round(self.round_no + 1):
                return {"type": "ready"}
            return {"type": "leave"} if self.leave_at_end else None
        if self.phase not in PLAY_PHASES or not self.in_round or self.done or not self.hand:
            return None
        if self.hold_play:
            return None
        if self.special is not None and self.special_choice is None:
            if self.phase != "special_choice":
                return None
            return {"type": "choose_special", "play_special": self.play_special}
        if self.awaiting_suggestions:
            return None  # they are on their way
        return {"type": "submit", **self._arrangement()}

    def _arrangement(self) -> dict[str, list[str]]:
        if self.suggestions:
            best = self.suggestions[0]
            return {row: best[row] for row in ("front", "middle", "back")}
        from games.rules.arrange import best_arrangement  # noqa: PLC0415 - pure, rarely needed
        from games.rules.cards import format_cards, parse_cards  # noqa: PLC0415

        arranged = best_arrangement(parse_cards(self.hand))
        return {
            "front": format_cards(arranged.front),
            "middle": format_cards(arranged.middle),
            "back": format_cards(arranged.back),
        }

    async def _act(self) -> None:
        action = self._next_action()
        if action is None:
            return
        kind = action["type"]
        key = (kind, self.round_no)
        if key in self._applied:
            return  # answered ok: its events are on the way
        if key in self._action_ids and self._action_ids[key] in self._pending:
            return  # already sent on this connection; its reply is on the way
        if (self.think is not None or not self._started) and key not in self._thought:
            if key not in self._thinking:
                self._thinking.add(key)
                task = asyncio.create_task(self._think_then_act(key))
                self._tasks.add(task)
                task.add_done_callback(self._tasks.discard)
            return
        # The same id for a retry of the same action (applied once), a fresh one otherwise.
        action_id = self._action_ids.setdefault(key, f"{self.name}-{next(self._ids)}")
        self._pending[action_id] = key
        self.stats.actions[kind] += 1
        now = time.monotonic()
        self._sent_at.setdefault(action_id, now)
        if kind == "leave" and self.leaving_at is None:
            self.leaving_at = now
        if self.tracker is not None and self.position is not None and kind in ("ready", "submit"):
            public = "ready" if kind == "ready" else "submitted"
            self.tracker.sent((self.room_id, public, self.position, self.round_no), now)
        await self._send({**action, "id": action_id})

    async def _think_then_act(self, key: tuple[str, int]) -> None:
        delay = random.uniform(*self.think) if self.think is not None else 0.0
        if not self._started:
            self._started = True
            delay += self.first_delay
        await asyncio.sleep(delay)
        self._thinking.discard(key)
        self._thought.add(key)
        if self._ws is not None and self.position is not None and self.phase is not None:
            with contextlib.suppress(ConnectionClosed):
                await self._act()

    # -- the connection ---------------------------------------------------------------------

    async def _send(self, message: dict[str, Any]) -> None:
        await self._ws.send(json.dumps(message))

    async def _hello(self) -> None:
        await self._send(
            {"type": "hello", "id": f"{self.name}-h{next(self._ids)}", "since": self.version}
        )

    def _handle(self, frame: dict[str, Any], at: float) -> None:
        kind = frame.get("type")
        if kind == "welcome":
            if self.welcomed_at is None:
                self.welcomed_at = at
            self.position = frame["position"]
            if "snapshot" in frame:
                self._apply_snapshot(frame["snapshot"])
            events = frame.get("events", [])
            batch = frozenset(e["type"] for e in events)
            for event in events:
                self._apply_event(event, at, batch)
        elif kind == "events":
            self.stats.broadcasts += 1
            batch = frozenset(e["type"] for e in frame["events"])
            for event in frame["events"]:
                self._apply_event(event, at, batch)
        elif kind == "hand_suggestions":
            # The suggestions for the hand dealt (sent a moment after it), if it is this one.
            if self.hand is not None and sorted(frame["cards"]) == sorted(self.hand):
                self.suggestions = frame["suggestions"]
                self.awaiting_suggestions = False
        elif kind == "ok":
            key = self._pending.pop(str(frame.get("id")), None)
            if key is not None:
                self._applied.add(key)
                sent = self._sent_at.pop(str(frame.get("id")), None)
                if self.tracker is not None and sent is not None:
                    self.tracker.replied(at - sent)
        elif kind == "error":
            self._pending.pop(str(frame.get("id")), None)
            code = frame["error"]["code"]
            if code in ("already_left", "not_at_table"):
                self.left = True
            if code in BENIGN_REFUSALS:
                self.stats.benign[code] += 1
            else:
                self.stats.errors[code] += 1

    async def _session(self) -> None:
        """One connection: hello, then read and act until it closes or the client is done."""
        async with websockets.connect(
            self.url, additional_headers=self.headers, open_timeout=10, ping_interval=None
        ) as ws:
            self._ws = ws
            self._pending.clear()
            await self._hello()
            while not self.finished:
                try:
                    raw = await asyncio.wait_for(ws.recv(), self.silence_seconds)
                except TimeoutError:
                    # Nothing for a while although a round or a Ready is pending: ask again.
                    self.stats.resyncs += 1
                    self._pending.clear()
                    await self._hello()
                    continue
                at = time.monotonic()
                self._handle(json.loads(raw), at)
                if self.position is not None and self.phase is not None:
                    await self._act()

    async def play(
        self, *, rounds: int | None = None, seconds: float = 120.0, leave: bool = False
    ) -> None:
        """Play until ``rounds`` rounds this seat was in have settled (or no further round is
        wanted), then leave the table if ``leave``; reconnects as needed. Raises TimeoutError
        after ``seconds``."""
        self.target_rounds = rounds
        self.leave_at_end = leave
        try:
            await asyncio.wait_for(self._play(), seconds)
        except TimeoutError:
            self.stats.timeouts += 1
            raise

    async def _play(self) -> None:
        failures = refused = 0
        while not self.finished:
            try:
                await self._session()
                failures = 0
            except ConnectionClosed as exc:
                code = exc.rcvd.code if exc.rcvd is not None else None
                self.close_code = code
                if code == CLOSE_LEFT:
                    self.left = True
                    return
                self.stats.unexpected_closes += 1
                self.stats.close_codes[code] += 1
                self.stats.reconnects += 1
            except InvalidStatus as exc:
                # 403: not logged in or not seated (4401 / 4403): transient only while a
                # restarted server comes up, so give up after a few in a row.
                self.stats.connect_failures += 1
                refused = refused + 1 if exc.response.status_code == 403 else 0
                if refused >= MAX_REFUSED_HANDSHAKES:
                    raise
            except (OSError, InvalidHandshake, TimeoutError):
                self.stats.connect_failures += 1
            finally:
                self._ws = None
            if self.finished:
                return
            failures += 1
            delay = min(self.max_backoff, 0.05 * 2**failures)
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))

"""Events: the versioned record of every state change, and what a transition returns.

Every command returns a :class:`Transition` — the new state plus the events it produced, in
order. Each event carries the table version it brought the table to: versions go up by exactly
one per event, and ``state.version`` is the version of the last one. The machine never changes
a state without at least one event, so a version names a state.

``audience`` is ``"all"`` (every seat and spectator may see it) or a **player id** (only that
player). Secrets (a seat's cards, its special, its suggestions, its draft) only ever appear in
events addressed to the player who holds them, until the comparison makes the hands public; so
filtering by audience (:func:`games.table.perspective.events_for`) is all a view needs. A private
event belongs to the player, never to the position: whoever sits there later sees none of it
(``SeatState.since``). A client gets each event without its audience (:meth:`Event.message`);
docs/protocol.md, "Events", lists every type and its payload.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Literal

from .state import Json, Phase, SeatState, TableState

# "all", or the id of the one player who may see the event (player ids are never "all" or "").
Audience = str
ALL: Literal["all"] = "all"
# The audience of a private event whose log entry names no player: nobody sees it.
NOBODY: Literal[""] = ""


@dataclass(frozen=True, slots=True)
class Event:
    """One thing that happened. ``payload`` is JSON-able; treat it as read-only."""

    version: int
    type: str
    payload: Json
    audience: Audience = ALL

    @property
    def private(self) -> bool:
        return self.audience != ALL

    def visible_to(self, player: str | None) -> bool:
        """Whether ``player`` (None: a spectator) may see this event."""
        return self.audience == ALL or (player is not None and self.audience == player)

    def message(self) -> Json:
        """What a client receives: the event without its audience."""
        return {"version": self.version, "type": self.type, "payload": self.payload}

    def to_dict(self) -> Json:
        return {**self.message(), "audience": self.audience}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Event:
        return cls(
            int(data["version"]),
            str(data["type"]),
            dict(data["payload"]),
            str(data["audience"]),
        )


@dataclass(frozen=True, slots=True)
class Timer:
    """A timeout to schedule: at ``at``, call ``timeout(version=version, phase=phase)``."""

    version: int
    phase: Phase
    at: float


@dataclass(frozen=True, slots=True)
class Transition:
    """The result of a command: the new state and the events, oldest first."""

    state: TableState
    events: tuple[Event, ...] = ()

    @property
    def timer(self) -> Timer | None:
        """The timeout the new state needs, if any: what the workers' poller asks for once
        the saved state's deadline has passed (``games.live.timers``). A timer holds only in its
        phase, with its deadline or at its version: a command that moves the table on makes
        it stale."""
        state = self.state
        if state.deadline is None:
            return None
        return Timer(state.version, state.phase, state.deadline)


class Step:
    """A transition being built: the machine's working copy of the state and its events.

    Only the machine uses it. ``emit`` stamps each event with the next version.
    """

    def __init__(self, state: TableState) -> None:
        self.state = state
        self.events: list[Event] = []

    def emit(self, type: str, payload: Json, audience: Audience = ALL) -> None:
        version = self.state.version + 1
        self.state = replace(self.state, version=version)
        self.events.append(Event(version, type, payload, audience))

    def set(self, **changes: Any) -> None:
        self.state = replace(self.state, **changes)

    def seat(self, position: int) -> SeatState:
        seat = self.state.seat(position)
        assert seat is not None, f"no seat {position}"
        return seat

    def update_seat(self, position: int, **changes: Any) -> SeatState:
        new = replace(self.seat(position), **changes)
        self.state = replace(
            self.state,
            seats=tuple(new if s.position == position else s for s in self.state.seats),
        )
        return new

    def remove_seat(self, position: int) -> None:
        self.state = replace(
            self.state, seats=tuple(s for s in self.state.seats if s.position != position)
        )

    def add_seat(self, seat: SeatState) -> None:
        seats = sorted((*self.state.seats, seat), key=lambda s: s.position)
        self.state = replace(self.state, seats=tuple(seats))

    def done(self) -> Transition:
        return Transition(self.state, tuple(self.events))

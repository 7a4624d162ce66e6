"""Why the table sent a player back to the room list, kept for a player who was not there to
hear it (disconnected, the page closed) and told once when it comes back.

A table command that removes a person for a reason of its own (the Ready timeout, the match
or series over, too few coins, an escape) leaves a note keyed by that person's user id — the
only key: nobody else can write or read it — after the transaction commits. The table's
socket tells the player the reason when it refuses a seat that is gone (``peek``); the lobby
page shows it once and forgets it (``pop``). A player's own Leave leaves no note, and a newer
note replaces an older one.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypedDict

from django.core.cache import cache
from django.db import transaction

from games.table.events import Event
from games.table.state import TableState

# How long a note waits for its player (a week: "you were sent away" is still worth saying).
NOTE_SECONDS = 7 * 24 * 3600
# The table's `left` reasons that are the player's own doing: nothing to tell.
OWN_REASONS = frozenset({"left"})


class Note(TypedDict):
    room: int
    reason: str


def _key(user_id: int) -> str:
    return f"table-sent-away:{user_id}"


def reasons_sent_away(before: TableState, events: Iterable[Event]) -> dict[int, str]:
    """The people the events remove for a reason of the table's, by user id: the `left`
    event's reason, or ``escaped_disconnected`` for a player sent away at the Ready deadline
    after a round it escaped by not coming back (it paid the escape penalty too). Bots are
    never told anything."""
    reasons: dict[int, str] = {}
    for event in events:
        if event.type != "left" or event.payload.get("reason") in OWN_REASONS:
            continue
        player = str(event.payload["player"])
        seat = before.seat_of(player)
        if seat is None or seat.bot or not player.isdigit():
            continue
        reason = str(event.payload["reason"])
        if reason == "ready_timeout" and seat.escaped and not seat.left:
            reason = "escaped_disconnected"
        reasons[int(player)] = reason
    return reasons


def record_on_commit(*, room_id: int, reasons: dict[int, str]) -> None:
    """Leave each player its note once the transaction that sent it away commits."""
    if not reasons:
        return

    def write() -> None:
        cache.set_many(
            {_key(u): Note(room=room_id, reason=r) for u, r in reasons.items()}, NOTE_SECONDS
        )

    transaction.on_commit(write, robust=True)


def _valid(value: Any) -> Note | None:
    if not isinstance(value, dict):
        return None
    room, reason = value.get("room"), value.get("reason")
    if isinstance(room, int) and isinstance(reason, str):
        return Note(room=room, reason=reason)
    return None


def peek(*, user_id: int) -> Note | None:
    """The player's note, left in place."""
    return _valid(cache.get(_key(user_id)))


def pop(*, user_id: int) -> Note | None:
    """The player's note, forgotten: it is told once."""
    note = _valid(cache.get(_key(user_id)))
    if note is not None:
        cache.delete(_key(user_id))
    return note


def forget(*, user_id: int) -> None:
    """The player sat down again (anywhere): an older note no longer says anything."""
    cache.delete(_key(user_id))

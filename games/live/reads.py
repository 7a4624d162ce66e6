"""What a table's socket reads: a user's seat or watch, the events since a version, a resync,
the suggestions of a hand — none of it locks or changes a table.

Players are identified in the machine by ``str(user.pk)`` and sit at the position of their
lobby seat (:class:`lobby.models.Seat`). A state is read from the row only when this process
does not hold that version already (``games.live.store.STATES``).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace

from accounts.models import User
from games.live import store
from games.models import Table
from games.rules.cards import Card, Deck, parse_cards
from games.rules.errors import RulesError
from games.table.errors import TableError
from games.table.events import Event
from games.table.perspective import delivered, missed_events, resync_suggestions, snapshot_for
from games.table.state import Json, TableState
from games.table.suggest import kept_suggestions
from lobby.models import Room, RoomStatus, Seat

logger = logging.getLogger(__name__)

_TABLE = Table._meta.db_table
_ROOM = Room._meta.db_table
_SEAT = Seat._meta.db_table

# Beyond this many missed events a reconnecting client gets a snapshot instead.
MAX_MISSED_EVENTS = 500

# Any card of any deck (RULES.md §12) reads; the machine checks they are the seat's own.
_ANY_DECK = Deck(extra_suits=2, jokers=2)


def parsed_cards(value: object, what: str) -> tuple[Card, ...]:
    """Cards given as card strings (``"AS"``) by a client; refused with ``bad_cards``."""
    try:
        return parse_cards(value, what=what, deck=_ANY_DECK)
    except RulesError as exc:
        raise TableError("bad_cards", str(exc), row=what) from None


def seat_position(*, state: TableState, user: User) -> int:
    """The user's position at the table; refused with ``not_at_table``."""
    seat = state.seat_of(str(user.pk))
    if seat is None:
        raise TableError("not_at_table", "you do not sit at this table")
    return seat.position


@dataclass(frozen=True, slots=True)
class TableSeat:
    """Where a player sits: the room, its table and the player's position there."""

    room: Room
    table_id: int
    position: int
    connected: bool
    player: str


def table_seat_for(*, user: User, room_id: int) -> TableSeat | None:
    """The player's seat at the table of room ``room_id``, or None when not seated there. One
    query for a player seated at a table (every socket's connect asks), which reads the
    table's state only when this process does not hold its version; two or three otherwise."""
    known = store.STATES.of_room(room_id)
    found = list(
        Room.objects.raw(
            f"SELECT r.*, t.id AS table_pk, t.version AS table_version, "
            f"CASE WHEN t.id = %s AND t.version = %s THEN NULL ELSE t.state END AS table_state "
            f"FROM {_ROOM} r JOIN {_TABLE} t ON t.room_id = r.id "
            f"JOIN {_SEAT} s ON s.room_id = r.id AND s.user_id = %s WHERE r.id = %s",
            [*store.held_params(known), user.pk, room_id],
        )
    )
    if found:
        room = found[0]
        table_id = room.table_pk
        state = store.held_or_parsed(
            known,
            room_id=room_id,
            table_id=table_id,
            version=room.table_version,
            text=room.table_state,
        )
    else:  # not seated, or seated at a room whose table does not exist yet
        room = Room.objects.filter(pk=room_id).first()
        if room is None or not Seat.objects.filter(room=room, user=user).exists():
            return None
        table = store.table_for_room(room=room)
        table_id, state = table.pk, TableState.from_dict(table.state)
    seat = state.seat_of(str(user.pk))
    if seat is None:
        return None
    return TableSeat(room, table_id, seat.position, seat.connected, seat.player)


@dataclass(frozen=True)
class TableWatch:
    """A table a spectator watches: the room and its table."""

    room: Room
    table_id: int


def table_watch_for(*, user: User, room_id: int) -> TableWatch | None:
    """The table of room ``room_id`` if ``user`` may watch it: an open public room that allows
    spectators. A player watches a table it does not sit at."""
    room = Room.objects.filter(
        pk=room_id, status=RoomStatus.OPEN, is_private=False, allow_spectators=True
    ).first()
    if room is None:
        return None
    return TableWatch(room, store.table_for_room(room=room).pk)


def table_events_since(*, table: Table, version: int) -> list[Event]:
    """The logged events after ``version``, oldest first (for ``missed_events``)."""
    return [e.as_event() for e in table.events.filter(version__gt=version).order_by("version")]


def table_resync(*, table_id: int, player: str, since: int | None) -> Json:
    """What ``player``'s client, which last saw version ``since``, needs: ``{"events": [...]}``
    — the events it missed that the player may see — or ``{"snapshot": ...}``
    (``snapshot_for``) when ``since`` is None, unknown to the log, too far behind, or from
    before the player sat down (nothing before that is ever replayed). A player no longer at
    the table gets a spectator's snapshot."""
    table, state = store.committed(table_id)
    seat = state.seat_of(player)
    position = None if seat is None else seat.position
    if seat is not None and since is not None and 0 <= state.version - since <= MAX_MISSED_EVENTS:
        # From ``since`` itself, so that the log is not empty when nothing was missed.
        log = table_events_since(table=table, version=since - 1)
        missed = missed_events(log, since, player, seated_at=seat.since)
        if missed is not None:
            view: Json = {
                "version": state.version,
                "events": [_delivered(e, state).message() for e in missed],
            }
            try:
                found = resync_suggestions(state, player, missed)
            except Exception:
                logger.exception("could not work out the suggestions of a hand (sent none)")
                found = None
            if found is not None:  # the hand came before: its suggestions may not have
                view["suggestions"] = found
            return view
    return {"version": state.version, "snapshot": snapshot_for(state, position, now=store.clock())}


def _delivered(event: Event, state: TableState) -> Event:
    """``delivered`` (a reconnect's missed events); a hand whose suggestions fail is still
    sent (with none), so that the round goes on and the failure is logged rather than the
    whole batch lost."""
    try:
        return delivered(event, state)
    except Exception:
        logger.exception("could not work out the suggestions of a hand (sent with none)")
        return replace(event, payload={**event.payload, "suggestions": []})


def table_suggest(*, user: User, room: Room, cards: list[str]) -> list[Json]:
    """The suggestions for the 13 cards the player keeps of its 16 (RULES.md §12.4, the
    ``suggest`` message). Reads the table without locking it and changes nothing; a request
    that cannot be answered raises TableError."""
    kept = parsed_cards(cards, "cards")
    state = TableState.from_dict(
        Table.objects.filter(room=room).values_list("state", flat=True).get()
    )
    position = seat_position(state=state, user=user)
    return kept_suggestions(state, position=position, cards=kept)

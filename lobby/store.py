"""The lobby's rows and their events: insert a room, seat a player in a room and at its table,
record a change of a room's public row, and send that row to the lobby once the transaction
commits. The callers (the lobby's services, matchmaking, duplicate matches) check first and
hold the room's lock; the database's unique constraints back them up.
"""

import secrets
from collections.abc import Callable

from django.db import IntegrityError, transaction

from accounts.collusion import transfers_frozen
from accounts.models import User
from games.live import services as table_services
from games.models import DuplicateMatch, RuleConfiguration
from lobby.errors import AlreadySeated, RoomFull, TransfersFrozen
from lobby.models import CODE_ALPHABET, CODE_LENGTH, BotLevel, Room, Seat
from lobby.selectors import room_get, room_row, seat_for_user
from shisanshui.publish import publish

LOBBY_GROUP = "lobby"
# What the lobby's events are called; a client removes a room on ROOM_CLOSED, upserts otherwise.
ROOM_CREATED = "room.created"
ROOM_UPDATED = "room.updated"
ROOM_CLOSED = "room.closed"
CODE_ATTEMPTS = 10


def room_free_position(*, room: Room) -> int | None:
    """The lowest free seat position of a room the caller has locked; None when it is full."""
    taken = set(Seat.objects.filter(room=room).values_list("position", flat=True))
    free = [position for position in range(room.seats) if position not in taken]
    return free[0] if free else None


def seat_take(*, room: Room, user: User, position: int) -> Seat:
    """Seat the player in the room and at its table (`table_sit`, same transaction): the room
    and its table move together. The unique constraints (one seat per player, one player per
    seat position) turn a lost race into a clear refusal. A player whose transfers are frozen
    is refused here too, whichever service seats it (`transfers_frozen`)."""
    if not user.is_bot and transfers_frozen(user):
        raise TransfersFrozen()
    room.empty_since = None  # saved with the room's next change (room_touch), if it was set
    try:
        with transaction.atomic():
            seat = Seat.objects.create(room=room, user=user, position=position)
    except IntegrityError as error:
        if "lobby_seat_one_table_per_player" in str(error):
            other = seat_for_user(user=user)
            raise AlreadySeated(room=other.room.name if other else room.name) from None
        if "lobby_seat_position_taken_once" in str(error):
            raise RoomFull() from None
        raise
    table_services.table_sit(user=user, room=room)
    return seat


def room_insert(
    *,
    owner: User,
    name: str,
    rules: RuleConfiguration,
    base_score: int,
    seats: int,
    private: bool,
    minimum: int,
    bot_level: str = BotLevel.STRONG,
    match: DuplicateMatch | None = None,
    match_table: int | None = None,
    chat_text: bool = True,
    allow_spectators: bool = True,
    series_rounds: int | None = None,
) -> Room:
    """A new open room; a private one gets a fresh code (retrying the rare collision: codes are
    unique among open rooms).

    `minimum` is its entry minimum, fixed now from its rules at its base score: a later edit of
    the rule configuration applies to new rooms only."""
    fields = {
        "name": name,
        "rules": rules,
        "base_score": base_score,
        "seats": seats,
        "owner": owner,
        "is_private": private,
        "entry_minimum": minimum,
        "bot_level": bot_level,
        "match": match,
        "match_table": match_table,
        "chat_text": chat_text,
        "allow_spectators": allow_spectators,
        "series_rounds": series_rounds,
        "series_token": None if series_rounds is None else secrets.token_urlsafe(12),
    }
    if not private:
        return Room.objects.create(**fields)
    for _attempt in range(CODE_ATTEMPTS):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        try:
            with transaction.atomic():
                return Room.objects.create(**fields, code=code)
        except IntegrityError as error:
            if "lobby_room_code_unique_among_open" not in str(error):
                raise
    raise RuntimeError("Could not find a free room code.")  # 31**6 codes: never in practice


def room_touch(*, room: Room) -> None:
    """Record that the room's public row changed."""
    room.version += 1
    room.save(update_fields=["version", "owner", "status", "closed_at", "empty_since"])


def room_notify(*, event: str, room: Room, seats: list[Seat] | None = None) -> None:
    """Send the room's row, as it is now inside this transaction, once the transaction commits.
    With ``seats`` (its taken seats with their users, read under the room's lock), the row is
    made from them and the locked ``room`` (read with all its row needs but its seats) without
    reading it again.

    A failed send is logged, never raised: the change is committed and a client that missed an
    event gets the truth from the snapshot when it reconnects.
    """
    if seats is None:
        refreshed = room_get(room_id=room.pk)
        assert refreshed is not None
        row = room_row(room=refreshed)
    else:
        row = room_row(room=room, seats=seats)
    message = {"type": "lobby.event", "event": event, "room": row}
    transaction.on_commit(_group_send(LOBBY_GROUP, message), robust=True)


def _group_send(group: str, message: dict[str, object]) -> Callable[[], None]:
    def send() -> None:
        publish([(group, message)])

    return send

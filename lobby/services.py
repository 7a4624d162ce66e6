"""Services of the lobby's rooms: open, join, leave, free seats, close; and seat bots.

Each runs in one database transaction, check -> lock -> write -> notify: the input is checked
(`lobby.checks`; a refusal writes nothing), the room row(s) are locked with SELECT ... FOR
UPDATE (in ascending id order when there are several) and what the lock protects is checked
again, the seat or room is written (`lobby.store`), and the room's public row goes to the
"lobby" group once the transaction commits. Locks are taken room first, then its table.

The room and its table move together: every seat taken here also sits at the room's table,
and leaving goes through the table first. Whenever the table lets a player go (its `left`
events: after leaving, at settlement after an escape, on a Ready timeout) the lobby seat is
freed in the same transaction (`seats_release`, through `lobby.signals`). Quick-join and Play
now are `lobby.matchmaking`'s; duplicate matches `games.live.matches`'.
"""

import hmac
import secrets
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from games.live import bots as games_bots
from games.live import services as table_services
from games.models import DuplicateMatch, Round, RuleConfiguration, Table
from games.table.errors import TableError
from games.table.state import ROUND_PHASES
from lobby.checks import (
    check_can_afford,
    check_can_open,
    check_code_budget,
    check_guest_table,
    check_no_guest_seated,
    check_not_frozen,
    check_not_guest,
    check_not_seated,
    check_seats_fit,
    checked_base_score,
    checked_bot_level,
    checked_bots,
    checked_name,
    checked_seats,
    checked_series,
    checked_table_terms,
    code_failed,
    config_entry_minimum,
    default_room_name,
    default_rules,
    engine_config,
    normalized_code,
)
from lobby.errors import (
    InvalidChatSetting,
    NotRoomOwner,
    NotSeated,
    RoomClosed,
    RoomFull,
    RoomNotEmpty,
    RoomNotFound,
    RoundInPlay,
    WrongRoomCode,
)
from lobby.models import BotLevel, Invite, Room, RoomStatus, Seat
from lobby.selectors import rooms_for_rows, seat_for_user
from lobby.store import (
    ROOM_CLOSED,
    ROOM_CREATED,
    ROOM_UPDATED,
    room_free_position,
    room_insert,
    room_notify,
    room_touch,
    seat_take,
)

# An invite link's random salt (lobby.invites): secrets.token_urlsafe(32), 256 random bits.
INVITE_SALT_BYTES = 32


def invite_issue(*, room: Room | None = None, match: DuplicateMatch | None = None) -> Invite:
    """Give a private room or a duplicate match its first invite link (``lobby.invites``; its
    opening service calls this); one it has already is kept."""
    assert (room is None) != (match is None)
    target: dict[str, Any] = {"room": room} if room is not None else {"match": match}
    invite, _created = Invite.objects.get_or_create(
        **target, defaults={"salt": secrets.token_urlsafe(INVITE_SALT_BYTES)}
    )
    return invite


@transaction.atomic
def room_create(
    *,
    owner: User,
    base_score: int,
    seats: int,
    name: str | None = None,
    private: bool = False,
    rules: RuleConfiguration | None = None,
    bots: int = 0,
    bot_level: str = BotLevel.STRONG,
    chat_text: bool = True,
    spectators: bool = True,
    series_rounds: int | None = None,
) -> Room:
    """Open a room and seat its creator at position 0; `rules` defaults to the default rules,
    `name` (None) to `default_room_name` (an empty or blank name given is refused).

    The room has at most the seats its rules' deck deals hands for (`too_many_seats`). Its
    entry minimum is fixed now, from its rules at its base score. The creator must not be
    seated elsewhere, must have the room's entry minimum, fewer than
    LOBBY_MAX_OPEN_ROOMS open rooms and room creations left ("lobby.room_create"). `bots`
    (0 to seats - 1) bot players take the next seats (`bots_fill`); they play at `bot_level`
    (games.rules.levels; `invalid_bot_level` otherwise), as will any bot seated later.
    `chat_text` False turns free-text chat off at its table (phrases and reactions stay);
    `spectators` False keeps watchers out (a private room is never watched). `series_rounds`
    (a private room only, 2 to SERIES_MAX_ROUNDS) opens a series (房卡): its table plays that
    many rounds, then its final scoreboard is at the link of its `series_token`.
    """
    if not isinstance(chat_text, bool) or not isinstance(spectators, bool):
        raise InvalidChatSetting()
    series_rounds = checked_series(series_rounds, private=private)
    name = checked_name(default_room_name(owner=owner) if name is None else name)
    bot_level = checked_bot_level(bot_level)
    base_score = checked_base_score(base_score)
    seats = checked_seats(seats)
    bots = checked_bots(bots, seats=seats)
    check_guest_table(
        owner=owner, private=private, bots=bots, seats=seats, series_rounds=series_rounds
    )
    rules = rules if rules is not None else default_rules()
    needed = checked_table_terms(owner=owner, rules=rules, base_score=base_score, seats=seats)
    check_can_open(owner=owner)

    room = room_insert(
        owner=owner,
        name=name,
        rules=rules,
        base_score=base_score,
        seats=seats,
        private=private,
        minimum=needed,
        bot_level=bot_level,
        chat_text=chat_text,
        allow_spectators=spectators,
        series_rounds=series_rounds,
    )
    seat_take(room=room, user=owner, position=0)
    if private:
        invite_issue(room=room)  # its share link
    room_notify(event=ROOM_CREATED, room=room)
    if bots:
        bots_fill(room=room, count=bots)
    return room


@transaction.atomic
def bots_fill(*, room: Room, count: int) -> list[User]:
    """Seat ``count`` bots in the room's free seats (and at its table), funding each from the
    house up to the entry minimum (`games.live.bots.bot_fund`; BotsUnavailable when its
    bankroll for bots is used up today); returns them. Only where a person sits (else nothing
    happens). The caller has checked ``count``; joining refuses (LobbyError) a full or closed
    room, and nothing is written then."""
    if count <= 0:
        return []
    # The room first: the lock order of every lobby and table service.
    Room.objects.select_for_update().filter(pk=room.pk).values_list("pk", flat=True).get()
    if not Seat.objects.filter(room=room, user__is_bot=False).exists():
        return []  # bots never sit without a person (they would leave at once)
    return bots_seat(room=room, count=count)


def bots_seat(*, room: Room, count: int) -> list[User]:
    """Seat ``count`` bots in the room's free seats, funded up to the entry minimum, each
    through `room_join` (which locks the room); the caller has decided that bots sit there
    (`bots_fill`, or a duplicate match's tables)."""
    bots = games_bots.bots_idle(count)
    while len(bots) < count:
        bots.append(games_bots.bot_create())
    games_bots.bots_name(bots=bots, room=room)  # no two alike at the table
    for bot in bots:
        games_bots.bot_fund(bot=bot, room=room)
        room_join(user=bot, room_id=room.pk, code=room.code or "")
    return bots


@transaction.atomic
def room_join(*, user: User, room_id: int, code: str = "", invited: bool = False) -> Seat:
    """Seat the player at the lowest free position of an open room.

    A private room needs its code (a wrong one counts against the player's code budget; over
    it, `rate_limited`). Refused when the player's transfers are frozen (`transfers_frozen`),
    when the room is unknown, closed or full, when the player is seated somewhere already, or
    holds less than the room's entry minimum. A guest joins no room but the one its invite
    link opens (``invited``: `lobby.invites.invite_accept` only), and no person joins a public
    room where a guest sits (`guest_not_allowed`, `guest_table`): only bots fill a guest's.
    """
    check_not_frozen(user=user)
    if not user.is_bot and not invited:
        check_not_guest(user=user)
    room = Room.objects.select_for_update().filter(pk=room_id).first()
    if room is None:
        raise RoomNotFound()
    check_no_guest_seated(room=room, user=user)
    if room.status != RoomStatus.OPEN:
        raise RoomClosed()
    if room.is_private:
        check_code_budget(user=user)
        if not hmac.compare_digest(normalized_code(code).encode(), (room.code or "").encode()):
            code_failed(user=user)
            raise WrongRoomCode()
    check_not_seated(user=user)
    position = room_free_position(room=room)
    if position is None:
        raise RoomFull()
    check_can_afford(user=user, needed=room.entry_minimum)

    seat = seat_take(room=room, user=user, position=position)
    room_touch(room=room)

    room_notify(event=ROOM_UPDATED, room=room)
    return seat


def room_join_by_code(*, user: User, code: str) -> Seat:
    """Join the open private room that has this code; a code no open room has counts against
    the player's code budget (over it, every code is refused with `rate_limited`). A guest
    joins no private room (`guest_not_allowed`, before any code is tried)."""
    check_not_guest(user=user)
    check_code_budget(user=user)
    wanted = normalized_code(code)
    room_id = (
        Room.objects.filter(status=RoomStatus.OPEN, is_private=True, code=wanted)
        .values_list("pk", flat=True)
        .first()
        if wanted
        else None
    )
    if room_id is None:
        code_failed(user=user)
        raise RoomNotFound()
    return room_join(user=user, room_id=room_id, code=wanted)


@transaction.atomic
def room_leave(*, user: User) -> Room:
    """Stand up from the player's table and return the room left.

    Between rounds the seat is freed at once (by `seat_release`, called by the table). During
    a round the player escapes (RULES.md §7.5, §9): the seat stays taken until the round
    settles, when the table lets the player go; leaving again meanwhile changes nothing.
    """
    seat = seat_for_user(user=user)
    if seat is None:
        raise NotSeated()
    room = Room.objects.select_for_update().get(pk=seat.room_id)
    # Re-read under the room's lock: a concurrent leave may have removed the seat already.
    if not Seat.objects.filter(room=room, user=user).exists():
        raise NotSeated()
    try:
        table_services.table_leave(user=user, room=room)
    except TableError as error:
        if error.code == "already_left":  # escaped already: the seat goes at settlement
            return room
        if error.code != "not_at_table":
            raise
        seat_release(room=room, user_id=user.pk)  # a seat the table never had
    room.refresh_from_db()
    return room


def guest_seat_leave(user: User) -> None:
    """Stand an idle guest up from its table before it is removed (registered with
    `accounts.services.guest_departure_register`); a guest seated nowhere is left as it is."""
    if seat_for_user(user=user) is not None:
        room_leave(user=user)


@transaction.atomic
def seat_release(*, room: Room, user_id: int) -> None:
    """Free the player's seat in the room (the table has let the player go), pass ownership
    on if needed and tell the lobby on commit. Nothing happens when the seat is gone already.

    If the player owned the room, ownership passes to the person seated longest (earliest
    `joined_at`, then the lowest seat id; never to a bot). A room nobody sits in any more
    keeps its owner, who may close it; `room_close_idle` closes it after
    LOBBY_IDLE_ROOM_SECONDS unless someone sits down.
    """
    locked = _lock_row_ready(room_id=room.pk)
    released = _release_locked(room=locked, user_ids=[user_id])
    if released:
        room_notify(event=ROOM_UPDATED, room=locked, seats=released.staying)


@transaction.atomic(savepoint=False)  # inside the table's command: no savepoint round trips
def seats_release(*, room_id: int, user_ids: list[int]) -> Room | None:
    """Free the seats of players the table has let go (called by `lobby.signals` inside the
    table's transaction, in the order the table let them go), each as `seat_release`, and tell
    the lobby once.

    When that leaves the room empty and bots were among them, the room is closed at once and
    returned (else None): the table's bots leave only with the last person
    (`games.table.flow.house_leaves_alone`), so such a room has nobody to play with and would
    only clutter the lobby. Safe for coins: nobody sits in it, so no round can be in play (a
    round's players keep their seats until it settles); and re-checked under the room's lock,
    which every join takes first, so nobody sits down in it meanwhile.

    One lock of the room (read with all its lobby row needs), one read of its seats with their
    players, one DELETE and one UPDATE whatever the number of players; the lobby's row is made
    of those (a table's leave is on the table's hot path, tests/games/live/test_query_budget.py).
    """
    room = _lock_row_ready(room_id=room_id)
    released = _release_locked(room=room, user_ids=user_ids)
    if room.status == RoomStatus.OPEN and not released.staying:
        bots = released.bots
        if bots is None:  # none of them was seated: ask who they were
            bots = User.objects.filter(pk__in=user_ids, is_bot=True).exists()
        if bots:
            _close_locked(room=room)
            return room
    if released:
        room_notify(event=ROOM_UPDATED, room=room, seats=released.staying)
    return None


def _lock_row_ready(*, room_id: int) -> Room:
    """Lock the room's row, read with all its lobby row needs but its seats (`room_notify` with
    the seats the caller reads under this lock): one query where a lock and the row's own
    read took three."""
    return rooms_for_rows().select_for_update(of=("self",)).get(pk=room_id)


@dataclass(frozen=True)
class _Released:
    """What `_release_locked` did: the seats freed, whether a bot was among them (None when
    none was freed), and the seats still taken (with their users)."""

    count: int
    bots: bool | None
    staying: list[Seat]

    def __bool__(self) -> bool:
        return self.count > 0


def _release_locked(*, room: Room, user_ids: list[int]) -> _Released:
    """Free the seats of ``user_ids`` in the room the caller has locked, in that order: the
    room's row is saved (its version moved) when any was seated; the caller tells the lobby.

    Every join takes the room's lock first, so the seats read here stay as they are; ownership
    passes as it would one player at a time (to the person seated longest of those still
    there, each time the owner goes)."""
    seats = list(Seat.objects.filter(room=room).select_related("user").order_by("joined_at", "id"))
    seated = {seat.user_id: seat.user.is_bot for seat in seats}
    going = [user_id for user_id in dict.fromkeys(user_ids) if user_id in seated]
    if not going:
        return _Released(count=0, bots=None, staying=seats)
    Seat.objects.filter(room=room, user_id__in=going).delete()
    staying = list(seats)
    for user_id in going:
        staying = [seat for seat in staying if seat.user_id != user_id]
        if room.owner_id == user_id:
            heir = next((seat.user for seat in staying if not seat.user.is_bot), None)
            if heir is not None:
                room.owner = heir
    if not staying:
        room.empty_since = timezone.now()  # closed after LOBBY_IDLE_ROOM_SECONDS unless joined
    room_touch(room=room)
    return _Released(count=len(going), bots=any(seated[u] for u in going), staying=staying)


def _close_locked(*, room: Room) -> None:
    """Close an open room the caller has locked and found empty; the lobby hears
    `room.closed` on commit."""
    room.status = RoomStatus.CLOSED
    room.closed_at = timezone.now()
    room_touch(room=room)
    room_notify(event=ROOM_CLOSED, room=room)


@transaction.atomic
def room_close(*, user: User, room_id: int) -> Room:
    """Close an open room nobody sits in; only its owner may."""
    room = Room.objects.select_for_update().filter(pk=room_id).first()
    if room is None:
        raise RoomNotFound()
    if room.owner_id != user.pk:
        raise NotRoomOwner()
    if room.status != RoomStatus.OPEN:
        raise RoomClosed()
    if Seat.objects.filter(room=room).exists():
        raise RoomNotEmpty()
    _close_locked(room=room)
    return room


@transaction.atomic
def room_close_idle(*, room_id: int, idle_seconds: int) -> Room | None:
    """Close an open room nobody has sat in for `idle_seconds`, and return it; otherwise (a
    player sat down meanwhile, it is closed already, or not idle long enough) change nothing
    and return None. Re-checked under the room's lock, so a sweep that runs late or twice
    does nothing wrong. The lobby hears `room.closed` on commit, as after `room_close`.
    Called by the beat task `lobby.tasks.close_idle_rooms` with LOBBY_IDLE_ROOM_SECONDS."""
    room = Room.objects.select_for_update().filter(pk=room_id).first()
    if room is None or room.status != RoomStatus.OPEN:
        return None
    if Seat.objects.filter(room=room).exists():
        return None
    idle_since = room.empty_since or room.created_at
    if idle_since > timezone.now() - timedelta(seconds=idle_seconds):
        return None
    _close_locked(room=room)
    return room


@transaction.atomic
def room_rules_move(*, room_id: int, rules: RuleConfiguration) -> Room:
    """Give an open room another rule configuration (a rules administrator's action).

    Refused while a round is in play at its table (`round_in_play`), for a closed room
    (`room_closed`) and when the new rules' deck does not seat the room (`too_many_seats`).
    A table already made keeps the rules it was created with until the room closes (its
    state holds them), and the room keeps the entry minimum of those rules; a room without a
    table yet takes the new rules' entry minimum at its base score. Either way the
    configuration no longer counts the room as its own (a deck change no longer waits for it).
    """
    room = Room.objects.select_for_update().get(pk=room_id)
    if room.status != RoomStatus.OPEN:
        raise RoomClosed()
    config = engine_config(rules)
    check_seats_fit(rules=rules, config=config, seats=room.seats)
    table = Table.objects.filter(room_id=room.pk).first()
    in_play = table is not None and (
        table.phase in {phase.value for phase in ROUND_PHASES}
        or Round.objects.filter(table=table, settled_at__isnull=True).exists()
    )
    if in_play:
        raise RoundInPlay(room=room.name)
    room.rules = rules
    fields = ["rules"]
    if table is None:
        room.entry_minimum = config_entry_minimum(config, base_score=room.base_score)
        fields.append("entry_minimum")
    room.save(update_fields=fields)
    room_touch(room=room)
    room_notify(event=ROOM_UPDATED, room=room)
    return room

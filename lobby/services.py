"""Services of the lobby: creating, joining, quick-joining, playing now, leaving and closing rooms.

Each runs in one database transaction, check -> lock -> write -> notify:
1. validate the input in Python and refuse with a `lobby.errors.LobbyError` (nothing written);
2. lock the room row(s) with SELECT ... FOR UPDATE, in ascending id order when there are
   several, and re-check what the lock protects (open, free seat, owner, empty);
3. write the seat / room; the database's unique constraints back the checks up (one seat per
   player, one player per seat position, private codes unique among open rooms);
4. once the transaction commits, send the room's public row to the "lobby" group.

Rules that the text of the issue left open, decided here:
- a room's entry minimum is fixed when it is created (from its rule configuration, at its base
  score); a later edit of the configuration applies to new rooms;
- when the owner leaves, ownership passes to the person seated longest (earliest `joined_at`,
  then the lowest seat id; never to a bot); a room nobody sits in keeps its owner, who may
  close it;
- a room has at most the seats its rules' deck deals hands for (`RuleConfig.max_seats`, RULES.md
  §12.5: 4 with the classic deck, 5 with one extra suit, 6 with two, 4 with spare cards), on
  every way a room is opened (`too_many_seats`);
- quick-join takes the oldest public open room using the default rules at that base score and
  seat count that has a free seat the player can afford, and otherwise creates one; quick-joins
  for the same table kind are serialized (on PostgreSQL) so that two players arriving together
  sit at the same new table instead of opening one each. Given a variant (a games.variants
  slug), any rules of that variant instead of the default rules, and a room it opens has
  `variant_rules` (the default configuration if it is of that variant, else the first by name);
- "Play now" (`room_quick_play`) seats the player at a table with bots in one click, at the
  highest of QUICK_PLAY_BASE_SCORES the player can afford: the oldest public bot room of the
  default rules at that base score with a person in it and a free seat, else a new room of
  QUICK_PLAY_SEATS seats with QUICK_PLAY_BOTS bots, one seat left for the next player who
  presses Play now (fewer when the deck seats fewer). With a variant, as quick-join: rooms of
  any rules of that variant, a new one with `variant_rules`. A player seated already is not
  seated again: the seat they hold is returned, so the page sends them back to their table;
- a room the table's bots have just left empty (the last person went, so the bots did,
  `games.table.flow.house_leaves_alone`) is closed at once, in the same transaction
  (`seats_release`): dead bot rooms never pile up in the lobby. An empty room where only
  people sat stays open for its owner (closed after LOBBY_IDLE_ROOM_SECONDS, below);
- a room created without a name gets `default_room_name`.

The room and its table move together: every seat taken here also sits at the room's table
(`games.live.services.table_sit`, same transaction), and leaving goes through the table first.
Between rounds the player leaves both at once; during a round the table marks the player
escaped and the room seat stays taken until the round settles (nobody can take it mid-round).
Whenever the table lets a player go (its `left` events: after leaving, at settlement after an
escape, on a Ready timeout) it calls `seat_release` in the same transaction. Locks are taken
room first, then its table.

Limits against abuse (their rates: settings.RATE_LIMITS, shisanshui.ratelimit):
- wrong private-room codes are counted per player ("lobby.join_code_failure"), whichever way
  they arrive (socket, form, API; by code alone or with a room id); over the budget every code
  is refused with `rate_limited`, the right one too, until the window frees up. (Counted after
  the attempt: parallel attempts may pass a few more, a handful at most against 31**6 codes.)
- a player owns at most LOBBY_MAX_OPEN_ROOMS open rooms (`too_many_rooms`) and opens rooms at
  most at the rate "lobby.room_create"; quick-join's and Play now's rooms count too (quick-join
  with bots, then leave, is otherwise the cheapest way to fill the lobby);
- Play now seats a player at most at the rate "lobby.quick_play" (a player already seated is
  sent back to their table without spending it);
- a room nobody has sat in for LOBBY_IDLE_ROOM_SECONDS is closed (`room_close_idle`, from the
  beat task lobby.tasks.close_idle_rooms).
"""

import hmac
import logging
import math
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from accounts.models import User
from accounts.selectors import wallet_balance
from games.live import bots as games_bots
from games.live import services as table_services
from games.live import store as table_store
from games.models import (
    MATCH_MAX_DEALS,
    MATCH_TABLES,
    DuplicateMatch,
    MatchStatus,
    RuleConfiguration,
)
from games.rules.config import RuleConfig
from games.rules.errors import ConfigError
from games.table.deck import seed_commitment
from games.table.errors import TableError
from lobby.errors import (
    AlreadySeated,
    InsufficientCoins,
    InvalidBaseScore,
    InvalidBotCount,
    InvalidBotLevel,
    InvalidChatSetting,
    InvalidMatchDeals,
    InvalidMatchTables,
    InvalidRoomName,
    InvalidRules,
    InvalidSeatCount,
    InvalidSeries,
    NoDefaultRules,
    NotRoomOwner,
    NotSeated,
    NoVariantRules,
    RateLimitedError,
    RoomClosed,
    RoomFull,
    RoomNotEmpty,
    RoomNotFound,
    TooManyMatches,
    TooManyRooms,
    TooManySeats,
    WrongRoomCode,
    coins,
)
from lobby.models import (
    CODE_ALPHABET,
    CODE_LENGTH,
    MAX_BASE_SCORE,
    NAME_MAX_LENGTH,
    SEAT_COUNTS,
    BotLevel,
    Room,
    RoomStatus,
    Seat,
)
from lobby.selectors import (
    bot_rooms_joinable,
    checked_variant,
    room_get,
    room_list,
    room_row,
    rooms_for_rows,
    seat_for_user,
    variant_rules,
)
from shisanshui.publish import publish
from shisanshui.ratelimit import rate_limit_check, rate_limit_hit

logger = logging.getLogger(__name__)

LOBBY_GROUP = "lobby"
# What the lobby's events are called; a client removes a room on ROOM_CLOSED, upserts otherwise.
ROOM_CREATED = "room.created"
ROOM_UPDATED = "room.updated"
ROOM_CLOSED = "room.closed"

QUICK_JOIN_ROOM_NAME = "快速 Quick"
# Play now: the base scores tried, highest first (the first the player can afford); the seats
# and bots of a room it opens (one seat left free for the next player who presses Play now).
QUICK_PLAY_BASE_SCORES = (100, 10, 1)
QUICK_PLAY_SEATS = 4
QUICK_PLAY_BOTS = 2
# A series (房卡) has at most this many rounds.
SERIES_MAX_ROUNDS = 32
QUICK_PLAY_ROOM_NAME = "快速 Quick · 机器人 Bots"
# A room opened without a name: "<owner> 的桌 Table", the owner's name cut to fit.
DEFAULT_ROOM_NAME = "{owner} 的桌 Table"
# How many candidate rooms quick-join looks at before it opens a new one.
QUICK_JOIN_CANDIDATES = 20
_CODE_ATTEMPTS = 10
# Namespaces of the PostgreSQL advisory locks that serialize quick-joins, Play nows of a base
# score, and one player's Play nows (any fixed int4s; taken in the order player, then kind).
_QUICK_JOIN_LOCK_SPACE = 0x5353
_QUICK_PLAY_LOCK_SPACE = 0x5354
_QUICK_PLAY_USER_LOCK_SPACE = 0x5355
# The rate limits of the lobby's services (settings.RATE_LIMITS).
JOIN_CODE_FAILURES = "lobby.join_code_failure"
ROOM_CREATIONS = "lobby.room_create"
QUICK_PLAYS = "lobby.quick_play"


# Validation: plain Python, before any query.


def _checked_name(name: object) -> str:
    text = name.strip() if isinstance(name, str) else ""
    if not text or len(text) > NAME_MAX_LENGTH or not text.isprintable():
        raise InvalidRoomName(max=NAME_MAX_LENGTH)
    return text


def default_room_name(*, owner: User) -> str:
    """The name of a room opened without one: "alice 的桌 Table" (within NAME_MAX_LENGTH)."""
    room_word = DEFAULT_ROOM_NAME.format(owner="")
    username = owner.get_username()[: NAME_MAX_LENGTH - len(room_word)]
    return DEFAULT_ROOM_NAME.format(owner=username)


def _checked_seats(seats: object) -> int:
    if isinstance(seats, bool) or not isinstance(seats, int) or seats not in SEAT_COUNTS:
        raise InvalidSeatCount(seats=seats)
    return seats


def _checked_base_score(base_score: object) -> int:
    if (
        isinstance(base_score, bool)
        or not isinstance(base_score, int)
        or not 1 <= base_score <= MAX_BASE_SCORE
    ):
        raise InvalidBaseScore(base_score=base_score, max=coins(MAX_BASE_SCORE))
    return base_score


def _checked_bot_level(level: object) -> str:
    if not isinstance(level, str) or level not in BotLevel.values:
        raise InvalidBotLevel(level=str(level)[:20], levels=", ".join(BotLevel.values))
    return level


def _checked_bots(bots: object, *, seats: int) -> int:
    """Bots to seat beside the player: 0 to seats - 1 (one seat is the player's)."""
    if isinstance(bots, bool) or not isinstance(bots, int) or not 0 <= bots < seats:
        raise InvalidBotCount(bots=bots, seats=seats, max=seats - 1)
    return bots


def _checked_variant(variant: object) -> str | None:
    """An optional variant: None (or "", as an empty form field sends it) for none."""
    return None if variant is None or variant == "" else checked_variant(variant)


def normalized_code(code: object) -> str:
    """A code as typed by a person: surrounding spaces dropped, case ignored."""
    return code.strip().upper() if isinstance(code, str) else ""


def _engine_config(rules: RuleConfiguration) -> RuleConfig:
    try:
        return rules.engine_config()
    except ConfigError:
        logger.exception("Rule configuration %s is invalid", rules.pk)
        raise InvalidRules() from None


def entry_minimum(*, rules: RuleConfiguration, base_score: int) -> int:
    """Coins needed to sit at a table with these rules at this base score (RULES.md §7.4)."""
    return _entry_minimum(_engine_config(rules), base_score=base_score)


def _entry_minimum(config: RuleConfig, *, base_score: int) -> int:
    try:
        return RuleConfig.from_dict({"base_score": base_score}, base=config).entry_minimum
    except ConfigError:
        logger.exception("Rules at base score %s are invalid", base_score)
        raise InvalidRules() from None


def _check_seats_fit(*, rules: RuleConfiguration, config: RuleConfig, seats: int) -> None:
    """A room has at most the seats its rules' deck deals hands for (RULES.md §12.5)."""
    if seats > config.max_seats:
        raise TooManySeats(rules=rules.name, max=config.max_seats, seats=seats)


def _default_rules() -> RuleConfiguration:
    rules = RuleConfiguration.objects.filter(is_default=True).first()
    if rules is None:
        raise NoDefaultRules()
    return rules


def _rules_of(variant: str | None) -> RuleConfiguration:
    """The rules of a room opened for this variant (`variant_rules`), the default rules for
    none."""
    if variant is None:
        return _default_rules()
    rules = variant_rules(variant=variant)
    if rules is None:
        raise NoVariantRules(variant=variant)
    return rules


# Checks that read the player's state.


def _checked_table_terms(
    *, owner: User, rules: RuleConfiguration, base_score: int, seats: int
) -> int:
    """A table the owner may open and sit at with these rules: its rules are valid and seat
    that many, the owner is seated nowhere and holds the entry minimum (returned)."""
    config = _engine_config(rules)
    _check_seats_fit(rules=rules, config=config, seats=seats)
    needed = _entry_minimum(config, base_score=base_score)
    _check_not_seated(user=owner)
    _check_can_afford(user=owner, needed=needed)
    return needed


def _check_not_seated(*, user: User) -> None:
    seat = seat_for_user(user=user)
    if seat is not None:
        raise AlreadySeated(room=seat.room.name)


def _check_can_afford(*, user: User, needed: int) -> None:
    balance = wallet_balance(user=user)
    if balance < needed:
        raise InsufficientCoins(needed=coins(needed), balance=coins(balance))


def _check_can_open(*, owner: User) -> None:
    """The player may open one more room: fewer open rooms of theirs than LOBBY_MAX_OPEN_ROOMS,
    and within the rate of room creations (spent here, so call it last before inserting).

    No race: only a player seated nowhere opens a room, and opening one seats them (one seat
    per player, a unique constraint), so one player's openings never run side by side."""
    most = settings.LOBBY_MAX_OPEN_ROOMS
    opened = Room.objects.filter(owner=owner, status=RoomStatus.OPEN, match__isnull=True)
    if opened.count() >= most:
        raise TooManyRooms(max=most, minutes=math.ceil(settings.LOBBY_IDLE_ROOM_SECONDS / 60))
    limited = rate_limit_hit(ROOM_CREATIONS, owner.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)


def _check_code_budget(*, user: User) -> None:
    """Refuse any code, the right one too, while the player's wrong codes are over budget."""
    limited = rate_limit_check(JOIN_CODE_FAILURES, user.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)


def _code_failed(*, user: User) -> None:
    rate_limit_hit(JOIN_CODE_FAILURES, user.pk)


# Writes.


def _free_position(*, room: Room) -> int | None:
    """The lowest free seat position of a room the caller has locked; None when it is full."""
    taken = set(Seat.objects.filter(room=room).values_list("position", flat=True))
    free = [position for position in range(room.seats) if position not in taken]
    return free[0] if free else None


def _sit(*, room: Room, user: User, position: int) -> Seat:
    """Seat the player in the room and at its table; the unique constraints turn a lost race
    into a clear refusal."""
    room.empty_since = None  # saved with the room's next change (_touch), if it was set
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


def _insert_room(
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
    """A new open room (`minimum`: its entry minimum); a private one gets a fresh code
    (retrying the rare collision)."""
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
    for _attempt in range(_CODE_ATTEMPTS):
        code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
        try:
            with transaction.atomic():
                return Room.objects.create(**fields, code=code)
        except IntegrityError as error:
            if "lobby_room_code_unique_among_open" not in str(error):
                raise
    raise RuntimeError("Could not find a free room code.")  # 31**6 codes: never in practice


def _touch(*, room: Room) -> None:
    """Record that the room's public row changed."""
    room.version += 1
    room.save(update_fields=["version", "owner", "status", "closed_at", "empty_since"])


# Notification: after commit only.


def _notify(*, event: str, room: Room, seats: list[Seat] | None = None) -> None:
    """Send the room's row, as it is now inside this transaction, once the transaction commits.
    With ``seats`` (its taken seats with their users, read under the room's lock), the row is
    made from them and the locked ``room`` (from `_lock_row_ready`) without reading it again.

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


# The services.


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

    The room has at most the seats its rules' deck deals hands for (`too_many_seats`). The
    creator must not be seated elsewhere, must have the room's entry minimum, fewer than
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
    series_rounds = _checked_series(series_rounds, private=private)
    name = _checked_name(default_room_name(owner=owner) if name is None else name)
    bot_level = _checked_bot_level(bot_level)
    base_score = _checked_base_score(base_score)
    seats = _checked_seats(seats)
    bots = _checked_bots(bots, seats=seats)
    rules = rules if rules is not None else _default_rules()
    needed = _checked_table_terms(owner=owner, rules=rules, base_score=base_score, seats=seats)
    _check_can_open(owner=owner)

    room = _insert_room(
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
    _sit(room=room, user=owner, position=0)
    _notify(event=ROOM_CREATED, room=room)
    if bots:
        bots_fill(room=room, count=bots)
    return room


@transaction.atomic
def bots_fill(*, room: Room, count: int) -> list[User]:
    """Seat ``count`` bots in the room's free seats (and at its table), funding each from the
    mint up to the entry minimum; returns them. Only where a person sits (else nothing
    happens). The caller has checked ``count``; joining refuses (LobbyError) a full or closed
    room, and nothing is written then."""
    if count <= 0:
        return []
    # The room first: the lock order of every lobby and table service.
    Room.objects.select_for_update().filter(pk=room.pk).values_list("pk", flat=True).get()
    if not Seat.objects.filter(room=room, user__is_bot=False).exists():
        return []  # bots never sit without a person (they would leave at once)
    return _seat_bots(room=room, count=count)


def _checked_series(rounds: object, *, private: bool) -> int | None:
    """None (no series), or 2 to SERIES_MAX_ROUNDS rounds of a private room."""
    if rounds is None:
        return None
    if (
        isinstance(rounds, bool)
        or not isinstance(rounds, int)
        or not 2 <= rounds <= SERIES_MAX_ROUNDS
        or not private
    ):
        raise InvalidSeries(rounds=str(rounds)[:20], max=SERIES_MAX_ROUNDS)
    return rounds


def _checked_match_tables(tables: object) -> int:
    if isinstance(tables, bool) or not isinstance(tables, int) or tables not in MATCH_TABLES:
        raise InvalidMatchTables(tables=str(tables)[:20])
    return tables


def _checked_match_deals(deals: object) -> int:
    if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MATCH_MAX_DEALS:
        raise InvalidMatchDeals(deals=str(deals)[:20], max=MATCH_MAX_DEALS)
    return deals


@transaction.atomic
def match_create(
    *,
    owner: User,
    base_score: int,
    seats: int,
    tables: int,
    deals: int,
    name: str | None = None,
    rules: RuleConfiguration | None = None,
    bots: bool = False,
    bot_level: str = BotLevel.STRONG,
) -> DuplicateMatch:
    """Open a duplicate match (games.live.duplicate): ``tables`` public rooms "<name> · 1", "· 2", …
    with the same rules, base score and seats, whose tables play the same ``deals`` deals in
    lockstep; the creator sits at table 1, position 0. With ``bots``, every other seat of every
    table takes a bot at ``bot_level`` (a table of bots is "the field" a person's play is
    compared with).

    Checked as a room is (name, seats, base score, rules, entry minimum, not seated elsewhere),
    and: 2 to 4 tables (``invalid_match_tables``), 1 to MATCH_MAX_DEALS deals
    (``invalid_match_deals``), one playing match per owner (``too_many_matches``); opening one
    spends one room creation of the rate "lobby.room_create". Its rooms do not count against
    LOBBY_MAX_OPEN_ROOMS. The seed is drawn here (``secrets``), its commitment stored beside it.
    """
    tables = _checked_match_tables(tables)
    deals = _checked_match_deals(deals)
    name = _checked_name(default_room_name(owner=owner) if name is None else name)
    suffix = f" · {tables}"
    name = name[: NAME_MAX_LENGTH - len(suffix)].rstrip()
    bot_level = _checked_bot_level(bot_level)
    base_score = _checked_base_score(base_score)
    seats = _checked_seats(seats)
    if not isinstance(bots, bool):
        raise InvalidBotCount(bots=str(bots)[:20], seats=seats, max=seats - 1)
    rules = rules if rules is not None else _default_rules()
    needed = _checked_table_terms(owner=owner, rules=rules, base_score=base_score, seats=seats)
    if DuplicateMatch.objects.filter(owner=owner, status=MatchStatus.PLAYING).exists():
        raise TooManyMatches()
    limited = rate_limit_hit(ROOM_CREATIONS, owner.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)

    seed = secrets.token_hex(32)
    match = DuplicateMatch.objects.create(
        name=name,
        owner=owner,
        rules=rules,
        base_score=base_score,
        seats=seats,
        tables=tables,
        deals=deals,
        seed=seed,
        seed_commitment=seed_commitment(seed),
    )
    rooms = []
    for number in range(1, tables + 1):
        room = _insert_room(
            owner=owner,
            name=f"{name} · {number}",
            rules=rules,
            base_score=base_score,
            seats=seats,
            private=False,
            minimum=needed,
            bot_level=bot_level,
            match=match,
            match_table=number,
        )
        table_store.table_for_room(room=room)
        rooms.append(room)
    _sit(room=rooms[0], user=owner, position=0)
    for room in rooms:
        _notify(event=ROOM_CREATED, room=room)
    if bots:
        for room in rooms:
            _seat_bots(room=room, count=seats - (1 if room is rooms[0] else 0))
    return match


def _seat_bots(*, room: Room, count: int) -> list[User]:
    """Seat ``count`` bots in the room's free seats, funded up to the entry minimum."""
    bots = games_bots.bots_idle(count)
    while len(bots) < count:
        bots.append(games_bots.bot_create())
    games_bots.bots_name(bots=bots, room=room)  # no two alike at the table
    for bot in bots:
        games_bots.bot_fund(bot=bot, room=room)
        room_join(user=bot, room_id=room.pk, code=room.code or "")
    return bots


@transaction.atomic
def room_join(*, user: User, room_id: int, code: str = "") -> Seat:
    """Seat the player at the lowest free position of an open room.

    A private room needs its code (a wrong one counts against the player's code budget; over
    it, `rate_limited`). Refused when the room is unknown, closed or full, when the player is
    seated somewhere already, or holds less than the room's entry minimum.
    """
    room = Room.objects.select_for_update().filter(pk=room_id).first()
    if room is None:
        raise RoomNotFound()
    if room.status != RoomStatus.OPEN:
        raise RoomClosed()
    if room.is_private:
        _check_code_budget(user=user)
        if not hmac.compare_digest(normalized_code(code).encode(), (room.code or "").encode()):
            _code_failed(user=user)
            raise WrongRoomCode()
    _check_not_seated(user=user)
    position = _free_position(room=room)
    if position is None:
        raise RoomFull()
    _check_can_afford(user=user, needed=room.entry_minimum)

    seat = _sit(room=room, user=user, position=position)
    _touch(room=room)

    _notify(event=ROOM_UPDATED, room=room)
    return seat


def room_join_by_code(*, user: User, code: str) -> Seat:
    """Join the open private room that has this code; a code no open room has counts against
    the player's code budget (over it, every code is refused with `rate_limited`)."""
    _check_code_budget(user=user)
    wanted = normalized_code(code)
    room_id = (
        Room.objects.filter(status=RoomStatus.OPEN, is_private=True, code=wanted)
        .values_list("pk", flat=True)
        .first()
        if wanted
        else None
    )
    if room_id is None:
        _code_failed(user=user)
        raise RoomNotFound()
    return room_join(user=user, room_id=room_id, code=wanted)


@transaction.atomic
def room_quick_join(
    *,
    user: User,
    base_score: int,
    seats: int,
    with_bots: bool = False,
    variant: str | None = None,
    bot_level: str = BotLevel.STRONG,
) -> Seat:
    """Sit at the first public open room with the default rules, this base score and seat count
    that has a free seat; open one (owned by the player) when there is none.

    `variant` (a games.variants slug; None or "" for none): a room of any rules of that variant
    instead, and a room opened has `variant_rules` (`no_variant_rules` when no configuration
    offers it). `seats` must fit the rules of a room it would open (`too_many_seats`).

    `with_bots`: play now, against bots (at `bot_level`). The player always opens a new quick
    room and bots take its other seats; bots are never added to a table where other people sit,
    who did not ask for them.

    A room opened here counts like any other: refused past LOBBY_MAX_OPEN_ROOMS open rooms of
    the player's or the rate of room creations.
    """
    base_score = _checked_base_score(base_score)
    seats = _checked_seats(seats)
    if not isinstance(with_bots, bool):
        raise InvalidBotCount(bots=with_bots, seats=seats, max=seats - 1)
    bot_level = _checked_bot_level(bot_level)
    variant = _checked_variant(variant)
    rules = _rules_of(variant)
    config = _engine_config(rules)
    _check_seats_fit(rules=rules, config=config, seats=seats)
    needed = _entry_minimum(config, base_score=base_score)
    _check_not_seated(user=user)
    balance = wallet_balance(user=user)
    if with_bots:
        if balance < needed:
            raise InsufficientCoins(needed=coins(needed), balance=coins(balance))
        room = room_create(
            owner=user,
            name=QUICK_JOIN_ROOM_NAME,
            base_score=base_score,
            seats=seats,
            rules=rules,
            bots=seats - 1,
            bot_level=bot_level,
        )
        return Seat.objects.get(room=room, user=user)

    _advisory_lock(_QUICK_JOIN_LOCK_SPACE, base_score * 8 + seats)
    rooms = room_list(base_score=base_score, seats=seats, has_free_seat=True, variant=variant)
    if variant is None:
        rooms = rooms.filter(rules=rules)
    candidates = list(
        rooms.filter(is_private=False, entry_minimum__lte=balance).values_list("pk", flat=True)[
            :QUICK_JOIN_CANDIDATES
        ]
    )
    seat = _sit_in_first(user=user, room_ids=candidates)
    if seat is not None:
        return seat

    if balance < needed:
        raise InsufficientCoins(needed=coins(needed), balance=coins(balance))
    _check_can_open(owner=user)
    room = _insert_room(
        owner=user,
        name=QUICK_JOIN_ROOM_NAME,
        rules=rules,
        base_score=base_score,
        seats=seats,
        private=False,
        minimum=needed,
    )
    seat = _sit(room=room, user=user, position=0)
    _notify(event=ROOM_CREATED, room=room)
    return seat


def _advisory_lock(space: int, key: int) -> None:
    """Wait for the transaction-level advisory lock (space, key) on PostgreSQL (elsewhere
    writers are serialized anyway); held until the transaction ends."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [space, key])


def _sit_in_first(*, user: User, room_ids: list[int]) -> Seat | None:
    """Seat the player in the first of these rooms that is still open with a free seat, each
    re-checked under its lock; None when none is. The ids must be ascending: the lock order
    every service uses when it locks several rooms."""
    for room_id in room_ids:
        room = Room.objects.select_for_update().get(pk=room_id)
        position = _free_position(room=room)
        if room.status != RoomStatus.OPEN or position is None:
            continue
        seat = _sit(room=room, user=user, position=position)
        _touch(room=room)
        _notify(event=ROOM_UPDATED, room=room)
        return seat
    return None


@dataclass(frozen=True)
class QuickPlay:
    """What Play now did: the player's seat, and whether the player sat down just now (False:
    seated already, sent back to that table), in a new room or an existing one."""

    seat: Seat
    seated_now: bool
    opened: bool


def quick_play_base_score(*, rules: RuleConfiguration, balance: int) -> int | None:
    """The highest of QUICK_PLAY_BASE_SCORES whose entry minimum the balance covers, or None."""
    for base_score in QUICK_PLAY_BASE_SCORES:
        if entry_minimum(rules=rules, base_score=base_score) <= balance:
            return base_score
    return None


@transaction.atomic
def room_quick_play(*, user: User, variant: str | None = None) -> QuickPlay:
    """Play now: seat the player at a table with bots, with the default rules, or with a
    `variant` (a games.variants slug; None or "" for none): in a room of any rules of that
    variant, or a new one with `variant_rules` (`no_variant_rules` when no configuration
    offers it).

    A player seated already keeps that seat (returned, `seated_now` False; nothing is spent).
    Otherwise, at the highest of QUICK_PLAY_BASE_SCORES the player can afford: the oldest
    public open room with bots, a person and a free seat, else a new room of QUICK_PLAY_SEATS
    seats (fewer if its deck seats fewer) with QUICK_PLAY_BOTS bots (one seat left free). One
    player's Play nows are serialized (on PostgreSQL), and everyone's at one base score, so
    that repeated clicks or two tabs never seat a player twice nor open two rooms, and players
    arriving together fill one room. Refused past the rate "lobby.quick_play"
    (`rate_limited`), and, when a room must be opened, like `room_create` (`too_many_rooms`,
    "lobby.room_create"); without the smallest entry minimum, `insufficient_coins`.
    """
    variant = _checked_variant(variant)
    _advisory_lock(_QUICK_PLAY_USER_LOCK_SPACE, user.pk)  # this player's Play nows, one by one
    seated = seat_for_user(user=user)
    if seated is not None:
        return QuickPlay(seat=seated, seated_now=False, opened=False)
    rules = _rules_of(variant)  # before the rate is spent: a refusal spends nothing
    limited = rate_limit_hit(QUICK_PLAYS, user.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)
    balance = wallet_balance(user=user)
    base_score = quick_play_base_score(rules=rules, balance=balance)
    if base_score is None:
        needed = entry_minimum(rules=rules, base_score=QUICK_PLAY_BASE_SCORES[-1])
        raise InsufficientCoins(needed=coins(needed), balance=coins(balance))

    _advisory_lock(_QUICK_PLAY_LOCK_SPACE, base_score)  # then everyone's at this base score
    joinable = bot_rooms_joinable(
        base_score=base_score,
        balance=balance,
        rules=rules if variant is None else None,
        variant=variant,
    )
    candidates = list(joinable.values_list("pk", flat=True)[:QUICK_JOIN_CANDIDATES])
    seat = _sit_in_first(user=user, room_ids=candidates)
    if seat is not None:
        return QuickPlay(seat=seat, seated_now=True, opened=False)

    seats = min(QUICK_PLAY_SEATS, _engine_config(rules).max_seats)
    room = room_create(
        owner=user,
        name=QUICK_PLAY_ROOM_NAME,
        base_score=base_score,
        seats=seats,
        rules=rules,
        bots=max(1, min(QUICK_PLAY_BOTS, seats - 2)),  # a seat left for the next player
    )
    return QuickPlay(seat=Seat.objects.get(room=room, user=user), seated_now=True, opened=True)


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


@transaction.atomic
def seat_release(*, room: Room, user_id: int) -> None:
    """Free the player's seat in the room (the table has let the player go), pass ownership
    on if needed and tell the lobby on commit. Nothing happens when the seat is gone already.

    If the player owned the room, ownership passes to the person (not bot) seated longest;
    otherwise the room stays open with its owner.
    """
    locked = _lock_row_ready(room_id=room.pk)
    released = _release_locked(room=locked, user_ids=[user_id])
    if released:
        _notify(event=ROOM_UPDATED, room=locked, seats=released.staying)


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
    of those (a table's leave is on the table's hot path, tests/games/test_query_budget.py).
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
        _notify(event=ROOM_UPDATED, room=room, seats=released.staying)
    return None


def _lock_row_ready(*, room_id: int) -> Room:
    """Lock the room's row, read with all its lobby row needs but its seats (`_notify` with
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
    _touch(room=room)
    return _Released(count=len(going), bots=any(seated[u] for u in going), staying=staying)


def _close_locked(*, room: Room) -> None:
    """Close an open room the caller has locked and found empty; the lobby hears
    `room.closed` on commit."""
    room.status = RoomStatus.CLOSED
    room.closed_at = timezone.now()
    _touch(room=room)
    _notify(event=ROOM_CLOSED, room=room)


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
    does nothing wrong. The lobby hears `room.closed` on commit, as after `room_close`."""
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

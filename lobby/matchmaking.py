"""Matchmaking: quick-join (a public table of a kind) and Play now (a full table with bots).

Quick-join seats the player at an existing room when one fits (the one whose people are
closest to the player's rating) and opens one otherwise, with the default rules or, given a
variant (a games.variants slug), any rules of that variant.
Players arriving together are serialized with PostgreSQL advisory locks, so that they fill one
new room instead of opening one each; the rooms are then locked and written as every lobby
service does (`lobby.services`). Play now (`room_quick_play`) opens the player's own room,
every other seat taken by a bot of the player's level; `lobby.waiting` first waits a few
seconds for people of a similar rating to share it.
"""

import math
from dataclasses import dataclass

from django.db import connection, transaction

from accounts.models import User
from accounts.selectors import wallet_balance
from games.models import RuleConfiguration
from lobby import skill
from lobby.checks import (
    check_can_open,
    check_not_frozen,
    check_not_guest,
    check_not_seated,
    check_seats_fit,
    checked_base_score,
    checked_bot_level,
    checked_bots_wanted,
    checked_optional_variant,
    checked_seats,
    config_entry_minimum,
    engine_config,
    entry_minimum,
    rules_of,
)
from lobby.errors import InsufficientCoins, coins
from lobby.models import BotLevel, Room, RoomStatus, Seat
from lobby.selectors import room_list, seat_for_user
from lobby.services import room_create
from lobby.store import (
    ROOM_CREATED,
    ROOM_UPDATED,
    room_free_position,
    room_insert,
    room_notify,
    room_touch,
    seat_take,
)
from shisanshui.errors import RateLimitedError
from shisanshui.ratelimit import rate_limit_hit

QUICK_JOIN_ROOM_NAME = "快速 Quick"
# Play now: the base scores tried, highest first (the first the player can afford); the seats
# of the room it opens (fewer if its deck seats fewer), every one taken: the player and bots.
QUICK_PLAY_BASE_SCORES = (100, 10, 1)
QUICK_PLAY_SEATS = 4
QUICK_PLAY_ROOM_NAME = "快速 Quick · 机器人 Bots"
# How many candidate rooms quick-join looks at before it opens a new one.
QUICK_JOIN_CANDIDATES = 20
# Namespaces of the PostgreSQL advisory locks that serialize quick-joins of a kind, and one
# player's Play nows (any fixed int4s).
_QUICK_JOIN_LOCK_SPACE = 0x5353
QUICK_PLAY_USER_LOCK_SPACE = 0x5355
# Play now's rate limit (settings.RATE_LIMITS).
QUICK_PLAYS = "lobby.quick_play"


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
    """Sit at a public open room with the default rules, this base score and seat count that
    has a free seat the player can afford: of the oldest QUICK_JOIN_CANDIDATES, the one whose
    seated people's mean rating is closest to the player's (`lobby.skill`); open one (owned by
    the player) when there is none. Quick-joins for the same base score and seats are serialized (on
    PostgreSQL), so that two players arriving together sit at the same new table instead of
    opening one each.

    `variant` (a games.variants slug; None or "" for none): a room of any rules of that variant
    instead, and a room opened has `variant_rules` (the default configuration if it is of that
    variant, else the first by name; `no_variant_rules` when no configuration offers it).
    `seats` must fit the rules of a room it would open (`too_many_seats`).

    `with_bots`: play now, against bots (at `bot_level`). The player always opens a new quick
    room and bots take its other seats; bots are never added to a table where other people sit,
    who did not ask for them.

    A room opened here counts like any other: refused past LOBBY_MAX_OPEN_ROOMS open rooms of
    the player's or the rate of room creations.
    """
    base_score = checked_base_score(base_score)
    seats = checked_seats(seats)
    with_bots = checked_bots_wanted(with_bots, seats=seats)
    bot_level = checked_bot_level(bot_level)
    variant = checked_optional_variant(variant)
    rules = rules_of(variant)
    config = engine_config(rules)
    check_seats_fit(rules=rules, config=config, seats=seats)
    needed = config_entry_minimum(config, base_score=base_score)
    check_not_frozen(user=user)
    check_not_guest(user=user)  # a guest's way to a table is Play now
    check_not_seated(user=user)
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

    advisory_lock(_QUICK_JOIN_LOCK_SPACE, base_score * 8 + seats)
    rooms = room_list(base_score=base_score, seats=seats, has_free_seat=True, variant=variant)
    if variant is None:
        rooms = rooms.filter(rules=rules)
    candidates = list(
        rooms.filter(is_private=False, entry_minimum__lte=balance).values_list("pk", flat=True)[
            :QUICK_JOIN_CANDIDATES
        ]
    )
    seat = _sit_in_first(user=user, room_ids=_closest_first(user=user, room_ids=candidates))
    if seat is not None:
        return seat

    if balance < needed:
        raise InsufficientCoins(needed=coins(needed), balance=coins(balance))
    check_can_open(owner=user)
    room = room_insert(
        owner=user,
        name=QUICK_JOIN_ROOM_NAME,
        rules=rules,
        base_score=base_score,
        seats=seats,
        private=False,
        minimum=needed,
    )
    seat = seat_take(room=room, user=user, position=0)
    room_notify(event=ROOM_CREATED, room=room)
    return seat


def advisory_lock(space: int, key: int) -> None:
    """Wait for the transaction-level advisory lock (space, key) on PostgreSQL (elsewhere
    writers are serialized anyway); held until the transaction ends."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [space, key])


def _closest_first(*, user: User, room_ids: list[int]) -> list[int]:
    """The rooms ordered by how close the mean rating of the people seated there is to the
    player's (in each room's rating family), the oldest first among equals; a room without
    people (rare: the lobby lists rooms where a person sits) comes last."""
    seated: dict[int, list[int]] = {}
    rules_of_room: dict[int, RuleConfiguration] = {}
    for seat in Seat.objects.filter(room_id__in=room_ids, user__is_bot=False).select_related(
        "room__rules"
    ):
        seated.setdefault(seat.room_id, []).append(seat.user_id)
        rules_of_room[seat.room_id] = seat.room.rules
    families = {rules.pk: skill.skill_family(rules) for rules in rules_of_room.values()}
    mine = {family: skill.skill_of(user.pk, family)[0] for family in set(families.values())}

    def distance(room_id: int) -> tuple[float, int]:
        people = seated.get(room_id)
        if not people:
            return (math.inf, room_id)
        family = families[rules_of_room[room_id].pk]
        mean = sum(skill.skill_of(person, family)[0] for person in people) / len(people)
        return (abs(mean - mine[family]), room_id)

    return sorted(room_ids, key=distance)


def _sit_in_first(*, user: User, room_ids: list[int]) -> Seat | None:
    """Seat the player in the first of these rooms that is still open with a free seat, each
    re-checked under its lock; None when none is. Rooms skipped stay locked until the end of
    the transaction, in whatever order they come: no deadlock, because quick-joins of a kind
    (the only service that locks several rooms) run one at a time under their advisory lock,
    and their rooms are of that kind alone."""
    for room_id in room_ids:
        room = Room.objects.select_for_update().get(pk=room_id)
        position = room_free_position(room=room)
        if room.status != RoomStatus.OPEN or position is None:
            continue
        if Seat.objects.filter(room=room, user__is_guest=True).exists():
            continue  # a guest's table takes bots only
        seat = seat_take(room=room, user=user, position=position)
        room_touch(room=room)
        room_notify(event=ROOM_UPDATED, room=room)
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


def quick_play_spend(*, user: User, rules: RuleConfiguration) -> int:
    """A Play now of ``user`` with ``rules`` counted against its rate ("lobby.quick_play";
    `rate_limited`), and the highest base score its balance affords (`insufficient_coins`
    when none does)."""
    limited = rate_limit_hit(QUICK_PLAYS, user.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)
    balance = wallet_balance(user=user)
    base_score = quick_play_base_score(rules=rules, balance=balance)
    if base_score is None:
        needed = entry_minimum(rules=rules, base_score=QUICK_PLAY_BASE_SCORES[-1])
        raise InsufficientCoins(needed=coins(needed), balance=coins(balance))
    return base_score


@transaction.atomic
def room_quick_play(*, user: User, variant: str | None = None) -> QuickPlay:
    """Play now: seat the player at a new table full of bots, with the default rules, or with
    a `variant` (a games.variants slug; None or "" for none): a room with `variant_rules`
    (`no_variant_rules` when no configuration offers it).

    Every Play now opens its own room of QUICK_PLAY_SEATS seats (fewer if its deck seats
    fewer) at the highest of QUICK_PLAY_BASE_SCORES the player can afford, and bots of the level
    closest to the player's rating (`lobby.skill`) take every other seat: the player plays a
    full table at once. This is Play now without the wait; `lobby.waiting.play_now` first
    looks for people of a similar rating. It never seats the player beside
    another person: a person alone with bots has no Ready clock to fear (the table waits for
    them, `games.table.flow.ready_timed`), and a stranger sitting down would start one; people
    who want to play each other quick-join or open a room. A player seated already keeps that
    seat (returned, `seated_now` False; nothing is spent). One player's Play nows are
    serialized (on PostgreSQL), so that repeated clicks or two tabs never seat a player twice
    nor open two rooms. Refused past the rate "lobby.quick_play" (`rate_limited`), and like
    `room_create` (`too_many_rooms`, "lobby.room_create"); without the smallest entry minimum,
    `insufficient_coins`.
    """
    variant = checked_optional_variant(variant)
    advisory_lock(QUICK_PLAY_USER_LOCK_SPACE, user.pk)  # this player's Play nows, one by one
    seated = seat_for_user(user=user)
    if seated is not None:
        return QuickPlay(seat=seated, seated_now=False, opened=False)
    check_not_frozen(user=user)
    rules = rules_of(variant)  # before the rate is spent: a refusal spends nothing
    base_score = quick_play_spend(user=user, rules=rules)

    seats = min(QUICK_PLAY_SEATS, engine_config(rules).max_seats)
    rating, _deviation = skill.skill_of(user.pk, skill.skill_family(rules))
    room = room_create(
        owner=user,
        name=QUICK_PLAY_ROOM_NAME,
        base_score=base_score,
        seats=seats,
        rules=rules,
        bots=seats - 1,  # every other seat: a full table
        bot_level=skill.bot_level_for([rating]),
    )
    return QuickPlay(seat=Seat.objects.get(room=room, user=user), seated_now=True, opened=True)

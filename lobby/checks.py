"""The lobby's checks: what a room may be, and whether a player may open or sit in one.

Plain validators of input come first (they refuse before any query), then the checks that
read the rules, the player's seat, wallet, rooms and rate budgets. Each refuses with a
`lobby.errors.LobbyError` (or `shisanshui.errors.RateLimitedError`) and writes nothing, except
that the rate checks spend their budget.
"""

import logging
import math

from django.conf import settings

from accounts.collusion import transfers_frozen
from accounts.models import User
from accounts.selectors import wallet_balance
from games.models import RuleConfiguration
from games.rules.config import RuleConfig
from games.rules.errors import ConfigError
from lobby.errors import (
    AlreadySeated,
    DraftRules,
    GuestNotAllowed,
    GuestTable,
    InsufficientCoins,
    InvalidBaseScore,
    InvalidBotCount,
    InvalidBotLevel,
    InvalidRoomName,
    InvalidRules,
    InvalidSeatCount,
    InvalidSeries,
    NoDefaultRules,
    NoVariantRules,
    TooManyRooms,
    TooManySeats,
    TransfersFrozen,
    coins,
)
from lobby.models import (
    MAX_BASE_SCORE,
    NAME_MAX_LENGTH,
    SEAT_COUNTS,
    BotLevel,
    Room,
    RoomStatus,
    Seat,
)
from lobby.selectors import checked_variant, seat_for_user, variant_rules
from shisanshui.errors import RateLimitedError
from shisanshui.ratelimit import rate_limit_check, rate_limit_hit

logger = logging.getLogger(__name__)

# A series (房卡) has at most this many rounds.
SERIES_MAX_ROUNDS = 32
# A room opened without a name: "<owner> 的桌 Table", the owner's name cut to fit.
DEFAULT_ROOM_NAME = "{owner} 的桌 Table"
# The rate limits of the lobby's services (settings.RATE_LIMITS).
JOIN_CODE_FAILURES = "lobby.join_code_failure"
ROOM_CREATIONS = "lobby.room_create"


# Input: plain Python, before any query.


def checked_name(name: object) -> str:
    """A room's name: 1 to NAME_MAX_LENGTH printable characters, surrounding spaces dropped."""
    text = name.strip() if isinstance(name, str) else ""
    if not text or len(text) > NAME_MAX_LENGTH or not text.isprintable():
        raise InvalidRoomName(max=NAME_MAX_LENGTH)
    return text


def default_room_name(*, owner: User) -> str:
    """The name of a room opened without one: "alice 的桌 Table" (within NAME_MAX_LENGTH)."""
    room_word = DEFAULT_ROOM_NAME.format(owner="")
    username = owner.get_username()[: NAME_MAX_LENGTH - len(room_word)]
    return DEFAULT_ROOM_NAME.format(owner=username)


def checked_seats(seats: object) -> int:
    if isinstance(seats, bool) or not isinstance(seats, int) or seats not in SEAT_COUNTS:
        raise InvalidSeatCount(seats=seats)
    return seats


def checked_base_score(base_score: object) -> int:
    if (
        isinstance(base_score, bool)
        or not isinstance(base_score, int)
        or not 1 <= base_score <= MAX_BASE_SCORE
    ):
        raise InvalidBaseScore(base_score=base_score, max=coins(MAX_BASE_SCORE))
    return base_score


def checked_bot_level(level: object) -> str:
    if not isinstance(level, str) or level not in BotLevel.values:
        raise InvalidBotLevel(level=str(level)[:20], levels=", ".join(BotLevel.values))
    return level


def checked_bots(bots: object, *, seats: int) -> int:
    """Bots to seat beside the player: 0 to seats - 1 (one seat is the player's)."""
    if isinstance(bots, bool) or not isinstance(bots, int) or not 0 <= bots < seats:
        raise InvalidBotCount(bots=bots, seats=seats, max=seats - 1)
    return bots


def checked_bots_wanted(bots: object, *, seats: int) -> bool:
    """Whether bots take every other seat: True or False."""
    if not isinstance(bots, bool):
        raise InvalidBotCount(bots=str(bots)[:20], seats=seats, max=seats - 1)
    return bots


def checked_series(rounds: object, *, private: bool) -> int | None:
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


def checked_optional_variant(variant: object) -> str | None:
    """An optional variant: None (or "", as an empty form field sends it) for none."""
    return None if variant is None or variant == "" else checked_variant(variant)


def normalized_code(code: object) -> str:
    """A code as typed by a person: surrounding spaces dropped, case ignored."""
    return code.strip().upper() if isinstance(code, str) else ""


# The rules.


def engine_config(rules: RuleConfiguration) -> RuleConfig:
    """The engine's configuration of rules a room may use: `draft_rules` for a draft (tried
    in the admin, not played), `invalid_rules` if they cannot be used."""
    if rules.is_draft:
        raise DraftRules(rules=rules.name)
    try:
        return rules.engine_config()
    except ConfigError:
        logger.exception("Rule configuration %s is invalid", rules.pk)
        raise InvalidRules() from None


def entry_minimum(*, rules: RuleConfiguration, base_score: int) -> int:
    """Coins needed to sit at a table with these rules at this base score (RULES.md §7.4)."""
    return config_entry_minimum(engine_config(rules), base_score=base_score)


def config_entry_minimum(config: RuleConfig, *, base_score: int) -> int:
    """`entry_minimum` of an engine configuration already read."""
    try:
        return RuleConfig.from_dict({"base_score": base_score}, base=config).entry_minimum
    except ConfigError:
        logger.exception("Rules at base score %s are invalid", base_score)
        raise InvalidRules() from None


def check_seats_fit(*, rules: RuleConfiguration, config: RuleConfig, seats: int) -> None:
    """A room has at most the seats its rules' deck deals hands for (`RuleConfig.max_seats`,
    RULES.md §12.5: 4 with the classic deck, 5 with one extra suit, 6 with two, 4 with spare
    cards), however it is opened."""
    if seats > config.max_seats:
        raise TooManySeats(rules=rules.name, max=config.max_seats, seats=seats)


def default_rules() -> RuleConfiguration:
    rules = RuleConfiguration.objects.filter(is_default=True, is_draft=False).first()
    if rules is None:
        raise NoDefaultRules()
    return rules


def rules_of(variant: str | None) -> RuleConfiguration:
    """The rules of a room opened for this variant (`variant_rules`: the default configuration
    if it is of that variant, else the first by name), the default rules for none."""
    if variant is None:
        return default_rules()
    rules = variant_rules(variant=variant)
    if rules is None:
        raise NoVariantRules(variant=variant)
    return rules


# The player.


def checked_table_terms(
    *, owner: User, rules: RuleConfiguration, base_score: int, seats: int
) -> int:
    """A table the owner may open and sit at with these rules: its rules are valid and seat
    that many, the owner's transfers are not frozen, it is seated nowhere and holds the entry
    minimum (returned)."""
    config = engine_config(rules)
    check_seats_fit(rules=rules, config=config, seats=seats)
    needed = config_entry_minimum(config, base_score=base_score)
    check_not_frozen(user=owner)
    check_not_seated(user=owner)
    check_can_afford(user=owner, needed=needed)
    return needed


def check_not_frozen(*, user: User) -> None:
    """A player whose transfers support froze pending review takes no seat (bots never are)."""
    if transfers_frozen(user):
        raise TransfersFrozen()


# Guests (accounts.services.guest_create) play only at a public table whose every other seat
# is a bot's — the table Play now opens — or at the private room or duplicate match a person
# invited them to by its link, so a guest's coins reach a person's wallet by play only where
# that person asked them in (docs/security.md, "Guests").


def check_not_guest(*, user: User) -> None:
    """A guest may not open, join or share a room other than its Play now table."""
    if user.is_guest:
        raise GuestNotAllowed()


def check_guest_table(
    *, owner: User, private: bool, bots: int, seats: int, series_rounds: int | None
) -> None:
    """A room a guest opens is public, has no series, and bots take every other seat."""
    if owner.is_guest and (private or series_rounds or bots != seats - 1):
        raise GuestNotAllowed()


def check_no_guest_seated(*, room: Room, user: User) -> None:
    """No person joins a public table where a guest sits (bots fill a guest's table; they
    may). A private room or a duplicate match's table is exempt: everyone there came with its
    owner's code or invite link, and a guest only through the link (`room_join`'s
    ``invited``)."""
    if user.is_bot or room.is_private or room.match_id is not None:
        return
    check_not_guest(user=user)
    if Seat.objects.filter(room=room, user__is_guest=True).exists():
        raise GuestTable()


def check_not_seated(*, user: User) -> None:
    seat = seat_for_user(user=user)
    if seat is not None:
        raise AlreadySeated(room=seat.room.name)


def check_can_afford(*, user: User, needed: int) -> None:
    balance = wallet_balance(user=user)
    if balance < needed:
        raise InsufficientCoins(needed=coins(needed), balance=coins(balance))


def check_can_open(*, owner: User) -> None:
    """The player may open one more room: fewer open rooms of theirs than LOBBY_MAX_OPEN_ROOMS
    (a duplicate match's rooms aside), and within the rate of room creations (spent here, so
    call it last before inserting). Every way of opening a room counts, quick-join's and Play
    now's too: quick-join with bots, then leave, would otherwise be the cheapest way to fill
    the lobby.

    No race: only a player seated nowhere opens a room, and opening one seats them (one seat
    per player, a unique constraint), so one player's openings never run side by side."""
    most = settings.LOBBY_MAX_OPEN_ROOMS
    opened = Room.objects.filter(owner=owner, status=RoomStatus.OPEN, match__isnull=True)
    if opened.count() >= most:
        raise TooManyRooms(max=most, minutes=math.ceil(settings.LOBBY_IDLE_ROOM_SECONDS / 60))
    check_creation_rate(owner=owner)


def check_creation_rate(*, owner: User) -> None:
    """Spend one room creation of the owner's rate "lobby.room_create"; `rate_limited` over it."""
    limited = rate_limit_hit(ROOM_CREATIONS, owner.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)


def check_code_budget(*, user: User) -> None:
    """Refuse any code, the right one too, while the player's wrong codes are over budget.

    Wrong private-room codes are counted per player (`code_failed`), whichever way they
    arrive (socket, form, API; by code alone or with a room id). They are counted after the
    attempt, so parallel attempts may pass a few more: a handful at most against 31**6 codes.
    """
    limited = rate_limit_check(JOIN_CODE_FAILURES, user.pk)
    if limited is not None:
        raise RateLimitedError(retry_after=limited.retry_after)


def code_failed(*, user: User) -> None:
    """Count one wrong code against the player's budget ("lobby.join_code_failure")."""
    rate_limit_hit(JOIN_CODE_FAILURES, user.pk)

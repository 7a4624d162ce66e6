"""Reads of the lobby: the room list, one room, a player's seat, and a room's public row.

The public row (`room_row`) is what every lobby client sees of a room: the list, the API and
the live events all use it. It never contains a private room's code. A room's variant (its
deck's tags and badge, `games.variants`) is read from its rule configuration as it is now.
"""

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypedDict

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Count, Exists, F, OuterRef, Prefetch, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import get_language

from accounts.models import User
from games.labels import DataNames, data_name, data_names_or_none
from games.models import RuleConfiguration, Table
from games.rules.config import RuleConfig
from games.rules.errors import ConfigError
from games.table.state import ROUND_PHASES, TableState
from games.variants import VARIANTS, variant_badge, variant_filter, variant_tags
from lobby.errors import UnknownVariant
from lobby.models import Room, RoomStatus, Seat


class Nickname(TypedDict):
    zh: str
    en: str


class PlayerRow(TypedDict):
    position: int
    username: str
    name: str  # what players see: the username, or a bot's nickname (User.display_name)
    nickname: Nickname | None  # a bot's nickname in both languages (a live row's reader picks)


class RulesRow(TypedDict):
    id: int
    name: str  # in the active language (games.labels.data_name)
    names: DataNames | None  # both, for a name the platform gave (a live row's reader picks)


class VariantLabels(TypedDict):
    zh: str
    en: str


class VariantRow(TypedDict):
    tags: list[str]  # games.variants slugs: ["duoyise", "laizi"], ["classic"]
    label: str  # the badge in the active language: "多一色·癞子", "Extra suit · Jokers"
    labels: VariantLabels  # both (a live row's reader picks)


class MatchRow(TypedDict):
    id: int
    table: int  # this room's table number in the match, from 1
    tables: int
    deals: int
    status: str


class RoomRow(TypedDict):
    id: int
    name: str  # in the active language (games.labels.data_name)
    names: DataNames | None  # both, for a name the platform gave (a live row's reader picks)
    rules: RulesRow
    variant: VariantRow
    base_score: int
    seats: int
    seats_taken: int
    entry_minimum: int
    private: bool
    status: str
    owner: str
    players: list[PlayerRow]
    people: int  # players who are not bots
    bot_level: str  # how its bots play (games.rules.levels)
    match: MatchRow | None  # a duplicate match's table
    allow_spectators: bool  # anyone may watch (a public room)
    watchers: int  # spectators watching its table now
    version: int


def rooms_for_rows() -> QuerySet[Room]:
    """Rooms read with everything their row needs but their seats, in one query. Not the
    table's state: a row needs only its watchers, and the state (every hand and the rules,
    parsed from ``jsonb``) cost more than the rest of the row together — on every lobby
    snapshot, and on every seat taken or freed, a table's leave included."""
    return Room.objects.select_related("rules", "owner", "match", "table").defer("table__state")


def _row_ready() -> QuerySet[Room]:
    """Rooms with everything their row needs, in two queries whatever their number."""
    return rooms_for_rows().prefetch_related(
        Prefetch("taken_seats", queryset=Seat.objects.select_related("user").order_by("position"))
    )


def _rooms() -> QuerySet[Room]:
    """Row-ready rooms that can also be filtered on their seats taken and people."""
    return _row_ready().annotate(
        seats_taken=Count("taken_seats"),
        people=Count("taken_seats", filter=Q(taken_seats__user__is_bot=False)),
    )


def room_list(
    *,
    base_score: int | None = None,
    seats: int | None = None,
    has_free_seat: bool | None = None,
    listed_for: Any = None,
    variant: str | None = None,
) -> QuerySet[Room]:
    """Open rooms, oldest first, optionally filtered; each row-ready (see `room_row`).

    `listed_for` (a user): only the rooms the lobby lists to that player, those where a person
    sits (a room nobody or only bots sit in has nobody to play with) and the player's own
    (which they may close). `variant` (a slug of games.variants.VARIANTS, else
    `UnknownVariant`): only rooms whose rules' deck carries that tag."""
    rooms = _rooms().filter(status=RoomStatus.OPEN)
    if variant is not None:
        rooms = rooms.filter(variant_filter(checked_variant(variant)))
    if listed_for is not None:
        rooms = rooms.filter(Q(people__gt=0) | Q(owner=listed_for))
    if base_score is not None:
        rooms = rooms.filter(base_score=base_score)
    if seats is not None:
        rooms = rooms.filter(seats=seats)
    if has_free_seat is True:
        rooms = rooms.filter(seats_taken__lt=F("seats"))
    elif has_free_seat is False:
        rooms = rooms.filter(seats_taken__gte=F("seats"))
    return rooms.order_by("id")


@dataclass(frozen=True)
class RoomPage:
    """One page of the lobby's room list: its row-ready rooms, newest first."""

    rooms: list[Room]
    number: int  # from 1
    pages: int  # at least 1
    total: int  # open rooms matching the filters, on every page
    size: int  # rooms per page


def room_page(
    *,
    page: int = 1,
    base_score: int | None = None,
    seats: int | None = None,
    has_free_seat: bool | None = None,
    size: int | None = None,
    listed_for: Any = None,
    variant: str | None = None,
) -> RoomPage:
    """A page of open rooms, newest first (a new room, the likeliest to have free seats, is on
    top; the order never changes while a room is open), filtered like `room_list`; at most
    `size` (LOBBY_PAGE_SIZE) rooms. A page past the last is the last. Three queries."""
    size = size or settings.LOBBY_PAGE_SIZE
    rooms = room_list(
        base_score=base_score,
        seats=seats,
        has_free_seat=has_free_seat,
        listed_for=listed_for,
        variant=variant,
    )
    paginator = Paginator(rooms.order_by("-id"), size)
    current = paginator.get_page(page)
    return RoomPage(
        rooms=list(current.object_list),
        number=current.number,
        pages=paginator.num_pages,
        total=paginator.count,
        size=size,
    )


def rooms_idle(*, idle_seconds: int, limit: int) -> list[int]:
    """Ids of open rooms nobody has sat in for `idle_seconds` (since their last seat was freed,
    or since they were opened), oldest first: candidates that `room_close_idle` re-checks."""
    cutoff = timezone.now() - timedelta(seconds=idle_seconds)
    return list(
        Room.objects.filter(status=RoomStatus.OPEN)
        .exclude(Exists(Seat.objects.filter(room=OuterRef("pk"))))
        .annotate(idle_since=Coalesce("empty_since", "created_at"))
        .filter(idle_since__lte=cutoff)
        .order_by("id")
        .values_list("pk", flat=True)[:limit]
    )


def room_get(*, room_id: int) -> Room | None:
    """One room, open or closed, row-ready; None if there is no such room. (No GROUP BY: the
    row counts the prefetched seats. The lobby is told of every seat taken or freed with it.)"""
    return _row_ready().filter(pk=room_id).first()


def seat_for_user(*, user: User) -> Seat | None:
    """Where the player sits, with the room; None when not seated."""
    return Seat.objects.select_related("room").filter(user=user).first()


def room_row(*, room: Room, seats: Iterable[Seat] | None = None) -> RoomRow:
    """The public row of a room (a room from `room_list` or `room_get` costs no query).
    ``seats``: its taken seats with their users when the caller holds them (read under the
    room's lock), instead of the room's prefetched ones."""
    if seats is None:
        seats = list(room.taken_seats.all())
    else:
        seats = sorted(seats, key=lambda seat: seat.position)
    return {
        "id": room.pk,
        "name": data_name(room.name),
        "names": data_names_or_none(room.name),
        "rules": {
            "id": room.rules.pk,
            "name": data_name(room.rules.name),
            "names": data_names_or_none(room.rules.name),
        },
        "variant": variant_row(rules=room.rules),
        "base_score": room.base_score,
        "seats": room.seats,
        "seats_taken": len(seats),
        "entry_minimum": room.entry_minimum,
        "private": room.is_private,
        "status": room.status,
        "owner": room.owner.get_username(),
        "players": [_player_row(s) for s in seats],
        "people": sum(1 for s in seats if not s.user.is_bot),
        "bot_level": room.bot_level,
        "match": _match_row(room),
        "allow_spectators": room.allow_spectators and not room.is_private,
        "watchers": _watchers(room),
        "version": room.version,
    }


def _watchers(room: Room) -> int:
    try:
        return int(room.table.watchers)
    except Room.table.RelatedObjectDoesNotExist:  # no table yet: nobody watches
        return 0


def _match_row(room: Room) -> MatchRow | None:
    match = room.match
    if match is None:
        return None
    assert room.match_table is not None
    return {
        "id": match.pk,
        "table": room.match_table,
        "tables": match.tables,
        "deals": match.deals,
        "status": match.status,
    }


# Variants: the deck of a configuration, its tags and badge, which configuration offers one.


def checked_variant(value: object) -> str:
    """A variant slug of games.variants.VARIANTS, else `UnknownVariant` (input from anywhere)."""
    if not isinstance(value, str) or value not in VARIANTS:
        raise UnknownVariant()
    return value


@functools.cache
def _deck(extra_suits: int, jokers: int, spare_cards: int) -> RuleConfig | None:
    try:
        return RuleConfig(extra_suits=extra_suits, jokers=jokers, spare_cards=spare_cards)
    except ConfigError:
        return None


def rules_deck(*, rules: RuleConfiguration) -> RuleConfig | None:
    """The deck of a configuration as an engine value, its other rules at the defaults: all
    that its variant tags and its `max_seats` depend on, read without a query (the full
    `engine_config()` reads the special hands). None when the stored deck is invalid."""
    return _deck(rules.extra_suits, rules.jokers, rules.spare_cards)


def rules_max_seats(*, rules: RuleConfiguration) -> int | None:
    """Players the configuration's deck seats (RULES.md §12.5); None when it is invalid."""
    deck = rules_deck(rules=rules)
    return None if deck is None else deck.max_seats


def variant_row(*, rules: RuleConfiguration) -> VariantRow:
    """The variant of a room's rules: its tags and its badge (its preset's when its rules play
    one, else its deck's), in the active language and in both (no tags, empty labels, for an
    invalid deck: no room can be opened with it)."""
    deck = rules_deck(rules=rules)
    if deck is None:
        return {"tags": [], "label": "", "labels": {"zh": "", "en": ""}}
    labels: VariantLabels = {
        "zh": variant_badge(deck, chinese=True, preset=rules.preset),
        "en": variant_badge(deck, chinese=False, preset=rules.preset),
    }
    chinese = (get_language() or "").lower().startswith("zh")
    return {
        "tags": list(variant_tags(deck, rules.preset)),
        "label": labels["zh"] if chinese else labels["en"],
        "labels": labels,
    }


def variant_rules(*, variant: str) -> RuleConfiguration | None:
    """The configuration a room of this variant is opened with: the default configuration if
    its deck carries the tag, else the first by name that does; None if none does."""
    return (
        RuleConfiguration.objects.filter(variant_filter(checked_variant(variant), prefix=""))
        .filter(is_draft=False)
        .order_by("-is_default", "name")
        .first()
    )


def variants_offered() -> list[str]:
    """The variant slugs some configuration offers, in VARIANTS' order (one query)."""
    offered: set[str] = set()
    decks = RuleConfiguration.objects.filter(is_draft=False).values_list(
        "extra_suits", "jokers", "spare_cards", "preset"
    )
    for extra_suits, jokers, spare_cards, preset in decks.distinct():
        deck = _deck(extra_suits, jokers, spare_cards)
        if deck is not None:
            offered.update(variant_tags(deck, preset))
    return [slug for slug in VARIANTS if slug in offered]


def _player_row(seat: Seat) -> PlayerRow:
    """A seated player in a room's row; ``name`` is in the active language, and a bot's
    ``nickname`` has both (a row sent to every lobby is read in each reader's language)."""
    user = seat.user
    nickname: Nickname | None = (
        {"zh": user.first_name, "en": user.last_name} if user.is_bot else None
    )
    return {
        "position": seat.position,
        "username": user.get_username(),
        "name": user.display_name(),
        "nickname": nickname,
    }


def room_rows(*, rooms: Iterable[Room]) -> list[RoomRow]:
    return [room_row(room=room) for room in rooms]


def room_code_visible_to(*, room: Room, user: Any) -> bool:
    """A private room's code is shown only to its owner and to the players seated in it."""
    if not room.is_private or not getattr(user, "is_authenticated", False):
        return False
    return room.owner_id == user.pk or any(s.user_id == user.pk for s in room.taken_seats.all())


class RoomView(RoomRow):
    code: str | None


class SeatView(TypedDict):
    room: RoomView
    position: int


def room_view(*, room_id: int, user: Any) -> RoomView | None:
    """What `user` sees of a room: its public row, plus its code if they may see it."""
    room = room_get(room_id=room_id)
    if room is None:
        return None
    return room_view_of(room=room, user=user)


def room_view_of(*, room: Room, user: Any) -> RoomView:
    """`room_view` of a row-ready room (from `room_list` or `room_get`)."""
    code = room.code if room_code_visible_to(room=room, user=user) else None
    return {**room_row(room=room), "code": code}


def seat_view(*, user: Any) -> SeatView | None:
    """Where the player sits, the room seen as they see it; None when not seated."""
    seat = seat_for_user(user=user)
    if seat is None:
        return None
    room = room_view(room_id=seat.room_id, user=user)
    assert room is not None
    return {"room": room, "position": seat.position}


def seat_in_round(*, user: Any, room_id: int) -> bool:
    """Whether the player is playing a round at the table of room `room_id` right now (dealt
    in, the round not settled yet): leaving the table then is an escape (RULES.md §7.5)."""
    state = Table.objects.filter(room_id=room_id).values_list("state", flat=True).first()
    return state is not None and player_in_round(TableState.from_dict(state), str(user.pk))


def player_in_round(state: TableState, player: str) -> bool:
    """Whether ``player`` is dealt in the table's round in play (pure)."""
    seat = state.seat_of(player)
    return seat is not None and seat.in_round and state.phase in ROUND_PHASES

"""Reads of the lobby: the room list, one room, a player's seat, and a room's public row.

The public row (`room_row`) is what every lobby client sees of a room: the list, the API and
the live events all use it. It never contains a private room's code.
"""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta
from typing import Any, TypedDict

from django.conf import settings
from django.core.paginator import Paginator
from django.db.models import Count, Exists, F, OuterRef, Prefetch, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone

from accounts.models import User
from lobby.models import Room, RoomStatus, Seat


class PlayerRow(TypedDict):
    position: int
    username: str


class RulesRow(TypedDict):
    id: int
    name: str


class RoomRow(TypedDict):
    id: int
    name: str
    rules: RulesRow
    base_score: int
    seats: int
    seats_taken: int
    entry_minimum: int
    private: bool
    status: str
    owner: str
    players: list[PlayerRow]
    version: int


def _rooms() -> QuerySet[Room]:
    """Rooms with everything their row needs, in two queries whatever their number."""
    return (
        Room.objects.select_related("rules", "owner")
        .annotate(seats_taken=Count("taken_seats"))
        .prefetch_related(
            Prefetch(
                "taken_seats",
                queryset=Seat.objects.select_related("user").order_by("position"),
            )
        )
    )


def room_list(
    *,
    base_score: int | None = None,
    seats: int | None = None,
    has_free_seat: bool | None = None,
) -> QuerySet[Room]:
    """Open rooms, oldest first, optionally filtered; each row-ready (see `room_row`)."""
    rooms = _rooms().filter(status=RoomStatus.OPEN)
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
) -> RoomPage:
    """A page of open rooms, newest first (a new room, the likeliest to have free seats, is on
    top; the order never changes while a room is open), filtered like `room_list`; at most
    `size` (LOBBY_PAGE_SIZE) rooms. A page past the last is the last. Three queries."""
    size = size or settings.LOBBY_PAGE_SIZE
    rooms = room_list(base_score=base_score, seats=seats, has_free_seat=has_free_seat)
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
    """One room, open or closed, row-ready; None if there is no such room."""
    return _rooms().filter(pk=room_id).first()


def seat_for_user(*, user: User) -> Seat | None:
    """Where the player sits, with the room; None when not seated."""
    return Seat.objects.select_related("room").filter(user=user).first()


def room_row(*, room: Room) -> RoomRow:
    """The public row of a room (a room from `room_list` or `room_get` costs no query)."""
    seats = list(room.taken_seats.all())
    return {
        "id": room.pk,
        "name": room.name,
        "rules": {"id": room.rules.pk, "name": room.rules.name},
        "base_score": room.base_score,
        "seats": room.seats,
        "seats_taken": len(seats),
        "entry_minimum": room.entry_minimum,
        "private": room.is_private,
        "status": room.status,
        "owner": room.owner.get_username(),
        "players": [{"position": s.position, "username": s.user.get_username()} for s in seats],
        "version": room.version,
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

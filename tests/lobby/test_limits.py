"""The lobby's limits against abuse: wrong codes, open rooms per owner, room creations, idle
rooms, and the paginated room list. Each refusal is clear and changes nothing."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

import pytest
from django.conf import settings as django_settings
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from accounts.models import User
from games.models import RuleConfiguration
from lobby import tasks
from lobby.errors import RoomNotFound, TooManyRooms, WrongRoomCode
from lobby.matchmaking import room_quick_join
from lobby.models import Room, RoomStatus, Seat
from lobby.selectors import room_page, rooms_idle
from lobby.services import (
    room_close,
    room_close_idle,
    room_create,
    room_join,
    room_join_by_code,
    room_leave,
)
from shisanshui.errors import RateLimitedError
from tests.lobby.conftest import MakePlayer, lobby_counts

pytestmark = pytest.mark.django_db


def private_room(owner: User) -> Room:
    return room_create(owner=owner, name="Friends", base_score=100, seats=4, private=True)


def a_wrong_code(room: Room) -> str:
    return "ZZZZZ2" if room.code != "ZZZZZ2" else "ZZZZZ3"


# Join-by-code failures, per player, whichever way the code arrives.


def test_wrong_codes_are_limited_then_even_the_right_code_waits(
    alice: User, bob: User, carol: User
) -> None:
    room = private_room(alice)
    for _ in range(3):
        with pytest.raises(RoomNotFound):
            room_join_by_code(user=bob, code=a_wrong_code(room))
    for _ in range(2):  # with the room's id: the same budget
        with pytest.raises(WrongRoomCode):
            room_join(user=bob, room_id=room.pk, code=a_wrong_code(room))
    before = lobby_counts()

    with pytest.raises(RateLimitedError) as refused:
        room_join_by_code(user=bob, code=room.code)
    with pytest.raises(RateLimitedError):
        room_join(user=bob, room_id=room.pk, code=room.code)

    assert refused.value.code == "rate_limited" and refused.value.status == 429
    assert 1 <= refused.value.retry_after <= 60
    assert refused.value.details() == {"retry_after": refused.value.retry_after}
    assert "try again in" in refused.value.message
    assert lobby_counts() == before
    # Another player's budget is untouched.
    room_join_by_code(user=carol, code=room.code)


def test_the_right_code_spends_nothing(settings: Any, alice: User, bob: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.room_create": "100/minute"}
    for _ in range(6):
        room = private_room(alice)
        room_join_by_code(user=bob, code=room.code.lower())
        room_leave(user=bob)
        room_leave(user=alice)
        room_close(user=alice, room_id=room.pk)


def test_the_hourly_budget_holds_too(settings: Any, alice: User, bob: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.join_code_failure": "100/minute;3/hour"}
    room = private_room(alice)
    for _ in range(3):
        with pytest.raises(WrongRoomCode):
            room_join(user=bob, room_id=room.pk, code="")

    with pytest.raises(RateLimitedError) as refused:
        room_join(user=bob, room_id=room.pk, code=room.code)

    assert refused.value.retry_after > 3000


def test_the_api_answers_429_with_retry_after(alice: User, bob: User) -> None:
    room = private_room(alice)
    api = APIClient()
    api.force_authenticate(bob)
    for _ in range(5):
        assert api.post("/api/lobby/rooms/join-by-code/", {"code": "ZZZZZ9"}).status_code == 404

    response = api.post("/api/lobby/rooms/join-by-code/", {"code": room.code})
    by_id = api.post(f"/api/lobby/rooms/{room.pk}/join/", {"code": room.code})

    assert response.status_code == 429 and by_id.status_code == 429
    error = response.json()["error"]
    assert error["code"] == "rate_limited"
    assert int(response["Retry-After"]) == error["retry_after"] >= 1
    assert not Seat.objects.filter(user=bob).exists()


def test_the_form_says_when_to_try_again(client: Client, alice: User, bob: User) -> None:
    room = private_room(alice)
    client.force_login(bob)
    for _ in range(5):
        client.post("/lobby/join/", {"code": "ZZZZZ9"})

    response = client.post("/lobby/join/", {"code": room.code}, follow=True)

    assert any("Too many requests" in str(m) for m in response.context["messages"])
    assert not Seat.objects.filter(user=bob).exists()


# Open rooms per owner, and room creations.


def open_and_leave(owner: User, name: str = "Mine", **fields: Any) -> Room:
    room = room_create(owner=owner, name=name, base_score=100, seats=2, **fields)
    room_leave(user=owner)
    return room


def test_an_owner_has_at_most_three_open_rooms_on_every_path(alice: User) -> None:
    rooms = [open_and_leave(alice, name=f"Room {i}") for i in range(3)]
    before = lobby_counts()

    for attempt in (
        lambda: room_create(owner=alice, name="Fourth", base_score=100, seats=2),
        lambda: room_create(owner=alice, name="Bots", base_score=100, seats=2, bots=1),
        lambda: room_quick_join(user=alice, base_score=100, seats=2, with_bots=True),
        lambda: room_quick_join(user=alice, base_score=7, seats=3),  # would open one
    ):
        with pytest.raises(TooManyRooms) as refused:
            attempt()
        assert refused.value.code == "too_many_rooms" and refused.value.status == 409
        assert "3 open rooms" in refused.value.message and "5 minutes" in refused.value.message
    assert lobby_counts() == before

    room_close(user=alice, room_id=rooms[0].pk)  # closing one frees a place
    room_create(owner=alice, name="Again", base_score=100, seats=2)


def test_quick_join_into_someone_elses_room_is_not_an_opening(
    settings: Any, alice: User, bob: User
) -> None:
    settings.LOBBY_MAX_OPEN_ROOMS = 1
    theirs = room_create(owner=alice, name="Alice's", base_score=100, seats=2)
    open_and_leave(bob)  # bob is at his cap

    seat = room_quick_join(user=bob, base_score=100, seats=2)

    assert seat.room_id == theirs.pk


def test_the_cap_is_a_setting(settings: Any, alice: User) -> None:
    settings.LOBBY_MAX_OPEN_ROOMS = 1
    open_and_leave(alice)
    with pytest.raises(TooManyRooms, match="1 open rooms"):
        room_create(owner=alice, name="Second", base_score=100, seats=2)


def test_room_creations_are_rate_limited(settings: Any, alice: User) -> None:
    settings.LOBBY_MAX_OPEN_ROOMS = 100
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.room_create": "2/minute"}
    open_and_leave(alice)
    room_quick_join(user=alice, base_score=9, seats=2)  # opens one: counted
    room_leave(user=alice)
    before = lobby_counts()

    with pytest.raises(RateLimitedError) as refused:
        room_create(owner=alice, name="Third", base_score=100, seats=2)

    assert 1 <= refused.value.retry_after <= 60
    assert lobby_counts() == before


def test_the_api_and_the_form_refuse_a_fourth_room(alice: User) -> None:
    for i in range(3):
        open_and_leave(alice, name=f"Room {i}")
    api = APIClient()
    api.force_authenticate(alice)
    client = Client()
    client.force_login(alice)

    response = api.post("/api/lobby/rooms/", {"name": "API", "base_score": 100, "seats": 2})
    page = client.post(
        "/lobby/create/", {"name": "Form", "base_score": 100, "seats": 2}, follow=True
    )

    assert response.status_code == 409 and response.json()["error"]["code"] == "too_many_rooms"
    assert any("3 open rooms" in str(m) for m in page.context["messages"])
    assert Room.objects.filter(owner=alice).count() == 3


# Idle rooms.


def age(room: Room, *, seconds: int, field: str = "empty_since") -> None:
    Room.objects.filter(pk=room.pk).update(**{field: timezone.now() - timedelta(seconds=seconds)})


def test_the_last_seat_freed_marks_the_room_empty_and_a_seat_clears_it(
    alice: User, bob: User
) -> None:
    room = room_create(owner=alice, name="R", base_score=100, seats=2)
    room_join(user=bob, room_id=room.pk)
    room_leave(user=alice)
    room.refresh_from_db()
    assert room.empty_since is None
    room_leave(user=bob)
    room.refresh_from_db()
    assert room.empty_since is not None

    room_join(user=alice, room_id=room.pk)

    room.refresh_from_db()
    assert room.empty_since is None


def test_an_idle_room_is_closed_and_the_lobby_told_on_commit(
    alice: User, django_capture_on_commit_callbacks: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    sent: list[dict[str, Any]] = []

    class Layer:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            sent.append(message)

    monkeypatch.setattr("shisanshui.publish.get_channel_layer", lambda: Layer())
    room = open_and_leave(alice)
    age(room, seconds=299)
    assert room_close_idle(room_id=room.pk, idle_seconds=300) is None
    age(room, seconds=301)

    with django_capture_on_commit_callbacks(execute=True):
        closed = room_close_idle(room_id=room.pk, idle_seconds=300)

    assert closed is not None and closed.status == RoomStatus.CLOSED
    assert [m["event"] for m in sent] == ["room.closed"]
    assert sent[0]["room"]["id"] == room.pk and sent[0]["room"]["status"] == "closed"
    assert room_close_idle(room_id=room.pk, idle_seconds=300) is None  # twice: nothing


def test_a_room_someone_sits_in_is_never_idle(alice: User, bob: User) -> None:
    room = open_and_leave(alice)
    age(room, seconds=3600)
    room_join(user=bob, room_id=room.pk)
    Room.objects.filter(pk=room.pk).update(empty_since=timezone.now() - timedelta(hours=1))

    assert rooms_idle(idle_seconds=300, limit=10) == []
    assert room_close_idle(room_id=room.pk, idle_seconds=300) is None
    assert Room.objects.get(pk=room.pk).status == RoomStatus.OPEN


def test_the_beat_task_closes_the_idle_rooms(
    settings: Any, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("shisanshui.publish.get_channel_layer", lambda: None)
    settings.LOBBY_IDLE_ROOM_SECONDS = 60
    idle = open_and_leave(make_player(), name="Idle")
    age(idle, seconds=61)
    open_and_leave(make_player(), name="Fresh")
    # A room from before empty_since existed: idle since it was opened.
    legacy = open_and_leave(make_player(), name="Legacy")
    Room.objects.filter(pk=legacy.pk).update(empty_since=None)
    age(legacy, seconds=61, field="created_at")
    busy = room_create(owner=make_player(), name="Busy", base_score=100, seats=2)
    age(busy, seconds=3600, field="created_at")

    assert tasks.close_idle_rooms() == 2
    status = dict(Room.objects.values_list("name", "status"))
    assert status == {"Idle": "closed", "Fresh": "open", "Legacy": "closed", "Busy": "open"}
    assert tasks.close_idle_rooms() == 0


def test_the_sweep_is_on_the_beat_schedule() -> None:
    entries = django_settings.CELERY_BEAT_SCHEDULE.values()
    assert {"task": "lobby.tasks.close_idle_rooms", "schedule": 30.0} in entries
    assert django_settings.LOBBY_IDLE_ROOM_SECONDS == 300


# The paginated room list.


def many_rooms(count: int, owner: User, rules: RuleConfiguration, **fields: Any) -> list[Room]:
    """Open rooms written directly (the services would refuse one owner so many)."""
    defaults = {"base_score": 100, "seats": 4, "entry_minimum": 32_400}
    return Room.objects.bulk_create(
        Room(name=f"Room {i}", rules=rules, owner=owner, **{**defaults, **fields})
        for i in range(count)
    )


def test_a_page_is_newest_first_with_the_total(alice: User, rules: RuleConfiguration) -> None:
    rooms = many_rooms(120, alice, rules)
    ids = sorted((r.pk for r in rooms), reverse=True)

    first = room_page()
    third = room_page(page=3)
    past = room_page(page=99)

    assert [r.pk for r in first.rooms] == ids[:50]
    assert (first.number, first.pages, first.total, first.size) == (1, 3, 120, 50)
    assert [r.pk for r in third.rooms] == ids[100:]
    assert past.number == 3


def test_a_page_keeps_its_filters(alice: User, rules: RuleConfiguration) -> None:
    many_rooms(3, alice, rules, base_score=100)
    fifties = many_rooms(2, alice, rules, base_score=50)

    page = room_page(base_score=50, size=1)

    assert (page.total, page.pages, [r.pk for r in page.rooms]) == (2, 2, [fifties[-1].pk])


def rows_of(body: str) -> list[str]:
    tbody = body.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr data-room="(\d+)"', tbody)


def test_the_lobby_page_stays_small_with_150_rooms(
    client: Client, alice: User, rules: RuleConfiguration
) -> None:
    client.force_login(alice)
    many_rooms(50, alice, rules, base_score=100)
    one_page = len(client.get("/lobby/").content)
    many_rooms(100, alice, rules, base_score=100)
    many_rooms(5, alice, rules, base_score=7)

    response = client.get("/lobby/")
    body = response.content.decode()
    older = client.get("/lobby/?base_score=100&page=3").content.decode()

    assert len(rows_of(body)) == 50
    # A page weighs the same however many rooms are open (about 1.4 KB a row, 15 KB without).
    assert abs(len(response.content) - one_page) < 1_000
    # (A row names its room and rules in both languages when the platform named them.)
    assert len(response.content) < 105_000, len(response.content)
    assert "Page 1 of 4 · 155 open rooms" in body
    assert 'href="/lobby/?page=2"' in body
    assert len(rows_of(older)) == 50
    assert 'href="/lobby/?base_score=100&amp;page=2"' in older  # filters kept
    assert "Page 3 of 3 · 150 open rooms" in older

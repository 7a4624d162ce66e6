"""The lobby's reads: the room list and its filters, a room's public row, who may see a code."""

from typing import Any

import pytest
from django.utils import translation

from accounts.models import User
from lobby.selectors import (
    room_code_visible_to,
    room_get,
    room_list,
    room_row,
    room_rows,
    room_view,
    seat_for_user,
    seat_view,
)
from lobby.services import room_close, room_create, room_join, room_leave
from tests.lobby.conftest import MakePlayer


def open_room(owner: User, **fields: Any) -> Any:
    return room_create(owner=owner, **{"name": "Table", "base_score": 100, "seats": 4, **fields})


@pytest.fixture
def rooms(make_player: MakePlayer) -> dict[str, Any]:
    """Four open rooms of different kinds and one closed room."""
    players = [make_player(username=f"p{i}", coins=1_000_000) for i in range(6)]
    small = open_room(players[0], name="Small", base_score=10, seats=2)
    room_join(user=players[1], room_id=small.pk)  # full
    big = open_room(players[2], name="Big", base_score=1000, seats=4)
    three = open_room(players[3], name="Three", base_score=100, seats=3, private=True)
    four = open_room(players[4], name="Four", base_score=100, seats=4)
    gone = open_room(players[5], name="Gone")
    room_leave(user=players[5])
    room_close(user=players[5], room_id=gone.pk)
    return {"small": small, "big": big, "three": three, "four": four, "players": players}


def names(queryset: Any) -> list[str]:
    return [room.name for room in queryset]


def test_the_list_holds_open_rooms_oldest_first(rooms: dict[str, Any]) -> None:
    assert names(room_list()) == ["Small", "Big", "Three", "Four"]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"base_score": 100}, ["Three", "Four"]),
        ({"base_score": 7}, []),
        ({"seats": 4}, ["Big", "Four"]),
        ({"seats": 2}, ["Small"]),
        ({"has_free_seat": True}, ["Big", "Three", "Four"]),
        ({"has_free_seat": False}, ["Small"]),
        ({"base_score": 100, "seats": 4, "has_free_seat": True}, ["Four"]),
    ],
)
def test_the_list_filters(
    rooms: dict[str, Any], filters: dict[str, Any], expected: list[str]
) -> None:
    assert names(room_list(**filters)) == expected


def test_a_row_is_the_rooms_public_face(rooms: dict[str, Any]) -> None:
    small = room_get(room_id=rooms["small"].pk)

    with translation.override("en"):
        row = room_row(room=small)

    assert row == {
        "id": small.pk,
        "name": "Small",
        "names": None,  # typed: shown as entered
        "rules": {
            "id": small.rules.pk,
            "name": "Standard",  # the platform's "Standard 标准", on an English page
            "names": {"zh": "标准", "en": "Standard"},
        },
        "variant": {
            "tags": ["classic"],
            "label": "Classic",
            "labels": {"zh": "经典", "en": "Classic"},
        },
        "base_score": 10,
        "seats": 2,
        "seats_taken": 2,
        "entry_minimum": 3_240,
        "private": False,
        "status": "open",
        "owner": "p0",
        "players": [
            {"position": 0, "username": "p0", "name": "p0", "nickname": None},
            {"position": 1, "username": "p1", "name": "p1", "nickname": None},
        ],
        "people": 2,
        "bot_level": "strong",
        "match": None,
        "allow_spectators": True,
        "watchers": 0,
        "version": small.version,
    }


def test_a_private_rooms_row_never_holds_its_code(rooms: dict[str, Any]) -> None:
    three = room_get(room_id=rooms["three"].pk)

    row = room_row(room=three)

    assert row["private"] is True
    assert "code" not in row
    assert three.code not in repr(row)


def test_the_rows_of_any_number_of_rooms_cost_two_queries(
    rooms: dict[str, Any], django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(2):  # the rooms, then their seats with their players
        rows = room_rows(rooms=room_list())

    assert len(rows) == 4


def test_the_code_is_visible_to_the_owner_and_seated_players_only(
    rooms: dict[str, Any], make_player: MakePlayer
) -> None:
    owner = rooms["players"][3]
    guest, stranger = make_player(), make_player()
    three = rooms["three"]
    room_join(user=guest, room_id=three.pk, code=three.code)

    loaded = room_get(room_id=three.pk)
    assert room_code_visible_to(room=loaded, user=owner)
    assert room_code_visible_to(room=loaded, user=guest)
    assert not room_code_visible_to(room=loaded, user=stranger)
    assert room_view(room_id=three.pk, user=stranger)["code"] is None
    assert room_view(room_id=three.pk, user=guest)["code"] == three.code
    assert room_view(room_id=rooms["four"].pk, user=owner)["code"] is None


def test_seat_for_user_and_seat_view(rooms: dict[str, Any], make_player: MakePlayer) -> None:
    p1 = rooms["players"][1]

    assert seat_for_user(user=p1).position == 1
    assert seat_view(user=p1)["room"]["name"] == "Small"
    assert seat_view(user=p1)["position"] == 1
    assert seat_view(user=make_player()) is None


def test_an_unknown_room_is_none(db: None) -> None:
    assert room_get(room_id=123_456) is None
    assert room_view(room_id=123_456, user=None) is None


def test_a_rows_query_leaves_the_tables_state_unread(
    rooms: dict[str, Any], django_assert_num_queries: Any
) -> None:
    """A row needs only its table's watchers: the state (every hand and the rules) is not
    read, on each lobby snapshot and each seat taken or freed (a table's leave included)."""
    from games.models import Table

    # Two rooms with a table: its state is what must stay unread.
    for room in (rooms["small"], rooms["big"]):
        Table.objects.get_or_create(room=room, defaults={"state": {"padding": "x" * 1000}})

    with django_assert_num_queries(4) as captured:  # the list's two, then the one room's two
        rows = room_rows(rooms=room_list())
        one = room_get(room_id=rooms["small"].pk)
    assert one is not None

    for rooms_query in (captured.captured_queries[0]["sql"], captured.captured_queries[2]["sql"]):
        assert '"games_table"."watchers"' in rooms_query
    assert all('"games_table"."state"' not in q["sql"] for q in captured.captured_queries)
    assert [r["watchers"] for r in rows] == [0, 0, 0, 0]
    assert "state" in one.table.get_deferred_fields()

"""The lobby page, /lobby/, in both languages, and the form posts behind it."""

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client

from accounts.models import User
from lobby.models import Room, RoomStatus, Seat
from lobby.services import room_create, room_join, room_leave
from tests.lobby.conftest import MakePlayer, lobby_counts

LOBBY = "/lobby/"


def open_room(owner: User, **fields: Any) -> Room:
    return room_create(owner=owner, **{"name": "Table", "base_score": 100, "seats": 4, **fields})


@pytest.fixture
def page(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def rows_of(body: str) -> list[str]:
    """The room ids listed in the page's table body (the row template excluded)."""
    tbody = body.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr data-room="(\d+)"', tbody)


def test_the_lobby_needs_a_login(client: Client, rules: Any) -> None:
    response = client.get(LOBBY)

    assert response.status_code == 302
    assert response["Location"] == "/accounts/login/?next=/lobby/"


def test_the_lobby_renders_in_english(page: Client, alice: User, make_player: MakePlayer) -> None:
    bob = make_player(username="bob")
    open_room(bob, name="Bob's table", base_score=200, seats=3, private=True)

    response = page.get(LOBBY, HTTP_ACCEPT_LANGUAGE="en")

    assert response.status_code == 200
    body = response.content.decode()
    assert '<html lang="en">' in body
    for text in [
        "Lobby",
        "Quick join",
        "Join by code",
        "Open a room",
        "Entry minimum",
        "Bob&#x27;s table",
        "Standard 标准",
        "1 / 3",
        "64,800",  # 108 × 200 × 3
        "🔒 Private",
        "Play now against bots",
        "More ways to play",
    ]:
        assert text in body, text
    assert 'data-balance="100000"' in body and "100,000" in body
    assert 'data-socket="/ws/lobby/"' in body
    assert "/static/lobby/lobby.js" in body and "/static/lobby/lobby.css" in body
    assert 'id="lobby-row-template"' in body and 'id="lobby-strings"' in body
    assert "cdn" not in body.lower()


def test_the_lobby_renders_in_chinese(page: Client, alice: User) -> None:
    open_room(alice, name="我的桌")

    response = page.get(LOBBY, HTTP_ACCEPT_LANGUAGE="zh-Hans")

    body = response.content.decode()
    assert '<html lang="zh-hans">' in body
    for text in [
        "大厅",
        "快速加入",
        "凭房间码加入",
        "开房间",
        "入座门槛",
        "底分",
        "余额",
        "金币",
        "我的桌",
    ]:
        assert text in body, text
    assert "你正坐在“我的桌”这桌" in body
    assert "Quick join" not in body and "Entry minimum" not in body
    strings = json.loads(body.split('id="lobby-strings" type="application/json">')[1].split("<")[0])
    assert strings["disconnected"] == "正在重新连接…"  # the script's strings are translated too


def test_a_private_rooms_code_is_shown_to_its_owner_only(
    client: Client, alice: User, bob: User
) -> None:
    room = open_room(alice, private=True)

    client.force_login(alice)
    assert room.code in client.get(LOBBY).content.decode()
    client.force_login(bob)
    assert room.code not in client.get(LOBBY).content.decode()


def test_the_filters(page: Client, make_player: MakePlayer) -> None:
    a = open_room(make_player(), base_score=100, seats=2)
    full = open_room(make_player(), base_score=100, seats=2)
    room_join(user=make_player(), room_id=full.pk)
    c = open_room(make_player(), base_score=50, seats=4)

    def listed(query: str) -> list[str]:
        return rows_of(page.get(f"{LOBBY}?{query}").content.decode())

    # Newest first.
    assert listed("") == [str(c.pk), str(full.pk), str(a.pk)]
    assert listed("base_score=100") == [str(full.pk), str(a.pk)]
    assert listed("seats=4") == [str(c.pk)]
    assert listed("base_score=100&free=on") == [str(a.pk)]
    assert listed("base_score=nonsense") == [str(c.pk), str(full.pk), str(a.pk)]


# The form posts: each redirects back with a message.


def test_create_join_leave_and_close_through_the_forms(
    client: Client, alice: User, bob: User
) -> None:
    client.force_login(alice)
    response = client.post(
        "/lobby/create/",
        {"name": "Forms", "base_score": 100, "seats": 2, "private": "on"},
        follow=True,
    )
    room = Room.objects.get()
    assert messages_of(response) == ["You opened “Forms”."]
    assert room.is_private and Seat.objects.get().user == alice

    client.force_login(bob)
    response = client.post("/lobby/join/", {"code": room.code}, follow=True)
    assert messages_of(response) == ["You are seated in “Forms”, seat 2."]

    response = client.post("/lobby/leave/", follow=True)
    assert messages_of(response) == ["You left “Forms”."]

    client.force_login(alice)
    client.post("/lobby/leave/", follow=True)
    response = client.post("/lobby/close/", {"room": room.pk}, follow=True)
    assert messages_of(response) == ["You closed “Forms”."]
    room.refresh_from_db()
    assert room.status == RoomStatus.CLOSED


def test_join_from_the_list_and_quick_join(
    client: Client, alice: User, bob: User, carol: User
) -> None:
    room = open_room(alice, seats=3)

    client.force_login(bob)
    client.post("/lobby/join/", {"room": room.pk}, follow=True)
    client.force_login(carol)
    response = client.post("/lobby/quick-join/", {"base_score": 100, "seats": 3}, follow=True)

    assert messages_of(response) == ["You are seated in “Table”, seat 3."]
    assert Seat.objects.filter(room=room).count() == 3


@pytest.mark.parametrize(
    ("url", "data", "message"),
    [
        ("/lobby/create/", {"name": "T", "base_score": 0, "seats": 4}, "The base score must be"),
        ("/lobby/create/", {"name": "T", "base_score": 100, "seats": 7}, "Seats:"),
        ("/lobby/join/", {"code": "NOSUCH"}, "There is no such room."),
        ("/lobby/join/", {"room": 999999}, "There is no such room."),
        ("/lobby/quick-join/", {"base_score": "x", "seats": 4}, "Base score:"),
        ("/lobby/leave/", {}, "You are not seated in any room."),
        ("/lobby/close/", {"room": 999999}, "There is no such room."),
    ],
)
def test_refused_forms_say_why_and_change_nothing(
    page: Client, url: str, data: dict[str, Any], message: str
) -> None:
    response = page.post(url, data, follow=True)

    assert response.redirect_chain == [(LOBBY, 302)]
    assert any(m.startswith(message) for m in messages_of(response)), messages_of(response)
    assert lobby_counts() == (0, 0)


def test_a_refusal_in_chinese(page: Client, alice: User, make_player: MakePlayer) -> None:
    room = open_room(make_player(), seats=2)
    room_join(user=make_player(), room_id=room.pk)

    response = page.post(
        "/lobby/join/", {"room": room.pk}, follow=True, HTTP_ACCEPT_LANGUAGE="zh-hans"
    )

    assert messages_of(response) == ["这个房间已满座。"]


def test_the_forms_need_a_post_and_a_login(client: Client, page: Client, rules: Any) -> None:
    assert page.get("/lobby/leave/").status_code == 405
    assert Client().post("/lobby/create/", {"name": "T"}).status_code == 302
    assert lobby_counts() == (0, 0)


def test_the_page_shows_the_players_seat_and_leave_button(
    page: Client, alice: User, bob: User
) -> None:
    room = open_room(bob, name="Bob's")
    room_join(user=alice, room_id=room.pk)
    room_leave(user=bob)

    body = page.get(LOBBY).content.decode()

    assert "You are seated at table “Bob&#x27;s”" in body
    assert f'href="/games/table/{room.pk}/"' in body
    assert 'action="/lobby/leave/"' in body


def test_the_script_and_styles_are_served_from_this_project() -> None:
    script = Path(finders.find("lobby/lobby.js")).read_text()

    assert finders.find("lobby/lobby.css")
    assert "new WebSocket(" in script and "http" not in script.replace("https:", "")

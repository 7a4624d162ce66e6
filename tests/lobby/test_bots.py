"""The lobby's bot options: `bots` when opening a room and `with_bots` for quick-join, through
the page's forms, the HTTP API (and its schema) and the WebSocket. Bad values are refused with
`invalid_bot_count` (or the API's `invalid`) and change nothing."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
import yaml
from channels.db import database_sync_to_async
from django.test import Client
from django.utils import translation
from rest_framework.test import APIClient

from accounts.models import Transaction, User
from lobby.errors import InvalidBotCount
from lobby.models import Room, Seat
from tests.lobby.conftest import lobby_counts
from tests.lobby.test_consumers import TIMEOUT, Socket, connect

ROOMS = "/api/lobby/rooms/"
CREATE = {"name": "Solo", "base_score": 100, "seats": 4}


@asynccontextmanager
async def lobby_socket(user: User) -> AsyncIterator[Socket]:
    """A connected lobby socket whose snapshot has been read; closed at the end."""
    communicator = await connect(user)
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    try:
        socket = Socket(communicator)
        await socket.next("snapshot")
        yield socket
    finally:
        await communicator.disconnect()


def bots_of(room_id: int) -> int:
    return Seat.objects.filter(room_id=room_id, user__is_bot=True).count()


def unchanged() -> tuple[int, int, int, int]:
    return (*lobby_counts(), Transaction.objects.count(), User.objects.filter(is_bot=True).count())


@pytest.fixture
def api(alice: User) -> APIClient:
    client = APIClient()
    client.force_login(alice)
    return client


def test_the_api_opens_a_room_with_bots(api: APIClient) -> None:
    response = api.post(ROOMS, {**CREATE, "bots": 3}, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["seats_taken"] == 4
    assert bots_of(body["id"]) == 3


def test_the_api_opens_a_room_without_bots_by_default(api: APIClient) -> None:
    response = api.post(ROOMS, CREATE, format="json")

    assert response.status_code == 201
    assert response.json()["seats_taken"] == 1 and bots_of(response.json()["id"]) == 0


@pytest.mark.parametrize(
    ("bots", "code"),
    [(4, "invalid_bot_count"), (-1, "invalid_bot_count"), ("many", "invalid"), (None, "invalid")],
)
def test_the_api_refuses_a_bad_bot_count(api: APIClient, bots: Any, code: str) -> None:
    before = unchanged()

    response = api.post(ROOMS, {**CREATE, "seats": 4, "bots": bots}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == code
    assert unchanged() == before


def test_the_api_quick_joins_with_bots(api: APIClient, alice: User) -> None:
    response = api.post(
        "/api/lobby/quick-join/", {"base_score": 100, "seats": 3, "with_bots": True}, format="json"
    )

    assert response.status_code == 200, response.content
    room = response.json()["room"]
    assert room["seats_taken"] == 3 and bots_of(room["id"]) == 2
    assert response.json()["position"] == 0


def test_the_schema_documents_the_bot_options(client: Client, alice: User) -> None:
    client.force_login(alice)
    schemas = yaml.safe_load(client.get("/api/schema/").content)["components"]["schemas"]

    assert schemas["RoomCreateInput"]["properties"]["bots"]["type"] == "integer"
    assert schemas["QuickJoinInput"]["properties"]["with_bots"]["type"] == "boolean"


def test_the_page_form_opens_a_room_with_bots(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get("/lobby/")
    assert b'<select name="bots"' in page.content  # a labelled choice, "no bots" first
    assert b'action="/lobby/play/"' in page.content  # Play now replaced the with_bots box
    assert b'name="with_bots"' not in page.content

    client.post("/lobby/create/", {**CREATE, "bots": "2"}, follow=True)

    room = Room.objects.get()
    assert bots_of(room.pk) == 2


def test_the_page_form_refuses_too_many_bots_with_a_message(client: Client, alice: User) -> None:
    client.force_login(alice)
    before = unchanged()

    response = client.post("/lobby/create/", {**CREATE, "seats": "2", "bots": "2"}, follow=True)

    assert [str(m) for m in response.context["messages"]] == [
        "A room of 2 seats takes 0 to 1 bots, not 2."
    ]
    assert unchanged() == before


def test_the_page_quick_join_with_bots(client: Client, alice: User) -> None:
    client.force_login(alice)

    client.post("/lobby/quick-join/", {"base_score": 100, "seats": 2, "with_bots": "on"})

    seat = Seat.objects.get(user=alice)
    assert bots_of(seat.room_id) == 1


def test_the_bot_count_error_reads_in_chinese() -> None:
    with translation.override("zh-hans"):
        message = InvalidBotCount(bots=5, seats=4, max=3).message
    assert "机器人" in message


@pytest.mark.asyncio
@pytest.mark.usefixtures("transactional_db")
async def test_the_socket_opens_a_room_with_bots(alice: User) -> None:
    async with lobby_socket(alice) as socket:
        await socket.send({"type": "room.create", "id": 1, **CREATE, "bots": 2})
        ok = await socket.next("ok")
        assert ok["room"]["seats_taken"] == 3

        await socket.send({"type": "room.leave", "id": 2})
        left = await socket.next("ok")
        assert left["seat"] is None and left["room"]["seats_taken"] == 0  # the bots left too


@pytest.mark.asyncio
@pytest.mark.usefixtures("transactional_db")
async def test_the_socket_refuses_a_bad_bot_count(alice: User) -> None:
    before = await database_sync_to_async(unchanged)()
    async with lobby_socket(alice) as socket:
        await socket.send({"type": "room.create", "id": 7, **CREATE, "seats": 2, "bots": 3})
        error = await socket.next("error")

    assert error["id"] == 7 and error["error"]["code"] == "invalid_bot_count"
    assert await database_sync_to_async(unchanged)() == before


# Bot levels (games.rules.levels): chosen when a room seats bots, shown in its row.


def test_the_api_opens_a_room_of_easy_bots_and_its_row_says_so(api: APIClient) -> None:
    response = api.post(ROOMS, {**CREATE, "bots": 2, "bot_level": "easy"}, format="json")

    assert response.status_code == 201, response.content
    body = response.json()
    assert body["bot_level"] == "easy"
    assert Room.objects.get(pk=body["id"]).bot_level == "easy"


def test_bots_play_at_the_strong_level_by_default(api: APIClient) -> None:
    body = api.post(ROOMS, {**CREATE, "bots": 1}, format="json").json()
    assert body["bot_level"] == "strong"


@pytest.mark.parametrize("level", ["godlike", "", 3, None])
def test_the_api_refuses_an_unknown_bot_level(api: APIClient, level: Any) -> None:
    before = unchanged()

    response = api.post(ROOMS, {**CREATE, "bots": 1, "bot_level": level}, format="json")

    assert response.status_code == 400, response.content
    assert response.json()["error"]["code"] == "invalid"
    assert "bot_level" in response.json()["error"]["fields"]
    assert unchanged() == before


def test_the_service_refuses_an_unknown_bot_level_whatever_calls_it(alice: User) -> None:
    from lobby.errors import InvalidBotLevel
    from lobby.services import room_create

    before = unchanged()
    with pytest.raises(InvalidBotLevel) as refused:
        room_create(owner=alice, base_score=100, seats=4, bots=1, bot_level="godlike")
    assert refused.value.code == "invalid_bot_level"
    assert unchanged() == before
    with translation.override("zh-hans"):
        assert "机器人水平" in InvalidBotLevel(level="x", levels="easy").message


def test_the_api_quick_joins_with_expert_bots(api: APIClient) -> None:
    response = api.post(
        "/api/lobby/quick-join/",
        {"base_score": 100, "seats": 2, "with_bots": True, "bot_level": "expert"},
        format="json",
    )

    assert response.status_code == 200, response.content
    assert response.json()["room"]["bot_level"] == "expert"


def test_the_page_form_asks_the_bot_level(client: Client, alice: User) -> None:
    client.force_login(alice)
    page = client.get("/lobby/")
    assert b'<select name="bot_level"' in page.content

    client.post("/lobby/create/", {**CREATE, "bots": "2", "bot_level": "normal"}, follow=True)

    room = Room.objects.get()
    assert room.bot_level == "normal" and bots_of(room.pk) == 2
    listed = client.get("/lobby/").content.decode()
    assert "Normal bots" in listed


def test_the_schema_documents_the_bot_level(client: Client, alice: User) -> None:
    client.force_login(alice)
    schemas = yaml.safe_load(client.get("/api/schema/").content)["components"]["schemas"]

    assert "bot_level" in schemas["RoomCreateInput"]["properties"]
    assert "bot_level" in schemas["Room"]["properties"]


@pytest.mark.asyncio
@pytest.mark.usefixtures("transactional_db")
async def test_the_socket_opens_a_room_of_normal_bots_and_refuses_a_bad_level(
    alice: User,
) -> None:
    async with lobby_socket(alice) as socket:
        await socket.send({"type": "room.create", "id": 1, **CREATE, "bots": 1, "bot_level": "x"})
        error = await socket.next("error")
        assert error["error"]["code"] == "malformed_message"  # the socket's bad-field answer
        assert "bot_level" in error["error"]["message"]
        await socket.send(
            {"type": "room.create", "id": 2, **CREATE, "bots": 1, "bot_level": "normal"}
        )
        ok = await socket.next("ok")
        assert ok["room"]["bot_level"] == "normal"

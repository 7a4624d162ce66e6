"""The lobby's WebSocket, through the project's whole ASGI stack (origin check, session auth,
routing) and the configured channel layer: Redis when REDIS_URL is set, as under `make test`.

These tests use `transactional_db`: the services send their events in transaction.on_commit,
which fires only when a transaction really commits.
"""

import json
import os
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client
from django.utils import translation

from accounts.models import User
from lobby.consumers import MAX_MESSAGE_BYTES
from lobby.models import Room, RoomStatus
from lobby.selectors import room_list, room_rows
from lobby.services import room_create, room_join
from shisanshui.asgi import application
from tests.lobby.conftest import MakePlayer, lobby_counts

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]

TIMEOUT = 3


@database_sync_to_async
def session_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


async def connect(
    user: User | None, *, origin: str = "http://testserver", language: str = ""
) -> WebsocketCommunicator:
    headers = [(b"origin", origin.encode())]
    if user is not None:
        cookie = f"{settings.SESSION_COOKIE_NAME}={await session_cookie(user)}"
        if language:
            cookie += f"; {settings.LANGUAGE_COOKIE_NAME}={language}"
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, "/ws/lobby/", headers=headers)


class Socket:
    """A connected client that keeps the frames it has read but not yet asked for."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.unread: list[dict[str, Any]] = []

    async def send(self, message: Any) -> None:
        await self.communicator.send_to(text_data=json.dumps(message))

    async def next(
        self, kind: str, where: Callable[[dict[str, Any]], bool] = lambda m: True
    ) -> dict[str, Any]:
        """The first frame of this type (matching `where`), read or still to come."""
        for index, frame in enumerate(self.unread):
            if frame["type"] == kind and where(frame):
                return self.unread.pop(index)
        while True:
            frame = json.loads(await self.communicator.receive_from(timeout=TIMEOUT))
            if frame["type"] == kind and where(frame):
                return frame
            self.unread.append(frame)

    async def nothing_more(self) -> None:
        assert self.unread == []
        assert await self.communicator.receive_nothing(timeout=0.3)


@pytest_asyncio.fixture
async def sockets() -> AsyncIterator[Callable[..., Any]]:
    """open(user, **options): a connected Socket whose snapshot has been read; all are closed
    at the end."""
    opened: list[WebsocketCommunicator] = []

    async def open_socket(user: User, **options: Any) -> tuple[Socket, dict[str, Any]]:
        communicator = await connect(user, **options)
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        opened.append(communicator)
        socket = Socket(communicator)
        return socket, await socket.next("snapshot")

    yield open_socket
    for communicator in opened:
        await communicator.disconnect()


def rows() -> list[Any]:
    """The open rooms' rows as the first page of the snapshot has them: newest first, in the
    language of a socket without a language cookie (the variant's `label`)."""
    with translation.override(settings.LANGUAGE_CODE):
        return json.loads(json.dumps(room_rows(rooms=room_list().order_by("-id"))))


# Connecting.


async def test_the_channel_layer_is_redis_when_redis_url_is_set() -> None:
    if not os.environ.get("REDIS_URL"):
        pytest.skip("REDIS_URL is not set: the in-process layer is in use")

    assert type(get_channel_layer()).__name__ == "BatchedPubSubChannelLayer"


async def test_an_anonymous_socket_is_refused(rules: Any) -> None:
    communicator = await connect(None)

    connected, _ = await communicator.connect(timeout=TIMEOUT)

    assert not connected


async def test_a_socket_from_another_site_is_refused(alice: User) -> None:
    communicator = await connect(alice, origin="http://evil.example")

    connected, _ = await communicator.connect(timeout=TIMEOUT)

    assert not connected


async def test_a_client_gets_a_snapshot_first(
    alice: User, bob: User, sockets: Callable[..., Any]
) -> None:
    private = await database_sync_to_async(room_create)(
        owner=bob, name="Hidden", base_score=100, seats=4, private=True
    )
    await database_sync_to_async(room_create)(owner=alice, name="Open", base_score=50, seats=2)

    _socket, snapshot = await sockets(alice)

    assert snapshot["rooms"] == await database_sync_to_async(rows)()
    assert [r["name"] for r in snapshot["rooms"]] == ["Open", "Hidden"]
    assert "code" not in snapshot["rooms"][1] and private.code not in json.dumps(snapshot)
    assert snapshot["seat"]["room"]["name"] == "Open"
    assert snapshot["seat"]["position"] == 0


# Two clients see each other's changes.


async def test_two_clients_see_each_others_changes(
    alice: User, bob: User, sockets: Callable[..., Any]
) -> None:
    a, _ = await sockets(alice)
    b, _ = await sockets(bob)

    await a.send({"type": "room.create", "id": 1, "name": "Ours", "base_score": 100, "seats": 2})
    ok = await a.next("ok")
    created = await b.next("room.created")
    assert ok["id"] == 1 and ok["action"] == "room.create"
    assert ok["seat"] == {"room": {**created["room"], "code": None}, "position": 0}
    room_id = created["room"]["id"]
    assert created["room"]["players"] == [
        {"position": 0, "username": "alice", "name": "alice", "nickname": None}
    ]

    await b.send({"type": "room.join", "id": "b-1", "room": room_id})
    assert (await b.next("ok"))["seat"]["position"] == 1
    updated = await a.next("room.updated")
    assert updated["room"]["seats_taken"] == 2
    assert updated["room"]["version"] > created["room"]["version"]

    await b.send({"type": "room.leave"})
    await b.next("ok")
    await a.send({"type": "room.leave"})
    await a.next("ok")
    for socket in (a, b):
        emptied = await socket.next("room.updated", lambda m: m["room"]["seats_taken"] == 0)
        assert emptied["room"]["owner"] == "alice"

    await a.send({"type": "room.close", "room": room_id})
    for socket in (a, b):
        closed = await socket.next("room.closed")
        assert closed["room"]["id"] == room_id and closed["room"]["status"] == "closed"
    assert (await database_sync_to_async(Room.objects.get)(pk=room_id)).status == RoomStatus.CLOSED


async def test_a_change_made_over_http_reaches_the_sockets(
    alice: User, bob: User, sockets: Callable[..., Any]
) -> None:
    a, _ = await sockets(alice)

    room = await database_sync_to_async(room_create)(
        owner=bob, name="By HTTP", base_score=100, seats=4
    )
    created = await a.next("room.created")
    await database_sync_to_async(room_join)(user=alice, room_id=room.pk)
    updated = await a.next("room.updated")

    assert created["room"]["name"] == "By HTTP" and updated["room"]["seats_taken"] == 2


async def test_private_rooms_are_announced_without_their_code(
    alice: User, bob: User, sockets: Callable[..., Any]
) -> None:
    a, _ = await sockets(alice)
    b, _ = await sockets(bob)

    await a.send(
        {"type": "room.create", "name": "Secret", "base_score": 100, "seats": 4, "private": True}
    )
    ok = await a.next("ok")
    created = await b.next("room.created")

    code = ok["room"]["code"]
    assert len(code) == 6  # the creator is told the code ...
    assert created["room"]["private"] is True
    assert "code" not in created["room"] and code not in json.dumps(created)  # ... nobody else

    await b.send({"type": "room.join_by_code", "code": code.lower()})
    assert (await b.next("ok"))["room"]["code"] == code


async def test_quick_join_over_the_socket(
    alice: User, bob: User, sockets: Callable[..., Any]
) -> None:
    a, _ = await sockets(alice)
    b, _ = await sockets(bob)

    await a.send({"type": "room.quick_join", "base_score": 100, "seats": 2})
    first = await a.next("ok")
    await b.send({"type": "room.quick_join", "base_score": 100, "seats": 2})
    second = await b.next("ok")

    assert first["room"]["id"] == second["room"]["id"]
    assert (await a.next("room.updated"))["room"]["seats_taken"] == 2


async def test_snapshot_and_ping_on_request(alice: User, sockets: Callable[..., Any]) -> None:
    a, _ = await sockets(alice)

    await a.send({"type": "ping", "id": 7})
    assert await a.next("pong") == {"type": "pong", "id": 7}
    await a.send({"type": "snapshot"})
    assert (await a.next("snapshot"))["rooms"] == []


# Bad input: an error frame, nothing changed, the socket still open.


@pytest.mark.parametrize(
    ("frame", "code"),
    [
        ("not json {", "malformed_message"),
        ("[1, 2]", "malformed_message"),
        ('"room.create"', "malformed_message"),
        ('{"id": 3}', "malformed_message"),
        ('{"type": 42}', "malformed_message"),
        ('{"type": "room.explode"}', "unknown_message_type"),
        (
            '{"type": "room.create", "name": "T", "base_score": "x", "seats": 4}',
            "malformed_message",
        ),
        ('{"type": "room.join"}', "malformed_message"),
        ('{"type": "room.join", "room": 999999}', "room_not_found"),
        (
            '{"type": "room.create", "name": "T", "base_score": 100, "seats": 9}',
            "invalid_seat_count",
        ),
        ('{"type": "room.leave"}', "not_seated"),
        ("x" * (MAX_MESSAGE_BYTES + 1), "message_too_large"),
        (json.dumps({"type": "ping", "pad": "好" * MAX_MESSAGE_BYTES}), "message_too_large"),
    ],
)
async def test_bad_messages_get_an_error_frame_and_change_nothing(
    alice: User, sockets: Callable[..., Any], frame: str, code: str
) -> None:
    a, _ = await sockets(alice)
    before = await database_sync_to_async(lobby_counts)()

    await a.communicator.send_to(text_data=frame)
    error = await a.next("error")

    assert error["error"]["code"] == code
    assert error["error"]["message"]
    assert await database_sync_to_async(lobby_counts)() == before
    await a.send({"type": "ping"})
    await a.next("pong")  # still connected
    await a.nothing_more()  # and no event went out


async def test_a_binary_frame_gets_an_error_frame(alice: User, sockets: Callable[..., Any]) -> None:
    a, _ = await sockets(alice)

    await a.communicator.send_to(bytes_data=b'{"type": "ping"}')

    assert (await a.next("error"))["error"]["code"] == "malformed_message"


async def test_a_refusal_echoes_the_request_id_and_sends_no_event(
    alice: User, bob: User, carol: User, sockets: Callable[..., Any]
) -> None:
    room = await database_sync_to_async(room_create)(
        owner=alice, name="Two", base_score=100, seats=2
    )
    await database_sync_to_async(room_join)(user=bob, room_id=room.pk)
    c, _ = await sockets(carol)

    await c.send({"type": "room.join", "id": "join-1", "room": room.pk})
    error = await c.next("error")

    assert error == {
        "type": "error",
        "id": "join-1",
        "error": {"code": "room_full", "message": "Every seat in this room is taken."},
    }
    await c.nothing_more()


async def test_errors_are_in_the_players_language(
    make_player: MakePlayer, sockets: Callable[..., Any]
) -> None:
    poor = await database_sync_to_async(make_player)(coins=10)
    by_cookie, _ = await sockets(poor, language="zh-hans")

    await by_cookie.send({"type": "room.quick_join", "base_score": 100, "seats": 4})
    error = (await by_cookie.next("error"))["error"]

    assert error["code"] == "insufficient_coins"
    assert error["message"] == "入座此房间至少需要 32,400 金币；你只有 10 金币。"
    await by_cookie.communicator.send_to(text_data="{")
    assert "不是 JSON" in (await by_cookie.next("error"))["error"]["message"]

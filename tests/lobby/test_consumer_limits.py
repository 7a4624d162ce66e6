"""The lobby socket's limits (per user, across all its sockets) and its paginated snapshot,
through the whole ASGI stack and the configured channel layer."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings as django_settings

from accounts.models import User
from games.models import RuleConfiguration
from lobby.consumers import CLOSE_FLOOD
from lobby.models import Room
from lobby.services import room_create
from shisanshui.asgi import application
from tests.lobby.conftest import lobby_counts
from tests.lobby.test_consumers import TIMEOUT, Socket, session_cookie

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]

Open = Callable[..., Any]


async def communicator_for(user: User, path: str = "/ws/lobby/") -> WebsocketCommunicator:
    cookie = f"{django_settings.SESSION_COOKIE_NAME}={await session_cookie(user)}"
    headers = [(b"origin", b"http://testserver"), (b"cookie", cookie.encode())]
    return WebsocketCommunicator(application, path, headers=headers)


@pytest_asyncio.fixture
async def lobby() -> AsyncIterator[Open]:
    """lobby(user, path=...): a connected Socket and its first frame; all closed at the end."""
    opened: list[WebsocketCommunicator] = []

    async def open_socket(user: User, path: str = "/ws/lobby/") -> tuple[Socket, dict[str, Any]]:
        communicator = await communicator_for(user, path)
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        opened.append(communicator)
        first = json.loads(await communicator.receive_from(timeout=TIMEOUT))
        return Socket(communicator), first

    yield open_socket
    for communicator in opened:
        await communicator.disconnect()


def limits(settings: Any, **rates: str) -> None:
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        **{name.replace("_", "."): rate for name, rate in rates.items()},
    }


async def closed_with(socket: Socket) -> int:
    output = await socket.communicator.receive_output(timeout=TIMEOUT)
    assert output["type"] == "websocket.close", output
    return int(output["code"])


# Messages, per user across sockets.


async def test_one_users_messages_share_one_budget_across_sockets(
    settings: Any, alice: User, bob: User, lobby: Open
) -> None:
    limits(settings, lobby_message="4/minute")
    a, _ = await lobby(alice)
    b, _ = await lobby(alice)
    other, _ = await lobby(bob)
    for socket, n in ((a, 1), (a, 2), (b, 3), (b, 4)):
        await socket.send({"type": "ping", "id": n})
        assert (await socket.next("pong"))["id"] == n
    before = await database_sync_to_async(lobby_counts)()

    await a.send({"type": "room.create", "id": 5, "name": "Spam", "base_score": 100, "seats": 2})
    refused = await a.next("error")

    assert refused["id"] == 5
    assert refused["error"]["code"] == "rate_limited"
    assert 1 <= refused["error"]["retry_after"] <= 60
    assert "try again in" in refused["error"]["message"]
    assert await database_sync_to_async(lobby_counts)() == before
    await other.send({"type": "ping", "id": "b"})  # another user's budget is untouched
    assert (await other.next("pong"))["id"] == "b"


async def test_a_malformed_frame_over_budget_is_answered_rate_limited(
    settings: Any, alice: User, lobby: Open
) -> None:
    limits(settings, lobby_message="1/minute")
    socket, _ = await lobby(alice)
    await socket.send({"type": "ping"})
    await socket.next("pong")

    await socket.communicator.send_to(text_data="not json")

    assert (await socket.next("error"))["error"]["code"] == "rate_limited"


async def test_sustained_flooding_closes_the_socket_with_4429(
    settings: Any, alice: User, lobby: Open
) -> None:
    limits(settings, lobby_message="2/minute", lobby_flood="3/minute")
    socket, _ = await lobby(alice)
    for n in range(2):
        await socket.send({"type": "ping", "id": n})
        await socket.next("pong")
    for n in range(3):
        await socket.send({"type": "ping", "id": n})
        assert (await socket.next("error"))["error"]["code"] == "rate_limited"

    await socket.send({"type": "ping"})

    assert await closed_with(socket) == CLOSE_FLOOD == 4429


async def test_connections_are_budgeted_per_user(settings: Any, alice: User, lobby: Open) -> None:
    limits(settings, lobby_connect="2/minute")
    for _ in range(2):
        _socket, first = await lobby(alice)
        assert first["type"] == "snapshot"

    socket, first = await lobby(alice)

    assert first["type"] == "error" and first["error"]["code"] == "rate_limited"
    assert first["error"]["retry_after"] >= 1
    assert await closed_with(socket) == 4429


async def test_wrong_codes_over_the_socket_are_limited(alice: User, bob: User, lobby: Open) -> None:
    room = await database_sync_to_async(room_create)(
        owner=alice, name="Friends", base_score=100, seats=4, private=True
    )
    socket, _ = await lobby(bob)
    for n in range(5):
        await socket.send({"type": "room.join_by_code", "id": n, "code": "ZZZZZ9"})
        assert (await socket.next("error"))["error"]["code"] == "room_not_found"

    await socket.send({"type": "room.join_by_code", "id": "right", "code": room.code})

    refused = await socket.next("error")
    assert refused["id"] == "right" and refused["error"]["code"] == "rate_limited"
    assert refused["error"]["retry_after"] >= 1


# The paginated snapshot.


@database_sync_to_async
def rooms_of(owner: User, count: int, **fields: Any) -> list[int]:
    rules = RuleConfiguration.objects.get(is_default=True)
    defaults = {"base_score": 100, "seats": 4, "entry_minimum": 32_400}
    made = Room.objects.bulk_create(
        Room(name=f"R{i}", rules=rules, owner=owner, **{**defaults, **fields}) for i in range(count)
    )
    return [room.pk for room in made]


async def test_the_snapshot_is_a_page_newest_first(settings: Any, alice: User, lobby: Open) -> None:
    settings.LOBBY_PAGE_SIZE = 2
    hundreds = await rooms_of(alice, 3)
    fifties = await rooms_of(alice, 2, base_score=50)
    newest_first = sorted(hundreds + fifties, reverse=True)
    socket, first = await lobby(alice)

    await socket.send({"type": "snapshot", "id": 1, "page": 3})
    last = await socket.next("snapshot")
    await socket.send({"type": "snapshot", "id": 2, "page": 1, "base_score": 100, "free": True})
    filtered = await socket.next("snapshot")

    assert [r["id"] for r in first["rooms"]] == newest_first[:2]
    assert (first["page"], first["pages"], first["total"], first["page_size"]) == (1, 3, 5, 2)
    assert first["filters"] == {"base_score": None, "seats": None, "free": False, "variant": None}
    assert [r["id"] for r in last["rooms"]] == newest_first[4:]
    assert [r["id"] for r in filtered["rooms"]] == sorted(hundreds, reverse=True)[:2]
    assert (filtered["total"], filtered["pages"]) == (3, 2)
    assert filtered["filters"] == {
        "base_score": 100,
        "seats": None,
        "free": True,
        "variant": None,
    }


async def test_the_socket_url_chooses_the_first_page_and_filters(
    settings: Any, alice: User, lobby: Open
) -> None:
    settings.LOBBY_PAGE_SIZE = 2
    hundreds = await rooms_of(alice, 3)
    await rooms_of(alice, 2, base_score=50)

    _socket, first = await lobby(alice, "/ws/lobby/?page=2&base_score=100&seats=&free=on")
    _socket, lenient = await lobby(alice, "/ws/lobby/?page=x&seats=9&base_score=50")

    assert [r["id"] for r in first["rooms"]] == [min(hundreds)]
    assert (first["page"], first["total"], first["filters"]["free"]) == (2, 3, True)
    assert (lenient["page"], lenient["total"], lenient["filters"]["seats"]) == (1, 2, None)


async def test_a_bad_snapshot_request_is_refused(alice: User, lobby: Open) -> None:
    socket, _ = await lobby(alice)

    await socket.send({"type": "snapshot", "id": 1, "page": 0})
    await socket.send({"type": "snapshot", "id": 2, "seats": 9})

    for n in (1, 2):
        refused = await socket.next("error")
        assert refused["id"] == n and refused["error"]["code"] == "malformed_message"

"""The table socket's limits are per user, not per socket: frames (over them: close 4429 and a
cool-down), drafts, and connections per user and table. A refused connection never reaches
the table, so the other seats hear nothing of it."""

from __future__ import annotations

import asyncio
import json
import random
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games.live import deal as table_deal
from games.live import store as table_store
from games.models import Table, TableEvent
from games.rules.cards import format_cards
from tests.games.live.test_consumers import (
    Clock,
    Socket,
    communicator_for,
    make_room,
    to_arranging,
)

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]

TIMEOUT = 3


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[Clock]:
    """As in test_consumers: the services' clock, recorded timers, a seeded shuffle and a
    channel layer under a prefix of its own."""
    c = Clock(time.time())
    monkeypatch.setattr(table_store, "clock", lambda: c.now)
    rng = random.Random(11)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)
    layer = dict(settings.CHANNEL_LAYERS["default"])
    if layer["BACKEND"] != "channels.layers.InMemoryChannelLayer":
        layer["CONFIG"] = {**layer.get("CONFIG", {}), "prefix": f"test-{uuid.uuid4().hex}"}
    settings.CHANNEL_LAYERS = {"default": layer}
    yield c


def limits(settings: Any, **rates: str) -> None:
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        **{name.replace("_", "."): rate for name, rate in rates.items()},
    }


async def open_socket(user: Any, room: Any) -> Socket:
    communicator = await communicator_for(user, room.pk)
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    return Socket(communicator)


async def closed_code(socket: Socket) -> int:
    """Read until the server closes the socket; its close code."""
    while True:
        output = await socket.communicator.receive_output(timeout=TIMEOUT)
        if output["type"] == "websocket.close":
            return int(output["code"])
        if output["type"] == "websocket.send":
            socket.frames.append(json.loads(output["text"]))


async def refused(user: Any, room: Any) -> dict[str, Any]:
    """A connection that the limits refuse: its one error frame (then it is closed, 4429)."""
    socket = await open_socket(user, room)
    code = await closed_code(socket)
    assert code == 4429
    assert len(socket.frames) == 1 and socket.frames[0]["type"] == "error"
    return dict(socket.frames[0]["error"])


@database_sync_to_async
def table_marks(room: Any) -> tuple[int, int]:
    return Table.objects.get(room=room).version, TableEvent.objects.count()


async def test_frames_share_one_budget_across_a_users_sockets_then_a_cool_down(
    settings: Any,
) -> None:
    limits(settings, table_message="6/minute", table_cooldown="1/2seconds")
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await open_socket(alice, room), await open_socket(alice, room)
    for n in range(3):
        assert (await a.request({"type": "ping", "id": n}))["type"] == "pong"
        assert (await b.request({"type": "ping", "id": n}))["type"] == "pong"

    await b.send({"type": "ping", "id": "one too many"})

    assert await closed_code(b) == 4429
    marks = await table_marks(room)
    error = await refused(alice, room)  # cooling down: never reaches the table
    assert error["code"] == "rate_limited" and error["retry_after"] in (1, 2)
    assert await table_marks(room) == marks
    other = await open_socket(bob, room)  # another user is not cooling down
    assert (await other.request({"type": "ping", "id": "b"}))["type"] == "pong"
    await asyncio.sleep(2.1)
    limits(settings, table_message="60/minute")
    again = await open_socket(alice, room)
    assert (await again.request({"type": "ping", "id": "back"}))["type"] == "pong"
    for socket in (a, other, again):
        await socket.communicator.disconnect()


async def test_reconnect_churn_is_stopped_and_the_other_seat_hears_a_bounded_number(
    settings: Any,
) -> None:
    limits(settings, table_connect="3/minute")
    room, (alice, bob) = await make_room(["alice", "bob"])
    b = await open_socket(bob, room)
    await b.request({"type": "hello", "id": "h", "since": None})

    for _ in range(3):
        socket = await open_socket(alice, room)
        assert (await socket.request({"type": "ping", "id": "p"}))["type"] == "pong"
        await socket.communicator.disconnect()
    await b.drain()
    heard = len(b.events)
    marks = await table_marks(room)
    for _ in range(12):
        error = await refused(alice, room)
        assert error["code"] == "rate_limited" and 1 <= error["retry_after"] <= 60
    await b.drain()

    assert heard <= 6  # disconnected + reconnected, per connection the budget let through
    assert len(b.events) == heard
    assert await table_marks(room) == marks
    other_table_budget = await open_socket(bob, room)  # per user (and table)
    assert (await other_table_budget.request({"type": "ping", "id": 1}))["type"] == "pong"
    await other_table_budget.communicator.disconnect()
    await b.communicator.disconnect()


async def test_drafts_are_budgeted_per_user_and_a_refused_one_is_not_saved(
    settings: Any, clock: Clock
) -> None:
    limits(settings, table_draft="3/minute")
    room, (alice, bob) = await make_room(["alice", "bob"])
    a1, a2, b = (
        await open_socket(alice, room),
        await open_socket(alice, room),
        await open_socket(bob, room),
    )
    for socket in (a1, a2, b):  # the table sends nothing before a hello
        await socket.request({"type": "hello", "id": "h", "since": None})
    state = await to_arranging(room, clock, {alice: a1, bob: b})
    seat = state.seat_of(str(alice.pk))
    assert seat is not None and seat.hand
    for n, socket in enumerate((a1, a2, a1)):
        draft = {"front": format_cards(seat.hand[: n + 1])}
        assert (await socket.request({"type": "draft", "id": f"d{n}", "draft": draft}))[
            "type"
        ] == "ok"
    marks = await table_marks(room)

    reply = await a2.request({"type": "draft", "id": "d9", "draft": {"front": []}})

    assert reply["type"] == "error" and reply["error"]["code"] == "rate_limited"
    assert 1 <= reply["error"]["retry_after"] <= 60
    assert await table_marks(room) == marks
    # Other messages and other players are not held back by the draft budget.
    assert (await a1.request({"type": "ping", "id": "p"}))["type"] == "pong"
    bob_draft = {"type": "draft", "id": "bd", "draft": {"front": []}}
    assert (await b.request(bob_draft))["type"] == "ok"
    for socket in (a1, a2, b):
        await socket.communicator.disconnect()


async def test_a_flood_on_one_socket_is_closed_and_the_default_cool_down_follows(
    settings: Any,
) -> None:
    # 5 a second here (the default is 20) so that a slow machine still floods in time.
    limits(settings, table_message="5/second")
    room, (alice, _bob) = await make_room(["alice", "bob"])
    socket = await open_socket(alice, room)
    for n in range(25):
        await socket.send({"type": "ping", "id": n})

    assert await closed_code(socket) == 4429
    error = await refused(alice, room)
    assert error["code"] == "rate_limited" and 1 <= error["retry_after"] <= 30

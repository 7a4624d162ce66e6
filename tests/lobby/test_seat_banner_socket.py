"""The lobby socket keeps the seat banner right: the snapshot says whether the player is in a
round, and `seat.round` follows when their round starts (to that player's sockets only).

Transactional: the table's signal and the services' events leave on commit."""

from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async

from accounts.models import User
from games.live import services as table_services
from lobby.models import Room
from lobby.services import room_create, room_join
from lobby.signals import lobby_user_group
from shisanshui import publish
from tests.lobby.test_consumers import Socket, connect

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]

TIMEOUT = 3


@pytest_asyncio.fixture
async def sockets() -> AsyncIterator[Callable[..., Any]]:
    """open(user): a connected Socket and its snapshot; all are closed at the end."""
    opened: list[Any] = []

    async def open_socket(user: User) -> tuple[Socket, dict[str, Any]]:
        communicator = await connect(user)
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        opened.append(communicator)
        socket = Socket(communicator)
        return socket, await socket.next("snapshot")

    yield open_socket
    for communicator in opened:
        await communicator.disconnect()


@database_sync_to_async
def duel(alice: User, bob: User) -> Room:
    room = room_create(owner=bob, name="Duel", base_score=100, seats=2)
    room_join(user=alice, room_id=room.pk)
    return room


@database_sync_to_async
def start_round(room: Room, players: list[User]) -> None:
    for player in players:
        table_services.table_ready(user=player, room=room)


async def test_the_snapshot_and_seat_round_follow_the_players_round(
    sockets: Callable[..., Any], alice: User, bob: User, carol: User
) -> None:
    room = await duel(alice, bob)
    socket, snapshot = await sockets(alice)
    other, _ = await sockets(carol)
    assert snapshot["seat"]["room"]["id"] == room.pk
    assert snapshot["in_round"] is False

    await start_round(room, [alice, bob])

    assert await socket.next("seat.round") == {"type": "seat.round", "in_round": True}
    _again, fresh = await sockets(alice)
    assert fresh["in_round"] is True
    await other.nothing_more()  # another player's lobby hears nothing of it


async def test_a_player_seated_nowhere_is_in_no_round(
    sockets: Callable[..., Any], carol: User
) -> None:
    _socket, snapshot = await sockets(carol)

    assert snapshot["seat"] is None and snapshot["in_round"] is False


@database_sync_to_async
def start_round_in_outbox(room: Room, players: list[User]) -> list[publish.Message]:
    with publish.outbox() as box:
        for player in players:
            table_services.table_ready(user=player, room=room)
    return box


async def test_from_the_table_socket_the_banner_leaves_with_the_tables_messages(
    sockets: Callable[..., Any], alice: User, bob: User
) -> None:
    """The table's socket runs commands inside an outbox (shisanshui.publish): the banner is
    published from its event loop with the table's events, so the command does not wait on the
    lobby; nothing is sent before, and once published it arrives as usual."""
    room = await duel(alice, bob)
    socket, _snapshot = await sockets(alice)

    box = await start_round_in_outbox(room, [alice, bob])

    banners = [(g, m) for g, m in box if m["type"] == "lobby.seat_round"]
    assert sorted(g for g, _m in banners) == sorted(
        [lobby_user_group(alice.pk), lobby_user_group(bob.pk)]
    )
    assert all(m["in_round"] is True for _g, m in banners)
    await socket.nothing_more()  # kept, not sent
    await publish.apublish(box)
    assert await socket.next("seat.round") == {"type": "seat.round", "in_round": True}

"""A frame sent just as the client closes its socket does not kill the consumer.

daphne raises autobahn's ``Disconnected`` when a consumer sends on a socket the client has just
closed, before the ``websocket.disconnect`` message reaches the consumer. A consumer dying of
it would never run ``disconnect()``: the player would stay "connected" at the table (never
hosted) and the lobby group would keep a dead member. Seen under the load script, whose bots
close their lobby sockets while room events are still being broadcast.
"""

from __future__ import annotations

import asyncio

import pytest
from autobahn.exception import Disconnected

from games.live.consumers import TableConsumer
from lobby.consumers import LobbyConsumer


@pytest.mark.parametrize("consumer_class", [TableConsumer, LobbyConsumer])
def test_sending_on_a_socket_the_client_just_closed_is_not_fatal(consumer_class: type) -> None:
    consumer = consumer_class()

    async def closed_socket(message: dict[str, object]) -> None:
        raise Disconnected("Attempt to send on a closed protocol")

    consumer.base_send = closed_socket
    asyncio.run(consumer.send_json({"type": "pong", "id": 1}))


def test_other_send_failures_still_raise() -> None:
    consumer = TableConsumer()

    async def broken(message: dict[str, object]) -> None:
        raise ValueError("not a closed socket")

    consumer.base_send = broken
    with pytest.raises(ValueError):
        asyncio.run(consumer.send_json({"type": "pong", "id": 1}))

"""The live platform harness itself: the processes start, talk to each other, and restart."""

from __future__ import annotations

import asyncio
import json

import pytest
import websockets

from tests.games.table_helpers import default_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for


def test_live_platform_serves_pages_and_sockets_and_restarts(live_platform: LivePlatform) -> None:
    default_rules()
    player = make_player("livea")
    cookie = session_cookie_for(player)

    async def lobby_snapshot() -> dict[str, object]:
        headers = {
            "Cookie": "; ".join(f"{k}={v}" for k, v in cookie.items()),
            "Origin": live_platform.url,
        }
        async with websockets.connect(
            live_platform.ws_url("ws/lobby/"), additional_headers=headers
        ) as socket:
            return dict(json.loads(await asyncio.wait_for(socket.recv(), 10)))

    assert (asyncio.run(lobby_snapshot()))["type"] == "snapshot"
    live_platform.restart(live_platform.redis, kill=True)
    live_platform.restart(live_platform.web, kill=True)
    live_platform.restart(live_platform.worker, kill=True)
    assert (asyncio.run(lobby_snapshot()))["type"] == "snapshot"


@pytest.mark.parametrize("live_platform", [{"SIGNUP_GRANT": "5"}], indirect=True)
def test_live_platform_takes_extra_environment(live_platform: LivePlatform) -> None:
    assert live_platform.web.env["SIGNUP_GRANT"] == "5"

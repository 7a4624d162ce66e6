"""Attack: take the seat of a player who escaped and ask the table for its past (1).

Against the live platform (real daphne, Celery worker and Redis: ``tests.live_server``). Alice
and Bob play; Alice saves a draft and escapes mid-round; Carol sits down during that round
and Dave, after the settlement, in Alice's own seat. Both newcomers send ``hello`` with every
``since`` the table ever had; no frame may hold Alice's hand (before the public reveal), her
draft or her arrangement. Before the fix, Dave got all three through ``hello {since: 7}``.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import websockets

from benchmarks.seating import Lobby
from benchmarks.table_client import cookie_header
from games.models import Table
from tests.games.live.test_consumers_seat_takeover import DRAFT_MARKER, leaked
from tests.games.table_helpers import fast_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

SECONDS = 30  # every wait's deadline
PACE = 0.12  # between hellos: within the sockets' message budgets


class Client:
    """A raw table socket that keeps every frame."""

    def __init__(self, platform: LivePlatform, room: int, cookie: dict[str, str]) -> None:
        self.url = platform.ws_url(f"ws/table/{room}/")
        self.headers = {"Cookie": cookie_header(cookie), "Origin": platform.url}
        self.frames: list[dict[str, Any]] = []
        self.ids = 0
        self.ws: Any = None

    async def __aenter__(self) -> Client:
        self.ws = await websockets.connect(
            self.url, additional_headers=self.headers, open_timeout=SECONDS, ping_interval=None
        )
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.ws.close()

    async def _read(self, seconds: float = SECONDS) -> dict[str, Any]:
        frame = dict(json.loads(await asyncio.wait_for(self.ws.recv(), seconds)))
        self.frames.append(frame)
        return frame

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        await self.ws.send(json.dumps({**message, "id": self.ids}))
        while True:
            frame = await self._read()
            if frame.get("id") == self.ids:
                return frame

    def events(self, kind: str) -> list[dict[str, Any]]:
        return [
            e
            for f in self.frames
            for e in (f.get("events") or [])
            if f["type"] in ("events", "welcome") and e["type"] == kind
        ]

    async def wait_event(self, kind: str, seconds: float = SECONDS) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        while not self.events(kind):
            await self._read(max(0.1, deadline - loop.time()))
        return self.events(kind)[0]

    async def drain(self) -> None:
        try:
            while True:
                await self._read(0.5)
        except TimeoutError:
            return

    async def every_view(self, last_version: int) -> list[dict[str, Any]]:
        views = []
        for since in [None, *range(0, last_version + 2)]:
            views.append(await self.request({"type": "hello", "since": since}))
            await asyncio.sleep(PACE)
        return views


def table_version(room: int) -> int:
    return int(Table.objects.get(room_id=room).version)


def test_a_newcomer_in_an_escaped_players_seat_gets_none_of_its_secrets(
    live_platform: LivePlatform,
) -> None:
    rules = fast_rules(name="Security takeover", arrange_seconds=20).pk
    users = {name: make_player(f"sec-{name}") for name in ("alice", "bob", "carol", "dave")}
    cookies = {name: session_cookie_for(user) for name, user in users.items()}
    ws_base, origin = live_platform.ws_url("").rstrip("/"), live_platform.url

    async def scenario() -> tuple[list[dict[str, Any]], list[dict[str, Any]], set[str]]:
        created = await Lobby(ws_base, origin, cookies["alice"]).act(
            {
                "type": "room.create",
                "name": "takeover",
                "base_score": 1,
                "seats": 3,
                "private": True,
                "rules": rules,
            }
        )
        room, code = int(created["room"]["id"]), created["room"]["code"]
        await Lobby(ws_base, origin, cookies["bob"]).act(
            {"type": "room.join_by_code", "code": code}
        )
        async with (
            Client(live_platform, room, cookies["alice"]) as a,
            Client(live_platform, room, cookies["bob"]) as b,
        ):
            for client in (a, b):
                await client.request({"type": "hello", "since": None})
                assert (await client.request({"type": "ready"}))["type"] == "ok"
            hand_event = await a.wait_event("hand")
            hand = set(hand_event["payload"]["cards"])
            draft = {"note": DRAFT_MARKER, "front": sorted(hand)[:3]}
            reply = await a.request({"type": "draft", "draft": draft})
            assert reply["type"] == "ok", reply
            assert (await a.request({"type": "leave"}))["type"] == "ok"

            await Lobby(ws_base, origin, cookies["carol"]).act(
                {"type": "room.join_by_code", "code": code}
            )
            async with Client(live_platform, room, cookies["carol"]) as c:
                during = await c.every_view(await asyncio.to_thread(table_version, room))
                await b.wait_event("settled", seconds=90)
                await Lobby(ws_base, origin, cookies["dave"]).act(
                    {"type": "room.join_by_code", "code": code}
                )
                async with Client(live_platform, room, cookies["dave"]) as d:
                    after = await d.every_view(await asyncio.to_thread(table_version, room))
                    await d.drain()
                    await c.drain()
                    return [*during, *c.frames], [*after, *d.frames], hand

    carol_saw, dave_saw, hand = asyncio.run(scenario())
    alice = users["alice"]
    assert leaked(carol_saw, alice, hand) == []
    assert leaked(dave_saw, alice, hand) == []
    # Dave sits where Alice sat, and nothing from before he sat down is replayed to him.
    welcome = next(f for f in dave_saw if f["type"] == "welcome" and "snapshot" in f)
    assert welcome["snapshot"]["you"]["position"] == 0

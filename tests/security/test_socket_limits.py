"""Attack: flood the sockets and the lobby (5), against the live platform.

Real daphne, Celery worker (with beat) and Redis (``tests.live_server``). Before the fix:
private room codes were guessed at 428/s over one lobby socket; the lobby socket answered 400
pings in 0.2 s; the table's 20 msg/s limit was per connection, so reconnect churn (15 cycles in
2.7 s) spammed the other seats; one account opened 150 rooms in 17 s and the lobby page grew
from 15 KB to 223 KB. Now (the default limits, settings.RATE_LIMITS):

- code guesses stop after 5 wrong codes a minute, and then even the right code waits;
- a ping flood gets `rate_limited` after 10 a second and the socket is closed (4429);
- a user's reconnect churn is refused after 10 connections a minute to that table, without
  reaching the table: the other seat hears a bounded number of events;
- 150 room creations open 3 rooms (the cap of open rooms per owner), the rest are refused;
- with 150 open rooms the lobby's snapshot and page hold one page (50 rooms).
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from typing import Any

import websockets
from rest_framework.authtoken.models import Token

from accounts.models import User
from games.models import RuleConfiguration
from lobby.models import Room, RoomStatus, Seat
from lobby.services import room_create, room_join
from tests.games.table_helpers import default_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

TIMEOUT = 15


def headers_for(platform: LivePlatform, user: User) -> dict[str, str]:
    cookie = session_cookie_for(user)
    return {
        "Cookie": "; ".join(f"{k}={v}" for k, v in cookie.items()),
        "Origin": platform.url,
    }


async def frames_until_closed(socket: Any, *, seconds: float = TIMEOUT) -> list[dict[str, Any]]:
    """Every frame the server sends until it closes the socket."""
    frames = []
    try:
        while True:
            frames.append(json.loads(await asyncio.wait_for(socket.recv(), seconds)))
    except websockets.ConnectionClosed:
        return frames


def test_code_guessing_over_the_lobby_socket_stops_after_the_budget(
    live_platform: LivePlatform,
) -> None:
    default_rules()
    owner, guesser = make_player("owner"), make_player("guesser")
    room = room_create(owner=owner, name="Secret", base_score=10, seats=4, private=True)
    wrong = [code for code in ("AAAAAA", "BBBBBB", "CCCCCC", "DDDDDD", "EEEEEE", "FFFFFF")]
    guesses = [c for c in wrong if c != room.code][:5] + ["GGGGGG", room.code]
    headers = headers_for(live_platform, guesser)

    async def guess() -> list[dict[str, Any]]:
        async with websockets.connect(
            live_platform.ws_url("ws/lobby/"),
            additional_headers=headers,
        ) as socket:
            assert json.loads(await socket.recv())["type"] == "snapshot"
            answers = []
            for n, code in enumerate(guesses):
                await socket.send(json.dumps({"type": "room.join_by_code", "id": n, "code": code}))
                answers.append(json.loads(await asyncio.wait_for(socket.recv(), TIMEOUT)))
            return answers

    answers = asyncio.run(guess())

    codes = [a["error"]["code"] for a in answers]
    assert codes == ["room_not_found"] * 5 + ["rate_limited"] * 2, codes
    assert all(a["error"]["retry_after"] >= 1 for a in answers[5:])
    assert not room.taken_seats.filter(user=guesser).exists()


def test_a_ping_flood_is_rate_limited_then_closed(live_platform: LivePlatform) -> None:
    default_rules()
    flooder = make_player("flooder")
    headers = headers_for(live_platform, flooder)

    async def flood() -> tuple[list[dict[str, Any]], int | None, float]:
        async with websockets.connect(
            live_platform.ws_url("ws/lobby/"),
            additional_headers=headers,
        ) as socket:
            assert json.loads(await socket.recv())["type"] == "snapshot"
            started = time.monotonic()
            for n in range(400):
                await socket.send(json.dumps({"type": "ping", "id": n}))
            frames = await frames_until_closed(socket)
            return frames, socket.close_code, time.monotonic() - started

    frames, close_code, seconds = asyncio.run(flood())

    pongs = [f for f in frames if f["type"] == "pong"]
    limited = [f for f in frames if f["type"] == "error"]
    assert len(pongs) <= 10 + 10 * int(seconds + 1), (len(pongs), seconds)
    assert limited and all(f["error"]["code"] == "rate_limited" for f in limited)
    assert len(limited) <= 20  # "lobby.flood": then the socket is closed
    assert close_code == 4429


def test_reconnect_churn_is_stopped_and_the_other_seat_hears_little(
    live_platform: LivePlatform,
) -> None:
    default_rules()
    churner, other = make_player("churner"), make_player("other")
    room = room_create(owner=churner, name="Churn", base_score=10, seats=2)
    room_join(user=other, room_id=room.pk)
    table = live_platform.ws_url(f"ws/table/{room.pk}/")
    watching, churning = headers_for(live_platform, other), headers_for(live_platform, churner)

    async def churn() -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        async with websockets.connect(table, additional_headers=watching) as watcher:
            await watcher.send(json.dumps({"type": "hello", "id": "h", "since": None}))
            welcome = json.loads(await asyncio.wait_for(watcher.recv(), TIMEOUT))
            assert welcome["type"] == "welcome"
            refusals = []
            for _ in range(15):
                async with websockets.connect(table, additional_headers=churning) as socket:
                    # A refused connection speaks first (an accepted one waits for the client);
                    # a ping sent into a closing socket could make the server reset it.
                    try:
                        frame = json.loads(await asyncio.wait_for(socket.recv(), 0.5))
                    except TimeoutError:
                        frame = {"type": "nothing"}
                    if frame["type"] == "error":
                        refusals.append(frame)
                        await frames_until_closed(socket)
                        assert socket.close_code == 4429
                        continue
                    await socket.send(json.dumps({"type": "ping", "id": 1}))
                    while frame["type"] != "pong":  # (its own `reconnected` event may come)
                        frame = json.loads(await asyncio.wait_for(socket.recv(), TIMEOUT))
            heard = []
            while True:
                try:
                    frame = json.loads(await asyncio.wait_for(watcher.recv(), 2))
                except TimeoutError:
                    return refusals, heard
                heard += frame.get("events", [])

    refusals, heard = asyncio.run(churn())

    assert len(refusals) == 5  # the 11th to 15th connection of the minute
    assert all(r["error"]["code"] == "rate_limited" for r in refusals)
    about_churner = [e for e in heard if e["type"] in ("reconnected", "disconnected")]
    assert len(about_churner) <= 2 * 10, about_churner  # was 2 per cycle, unbounded


def test_150_room_creations_stop_at_the_cap(live_platform: LivePlatform) -> None:
    default_rules()
    spammer = make_player("spammer")
    token = Token.objects.create(user=spammer).key
    statuses: list[int] = []

    def post(path: str, body: dict[str, Any] | None = None) -> int:
        request = urllib.request.Request(
            f"{live_platform.url}{path}",
            data=json.dumps(body or {}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return int(response.status)
        except urllib.error.HTTPError as refusal:
            assert json.loads(refusal.read())["error"]["code"] in (
                "too_many_rooms",
                "rate_limited",
                "not_seated",
            )
            return refusal.code

    for n in range(150):
        statuses.append(
            post("/api/lobby/rooms/", {"name": f"Spam {n}", "base_score": 10, "seats": 2})
        )
        post("/api/lobby/leave/")

    assert statuses.count(201) == 3
    assert set(statuses[3:]) <= {409, 429}
    assert Room.objects.filter(owner=spammer, status=RoomStatus.OPEN).count() == 3


def test_the_lobby_snapshot_and_page_stay_small_with_150_rooms(
    live_platform: LivePlatform,
) -> None:
    rules: RuleConfiguration = default_rules()
    viewer = make_player("viewer")
    owners = [make_player(f"owner{i}") for i in range(3)]
    rooms = Room.objects.bulk_create(
        Room(
            name=f"Room {i}",
            rules=rules,
            owner=owners[i % 3],
            base_score=10,
            seats=4,
            entry_minimum=3_240,
        )
        for i in range(150)
    )
    # The lobby lists rooms where a person sits: one in each (database rows only; the
    # snapshot's size is what is measured, not the tables).
    sitters = User.objects.bulk_create(User(username=f"sitter{i}") for i in range(150))
    Seat.objects.bulk_create(
        Seat(room=room, user=user, position=0) for room, user in zip(rooms, sitters, strict=True)
    )
    headers = headers_for(live_platform, viewer)

    async def snapshot() -> str:
        async with websockets.connect(
            live_platform.ws_url("ws/lobby/"), additional_headers=headers
        ) as socket:
            return str(await asyncio.wait_for(socket.recv(), TIMEOUT))

    text = asyncio.run(snapshot())
    request = urllib.request.Request(f"{live_platform.url}/lobby/", headers=headers)
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        page = response.read()

    frame = json.loads(text)
    assert len(frame["rooms"]) == 50
    assert (frame["total"], frame["pages"]) == (150, 3)
    # A row carries a platform-given name in both languages (the live rows go to every page,
    # whatever its language): 50 rows are about 25 KB, the page about 101 KB.
    assert len(text.encode()) < 27_000, len(text.encode())
    assert len(page) < 105_000, len(page)  # was 223 KB and growing with every room
    assert page.count(b"<tr data-room=") <= 51  # 50 rows and the row template

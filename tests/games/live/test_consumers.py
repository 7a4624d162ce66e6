"""The table's WebSocket, through the project's whole ASGI stack (origin check, session auth,
routing) and the configured channel layer: Redis when REDIS_URL is set, as under `make test`.

Transactional tests, so that the services' on-commit events reach the sockets. The clock is
``table_store.clock`` (moved forward to drive the deadlines, whose timeouts the tests call
directly, as the Celery task would); the timers themselves are recorded, never run, and the
shuffle is seeded.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pytest
import pytest_asyncio
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.conf import settings
from django.test import Client, override_settings

from accounts.models import User
from accounts.selectors import wallet_balance
from accounts.services import user_signup
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import sent_away
from games.live import services as table_services
from games.live import store as table_store
from games.live import threads as table_threads
from games.live.frames import MAX_MESSAGE_BYTES
from games.models import RoundPlayer, RuleConfiguration, Table, TableEvent
from games.rules.arrange import best_arrangement
from games.rules.cards import format_cards, parse_cards
from games.rules.config import DEFAULT_CONFIG
from games.table.state import Phase, TableState
from lobby.models import Room, Seat
from lobby.services import room_create, room_join
from shisanshui.asgi import application

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]

TIMEOUT = 3
SEED = 11


@dataclass
class Clock:
    now: float


@pytest.fixture(autouse=True)
def clock(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[Clock]:
    """The services' clock, the recorded timers, a seeded shuffle and a channel layer under a
    prefix of its own (this test hears no other test run sharing the Redis server)."""
    c = Clock(time.time())
    monkeypatch.setattr(table_store, "clock", lambda: c.now)
    rng = random.Random(SEED)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)
    layer = dict(settings.CHANNEL_LAYERS["default"])
    if layer["BACKEND"] != "channels.layers.InMemoryChannelLayer":
        layer["CONFIG"] = {**layer.get("CONFIG", {}), "prefix": f"test-{uuid.uuid4().hex}"}
    settings.CHANNEL_LAYERS = {"default": layer}
    yield c


def make_player(name: str) -> User:
    if not RuleConfiguration.objects.filter(is_default=True).exists():
        RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Standard 标准", is_default=True)
    with override_settings(SIGNUP_GRANT=100_000):
        return user_signup(username=name, password="not-used-1")


@database_sync_to_async
def make_room(names: list[str]) -> tuple[Room, list[User]]:
    """A room made by the first player and joined by the others: all sit at its table."""
    users = [make_player(name) for name in names]
    room = room_create(owner=users[0], name="Table", base_score=10, seats=max(2, len(users)))
    for user in users[1:]:
        room_join(user=user, room_id=room.pk)
    return room, users


@database_sync_to_async
def state_of(room: Room) -> TableState:
    return TableState.from_dict(Table.objects.get(room=room).state)


@database_sync_to_async
def timeout(room: Room, clock: Clock, phase: str) -> None:
    """Move the clock to the deadline of ``phase`` and run its timeout, as the task would."""
    table = Table.objects.get(room=room)
    state = TableState.from_dict(table.state)
    assert state.phase == phase and state.deadline is not None, (state.phase, phase)
    clock.now = state.deadline
    table_services.table_timeout(table_id=table.pk, version=state.version, phase=phase)


@database_sync_to_async
def session_cookie(user: User) -> str:
    client = Client()
    client.force_login(user)
    return client.cookies[settings.SESSION_COOKIE_NAME].value


class Socket:
    """A connected client: keeps every frame, and the frames and events not yet asked for."""

    def __init__(self, communicator: WebsocketCommunicator) -> None:
        self.communicator = communicator
        self.frames: list[dict[str, Any]] = []
        self.unread: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self.welcome: dict[str, Any] | None = None

    async def send(self, message: Any) -> None:
        text = message if isinstance(message, str) else json.dumps(message)
        await self.communicator.send_to(text_data=text)

    async def _read(self) -> None:
        frame = json.loads(await self.communicator.receive_from(timeout=TIMEOUT))
        self.frames.append(frame)
        if frame["type"] == "events":
            self.events += frame["events"]
        else:
            self.unread.append(frame)

    async def next(self, kind: str) -> dict[str, Any]:
        """The first unread frame of this type (not an events frame), read or to come."""
        while True:
            for index, frame in enumerate(self.unread):
                if frame["type"] == kind:
                    return self.unread.pop(index)
            await self._read()

    async def event(
        self, kind: str, where: Callable[[dict[str, Any]], bool] = lambda p: True
    ) -> dict[str, Any]:
        """The first unread event of this type whose payload matches ``where``."""
        while True:
            for index, event in enumerate(self.events):
                if event["type"] == kind and where(event["payload"]):
                    del self.events[: index + 1]
                    return event
            await self._read()

    async def request(self, message: dict[str, Any]) -> dict[str, Any]:
        """Send and return the reply (ok, error, pong or welcome) echoing the message's id."""
        await self.send(message)
        while True:
            for index, frame in enumerate(self.unread):
                if frame.get("id") == message.get("id"):
                    return self.unread.pop(index)
            await self._read()

    def frames_events(self) -> list[dict[str, Any]]:
        """Every event received so far, in order (read or not)."""
        return [e for frame in self.frames if frame["type"] == "events" for e in frame["events"]]

    async def drain(self) -> None:
        """Read whatever has arrived, until nothing more comes for a moment."""
        while not await self.communicator.receive_nothing(timeout=0.3):
            await self._read()

    async def heard_nothing_after(self, version: int) -> None:
        await self.drain()
        assert [e for e in self.events if e["version"] > version] == []


async def communicator_for(user: User | None, room_id: int) -> WebsocketCommunicator:
    headers = [(b"origin", b"http://testserver")]
    if user is not None:
        cookie = f"{settings.SESSION_COOKIE_NAME}={await session_cookie(user)}"
        headers.append((b"cookie", cookie.encode()))
    return WebsocketCommunicator(application, f"/ws/table/{room_id}/", headers=headers)


@pytest_asyncio.fixture
async def sockets() -> AsyncIterator[Callable[..., Any]]:
    """open(user, room, hello=True): a connected Socket that has said hello, as every client
    must before the table sends it anything (docs/protocol.md), its welcome in ``welcome``;
    ``hello=False`` for a socket that has not spoken yet. All still open are closed at the end."""
    opened: list[WebsocketCommunicator] = []

    async def open_socket(user: User, room: Room, *, hello: bool = True) -> Socket:
        communicator = await communicator_for(user, room.pk)
        connected, _ = await communicator.connect(timeout=TIMEOUT)
        assert connected
        opened.append(communicator)
        socket = Socket(communicator)
        if hello:
            socket.welcome = await socket.request({"type": "hello", "id": "open", "since": None})
        return socket

    yield open_socket
    for communicator in opened:
        with contextlib.suppress(Exception):  # closed already, by the test or the server
            await communicator.disconnect()


async def to_arranging(room: Room, clock: Clock, players: dict[User, Socket]) -> TableState:
    """Everyone presses Ready, the deal ends, any special is declined: arranging."""
    for user, socket in players.items():
        assert (await socket.request({"type": "ready", "id": f"ready-{user.pk}"}))["type"] == "ok"
    for socket in players.values():
        await socket.event("deal")
    await timeout(room, clock, "dealing")
    state = await state_of(room)
    for user, socket in players.items():
        seat = state.seat_of(str(user.pk))
        assert seat is not None
        if seat.choosing:
            reply = await socket.request(
                {"type": "choose_special", "id": "no", "play_special": False}
            )
            assert reply["type"] == "ok"
    state = await state_of(room)
    assert state.phase is Phase.ARRANGING
    return state


def best_rows(cards: list[str], state: TableState) -> dict[str, list[str]]:
    best = best_arrangement(parse_cards(cards), state.config)
    return {
        "front": format_cards(best.front),
        "middle": format_cards(best.middle),
        "back": format_cards(best.back),
    }


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings(item)


@database_sync_to_async
def balances(users: list[User]) -> dict[int, int]:
    return {u.pk: wallet_balance(user=u) for u in users}


@database_sync_to_async
def round_rows(room: Room) -> dict[int, RoundPlayer]:
    return {rp.user_id: rp for rp in RoundPlayer.objects.filter(round__table__room=room)}


@database_sync_to_async
def table_marks(room: Room) -> tuple[int, int]:
    return Table.objects.get(room=room).version, TableEvent.objects.count()


# A whole round.


async def test_a_full_round_over_websockets(clock: Clock, sockets: Callable[..., Any]) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    welcome = await a.request({"type": "hello", "id": "h", "since": None})
    assert welcome["type"] == "welcome" and welcome["snapshot"]["phase"] == "waiting"
    assert [s["player"] for s in welcome["snapshot"]["seats"]] == [str(alice.pk), str(bob.pk)]
    before = await balances([alice, bob])

    state = await to_arranging(room, clock, {alice: a, bob: b})
    for user, socket in ((alice, a), (bob, b)):
        hand = await socket.event("hand")
        assert hand["payload"]["position"] == state.seat_of(str(user.pk)).position
        reply = await socket.request(
            {"type": "submit", "id": "s1", **best_rows(hand["payload"]["cards"], state)}
        )
        assert reply == {"type": "ok", "id": "s1", "action": "submit"}
    assert (await state_of(room)).phase is Phase.COMPARING
    await timeout(room, clock, "comparing")

    settled = [(await s.event("settled"))["payload"] for s in (a, b)]
    assert settled[0] == settled[1]
    deltas = {int(p["id"]): p["delta"] for p in settled[0]["result"]["players"]}
    after = await balances([alice, bob])
    assert {pk: after[pk] - before[pk] for pk in after} == deltas
    assert sum(deltas.values()) == 0 and any(deltas.values())
    rows = await round_rows(room)
    assert {pk: row.delta for pk, row in rows.items()} == deltas

    # No frame Alice received before the reveal held any of Bob's cards, and vice versa.
    for socket, other in ((a, bob), (b, alice)):
        secret = set(rows[other.pk].cards.split())
        for frame in socket.frames:
            if frame["type"] == "events" and any(e["type"] == "reveal" for e in frame["events"]):
                break
            assert not secret & set(strings(frame)), frame
        else:
            raise AssertionError("no reveal was received")


async def test_three_players_a_fouled_submission_is_refused_then_corrected(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, users = await make_room(["alice", "bob", "carol"])
    socks = {u: await sockets(u, room) for u in users}
    state = await to_arranging(room, clock, socks)
    hands = {u: (await s.event("hand"))["payload"]["cards"] for u, s in socks.items()}
    alice = users[0]
    rows = best_rows(hands[alice], state)
    marks = await table_marks(room)

    fouled = {"front": rows["front"], "middle": rows["back"], "back": rows["middle"]}
    reply = await socks[alice].request({"type": "submit", "id": "s1", **fouled})
    assert reply["type"] == "error" and reply["id"] == "s1"
    assert reply["error"]["code"] == "foul" and reply["error"]["message"]
    assert await table_marks(room) == marks
    await socks[users[1]].heard_nothing_after(marks[0])  # nobody heard of it

    reply = await socks[alice].request({"type": "submit", "id": "s2", **rows})
    assert reply["type"] == "ok"
    for user in users[1:]:
        reply = await socks[user].request(
            {"type": "submit", "id": "s", **best_rows(hands[user], state)}
        )
        assert reply["type"] == "ok"
    await timeout(room, clock, "comparing")
    for socket in socks.values():
        settled = await socket.event("settled")
        assert len(settled["payload"]["result"]["players"]) == 3


async def test_6_the_dealers_own_deal_does_not_wait_for_the_suggestions(
    clock: Clock, sockets: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The Ready that deals is answered, then its socket works out the hands' suggestions in
    a task of its own: the socket's own events (the deal, its player's hand) go on passing
    while the engine is still busy, and the suggestions follow when it is done."""
    gate = threading.Event()
    working = threading.Event()
    real = table_notify.hand_suggestions

    def slow(event: Any, state: TableState) -> Any:
        working.set()
        assert gate.wait(TIMEOUT * 2), "never let through"
        return real(event, state)

    monkeypatch.setattr(table_notify, "hand_suggestions", slow)
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    assert (await a.request({"type": "ready", "id": "r-a"}))["type"] == "ok"
    try:
        assert (await b.request({"type": "ready", "id": "r-b"}))["type"] == "ok"  # it deals
        for socket in (b, a):
            await socket.event("deal")
            assert (await socket.event("hand"))["payload"]["suggestions"] is None
        assert await asyncio.to_thread(working.wait, TIMEOUT)  # the engine is at work meanwhile
        assert not [f for f in b.frames if f["type"] == "hand_suggestions"]
    finally:
        gate.set()
    for socket in (a, b):
        follow = await socket.next("hand_suggestions")
        assert follow["suggestions"]


async def test_the_tables_commands_never_queue_behind_a_sockets_other_work(
    clock: Clock, sockets: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A socket's seat, welcome, reconnect and suggestions run on the side threads, the
    table's commands on the service threads: with every side thread busy (a storm of
    connections), a seated player's Ready is still applied and answered at once."""
    threads: dict[str, set[str]] = {}

    def recorded(module: Any, name: str) -> None:
        real = getattr(module, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            threads.setdefault(name, set()).add(threading.current_thread().name.split("_")[0])
            return real(*args, **kwargs)

        monkeypatch.setattr(module, name, wrapper)

    for name in ("table_seat_for", "table_resync"):
        recorded(table_reads, name)
    for name in ("table_reconnect", "table_ready"):
        recorded(table_services, name)
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    assert threads == {
        "table_seat_for": {"table-side"},
        "table_reconnect": {"table-side"},
        "table_resync": {"table-side"},
    }

    busy = ThreadPoolExecutor(max_workers=1, thread_name_prefix="table-side")
    monkeypatch.setattr(table_threads, "SIDE_THREADS", busy)
    gate = threading.Event()
    busy.submit(gate.wait, TIMEOUT * 2)  # the only side thread, taken
    try:
        await a.send({"type": "hello", "id": "h", "since": None})
        assert (await b.request({"type": "ready", "id": "r"}))["type"] == "ok"
        assert threads["table_ready"] == {"table"}
        # … while the welcome still waits for a side thread
        assert await a.communicator.receive_nothing(timeout=0.1)
    finally:
        gate.set()
    assert (await a.next("welcome"))["id"] == "h"
    busy.shutdown()


# Reconnecting, leaving.


async def test_a_reconnect_mid_arrange_restores_cards_draft_and_time(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    state = await to_arranging(room, clock, {alice: a, bob: b})
    cards = (await a.event("hand"))["payload"]["cards"]
    draft = {"front": cards[:3]}
    assert (await a.request({"type": "draft", "id": "d1", "draft": draft}))["type"] == "ok"
    saved = await a.event("draft_saved")
    last_version = saved["version"]

    await a.communicator.disconnect()
    gone = await b.event("disconnected")
    assert gone["payload"] == {"position": 0, "hosted": True}
    clock.now += 5

    a2 = await sockets(alice, room)
    await b.event("reconnected")
    welcome = await a2.request({"type": "hello", "id": "h1", "since": last_version})
    assert [e["type"] for e in welcome["events"]] == ["disconnected", "reconnected"]
    # The hand came before ``since``, perhaps without its suggestions (they follow a live
    # hand): they come after the welcome, as they would have.
    assert "suggestions" not in welcome
    follow = await a2.next("hand_suggestions")
    welcome = await a2.request({"type": "hello", "id": "h2", "since": None})
    you = welcome["snapshot"]["you"]
    assert follow == {"type": "hand_suggestions", "cards": cards, "suggestions": you["suggestions"]}
    assert you["hand"] == cards and you["draft"] == draft
    assert you["remaining"] == pytest.approx(state.arrange_deadline - clock.now)
    assert welcome["snapshot"]["phase"] == "arranging"
    seat = (await state_of(room)).seat_of(str(alice.pk))
    assert seat.connected and not seat.hosted


async def test_leaving_mid_round_is_an_escape_and_frees_the_seat_after_settlement(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    state = await to_arranging(room, clock, {alice: a, bob: b})
    hand = (await a.event("hand"))["payload"]["cards"]

    assert (await b.request({"type": "leave", "id": "l1"}))["type"] == "ok"
    await a.event("escaped", lambda p: p == {"position": 1, "reason": "left"})
    assert await database_sync_to_async(Seat.objects.filter(user=bob).exists)()
    assert (await a.request({"type": "submit", "id": "s", **best_rows(hand, state)}))[
        "type"
    ] == "ok"
    await timeout(room, clock, "comparing")

    await b.event("settled")
    await b.event("left", lambda p: p["position"] == 1 and p["reason"] == "escaped")
    assert (await b.communicator.receive_output(timeout=TIMEOUT))["code"] == 4000
    rows = await round_rows(room)
    assert rows[bob.pk].escaped and rows[bob.pk].penalty > 0
    assert not await database_sync_to_async(Seat.objects.filter(user=bob).exists)()


# Refusals.


async def test_an_anonymous_socket_is_refused(clock: Clock) -> None:
    room, _users = await make_room(["alice", "bob"])
    communicator = await communicator_for(None, room.pk)

    assert await communicator.connect(timeout=TIMEOUT) == (False, 4401)


async def test_a_player_not_seated_in_the_room_is_refused(clock: Clock) -> None:
    room, _users = await make_room(["alice", "bob"])
    room.allow_spectators = False  # (where spectators may watch, carol would be one)
    await database_sync_to_async(room.save)(update_fields=["allow_spectators"])
    carol = await database_sync_to_async(make_player)("carol")
    for room_id in (room.pk, 999_999):
        error = await refused_not_seated(carol, room_id)
        assert error["code"] == "not_seated" and "reason" not in error


async def refused_not_seated(user: User, room_id: int) -> dict[str, Any]:
    """Connect: accepted only to be told there is no seat here (a browser would take a refused
    handshake for a dropped connection), then closed 4403. The error frame's ``error``."""
    communicator = await communicator_for(user, room_id)
    assert await communicator.connect(timeout=TIMEOUT) == (True, None)
    frame = await communicator.receive_json_from(timeout=TIMEOUT)
    assert frame["type"] == "error" and frame["id"] is None
    assert (await communicator.receive_output(timeout=TIMEOUT)) == {
        "type": "websocket.close",
        "code": 4403,
    }
    return dict(frame["error"])


async def test_a_player_sent_away_while_disconnected_is_told_why_once_back(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    room.allow_spectators = False  # (see below for a room that may be watched)
    await database_sync_to_async(room.save)(update_fields=["allow_spectators"])
    a = await sockets(alice, room)
    await sockets(bob, room)
    await a.communicator.disconnect()  # alice's network drops; bob presses Ready
    await database_sync_to_async(table_services.table_ready)(user=bob, room=room)
    await timeout(room, clock, "waiting")  # alice's Ready deadline: back to the room list

    error = await refused_not_seated(alice, room.pk)
    assert error == {
        "code": "not_seated",
        "message": "You are not seated at this table.",
        "reason": "ready_timeout",
    }
    # Only hers, and only for that room: bob (seated) and another room hear nothing of it.
    other, _people = await make_room(["carol"])
    other.allow_spectators = False
    await database_sync_to_async(other.save)(update_fields=["allow_spectators"])
    assert "reason" not in await refused_not_seated(alice, other.pk)
    assert await database_sync_to_async(sent_away.peek)(user_id=bob.pk) is None
    # The lobby tells her once, then forgets it.
    client = Client()
    await database_sync_to_async(client.force_login)(alice)
    page = await database_sync_to_async(client.get)("/lobby/")
    assert "did not press Ready in time" in page.content.decode()
    again = await database_sync_to_async(client.get)("/lobby/")
    assert "did not press Ready in time" not in again.content.decode()
    assert "reason" not in await refused_not_seated(alice, room.pk)


async def test_a_player_sent_away_from_a_room_that_may_be_watched_is_told_why_in_the_welcome(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    a = await sockets(alice, room)
    await sockets(bob, room)
    await a.communicator.disconnect()
    await database_sync_to_async(table_services.table_ready)(user=bob, room=room)
    await timeout(room, clock, "waiting")

    back = await sockets(alice, room)  # welcomed as a watcher, and told why
    assert back.welcome is not None and back.welcome["position"] is None
    assert back.welcome["sent_away"] == "ready_timeout"
    carol = await database_sync_to_async(make_player)("carol")
    watcher = await sockets(carol, room)  # any other watcher is told nothing
    assert watcher.welcome is not None and "sent_away" not in watcher.welcome


async def test_bad_messages_get_an_error_frame_and_change_nothing(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    await to_arranging(room, clock, {alice: a, bob: b})
    await a.event("hand")
    await b.event("hand")
    marks = await table_marks(room)
    bad: list[tuple[Any, str]] = [
        ("not json", "malformed_message"),
        ("[1, 2]", "malformed_message"),
        ({"id": 1}, "malformed_message"),
        ({"type": "x" * MAX_MESSAGE_BYTES}, "message_too_large"),
        ({"type": "dance", "id": 2}, "unknown_message_type"),
        ({"type": "ready", "id": 3}, "wrong_phase"),
        ({"type": "submit", "id": 4, "front": "AS"}, "bad_field"),
        ({"type": "submit", "id": 5, "front": ["ZZ"], "middle": [], "back": []}, "bad_cards"),
        ({"type": "choose_special", "id": 6, "play_special": "yes"}, "bad_field"),
        ({"type": "draft", "id": 7, "draft": [1]}, "bad_field"),
        ({"type": "ready"}, "bad_field"),  # an action needs an id
        ({"type": "hello", "id": 8, "since": "3"}, "bad_field"),
        ({"type": "draft", "id": 9, "position": 1, "draft": {}}, "not_your_seat"),
    ]
    for message, code in bad:
        await a.send(message)
        reply = await a.next("error")
        assert reply["error"]["code"] == code, (message, reply)
        assert reply["error"]["message"]
    await a.communicator.send_to(bytes_data=b"\x00\x01")
    assert (await a.next("error"))["error"]["code"] == "malformed_message"

    assert await table_marks(room) == marks
    await b.heard_nothing_after(marks[0])
    await a.heard_nothing_after(marks[0])


async def test_a_retried_action_is_applied_once(clock: Clock, sockets: Callable[..., Any]) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)

    first = await a.request({"type": "ready", "id": "r1"})
    again = await a.request({"type": "ready", "id": "r1"})

    assert first == again == {"type": "ok", "id": "r1", "action": "ready"}
    ready = await b.event("ready", lambda p: p["position"] == 0)
    await b.heard_nothing_after(ready["version"])
    other = await a.request({"type": "ready", "id": "r2"})
    assert other["error"]["code"] == "already_ready"
    assert (await a.request({"type": "ping", "id": "p"}))["type"] == "pong"

    # The reply is kept beside the budget, not in the socket: a retry over a new socket (the
    # client reconnected without the reply) gets it too, and nothing is applied again.
    await a.communicator.disconnect()
    a2 = await sockets(alice, room)
    assert (await a2.request({"type": "ready", "id": "r1"})) == first
    # … and an id another user used, or another action type under the same id, is new.
    assert (await b.request({"type": "ready", "id": "r1"})) == {**first, "id": "r1"}
    assert (await b.request({"type": "leave", "id": "r1"}))["action"] == "leave"


async def test_a_flood_of_messages_closes_the_socket(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, _bob) = await make_room(["alice", "bob"])
    a = await sockets(alice, room)

    for n in range(25):
        await a.send({"type": "ping", "id": n})
    while True:
        output = await a.communicator.receive_output(timeout=TIMEOUT)
        if output["type"] == "websocket.close":
            break
    assert output["code"] == 4429


async def test_a_flood_of_unreadable_frames_and_retried_actions_closes_the_socket_too(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    """Every frame counts against the budget, whether it reads or not, and a retried action
    (answered from its kept reply, nothing applied) counts like any other."""
    room, (alice, _bob) = await make_room(["alice", "bob"])
    a = await sockets(alice, room)
    assert (await a.request({"type": "ready", "id": "r"}))["type"] == "ok"
    for n in range(25):
        await a.send("not json" if n % 2 else {"type": "ready", "id": "r"})
    while True:
        output = await a.communicator.receive_output(timeout=TIMEOUT)
        if output["type"] == "websocket.close":
            break
    assert output["code"] == 4429
    seat = (await state_of(room)).seat_of(str(alice.pk))
    assert seat is not None and seat.ready


async def test_a_lost_broadcast_is_read_from_the_log_and_a_repeated_one_is_dropped(
    clock: Clock, sockets: Callable[..., Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The group message of Alice's Ready never arrives (Redis restarting, say): Carol's
    consumer sees Bob's Ready skip a version, reads the missing event from the table's log and
    passes both on in order; a batch delivered twice is passed on once."""
    room, (alice, bob, carol) = await make_room(["alice", "bob", "carol"])
    a, b, c = [await sockets(user, room) for user in (alice, bob, carol)]
    welcome = await c.request({"type": "hello", "id": "h", "since": None})
    start = welcome["version"]

    send = table_notify.send_messages
    lost: list[dict[str, Any]] = []
    monkeypatch.setattr(
        table_notify, "send_messages", lambda table_id, message: lost.append(message)
    )
    assert (await a.request({"type": "ready", "id": "a1"}))["type"] == "ok"
    monkeypatch.setattr(table_notify, "send_messages", send)
    assert (await b.request({"type": "ready", "id": "b1"}))["type"] == "ok"

    await c.event("ready", lambda p: p["position"] == 1)
    readies = [
        (e["version"], e["payload"]["position"]) for e in c.frames_events() if e["type"] == "ready"
    ]
    assert readies == [(start + 1, 0), (start + 2, 1)]

    # The lost batch turns up late, after all: nothing is passed on twice.
    table = await database_sync_to_async(Table.objects.get)(room=room)
    await database_sync_to_async(send)(table.pk, lost[0])
    await c.heard_nothing_after(start + 2)


async def test_closing_an_older_socket_does_not_mark_a_reconnected_player_away(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    """A reload or a network change: the new socket opens before the old one's close is
    processed. The old close must not mark the player disconnected (hosted) while the new
    socket is live; closing the current socket still does."""
    room, (alice, bob) = await make_room(["alice", "bob"])
    old, b = await sockets(alice, room), await sockets(bob, room)
    new = await sockets(alice, room)
    await new.request({"type": "hello", "id": "h", "since": None})

    await old.communicator.disconnect()
    state = await state_of(room)
    seat = state.seat_of(str(alice.pk))
    assert seat is not None and seat.connected
    await b.drain()
    assert not [e for e in b.events if e["type"] == "disconnected"]

    await new.communicator.disconnect()
    gone = await b.event("disconnected", lambda p: p["position"] == 0)
    assert gone["payload"]["position"] == 0
    seat = (await state_of(room)).seat_of(str(alice.pk))
    assert seat is not None and not seat.connected


async def test_a_group_messages_frame_is_encoded_once_for_the_sockets_passing_it_all() -> None:
    """The sockets of a table share a group message's decoded events (shisanshui.channel_layer):
    one encoding serves every socket that passes all of them; a socket that had passed some
    gets a frame of the rest."""
    from games.live.frames import events_frame as _events_frame

    shared = [
        {"version": 5, "type": "ready", "payload": {"position": 0}},
        {"version": 6, "type": "dealt", "payload": {"round_no": 2}},
    ]
    first = _events_frame(shared, list(shared))
    assert json.loads(first) == {"type": "events", "events": shared}
    assert _events_frame(shared, list(shared)) is first  # the next socket: no new encoding
    rest = _events_frame(shared, shared[1:])
    assert json.loads(rest) == {"type": "events", "events": shared[1:]}
    equal_but_another = [dict(e) for e in shared]  # another message: encoded on its own
    again = _events_frame(equal_but_another, list(equal_but_another))
    assert again == first and again is not first

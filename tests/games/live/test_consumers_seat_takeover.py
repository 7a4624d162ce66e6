"""private events belong to a player, not to a seat position.

A player escapes mid-round; a newcomer sits down during that round (at another seat) and,
after the settlement, another newcomer takes the escaped player's own seat. Every frame and
snapshot the newcomers get — asking for every version the table ever had — is scanned for
the escaped player's hand (before the public reveal), draft and arrangement.

Built on the fixtures and helpers of ``test_consumers`` (the real ASGI stack and channel
layer).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async

from accounts.models import User
from games.models import TableEvent
from lobby.models import Room
from lobby.services import room_join
from tests.games.live import test_consumers as tc
from tests.games.live.test_consumers import Clock, Socket, make_player, state_of, timeout

clock = tc.clock
sockets = tc.sockets

pytestmark = tc.pytestmark

DRAFT_MARKER = "alice-secret-draft-7f3c"
PACE = 0.12
PRIVATE_TYPES = {"hand", "draft_saved", "arrangement", "special_chosen"}


@database_sync_to_async
def make_three_seat_room() -> tuple[Room, list[User]]:
    from lobby.services import room_create

    users = [make_player(name) for name in ("alice", "bob")]
    room = room_create(owner=users[0], name="Takeover", base_score=10, seats=3)
    room_join(user=users[1], room_id=room.pk)
    return room, users


@database_sync_to_async
def join(user: User, room: Room) -> None:
    room_join(user=user, room_id=room.pk)


@database_sync_to_async
def private_events_of(player: User) -> list[dict[str, Any]]:
    return list(
        TableEvent.objects.filter(recipient=str(player.pk)).values("version", "type", "payload")
    )


async def every_view(socket: Socket, last_version: int) -> list[dict[str, Any]]:
    """What the socket is given for ``hello`` with every ``since`` from None to the end."""
    views = []
    for since in [None, *range(0, last_version + 2)]:
        views.append(await socket.request({"type": "hello", "id": f"h{since}", "since": since}))
        await asyncio.sleep(PACE)  # within the sockets' message budgets
    return views


def leaked(frames: list[dict[str, Any]], alice: User, hand: set[str]) -> list[str]:
    """What of Alice's secrets these frames hold: her private events, her draft, her cards
    anywhere but the public reveal and settlement."""
    found = []
    for frame in frames:
        text = json.dumps(frame)
        if DRAFT_MARKER in text:
            found.append(f"draft in {frame['type']}")
        events = frame.get("events") or []
        snapshot = frame.get("snapshot")
        for event in events:
            payload = event["payload"]
            if event["type"] in PRIVATE_TYPES:
                found.append(f"private {event['type']} v{event['version']}")
            if event["type"] not in {"reveal", "reveal_special", "settled", "gun"}:
                cards = set(tc.strings(payload)) & hand
                if cards:
                    found.append(f"cards {sorted(cards)} in {event['type']}")
        if snapshot is not None:
            you = snapshot.get("you") or {}
            if set(tc.strings(you)) & hand:
                found.append("Alice's cards in the snapshot's own seat")
            if snapshot["phase"] in {"dealing", "special_choice", "arranging"}:
                cards = set(tc.strings(snapshot)) & hand
                if cards:
                    found.append(f"cards {sorted(cards)} in a {snapshot['phase']} snapshot")
    return found


async def test_a_newcomer_never_gets_the_escaped_players_secrets(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, (alice, bob) = await make_three_seat_room()
    a, b = await sockets(alice, room), await sockets(bob, room)
    for user, socket in ((alice, a), (bob, b)):
        await socket.request({"type": "hello", "id": "h", "since": None})
        assert (await socket.request({"type": "ready", "id": f"r{user.pk}"}))["type"] == "ok"
    hand_event = await a.event("hand")
    hand = set(hand_event["payload"]["cards"])
    await timeout(room, clock, "dealing")
    state = await state_of(room)
    if state.phase.value == "special_choice":
        for socket in (a, b):
            await socket.request({"type": "choose_special", "id": "no", "play_special": False})
    draft = {"front": sorted(hand)[:3], "note": DRAFT_MARKER}
    assert (await a.request({"type": "draft", "id": "d1", "draft": draft}))["type"] == "ok"
    alice_seat = (await state_of(room)).seat_of(str(alice.pk))
    assert alice_seat is not None

    # Alice escapes mid-round: her hand is played for her (a private `arrangement` event).
    assert (await a.request({"type": "leave", "id": "bye"}))["type"] == "ok"
    assert {e["type"] for e in await private_events_of(alice)} >= {"hand", "arrangement"}

    # Carol sits down during the same round, at the free seat, and asks for everything.
    carol = await database_sync_to_async(make_player)("carol")
    await join(carol, room)
    c = await sockets(carol, room)
    during = await every_view(c, (await state_of(room)).version)
    await c.drain()
    assert leaked([*during, *c.frames], alice, hand) == []

    # The round ends; Alice's seat is freed at settlement; Dave takes that very seat.
    await timeout(room, clock, "arranging")
    await timeout(room, clock, "comparing")
    dave = await database_sync_to_async(make_player)("dave")
    await join(dave, room)
    state = await state_of(room)
    dave_seat = state.seat_of(str(dave.pk))
    assert dave_seat is not None and dave_seat.position == alice_seat.position
    d = await sockets(dave, room)
    after = await every_view(d, state.version)
    await d.drain()
    frames = [*after, *d.frames]
    assert leaked(frames, alice, hand) == []
    # Nothing from before Dave sat down is replayed to him: asking for an older version
    # gives a snapshot, never events.
    for view in after:
        if view.get("events"):
            assert min(e["version"] for e in view["events"]) >= dave_seat.since
    # And Carol, still connected, heard nothing of Alice's either.
    await c.drain()
    assert leaked(c.frames, alice, hand) == []


async def test_an_action_id_reused_for_another_action_is_applied(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    """The action-id cache key holds the action's type: a submit that reuses a Ready's id is
    a new action (before, it was silently answered with the Ready's stored reply)."""
    room, (alice, bob) = await tc.make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    players = {alice: a, bob: b}
    state = await tc.to_arranging(room, clock, players)
    seat = state.seat_of(str(alice.pk))
    assert seat is not None and seat.hand is not None
    rows = tc.best_rows([str(c) for c in seat.hand], state)
    reply = await a.request({"type": "submit", "id": f"ready-{alice.pk}", **rows})
    assert reply["type"] == "ok" and reply["action"] == "submit"
    seat = (await state_of(room)).seat_of(str(alice.pk))
    assert seat is not None and seat.arrangement is not None
    # The same id and type again is a retry: answered from the cache, applied once.
    again = await a.request({"type": "submit", "id": f"ready-{alice.pk}", **rows})
    assert again == reply

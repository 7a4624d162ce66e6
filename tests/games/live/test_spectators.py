"""Spectators: anyone may watch an open public room's table that allows it, over
the same socket. A spectator gets the public snapshot and the public events only — every frame
is scanned for the hands: none before they are revealed — and may not act. A private room, a
room that turned watching off, or a closed one refuses the connection (4403)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games.models import Table
from lobby.selectors import room_view
from tests.games.live.test_consumers import (
    Clock,
    best_rows,
    clock,  # noqa: F401  (the fixture)
    make_room,
    refused_not_seated,
    round_rows,
    sockets,  # noqa: F401  (the fixture)
    state_of,
    strings,
    timeout,
    to_arranging,
)
from tests.games.table_helpers import make_player

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]


@database_sync_to_async
def watchers(room: Any) -> int:
    return Table.objects.get(room=room).watchers


@database_sync_to_async
def lobby_row(room: Any, user: Any) -> Any:
    return room_view(room_id=room.pk, user=user)


async def test_a_spectator_sees_only_what_is_public_through_a_whole_round(
    clock: Clock,  # noqa: F811
    sockets: Callable[..., Any],  # noqa: F811
) -> None:
    room, (alice, bob) = await make_room(["alice", "bob"])
    carol = await database_sync_to_async(make_player)("carol")
    a, b = await sockets(alice, room), await sockets(bob, room)
    c = await sockets(carol, room)
    assert c.welcome is not None and c.welcome["position"] is None
    snapshot = c.welcome["snapshot"]
    assert snapshot["you"] is None
    assert [s["player"] for s in snapshot["seats"]] == [str(alice.pk), str(bob.pk)]
    assert await watchers(room) == 1
    row = await lobby_row(room, alice)
    assert row is not None and row["watchers"] == 1 and row["allow_spectators"] is True

    # A spectator may not act, nor ask for suggestions.
    for message in (
        {"type": "ready", "id": "r"},
        {"type": "chat", "id": "c", "kind": "phrase", "value": "hello"},
        {"type": "submit", "id": "s", "front": [], "middle": [], "back": []},
        {"type": "suggest", "id": "g", "cards": []},
    ):
        reply = await c.request(message)
        assert reply["type"] == "error" and reply["error"]["code"] == "spectator", reply
    assert (await c.request({"type": "ping", "id": 1}))["type"] == "pong"

    state = await to_arranging(room, clock, {alice: a, bob: b})
    for socket in (a, b):
        hand = await socket.event("hand")
        reply = await socket.request(
            {"type": "submit", "id": "s1", **best_rows(hand["payload"]["cards"], state)}
        )
        assert reply["type"] == "ok"
    await timeout(room, clock, "comparing")
    settled = await c.event("settled")
    assert settled["payload"]["round_no"] == 1

    rows = await round_rows(room)
    secret = set(rows[alice.pk].cards.split()) | set(rows[bob.pk].cards.split())
    seen = [e["type"] for e in c.frames_events()]
    assert "hand" not in seen and "arrangement" not in seen and "draft_saved" not in seen
    assert {"round_start", "deal", "submitted", "reveal", "settled"} <= set(seen)
    for frame in c.frames:  # no hand in any frame before the reveal
        if frame["type"] == "events" and any(e["type"] == "reveal" for e in frame["events"]):
            break
        assert not secret & set(strings(frame)), frame
    else:
        raise AssertionError("the spectator saw no reveal")

    # A snapshot in play never holds a hand either.
    await a.request({"type": "ready", "id": "r2"})
    again = await c.request({"type": "hello", "id": "h2", "since": None})
    assert again["snapshot"]["you"] is None

    await c.communicator.disconnect()
    assert await watchers(room) == 0


@pytest.mark.parametrize("why", ["private", "watching off", "closed"])
async def test_a_room_that_cannot_be_watched_refuses_the_spectator(
    clock: Clock,  # noqa: F811
    why: str,
) -> None:
    room, _users = await make_room(["alice", "bob"])
    if why == "private":
        room.is_private, room.code = True, "ABCDEF"
    elif why == "watching off":
        room.allow_spectators = False
    await database_sync_to_async(room.save)()
    if why == "closed":
        from django.utils import timezone

        from lobby.models import Room

        await database_sync_to_async(Room.objects.filter(pk=room.pk).update)(
            status="closed", closed_at=timezone.now()
        )
    carol = await database_sync_to_async(make_player)("carol")
    error = await refused_not_seated(carol, room.pk)
    assert error["code"] == "not_seated" and "reason" not in error
    assert await watchers(room) == 0


async def test_the_watch_page_is_for_watchable_rooms_only(clock: Clock) -> None:  # noqa: F811
    from django.test import Client

    room, (alice, _bob) = await make_room(["alice", "bob"])
    carol = await database_sync_to_async(make_player)("carol")

    def pages() -> tuple[int, str, int, str]:
        client = Client()
        client.force_login(carol)
        page = client.get(f"/games/table/{room.pk}/watch/")
        seated = Client()
        seated.force_login(alice)
        own = seated.get(f"/games/table/{room.pk}/watch/")
        return page.status_code, page.content.decode(), own.status_code, own["Location"]

    status, html, own_status, location = await database_sync_to_async(pages)()
    assert status == 200 and 'data-testid="watching"' in html and '"spectator": true' in html
    assert own_status == 302 and location == f"/games/table/{room.pk}/"  # alice sits there
    room.allow_spectators = False
    await database_sync_to_async(room.save)()
    status, _html, _own, _loc = await database_sync_to_async(pages)()
    assert status == 302
    state = await state_of(room)
    assert state.phase.value == "waiting"

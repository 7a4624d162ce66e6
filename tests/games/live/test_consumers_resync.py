"""Reproductions of the two table-socket bugs the soak (benchmarks/soak.py) found.

Copy next to tests/games/live/test_consumers.py (it uses that module's fixtures) and run:
    pytest -p no:cacheprovider tests/games/test_repro_soak.py
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async

from games.live import notify as table_notify
from games.models import Table
from tests.games.live.test_consumers import Clock, clock, make_room, sockets  # noqa: F401

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]


async def test_nothing_is_sent_before_the_client_speaks(
    clock: Clock,  # noqa: F811
    sockets: Callable[..., Any],  # noqa: F811
) -> None:
    """docs/protocol.md: "Nothing is sent until the client speaks". A reconnecting client gets
    its own `reconnected` event before its hello is answered; a client that keeps the highest
    version then ignores what the welcome brings (here: Bob's Ready)."""
    room, (alice, bob) = await make_room(["alice", "bob"])
    a = await sockets(alice, room, hello=False)
    since = (await a.request({"type": "hello", "id": "h1", "since": None}))["version"]
    await a.communicator.disconnect()  # Alice goes away ...
    b = await sockets(bob, room)
    assert (await b.request({"type": "ready", "id": "b1"}))["type"] == "ok"  # ... Bob is Ready
    a = await sockets(alice, room, hello=False)  # Alice is back: nothing until she says hello
    assert await a.communicator.receive_nothing(timeout=0.5), await a.communicator.receive_from()
    welcome = await a.request({"type": "hello", "id": "h2", "since": since})
    assert [e["type"] for e in welcome["events"]] == ["disconnected", "ready", "reconnected"]


async def test_a_player_whose_own_left_batch_is_repaired_is_told_it_left(
    clock: Clock,  # noqa: F811
    sockets: Callable[..., Any],  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,  # noqa: F811
) -> None:
    """Two batches published out of order (two web threads or processes): Bob's `left` is late,
    Alice's own `left` comes first. Alice's consumer repairs the gap from the log — but Alice
    is no longer seated, so it reads a spectator's snapshot, drops the batch holding her
    `left`, and never closes with 4000: her client is never told it left."""
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await sockets(alice, room), await sockets(bob, room)
    await a.request({"type": "hello", "id": "h", "since": None})
    await b.request({"type": "hello", "id": "h", "since": None})

    send = table_notify.send_messages
    late: list[Any] = []
    monkeypatch.setattr(
        table_notify, "send_messages", lambda table_id, message: late.append(message)
    )
    assert (await b.request({"type": "leave", "id": "b1"}))["type"] == "ok"  # batch held back
    monkeypatch.setattr(table_notify, "send_messages", send)
    assert (await a.request({"type": "leave", "id": "a1"}))["type"] == "ok"
    table = await database_sync_to_async(Table.objects.get)(room=room)
    await database_sync_to_async(send)(table.pk, late[0])  # Bob's batch arrives late

    outputs: list[dict[str, Any]] = []
    with contextlib.suppress(TimeoutError):
        while not outputs or outputs[-1]["type"] != "websocket.close":
            outputs.append(await a.communicator.receive_output(timeout=1))
    frames = [json.loads(o["text"]) for o in outputs if o["type"] == "websocket.send"]
    events = a.events + [e for f in frames if f["type"] == "events" for e in f["events"]]
    mine = [e for e in events if e["type"] == "left" and e["payload"]["player"] == str(alice.pk)]
    closed = [o.get("code") for o in outputs if o["type"] == "websocket.close"]
    last = [(f["type"], f.get("snapshot", {}).get("seats")) for f in frames[-2:]]
    assert mine or closed == [4000], f"not told; last frames: {last}, closes: {closed}"

"""Publishing committed changes (shisanshui.publish): in order within a group, robust like the
on-commit hooks — a Redis hiccup is retried once, and a message lost anyway never stops the
others nor undoes the committed action — and, inside an outbox, kept for the event loop."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import uuid
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import redis.asyncio.client

from games.live import notify as table_notify
from lobby.signals import lobby_user_group
from shisanshui import publish
from shisanshui.channel_layer import BatchedPubSubChannelLayer

REDIS_URL = os.environ.get("REDIS_URL", "")


class FlakyLayer:
    def __init__(self, failures: dict[str, int] | None = None) -> None:
        self.failures = failures or {}
        self.sent: list[tuple[str, Any]] = []

    async def group_send(self, group: str, message: Any) -> None:
        await asyncio.sleep(0)  # let the other groups' sends interleave
        if self.failures.get(group, 0) > 0:
            self.failures[group] -= 1
            raise ConnectionError("Connection closed by server.")
        self.sent.append((group, message))


@pytest.mark.asyncio
async def test_messages_go_out_in_order_and_a_failure_is_retried_once(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    alice, bob = (
        table_notify.table_player_group(7, "1"),
        table_notify.table_player_group(7, "2"),
    )
    layer = FlakyLayer({alice: 1, bob: 2})  # Alice's first try fails; Bob's both do
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    box = [(alice, {"n": 1}), (bob, {"n": 1}), (alice, {"n": 2}), (bob, {"n": 2})]

    await publish.apublish(box)

    assert [m for g, m in layer.sent if g == alice] == [{"n": 1}, {"n": 2}]
    assert [m for g, m in layer.sent if g == bob] == [{"n": 2}]
    assert f"a message to {bob} was lost" in caplog.text


@pytest.mark.asyncio
async def test_a_batch_is_sent_side_by_side_but_each_group_in_its_order(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layer = FlakyLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    box = [(f"g{i % 3}", {"n": i}) for i in range(12)]

    await publish.apublish(box)

    assert sorted(layer.sent, key=lambda s: s[1]["n"]) == box
    for group in ("g0", "g1", "g2"):
        assert [m["n"] for g, m in layer.sent if g == group] == [
            n for n in range(12) if f"g{n % 3}" == group
        ]
    # side by side: the three groups' first messages went out before any group's second
    assert {g for g, _ in layer.sent[:3]} == {"g0", "g1", "g2"}


def test_inside_an_outbox_nothing_is_published_until_the_caller_does(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    layer = FlakyLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    group = table_notify.table_player_group(3, "9")
    with publish.outbox() as box:
        table_notify.send_messages(3, {"9": {"n": 1}})
        publish.publish([(lobby_user_group(9), {"type": "lobby.seat_round"})])
    assert box == [(group, {"n": 1}), (lobby_user_group(9), {"type": "lobby.seat_round"})]
    assert layer.sent == []
    table_notify.send_messages(3, {"9": {"n": 2}})  # outside: at once
    assert layer.sent == [(group, {"n": 2})]


@pytest.mark.asyncio
async def test_later_work_runs_once_the_box_is_out_and_a_failure_is_logged_and_skipped(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Inside an outbox, work registered with publish_later is kept, not run: the caller
    publishes the box, then runs it (apublish_later, on the executor given) and publishes
    what it made; a piece that fails is logged and the others still go out. Outside an
    outbox it runs at once, after what was published before it."""
    layer = FlakyLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    ran: list[str] = []

    def work(n: int) -> publish.Later:
        def make() -> list[publish.Message]:
            ran.append(threading.current_thread().name)
            return [("g", {"n": n})]

        return make

    def broken() -> list[publish.Message]:
        raise RuntimeError("no suggestions today")

    with publish.outbox() as box:
        publish.publish([("g", {"n": 1})])
        publish.publish_later(work(2))
        publish.publish_later(broken)
        publish.publish_later(work(3))
    assert ran == [] and box == [("g", {"n": 1})] and len(box.later) == 3
    await publish.apublish(box)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="later") as executor:
        await publish.apublish_later(box, executor=executor)
    assert [m["n"] for _, m in layer.sent] == [1, 2, 3]
    assert ran == ["later_0", "later_0"]
    assert "messages to send later could not be made" in caplog.text
    await publish.apublish_later(publish.Outbox())  # nothing kept: nothing to do

    layer.sent.clear()
    await asyncio.to_thread(
        lambda: (publish.publish([("g", {"n": 4})]), publish.publish_later(work(5)))
    )
    assert [m["n"] for _, m in layer.sent] == [4, 5]


@pytest.mark.asyncio
async def test_spawned_later_work_lets_the_caller_go_on_and_a_lost_publish_is_logged(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """spawn_later runs a box's later work in a task of its own: the caller goes on at once
    (the work still running), the messages go out when it is done; a box without work
    spawns nothing; a publish that fails twice is logged (the task's error is not lost)."""
    layer = FlakyLayer()
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    gate = threading.Event()

    def work() -> list[publish.Message]:
        assert gate.wait(5)
        return [("g", {"n": 2})]

    with publish.outbox() as box:
        publish.publish([("g", {"n": 1})])
        publish.publish_later(work)
    await publish.apublish(box)
    with ThreadPoolExecutor(max_workers=1) as executor:
        task = publish.spawn_later(box, executor=executor)
        assert task is not None
        await asyncio.sleep(0.05)
        assert not task.done() and [m["n"] for _, m in layer.sent] == [1]
        gate.set()
        await task
    assert [m["n"] for _, m in layer.sent] == [1, 2]
    assert publish.spawn_later(publish.Outbox()) is None

    async def broken(messages: Any) -> None:
        raise RuntimeError("redis is gone")

    monkeypatch.setattr(publish, "apublish", broken)
    with publish.outbox() as box:
        publish.publish_later(lambda: [("g", {"n": 3})])
    task = publish.spawn_later(box)
    assert task is not None
    with contextlib.suppress(RuntimeError):
        await task
    await asyncio.sleep(0)  # the done callbacks run
    assert "messages to send later were lost" in caplog.text
    assert task not in publish._spawned


def test_without_a_channel_layer_nothing_is_sent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(publish, "get_channel_layer", lambda: None)
    publish.publish([("g", {"n": 1})])  # no error


@pytest.mark.asyncio
@pytest.mark.skipif(not REDIS_URL, reason="no REDIS_URL")
async def test_on_the_pub_sub_layer_a_batch_is_one_pipeline_received_as_group_sends(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A batch is handed to the layer at once: its messages arrive as group_send's would, to
    every member of each group, in order, in one pipeline."""
    sender = BatchedPubSubChannelLayer(hosts=[REDIS_URL], prefix=f"t{uuid.uuid4().hex}")
    receiver = BatchedPubSubChannelLayer(hosts=[REDIS_URL], prefix=sender._kwargs["prefix"])
    monkeypatch.setattr(publish, "get_channel_layer", lambda: sender)
    alice, everyone = "table.9.player.1", "table.9.public"
    channel_a, channel_b = await receiver.new_channel(), await receiver.new_channel()
    await receiver.group_add(alice, channel_a)
    await receiver.group_add(everyone, channel_a)
    await receiver.group_add(everyone, channel_b)
    executes: list[int] = []
    real = redis.asyncio.client.Pipeline.execute

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        executes.append(len(self.command_stack))
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(redis.asyncio.client.Pipeline, "execute", counted)
    try:
        box = [
            (alice, {"type": "table.events", "n": 1}),
            (everyone, {"type": "table.events", "n": 2}),
            (alice, {"type": "table.events", "n": 3}),
        ]
        await publish.apublish(box)

        got_a = [(await asyncio.wait_for(receiver.receive(channel_a), 5))["n"] for _ in range(3)]
        got_b = (await asyncio.wait_for(receiver.receive(channel_b), 5))["n"]
        assert got_a == [1, 2, 3] and got_b == 2
        assert executes == [3]  # one round trip for the whole batch
    finally:
        await receiver.flush()
        await sender.flush()

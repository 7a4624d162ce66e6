"""The batched pub/sub channel layer (shisanshui.channel_layer) on a real Redis: what was
queued while a command was in flight goes in one command, nothing is reordered within a
group, subscriptions end as the last change asked, failures reach the callers, and the
original channels_redis layer on another process reads what it sends."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio.client
from channels_redis.pubsub import RedisPubSubChannelLayer

from shisanshui import publish
from shisanshui.channel_layer import BatchedPubSubChannelLayer, redis_host

REDIS_URL = os.environ.get("REDIS_URL", "")

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(not REDIS_URL, reason="no REDIS_URL"),
]


Layers = Callable[..., tuple[Any, Any]]


@pytest_asyncio.fixture
async def layers() -> AsyncIterator[Layers]:
    """A factory of (sender, receiver) on one prefix; every layer is flushed at the end."""
    made: list[Any] = []

    def make(receiver_class: Any = BatchedPubSubChannelLayer) -> tuple[Any, Any]:
        prefix = f"t{uuid.uuid4().hex}"
        made.extend(
            (
                BatchedPubSubChannelLayer(hosts=[REDIS_URL], prefix=prefix),
                receiver_class(hosts=[REDIS_URL], prefix=prefix),
            )
        )
        return made[-2], made[-1]

    yield make
    for layer in made:
        await layer.flush()


def _count(monkeypatch: pytest.MonkeyPatch, cls: Any, name: str) -> list[Any]:
    """Each call of ``cls.name``: the pipeline's command count, or the call's arguments."""
    calls: list[Any] = []
    real = getattr(cls, name)

    async def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(len(self.command_stack) if name == "execute" else args)
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


async def _receive(layer: Any, channel: str, n: int) -> list[Any]:
    return [(await asyncio.wait_for(layer.receive(channel), 5))["n"] for _ in range(n)]


async def test_sends_queued_during_a_pipeline_go_in_the_next_one_each_group_in_order(
    layers: Layers, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender, receiver = layers(RedisPubSubChannelLayer)  # the original reads it
    channels = [await receiver.new_channel() for _ in range(3)]
    for i, channel in enumerate(channels):
        await receiver.group_add(f"g{i}", channel)
    executes = _count(monkeypatch, redis.asyncio.client.Pipeline, "execute")
    # 60 callers at once, each a message to one of three groups, some through group_send
    await asyncio.gather(
        *(
            sender.group_send(f"g{n % 3}", {"type": "m", "n": n})
            if n % 2
            else sender.group_send_many([(f"g{n % 3}", {"type": "m", "n": n})])
            for n in range(60)
        )
    )
    for i, channel in enumerate(channels):
        assert await _receive(receiver, channel, 20) == list(range(i, 60, 3))
    assert sum(executes) == 60
    assert len(executes) <= 2  # the first caller's pipeline, then everybody else's


async def test_a_batch_of_messages_keeps_its_order_across_groups_of_one_server(
    layers: Layers,
) -> None:
    sender, receiver = layers()
    channel = await receiver.new_channel()
    await receiver.group_add("a", channel)
    await receiver.group_add("b", channel)
    await sender.group_send_many([(g, {"type": "m", "n": n}) for n, g in enumerate("abab")])
    assert await _receive(receiver, channel, 4) == [0, 1, 2, 3]


async def test_a_group_message_is_decoded_once_for_all_the_process_channels_in_the_group(
    layers: Layers, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender, receiver = layers()
    decoded: list[bytes] = []
    real = receiver._serializer.deserialize

    def counted(data: bytes) -> Any:
        decoded.append(data)
        return real(data)

    monkeypatch.setattr(receiver._serializer, "deserialize", counted)
    table = [await receiver.new_channel() for _ in range(4)]
    alone = await receiver.new_channel()
    for channel in table:
        await receiver.group_add("table.1.public", channel)
    await receiver.group_add("table.1.player.9", alone)
    events = [{"version": 7, "type": "ready", "payload": {"position": 2}}]
    await sender.group_send("table.1.public", {"type": "table.events", "events": events})
    await sender.group_send("table.1.player.9", {"type": "table.events", "n": 1})
    got = [await asyncio.wait_for(receiver.receive(c), 5) for c in table]
    assert all(m == {"type": "table.events", "events": events} for m in got)
    assert all(m is got[0] for m in got)  # one decoded message, read by all four
    assert len(decoded) == 1
    assert (await asyncio.wait_for(receiver.receive(alone), 5))["n"] == 1
    assert len(decoded) == 2  # a group of one channel: decoded when received, as before
    # A channel's own messages (not a group's) are untouched by this.
    await sender.send(alone, {"type": "direct", "n": 2})
    assert (await asyncio.wait_for(receiver.receive(alone), 5))["n"] == 2


async def test_an_undecodable_group_message_is_dropped_and_the_next_one_flows(
    layers: Layers, caplog: pytest.LogCaptureFixture
) -> None:
    sender, receiver = layers()
    table = [await receiver.new_channel() for _ in range(2)]
    for channel in table:
        await receiver.group_add("table.2.public", channel)
    shard = sender._get_layer()._get_shard(sender._get_layer()._get_group_channel_name("x"))
    await shard.publish(receiver._get_layer()._get_group_channel_name("table.2.public"), b"\xc1")
    await sender.group_send("table.2.public", {"type": "m", "n": 3})
    got = [await asyncio.wait_for(receiver.receive(c), 2) for c in table]
    assert [m["n"] for m in got] == [3, 3]
    assert "Undecodable message on" in caplog.text


async def test_many_sockets_joining_at_once_subscribe_in_a_few_commands(
    layers: Layers, monkeypatch: pytest.MonkeyPatch
) -> None:
    sender, receiver = layers()
    subscribes = _count(monkeypatch, redis.asyncio.client.PubSub, "subscribe")

    async def socket(n: int) -> str:
        channel = await receiver.new_channel()
        await receiver.group_add(f"table.{n % 10}", channel)
        await receiver.group_add(f"table.{n % 10}.player.{n}", channel)
        return channel

    channels = await asyncio.gather(*(socket(n) for n in range(100)))
    assert sum(len(args) for args in subscribes) == 100 + 10 + 100
    assert len(subscribes) <= 6  # 300 changes, batched while one was in flight
    await sender.group_send("table.3", {"type": "m", "n": 1})
    await sender.group_send("table.3.player.13", {"type": "m", "n": 2})
    assert await _receive(receiver, channels[13], 2) == [1, 2]
    assert await _receive(receiver, channels[3], 1) == [1]


async def test_the_last_change_of_a_channel_in_a_batch_decides(layers: Layers) -> None:
    sender, receiver = layers()
    first, second = await receiver.new_channel(), await receiver.new_channel()
    await receiver.group_add("g", first)
    # The group's last member leaves while another joins, in the same batch: the process
    # stays subscribed (the original's order: UNSUBSCRIBE, then SUBSCRIBE).
    await asyncio.gather(receiver.group_discard("g", first), receiver.group_add("g", second))
    await sender.group_send("g", {"type": "m", "n": 1})
    assert await _receive(receiver, second, 1) == [1]
    # And a leave after the join unsubscribes: nothing arrives any more.
    await receiver.group_discard("g", second)
    await sender.group_send("g", {"type": "m", "n": 2})
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(receiver.receive(second), 0.5)
    shard = receiver._get_layer()._shards[0]
    assert receiver._get_layer()._get_group_channel_name("g") not in shard._subscribed_to


async def test_a_cancelled_caller_still_sends_its_messages(layers: Layers) -> None:
    sender, receiver = layers()
    channel = await receiver.new_channel()
    await receiver.group_add("g", channel)
    task = asyncio.ensure_future(sender.group_send("g", {"type": "m", "n": 1}))
    await asyncio.sleep(0)  # queued, and its pipeline started
    task.cancel()
    assert await _receive(receiver, channel, 1) == [1]


async def test_a_failed_pipeline_reaches_every_caller_of_its_batch_and_publish_retries_once(
    layers: Layers, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    sender, receiver = layers()
    channel = await receiver.new_channel()
    await receiver.group_add("g", channel)
    real = redis.asyncio.client.Pipeline.execute
    failures = [2]

    async def flaky(self: Any, *args: Any, **kwargs: Any) -> Any:
        if failures[0] > 0:
            failures[0] -= 1
            raise ConnectionError("Connection closed by server.")
        return await real(self, *args, **kwargs)

    monkeypatch.setattr(redis.asyncio.client.Pipeline, "execute", flaky)
    monkeypatch.setattr(publish, "get_channel_layer", lambda: sender)
    results = await asyncio.gather(
        *(sender.group_send("g", {"type": "m", "n": n}) for n in range(3)),
        return_exceptions=True,
    )
    assert all(isinstance(r, ConnectionError) for r in results)  # one batch, failed
    # apublish: the first try fails, the second goes through
    await publish.apublish([("g", {"type": "m", "n": 7})])
    assert await _receive(receiver, channel, 1) == [7]
    # both tries fail: logged as lost, nothing raised
    failures[0] = 2
    await publish.apublish([("g", {"type": "m", "n": 8}), ("g", {"type": "m", "n": 9})])
    assert "2 messages were lost" in caplog.text


async def test_after_a_flush_the_layer_connects_again(layers: Layers) -> None:
    sender, receiver = layers()
    channel = await receiver.new_channel()
    await receiver.group_add("g", channel)
    await sender.group_send("g", {"type": "m", "n": 1})
    assert await _receive(receiver, channel, 1) == [1]
    await receiver.flush()
    await sender.flush()
    channel = await receiver.new_channel()
    await receiver.group_add("g", channel)
    await sender.group_send("g", {"type": "m", "n": 2})
    assert await _receive(receiver, channel, 1) == [2]


async def _kill_clients(name: str) -> int:
    """Close, from the server's side, every connection named ``name`` (as a restart would)."""
    admin = redis.asyncio.Redis.from_url(REDIS_URL)
    try:
        ids = [c["id"] for c in await admin.client_list() if c.get("name") == name]
        for id_ in ids:
            await admin.client_kill_filter(_id=id_)
        return len(ids)
    finally:
        await admin.aclose()


async def test_after_the_server_drops_every_connection_the_next_send_and_receive_work(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What a Redis restart does to a web process's pools: every connection, idle or
    # subscribed, dead at once. Configured as the settings configure it, nothing is lost.
    name = f"t{uuid.uuid4().hex[:12]}"
    layer = BatchedPubSubChannelLayer(hosts=[redis_host(REDIS_URL, client_name=name)], prefix=name)
    monkeypatch.setattr(publish, "get_channel_layer", lambda: layer)
    try:
        channel = await layer.new_channel()
        await layer.group_add("g", channel)
        for n in (1, 2):
            await layer.group_send("g", {"type": "m", "n": n})
        assert await _receive(layer, channel, 2) == [1, 2]
        assert await _kill_clients(name) >= 1
        await publish.apublish([("g", {"type": "m", "n": 3})])  # not retried by apublish
        assert "again" not in caplog.text and "lost" not in caplog.text
        assert await _receive(layer, channel, 1) == [3]
        await layer.group_send("g", {"type": "m", "n": 4})
        assert await _receive(layer, channel, 1) == [4]
    finally:
        await layer.flush()

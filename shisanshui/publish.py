"""Publishing to channel groups after a commit, from a thread or from the event loop.

Services notify on commit (STYLE.md: lock → write → notify on commit). A service called from
a WebSocket consumer runs on a service thread; publishing from there with ``async_to_sync``
blocks that thread on one hop to the event loop and one Redis trip per message, and the
action's reply and broadcast wait for all of it. Inside :func:`outbox` the thread's messages
are kept instead, and the consumer publishes them itself from its event loop with
:func:`apublish` (the table's socket does, for the table's messages and the lobby's banners
alike). Everywhere else (Celery tasks, views, the lobby's own socket) :func:`publish` sends at
once.

On the Redis pub/sub layer (production's), :func:`apublish` sends a whole batch in one
pipeline: one Redis round trip, and one turn of the layer's per-connection lock, for a
command's messages to every group, in their order. This reaches into channels_redis's pub/sub
layer (its group channel names, its shards); tests/shisanshui/test_publish.py checks the
pipelined messages arrive through the layer as ``group_send``'s would, so an upgrade that
changes those internals fails there. Any other layer gets ``group_send`` per message.

Like the on-commit hooks, a failure (Redis restarting) is logged and never undoes or hides the
committed change: each message (or pipeline) is tried twice (the layer reconnects), and a
message lost anyway is repaired by the clients (a gap in versions, a snapshot on
reconnection); a message sent twice is dropped by its versions.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels_redis.pubsub import RedisPubSubChannelLayer

logger = logging.getLogger(__name__)

Message = tuple[str, dict[str, Any]]  # (group, message)

_outboxes = threading.local()


@contextmanager
def outbox() -> Iterator[list[Message]]:
    """Keep this thread's published messages in the yielded list instead of sending them; the
    caller must then ``await apublish(...)`` them."""
    previous = getattr(_outboxes, "box", None)
    box: list[Message] = []
    _outboxes.box = box
    try:
        yield box
    finally:
        _outboxes.box = previous


def publish(messages: Sequence[Message]) -> None:
    """Send ``messages`` in order (or keep them in this thread's outbox)."""
    if not messages:
        return
    box = getattr(_outboxes, "box", None)
    if box is not None:
        box.extend(messages)
        return
    async_to_sync(apublish)(list(messages))


async def apublish(messages: Sequence[Message]) -> None:
    """Send ``messages``: in their order within each group, the groups side by side (one
    Redis trip of latency for a whole batch instead of one per message)."""
    if not messages:
        return
    layer = get_channel_layer()
    if layer is None:
        return
    if isinstance(layer, RedisPubSubChannelLayer):
        await _pipelined(layer, messages)
        return
    by_group: dict[str, list[dict[str, Any]]] = {}
    for group, message in messages:
        by_group.setdefault(group, []).append(message)
    if len(by_group) == 1:
        ((group, queue),) = by_group.items()
        await _send_all(layer, group, queue)
        return
    await asyncio.gather(*(_send_all(layer, g, q) for g, q in by_group.items()))


async def _send_all(layer: Any, group: str, queue: list[dict[str, Any]]) -> None:
    for message in queue:
        for attempt in (1, 2):
            try:
                await layer.group_send(group, message)
                break
            except Exception:
                if attempt == 2:
                    logger.warning("a message to %s was lost", group)
                else:
                    logger.info("publishing to %s again", group, exc_info=True)


async def _pipelined(layer: RedisPubSubChannelLayer, messages: Sequence[Message]) -> None:
    """PUBLISH every message as ``group_send`` would, one pipeline per shard (one with a single
    Redis server), in order."""
    loop_layer = layer._get_layer()
    by_shard: dict[Any, list[tuple[str, bytes]]] = {}
    for group, message in messages:
        channel = loop_layer._get_group_channel_name(group)
        shard = loop_layer._get_shard(channel)
        by_shard.setdefault(shard, []).append((channel, layer.serialize(message)))
    for shard, published in by_shard.items():
        for attempt in (1, 2):
            try:
                async with shard._lock:
                    shard._ensure_redis()
                    pipeline = shard._redis.pipeline(transaction=False)
                    for channel, data in published:
                        pipeline.publish(channel, data)
                    await pipeline.execute()
                break
            except Exception:
                if attempt == 2:
                    logger.warning("%d messages were lost", len(published))
                else:
                    logger.info("publishing %d messages again", len(published), exc_info=True)

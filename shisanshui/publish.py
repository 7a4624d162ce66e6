"""Publishing to channel groups after a commit, from a thread or from the event loop.

Services notify on commit (STYLE.md: lock → write → notify on commit). A service called from
a WebSocket consumer runs on a service thread; publishing from there with ``async_to_sync``
blocks that thread on one hop to the event loop and one Redis trip per message, and the
action's reply and broadcast wait for all of it. Inside :func:`outbox` the thread's messages
are kept instead, and the consumer publishes them itself from its event loop with
:func:`apublish` (the table's socket does, for the table's messages and the lobby's banners
alike). Everywhere else (Celery tasks, views, the lobby's own socket) :func:`publish` sends at
once.

On the Redis pub/sub layer (production's, ``shisanshui.channel_layer``), :func:`apublish`
hands a whole batch to the layer at once: it goes out in one pipeline, with the batches of
the other commands that finished while the previous pipeline was in flight, each group's
messages in their order. Any other layer gets ``group_send`` per message.

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
    if hasattr(layer, "group_send_many"):  # shisanshui.channel_layer's
        await _send_many(layer, list(messages))
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


async def _send_many(layer: Any, messages: list[Message]) -> None:
    for attempt in (1, 2):
        try:
            await layer.group_send_many(messages)
            return
        except Exception:
            if attempt == 2:
                logger.warning("%d messages were lost", len(messages))
            else:
                logger.info("publishing %d messages again", len(messages), exc_info=True)

"""Publishing to channel groups after a commit, from a thread or from the event loop.

Services notify on commit (STYLE.md: lock → write → notify on commit). A service called from
a WebSocket consumer runs on a service thread, where ``async_to_sync`` would block on a hop to
the event loop and a Redis trip per message, and the action's reply and broadcast would wait
for all of it. Inside :func:`outbox` the thread's messages are kept instead, and the consumer
publishes them itself from its event loop with :func:`apublish`. Everywhere else (Celery
tasks, views, the lobby's own socket) :func:`publish` sends at once. :func:`publish_later`
holds back the messages that must not delay the others (a dealt hand's suggestions).

Like the on-commit hooks, a failure (Redis restarting) is logged and never undoes or hides the
committed change: each message (or pipeline) is tried twice (the layer reconnects), and a
message lost anyway is repaired by the clients (a gap in versions, a snapshot on
reconnection); a message sent twice is dropped by its versions.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor
from contextlib import contextmanager
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

logger = logging.getLogger(__name__)

Message = tuple[str, dict[str, Any]]  # (group, message)
Later = Callable[[], Sequence[Message]]  # work that makes messages, after the others are out

_outboxes = threading.local()


class Outbox(list[Message]):
    """A thread's kept messages, in order, and the work to do once they are published."""

    def __init__(self) -> None:
        super().__init__()
        self.later: list[Later] = []

    def run_later(self) -> list[Message]:
        """The messages of the kept work, in order (a failing piece is logged and skipped)."""
        return [m for work in self.later for m in _made(work)]


@contextmanager
def outbox() -> Iterator[Outbox]:
    """Keep this thread's published messages in the yielded list instead of sending them; the
    caller must then ``await apublish(...)`` them, and ``await apublish_later(...)``. The
    table's socket does, for the table's messages and the lobby's banners alike."""
    previous = getattr(_outboxes, "box", None)
    box = Outbox()
    _outboxes.box = box
    try:
        yield box
    finally:
        _outboxes.box = previous


def _made(work: Later) -> Sequence[Message]:
    try:
        return work()
    except Exception:
        logger.exception("messages to send later could not be made")
        return []


def publish_later(work: Later) -> None:
    """Send the messages ``work()`` makes once those published before are out: at once
    outside an outbox; inside one, the work is kept with the box (``Outbox.later``) and its
    consumer runs it once the box is published (:func:`apublish_later`, or
    :func:`spawn_later` so that the socket goes on passing its events meanwhile). For the
    messages the others must not wait for: the engine's suggestions for a dealt hand take
    milliseconds of CPU per hand, and the deal must not wait for them."""
    box = getattr(_outboxes, "box", None)
    if box is not None:
        box.later.append(work)
        return
    publish(_made(work))


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
    Redis trip of latency for a whole batch instead of one per message).

    On the Redis pub/sub layer (production's, ``shisanshui.channel_layer``) the whole batch
    goes to the layer at once: it goes out in one pipeline, with the batches of the other
    commands that finished while the previous pipeline was in flight, each group's messages in
    their order. Any other layer gets ``group_send`` per message."""
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


async def apublish_later(box: Outbox, *, executor: Executor | None = None) -> None:
    """Run ``box``'s later work on ``executor`` (a thread: it may be CPU work) and publish
    what it makes; call it once ``box`` itself is published."""
    if not box.later:
        return
    loop = asyncio.get_running_loop()
    await apublish(await loop.run_in_executor(executor, box.run_later))


# The running spawn_later tasks (the loop keeps only weak references to its tasks).
_spawned: set[asyncio.Task[None]] = set()


def spawn_later(box: Outbox, *, executor: Executor | None = None) -> asyncio.Task[None] | None:
    """:func:`apublish_later` in a task of its own, None when ``box`` kept no work; call it
    once ``box`` itself is published. The caller goes on at once: a socket's consumer, which
    handles one message at a time, would otherwise hold back every message it has to pass on
    (its player's own events of that very command among them) for the work's milliseconds.
    What the work publishes still follows what ``box`` published (that is out already). A
    failure is logged."""
    if not box.later:
        return None
    task = asyncio.get_running_loop().create_task(apublish_later(box, executor=executor))
    _spawned.add(task)
    task.add_done_callback(_spawn_done)
    return task


def _spawn_done(task: asyncio.Task[None]) -> None:
    _spawned.discard(task)
    if not task.cancelled() and task.exception() is not None:
        logger.error("messages to send later were lost", exc_info=task.exception())


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

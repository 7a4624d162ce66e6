"""The Redis pub/sub channel layer, its Redis commands batched per event loop.

channels_redis's pub/sub layer sends every PUBLISH, SUBSCRIBE and UNSUBSCRIBE of a process
under one ``asyncio.Lock`` per Redis server, a PUBLISH holding it for its whole round trip:
under load each turn of the lock waits for an iteration of a busy event loop, and a command's
broadcast waits behind every subscription and every other command's PUBLISH
(docs/load-and-faults.md, "Design choices that hold").

:class:`BatchedPubSubChannelLayer` is the same layer (same channel names, same wire format,
interchangeable with the original on other processes) whose shard connections keep a queue
instead of a lock, drained by one sender task per event loop and Redis server: what is queued
while a batch is in flight goes in the next one, the publishes as one pipeline, the
subscription changes as one UNSUBSCRIBE and one SUBSCRIBE (:class:`BatchedShardConnection`).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from channels_redis.pubsub import (
    RedisPubSubChannelLayer,
    RedisPubSubLoopLayer,
    RedisSingleShardConnection,
)
from channels_redis.utils import _wrap_close, decode_hosts
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

# A command that meets a dead connection (Redis restarted, the connection dropped) is sent
# again on a new one: 0.05 + 0.1 + 0.2 + 0.4 + 0.5 s of backoff, about as long as a restart.
RETRIES = 5


def redis_host(url: str, **options: Any) -> dict[str, Any]:
    """A channel layer's ``hosts`` entry for ``url`` whose commands survive a dead connection.

    Without it every connection of channels_redis's pools is made with redis-py's
    ``Retry(NoBackoff(), 0)``: after a Redis restart each pooled connection fails its next
    command once (a lost broadcast, a socket's receive loop ending and closing the socket),
    however many connections the pool holds. A command is sent again only when its connection
    failed before the answer came (an event could then, rarely, arrive twice: the table's
    clients drop an event whose version they already have). The subscriptions survive too:
    redis-py's ``PubSub`` subscribes again to its channels when it reconnects.

    Only for this pub/sub layer: channels_redis's core layer keeps its groups in Redis, which
    a restart empties, and a socket that kept running on a retried connection would never
    hear its groups again; there the failure that closes the socket is the recovery."""
    return {
        "address": url,
        "retry": Retry(ExponentialBackoff(cap=0.5, base=0.05), RETRIES),
        "retry_on_error": [RedisConnectionError, RedisTimeoutError],
        **options,
    }


Waiting = list[tuple[Any, asyncio.Future[None]]]


def _settle(waiting: Waiting, error: BaseException | None = None) -> None:
    for _, done in waiting:
        if not done.done():
            if error is None:
                done.set_result(None)
            else:
                done.set_exception(error)


class _Batches:
    """Items queued while a batch is being sent go together in the next one, in order; one
    sender task at a time, started by the first item and ending when nothing waits.

    Each caller still waits for its own item to be sent, and a failure reaches every caller
    of its batch, as the original layer's reached its one caller."""

    def __init__(self, send: Callable[[list[Any]], Awaitable[None]]) -> None:
        self._send = send
        self._waiting: Waiting = []
        self._sender: asyncio.Future[None] | None = None

    def put(self, item: Any) -> asyncio.Future[None]:
        """Queue ``item`` now; the future is done when its batch was sent (or failed). A caller
        cancelled while waiting (its socket closed) does not take its item back."""
        done = asyncio.get_running_loop().create_future()
        self._waiting.append((item, done))
        if self._sender is None:
            self._sender = asyncio.ensure_future(self._drain())
        return done

    async def _drain(self) -> None:
        taken: Waiting = []
        try:
            while self._waiting:
                taken, self._waiting = self._waiting, []
                try:
                    await self._send([item for item, _ in taken])
                except Exception as error:
                    _settle(taken, error)
                else:
                    _settle(taken)
                taken = []
        finally:
            self._sender = None
            # Only when this task is cancelled (its loop closing): nobody waits for ever.
            _settle([*taken, *self._waiting], ConnectionError("the channel layer closed"))
            self._waiting = []


class Decoded:
    """A group message decoded once for all of a process's channels in the group (see
    :meth:`BatchedShardConnection._receive_message`)."""

    __slots__ = ("message",)

    def __init__(self, message: dict[str, Any]) -> None:
        self.message = message


class BatchedShardConnection(RedisSingleShardConnection):
    """One Redis server's connections, its commands batched by kind:

    - **publishes**: everything queued while a pipeline is in flight goes in the next
      pipeline, in the order it was queued (a group's messages reach Redis in the order of
      the calls); the pipeline runs on a connection of the shard's pool, never on the
      subscriptions';
    - **subscriptions**: the changes queued meanwhile become one UNSUBSCRIBE and one
      SUBSCRIBE command with many channels, the last change of a channel deciding (a socket
      leaving a group and another joining it in the same batch leave it subscribed, as the
      original's order would).
    """

    def _receive_message(self, message: Any) -> None:
        """A message from Redis, queued for each of this process's channels it is for. A
        group's message is decoded once, however many sockets of the group this process
        holds (four at a table, all of them in the lobby), where channels_redis decodes it
        again for each. The consumers share the decoded message, and only read it."""
        if message is None:
            return
        name, data = message["channel"], message["data"]
        if isinstance(name, bytes):
            name = name.decode()
        layer = self.channel_layer
        if name in layer.channels:
            layer.channels[name].put_nowait(data)
        elif name in layer.groups:
            queues = [layer.channels[c] for c in layer.groups[name] if c in layer.channels]
            if len(queues) > 1:
                try:
                    data = Decoded(layer.channel_layer.deserialize(data))
                except Exception:  # not from a server of ours: dropped, the others flow on
                    logger.exception("Undecodable message on %s dropped", name)
                    return
            for queue in queues:
                queue.put_nowait(data)

    def __init__(self, host: Any, channel_layer: Any) -> None:
        super().__init__(host, channel_layer)
        self._publishes = _Batches(self._publish_batch)
        self._changes = _Batches(self._change_batch)

    async def publish(self, channel: str, message: bytes) -> None:
        await self.queue_publish([(channel, message)])

    def queue_publish(self, published: list[tuple[str, bytes]]) -> asyncio.Future[None]:
        """Queue the PUBLISH of each (channel, data) now, in order; done when sent."""
        return self._publishes.put(published)

    async def _publish_batch(self, batch: list[list[tuple[str, bytes]]]) -> None:
        self._ensure_redis()
        pipeline = self._redis.pipeline(transaction=False)
        for published in batch:
            for channel, data in published:
                pipeline.publish(channel, data)
        await pipeline.execute()

    async def subscribe(self, channel: str) -> None:
        await self._changes.put((channel, True))

    async def unsubscribe(self, channel: str) -> None:
        await self._changes.put((channel, False))

    async def _change_batch(self, batch: list[tuple[str, bool]]) -> None:
        wanted = dict(batch)  # the last change of a channel decides
        async with self._lock:  # flush() takes it too
            drop = [c for c, w in wanted.items() if not w and c in self._subscribed_to]
            add = [c for c, w in wanted.items() if w and c not in self._subscribed_to]
            if drop or add:
                self._ensure_redis()
                self._ensure_receiver()
            if drop:
                await self._pubsub.unsubscribe(*drop)
                self._subscribed_to.difference_update(drop)
            if add:
                await self._pubsub.subscribe(*add)
                self._subscribed_to.update(add)


class BatchedPubSubLoopLayer(RedisPubSubLoopLayer):
    """The pub/sub layer of one event loop, on :class:`BatchedShardConnection` shards."""

    def __init__(self, *args: Any, hosts: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, hosts=hosts, **kwargs)
        self._shards = [BatchedShardConnection(host, self) for host in decode_hosts(hosts)]

    async def group_send_many(self, messages: list[tuple[str, bytes]]) -> None:
        """``group_send`` of each (group, serialized message), in order within each shard
        (so within each group), one pipeline per shard."""
        by_shard: dict[BatchedShardConnection, list[tuple[str, bytes]]] = {}
        for group, data in messages:
            channel = self._get_group_channel_name(group)
            by_shard.setdefault(self._get_shard(channel), []).append((channel, data))
        # Queued now, every shard's part before the first await: the order of the calls.
        await asyncio.gather(*(s.queue_publish(p) for s, p in by_shard.items()))


class BatchedPubSubChannelLayer(RedisPubSubChannelLayer):
    """``channels_redis.pubsub.RedisPubSubChannelLayer`` with its commands batched."""

    def _get_layer(self) -> BatchedPubSubLoopLayer:
        loop = asyncio.get_running_loop()
        try:
            layer: BatchedPubSubLoopLayer = self._layers[loop]
        except KeyError:
            layer = BatchedPubSubLoopLayer(*self._args, **self._kwargs, channel_layer=self)
            self._layers[loop] = layer
            _wrap_close(self, loop)
        return layer

    def deserialize(self, message: Any) -> dict[str, Any]:
        if isinstance(message, Decoded):  # decoded once for the whole group
            return message.message
        decoded: dict[str, Any] = super().deserialize(message)
        return decoded

    async def group_send_many(self, messages: list[tuple[str, dict[str, Any]]]) -> None:
        """Send each (group, message) as ``group_send`` would: in order within each group,
        in one pipeline with whatever else is waiting."""
        await self._get_layer().group_send_many(
            [(group, self.serialize(message)) for group, message in messages]
        )

"""Group-send latency of the two channels-redis layers, without Django's request path.

    python -m benchmarks.channel_layers --redis redis://127.0.0.1:6393/0 --messages 2000

For each layer (``channels_redis.pubsub.RedisPubSubChannelLayer``, the platform's
``shisanshui.channel_layer.BatchedPubSubChannelLayer`` and
``channels_redis.core.RedisChannelLayer``) it adds ``--members`` channels to one group (one
table's seats), then sends ``--messages`` messages to the group one after another and times
each from ``group_send`` until every member has received it. Prints p50/p99 in milliseconds.
Use a private Redis (not the platform's): the core layer writes keys there.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from typing import Any

from channels_redis.core import RedisChannelLayer
from channels_redis.pubsub import RedisPubSubChannelLayer

from benchmarks.table_client import percentile
from shisanshui.channel_layer import BatchedPubSubChannelLayer

LAYERS: dict[str, Any] = {
    "pubsub": RedisPubSubChannelLayer,
    "batched": BatchedPubSubChannelLayer,
    "core": RedisChannelLayer,
}


async def measure(layer_class: Any, url: str, members: int, messages: int) -> list[float]:
    layer = layer_class(hosts=[url])
    channels = [await layer.new_channel() for _ in range(members)]
    group = f"bench.{time.monotonic_ns()}"
    for channel in channels:
        await layer.group_add(group, channel)
    # A table's events message, roughly its usual size.
    payload = {"type": "table.events", "events": [{"version": 1, "type": "x", "payload": {}}] * 3}
    samples = []
    try:
        for _ in range(messages):
            start = time.perf_counter()
            await layer.group_send(group, payload)
            await asyncio.gather(*(layer.receive(c) for c in channels))
            samples.append(1000 * (time.perf_counter() - start))
    finally:
        for channel in channels:
            await layer.group_discard(group, channel)
        # Close the connections only: the core layer's flush() would delete every key of
        # its prefix, other processes' included.
        await (layer.close_pools() if hasattr(layer, "close_pools") else layer.flush())
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.channel_layers")
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--members", type=int, default=4)
    parser.add_argument("--messages", type=int, default=2000)
    args = parser.parse_args()
    for name, layer_class in LAYERS.items():
        samples = asyncio.run(measure(layer_class, args.redis, args.members, args.messages))
        print(
            f"{name:>6}: group_send -> {args.members} receivers: "
            f"p50={percentile(samples, 50):.2f} ms p99={percentile(samples, 99):.2f} ms "
            f"({len(samples)} messages)"
        )


if __name__ == "__main__":
    main()

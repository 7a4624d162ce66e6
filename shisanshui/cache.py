"""Django's Redis cache, with one Redis client and connection pool per process.

``django.core.cache.backends.redis.RedisCacheClient.get_client`` builds a new ``redis.Redis``
for every cache operation, and building one costs more CPU than the operation's round trip
(the table's WebSocket reads and writes the cache on every action). A ``redis.Redis`` is
thread-safe (it takes a connection from its pool for each command), so one per pool is shared
by every thread.

And Django makes a cache backend per thread *and per asyncio context* (``caches`` is an
``asgiref.local.Local``): under Channels every WebSocket consumer runs in a context of its
own, so each socket got its own backend, its own connection pool and a new Redis connection
(a TCP connect and a handshake on its first cache operation), left to the garbage collector
when the socket closed. The backends of one configuration now share one client: the pool
lives as long as the process, as the database connections of the service threads do.
"""

from __future__ import annotations

import threading
from functools import cached_property
from typing import Any

from django.core.cache.backends.redis import RedisCache as DjangoRedisCache
from django.core.cache.backends.redis import RedisCacheClient as DjangoRedisCacheClient


class RedisCacheClient(DjangoRedisCacheClient):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._client(
                connection_pool=self._get_connection_pool(write)
            )
        return client


_SHARED: dict[str, RedisCacheClient] = {}
_SHARED_LOCK = threading.Lock()


class RedisCache(DjangoRedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = RedisCacheClient

    @cached_property
    def _cache(self) -> RedisCacheClient:  # type: ignore[override]
        """The process's client for these servers and options (one pool for every thread
        and every consumer's context), looked up once per backend."""
        key = repr((self._servers, sorted(self._options.items())))
        client = _SHARED.get(key)
        if client is None:
            with _SHARED_LOCK:
                client = _SHARED.get(key)
                if client is None:
                    client = _SHARED[key] = self._class(self._servers, **self._options)
        return client

"""Named rate limits, shared by every process: a thin layer over the `limits` library.

A limit has a name and one or more rates in ``settings.RATE_LIMITS`` (documented there, e.g.
``"lobby.message": "10/second;120/minute"``: every rate must hold), and is counted per key
(a user id, or a user and a table). The counters live in Redis when ``settings.REDIS_URL`` is
set, so all web processes and workers share one budget per key; otherwise in this process's
memory. Keys start with ``settings.RATE_LIMIT_KEY_PREFIX`` (each test gets its own).

:func:`rate_limit_hit` spends, :func:`rate_limit_check` asks without spending and
:func:`rate_limit_block` spends the whole budget (a cool-down); each has an ``a``-prefixed
coroutine for the consumers, on the asynchronous Redis client of `limits` (one per event
loop), so a busy socket never blocks daphne's loop. The strategy is the moving window (exact:
N in any window of that length). If Redis is unreachable the limits fail open (allowed,
logged).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import redis
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from limits import RateLimitItem, parse_many
from limits.aio.storage import RedisStorage as AsyncRedisStorage
from limits.aio.strategies import MovingWindowRateLimiter as AsyncMovingWindowRateLimiter
from limits.errors import StorageError
from limits.storage import MemoryStorage, RedisStorage, Storage
from limits.strategies import MovingWindowRateLimiter

logger = logging.getLogger(__name__)

Key = str | int


@dataclass(frozen=True, slots=True)
class RateLimited:
    """A refusal: the limit's name, the rate that refused (``"10 per 1 second"``) and the whole
    seconds to wait before one more is allowed (at least 1): until the oldest counted hit
    leaves that rate's window."""

    name: str
    rate: str
    retry_after: int


@lru_cache(maxsize=256)
def _parse(rates: str) -> tuple[RateLimitItem, ...]:
    try:
        items = tuple(parse_many(rates))
    except ValueError as error:
        raise ImproperlyConfigured(f"Bad rate limit {rates!r}: {error}") from None
    if not items:
        raise ImproperlyConfigured(f"Bad rate limit {rates!r}: no rate")
    return items


def rate_limit_items(name: str) -> tuple[RateLimitItem, ...]:
    """The rates of a named limit, from ``settings.RATE_LIMITS``."""
    try:
        rates = settings.RATE_LIMITS[name]
    except KeyError:
        raise ImproperlyConfigured(f"No rate limit named {name!r} in RATE_LIMITS.") from None
    return _parse(rates)


# Storage: one limiter per (Redis URL, key prefix); the Redis ones share a connection pool.

_sync_limiters: dict[tuple[str, str], MovingWindowRateLimiter] = {}
_pools: dict[str, redis.ConnectionPool] = {}
_async_limiters: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str], AsyncMovingWindowRateLimiter]
] = weakref.WeakKeyDictionary()


def _where() -> tuple[str, str]:
    return settings.REDIS_URL or "", settings.RATE_LIMIT_KEY_PREFIX


def _sync_limiter() -> MovingWindowRateLimiter:
    where = _where()
    limiter = _sync_limiters.get(where)
    if limiter is None:
        url, prefix = where
        storage: Storage
        if url:
            pool = _pools.get(url)
            if pool is None:
                pool = _pools[url] = redis.ConnectionPool.from_url(url)
            storage = RedisStorage(
                url, connection_pool=pool, key_prefix=prefix, wrap_exceptions=True
            )
        else:
            storage = MemoryStorage()
        limiter = _sync_limiters[where] = MovingWindowRateLimiter(storage)
    return limiter


def _async_limiter() -> AsyncMovingWindowRateLimiter | None:
    """The running loop's asynchronous Redis limiter; None without Redis (the memory limiter
    is shared with the synchronous calls and never waits)."""
    url, prefix = where = _where()
    if not url:
        return None
    loop = asyncio.get_running_loop()
    limiters = _async_limiters.setdefault(loop, {})
    limiter = limiters.get(where)
    if limiter is None:
        storage = AsyncRedisStorage(
            f"async+{url}", implementation="redispy", key_prefix=prefix, wrap_exceptions=True
        )
        limiter = limiters[where] = AsyncMovingWindowRateLimiter(storage)
    return limiter


def _refusal(name: str, item: RateLimitItem, reset_time: float) -> RateLimited:
    return RateLimited(
        name=name, rate=str(item), retry_after=max(1, math.ceil(reset_time - time.time()))
    )


_last_storage_warning = 0.0


def _storage_failed(name: str) -> None:
    """Fail open, logging at most once a minute (a Redis outage would log every message): the
    socket's other work fails loudly enough then."""
    global _last_storage_warning
    now = time.monotonic()
    if now - _last_storage_warning > 60:
        _last_storage_warning = now
        logger.warning("Rate limit %s not counted: its storage failed", name, exc_info=True)


# One trip for every rate of a limit: `limits`' acquire_moving_window.lua over several keys.
# KEYS: one list per rate; ARGV: the timestamp, the cost, then each rate's limit and expiry.
# Returns 0 when every rate allows the cost (spent in all of them), else the 1-based index of
# the first rate that refuses (nothing spent anywhere).
_ACQUIRE_ALL = """
local timestamp = tonumber(ARGV[1])
local amount = tonumber(ARGV[2])
for i, key in ipairs(KEYS) do
    local limit = tonumber(ARGV[1 + 2 * i])
    local expiry = tonumber(ARGV[2 + 2 * i])
    if amount > limit then
        return i
    end
    local entry = redis.call('lindex', key, limit - amount)
    if entry and tonumber(entry) >= timestamp - expiry then
        return i
    end
end
local entries = {}
for j = 1, amount do
    entries[j] = timestamp
end
for i, key in ipairs(KEYS) do
    local limit = tonumber(ARGV[1 + 2 * i])
    for j = 1, #entries, 5000 do
        redis.call('lpush', key, unpack(entries, j, math.min(j + 4999, #entries)))
    end
    redis.call('ltrim', key, 0, limit - 1)
    redis.call('expire', key, tonumber(ARGV[2 + 2 * i]))
end
return 0
"""
# The same, and in the same trip the value of one more key (the last of KEYS, not a rate's):
# returns {the refusal as above, the value or nil}.
_ACQUIRE_AND_READ = f"""
local kept = redis.call('get', KEYS[#KEYS])
KEYS[#KEYS] = nil
local function acquire()
{_ACQUIRE_ALL}
end
return {{acquire(), kept}}
"""

# The scripts registered on each storage's client, by source (a weak key: a storage lives as
# long as its limiter, one per Redis URL and key prefix, and per event loop for the
# asynchronous ones).
_scripts: weakref.WeakKeyDictionary[object, dict[str, Any]] = weakref.WeakKeyDictionary()


def _script(storage: Any, client: Any, source: str = _ACQUIRE_ALL) -> Any:
    registered = _scripts.setdefault(storage, {})
    script = registered.get(source)
    if script is None:
        script = registered[source] = client.register_script(source)
    return script


def _acquire_args(
    items: tuple[RateLimitItem, ...], ids: tuple[str, str], cost: int, prefixed: Any
) -> tuple[list[str], list[float | int]]:
    keys = [prefixed(item.key_for(*ids)) for item in items]
    args: list[float | int] = [time.time(), cost]
    for item in items:
        args += [item.amount, item.get_expiry()]
    return keys, args


# The synchronous forms (services, views, tasks).


def rate_limit_hit(name: str, key: Key, *, cost: int = 1) -> RateLimited | None:
    """Spend ``cost`` of ``key``'s budget under the limit ``name``: None when allowed, else
    the :class:`RateLimited` refusal; a refused hit spends nothing of any rate.

    With Redis it costs one round trip whatever the number of rates: one Lua script
    (``_ACQUIRE_ALL``) checks every rate's window, then spends the hit in all of them or in
    none, on the same keys and lists as `limits`' own moving window, so that checks, blocks
    and window statistics read them."""
    limiter = _sync_limiter()
    ids = (name, str(key))
    storage = limiter.storage
    if isinstance(storage, RedisStorage):
        items = rate_limit_items(name)
        try:
            client = storage.get_connection()
            keys, args = _acquire_args(items, ids, cost, storage.prefixed_key)
            refused = int(_script(storage, client)(keys, args))
            if refused:
                item = items[refused - 1]
                return _refusal(name, item, limiter.get_window_stats(item, *ids).reset_time)
        except (StorageError, redis.RedisError):
            _storage_failed(name)
        return None
    # In memory (one process, no Redis): the same rule, every rate checked before any is spent.
    refused = rate_limit_check(name, key, cost=cost)
    if refused is None:
        for item in rate_limit_items(name):
            limiter.hit(item, *ids, cost=cost)
    return refused


def rate_limit_check(name: str, key: Key, *, cost: int = 1) -> RateLimited | None:
    """Whether ``cost`` more would be allowed now, without spending anything (e.g. "may this
    user try another code?", spent only when the code was wrong)."""
    limiter = _sync_limiter()
    ids = (name, str(key))
    try:
        for item in rate_limit_items(name):
            if not limiter.test(item, *ids, cost=cost):
                return _refusal(name, item, limiter.get_window_stats(item, *ids).reset_time)
    except StorageError:
        _storage_failed(name)
    return None


def rate_limit_block(name: str, key: Key) -> None:
    """Spend the whole budget from now on: checks and hits are refused for each rate's window
    (a cool-down: with a rate such as ``"1/30seconds"``, for 30 seconds)."""
    limiter = _sync_limiter()
    ids = (name, str(key))
    try:
        for item in rate_limit_items(name):
            # Already spent: leave it so (clearing first would let a concurrent check through).
            if limiter.test(item, *ids):
                limiter.clear(item, *ids)
                limiter.hit(item, *ids, cost=item.amount)
    except StorageError:
        _storage_failed(name)


def rate_limit_reset() -> None:
    """Forget every counter under the current key prefix, and the limiters kept for it (for
    tests: each test has its own prefix, so this is the end of that prefix)."""
    where = _where()
    used = where in _sync_limiters or any(where in kept for kept in _async_limiters.values())
    if not used:  # nothing counted here under this prefix
        return
    try:
        _sync_limiter().storage.reset()
    except StorageError:
        _storage_failed("reset")
    _sync_limiters.pop(where, None)
    for limiters in list(_async_limiters.values()):
        limiters.pop(where, None)
    _kept.clear()


# The asynchronous forms (consumers).


async def arate_limit_hit(name: str, key: Key, *, cost: int = 1) -> RateLimited | None:
    """``rate_limit_hit`` for coroutines."""
    refused, _text = await _ahit(name, key, cost=cost, kept=None)
    return refused


async def _ahit(
    name: str, key: Key, *, cost: int, kept: str | None
) -> tuple[RateLimited | None, str | None]:
    """Spend ``cost`` of the budget and, with ``kept``, read the text kept under it (None if
    none), in one Redis round trip; without Redis, from this process's memory."""
    limiter = _async_limiter()
    if limiter is None:
        return rate_limit_hit(name, key, cost=cost), None if kept is None else _kept_text(kept)
    ids = (name, str(key))
    items = rate_limit_items(name)
    try:
        bridge = limiter.storage.bridge  # type: ignore[attr-defined]
        keys, args = _acquire_args(items, ids, cost, bridge.prefixed_key)
        client = bridge.get_connection()
        text = None
        if kept is None:
            refused = int(await _script(limiter.storage, client)(keys, args))
        else:
            keys.append(bridge.prefixed_key(_kept_key(kept)))
            spent, found = await _script(limiter.storage, client, _ACQUIRE_AND_READ)(keys, args)
            refused, text = int(spent), found.decode() if isinstance(found, bytes) else found
        if refused:
            item = items[refused - 1]
            stats = await limiter.get_window_stats(item, *ids)
            return _refusal(name, item, stats.reset_time), text
        return None, text
    except (StorageError, redis.RedisError):
        _storage_failed(name)
    return None, None


async def arate_limit_check(name: str, key: Key, *, cost: int = 1) -> RateLimited | None:
    """``rate_limit_check`` for coroutines."""
    limiter = _async_limiter()
    if limiter is None:
        return rate_limit_check(name, key, cost=cost)
    ids = (name, str(key))
    try:
        for item in rate_limit_items(name):
            if not await limiter.test(item, *ids, cost=cost):
                stats = await limiter.get_window_stats(item, *ids)
                return _refusal(name, item, stats.reset_time)
    except StorageError:
        _storage_failed(name)
    return None


async def arate_limit_block(name: str, key: Key) -> None:
    """``rate_limit_block`` for coroutines."""
    limiter = _async_limiter()
    if limiter is None:
        rate_limit_block(name, key)
        return
    ids = (name, str(key))
    try:
        for item in rate_limit_items(name):
            # Already spent: leave it so (clearing first would let a concurrent check through).
            if await limiter.test(item, *ids):
                await limiter.clear(item, *ids)
                await limiter.hit(item, *ids, cost=item.amount)
    except StorageError:
        _storage_failed(name)


# A short text kept beside the counters, read in the same round trip as a hit: the table's
# socket spends a frame of the user's budget and looks up the reply of an action already
# applied under the frame's id at once (games.live.consumers), instead of two more Redis trips on
# the service thread around every action. In Redis under the limits' key prefix; without
# Redis in this process's memory, as the counters are.
_kept: dict[str, tuple[float, str]] = {}
KEPT_IN_MEMORY = 10_000


def _kept_key(name: str) -> str:
    return f"kept:{name}"


def _kept_text(name: str) -> str | None:
    """The text kept in memory under ``name`` (no Redis), while its time lasts."""
    found = _kept.get(f"{settings.RATE_LIMIT_KEY_PREFIX}:{_kept_key(name)}")
    if found is None or found[0] <= time.monotonic():
        return None
    return found[1]


async def arate_limit_hit_and_read(
    name: str, key: Key, *, kept: str
) -> tuple[RateLimited | None, str | None]:
    """``arate_limit_hit(name, key)``, and the text kept under ``kept`` (:func:`akeep`) or
    None, in one Redis round trip. The limit fails open as ever when Redis fails, and then
    nothing is found kept."""
    return await _ahit(name, key, cost=1, kept=kept)


async def akeep(kept: str, text: str, seconds: int) -> None:
    """Keep ``text`` under ``kept`` for ``seconds`` (read by :func:`arate_limit_hit_and_read`).
    A failure is logged, not raised: what was kept is an optimisation of a retry."""
    limiter = _async_limiter()
    if limiter is None:
        if len(_kept) >= KEPT_IN_MEMORY:
            now = time.monotonic()
            for stale in [k for k, (until, _) in _kept.items() if until <= now]:
                del _kept[stale]
            if len(_kept) >= KEPT_IN_MEMORY:
                _kept.pop(next(iter(_kept)))
        _kept[f"{settings.RATE_LIMIT_KEY_PREFIX}:{_kept_key(kept)}"] = (
            time.monotonic() + seconds,
            text,
        )
        return
    try:
        bridge = limiter.storage.bridge  # type: ignore[attr-defined]
        await bridge.get_connection().set(bridge.prefixed_key(_kept_key(kept)), text, ex=seconds)
    except (StorageError, redis.RedisError):
        _storage_failed("kept")

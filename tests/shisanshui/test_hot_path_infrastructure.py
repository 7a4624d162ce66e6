"""The infrastructure the table's hot path relies on: the Redis cache reuses its client, the
PostgreSQL backend skips the health check of a connection checked a moment ago, the
consumers' dispatch does not hop to a thread for every message, JSON is written by orjson, and
daphne builds no log text for every frame."""

from __future__ import annotations

import json
import uuid
from typing import Any

import pytest
import redis
from django.db import connections

from shisanshui import fastjson, sockets, warm
from shisanshui.cache import RedisCache
from shisanshui.postgresql import base as pg_base


def test_the_redis_cache_reuses_one_client_per_pool(settings: Any) -> None:
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (make test sets it)")
    cache = RedisCache(settings.REDIS_URL, {"KEY_PREFIX": f"hot-path-test-{uuid.uuid4().hex}"})
    client = cache._cache
    assert client.get_client() is client.get_client()
    assert client.get_client(write=True) is client.get_client()  # one server: one pool
    cache.set("key", {"a": 1}, 5)
    assert cache.get("key") == {"a": 1}
    cache.delete("key")
    assert cache.get("key") is None


def test_every_consumer_context_shares_the_process_s_redis_cache_client(settings: Any) -> None:
    # Django makes a cache backend per thread and per asyncio context (``caches`` is an
    # asgiref Local: each WebSocket consumer gets its own; here, four): they must not each open
    # a connection pool and a Redis connection.
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (make test sets it)")
    params = {"KEY_PREFIX": f"hot-path-test-{uuid.uuid4().hex}"}
    backends = [RedisCache(settings.REDIS_URL, params) for _ in range(4)]
    assert len({id(b) for b in backends}) == 4
    assert len({id(b._cache) for b in backends}) == 1
    for n, backend in enumerate(backends):
        backend.set("shared-client-test", n, 5)
        assert backends[0].get("shared-client-test") == n
    other = RedisCache(settings.REDIS_URL, {"OPTIONS": {"client_name": "another"}})
    assert other._cache is not backends[0]._cache  # other options: a client of its own


def test_the_redis_cache_survives_its_connections_dropped_by_the_server(settings: Any) -> None:
    # What a Redis restart does to a web process's pool: its connections dead at once.
    # (redis-py's synchronous pool checks a connection as it hands it out.)
    if not settings.REDIS_URL:
        pytest.skip("needs REDIS_URL (make test sets it)")
    name = f"t{uuid.uuid4().hex[:12]}"
    cache = RedisCache(
        settings.REDIS_URL,
        {"KEY_PREFIX": f"hot-path-test-{name}", "OPTIONS": {"client_name": name}},
    )
    cache.set("key", 1, 5)
    admin = redis.Redis.from_url(settings.REDIS_URL)
    ids = [c["id"] for c in admin.client_list() if c.get("name") == name]
    assert ids
    for id_ in ids:
        admin.client_kill_filter(_id=id_)
    admin.close()
    assert cache.get("key") == 1
    cache.delete("key")


@pytest.mark.django_db
def test_a_connection_checked_a_moment_ago_is_not_checked_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    connection = connections["default"]
    if connection.vendor != "postgresql":
        pytest.skip("the PostgreSQL backend")
    assert isinstance(connection, pg_base.DatabaseWrapper)
    clock = [1000.0]
    monkeypatch.setattr(pg_base.time, "monotonic", lambda: clock[0])
    monkeypatch.setattr(connection, "health_check_enabled", True)
    checks: list[bool] = []
    real = connection.is_usable
    monkeypatch.setattr(connection, "is_usable", lambda: checks.append(True) or real())
    connection.ensure_connection()

    def new_request() -> None:  # what Django does between requests
        connection.health_check_done = False
        connection.close_if_health_check_failed()

    connection._last_checked = 0.0  # never checked: checked now
    new_request()
    assert len(checks) == 1
    clock[0] += pg_base.HEALTH_CHECK_IDLE_SECONDS / 2  # used a moment ago: not checked
    new_request()
    assert len(checks) == 1
    clock[0] += pg_base.HEALTH_CHECK_IDLE_SECONDS + 1  # idle for longer: checked
    new_request()
    assert len(checks) == 2


@pytest.mark.asyncio
async def test_the_consumers_dispatch_without_a_trip_to_the_database_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import channels.consumer

    async def no_trip() -> None:
        raise AssertionError("dispatch went to the database thread")

    monkeypatch.setattr(channels.consumer, "aclose_old_connections", no_trip)
    seen: list[dict[str, Any]] = []

    class Probe(sockets.Consumer):
        async def table_events(self, message: dict[str, Any]) -> None:
            seen.append(message)

    probe = Probe()
    await probe.dispatch({"type": "table.events", "first": 1})
    assert seen == [{"type": "table.events", "first": 1}]
    with pytest.raises(ValueError, match="No handler"):
        await probe.dispatch({"type": "no.such"})


def test_fast_json_is_compact_keeps_text_and_reads_back() -> None:
    value = {"type": "events", "name": "张三 <b>", 3: [1, 2.5, None, True], "nan": float("nan")}

    text = fastjson.dumps(value)

    assert text == '{"type":"events","name":"张三 <b>","3":[1,2.5,null,true],"nan":null}'
    assert fastjson.loads(text) == {**{str(k): v for k, v in value.items()}, "nan": None}
    assert json.loads(text) == fastjson.loads(text.encode())


def test_daphne_builds_no_coloured_log_text_for_each_frame() -> None:
    import txaio
    from autobahn.websocket import protocol

    before = protocol.hltype, protocol.hlval, protocol.pformat
    level = txaio.get_global_log_level()
    try:
        warm.plain_frame_log_text()
        assert protocol.hltype(test_daphne_builds_no_coloured_log_text_for_each_frame) == (
            "<test_daphne_builds_no_coloured_log_text_for_each_frame>"
        )
        assert protocol.hlval(42, color="white", bold=True) == "42"  # no escape codes
        # A connection's settings are pretty-printed only for a debug log that is written.
        txaio.set_global_log_level("info")
        assert protocol.pformat([("autoPingInterval", 0, "Factory")]) == ""
        txaio.set_global_log_level("debug")
        assert protocol.pformat([("a", 1)]) == "[('a', 1)]"
    finally:
        protocol.hltype, protocol.hlval, protocol.pformat = before
        txaio.set_global_log_level(level)


def test_a_web_process_freezes_what_start_up_made_and_collects_the_young_less_often() -> None:
    """shisanshui.warm: everything alive after start-up is moved out of the collector's reach,
    and the youngest generation is collected every 10,000 new objects, not 700."""
    import gc

    before = gc.get_threshold()  # already the process's own if shisanshui.asgi was imported
    gc.set_threshold(700, 10, 10)  # CPython's default
    try:
        warm.warm_and_freeze()
        assert gc.get_threshold() == warm.GC_THRESHOLD == (10_000, 10, 10)
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)

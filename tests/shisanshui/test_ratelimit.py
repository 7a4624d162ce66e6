"""shisanshui.ratelimit: named limits over `limits`, in Redis (REDIS_URL) or in memory."""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import pytest
import redis
from django.core.exceptions import ImproperlyConfigured

from shisanshui import ratelimit
from shisanshui.ratelimit import (
    RateLimited,
    arate_limit_block,
    arate_limit_check,
    arate_limit_hit,
    arate_limit_hit_and_read,
    rate_limit_block,
    rate_limit_check,
    rate_limit_hit,
    rate_limit_reset,
)

REDIS_URL = os.environ.get("REDIS_URL", "")


@pytest.fixture(params=["redis", "memory"])
def storage(request: pytest.FixtureRequest, settings: Any) -> str:
    """Each test runs against Redis (when the suite has REDIS_URL) and against memory."""
    if request.param == "redis":
        if not REDIS_URL:
            pytest.skip("no REDIS_URL")
        settings.REDIS_URL = REDIS_URL
    else:
        settings.REDIS_URL = ""
    settings.RATE_LIMITS = {
        **settings.RATE_LIMITS,
        "test.burst": "3/second;5/minute",
        "test.cooldown": "1/1second",
    }
    return str(request.param)


def test_a_limit_allows_its_rate_then_refuses_with_the_retry_time(storage: str) -> None:
    assert [rate_limit_hit("test.burst", 1) for _ in range(3)] == [None, None, None]

    refused = rate_limit_hit("test.burst", 1)

    assert refused == RateLimited(name="test.burst", rate="3 per 1 second", retry_after=1)
    assert rate_limit_hit("test.burst", 2) is None  # another key has its own budget


def test_every_rate_of_a_limit_must_hold(storage: str) -> None:
    for _ in range(3):
        assert rate_limit_hit("test.burst", "k") is None
    time.sleep(1.05)
    assert rate_limit_hit("test.burst", "k") is None
    assert rate_limit_hit("test.burst", "k") is None

    refused = rate_limit_hit("test.burst", "k")  # the sixth in a minute

    assert refused is not None and refused.rate == "5 per 1 minute"
    assert 55 <= refused.retry_after <= 60


def test_check_spends_nothing(storage: str) -> None:
    for _ in range(5):
        assert rate_limit_check("test.burst", 1) is None
    for _ in range(3):
        rate_limit_hit("test.burst", 1)

    assert rate_limit_check("test.burst", 1) is not None
    assert rate_limit_check("test.burst", 2) is None


def test_block_refuses_until_the_window_has_passed(storage: str) -> None:
    rate_limit_block("test.cooldown", 7)

    refused = rate_limit_check("test.cooldown", 7)

    assert refused is not None and refused.retry_after == 1
    assert rate_limit_check("test.cooldown", 8) is None
    time.sleep(1.05)
    assert rate_limit_check("test.cooldown", 7) is None


def test_the_async_forms_share_the_counters(storage: str) -> None:
    async def scenario() -> list[RateLimited | None]:
        results = [await arate_limit_hit("test.burst", 1) for _ in range(2)]
        results.append(rate_limit_hit("test.burst", 1))
        results.append(await arate_limit_hit("test.burst", 1))
        results.append(await arate_limit_check("test.burst", 1))
        await arate_limit_block("test.cooldown", 1)
        results.append(rate_limit_check("test.cooldown", 1))
        return results

    results = asyncio.run(scenario())

    assert results[:3] == [None, None, None]
    assert all(isinstance(r, RateLimited) for r in results[3:])


def test_reset_forgets_the_counters_of_the_prefix(storage: str, settings: Any) -> None:
    for _ in range(3):
        rate_limit_hit("test.burst", 1)
    settings.RATE_LIMIT_KEY_PREFIX = settings.RATE_LIMIT_KEY_PREFIX + "-other"
    assert rate_limit_hit("test.burst", 1) is None  # another prefix: other counters
    rate_limit_reset()

    assert rate_limit_hit("test.burst", 1) is None


def test_a_limit_must_be_configured(settings: Any) -> None:
    with pytest.raises(ImproperlyConfigured, match="No rate limit named"):
        rate_limit_hit("nowhere", 1)
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "test.bad": "many per second"}
    with pytest.raises(ImproperlyConfigured, match="Bad rate limit"):
        rate_limit_hit("test.bad", 1)


def test_the_default_limits_parse() -> None:
    from django.conf import settings

    for name in settings.RATE_LIMITS:
        assert ratelimit.rate_limit_items(name)


def test_an_unreachable_redis_fails_open(settings: Any, caplog: pytest.LogCaptureFixture) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"  # nothing listens there
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "test.one": "1/minute"}
    ratelimit._last_storage_warning = 0.0

    assert [rate_limit_hit("test.one", 1) for _ in range(3)] == [None, None, None]
    assert asyncio.run(arate_limit_hit("test.one", 1)) is None
    assert "Rate limit test.one not counted" in caplog.text


def test_a_refused_hit_spends_nothing_of_any_rate(storage: str) -> None:
    for _ in range(3):
        assert rate_limit_hit("test.burst", "r") is None
    time.sleep(1.05)
    for _ in range(2):
        assert rate_limit_hit("test.burst", "r") is None
    # The minute's 5 are spent: refused by the minute's rate, so the second's is not spent
    # either (its window still has room for 3 once the minute's frees up).
    assert rate_limit_hit("test.burst", "r").rate == "5 per 1 minute"  # type: ignore[union-attr]
    limiter = ratelimit._sync_limiter()
    second = ratelimit.rate_limit_items("test.burst")[0]
    assert limiter.get_window_stats(second, "test.burst", "r").remaining == 1


@pytest.mark.skipif(not REDIS_URL, reason="no REDIS_URL")
def test_a_hit_is_one_redis_round_trip_whatever_the_number_of_rates(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every frame of a socket spends a hit: its rates are checked and spent in one Lua
    script, one trip (a refusal adds one to read when a unit frees up)."""
    settings.REDIS_URL = REDIS_URL
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "test.two": "2/minute;1000/hour"}
    rate_limit_hit("test.two", "warm")  # connect and load the script
    commands: list[str] = []
    sync_execute = redis.Redis.execute_command

    def counted(self: redis.Redis, *args: Any, **options: Any) -> Any:
        commands.append(str(args[0]))
        return sync_execute(self, *args, **options)

    monkeypatch.setattr(redis.Redis, "execute_command", counted)
    assert rate_limit_hit("test.two", "k") is None
    assert commands == ["EVALSHA"]
    rate_limit_hit("test.two", "k")
    commands.clear()
    assert rate_limit_hit("test.two", "k") is not None
    assert commands[0] == "EVALSHA" and len(commands) == 2

    async_execute = redis.asyncio.Redis.execute_command

    async def acounted(self: redis.asyncio.Redis, *args: Any, **options: Any) -> Any:
        commands.append(str(args[0]))
        return await async_execute(self, *args, **options)

    monkeypatch.setattr(redis.asyncio.Redis, "execute_command", acounted)

    async def scenario() -> RateLimited | None:
        await arate_limit_hit("test.two", "warm-async")
        commands.clear()
        return await arate_limit_hit("test.two", "a")

    assert asyncio.run(scenario()) is None
    assert commands == ["EVALSHA"]


def test_a_hit_reads_what_was_kept_in_the_same_trip(storage: str, settings: Any) -> None:
    """arate_limit_hit_and_read spends the hit as arate_limit_hit does and returns the text
    akeep kept under that name (None before, under another name or another prefix, and once
    its time is up); a refusal still reads it; rate_limit_reset forgets it."""

    async def scenario() -> list[Any]:
        seen: list[Any] = [await arate_limit_hit_and_read("test.burst", 7, kept="a")]
        await ratelimit.akeep("a", '{"type": "ok"}', 60)
        await ratelimit.akeep("short", "gone soon", 1)
        seen.append(await arate_limit_hit_and_read("test.burst", 7, kept="a"))
        seen.append(await arate_limit_hit_and_read("test.burst", 7, kept="b"))
        seen.append(await arate_limit_hit_and_read("test.burst", 7, kept="a"))  # the 4th
        await asyncio.sleep(1.1)
        seen.append(await arate_limit_hit_and_read("test.burst", 8, kept="short"))
        return seen

    seen = asyncio.run(scenario())
    assert seen[0] == (None, None)
    assert seen[1] == (None, '{"type": "ok"}')
    assert seen[2] == (None, None)
    refused, text = seen[3]
    assert isinstance(refused, RateLimited) and text == '{"type": "ok"}'
    assert seen[4] == (None, None)

    prefix = settings.RATE_LIMIT_KEY_PREFIX
    settings.RATE_LIMIT_KEY_PREFIX = prefix + "-other"
    assert asyncio.run(arate_limit_hit_and_read("test.burst", 9, kept="a")) == (None, None)
    settings.RATE_LIMIT_KEY_PREFIX = prefix
    rate_limit_reset()
    assert asyncio.run(arate_limit_hit_and_read("test.burst", 9, kept="a")) == (None, None)


@pytest.mark.skipif(not REDIS_URL, reason="no REDIS_URL")
def test_a_hit_that_reads_is_still_one_round_trip(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.REDIS_URL = REDIS_URL
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "test.two": "2/minute;1000/hour"}
    commands: list[str] = []
    async_execute = redis.asyncio.Redis.execute_command

    async def acounted(self: redis.asyncio.Redis, *args: Any, **options: Any) -> Any:
        commands.append(str(args[0]))
        return await async_execute(self, *args, **options)

    async def scenario() -> tuple[RateLimited | None, str | None]:
        await arate_limit_hit_and_read("test.two", "warm", kept="x")  # loads the script
        await ratelimit.akeep("x", "kept", 60)
        commands.clear()
        return await arate_limit_hit_and_read("test.two", "a", kept="x")

    monkeypatch.setattr(redis.asyncio.Redis, "execute_command", acounted)
    assert asyncio.run(scenario()) == (None, "kept")
    assert commands == ["EVALSHA"]


def test_an_unreachable_redis_reads_nothing_kept(
    settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "test.one": "1/minute"}
    ratelimit._last_storage_warning = 0.0

    async def scenario() -> tuple[RateLimited | None, str | None]:
        await ratelimit.akeep("x", "kept", 60)  # logged, not raised
        return await arate_limit_hit_and_read("test.one", 1, kept="x")

    assert asyncio.run(scenario()) == (None, None)
    assert "not counted" in caplog.text

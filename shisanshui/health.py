"""The health checks behind /healthz: the database, Redis and a Celery worker.

Each check returns "ok", "not configured" (no REDIS_URL: the in-process channel layer and
broker of a bare development server or the tests) or a short reason it failed. They are
cheap: one query, one PING, and one Celery ping whose positive answer is cached for a few
seconds, so a load balancer probing every second does not broadcast every second.
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from django.conf import settings
from django.db import connection

OK = "ok"
NOT_CONFIGURED = "not configured"
HEALTHY = frozenset({OK, NOT_CONFIGURED})

CHECK_TIMEOUT_SECONDS = 1.0
# How long a worker's answer (and, briefly, its silence) is trusted before asking again.
CELERY_OK_CACHE_SECONDS = 10.0
CELERY_FAILURE_CACHE_SECONDS = 2.0

logger = logging.getLogger(__name__)
_lock = threading.Lock()
_redis_clients: dict[str, redis.Redis] = {}
_celery_answer: tuple[float, str] | None = None  # (monotonic expiry, result)


def _reason(error: Exception) -> str:
    """The error's kind only: /healthz is public, and messages name hosts, ports and users
    (they go to the log instead)."""
    logger.warning("health check error: %s", error, exc_info=error)
    return type(error).__name__


def check_database() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as error:
        return _reason(error)
    return OK


def _redis_client(url: str) -> redis.Redis:
    with _lock:
        client = _redis_clients.get(url)
        if client is None:
            client = redis.Redis.from_url(
                url,
                socket_timeout=CHECK_TIMEOUT_SECONDS,
                socket_connect_timeout=CHECK_TIMEOUT_SECONDS,
            )
            _redis_clients[url] = client
        return client


def check_redis() -> str:
    """PING the Redis of REDIS_URL: the channel layer's and Celery's."""
    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return NOT_CONFIGURED
    try:
        _redis_client(url).ping()
    except Exception as error:
        return _reason(error)
    return OK


def _ping_workers() -> str:
    from shisanshui.celery import app

    try:
        replies = app.control.ping(timeout=CHECK_TIMEOUT_SECONDS, limit=1)
    except Exception as error:
        return _reason(error)
    return OK if replies else "no worker answered"


def check_celery() -> str:
    """At least one worker answers a broadcast ping within a second (answer cached)."""
    global _celery_answer
    if not getattr(settings, "REDIS_URL", ""):
        return NOT_CONFIGURED
    now = time.monotonic()
    cached = _celery_answer
    if cached is not None and cached[0] > now:
        return cached[1]
    result = _ping_workers()
    ttl = CELERY_OK_CACHE_SECONDS if result == OK else CELERY_FAILURE_CACHE_SECONDS
    _celery_answer = (time.monotonic() + ttl, result)
    return result


def forget_celery_answer() -> None:
    """Drops the cached Celery answer (tests)."""
    global _celery_answer
    _celery_answer = None


CHECKS = {"database": check_database, "redis": check_redis, "celery": check_celery}


def run_checks() -> dict[str, str]:
    """Every check's result, by name."""
    return {name: check() for name, check in CHECKS.items()}

"""The table socket's worker threads.

The table's commands run on a pool of SERVICE_THREADS threads (each keeps its own database
connection), not on the single thread that database_sync_to_async shares by default: an action
mostly waits for PostgreSQL, and on one thread every connection's action would wait behind all
the others. The services' row locks keep one table's commands in order. The rest of a socket's
work — finding its seat, the welcome's snapshot, the reconnect and disconnect, the engine's
suggestions — runs on SIDE_THREADS, so a storm of connections never queues the commands of the
tables already playing."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from channels.db import DatabaseSyncToAsync
from django.conf import settings

SERVICE_THREADS = ThreadPoolExecutor(
    max_workers=settings.TABLE_SERVICE_THREADS, thread_name_prefix="table"
)


T = TypeVar("T")


SIDE_THREADS = ThreadPoolExecutor(
    max_workers=settings.TABLE_SIDE_THREADS, thread_name_prefix="table-side"
)


def off_thread(func: Callable[..., T]) -> Callable[..., Any]:
    """``func`` made awaitable on the service threads (connections cleaned up around it)."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=SERVICE_THREADS)


def on_side(func: Callable[..., T]) -> Callable[..., Any]:
    """``func`` made awaitable on the side threads (anything but the table's commands)."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=SIDE_THREADS)

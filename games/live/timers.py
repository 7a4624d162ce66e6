"""The tables' phase deadlines, polled: the one timer of every table.

Each table row carries its phase's deadline (``Table.deadline``, indexed). Every Celery worker
process runs one :class:`DeadlinePoller` on a thread of its own
(``shisanshui.celery.TableDeadlines``): it reads the deadlines due before the next poll, asks
:func:`games.live.services.table_timeout` for each one that has passed (the service decides
under the table's lock; a stale deadline costs one query and no lock), and sleeps until the
earliest coming deadline or the poll interval. Nothing is scheduled per phase or command, so a
deadline cannot be lost with a task (a killed worker, a Redis restart): the database is the
timer. A deadline still due after it was asked is asked again only after ``RETRY_SECONDS``;
the beat's ``sweep_deadlines`` is the backstop of a poller that stopped.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from django.db import close_old_connections, connection

from games.live import services as table_services
from games.models import Table

logger = logging.getLogger(__name__)

BATCH = 100
RETRY_SECONDS = 1.0
CONNECTION_CHECK_SECONDS = 10.0


class DeadlinePoller:
    """Acts on the tables' passed deadlines; :meth:`poll_once` is one look at the table rows."""

    def __init__(
        self, *, interval: float, clock: Callable[[], float] = time.time, batch: int = BATCH
    ) -> None:
        if interval <= 0:
            raise ValueError("the poll interval must be positive")
        self.interval = interval
        self.clock = clock
        self.batch = batch
        # (table, version, deadline) asked and not to be asked again before the time given.
        self._asked: dict[tuple[int, int, float], float] = {}

    def poll_once(self) -> float:
        """Ask for every passed deadline (oldest first); returns the seconds to sleep before
        the next look: until the earliest deadline coming, at most the interval, 0 when a
        whole batch was due."""
        now = self.clock()
        rows = table_deadlines_before(until=now + self.interval, limit=self.batch)
        wait = self.interval
        asked: dict[tuple[int, int, float], float] = {}
        due = asked_now = 0
        for table_id, version, phase, deadline in rows:
            if deadline > now:
                wait = min(wait, deadline - now)
                break
            due += 1
            key = (table_id, version, deadline)
            again = self._asked.get(key, 0.0)
            if again > now:
                asked[key] = again
                continue
            asked[key] = now + RETRY_SECONDS
            asked_now += 1
            try:
                table_services.table_timeout(
                    table_id=table_id, version=version, phase=phase, deadline=deadline
                )
            except Exception:
                logger.exception("the deadline of table %s failed", table_id)
        # Only the keys still due are kept: a table that moved on is forgotten.
        self._asked = asked
        if due == self.batch and asked_now:
            return 0.0  # more may be due behind this batch
        return max(0.0, wait)

    def run(self, stop: threading.Event) -> None:
        """Poll until ``stop`` is set. The thread's database connection is kept between looks
        and checked (``CONN_MAX_AGE``, errors) every ``CONNECTION_CHECK_SECONDS`` and after a
        failed look (the database restarting), which is logged and tried again after the
        interval."""
        checked = time.monotonic()
        while not stop.is_set():
            try:
                wait = self.poll_once()
            except Exception:
                logger.exception("polling the table deadlines failed")
                wait, checked = self.interval, 0.0
            if time.monotonic() - checked >= CONNECTION_CHECK_SECONDS:
                close_old_connections()
                checked = time.monotonic()
            if wait > 0:
                stop.wait(wait)
        connection.close()


def start(interval: float) -> tuple[threading.Thread, threading.Event]:
    """A daemon thread polling the deadlines every ``interval`` seconds, and its stop event."""
    stop = threading.Event()
    poller = DeadlinePoller(interval=interval)
    thread = threading.Thread(target=poller.run, args=(stop,), name="table-deadlines", daemon=True)
    thread.start()
    return thread, stop


_DEADLINES_SQL = (
    "SELECT id, version, phase, (state ->> 'deadline')::float8"
    f" FROM {Table._meta.db_table} WHERE deadline <= %s ORDER BY deadline LIMIT %s"
)


def table_deadlines_before(*, until: float, limit: int) -> list[tuple[int, int, str, float]]:
    """(table id, version, phase, deadline) of the tables whose phase deadline comes before
    ``until`` (epoch seconds), earliest first, at most ``limit``: one indexed query, asked
    several times a second by every worker's poller (``games.live.timers``), so plain SQL on
    PostgreSQL (the ORM's query building cost more than the query). The deadline is the
    state's own float (``state.deadline``), the value a timeout must name to hold across the
    phase's commands (``table_services.table_timeout``).

    The column holds the float rounded to the microsecond as the services wrote it
    (``datetime.fromtimestamp``); ``until`` is rounded the same way for the index, and the
    exact floats decide at the edge."""
    bound = datetime.fromtimestamp(until, tz=UTC)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_DEADLINES_SQL, [bound, limit])
            rows = cursor.fetchall()
    else:
        rows = _deadline_rows(bound=bound, limit=limit)
    return [
        (pk, version, phase, float(deadline))
        for pk, version, phase, deadline in rows
        if isinstance(deadline, (int, float)) and deadline <= until
    ]


def _deadline_rows(*, bound: datetime, limit: int) -> list[tuple[Any, ...]]:
    """:func:`table_deadlines_before`'s rows through the ORM (any database)."""
    return list(
        Table.objects.filter(deadline__lte=bound)
        .order_by("deadline")
        .values_list("pk", "version", "phase", "state__deadline")[:limit]
    )

"""Celery tasks of the table, thin: a timer only asks; the game decides.

The phase deadlines need no task: every worker process polls them (:mod:`games.live.timers`).
``table_timeout`` asks for one deadline (a task sent by hand or queued long ago); the service
re-checks phase and deadline under the table's lock, so a task that runs twice, late or after
the table moved on does nothing. :func:`connect` makes this module listen to the table's
``transition_committed`` and give every bot with something new to do a ``bot_act`` task with a
human-like countdown (``games.live.bots``); tables without bots cost nothing here.
``sweep_deadlines`` (Celery beat, every few seconds) asks again for any deadline overdue by more
than ``SWEEP_GRACE_SECONDS`` (the backstop of a poller that stopped) and nudges bots whose task
was lost.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from celery import shared_task

from games.live import bots, duplicate
from games.live import services as table_services
from games.live import timers as live_timers
from games.table.state import TableState

logger = logging.getLogger(__name__)

SWEEP_GRACE_SECONDS = 2.0
SWEEP_BATCH = 100


@shared_task(name="games.tasks.table_timeout", ignore_result=True)
def table_timeout(table_id: int, version: int, phase: str, deadline: float | None = None) -> None:
    table_services.table_timeout(table_id=table_id, version=version, phase=phase, deadline=deadline)


@shared_task(name="games.tasks.bot_act", ignore_result=True)
def bot_act(table_id: int, user_id: int, version: int) -> None:
    bots.bot_act(table_id=table_id, user_id=user_id, version=version)


@shared_task(name="games.tasks.sweep_deadlines", ignore_result=True)
def sweep_deadlines() -> int:
    """Ask the timeout of every overdue table (oldest first), as the pollers would; returns
    how many were asked."""
    overdue = live_timers.table_deadlines_before(
        until=time.time() - SWEEP_GRACE_SECONDS, limit=SWEEP_BATCH
    )
    for table_id, version, phase, deadline in overdue:
        try:
            table_services.table_timeout(
                table_id=table_id, version=version, phase=phase, deadline=deadline
            )
        except Exception:
            logger.exception("sweeping the deadline of table %s failed", table_id)
    try:
        bots.bots_nudge()
    except Exception:
        logger.exception("nudging the bots failed")
    duplicate.matches_sweep()
    return len(overdue)


# -- listening to the table's services ---------------------------------------------------------


def schedule_bots(
    *, table_id: int, before: TableState, after: TableState, now: float, **_: Any
) -> None:
    """A task for every bot given something new to do by this transition."""
    if not any(s.bot for s in after.seats):
        return
    for user_id, countdown in bots.bot_tasks(before=before, after=after, now=now):
        bot_act.apply_async(args=(table_id, user_id, after.version), countdown=countdown)


def connect() -> None:
    table_services.transition_committed.connect(schedule_bots, dispatch_uid="games.live.tasks.bots")

"""Celery tasks of the table: thin. A timer only asks; the game decides.

``table_timeout`` is scheduled on commit for every deadline (``countdown``); the service
re-checks phase, version and deadline under the table's lock, so a task that runs twice, late,
or after the table moved on does nothing. ``sweep_deadlines`` runs every few seconds (Celery
beat) and asks again for any deadline overdue by more than ``SWEEP_GRACE_SECONDS``, in case
its task was lost, and nudges bot players whose task was lost (``games.bots.bots_nudge``).

``bot_act`` is scheduled on commit, with a human-like countdown, for every bot player given
something to do; ``games.bots.bot_act`` re-checks under the table's lock, so a duplicate or
late task does nothing.
"""

from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from games import bots, table_services
from games.models import Table

logger = logging.getLogger(__name__)

SWEEP_GRACE_SECONDS = 2.0
SWEEP_BATCH = 100


@shared_task(name="games.tasks.table_timeout", ignore_result=True)
def table_timeout(table_id: int, version: int, phase: str) -> None:
    table_services.table_timeout(table_id=table_id, version=version, phase=phase)


@shared_task(name="games.tasks.bot_act", ignore_result=True)
def bot_act(table_id: int, user_id: int, version: int) -> None:
    bots.bot_act(table_id=table_id, user_id=user_id, version=version)


@shared_task(name="games.tasks.sweep_deadlines", ignore_result=True)
def sweep_deadlines() -> int:
    """Ask the timeout of every overdue table (oldest first); returns how many were asked."""
    cutoff = timezone.now() - timedelta(seconds=SWEEP_GRACE_SECONDS)
    overdue = list(
        Table.objects.filter(deadline__lte=cutoff)
        .order_by("deadline")
        .values_list("pk", "version", "phase")[:SWEEP_BATCH]
    )
    for table_id, version, phase in overdue:
        try:
            table_services.table_timeout(table_id=table_id, version=version, phase=phase)
        except Exception:
            logger.exception("sweeping the deadline of table %s failed", table_id)
    try:
        bots.bots_nudge()
    except Exception:
        logger.exception("nudging the bots failed")
    return len(overdue)

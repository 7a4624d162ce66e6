"""Celery tasks of the lobby: thin. The sweep only asks; the service decides under the lock.

``close_idle_rooms`` runs on Celery beat (CELERY_BEAT_SCHEDULE) and closes the open rooms
nobody has sat in for LOBBY_IDLE_ROOM_SECONDS, so that rooms left behind do not pile up in the
lobby. Each candidate is re-checked by ``lobby.services.room_close_idle`` under the room's
lock: a player who sat down meanwhile keeps the room, and a sweep that runs twice or late
closes nothing twice.

``play_wait_close`` runs once just after a Play now wait's deadline (`lobby.waiting`) and asks
`play_wait_check`, which ends the wait under its locks if the page has not asked already.
"""

from __future__ import annotations

import logging
from typing import Any

from celery import shared_task
from django.conf import settings

from accounts.models import User
from lobby.selectors import rooms_idle
from lobby.services import room_close_idle
from lobby.waiting import play_wait_check

logger = logging.getLogger(__name__)

CLOSE_BATCH = 200


@shared_task(name="lobby.tasks.close_idle_rooms", ignore_result=True)
def close_idle_rooms() -> int:
    """Close the rooms idle for too long (at most CLOSE_BATCH a run); returns how many."""
    idle_seconds = settings.LOBBY_IDLE_ROOM_SECONDS
    closed = 0
    for room_id in rooms_idle(idle_seconds=idle_seconds, limit=CLOSE_BATCH):
        try:
            if room_close_idle(room_id=room_id, idle_seconds=idle_seconds) is not None:
                closed += 1
        except Exception:
            logger.exception("closing idle room %s failed", room_id)
    return closed


@shared_task(name="lobby.tasks.play_wait_close", ignore_result=True)
def play_wait_close(user_id: int) -> None:
    """End the player's Play now wait if it is due and still there (only asks)."""
    user = User.objects.filter(pk=user_id).first()
    if user is not None:
        play_wait_check(user=user)


def play_wait_close_schedule(*, user_id: int, countdown: float, **_: Any) -> None:
    """Receiver of `lobby.waiting.play_wait_started`: ask just past the wait's deadline."""
    play_wait_close.apply_async(args=(user_id,), countdown=countdown)

"""Celery tasks of the accounts app: thin.

``collusion_scan`` runs hourly (Celery beat, ``CELERY_BEAT_SCHEDULE``) and writes the
collusion report (:mod:`accounts.collusion`); running it twice, or late, only refreshes the
same flags.
"""

from __future__ import annotations

from celery import shared_task

from accounts import collusion


@shared_task(name="accounts.tasks.collusion_scan", ignore_result=True)
def collusion_scan() -> int:
    """Look for pairs of players moving coins one way; returns how many pairs are flagged."""
    return collusion.collusion_scan().flagged

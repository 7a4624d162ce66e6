"""Celery task of the standings: recomputed on the beat, never on request."""

from __future__ import annotations

from celery import shared_task

from games.history import standings


@shared_task(name="games.tasks.compute_standings", ignore_result=True)
def compute_standings() -> int:
    """Standings and statistics (games.history.standings), recomputed on the beat."""
    return standings.compute_standings()

"""Celery tasks of the played rounds' reports, thin and run on the beat, never on request:
the standings, and the collusion report. Running either twice, or late, only refreshes the
same rows."""

from __future__ import annotations

from celery import shared_task

from games.history import collusion, standings


@shared_task(name="games.tasks.compute_standings", ignore_result=True)
def compute_standings() -> int:
    """Standings and statistics (games.history.standings), recomputed on the beat."""
    return standings.compute_standings()


# The registered name is the one CELERY_BEAT_SCHEDULE and running workers know it by.
@shared_task(name="accounts.tasks.collusion_scan", ignore_result=True)
def collusion_scan() -> int:
    """Look for pairs of players moving coins one way (games.history.collusion), hourly;
    returns how many pairs are flagged."""
    return collusion.collusion_scan().flagged

"""Celery tasks of the played rounds' reports, thin and run on the beat: the standings, and
the collusion report (also on a staff member's "Scan now" in the admin, rate-limited there).
Running either twice, or late, only refreshes the same rows."""

from __future__ import annotations

from celery import shared_task

from games.history import collusion, standings


@shared_task(name="games.tasks.compute_standings", ignore_result=True)
def compute_standings() -> int:
    """Standings and statistics (games.history.standings), recomputed on the beat."""
    return standings.compute_standings()


# The registered name is the one CELERY_BEAT_SCHEDULE and running workers know it by.
# The first scan after an upgrade judges the play of the whole window: more time than the
# default limits give (the rounds are judged in committed chunks, so a cut-off scan resumes).
@shared_task(
    name="accounts.tasks.collusion_scan", ignore_result=True, soft_time_limit=600, time_limit=720
)
def collusion_scan() -> int:
    """Look for pairs of players one of whom loses to the other on purpose
    (games.history.collusion), hourly; returns how many pairs are flagged."""
    return collusion.collusion_scan().flagged

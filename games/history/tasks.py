"""Celery tasks of the played rounds' reports, thin and run on the beat: the standings, the
collusion report (also on a staff member's "Scan now" in the admin, rate-limited there) and the
skill rating's catch-up; and the rating's update of a round, queued by its settlement on
commit. Running any twice, or late, only refreshes the same rows (a rated round is marked)."""

from __future__ import annotations

from celery import shared_task

from games.history import collusion, rating, standings


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


@shared_task(name="games.tasks.rating_update", ignore_result=True)
def rating_update(round_id: int) -> int:
    """The skill rating's update from a settled round (games.history.rating), once."""
    return rating.rating_update(round_id=round_id)


@shared_task(name="games.tasks.ratings_catch_up", ignore_result=True)
def ratings_catch_up() -> int:
    """Rate the settled rounds whose update was lost or never queued (on the beat)."""
    return rating.ratings_catch_up()

"""The collusion report's flags: written by the hourly scan (`games.history.collusion`, which
reads the played rounds), reviewed by support in the admin. Only support changes a flag's status
and note; the scan refreshes its numbers.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal

from django.db import transaction
from django.utils import timezone

from accounts.models import CollusionFlag, CollusionStatus, User


@transaction.atomic
def collusion_flag_write(
    *,
    loser_id: int,
    winner_id: int,
    shared_rounds: int,
    flow: int,
    losses: int,
    share_percent: Decimal,
    first_round_at: datetime,
    last_round_at: datetime,
    now: datetime,
) -> bool:
    """Create or update the pair's flag with the scan's numbers (status and note untouched);
    True when it was created. One row per (loser, winner), under its unique constraint, so two
    scans running at once write it once."""
    _flag, created = CollusionFlag.objects.update_or_create(
        loser_id=loser_id,
        winner_id=winner_id,
        defaults={
            "shared_rounds": shared_rounds,
            "flow": flow,
            "losses": losses,
            "share_percent": share_percent,
            "first_round_at": first_round_at,
            "last_round_at": last_round_at,
            "updated_at": now,
        },
    )
    return created


@transaction.atomic
def collusion_flag_review(
    *, flag: CollusionFlag, status: str, note: str, reviewer: User
) -> CollusionFlag:
    """Support's verdict on a flag: its status and note, signed with the reviewer and time."""
    if status not in CollusionStatus.values:
        raise ValueError(f"unknown status {status!r}")
    locked = CollusionFlag.objects.select_for_update().get(pk=flag.pk)
    locked.status = status
    locked.note = note.strip()
    locked.reviewer = reviewer
    locked.reviewed_at = timezone.now()
    locked.save(update_fields=["status", "note", "reviewer", "reviewed_at"])
    return locked

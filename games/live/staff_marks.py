"""Staff actions on a player's account during a round, marked in the round's audit.

The user admin sends ``accounts.signals.staff_account_action`` when a staff member changes
another account's password, e-mail address or active flag, or sends it a password reset link;
every round the player is in and that is not settled yet gets a
:class:`~games.models.RoundStaffAction` row, in the same transaction as the change. The round
admin shows them, and its "flag" filter finds such rounds (``games.history.audit``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from django.utils import timezone

from accounts.signals import staff_account_action
from games.models import RoundPlayer, RoundStaffAction


def rounds_mark_staff_action(
    *, user: Any, staff: Any, actions: Sequence[str]
) -> list[RoundStaffAction]:
    """Mark every unsettled round of ``user`` with what ``staff`` did to the account."""
    round_ids = (
        RoundPlayer.objects.filter(user=user, round__settled_at__isnull=True)
        .values_list("round_id", flat=True)
        .distinct()
    )
    now = timezone.now()
    marks = [
        RoundStaffAction(round_id=round_id, player=user, staff=staff, actions=list(actions), at=now)
        for round_id in round_ids
    ]
    return RoundStaffAction.objects.bulk_create(marks)


def _on_staff_account_action(
    sender: Any, *, user: Any, staff: Any, actions: Sequence[str], **kwargs: Any
) -> None:
    rounds_mark_staff_action(user=user, staff=staff, actions=actions)


def connect() -> None:
    staff_account_action.connect(_on_staff_account_action, dispatch_uid="games.staff_marks")

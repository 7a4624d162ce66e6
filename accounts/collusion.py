"""The collusion report's flags: written by the hourly scan (`games.history.collusion`, which
reads the played rounds), reviewed by support in the admin. Only support changes a flag's status
and note; the scan refreshes its numbers and evidence.

Support may also freeze a player's transfers pending review (`transfers_freeze`): a frozen
account takes no seat at any table and claims no grant (the lobby's and the table's checks ask
`transfers_frozen`), and is sent back to the room list after the round it is playing. Each
freeze and unfreeze is a `TransferFreeze` row: who, when, why.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from accounts.models import CollusionFlag, CollusionStatus, TransferFreeze, User

NOTE_MAX = 2000


class FreezeRefused(ValueError):
    """A freeze or unfreeze that cannot be done; nothing was written."""

    def __init__(self, code: str, message: Any) -> None:
        super().__init__(str(message))
        self.code = code
        self.message = message


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
    score: float = 0.0,
    threshold: float = 0.0,
    water_given: int = 0,
    evidence: Sequence[dict[str, Any]] = (),
    reasons: Sequence[str] = (),
) -> bool:
    """Create or update the pair's flag with the scan's numbers and evidence (status and note
    untouched); True when it was created. One row per (loser, winner), under its unique
    constraint, so two scans running at once write it once."""
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
            "score": score,
            "threshold": threshold,
            "water_given": water_given,
            "evidence": list(evidence),
            "reasons": list(reasons),
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


def transfers_frozen(user: User, *, fresh: bool = True) -> bool:
    """Whether support has frozen the player's transfers: read fresh (a freeze may have come
    since the user object was loaded), or, with ``fresh=False``, as loaded — enough for a page
    that only shows it (the claim asks again, fresh, under its lock)."""
    if user.pk is None or user.is_bot:
        return False
    if not fresh:
        return user.transfers_frozen_at is not None
    return User.objects.filter(pk=user.pk, transfers_frozen_at__isnull=False).exists()


FROZEN_MESSAGE = _(
    "Your account's transfers are frozen pending a review by support: you cannot take a seat "
    "or claim coins until the review is over. Contact support if you think this is a mistake."
)


def _checked_note(note: object) -> str:
    if not isinstance(note, str) or not note.strip():
        raise FreezeRefused("note_required", _("Write a note: why, for the review."))
    note = note.strip()
    if len(note) > NOTE_MAX:
        raise FreezeRefused(
            "note_too_long", _("A note has at most %(max)s characters.") % {"max": NOTE_MAX}
        )
    return note


def _check_staff(staff: User) -> None:
    if not (staff.is_active and staff.is_staff and staff.has_perm("accounts.freeze_transfers")):
        raise FreezeRefused("forbidden", _("You may not freeze or unfreeze transfers."))


@transaction.atomic
def transfers_freeze(
    *, user: User, staff: User, note: object, flag: CollusionFlag | None = None
) -> TransferFreeze:
    """Freeze the player's transfers pending review (a staff member holding
    `accounts.freeze_transfers`, with a note). Refused: a bot, the staff member themself, an
    account already frozen, no note. The table sends a seated player away after its round
    (`games.live.settle.send_away_frozen`)."""
    _check_staff(staff)
    text = _checked_note(note)
    locked = User.objects.select_for_update().get(pk=user.pk)
    if locked.is_bot:
        raise FreezeRefused("bot", _("Bots hold no transfers to freeze."))
    if locked.pk == staff.pk:
        raise FreezeRefused("self", _("You cannot freeze your own account."))
    if locked.transfers_frozen_at is not None:
        raise FreezeRefused("already_frozen", _("This account's transfers are frozen already."))
    now = timezone.now()
    locked.transfers_frozen_at = now
    locked.transfers_frozen_by = staff
    locked.transfers_frozen_note = text
    locked.save(
        update_fields=["transfers_frozen_at", "transfers_frozen_by", "transfers_frozen_note"]
    )
    user.transfers_frozen_at = now
    return TransferFreeze.objects.create(
        user=locked, action=TransferFreeze.Action.FREEZE, by=staff, at=now, note=text, flag=flag
    )


@transaction.atomic
def transfers_unfreeze(
    *, user: User, staff: User, note: object, flag: CollusionFlag | None = None
) -> TransferFreeze:
    """Lift a freeze (same permission, a note required); refused when not frozen."""
    _check_staff(staff)
    text = _checked_note(note)
    locked = User.objects.select_for_update().get(pk=user.pk)
    if locked.transfers_frozen_at is None:
        raise FreezeRefused("not_frozen", _("This account's transfers are not frozen."))
    now = timezone.now()
    locked.transfers_frozen_at = None
    locked.transfers_frozen_by = None
    locked.transfers_frozen_note = ""
    locked.save(
        update_fields=["transfers_frozen_at", "transfers_frozen_by", "transfers_frozen_note"]
    )
    user.transfers_frozen_at = None
    return TransferFreeze.objects.create(
        user=locked, action=TransferFreeze.Action.UNFREEZE, by=staff, at=now, note=text, flag=flag
    )

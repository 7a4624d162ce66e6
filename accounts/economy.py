"""Reads of the economy: its settings, and whether a player may claim a grant now.

Nothing here writes. The claim services (`accounts.services.wallet_daily_bonus_claim`,
`wallet_relief_claim`) ask the same `*_refusal` questions again under a lock, so what the
profile page shows and what a claim does cannot disagree for long, and never in the player's
favour.

Days are UTC days: a daily bonus is claimable once per UTC date, relief `relief_per_day`
times per UTC date, and sign-ups are counted per address per UTC date.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.utils.formats import number_format
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy, ngettext

from accounts.collusion import FROZEN_MESSAGE, transfers_frozen
from accounts.errors import ClaimRefused
from accounts.mint import mint_budget_refusal, utc_day
from accounts.models import (
    EconomySettings,
    MintKind,
    Transaction,
    TransactionKind,
    User,
)
from accounts.selectors import wallet_balance

# Why a guest claims no grant: the daily bonus and relief would let one address mint again
# and again through throwaway guests (docs/security.md, "Guests").
GUEST_MESSAGE = gettext_lazy(
    "Guests do not receive the daily bonus or relief grants: sign up to keep your coins and "
    "claim them."
)

# An IPv6 client controls at least a /64: its sign-ups are counted together.
IPV6_PREFIX = 64
UNKNOWN_ADDRESS = "unknown"


def economy_settings() -> EconomySettings:
    """The economy settings: the stored row, or the defaults (unsaved) while there is none."""
    stored = EconomySettings.objects.filter(pk=EconomySettings.SINGLETON_ID).first()
    return stored or EconomySettings(pk=EconomySettings.SINGLETON_ID)


def next_utc_midnight(now: datetime | None = None) -> datetime:
    """When the next UTC day begins: when a day's claims and sign-up counts start afresh."""
    return datetime.combine(utc_day(now) + timedelta(days=1), time.min, tzinfo=UTC)


def network_address(ip: str | None) -> str:
    """The address sign-ups are counted by: the IPv4 address, or the IPv6 /64 network.

    An IPv4-mapped IPv6 address counts as its IPv4 address; anything unparsable (no address at
    all, e.g. a misconfigured proxy) counts as one shared "unknown" address.
    """
    try:
        parsed = ipaddress.ip_address((ip or "").strip())
    except ValueError:
        return UNKNOWN_ADDRESS
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, IPV6_PREFIX), strict=False))
    return str(parsed)


def coins(amount: int) -> str:
    """An amount as the player reads it (thousands grouped)."""
    return number_format(amount, force_grouping=True)


# Idempotency keys: one per claim a player may make, so a second post of the same claim —
# a double click, a retry, two requests racing — is the same transaction, never a second one.


def daily_bonus_key(*, user: User, day: date) -> str:
    return f"daily_bonus:user:{user.pk}:{day.isoformat()}"


def relief_key_prefix(*, user: User, day: date) -> str:
    return f"relief:user:{user.pk}:{day.isoformat()}:"


def reliefs_claimed(*, user: User, day: date) -> int:
    """How many relief grants the player has received on `day` (UTC)."""
    return Transaction.objects.filter(
        kind=TransactionKind.RELIEF,
        idempotency_key__startswith=relief_key_prefix(user=user, day=day),
    ).count()


# Who is playing a round now is the games app's to say, and games sits above accounts: it
# registers the question when it starts (`games.apps`), so accounts imports nothing of it.
_round_checks: list[Callable[[User], bool]] = []


def in_round_check_register(check: Callable[[User], bool]) -> None:
    """Have `in_unsettled_round` ask ``check(user)`` too (registering it again changes nothing)."""
    if check not in _round_checks:
        _round_checks.append(check)


def in_unsettled_round(*, user: User) -> bool:
    """Whether the player takes part in a round that has been dealt and not yet settled, as the
    registered checks say (`relief_refusal` refuses relief then: `in_round`)."""
    return any(check(user) for check in _round_checks)


def daily_bonus_refusal(
    *, user: User, economy: EconomySettings, now: datetime | None = None, fresh: bool = True
) -> ClaimRefused | None:
    """Why the player may not claim today's bonus, or None if they may (``fresh=False``: the
    user's freeze as loaded, for a page that only shows the answer)."""
    if user.is_bot:
        return ClaimRefused("bot", _("Bots do not claim coins."))
    if user.is_guest:
        return ClaimRefused("guest", str(GUEST_MESSAGE))
    if transfers_frozen(user, fresh=fresh):
        return ClaimRefused("transfers_frozen", FROZEN_MESSAGE)
    if economy.daily_bonus <= 0:
        return ClaimRefused("daily_bonus_off", _("There is no daily bonus at the moment."))
    key = daily_bonus_key(user=user, day=utc_day(now))
    if Transaction.objects.filter(idempotency_key=key).exists():
        return ClaimRefused(
            "already_claimed",
            _(
                "You have already claimed today's bonus. The next one can be claimed from "
                "00:00 UTC."
            ),
        )
    return mint_budget_refusal(
        kind=MintKind.DAILY_BONUS, amount=economy.daily_bonus, economy=economy, now=now
    )


def relief_refusal(
    *,
    user: User,
    economy: EconomySettings,
    now: datetime | None = None,
    claimed_today: int | None = None,
    fresh: bool = True,
) -> ClaimRefused | None:
    """Why the player may not claim a relief grant now, or None if they may (`claimed_today`:
    the player's reliefs today, if the caller has counted them already; ``fresh=False``: the
    user's freeze as loaded, for a page that only shows the answer)."""
    if user.is_bot:
        return ClaimRefused("bot", _("Bots do not claim coins."))
    if user.is_guest:
        return ClaimRefused("guest", str(GUEST_MESSAGE))
    if transfers_frozen(user, fresh=fresh):
        return ClaimRefused("transfers_frozen", FROZEN_MESSAGE)
    if economy.relief_amount <= 0 or economy.relief_per_day <= 0:
        return ClaimRefused("relief_off", _("There is no relief grant at the moment."))
    balance = wallet_balance(user=user)
    if balance >= economy.relief_below:
        return ClaimRefused(
            "not_broke",
            _("Relief is for players holding fewer than %(below)s coins; you hold %(balance)s.")
            % {"below": coins(economy.relief_below), "balance": coins(balance)},
        )
    if claimed_today is None:
        claimed_today = reliefs_claimed(user=user, day=utc_day(now))
    if claimed_today >= economy.relief_per_day:
        return ClaimRefused(
            "relief_limit",
            ngettext(
                "You have claimed relief once today, the most allowed. Try again from 00:00 UTC.",
                "You have claimed relief %(count)s times today, the most allowed. "
                "Try again from 00:00 UTC.",
                economy.relief_per_day,
            )
            % {"count": economy.relief_per_day},
        )
    if in_unsettled_round(user=user):
        return ClaimRefused(
            "in_round",
            _("Relief cannot be claimed during a round; claim it once the round is settled."),
        )
    return mint_budget_refusal(
        kind=MintKind.RELIEF, amount=economy.relief_amount, economy=economy, now=now
    )


@dataclass(frozen=True)
class ClaimStatus:
    """What the profile page and the API say about one grant: may it be claimed now?"""

    amount: int
    claimable: bool
    code: str | None
    message: str
    next_claim_at: datetime | None


@dataclass(frozen=True)
class ReliefStatus(ClaimStatus):
    below: int
    per_day: int
    claimed_today: int


def daily_bonus_status(
    *, user: User, now: datetime | None = None, economy: EconomySettings | None = None
) -> ClaimStatus:
    economy = economy or economy_settings()
    refusal = daily_bonus_refusal(user=user, economy=economy, now=now, fresh=False)
    return ClaimStatus(
        amount=economy.daily_bonus,
        claimable=refusal is None,
        code=None if refusal is None else refusal.code,
        message="" if refusal is None else refusal.message,
        next_claim_at=(
            next_utc_midnight(now)
            if refusal is not None and refusal.code in ("already_claimed", "mint_ceiling")
            else None
        ),
    )


def relief_status(
    *, user: User, now: datetime | None = None, economy: EconomySettings | None = None
) -> ReliefStatus:
    economy = economy or economy_settings()
    claimed = reliefs_claimed(user=user, day=utc_day(now))
    refusal = relief_refusal(
        user=user, economy=economy, now=now, claimed_today=claimed, fresh=False
    )
    return ReliefStatus(
        amount=economy.relief_amount,
        claimable=refusal is None,
        code=None if refusal is None else refusal.code,
        message="" if refusal is None else refusal.message,
        next_claim_at=(
            next_utc_midnight(now)
            if refusal is not None and refusal.code in ("relief_limit", "mint_ceiling")
            else None
        ),
        below=economy.relief_below,
        per_day=economy.relief_per_day,
        claimed_today=claimed,
    )

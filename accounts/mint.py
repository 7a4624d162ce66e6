"""The mint's daily budget: a ceiling on the coins issued per kind and UTC day.

Every coin the platform gives away — a sign-up grant, a guest grant, a daily bonus, a relief
grant, a top-up of the house's bankroll for bots — is first taken from today's budget of its kind
(:func:`mint_budget_take`), in the transaction that mints it: the day's `MintDay` row is locked,
so concurrent claims queue and cannot together pass the ceiling, and a claim that rolls back
takes nothing. Past the ceiling the claim is refused (`MintBudgetExhausted`, a message for the
player) and support is alerted (:func:`mint_alert_raise`): a warning in the log once per day
and kind, and a count the admin's mint report and its index banner show. The alert lives in
the cache, not the database, because the refusal rolls back the transaction it happened in
(sometimes a caller's, e.g. a room opened with bots).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta

from django.core.cache import cache
from django.utils import timezone
from django.utils.translation import gettext as _

from accounts.errors import MintBudgetExhausted
from accounts.models import EconomySettings, MintDay, MintKind

logger = logging.getLogger(__name__)

# The economy setting that holds each kind's daily ceiling.
CEILING_FIELDS: dict[str, str] = {
    MintKind.SIGNUP: "mint_ceiling_signup",
    MintKind.DAILY_BONUS: "mint_ceiling_daily_bonus",
    MintKind.RELIEF: "mint_ceiling_relief",
    MintKind.BOT_FUNDING: "mint_ceiling_bot_funding",
    MintKind.GUEST: "mint_ceiling_guest",
}
# How long an alert is kept: longer than the report's window.
ALERT_SECONDS = 32 * 24 * 3600
REPORT_DAYS = 30
# A day and kind is "near" its ceiling from this share of it on (the report's warning).
NEAR_PERCENT = 80


def utc_day(now: datetime | None = None) -> date:
    """Today's date in UTC (or `now`'s)."""
    return (now or timezone.now()).astimezone(UTC).date()


def mint_ceiling(economy: EconomySettings, kind: str) -> int:
    """Today's ceiling of `kind` under these settings."""
    return int(getattr(economy, CEILING_FIELDS[kind]))


def mint_refusal(kind: str) -> MintBudgetExhausted:
    """What a claim past `kind`'s ceiling is told, in the active language."""
    messages = {
        MintKind.SIGNUP: _(
            "Today's sign-up grants are used up, so no new account can be opened now. "
            "Please try again from 00:00 UTC."
        ),
        MintKind.DAILY_BONUS: _(
            "Today's daily bonuses are used up. The next can be claimed from 00:00 UTC."
        ),
        MintKind.RELIEF: _(
            "Today's relief grants are used up. Relief can be claimed again from 00:00 UTC."
        ),
        MintKind.BOT_FUNDING: _(
            "Today's bankroll for bots is used up, so no bot can be seated now (from 00:00 UTC "
            "again). Open or join a room to play with people."
        ),
        MintKind.GUEST: _(
            "Today's guest grants are used up, so no guest can play now. Sign up, or try "
            "again from 00:00 UTC."
        ),
    }
    return MintBudgetExhausted(kind, str(messages[kind]))


def mint_minted(*, kind: str, day: date) -> int:
    """Coins of `kind` minted on `day` so far (read without a lock)."""
    found = MintDay.objects.filter(kind=kind, day=day).values_list("minted", flat=True).first()
    return int(found or 0)


def mint_budget_refusal(
    *, kind: str, amount: int, economy: EconomySettings, now: datetime | None = None
) -> MintBudgetExhausted | None:
    """Whether `amount` more coins of `kind` would pass today's ceiling, read without a lock
    (for what a page shows; :func:`mint_budget_take` decides under the lock)."""
    if mint_minted(kind=kind, day=utc_day(now)) + amount > mint_ceiling(economy, kind):
        return mint_refusal(kind)
    return None


def mint_refusal_alert(
    refusal: MintBudgetExhausted, *, economy: EconomySettings, now: datetime | None = None
) -> None:
    """Alert support of a claim refused by a ceiling before it reached the budget's lock
    (the claim's own check saw the budget spent)."""
    day = utc_day(now)
    mint_alert_raise(
        kind=refusal.kind,
        day=day,
        minted=mint_minted(kind=refusal.kind, day=day),
        ceiling=mint_ceiling(economy, refusal.kind),
    )


def mint_budget_take(
    *, kind: str, amount: int, economy: EconomySettings, now: datetime | None = None
) -> MintDay:
    """Take `amount` coins from today's budget of `kind`, or raise MintBudgetExhausted (and
    alert support) if that would pass its ceiling. Call inside the transaction that mints the
    coins, before the ledger locks the mint: the day's row is locked until it commits."""
    day = utc_day(now)
    ceiling = mint_ceiling(economy, kind)
    MintDay.objects.get_or_create(day=day, kind=kind, defaults={"ceiling": ceiling})
    budget = MintDay.objects.select_for_update().get(day=day, kind=kind)
    if budget.minted + amount > ceiling:
        mint_alert_raise(kind=kind, day=day, minted=budget.minted, ceiling=ceiling)
        raise mint_refusal(kind)
    budget.minted += amount
    budget.ceiling = ceiling
    budget.save(update_fields=["minted", "ceiling"])
    return budget


def _alert_key(kind: str, day: date) -> str:
    return f"mint-alert:{day.isoformat()}:{kind}"


def mint_alert_raise(*, kind: str, day: date, minted: int, ceiling: int) -> None:
    """Count a claim refused by `kind`'s ceiling on `day`, and log a warning the first time
    that day. A cache failure is logged, never raised: the refusal stands either way."""
    key = _alert_key(kind, day)
    try:
        first = cache.add(key, 1, timeout=ALERT_SECONDS)
        if not first:
            try:
                cache.incr(key)
            except ValueError:  # expired between add and incr
                cache.add(key, 1, timeout=ALERT_SECONDS)
    except Exception:
        logger.exception("accounts: could not record the mint alert %s", key)
        first = True
    if first:
        logger.warning(
            "accounts: mint ceiling reached: %s on %s, %s of %s coins minted; claims are "
            "refused until 00:00 UTC",
            kind,
            day.isoformat(),
            minted,
            ceiling,
        )


def mint_alerts(days: list[date]) -> dict[tuple[date, str], int]:
    """Claims refused by a ceiling, by (day, kind), for the days given (none when the cache
    cannot be read)."""
    keys = {_alert_key(kind, day): (day, str(kind)) for day in days for kind in MintKind.values}
    try:
        found = cache.get_many(list(keys))
    except Exception:
        logger.exception("accounts: could not read the mint alerts")
        return {}
    return {keys[key]: int(count) for key, count in found.items()}


@dataclass(frozen=True)
class MintCell:
    """One day and kind of the mint report."""

    kind: str
    label: str
    minted: int
    ceiling: int
    refused: int

    @property
    def percent(self) -> int:
        """Minted as a share of the ceiling, rounded down (a ceiling of 0: 0, or 100 when
        something was minted before it was lowered to 0)."""
        if self.ceiling <= 0:
            return 100 if self.minted else 0
        return self.minted * 100 // self.ceiling

    @property
    def state(self) -> str:
        """`refused` (claims were refused), `reached`, `near` (NEAR_PERCENT or more) or `ok`."""
        if self.refused:
            return "refused"
        if self.ceiling and self.minted >= self.ceiling:
            return "reached"
        if self.percent >= NEAR_PERCENT:
            return "near"
        return "ok"


@dataclass(frozen=True)
class MintReportDay:
    day: date
    cells: list[MintCell]

    @property
    def total(self) -> int:
        return sum(cell.minted for cell in self.cells)


def mint_report(
    *, economy: EconomySettings, days: int = REPORT_DAYS, now: datetime | None = None
) -> list[MintReportDay]:
    """The last `days` UTC days, newest first: each kind's coins minted against its ceiling
    (the stored one for a past day, today's settings for a day nothing was minted) and the
    claims its ceiling refused. Two queries and one cache read."""
    today = utc_day(now)
    wanted = [today - timedelta(days=n) for n in range(days)]
    rows = {
        (row.day, row.kind): row
        for row in MintDay.objects.filter(day__gte=wanted[-1], day__lte=today)
    }
    alerts = mint_alerts(wanted)
    report = []
    for day in wanted:
        cells = []
        for kind, label in MintKind.choices:
            row = rows.get((day, kind))
            cells.append(
                MintCell(
                    kind=kind,
                    label=str(label),
                    minted=row.minted if row is not None else 0,
                    ceiling=row.ceiling if row is not None else mint_ceiling(economy, kind),
                    refused=alerts.get((day, kind), 0),
                )
            )
        report.append(MintReportDay(day=day, cells=cells))
    return report


def mint_alerts_today(*, economy: EconomySettings, now: datetime | None = None) -> list[MintCell]:
    """Today's kinds whose ceiling refused a claim or is reached: the admin index's banner."""
    (today,) = mint_report(economy=economy, days=1, now=now)
    return [cell for cell in today.cells if cell.state in ("refused", "reached")]

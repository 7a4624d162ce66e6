"""Standings and statistics (issue 18): computed by the beat job (``games.tasks``
``compute_standings``, every STANDINGS_SECONDS), never on request, into
:class:`~games.models.Standing` rows — one per person and period (this week, since Monday
00:00 UTC; all time). The pages and the API only read them.

The standings rank the players with at least ``min_rounds`` rounds (settings
STANDINGS_MIN_ROUNDS, per period) by net coins or by water per round.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import QuerySet
from django.utils import timezone

from accounts.models import User
from games.models import Round, RoundPlayer, Standing, StandingPeriod

BY = ("coins", "water")


def week_start(now: datetime) -> datetime:
    """Monday 00:00 UTC of ``now``'s week."""
    day = now.astimezone(UTC)
    monday = day - timedelta(days=day.weekday())
    return monday.replace(hour=0, minute=0, second=0, microsecond=0)


def _empty() -> dict[str, int]:
    return {
        "rounds": 0,
        "water": 0,
        "coins": 0,
        "guns": 0,
        "shot": 0,
        "home_runs": 0,
        "specials": 0,
        "auto": 0,
        "escapes": 0,
    }


def _figures(rows: QuerySet[RoundPlayer]) -> dict[int, dict[str, int]]:
    """Every person's figures over these round players (settled rounds only)."""
    figures: dict[int, dict[str, int]] = defaultdict(_empty)
    for row in rows.select_related("round").only(
        "user_id",
        "water",
        "delta",
        "special",
        "auto",
        "escaped",
        "round__result",
    ):
        mine = figures[row.user_id]
        me = str(row.user_id)
        result = row.round.result or {}
        mine["rounds"] += 1
        mine["water"] += row.water
        mine["coins"] += row.delta
        mine["specials"] += bool(row.special)
        mine["auto"] += bool(row.auto) and not row.escaped
        mine["escapes"] += row.escaped
        mine["home_runs"] += result.get("home_run") == me
        for pair in result.get("pairs", []):
            if not pair.get("gun") or me not in (pair.get("a"), pair.get("b")):
                continue
            if pair.get("shooter") == me:
                mine["guns"] += 1
            else:
                mine["shot"] += 1
    return figures


@transaction.atomic
def compute_standings(now: datetime | None = None) -> int:
    """Recompute every person's standings of both periods; returns the rows written."""
    now = now or timezone.now()
    Standing.objects.all().delete()
    if connection.vendor == "postgresql":
        return _compute_in_sql(now)
    return _compute_in_python(now)


def _compute_in_python(now: datetime) -> int:
    settled = RoundPlayer.objects.filter(round__settled_at__isnull=False, user__is_bot=False)
    periods = {
        StandingPeriod.ALL: _figures(settled),
        StandingPeriod.WEEK: _figures(settled.filter(round__settled_at__gte=week_start(now))),
    }
    rows = [
        Standing(user_id=user_id, period=period, computed_at=now, **figures)
        for period, by_user in periods.items()
        for user_id, figures in by_user.items()
    ]
    Standing.objects.bulk_create(rows)
    return len(rows)


# The figures of ``_figures`` in one statement, on PostgreSQL: the rounds' results are read by
# the server (a round player's guns and shots from its round's pairs), and the rows written
# there too. In Python the job built a model and parsed a result per round player: 14 s of the
# worker's CPU for 16,000 rounds, every STANDINGS_SECONDS, a core taken from the live tables
# (docs/load-and-faults.md, "Fourteenth pass"). A JSON value counts as Python's truth does
# (``null``, ``false``, ``""`` and ``0`` are not a gun).
_COLUMNS = ", ".join(_empty())  # the figures' columns, in the order they are summed
_FIGURES = ", ".join(f"sum({name})::bigint" for name in _empty())
_STANDINGS_SQL = f"""
WITH played AS (
    SELECT p.user_id, r.settled_at >= %(week)s AS this_week, 1 AS rounds, p.water,
           p.delta AS coins, g.guns, g.shot,
           coalesce(r.result ->> 'home_run' = p.user_id::text, false)::int AS home_runs,
           (p.special <> '')::int AS specials,
           (p.auto <> '' AND NOT p.escaped)::int AS auto,
           p.escaped::int AS escapes
    FROM {RoundPlayer._meta.db_table} p
    JOIN {Round._meta.db_table} r ON r.id = p.round_id
    JOIN {User._meta.db_table} u ON u.id = p.user_id
    CROSS JOIN LATERAL (
        SELECT count(*) FILTER (WHERE pair ->> 'shooter' = p.user_id::text) AS guns,
               count(*) FILTER (WHERE pair ->> 'shooter' IS DISTINCT FROM p.user_id::text)
                   AS shot
        FROM jsonb_array_elements(
            CASE WHEN jsonb_typeof(r.result -> 'pairs') = 'array' THEN r.result -> 'pairs'
                 ELSE '[]'::jsonb END
        ) AS pair
        WHERE coalesce(pair -> 'gun', 'null') NOT IN ('null', 'false', '""', '0')
          AND p.user_id::text IN (pair ->> 'a', pair ->> 'b')
    ) g
    WHERE r.settled_at IS NOT NULL AND NOT u.is_bot
)
INSERT INTO {Standing._meta.db_table} (user_id, period, {_COLUMNS}, computed_at)
SELECT user_id, %(all)s, {_FIGURES}, %(now)s FROM played GROUP BY user_id
UNION ALL
SELECT user_id, %(this_week)s, {_FIGURES}, %(now)s FROM played WHERE this_week GROUP BY user_id
"""


def _compute_in_sql(now: datetime) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            _STANDINGS_SQL,
            {
                "week": week_start(now),
                "now": now,
                "all": StandingPeriod.ALL.value,
                "this_week": StandingPeriod.WEEK.value,
            },
        )
        return cursor.rowcount


def min_rounds(period: str) -> int:
    return int(settings.STANDINGS_MIN_ROUNDS[period])


def standings(*, period: str, by: str, limit: int = 50) -> dict[str, Any]:
    """The standings of ``period`` ranked ``by`` coins or water per round (the rows the job
    wrote; players with fewer than the period's minimum rounds are left out)."""
    if period not in StandingPeriod.values or by not in BY:
        raise ValueError("unknown period or ranking")
    rows = list(
        Standing.objects.filter(period=period, rounds__gte=min_rounds(period)).select_related(
            "user"
        )
    )
    if by == "coins":
        rows.sort(key=lambda s: (-s.coins, -s.water_per_round, s.user.get_username()))
    else:
        rows.sort(key=lambda s: (-s.water_per_round, -s.coins, s.user.get_username()))
    computed = max((s.computed_at for s in rows), default=None)
    return {
        "period": period,
        "by": by,
        "min_rounds": min_rounds(period),
        "computed_at": computed,
        "rows": [
            {"rank": rank, **standing_json(s)} for rank, s in enumerate(rows[:limit], start=1)
        ],
    }


def standing_json(standing: Standing) -> dict[str, Any]:
    return {
        "player": standing.user.get_username(),
        "rounds": standing.rounds,
        "water": standing.water,
        "water_per_round": round(standing.water_per_round, 2),
        "coins": standing.coins,
        "guns": standing.guns,
        "shot": standing.shot,
        "home_runs": standing.home_runs,
        "specials": standing.specials,
        "auto": standing.auto,
        "escapes": standing.escapes,
    }


def player_stats(user: User) -> dict[str, Any]:
    """A person's figures of both periods (zeros before the job has seen a round of theirs)."""
    found = {s.period: s for s in Standing.objects.filter(user=user).select_related("user")}
    out: dict[str, Any] = {"player": user.get_username()}
    for period in StandingPeriod.values:
        standing = found.get(period)
        if standing is None:
            out[period] = {"player": user.get_username(), **_empty(), "water_per_round": 0.0}
        else:
            out[period] = standing_json(standing)
    computed = [s.computed_at for s in found.values()]
    out["computed_at"] = max(computed) if computed else None
    return out

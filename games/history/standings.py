"""Standings and statistics: computed by the beat job (``games.live.tasks``
``compute_standings``, every STANDINGS_SECONDS), never on request, into
:class:`~games.models.Standing` rows — one per person and period (this week, since Monday
00:00 UTC; all time). The pages and the API only read them.

The standings rank the players with at least ``min_rounds`` rounds (settings
STANDINGS_MIN_ROUNDS, per period) by net coins or by water per round.

Only players are listed (:func:`listed_players`): staff, superusers, bots and deactivated
accounts are in no standings, and asking for their statistics is answered exactly as for a
name nobody has — the same query, the same 404 and body — so neither says which names exist.
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
from games.models import Round, RoundPlayer, Standing, StandingPeriod, StandingsRun

BY = ("coins", "water")


def listed_players() -> QuerySet[User]:
    """The accounts whose figures the standings and statistics show: active people who are
    not staff. Everyone else hides their statistics."""
    return User.objects.filter(is_active=True, is_bot=False, is_staff=False, is_superuser=False)


def listed_player(username: str) -> User | None:
    """The listed player of that name, or None — for a name nobody has and for a name that
    hides its statistics alike (one query either way)."""
    return listed_players().filter(username=username).first()


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


# The job takes this transaction-level advisory lock on PostgreSQL, so that two runs (a beat
# that fired twice, a full recount by hand) count one after the other, never the same rounds
# twice. Its key is arbitrary; nothing else takes it.
_LOCK = 0x5353_5354  # "SSST"
_KEEP_RUNS = timedelta(days=30)  # how long the job's runs are kept (StandingsRun)


def compute_standings(now: datetime | None = None, *, full: bool = False) -> int:
    """Count the rounds settled since the last run into the standings of both periods
    (:func:`run_standings`); returns the standing rows written (added to or created)."""
    return run_standings(now, full=full).rows


@transaction.atomic
def run_standings(now: datetime | None = None, *, full: bool = False) -> StandingsRun:
    """Count the rounds settled since the last run into the standings of both periods; the
    run's record.

    Each settled round is counted once (``Round.standings_counted``), so a run reads only the
    rounds settled since the one before, not the whole history; a round settled after the
    run's week (``now``'s) waits for a run of its own week. This week's rows are dropped first
    when they are last week's (not changed since Monday 00:00 UTC). ``full``: forget the
    standings and count every settled round again (``manage.py compute_standings --full``);
    the first run ever is one, whatever rows it finds (a deploy's old beat may have written
    its own between the migration and the new code). ``now`` (by default the time the lock
    was taken) is the run's time."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_xact_lock(%s)", [_LOCK])
            # No JIT: where the statistics are stale (many rounds settled since the last
            # ANALYZE) the planner expects millions of rows and compiles the statement, 0.45 s
            # of the server's CPU for a run that finds no new round.
            cursor.execute("SET LOCAL jit = off")
    now = now or timezone.now()
    full = full or not StandingsRun.objects.exists()
    if full:
        Standing.objects.all().delete()
        Round.objects.filter(standings_counted=True).update(standings_counted=False)
    else:
        Standing.objects.filter(
            period=StandingPeriod.WEEK, computed_at__lt=week_start(now)
        ).delete()
    if connection.vendor == "postgresql":
        rounds, rows = _count_in_sql(now)
    else:
        rounds, rows = _count_in_python(now)
    run = StandingsRun.objects.create(ran_at=now, rounds=rounds, rows=rows, full=full)
    StandingsRun.objects.filter(ran_at__lt=now - _KEEP_RUNS).delete()
    return run


def _next_week(now: datetime) -> datetime:
    """Monday 00:00 UTC after ``now``: the rounds settled from then on wait for a later run."""
    return week_start(now) + timedelta(days=7)


def _count_in_python(now: datetime, batch: int = 2000) -> tuple[int, int]:
    """The other databases' way: the uncounted rounds' figures added in Python, ``batch``
    rounds at a time. Returns the rounds counted and the rows written."""
    uncounted = list(
        Round.objects.filter(
            settled_at__isnull=False, settled_at__lt=_next_week(now), standings_counted=False
        )
        .order_by("pk")
        .values_list("pk", flat=True)
    )
    week = week_start(now)
    written: set[tuple[int, str]] = set()
    for at in range(0, len(uncounted), batch):
        ids = uncounted[at : at + batch]
        settled = RoundPlayer.objects.filter(round_id__in=ids, user__is_bot=False)
        periods = {
            StandingPeriod.ALL: _figures(settled),
            StandingPeriod.WEEK: _figures(settled.filter(round__settled_at__gte=week)),
        }
        for period, by_user in periods.items():
            _add(period, by_user, now)
            written.update((user_id, period) for user_id in by_user)
        Round.objects.filter(pk__in=ids).update(standings_counted=True)
    return len(uncounted), len(written)


def _add(period: str, by_user: dict[int, dict[str, int]], now: datetime) -> None:
    """Add these figures to the players' rows of ``period`` (made when missing)."""
    found = {s.user_id: s for s in Standing.objects.filter(period=period, user_id__in=by_user)}
    new = []
    for user_id, figures in by_user.items():
        row = found.get(user_id)
        if row is None:
            new.append(Standing(user_id=user_id, period=period, computed_at=now, **figures))
            continue
        for name, value in figures.items():
            setattr(row, name, getattr(row, name) + value)
        row.computed_at = now
    Standing.objects.bulk_create(new)
    Standing.objects.bulk_update(found.values(), [*_empty(), "computed_at"])


# The figures of ``_figures`` in one statement, on PostgreSQL: the rounds not yet counted are
# marked counted, their results read by the server (a round player's guns and shots from its
# round's pairs), and their sums added to the rows (made when missing) in the same statement.
# Doing it in Python cost the worker about 14 s of CPU per 16,000 rounds on every run, a core
# taken from the live tables (docs/load-and-faults.md, "Design choices that hold"). A JSON
# value counts as Python's truth does (``null``, ``false``, ``""`` and ``0`` are not a gun).
_COLUMNS = ", ".join(_empty())  # the figures' columns, in the order they are summed
_FIGURES = ", ".join(f"sum({name})::bigint AS {name}" for name in _empty())
_ADDED = ", ".join(f"{name} = s.{name} + EXCLUDED.{name}" for name in _empty())
_STANDINGS_SQL = f"""
WITH counted AS (
    UPDATE {Round._meta.db_table} SET standings_counted = true
    WHERE settled_at IS NOT NULL AND NOT standings_counted AND settled_at < %(next_week)s
    RETURNING id, settled_at, result
), played AS (
    SELECT p.user_id, r.settled_at >= %(week)s AS this_week, 1 AS rounds, p.water,
           p.delta AS coins, g.guns, g.shot,
           coalesce(r.result ->> 'home_run' = p.user_id::text, false)::int AS home_runs,
           (p.special <> '')::int AS specials,
           (p.auto <> '' AND NOT p.escaped)::int AS auto,
           p.escaped::int AS escapes
    FROM {RoundPlayer._meta.db_table} p
    JOIN counted r ON r.id = p.round_id
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
    WHERE NOT u.is_bot
), summed AS (
    SELECT user_id, %(all)s AS period, {_FIGURES} FROM played GROUP BY user_id
    UNION ALL
    SELECT user_id, %(this_week)s, {_FIGURES} FROM played WHERE this_week GROUP BY user_id
), written AS (
    INSERT INTO {Standing._meta.db_table} AS s (user_id, period, {_COLUMNS}, computed_at)
    SELECT user_id, period, {_COLUMNS}, %(now)s FROM summed
    ON CONFLICT (user_id, period) DO UPDATE SET {_ADDED}, computed_at = EXCLUDED.computed_at
    RETURNING 1
)
SELECT (SELECT count(*) FROM counted), (SELECT count(*) FROM written)
"""


def _count_in_sql(now: datetime) -> tuple[int, int]:
    """Returns the rounds counted and the rows written."""
    with connection.cursor() as cursor:
        cursor.execute(
            _STANDINGS_SQL,
            {
                "week": week_start(now),
                "next_week": _next_week(now),
                "now": now,
                "all": StandingPeriod.ALL.value,
                "this_week": StandingPeriod.WEEK.value,
            },
        )
        rounds, rows = cursor.fetchone()
    return int(rounds), int(rows)


def last_run() -> datetime | None:
    """When the standings job last ran (None before its first run)."""
    return StandingsRun.objects.values_list("ran_at", flat=True).order_by("-ran_at").first()


def min_rounds(period: str) -> int:
    return int(settings.STANDINGS_MIN_ROUNDS[period])


def standings(*, period: str, by: str, limit: int = 50) -> dict[str, Any]:
    """The standings of ``period`` ranked ``by`` coins or water per round (the rows the job
    wrote; players with fewer than the period's minimum rounds are left out)."""
    if period not in StandingPeriod.values or by not in BY:
        raise ValueError("unknown period or ranking")
    rows = list(
        Standing.objects.filter(
            period=period, rounds__gte=min_rounds(period), user__in=listed_players()
        ).select_related("user")
    )
    if by == "coins":
        rows.sort(key=lambda s: (-s.coins, -s.water_per_round, s.user.get_username()))
    else:
        rows.sort(key=lambda s: (-s.water_per_round, -s.coins, s.user.get_username()))
    return {
        "period": period,
        "by": by,
        "min_rounds": min_rounds(period),
        "computed_at": last_run(),
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
    out["computed_at"] = last_run()
    return out

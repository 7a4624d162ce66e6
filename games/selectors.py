"""Reads of rule configurations and the special-hand statistics the admin shows, of played
rounds with their hands hidden until settlement, and of the tables' coming deadlines."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Case, F, Model, Prefetch, Q, QuerySet, Value, When
from django.db.models.query import ModelIterable

from games.models import Round, RoundPlayer, RuleConfiguration, Table
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.stats import (
    DEFAULT_DEALS,
    DEFAULT_SEED,
    Progress,
    SimulatedDeals,
    SpecialStats,
    cache_filename,
    load_or_simulate,
    special_stats,
)

# path -> (modification time, deals): the file is read once per process, again if rebuilt.
_loaded: dict[Path, tuple[int, SimulatedDeals]] = {}


def rule_configuration_default() -> RuleConfiguration:
    """The default configuration (there is exactly one after ``migrate``)."""
    return RuleConfiguration.objects.get(is_default=True)


def special_stats_settings() -> tuple[Path, int, int]:
    """(cache directory, number of deals, seed) from the settings."""
    directory = Path(getattr(settings, "STATS_CACHE_DIR", settings.BASE_DIR / "var" / "cache"))
    deals = int(getattr(settings, "SPECIAL_STATS_DEALS", DEFAULT_DEALS))
    seed = int(getattr(settings, "SPECIAL_STATS_SEED", DEFAULT_SEED))
    return directory, deals, seed


def special_deals_get(
    *, rebuild: bool = False, workers: int = 1, progress: Progress | None = None
) -> SimulatedDeals:
    """The simulated deals of the settings, from the cache file; simulated on first need.

    Simulating 100,000 deals takes tens of seconds: ``manage.py warm_special_stats`` does it
    ahead of time so that no request waits for it.
    """
    directory, n_deals, seed = special_stats_settings()
    path = directory / cache_filename(n_deals, seed)
    if not rebuild:
        cached = _loaded.get(path)
        try:
            mtime: int | None = path.stat().st_mtime_ns
        except FileNotFoundError:
            mtime = None
        if cached is not None and cached[0] == mtime:
            return cached[1]
    deals = load_or_simulate(
        directory, n_deals, seed, rebuild=rebuild, workers=workers, progress=progress
    )
    _loaded[path] = (path.stat().st_mtime_ns, deals)
    return deals


def rule_config_special_stats(config: RuleConfig = DEFAULT_CONFIG) -> SpecialStats:
    """How often each special of ``config`` counts, and its expected water per deal."""
    return special_stats(special_deals_get(), config)


def rule_configuration_special_stats(*, configuration: RuleConfiguration) -> SpecialStats:
    """The statistics of a saved configuration's rules (as stored, not as being edited)."""
    return rule_config_special_stats(configuration.engine_config())


# -- rounds: nobody sees a hand before the settlement ------------------------------------------

# What an unsettled round must not show anyone, staff included: the hands dealt and how they
# are being played, and the deck (with its salt) that deals them. All of them are blank in the
# database until the settlement writes them, except ``cards`` (stored at the deal); the
# selectors below blank them all anyway, so a row written early never shows either.
ROUND_SECRET_FIELDS = ("deck", "salt", "result", "balances")
ROUND_PLAYER_SECRET_FIELDS = ("cards", "special", "arrangement", "auto")

# Prefix of the annotations that carry a secret field's value, or its blank while unsettled.
SHOWN_IF_SETTLED = "shown_if_settled_"


class _SettledOnlyIterable(ModelIterable):  # type: ignore[type-arg]
    """Model instances whose secret fields hold the ``SHOWN_IF_SETTLED`` annotations' values.

    The secret columns themselves are deferred, and every one of them is set here, so reading
    an attribute never loads the real column of an unsettled round.
    """

    def __iter__(self) -> Iterator[Model]:
        for obj in super().__iter__():
            values = vars(obj)
            for key in [k for k in values if k.startswith(SHOWN_IF_SETTLED)]:
                setattr(obj, key.removeprefix(SHOWN_IF_SETTLED), values.pop(key))
            yield obj


def _settled_only(queryset: QuerySet[Any], fields: tuple[str, ...], settled: Q) -> QuerySet[Any]:
    model = queryset.model
    shown: dict[str, Any] = {}
    for name in fields:
        field = model._meta.get_field(name)
        blank = None if field.null else ""
        shown[SHOWN_IF_SETTLED + name] = Case(
            When(settled, then=F(name)),
            default=Value(blank, output_field=field.clone()),
            output_field=field.clone(),
        )
    masked = queryset.defer(*fields).annotate(**shown)
    masked._iterable_class = _SettledOnlyIterable
    return masked


def round_players_hidden_until_settled(
    *, round_players: QuerySet[RoundPlayer] | None = None
) -> QuerySet[RoundPlayer]:
    """Round players whose cards, arrangement, special and auto read as blank (``""`` /
    None) while their round is not settled.

    The blanking is in the SQL (``CASE WHEN round.settled_at IS NOT NULL ...``): the database
    never sends the hand of a round in play. Use it (or :func:`rounds_hidden_until_settled`)
    wherever a round's players are shown: admin pages, exports, history, replay.
    """
    queryset = RoundPlayer.objects.all() if round_players is None else round_players
    if queryset._iterable_class is _SettledOnlyIterable:
        return queryset
    return _settled_only(queryset, ROUND_PLAYER_SECRET_FIELDS, Q(round__settled_at__isnull=False))


def rounds_hidden_until_settled(*, rounds: QuerySet[Round] | None = None) -> QuerySet[Round]:
    """Rounds whose deck, salt, result and balances read as blank while unsettled, with their
    players (and the players' users) prefetched the same way, so that ``round_.players.all()``
    shows no hand of a round in play.

    Any prefetch of the given queryset is replaced: an unmasked prefetch of the players would
    otherwise be used instead.
    """
    queryset = Round.objects.all() if rounds is None else rounds
    if queryset._iterable_class is not _SettledOnlyIterable:
        queryset = _settled_only(queryset, ROUND_SECRET_FIELDS, Q(settled_at__isnull=False))
    players = round_players_hidden_until_settled(
        round_players=RoundPlayer.objects.select_related("user").order_by("position")
    )
    return queryset.prefetch_related(None).prefetch_related(Prefetch("players", queryset=players))


def round_in_play(round_: Round) -> bool:
    """Whether the round is still being played: its hands are shown to nobody."""
    return round_.settled_at is None


def table_deadlines_before(*, until: float, limit: int) -> list[tuple[int, int, str, float]]:
    """(table id, version, phase, deadline) of the tables whose phase deadline comes before
    ``until`` (epoch seconds), earliest first, at most ``limit``: one indexed query, asked
    several times a second by every worker's poller (``games.timers``), so plain SQL on
    PostgreSQL (the ORM's query building cost more than the query). The deadline is the
    state's own float (``state.deadline``), the value a timeout must name to hold across the
    phase's commands (``table_services.table_timeout``).

    The column holds the float rounded to the microsecond as the services wrote it
    (``datetime.fromtimestamp``); ``until`` is rounded the same way for the index, and the
    exact floats decide at the edge."""
    bound = datetime.fromtimestamp(until, tz=UTC)
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(_DEADLINES_SQL, [bound, limit])
            rows = cursor.fetchall()
    else:
        rows = _deadline_rows(bound=bound, limit=limit)
    return [
        (pk, version, phase, float(deadline))
        for pk, version, phase, deadline in rows
        if isinstance(deadline, (int, float)) and deadline <= until
    ]


def _deadline_rows(*, bound: datetime, limit: int) -> list[tuple[Any, ...]]:
    """:func:`table_deadlines_before`'s rows through the ORM (any database)."""
    return list(
        Table.objects.filter(deadline__lte=bound)
        .order_by("deadline")
        .values_list("pk", "version", "phase", "state__deadline")[:limit]
    )


_DEADLINES_SQL = (
    "SELECT id, version, phase, (state ->> 'deadline')::float8"
    f" FROM {Table._meta.db_table} WHERE deadline <= %s ORDER BY deadline LIMIT %s"
)

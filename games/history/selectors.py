"""Reads of played rounds with their hands hidden until the settlement: every page, export,
audit and replay reads rounds through these."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db.models import Case, F, Model, Prefetch, Q, QuerySet, Value, When
from django.db.models.query import ModelIterable

from games.models import Round, RoundPlayer

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


def player_in_unsettled_round(user: Any) -> bool:
    """Whether the user takes part in a round that has been dealt and not yet settled."""
    return RoundPlayer.objects.filter(user=user, round__settled_at__isnull=True).exists()

"""The skill rating of the settled rounds (games.rules.rating says what a round is worth).

Every settled round updates the Glicko-2 rating (:class:`~games.models.PlayerRating`) of its
players in the round's *rule family* (:func:`rating_family`) once: the settlement queues
``games.tasks.rating_update`` on commit, and the beat's catch-up (:func:`ratings_catch_up`)
rates any round whose task was lost. :func:`rating_update` locks the round, skips it if it is
rated already (``Round.rating_counted``), and writes the ratings and the mark in one
transaction, so running it twice, or late, changes nothing.

A round of a duplicate match is rated with the other tables' rounds of the same deal, once all
of them are settled: each pair on its water minus the pair's par (the same hands' water at the
other tables). A deal that never completes (the match ended) is rated over the tables that
settled it, as a plain round where only one did.

Bots are rated like people (the skill matching compares players with bot levels), but the
standings' "by rating" view lists only the standings' players (:func:`rating_standings`).
"""

from __future__ import annotations

import logging
from typing import Any

from django.conf import settings
from django.db import transaction

from games.history.standings import listed_players
from games.models import MatchStatus, PlayerRating, Round
from games.rules import rating as rules_rating
from games.rules.config import RuleConfig
from games.variants import CLASSIC, VARIANTS, variant_name, variant_tags

logger = logging.getLogger(__name__)

CATCH_UP_BATCH = 500


def rating_family(config: RuleConfig, preset: str = "") -> str:
    """The rule family a configuration is rated in: its variant tags (games.variants) joined
    by ``+`` — ``classic``, ``fuzhou``, ``duoyise``, ``duoyise+laizi``… — the lobby's own
    filter, so a player's rating is for the game the lobby shows them, and decks or scoring
    tables that need a different skill are rated apart."""
    return "+".join(variant_tags(config, preset))


def family_name(family: str, chinese: bool) -> str:
    """A family's name for people: ``Extra suit · Jokers`` / ``多一色·癞子``."""
    names = [variant_name(t, chinese) if t in VARIANTS else t for t in family.split("+")]
    return ("·" if chinese else " · ").join(names)


def player_rating(user_id: int, family: str) -> tuple[float, float] | None:
    """The player's (rating, deviation) in ``family`` on the Glicko scale (a new player
    starts at 1500 ± 350), or None if no round of theirs in that family was rated yet."""
    row = (
        PlayerRating.objects.filter(user_id=user_id, family=family)
        .values_list("rating", "deviation")
        .first()
    )
    return None if row is None else (float(row[0]), float(row[1]))


def min_rounds() -> int:
    """The rounds a player must have been rated from to be in the "by rating" standings."""
    return int(settings.RATING_MIN_ROUNDS)


def _family_of(round_: Round) -> str:
    config = RuleConfig.from_dict(round_.config)
    return rating_family(config, round_.table.room.rules.preset)


def _pairs(round_: Round) -> list[tuple[int, int, int, int, float]]:
    """The round's pairs as (user a, user b, position a, position b, water a won from b)."""
    result = round_.result or {}
    positions = {  # by position; a result stored without positions lists the seats in order
        str(p["id"]): int(p.get("position", index))
        for index, p in enumerate(result.get("players", []))
    }
    return [
        (int(p["a"]), int(p["b"]), positions[str(p["a"])], positions[str(p["b"])], p["water"])
        for p in result.get("pairs", [])
        if str(p["a"]) in positions and str(p["b"]) in positions
    ]


def _deal_rounds(round_: Round) -> list[Round] | None:
    """The rounds to rate together with ``round_``, locked in ascending id (so that two
    updates of one deal wait for each other, never deadlock): itself, or for a duplicate
    match's round every table's round of that deal — None while one of those is not settled
    yet and the match goes on (its last settlement rates them)."""
    locked = Round.objects.select_for_update(of=("self",)).select_related(
        "table__room__rules", "table__room__match"
    )
    room = round_.table.room
    if room.match_id is None:
        return list(locked.filter(pk=round_.pk))
    deal = list(
        locked.filter(table__room__match_id=room.match_id, number=round_.number).order_by("pk")
    )
    match = room.match
    complete = len(deal) == match.tables and all(r.settled_at is not None for r in deal)
    if complete:
        return deal
    if match.status == MatchStatus.PLAYING:
        return None
    return [r for r in deal if r.settled_at is not None]  # never to complete


@transaction.atomic
def rating_update(*, round_id: int) -> int:
    """Update the ratings from the settled round ``round_id`` (and, for a duplicate deal, its
    other tables' rounds) unless done before; returns how many rounds it rated (0: none to
    rate now)."""
    round_ = (
        Round.objects.filter(pk=round_id, settled_at__isnull=False, rating_counted=False)
        .select_related("table__room__rules", "table__room__match")
        .first()
    )
    if round_ is None:
        return 0
    rounds = _deal_rounds(round_)
    if rounds is None:
        return 0
    # Read again under the locks: another update may have rated them meanwhile.
    rounds = [r for r in rounds if not r.rating_counted]
    if not rounds:
        return 0
    family = _family_of(rounds[0])
    games: list[rules_rating.Game[int]] = []
    if len(rounds) > 1:
        tables = [{(pa, pb): float(w) for _, _, pa, pb, w in _pairs(r)} for r in rounds]
        pars = rules_rating.pair_pars(tables)
        for r in rounds:
            games += rules_rating.duplicate_games(
                (a, b, float(w), pars[(pa, pb)]) for a, b, pa, pb, w in _pairs(r)
            )
    else:
        games = rules_rating.plain_games((a, b, float(w)) for a, b, _, _, w in _pairs(rounds[0]))
    if games:
        _rate(family, games)
    Round.objects.filter(pk__in=[r.pk for r in rounds]).update(rating_counted=True)
    return len(rounds)


def _rate(family: str, games: list[rules_rating.Game[int]]) -> None:
    """Update the family's ratings of the games' players (rows locked in ascending user id)."""
    users = sorted({u for g in games for u in (g.a, g.b)})
    PlayerRating.objects.bulk_create(
        [PlayerRating(user_id=u, family=family) for u in users], ignore_conflicts=True
    )
    rows = {
        r.user_id: r
        for r in PlayerRating.objects.select_for_update()
        .filter(family=family, user_id__in=users)
        .order_by("user_id")
    }
    before = {u: rules_rating.Rating(r.rating, r.deviation, r.volatility) for u, r in rows.items()}
    for u, new in rules_rating.rate_round(before, games).items():
        row = rows[u]
        row.rating, row.deviation, row.volatility = new.rating, new.deviation, new.volatility
        row.rounds += 1  # one round of the deal each
    PlayerRating.objects.bulk_update(
        rows.values(), ["rating", "deviation", "volatility", "rounds", "updated_at"]
    )


def ratings_catch_up(*, limit: int = CATCH_UP_BATCH) -> int:
    """Rate the settled rounds not rated yet (a queued task lost, or the rounds settled before
    the rating existed), oldest first, at most ``limit``; returns how many it rated."""
    waiting = list(
        Round.objects.filter(settled_at__isnull=False, rating_counted=False)
        .order_by("pk")
        .values_list("pk", flat=True)[:limit]
    )
    rated = 0
    for pk in waiting:
        try:
            rated += rating_update(round_id=pk)
        except Exception:  # one unreadable round must not hold up the others
            logger.exception("rating round %s failed", pk)
    return rated


def rating_standings(*, family: str, limit: int = 50) -> dict[str, Any]:
    """The "by rating" standings of ``family``: the standings' players (no bots, staff or
    deactivated accounts) rated from at least :func:`min_rounds` rounds, highest first."""
    rows = (
        PlayerRating.objects.filter(
            family=family, rounds__gte=min_rounds(), user__in=listed_players()
        )
        .select_related("user")
        .order_by("-rating", "deviation", "user__username")[:limit]
    )
    return {
        "family": family,
        "min_rounds": min_rounds(),
        "rows": [
            {
                "rank": rank,
                "player": r.user.get_username(),
                "rating": round(r.rating),
                "deviation": round(r.deviation),
                "rounds": r.rounds,
            }
            for rank, r in enumerate(rows, start=1)
        ],
    }


def rated_families() -> list[str]:
    """The families anyone is rated in, classic first."""
    found = set(PlayerRating.objects.values_list("family", flat=True).distinct())
    return sorted(found | {CLASSIC}, key=lambda f: (f != CLASSIC, f))


def player_ratings(user_id: int) -> list[dict[str, Any]]:
    """A player's ratings, one per family they were rated in, most rounds first."""
    return [
        {
            "family": r.family,
            "rating": round(r.rating),
            "deviation": round(r.deviation),
            "rounds": r.rounds,
        }
        for r in PlayerRating.objects.filter(user_id=user_id).order_by("-rounds", "family")
    ]

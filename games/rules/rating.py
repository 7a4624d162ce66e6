"""The skill rating: Glicko-2 over the pairs of a round (RULES.md §7's pairwise water).

A round of Shisanshui is, for the rating, one Glicko-2 *rating period* in which every player
met every other player of the table once: each pair's water (what seat ``a`` won from seat
``b``, guns, home runs and specials included) becomes a game score in [0, 1] for ``a`` and its
complement for ``b`` (:func:`pair_score`), and every player is updated from the ratings that
all of them had before the round (:func:`rate_round`), so the seats' order does not matter.

A duplicate deal (复式) compares the same hands across tables: a pair is judged on its water
minus the pair's *par*, the mean water between the same two positions at every table of the
deal, which takes the luck of the cards out; such a game counts ``DUPLICATE_WEIGHT`` times.

The update itself is the ``glicko2-py`` library's (Glickman's 2012 algorithm, whose published
example the tests check); this module only decides what a round is worth. Ratings are on the
Glicko scale: 1500 and a deviation of 350 for a new player. Why that library: it is typed,
pure Python without dependencies, and its volatility step is Glickman's; the older ``glicko2``
package (2.1.0, 2024) still carries the 2009 port's error in that step (the rating where the
deviation belongs) and has no types; OpenSkill is maintained and multiplayer but is not on the
Glicko scale the matching and the published example use. Only this module imports it, so
another library would change one file.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from glicko2.math import update_rating
from glicko2.math.conversions import mu_to_rating, phi_to_rd, rating_to_mu, rd_to_phi

START_RATING = 1500.0
START_DEVIATION = 350.0
# Glickman's 0.06 is for rating periods of 10 to 15 games, say a month; a round is a period of
# its own here, and a month of play some 200 rounds: 0.06 / √200 ≈ 0.004 per round. With 0.06
# a rating would remember only its last ~20 rounds, too few to tell close players apart
# (benchmarks/rating_simulation.py: Kendall's τ stalls near 0.8).
START_VOLATILITY = 0.004
# Glickman's system constant: how fast the volatility may move (he suggests 0.3 to 1.2; the
# lowest, since every round is a period and a freak deal must not unsettle a rating).
TAU = 0.3
# A duplicate game, luck removed, tells more about skill than a plain one: it counts twice.
DUPLICATE_WEIGHT = 2
# The water at which a pair's score is a full win or loss (the half-way score is 0.5): a
# clean sweep of the three rows (3 water, more with bonuses) is most of a win, a gun or a
# special more than a win, and a freak hand can not outweigh many rounds.
WATER_FOR_FULL_SCORE = 6.0
# Water − par is far less noisy than water (the cards' luck is gone), and Glicko-2 reads every
# score as a game's outcome, as noisy as a win or a loss: the same difference counts more.
DUPLICATE_WATER_FOR_FULL_SCORE = 2.0

# The rating each bot level converges to among the other levels and mixtures of them at 4-seat
# classic tables, from ``python -m benchmarks.rating_simulation`` (the "plain" column after 600
# rounds; that pool is centred on 1500). The expert rates as ``strong`` does, within the
# noise, whether it rolls out 12 deals per decision (the script's default) or 48 (the bots'):
# 1528 both times. The skill matching fills a table with the level nearest a player. The
# spread is narrow: the cards' luck is most of a round.
BOT_LEVEL_RATING: dict[str, float] = {
    "easy": 1464.0,
    "normal": 1499.0,
    "strong": 1533.0,
    "expert": 1528.0,
}

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating on the Glicko scale: ``rating`` ± ``deviation`` (one standard
    deviation of the estimate), and the Glicko-2 ``volatility``."""

    rating: float = START_RATING
    deviation: float = START_DEVIATION
    volatility: float = START_VOLATILITY

    def __post_init__(self) -> None:
        if not math.isfinite(self.rating):
            raise ValueError(f"a rating must be finite, got {self.rating}")
        if not (self.deviation > 0 and self.volatility > 0):
            raise ValueError("a rating's deviation and volatility must be positive")


@dataclass(frozen=True, slots=True)
class Game(Generic[K]):
    """One pair's game of a round as the rating sees it: ``score`` is ``a``'s in [0, 1]
    (``b`` scores ``1 - score``), counted ``weight`` times."""

    a: K
    b: K
    score: float
    weight: int = 1


def pair_score(water: float, full: float | None = None) -> float:
    """The score in [0, 1] of the seat that won ``water`` from the other: 0.5 for a draw,
    rising linearly to a full win at ``full`` water (by default ``WATER_FOR_FULL_SCORE``)
    and falling likewise."""
    full = WATER_FOR_FULL_SCORE if full is None else full
    return min(1.0, max(0.0, 0.5 + water / (2 * full)))


def plain_games(pairs: Iterable[tuple[K, K, float]]) -> list[Game[K]]:
    """The games of a plain round from its pairs ``(a, b, water a won from b)``."""
    return [Game(a, b, pair_score(water)) for a, b, water in pairs]


def duplicate_games(pairs: Iterable[tuple[K, K, float, float]]) -> list[Game[K]]:
    """The games of a duplicate deal from its pairs ``(a, b, water a won from b, par)``, where
    par is the mean water between the same two positions over every table of the deal: each
    judged on water − par, and weighted ``DUPLICATE_WEIGHT``."""
    return [
        Game(a, b, pair_score(water - par, DUPLICATE_WATER_FOR_FULL_SCORE), DUPLICATE_WEIGHT)
        for a, b, water, par in pairs
    ]


def pair_pars(
    tables: Sequence[Mapping[tuple[int, int], float]],
) -> dict[tuple[int, int], float]:
    """The par of every pair of positions of a duplicate deal: the mean over ``tables`` (each
    the water by ``(position a, position b)``) of the water between them. A pair missing at a
    table (a seat left empty) is averaged over the tables that have it."""
    sums: dict[tuple[int, int], float] = {}
    counts: dict[tuple[int, int], int] = {}
    for table in tables:
        for (a, b), water in table.items():
            key, sign = ((a, b), 1.0) if a < b else ((b, a), -1.0)
            sums[key] = sums.get(key, 0.0) + sign * water
            counts[key] = counts.get(key, 0) + 1
    pars: dict[tuple[int, int], float] = {}
    for (a, b), total in sums.items():
        pars[(a, b)] = total / counts[(a, b)]
        pars[(b, a)] = -pars[(a, b)]
    return pars


def rate_round(ratings: Mapping[K, Rating], games: Sequence[Game[K]]) -> dict[K, Rating]:
    """Every player's rating after one rating period made of ``games``, each updated from the
    ratings all had before it (players missing from ``ratings`` start new). Only the players
    of the games are returned."""
    before = {k: ratings.get(k, Rating()) for g in games for k in (g.a, g.b)}
    faced: dict[K, list[tuple[float, float, float]]] = {k: [] for k in before}
    for game in games:
        if not 0.0 <= game.score <= 1.0 or game.weight < 1:
            raise ValueError(f"a game's score is in [0, 1] and its weight at least 1: {game}")
        a, b = before[game.a], before[game.b]
        faced[game.a] += [_internal(b, game.score)] * game.weight
        faced[game.b] += [_internal(a, 1.0 - game.score)] * game.weight
    after: dict[K, Rating] = {}
    for k, old in before.items():
        new = update_rating(
            rating_to_mu(old.rating), rd_to_phi(old.deviation), old.volatility, faced[k], TAU
        )
        after[k] = Rating(mu_to_rating(new.mu), phi_to_rd(new.phi), new.sigma)
    return after


def _internal(opponent: Rating, score: float) -> tuple[float, float, float]:
    return rating_to_mu(opponent.rating), rd_to_phi(opponent.deviation), score


def glicko2_update(
    player: Rating, opponents: Sequence[tuple[float, float, float]], *, tau: float = TAU
) -> Rating:
    """The library's update of ``player`` after games against ``opponents`` (each ``(rating,
    deviation, score)`` on the Glicko scale) — the plain Glicko-2 step, as in Glickman's
    example."""
    new = update_rating(
        rating_to_mu(player.rating),
        rd_to_phi(player.deviation),
        player.volatility,
        [(rating_to_mu(r), rd_to_phi(d), s) for r, d, s in opponents],
        tau,
    )
    return Rating(mu_to_rating(new.mu), phi_to_rd(new.phi), new.sigma)

"""Skill in the lobby: a player's rating, how close two ratings must be to seat the players
together, and the bot level that plays closest to a rating.

Matchmaking reads ratings only through `skill_of` and `skill_family` (the ratings themselves
are kept by games.history.rating), so the tests can give anyone a rating by patching one place.
"""

from __future__ import annotations

from collections.abc import Iterable

from games.history.rating import player_rating, rating_family
from games.models import RuleConfiguration
from games.rules.rating import BOT_LEVEL_RATING as MEASURED_BOT_LEVEL_RATING
from lobby.checks import engine_config
from lobby.models import BotLevel

# An unrated player: Glicko's starting rating and deviation.
UNRATED = (1500.0, 350.0)

# The rating each bot level plays at (games.rules.rating, measured by
# benchmarks/rating_simulation.py; expert measured no stronger than strong).
BOT_LEVEL_RATING: dict[str, float] = {
    BotLevel(level): rating for level, rating in MEASURED_BOT_LEVEL_RATING.items()
}

# Two waiting players are seated together when their ratings differ by at most
# max(MATCH_MIN_GAP, MATCH_DEVIATIONS x the larger deviation), plus MATCH_WIDEN_PER_SECOND for
# every second the longer waiting of them has waited: the longer the wait, the wider the match.
MATCH_MIN_GAP = 200.0
MATCH_DEVIATIONS = 2.0
MATCH_WIDEN_PER_SECOND = 50.0


def skill_family(rules: RuleConfiguration) -> str:
    """The rating family (one rating per family) of a table with these rules."""
    return rating_family(engine_config(rules), preset=rules.preset or "")


def skill_of(user_id: int, family: str) -> tuple[float, float]:
    """The player's (rating, deviation) in the family; UNRATED for a player not rated yet."""
    return player_rating(user_id, family) or UNRATED


def match_gap(*, deviations: Iterable[float], waited: float) -> float:
    """How far apart two ratings may be to seat their players together, given both deviations
    and the longer wait of the two (seconds)."""
    return max(MATCH_MIN_GAP, MATCH_DEVIATIONS * max(deviations)) + (
        MATCH_WIDEN_PER_SECOND * max(0.0, waited)
    )


def bot_level_for(ratings: Iterable[float]) -> str:
    """The bot level whose rating is closest to the mean of these ratings (the people at a
    table); the weaker level on a tie, and the default level (strong) for nobody."""
    values = list(ratings)
    if not values:
        return BotLevel.STRONG
    mean = sum(values) / len(values)
    return min(BOT_LEVEL_RATING, key=lambda level: abs(BOT_LEVEL_RATING[level] - mean))

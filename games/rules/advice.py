"""Advice on a special hand (RULES.md §5.1): declare it, or arrange the 13 cards normally?

A declared special wins its water from each opponent (§7.3) — unless an opponent declares a
higher special, which is rare — and takes no part in guns or home runs. Arranged normally, the
same cards are worth the best arrangement's expected water against the same opponents
(:func:`games.rules.arrange.arrange`, the model behind the suggestions and auto-arrange, §6),
guns and home runs included. The advice compares the two for this configuration and this
round's number of opponents, and recommends the larger (the special on a tie: it is certain).

The bots follow the advice (``games.live.bots``); the table shows it in the special hand's dialog.
Deterministic for the same cards, configuration, special and opponents.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from .arrange import Suggestion, arrange
from .cards import Card
from .config import RuleConfig

Choice = Literal["special", "arrange"]


@dataclass(frozen=True, slots=True)
class SpecialAdvice:
    special: str
    opponents: int
    special_water: int  # the special's water from each opponent, times the opponents
    arrange_water: float  # the best arrangement's expected water against them
    best: Suggestion  # that arrangement

    @property
    def recommend(self) -> Choice:
        return "special" if self.special_water >= self.arrange_water else "arrange"

    def to_json(self) -> dict[str, Any]:
        """The advice as the table sends it (expected water to two decimals)."""
        return {
            "special": self.special,
            "opponents": self.opponents,
            "special_water": self.special_water,
            "arrange_water": round(self.arrange_water, 2),
            "recommend": self.recommend,
        }


def special_advice(
    cards: Sequence[Card], config: RuleConfig, special: str, opponents: int
) -> SpecialAdvice:
    """The advice for a hand (13 cards, or 16 with spare cards) that makes ``special``, at a
    table where it meets ``opponents`` (1 to 5) other players."""
    if not 1 <= opponents <= 5:
        raise ValueError(f"opponents must be 1 to 5, got {opponents}")
    return _advice(tuple(cards), config, special, opponents)


@lru_cache(maxsize=64)
def _advice(
    cards: tuple[Card, ...], config: RuleConfig, special: str, opponents: int
) -> SpecialAdvice:
    water = config.special(special).water
    best = arrange(cards, config, limit=1, opponents=opponents).best
    return SpecialAdvice(special, opponents, water * opponents, best.expected_water, best)

"""The engine's arrangement suggestions for one hand, as JSON (RULES.md §6).

Deterministic for the same cards and configuration, so they are not stored: the deal sends
them in the seat's private ``hand`` event and a snapshot recomputes them (cached).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache

from games.rules.arrange import Suggestion, arrange
from games.rules.cards import Card, format_cards
from games.rules.config import RuleConfig

from .state import Json


def suggestions(cards: Sequence[Card], config: RuleConfig) -> list[Json]:
    """At most 10 foul-free suggestions, best first (the shape of the engine's ``arrange``)."""
    return [
        {
            "front": format_cards(s.front),
            "middle": format_cards(s.middle),
            "back": format_cards(s.back),
            "categories": [c.id for c in s.categories],
            "expected_water": s.expected_water,
        }
        for s in _suggestions(tuple(cards), config)
    ]


@lru_cache(maxsize=256)
def _suggestions(cards: tuple[Card, ...], config: RuleConfig) -> tuple[Suggestion, ...]:
    return arrange(cards, config).suggestions

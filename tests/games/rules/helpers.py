"""Shorthands for writing hands in tests: ``c("AS KD 4C")``."""

from __future__ import annotations

from games.rules.cards import Card, parse_cards
from games.rules.hands import RowHand, evaluate
from games.rules.scoring import Arranged


def c(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def ev(text: str, a2345: str = "lowest") -> RowHand:
    return evaluate(c(text), a2345)


def arr(front: str, middle: str, back: str) -> Arranged:
    return Arranged(c(front), c(middle), c(back))

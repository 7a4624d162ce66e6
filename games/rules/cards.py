"""Cards and their text form (RULES.md §1).

A card is a frozen value; its canonical text is rank then suit (``"AS"``, ``"TD"``). Parsing
accepts any case and ``10`` for ``T``. Every card also has an index 0..51
(``(rank - 2) * 4 + suit``) used by the vectorised code paths.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum

from .errors import BadInputError, DuplicateCardError, InvalidCardError, WrongCountError


class Rank(IntEnum):
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    TEN = 10
    JACK = 11
    QUEEN = 12
    KING = 13
    ACE = 14

    @property
    def symbol(self) -> str:
        return RANK_SYMBOLS[self.value - 2]


class Suit(IntEnum):
    """Suits in display order ♠ ♥ ♣ ♦ (RULES.md §1); suits never break ties."""

    SPADES = 0
    HEARTS = 1
    CLUBS = 2
    DIAMONDS = 3

    @property
    def symbol(self) -> str:
        return SUIT_SYMBOLS[self.value]

    @property
    def is_red(self) -> bool:
        return self in (Suit.HEARTS, Suit.DIAMONDS)


RANK_SYMBOLS = "23456789TJQKA"
SUIT_SYMBOLS = "SHCD"


@dataclass(frozen=True, slots=True)
class Card:
    rank: Rank
    suit: Suit
    index: int = field(init=False, compare=False, repr=False)  # (rank - 2) * 4 + suit

    def __post_init__(self) -> None:
        object.__setattr__(self, "index", (int(self.rank) - 2) * 4 + int(self.suit))

    def __str__(self) -> str:
        return self.rank.symbol + self.suit.symbol

    def __repr__(self) -> str:
        return f"Card({self})"

    @staticmethod
    def from_index(index: int) -> Card:
        return DECK[index]


DECK: tuple[Card, ...] = tuple(Card(Rank(r), Suit(s)) for r in range(2, 15) for s in range(4))
_BY_TEXT: dict[str, Card] = {str(c): c for c in DECK}


def parse_card(text: object) -> Card:
    """Parse one card; raise :class:`InvalidCardError` with the offending text otherwise."""
    if not isinstance(text, str):
        raise InvalidCardError(f"card must be a string like 'AS', got {text!r}")
    norm = text.strip().upper()
    if norm.startswith("10"):
        norm = "T" + norm[2:]
    card = _BY_TEXT.get(norm)
    if card is None:
        raise InvalidCardError(
            f"not a card: {text!r} (expected rank 2-9/T/J/Q/K/A then suit S/H/C/D)"
        )
    return card


def parse_cards(items: object, *, count: int | None = None, what: str = "hand") -> tuple[Card, ...]:
    """Parse a list of distinct cards, optionally of an exact size."""
    if not isinstance(items, list | tuple):
        raise BadInputError(f"{what} must be a list of cards, got {type(items).__name__}")
    cards = tuple(parse_card(item) for item in items)
    if count is not None and len(cards) != count:
        raise WrongCountError(f"{what} must have {count} cards, got {len(cards)}")
    ensure_distinct(cards)
    return cards


def ensure_distinct(cards: Iterable[Card]) -> None:
    seen: set[Card] = set()
    for card in cards:
        if card in seen:
            raise DuplicateCardError(f"card {card} appears twice")
        seen.add(card)


def format_cards(cards: Iterable[Card]) -> list[str]:
    return [str(c) for c in cards]


def sort_cards(cards: Iterable[Card]) -> tuple[Card, ...]:
    """Canonical order: rank high to low, then suit in display order."""
    return tuple(sorted(cards, key=lambda c: (-c.rank, c.suit)))

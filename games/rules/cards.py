"""Cards and their text form (RULES.md §1, §12.1–12.2).

A card is a frozen value; its canonical text is rank then suit (``"AS"``, ``"TD"``). Parsing
accepts any case and ``10`` for ``T``. Every card also has an index used by the vectorised
code paths: ``(rank - 2) * 4 + suit`` (0..51) for the 52 standard cards, 52..64 and 65..77 for
the second and third diamonds of the extra suits (``7D2``, ``7D3``; ``copy`` 2 or 3), 78 for the
red joker ``RJ`` and 79 for the black joker ``BJ``. A copy is a diamond for every rule; a
joker's ``rank`` and ``suit`` are placeholders that no rule reads (``is_joker`` is checked
first). Which of these cards a game uses is its :class:`Deck` (from the configuration).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


RED_JOKER_INDEX = 78
BLACK_JOKER_INDEX = 79
N_INDICES = 80
JOKER_COPY = 0


@dataclass(frozen=True, slots=True)
class Card:
    """A card. ``copy`` is 1 for the standard cards, 2 or 3 for the extra diamonds (§12.1)
    and 0 for a joker (then ``suit`` HEARTS is the red joker, SPADES the black one)."""

    rank: Rank
    suit: Suit
    copy: int = 1
    index: int = field(init=False, compare=False, repr=False)
    # "AS", "TD2", "RJ": computed once (cards are written out on every table command).
    text: str = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        if self.copy == JOKER_COPY:
            index = RED_JOKER_INDEX if self.suit.is_red else BLACK_JOKER_INDEX
            text = "RJ" if self.suit.is_red else "BJ"
        elif self.copy == 1:
            index = (int(self.rank) - 2) * 4 + int(self.suit)
            text = self.rank.symbol + self.suit.symbol
        else:
            index = 52 + 13 * (self.copy - 2) + int(self.rank) - 2
            text = f"{self.rank.symbol}{self.suit.symbol}{self.copy}"
        object.__setattr__(self, "index", index)
        object.__setattr__(self, "text", text)

    @property
    def is_joker(self) -> bool:
        return self.copy == JOKER_COPY

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return f"Card({self})"

    @staticmethod
    def from_index(index: int) -> Card:
        return ALL_CARDS[index]


DECK: tuple[Card, ...] = tuple(Card(Rank(r), Suit(s)) for r in range(2, 15) for s in range(4))
RED_JOKER = Card(Rank.TWO, Suit.HEARTS, JOKER_COPY)
BLACK_JOKER = Card(Rank.TWO, Suit.SPADES, JOKER_COPY)
# Every card of every deck, by index.
ALL_CARDS: tuple[Card, ...] = (
    DECK
    + tuple(Card(Rank(r), Suit.DIAMONDS, copy) for copy in (2, 3) for r in range(2, 15))
    + (RED_JOKER, BLACK_JOKER)
)
assert [c.index for c in ALL_CARDS] == list(range(N_INDICES))
# Every card by its canonical text (``str(card)``), exactly: no normalising, unlike parse_card.
CARD_BY_TEXT: Mapping[str, Card] = {str(c): c for c in ALL_CARDS}


@dataclass(frozen=True, slots=True)
class Deck:
    """The cards of one configuration (RULES.md §12): 52 + 13 per extra suit + jokers."""

    extra_suits: int = 0
    jokers: int = 0

    @property
    def cards(self) -> tuple[Card, ...]:
        return _deck_cards(self.extra_suits, self.jokers)

    @property
    def size(self) -> int:
        return 52 + 13 * self.extra_suits + self.jokers

    def __contains__(self, card: object) -> bool:
        if not isinstance(card, Card):
            return False
        if card.is_joker:
            return self.jokers > 0
        return card.copy <= 1 + self.extra_suits

    @property
    def is_classic(self) -> bool:
        return self.extra_suits == 0 and self.jokers == 0

    def describe(self) -> str:
        parts = ["52 cards"]
        if self.extra_suits:
            parts.append(f"{self.extra_suits} extra diamond suit(s)")
        if self.jokers:
            parts.append("jokers RJ and BJ")
        return ", ".join(parts)


def _deck_cards(extra_suits: int, jokers: int) -> tuple[Card, ...]:
    extra = ALL_CARDS[52 : 52 + 13 * extra_suits]
    return DECK + extra + (ALL_CARDS[78:80] if jokers else ())


CLASSIC_DECK = Deck()
# Holds every card of every configuration: reads card text whatever the deck in force.
ANY_DECK = Deck(extra_suits=2, jokers=2)


def parse_card(text: object, deck: Deck = CLASSIC_DECK) -> Card:
    """Parse one card of ``deck``; raise :class:`InvalidCardError` with the offending text."""
    if not isinstance(text, str):
        raise InvalidCardError(f"card must be a string like 'AS', got {text!r}")
    norm = text.strip().upper()
    if norm.startswith("10"):
        norm = "T" + norm[2:]
    card = CARD_BY_TEXT.get(norm)
    if card is None:
        raise InvalidCardError(
            f"not a card: {text!r} (expected rank 2-9/T/J/Q/K/A then suit S/H/C/D)"
        )
    if card not in deck:
        raise InvalidCardError(f"card {text!r} is not in this deck ({deck.describe()})")
    return card


def parse_cards(
    items: object,
    *,
    count: int | None = None,
    what: str = "hand",
    deck: Deck = CLASSIC_DECK,
) -> tuple[Card, ...]:
    """Parse a list of distinct cards of ``deck``, optionally of an exact size."""
    if not isinstance(items, list | tuple):
        raise BadInputError(f"{what} must be a list of cards, got {type(items).__name__}")
    cards = tuple(parse_card(item, deck) for item in items)
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
    return [c.text for c in cards]


def sort_cards(cards: Iterable[Card]) -> tuple[Card, ...]:
    """Canonical order: jokers first (red, black), then rank high to low, then suit in display
    order, then copy."""
    return tuple(sorted(cards, key=sort_key))


def sort_key(card: Card) -> tuple[int, int, int, int]:
    if card.is_joker:
        return (0, 0, card.index, 0)
    return (1, -card.rank, card.suit, card.copy)

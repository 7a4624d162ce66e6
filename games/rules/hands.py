"""Row hands: evaluation, comparison and the foul check (RULES.md §3, §4).

Every row hand gets an integer *key* (:class:`RowHand`); a higher key is a stronger hand and
equal keys tie. The encoding is shared with the vectorised evaluator
(:mod:`games.rules.vectorized`) so both paths agree to the bit.

Variant decks (RULES.md §12): five equal ranks are ``five_of_a_kind`` (above straight flush);
a flush may hold equal cards (§12.3); a row holding jokers is evaluated as its strongest
completion (§12.2), and ``RowHand.jokers`` says what each joker stands for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from enum import IntEnum
from itertools import combinations_with_replacement

from .cards import Card, Rank, Suit, sort_key
from .errors import FoulError, WrongCountError


class Category(IntEnum):
    """Row categories on the one scale of RULES.md §3.3 (a front row: 0, 1 or 3)."""

    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    TRIPS = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    QUADS = 7
    STRAIGHT_FLUSH = 8
    FIVE_OF_A_KIND = 9  # only with the variant decks (RULES.md §12.3)

    @property
    def id(self) -> str:
        return self.name.lower()

    @property
    def zh(self) -> str:
        return CATEGORY_ZH[self]

    @staticmethod
    def from_id(text: str) -> Category:
        return Category[text.upper()]


CATEGORY_ZH = {
    Category.HIGH_CARD: "乌龙",
    Category.PAIR: "对子",
    Category.TWO_PAIR: "两对",
    Category.TRIPS: "三条",
    Category.STRAIGHT: "顺子",
    Category.FLUSH: "同花",
    Category.FULL_HOUSE: "葫芦",
    Category.QUADS: "铁支",
    Category.STRAIGHT_FLUSH: "同花顺",
    Category.FIVE_OF_A_KIND: "五同",
}

B = 32
# A straight's strength is twice its top rank; A2345's is 10 with ``a2345 = lowest`` (below
# 23456's 12) and 27 with ``second`` (between 9TJQK's 26 and TJQKA's 28).
WHEEL_STRENGTH = {"lowest": 10, "second": 27}
ROWS = ("front", "middle", "back")
ROW_SIZES = {"front": 3, "middle": 5, "back": 5}


@dataclass(frozen=True, slots=True)
class RowHand:
    """An evaluated row: category, tie-break digits and the comparison keys.

    * ``digits``: the ranks ordered by (count, rank) descending, duplicates kept (full house
      ``33355`` → 3,3,3,5,5); a straight's digits are its strength alone
      (:data:`WHEEL_STRENGTH`); a flush's are its ranks high to low, repeats included (§12.3).
    * ``key`` of a 5-card row: ``category * 32**5 + sum(d_i * 32**(4-i))``.
    * ``key`` of a 3-card row, and ``cross`` of either size: ``category * 32**3`` plus the
      first three digits (none for a 5-card category a front row cannot have). Comparing a
      front row with a middle row (§3.3) compares cross keys: category first, then only the
      ranks the 3-card row has (trip rank; pair rank and one kicker; three high cards).
    """

    size: int
    category: Category
    digits: tuple[int, ...]
    key: int
    cross: int
    # (joker, the standard card it stands for), in the row's order; empty without jokers.
    jokers: tuple[tuple[Card, Card], ...] = ()

    def compare(self, other: RowHand) -> int:
        """1, 0 or -1: same-size rows by key, a 3-card against a 5-card row by §3.3."""
        if self.size == other.size:
            a, b = self.key, other.key
        else:
            a, b = self.cross, other.cross
        return (a > b) - (a < b)


def _pack(category: int, digits: Sequence[int], width: int) -> int:
    value = category
    for i in range(width):
        value = value * B + (digits[i] if i < len(digits) else 0)
    return value


# Rank and suit of every card index (a copy is a diamond; a joker has rank 0).
_RANK = [i // 4 + 2 for i in range(52)] + [(i - 52) % 13 + 2 for i in range(52, 78)] + [0, 0]
_SUIT = [i % 4 for i in range(52)] + [3] * 26 + [-1, -2]


def evaluate(cards: Sequence[Card], a2345: str = "lowest") -> RowHand:
    """Evaluate a 3- or 5-card row (jokers completed to the strongest row, RULES.md §12.2)."""
    n = len(cards)
    if n not in (3, 5):
        raise WrongCountError(f"a row has 3 or 5 cards, got {n}")
    ranks = [_RANK[c.index] for c in cards]
    if 0 in ranks:
        # The red joker first (cards.sort_key): it takes the higher of two values, whatever
        # the order the row's cards were placed in.
        return _evaluate_wild(cards, sorted((c for c in cards if c.is_joker), key=sort_key), a2345)
    return _evaluate(ranks, n == 5 and len({_SUIT[c.index] for c in cards}) == 1, a2345)


def evaluate_ranks(ranks: Sequence[int], suits: Sequence[int], a2345: str = "lowest") -> RowHand:
    """Evaluate a row given as ranks and suits (repeats allowed: copies, joker values)."""
    return _evaluate(list(ranks), len(set(suits)) == 1, a2345)


def _evaluate(ranks: list[int], flush: bool, a2345: str) -> RowHand:
    n = len(ranks)
    counts = Counter(ranks)
    digits = sorted(ranks, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    if n == 3:
        cat = {3: Category.TRIPS, 2: Category.PAIR}.get(shape[0], Category.HIGH_CARD)
        key = _pack(cat, digits, 3)
        return RowHand(3, cat, tuple(digits), key, key)
    strength = 0
    if shape[0] == 1:
        if digits[0] - digits[4] == 4:
            strength = 2 * digits[0]
        elif digits[0] == 14 and digits[1] == 5:
            strength = WHEEL_STRENGTH[a2345]
    if shape[0] == 5:
        cat = Category.FIVE_OF_A_KIND
    elif strength:
        cat = Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT
        digits = [strength]
    elif shape[0] == 4:
        cat = Category.QUADS
    elif shape[0] == 3 and shape[1] == 2:
        cat = Category.FULL_HOUSE
    elif flush:
        cat = Category.FLUSH
        digits = sorted(ranks, reverse=True)  # card by card, repeats included (§12.3)
    elif shape[0] == 3:
        cat = Category.TRIPS
    elif shape[0] == 2:
        cat = Category.TWO_PAIR if shape[1] == 2 else Category.PAIR
    else:
        cat = Category.HIGH_CARD
    front_like = cat in (Category.HIGH_CARD, Category.PAIR, Category.TRIPS)
    cross = _pack(cat, digits if front_like else (), 3)
    return RowHand(5, cat, tuple(digits), _pack(cat, digits, 5), cross)


def _evaluate_wild(cards: Sequence[Card], jokers: Sequence[Card], a2345: str) -> RowHand:
    """The strongest completion of a row holding jokers (RULES.md §12.2).

    Every rank is tried for each joker (ranks high to low, so among equally strong values the
    highest is reported); the jokers take the suit of the other cards when those share one
    (the only way a suit can help: a flush), else spades.
    """
    naturals = [c for c in cards if not c.is_joker]
    ranks = [int(c.rank) for c in naturals]
    suits = [int(c.suit) for c in naturals]
    suit = suits[0] if suits and len(set(suits)) == 1 else int(Suit.SPADES)
    best: RowHand | None = None
    best_values: tuple[int, ...] = ()
    for values in combinations_with_replacement(range(14, 1, -1), len(jokers)):
        hand = evaluate_ranks(ranks + list(values), suits + [suit] * len(values), a2345)
        if best is None or hand.key > best.key:
            best, best_values = hand, values
    assert best is not None
    stands = tuple(
        (joker, Card(Rank(value), Suit(suit)))
        for joker, value in zip(jokers, best_values, strict=True)
    )
    return RowHand(best.size, best.category, best.digits, best.key, best.cross, stands)


def compare(a: Sequence[Card], b: Sequence[Card], a2345: str = "lowest") -> int:
    """Compare two rows of 3 or 5 cards: 1 if a is higher, 0 if equal, -1 if lower."""
    return evaluate(a, a2345).compare(evaluate(b, a2345))


def foul_rows(front: RowHand, middle: RowHand, back: RowHand) -> tuple[str, ...]:
    """The rows that break back >= middle >= front, empty when the arrangement is valid."""
    bad: list[str] = []
    if middle.compare(back) > 0:
        bad += ["middle", "back"]
    if front.compare(middle) > 0:
        bad += [r for r in ("front", "middle") if r not in bad]
    return tuple(r for r in ROWS if r in bad)


def check_foul(front: RowHand, middle: RowHand, back: RowHand) -> None:
    """Raise :class:`FoulError` naming the offending rows (RULES.md §4)."""
    bad = foul_rows(front, middle, back)
    if not bad:
        return
    reasons = []
    if middle.compare(back) > 0:
        reasons.append(f"middle ({middle.category.id}) is higher than back ({back.category.id})")
    if front.compare(middle) > 0:
        reasons.append(f"front ({front.category.id}) is higher than middle ({middle.category.id})")
    raise FoulError("foul: " + "; ".join(reasons), rows=bad)

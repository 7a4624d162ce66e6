"""Thirteen-card special hands (RULES.md §5): which ones a hand makes, and which one counts.

Detection works on rank and suit counts only, so it costs microseconds. "Can be split" is
decided exactly: multiset partitions of the rank counts (a four-of-a-kind may serve as two
pairs, or as trips + 1), suit-count assignments for three flushes, and explicit windows for
the straight-based hands (the ace low or high, never wrapping). The split that *shows* a
special is found by :func:`games.rules.arrange.special_split`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

from .cards import Card
from .config import RuleConfig
from .wild import wild_detect, wild_makes, wild_qualifying

# Part decompositions of a rank count (how many cards of one rank can be used).
_DECOMPOSITIONS: dict[int, tuple[tuple[int, ...], ...]] = {
    1: ((1,),),
    2: ((2,), (1, 1)),
    3: ((3,), (2, 1), (1, 1, 1)),
    4: ((4,), (3, 1), (2, 2), (2, 1, 1), (1, 1, 1, 1)),
}


def _parts(n: int, largest: int = 4) -> tuple[tuple[int, ...], ...]:
    """Partitions of ``n`` into parts of at most 4 (a rank held 5+ times: copies, jokers)."""
    if n == 0:
        return ((),)
    return tuple((p, *rest) for p in range(min(n, largest), 0, -1) for rest in _parts(n - p, p))


for _n in range(5, 9):
    _DECOMPOSITIONS[_n] = _parts(_n)


@lru_cache(maxsize=4096)
def _partitionable(counts: tuple[int, ...], target: tuple[int, int, int, int]) -> bool:
    """Can the rank counts be split into exactly ``target`` = (#1s, #2s, #3s, #4s) groups?"""
    if not counts:
        return target == (0, 0, 0, 0)
    head, rest = counts[0], counts[1:]
    for parts in _DECOMPOSITIONS[head]:
        left = list(target)
        for p in parts:
            left[p - 1] -= 1
        if min(left) >= 0 and _partitionable(rest, (left[0], left[1], left[2], left[3])):
            return True
    return False


@dataclass(frozen=True, slots=True)
class HandShape:
    """Counts of a 13-card hand that every special test reads."""

    ranks: tuple[int, ...]  # sorted rank values
    rank_counts: dict[int, int]
    count_shape: tuple[int, ...]  # rank counts, sorted descending
    suit_counts: tuple[int, ...]  # per suit S,H,C,D
    by_suit: tuple[frozenset[int], ...]  # ranks held in each suit

    @staticmethod
    def of(cards: Sequence[Card]) -> HandShape:
        ranks: list[int] = []
        suits = [0, 0, 0, 0]
        by_suit: list[set[int]] = [set(), set(), set(), set()]
        for card in cards:
            rank, suit = (card.index >> 2) + 2, card.index & 3
            ranks.append(rank)
            suits[suit] += 1
            by_suit[suit].add(rank)
        ranks.sort()
        rc = Counter(ranks)
        return HandShape(
            tuple(ranks),
            dict(rc),
            tuple(sorted(rc.values(), reverse=True)),
            tuple(suits),
            tuple(frozenset(s) for s in by_suit),
        )

    def parts(self, ones: int = 0, twos: int = 0, threes: int = 0, fours: int = 0) -> bool:
        return _partitionable(self.count_shape, (ones, twos, threes, fours))


# Windows of consecutive ranks; 1 stands for the ace played low.
_WINDOWS5 = tuple(tuple(range(lo, lo + 5)) for lo in range(1, 11))
_WINDOWS3 = tuple(tuple(range(lo, lo + 3)) for lo in range(1, 13))


def _take(counts: dict[int, int], window: Sequence[int]) -> bool:
    """Remove one card of each rank in ``window`` (1 = ace); False if one is missing."""
    for r in window:
        r = 14 if r == 1 else r
        if counts.get(r, 0) == 0:
            return False
        counts[r] -= 1
    return True


def _three_runs(counts: dict[int, int]) -> bool:
    """Do these 13 rank counts split into a 3-run and two 5-runs (ace low or high)?"""
    present = [w for w in _WINDOWS5 if all(counts.get(14 if r == 1 else r, 0) for r in w)]
    for i, w1 in enumerate(present):
        for w2 in present[i:]:
            left = dict(counts)
            if not (_take(left, w1) and _take(left, w2)):
                continue
            rest = sorted(r for r, n in left.items() for _ in range(n))
            if len(set(rest)) == 3 and (rest[2] - rest[0] == 2 or rest == [2, 3, 14]):
                return True
    return False


@lru_cache(maxsize=8192)
def _three_straights(rank_counts: tuple[tuple[int, int], ...]) -> bool:
    return _three_runs(dict(rank_counts))


@lru_cache(maxsize=1024)
def _three_flushes(suit_counts: tuple[int, ...]) -> bool:
    """Can rows of 3, 5, 5 cards each be one suit? (assign each row a suit)"""
    for assignment in product(range(4), repeat=3):
        used = [0, 0, 0, 0]
        for size, suit in zip((3, 5, 5), assignment, strict=True):
            used[suit] += size
        if tuple(used) == tuple(suit_counts):
            return True
    return False


def _three_straight_flushes(shape: HandShape) -> bool:
    if not _three_flushes(shape.suit_counts):
        return False
    cards = [(r, s) for s, ranks in enumerate(shape.by_suit) for r in ranks]
    runs = [
        frozenset((14 if r == 1 else r, s) for r in w)
        for s in range(4)
        for w in _WINDOWS5
        if all((14 if r == 1 else r) in shape.by_suit[s] for r in w)
    ]
    for i, a in enumerate(runs):
        for b in runs[i + 1 :]:
            if a & b:
                continue
            rest = [c for c in cards if c not in a and c not in b]
            if len({s for _, s in rest}) != 1:
                continue
            ranks = sorted(r for r, _ in rest)
            if ranks[2] - ranks[0] == 2 or ranks == [2, 3, 14]:
                return True
    return False


def _one_color(shape: HandShape) -> bool:
    s, h, c, d = shape.suit_counts
    return s + c == 13 or h + d == 13


PREDICATES: dict[str, Callable[[HandShape], bool]] = {
    "supreme_dragon": lambda h: len(h.rank_counts) == 13 and max(h.suit_counts) == 13,
    "dragon": lambda h: len(h.rank_counts) == 13 and max(h.suit_counts) < 13,
    "twelve_royals": lambda h: h.ranks[0] >= 11,
    "three_straight_flushes": _three_straight_flushes,
    "three_quads": lambda h: h.parts(ones=1, fours=3),
    "all_big": lambda h: h.ranks[0] >= 8,
    "all_small": lambda h: h.ranks[-1] <= 8,
    "one_color": _one_color,
    "trips_and_bomb": lambda h: h.parts(threes=3, fours=1),
    "double_monster": lambda h: h.parts(ones=1, twos=3, threes=2),
    "four_trips": lambda h: h.parts(ones=1, threes=4),
    "five_pairs_trips": lambda h: h.parts(twos=5, threes=1),
    "six_pairs": lambda h: h.parts(ones=1, twos=6),
    "three_straights": lambda h: _three_straights(tuple(sorted(h.rank_counts.items()))),
    "three_flushes": lambda h: _three_flushes(h.suit_counts),
}

# Specials defined by a split into rows: their display split is searched for (foul-free first).
SPLIT_SPECIALS = frozenset(
    {"three_straight_flushes", "three_straights", "three_flushes", "double_monster"}
)


def _classic(cards: Sequence[Card]) -> bool:
    """13 standard cards: the classic predicates apply (else :mod:`.wild`, RULES.md §12)."""
    return len(cards) == 13 and all(c.index < 52 for c in cards)


def qualifying_specials(cards: Sequence[Card]) -> frozenset[str]:
    """Every special hand (enabled or not) that these cards make: 13 cards, or 16 with spare
    cards (some 13 make it); jokers take whatever values make it (RULES.md §12.2, §12.4)."""
    if not _classic(cards):
        return wild_qualifying(cards)
    shape = HandShape.of(cards)
    return frozenset(sid for sid, test in PREDICATES.items() if test(shape))


def makes_special(cards: Sequence[Card], special_id: str) -> bool:
    if not _classic(cards):
        return wild_makes(cards, special_id)
    return PREDICATES[special_id](HandShape.of(cards))


def detect_special(cards: Sequence[Card], config: RuleConfig) -> str | None:
    """The highest-ranked enabled special these cards make, or None (RULES.md §5, §12)."""
    if not _classic(cards):
        return wild_detect(cards, _enabled_ids(config))
    shape = HandShape.of(cards)
    for special_id in _enabled_ids(config):
        if PREDICATES[special_id](shape):
            return special_id
    return None


@lru_cache(maxsize=64)
def _enabled_ids(config: RuleConfig) -> tuple[str, ...]:
    return tuple(rule.id for rule in config.enabled_specials)

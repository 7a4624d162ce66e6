"""Special hands with jokers and with spare cards (RULES.md §12.2, §12.4): "some values of the
jokers make it", "some 13 of the 16 cards make it".

Everything is decided on counts (:class:`WildShape`), exactly, without trying joker values or
13-card subsets one by one: a special is made when some of the natural cards fit its pattern
and the jokers fill the rest (:data:`PREDICATES`). The classic 13-card hand is the case of no
jokers and no card left out, and these answers equal the classic predicates there (a test
checks every special on random hands).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import numpy as np

from .cards import Card

# (ones, twos, threes, fours) of the group specials, before adding the cards left out.
GROUPS: dict[str, tuple[int, int, int, int]] = {
    "three_quads": (1, 0, 0, 3),
    "trips_and_bomb": (0, 0, 3, 1),
    "double_monster": (1, 3, 2, 0),
    "four_trips": (1, 0, 4, 0),
    "five_pairs_trips": (0, 5, 1, 0),
    "six_pairs": (1, 6, 0, 0),
}


@lru_cache(maxsize=32)
def _part_options(count: int) -> tuple[tuple[int, int, int, int, int], ...]:
    """Ways ``count`` cards of one rank fill groups: (#1, #2, #3, #4 groups, jokers used).

    The cards are cut into parts of at most 4; a part of ``p`` cards goes into a group of
    size ``g >= p`` that takes ``g - p`` jokers. At most 2 jokers are ever used."""
    out: set[tuple[int, int, int, int, int]] = set()

    def go(left: int, largest: int, acc: tuple[int, int, int, int, int]) -> None:
        if left == 0:
            out.add(acc)
            return
        for p in range(min(left, largest, 4), 0, -1):
            for g in range(p, 5):
                j = acc[4] + g - p
                if j > 2:
                    continue
                groups = list(acc[:4])
                groups[g - 1] += 1
                go(left - p, p, (groups[0], groups[1], groups[2], groups[3], j))

    go(count, 4, (0, 0, 0, 0, 0))
    return tuple(sorted(out))


@lru_cache(maxsize=65536)
def partitionable(counts: tuple[int, ...], target: tuple[int, int, int, int], jokers: int) -> bool:
    """Can rank counts plus ``jokers`` be cut into exactly ``target`` groups of 1, 2, 3, 4?"""
    if any(t < 0 for t in target):
        return False
    if not counts:
        need = target[0] + 2 * target[1] + 3 * target[2] + 4 * target[3]
        return need == jokers
    head, rest = counts[0], counts[1:]
    for n1, n2, n3, n4, used in _part_options(head):
        if used > jokers:
            continue
        left = (target[0] - n1, target[1] - n2, target[2] - n3, target[3] - n4)
        if partitionable(rest, left, jokers - used):
            return True
    return False


# Runs of ranks; 1 stands for the ace played low (column 12 is the ace either way).
def _run_vector(lo: int, length: int) -> np.ndarray:
    v = np.zeros(13, dtype=np.int64)
    for r in range(lo, lo + length):
        v[(14 if r == 1 else r) - 2] += 1
    return v


_RUN3 = np.array([_run_vector(lo, 3) for lo in range(1, 13)])  # 12 windows
_RUN5 = np.array([_run_vector(lo, 5) for lo in range(1, 11)])  # 10 windows
_PAIRS5 = [(a, b) for a in range(10) for b in range(a, 10)]
# Every (3-run, 5-run, 5-run): the rank counts the three rows need.
THREE_RUNS: np.ndarray = np.array(
    [_RUN3[f] + _RUN5[a] + _RUN5[b] for f in range(12) for a, b in _PAIRS5]
)
_RUN_TRIPLES = [(f, a, b) for f in range(12) for a, b in _PAIRS5]


@dataclass(frozen=True, slots=True)
class WildShape:
    """The counts a hand's specials are read from: its natural cards (a copy counts as a
    diamond), its ``jokers`` and the number of cards to leave out, ``drop`` (3 with spare
    cards, else 0)."""

    rank_counts: np.ndarray  # (13,) natural cards per rank 2..A
    suit_rank: np.ndarray  # (4, 13) natural cards per suit and rank (copies are diamonds)
    jokers: int
    drop: int

    @property
    def keep(self) -> int:
        """Natural cards among the 13 played: keeping a joker is never worse than keeping a
        natural card (the joker can take that card's value), so the 13 played hold every
        joker."""
        return 13 - self.jokers

    @staticmethod
    def of(cards: Sequence[Card]) -> WildShape:
        suit_rank = np.zeros((4, 13), dtype=np.int64)
        jokers = 0
        for card in cards:
            if card.is_joker:
                jokers += 1
            else:
                suit_rank[int(card.suit), int(card.rank) - 2] += 1
        return WildShape(suit_rank.sum(axis=0), suit_rank, jokers, len(cards) - 13)

    def groups(self, special: str) -> bool:
        ones, twos, threes, fours = GROUPS[special]
        counts = tuple(sorted((int(c) for c in self.rank_counts if c), reverse=True))
        return partitionable(counts, (ones + self.drop, twos, threes, fours), self.jokers)


def _supreme_dragon(h: WildShape) -> bool:
    return bool(((h.suit_rank > 0).sum(axis=1) >= h.keep).any())


def _dragon(h: WildShape) -> bool:
    if int((h.rank_counts > 0).sum()) < h.keep:
        return False
    if h.jokers:
        return True  # a joker takes a missing rank in another suit
    # One card of each rank, not all of one suit: impossible only when every rank is held in
    # one and the same suit alone.
    suits_held = h.suit_rank > 0
    return not any(
        suits_held[s].all() and not np.delete(suits_held, s, axis=0).any() for s in range(4)
    )


_ASSIGNS = list(product(range(4), repeat=3))  # suits of (front, middle, back)
_ASSIGN_NEED = np.zeros((64, 4), dtype=np.int64)
for _i, _assign in enumerate(_ASSIGNS):
    for _size, _suit in zip((3, 5, 5), _assign, strict=True):
        _ASSIGN_NEED[_i, _suit] += _size


def _three_flush_assignments(h: WildShape) -> np.ndarray:
    """Indices into ``_ASSIGNS`` of the suits whose rows the natural cards can fill."""
    per_suit = h.suit_rank.sum(axis=1)
    covered = np.minimum(_ASSIGN_NEED, per_suit[None, :]).sum(axis=1)
    return np.flatnonzero(covered >= h.keep)


def _three_straights(h: WildShape) -> bool:
    covered = np.minimum(THREE_RUNS, h.rank_counts[None, :]).sum(axis=1)
    return bool(covered.max() >= h.keep)


@lru_cache(maxsize=64)
def _straight_flush_needs(assign: int) -> np.ndarray:
    """(660, 52): the suit-and-rank counts of every choice of runs in these three suits."""
    s3, sa, sb = _ASSIGNS[assign]
    need = np.zeros((len(_RUN_TRIPLES), 4, 13), dtype=np.int64)
    f, a, b = (np.array(x) for x in zip(*_RUN_TRIPLES, strict=True))
    need[:, s3] += _RUN3[f]
    need[:, sa] += _RUN5[a]
    need[:, sb] += _RUN5[b]
    return need.reshape(len(_RUN_TRIPLES), 52)


def _three_straight_flushes(h: WildShape) -> bool:
    assigns = _three_flush_assignments(h)
    if not len(assigns) or not _three_straights(h):
        return False
    flat = h.suit_rank.reshape(52)
    return any(
        int(np.minimum(_straight_flush_needs(int(i)), flat).sum(axis=1).max()) >= h.keep
        for i in assigns
    )


def _count(h: WildShape, lo: int, hi: int) -> int:
    return int(h.rank_counts[lo - 2 : hi - 1].sum())


def _one_color(h: WildShape) -> bool:
    per_suit = h.suit_rank.sum(axis=1)
    return int(per_suit[0] + per_suit[2]) >= h.keep or int(per_suit[1] + per_suit[3]) >= h.keep


# Each special's test on a shape, made when some ``keep`` natural cards fit its pattern:
# - one-suit, one-colour and rank-range specials: enough natural cards of the kind;
# - row patterns (three straights, three flushes, three straight flushes): some choice of the
#   three runs or suits covers ``keep`` natural cards;
# - group patterns (pairs, trips, quads): a partition of the cards into the groups plus
#   ``drop`` cards left out, where a joker may complete any group (:func:`partitionable`,
#   dynamic programming on rank counts).
PREDICATES: dict[str, Callable[[WildShape], bool]] = {
    "supreme_dragon": _supreme_dragon,
    "dragon": _dragon,
    "twelve_royals": lambda h: _count(h, 11, 14) >= h.keep,
    "three_straight_flushes": _three_straight_flushes,
    "three_quads": lambda h: h.groups("three_quads"),
    "all_big": lambda h: _count(h, 8, 14) >= h.keep,
    "all_small": lambda h: _count(h, 2, 8) >= h.keep,
    "one_color": _one_color,
    "trips_and_bomb": lambda h: h.groups("trips_and_bomb"),
    "double_monster": lambda h: h.groups("double_monster"),
    "four_trips": lambda h: h.groups("four_trips"),
    "five_pairs_trips": lambda h: h.groups("five_pairs_trips"),
    "six_pairs": lambda h: h.groups("six_pairs"),
    "three_straights": _three_straights,
    "three_flushes": lambda h: len(_three_flush_assignments(h)) > 0,
}


def wild_qualifying(cards: Sequence[Card]) -> frozenset[str]:
    """Every special (enabled or not) that some joker values / some 13 of these cards make."""
    shape = WildShape.of(cards)
    return frozenset(sid for sid, test in PREDICATES.items() if test(shape))


def wild_makes(cards: Sequence[Card], special: str) -> bool:
    return PREDICATES[special](WildShape.of(cards))


def wild_detect(cards: Sequence[Card], enabled: Sequence[str]) -> str | None:
    shape = WildShape.of(cards)
    for special in enabled:
        if PREDICATES[special](shape):
            return special
    return None


def rank_counter(cards: Sequence[Card]) -> Counter[int]:
    return Counter(int(c.rank) for c in cards if not c.is_joker)

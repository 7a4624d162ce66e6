"""Arranging 13 cards (RULES.md §6): the best arrangement, suggestions, special splits.

"Best" is the foul-free split of highest expected water under the model of
:mod:`games.rules.expected_water`. Every 5- and 3-card subset is evaluated once (1,287 + 286),
and the 72,072 splits are index arrays into them, so no hand is evaluated inside the split
loop. Cards are put in canonical order first and ties go to the first split, so the answer is
deterministic for the same 13 cards and configuration. With spare cards (16 cards, RULES.md
§12.4) :mod:`games.rules.spare` chooses the 13 to play. ``benchmarks/simulate_arrange.py``
shows the model beats simple heuristics; :class:`Policy` names it and those heuristics.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

import numpy as np

from .cards import ALL_CARDS, Card, ensure_distinct, sort_key
from .config import DEFAULT_CONFIG, RuleConfig
from .errors import FoulError, WrongCountError
from .expected_water import POW13, FloatArray, hand_order, row_classes, water_model
from .hands import Category
from .scoring import Arranged
from .spare import arrange16
from .specials import SPLIT_SPECIALS, detect_special, makes_special
from .tables import Tables, deck_name, load
from .vectorized import (
    B3,
    B5,
    BACKS_PER_MIDDLE,
    CARD_RANK,
    CARD_SUIT,
    COMB3,
    COMB5,
    SPLIT_B,
    SPLIT_F,
    SPLIT_M,
    BoolArray,
    IntArray,
    eval_cards3,
    eval_cards5,
)

_COMB5_LISTS: list[list[int]] = COMB5.tolist()
_COMB3_LISTS: list[list[int]] = COMB3.tolist()


@dataclass(frozen=True, slots=True)
class Suggestion:
    front: tuple[Card, ...]
    middle: tuple[Card, ...]
    back: tuple[Card, ...]
    categories: tuple[Category, Category, Category]
    expected_water: float
    unused: tuple[Card, ...] = ()  # with spare cards: the 3 set aside (RULES.md §12.4)

    def arranged(self) -> Arranged:
        return Arranged(self.front, self.middle, self.back)


@dataclass(frozen=True, slots=True)
class ArrangeResult:
    best: Suggestion
    suggestions: tuple[Suggestion, ...]
    special: str | None


class Hand:
    """One 13-card hand: its subsets classified once, and which splits are foul-free.

    ``variant``: the configuration has a variant deck, so rows are evaluated by card index
    (copies, jokers) and classified in the variant class universe."""

    def __init__(self, card_indices: Sequence[int], a2345: str, variant: bool = False) -> None:
        idx = np.array(hand_order(card_indices), dtype=np.int64)
        self.cards = idx
        self.variant = variant
        self.c5: IntArray
        self.c3: IntArray
        ranks, suits = CARD_RANK[idx], CARD_SUIT[idx]
        self.r5, self.s5 = ranks[COMB5], suits[COMB5]
        self.r3, self.s3 = ranks[COMB3], suits[COMB3]
        self.cls = cls = row_classes(a2345, variant)
        if variant:
            k5, x5 = eval_cards5(idx[COMB5], a2345)
            self.c5 = np.searchsorted(cls.keys5, k5)
            cx5 = np.searchsorted(cls.cross, x5)
            self.c3 = np.searchsorted(cls.cross, eval_cards3(idx[COMB3]))
        else:
            code5 = (self.r5 - 2) @ POW13
            suited = (self.s5 == self.s5[:, :1]).all(axis=1)
            self.c5 = np.where(suited, cls.suited5.take(code5), cls.plain5.take(code5))
            cx5 = np.where(suited, cls.cross5_suited.take(code5), cls.cross5.take(code5))
            self.c3 = cls.front.take((self.r3 - 2) @ POW13[2:])
        # back >= middle and middle >= front (RULES.md §4); SPLIT_M is each middle 56 times.
        self.valid: BoolArray = (self.c5.take(SPLIT_B) >= np.repeat(self.c5, BACKS_PER_MIDDLE)) & (
            np.repeat(cx5, BACKS_PER_MIDDLE) >= self.c3.take(SPLIT_F)
        )

    @property
    def k5(self) -> IntArray:
        return self.cls.keys5.take(self.c5)

    @property
    def k3(self) -> IntArray:
        return self.cls.cross.take(self.c3)

    def rows_of(self, splits: IntArray) -> tuple[IntArray, IntArray, IntArray]:
        """Indices of the front, middle and back subsets of these splits."""
        return SPLIT_F.take(splits), splits // BACKS_PER_MIDDLE, SPLIT_B.take(splits)

    def split_cards(self, split: int) -> tuple[list[int], list[int], list[int]]:
        """Card indices of a split's rows, each high to low (the hand is sorted that way)."""
        cards = self.cards.tolist()
        f, m, b = int(SPLIT_F[split]), int(SPLIT_M[split]), int(SPLIT_B[split])
        return (
            [cards[i] for i in _COMB3_LISTS[f]],
            [cards[i] for i in _COMB5_LISTS[m]],
            [cards[i] for i in _COMB5_LISTS[b]],
        )

    def categories(self, split: int) -> tuple[Category, Category, Category]:
        f, m, b = int(SPLIT_F[split]), int(SPLIT_M[split]), int(SPLIT_B[split])
        keys5, cross = self.cls.keys5, self.cls.cross
        return (
            Category(int(cross[self.c3[f]]) // B3),
            Category(int(keys5[self.c5[m]]) // B5),
            Category(int(keys5[self.c5[b]]) // B5),
        )


def _to_cards(indices: Sequence[int]) -> tuple[Card, ...]:
    return tuple(ALL_CARDS[i] for i in indices)


def _suggestion(hand: Hand, split: int, value: float) -> Suggestion:
    f, m, b = hand.split_cards(split)
    cats = hand.categories(split)
    return Suggestion(_to_cards(f), _to_cards(m), _to_cards(b), cats, round(float(value), 4))


def _card_indices(cards: Sequence[Card]) -> list[int]:
    if len(cards) != 13:
        raise WrongCountError(f"a hand has 13 cards, got {len(cards)}")
    ensure_distinct(cards)
    return [c.index for c in cards]


def arrange(
    cards: Sequence[Card],
    config: RuleConfig = DEFAULT_CONFIG,
    *,
    limit: int = 10,
    opponents: int = 3,
) -> ArrangeResult:
    """The best arrangement and up to ``limit`` suggestions with distinct category triples.

    All are foul-free and use exactly the 13 cards; ``suggestions[0]`` is ``best``. With spare
    cards (RULES.md §12.4) the hand has 16 cards and each suggestion also names the 3 it sets
    aside (:mod:`games.rules.spare`).
    """
    if config.spare_cards:
        return _arrange_spare(cards, config, limit, opponents)
    hand = Hand(_card_indices(cards), config.a2345, not config.deck.is_classic)
    model = water_model(config, opponents)
    splits = np.flatnonzero(hand.valid)
    f, m, b = hand.rows_of(splits)
    values, triple = model.split_values(hand, f, m, b)
    best_per = np.full(4 * 100, -np.inf)
    np.maximum.at(best_per, triple, values)
    hits = np.flatnonzero(values == best_per[triple])
    groups, first = np.unique(triple[hits], return_index=True)
    winners = hits[first]  # first split reaching each group's maximum
    order = winners[np.argsort(-values[winners], kind="stable")][: max(1, limit)]
    suggestions = tuple(_suggestion(hand, int(splits[i]), float(values[i])) for i in order)
    special = detect_special([ALL_CARDS[i] for i in hand.cards], config)
    return ArrangeResult(suggestions[0], suggestions, special)


def _arrange_spare(
    cards: Sequence[Card], config: RuleConfig, limit: int, opponents: int
) -> ArrangeResult:
    if len(cards) != config.hand_size:
        raise WrongCountError(f"a hand has {config.hand_size} cards, got {len(cards)}")
    ensure_distinct(cards)
    splits = arrange16([c.index for c in cards], config, opponents, limit)
    suggestions = tuple(
        Suggestion(s.front, s.middle, s.back, s.categories, s.value, s.unused) for s in splits
    )
    return ArrangeResult(suggestions[0], suggestions, detect_special(cards, config))


def best_arrangement(cards: Sequence[Card], config: RuleConfig = DEFAULT_CONFIG) -> Arranged:
    """The arrangement auto-arrange submits (RULES.md §6): the highest expected water."""
    return arrange(cards, config, limit=1).best.arranged()


def expected_water_of(
    arranged: Arranged, config: RuleConfig = DEFAULT_CONFIG, *, opponents: int = 3
) -> float:
    """The expected water of one given arrangement of 13 cards: the value the model gives it
    among all the hand's splits (the same value ``arrange`` ranks suggestions by), so a
    player's own arrangement can be set beside the best one (RULES.md §6). Raises a
    :class:`RulesError` for a foul or for rows that are not 3, 5 and 5 cards."""
    hand, split = _hand_split(arranged, config)
    model = water_model(config, opponents)
    one = np.array([split], dtype=np.int64)
    values, _triple = model.split_values(hand, *hand.rows_of(one))
    return round(float(values[0]), 4)  # as the suggestions give it


@dataclass(frozen=True, slots=True)
class SplitRank:
    """Where one arrangement stands among every foul-free split of its 13 cards, by the
    model's expected water: ``value`` its own, ``best`` and ``worst`` the hand's highest and
    lowest, ``shape_best`` the best split with the same category triple (the same hand types
    front, middle, back), and ``best_arranged`` the split worth ``best`` (the one
    :func:`arrange` suggests first for these 13 cards).

    All of it comes from one evaluation of the splits in the deck's own row evaluation (copies,
    five of a kind and jokers on a variant deck, RULES.md §12), so the best, the worst and the
    arrangement are measured with the same values. Splits the model values alike are ordered
    by their rows' strength (:func:`split_order`)."""

    value: float
    best: float
    worst: float
    shape_best: float
    better_share: float  # share of the foul-free splits ranked above this one (0: the best)
    splits: int  # how many foul-free splits the 13 cards have
    best_arranged: Arranged
    lowest: bool  # no split ranks below it (however many tie with it)


def split_order(
    hand: Hand, config: RuleConfig, values: FloatArray, f: IntArray, m: IntArray, b: IntArray
) -> tuple[FloatArray, FloatArray]:
    """The two keys that rank a hand's splits (f, m, b) from worst to best: the model's
    expected water (``values``, rounded so that equal values compare equal), then the rows'
    strength, the sum of each row's percentile among every hand of its size in the deck
    (:class:`Policy` ``strength_sum``'s measure). The second tells apart the splits the model
    values alike: rows that win nothing against the rows opponents play all have the same
    expected water (with spare cards, the bottom tenth of a hand's splits is often one value),
    and among those the weaker rows are the worse choice."""
    t = load(deck_name(config))
    p5, t5 = t.all5[config.a2345].less_equal(hand.k5)
    p3, t3 = t.all3.less_equal(hand.k3)
    s5, s3 = p5 + t5 / 2, p3 + t3 / 2
    strength = s3.take(f) + s5.take(m) + s5.take(b)
    return np.round(values, 9), np.round(strength, 9)


def rank_of(
    arranged: Arranged, config: RuleConfig = DEFAULT_CONFIG, *, opponents: int = 3
) -> SplitRank:
    """How ``arranged`` ranks among all foul-free splits of its 13 cards (one evaluation of
    every split, as :func:`arrange` does; ordered by :func:`split_order`). With spare cards
    (RULES.md §12.4) these are the 13 played, ranked among their own splits under the
    configuration's model. Raises a :class:`RulesError` for a foul or wrong rows."""
    hand, split = _hand_split(arranged, config)
    model = water_model(config, opponents)
    splits = np.flatnonzero(hand.valid)
    rows = hand.rows_of(splits)
    values, triple = model.split_values(hand, *rows)
    key, strength = split_order(hand, config, values, *rows)
    at = int(np.searchsorted(splits, split))
    value = float(values[at])
    same = triple == triple[at]
    level = key == key[at]
    above = (key > key[at]) | (level & (strength > strength[at]))
    below = (key < key[at]) | (level & (strength < strength[at]))
    top = _first_best(values, triple)
    f, m, b = hand.split_cards(int(splits[top]))
    return SplitRank(
        value=round(value, 4),
        best=round(float(values[top]), 4),
        worst=round(float(values.min()), 4),
        shape_best=round(float(values[same].max()), 4),
        better_share=float(np.count_nonzero(above)) / len(values),
        splits=len(values),
        best_arranged=Arranged(_to_cards(f), _to_cards(m), _to_cards(b)),
        lowest=not bool(below.any()),
    )


def _first_best(values: FloatArray, triple: IntArray) -> int:
    """The position of the split :func:`arrange` puts first: the highest value, among equal
    values the lowest category triple, and in it the first split."""
    top = np.flatnonzero(values == values.max())
    low = top[triple[top] == triple[top].min()]
    return int(low[0])


def worst_arrangement(
    cards: Sequence[Card], config: RuleConfig = DEFAULT_CONFIG, *, opponents: int = 3
) -> Arranged:
    """The foul-free split of these 13 cards that ranks lowest (:func:`split_order`: the
    least expected water, then the weakest rows; the first of equals): what a player losing
    on purpose plays, the measure :func:`rank_of` signs against."""
    hand = Hand(_card_indices(cards), config.a2345, not config.deck.is_classic)
    splits = np.flatnonzero(hand.valid)
    rows = hand.rows_of(splits)
    values, _triple = water_model(config, opponents).split_values(hand, *rows)
    key, strength = split_order(hand, config, values, *rows)
    f, m, b = hand.split_cards(int(splits[int(np.lexsort((strength, key))[0])]))
    return Arranged(_to_cards(f), _to_cards(m), _to_cards(b))


def _hand_split(arranged: Arranged, config: RuleConfig) -> tuple[Hand, int]:
    """The classified hand of an arrangement's 13 cards and the index of its split; raises
    for rows that are not 3, 5 and 5 cards and for a foul."""
    front, middle, back = arranged.rows()
    if (len(front), len(middle), len(back)) != (3, 5, 5):
        raise WrongCountError("an arrangement has rows of 3, 5 and 5 cards")
    indices = _card_indices(arranged.cards)
    hand = Hand(indices, config.a2345, not config.deck.is_classic)
    where = {card: i for i, card in enumerate(hand.cards.tolist())}

    def subset(row: tuple[Card, ...], lists: dict[tuple[int, ...], int]) -> int:
        return lists[tuple(sorted(where[c.index] for c in row))]

    f = subset(front, _comb_index(3))
    m = subset(middle, _comb_index(5))
    b = subset(back, _comb_index(5))
    split = m * BACKS_PER_MIDDLE + _back_rank(m, b)
    assert int(SPLIT_F[split]) == f  # the front is what the middle and the back leave
    if not hand.valid[split]:
        raise FoulError("the arrangement is a foul (RULES.md §4)")
    return hand, split


@lru_cache(maxsize=2)
def _comb_index(width: int) -> dict[tuple[int, ...], int]:
    """{positions in the hand (ascending): index of that subset in COMB3 / COMB5}."""
    lists = _COMB3_LISTS if width == 3 else _COMB5_LISTS
    return {tuple(sorted(c)): i for i, c in enumerate(lists)}


def _back_rank(middle: int, back: int) -> int:
    """The position of ``back`` among the backs that follow ``middle`` in the split order."""
    start = middle * BACKS_PER_MIDDLE
    backs = SPLIT_B[start : start + BACKS_PER_MIDDLE]
    (found,) = np.flatnonzero(backs == back)
    return int(found)


# -- special splits --------------------------------------------------------------------------


def witness_masks(hand: Hand, special: str) -> tuple[BoolArray, BoolArray, BoolArray] | None:
    """Per-subset masks (front, middle, back) whose conjunction witnesses a split special."""
    if hand.variant:
        return _wild_witness_masks(hand, special)
    r5 = np.sort(hand.r5, axis=1)
    r3 = np.sort(hand.r3, axis=1)
    suited5 = (hand.s5 == hand.s5[:, :1]).all(axis=1)
    suited3 = (hand.s3 == hand.s3[:, :1]).all(axis=1)
    distinct5 = (np.diff(r5, axis=1) > 0).all(axis=1)
    run5 = distinct5 & ((r5[:, 4] - r5[:, 0] == 4) | (r5 == [2, 3, 4, 5, 14]).all(axis=1))
    distinct3 = (np.diff(r3, axis=1) > 0).all(axis=1)
    run3 = distinct3 & ((r3[:, 2] - r3[:, 0] == 2) | (r3 == [2, 3, 14]).all(axis=1))
    if special == "three_flushes":
        return suited3, suited5, suited5
    if special == "three_straights":
        return run3, run5, run5
    if special == "three_straight_flushes":
        return run3 & suited3, run5 & suited5, run5 & suited5
    if special == "double_monster":
        full_house = hand.k5 // B5 == Category.FULL_HOUSE
        return hand.k3 // B3 >= Category.PAIR, full_house, full_house
    return None


def _can_be(ranks: IntArray, suits: IntArray) -> dict[str, BoolArray]:
    """What rows (card ranks and suits, jokers rank 0) can be once their jokers take values:
    one suit, a run (the ace low or high), a full house (5-card rows)."""
    nat = ranks > 0
    width = ranks.shape[1]
    first = suits[:, :1]  # jokers come last in a hand, so a row starts with a standard card
    suited = ((suits == first) | ~nat).all(axis=1)
    same = (ranks[:, :, None] == ranks[:, None, :]) & nat[:, :, None] & nat[:, None, :]
    counts = same.sum(axis=2)
    distinct = (counts <= 1).all(axis=1)
    run = np.zeros(len(ranks), dtype=bool)
    for low_ace in (False, True):
        r = np.where(low_ace & (ranks == 14), 1, ranks)
        hi = np.where(nat, r, 0).max(axis=1)
        lo = np.where(nat, r, 99).min(axis=1)
        run |= distinct & (hi - lo <= width - 1)
    n_distinct = np.where(nat, 1.0 / np.maximum(counts, 1), 0.0).sum(axis=1).round()
    full = (n_distinct <= 2) & (counts.max(axis=1) <= 3)
    return {"suited": suited, "run": run, "full_house": full}


def _wild_witness_masks(hand: Hand, special: str) -> tuple[BoolArray, BoolArray, BoolArray] | None:
    five, three = _can_be(hand.r5, hand.s5), _can_be(hand.r3, hand.s3)
    if special == "three_flushes":
        return three["suited"], five["suited"], five["suited"]
    if special == "three_straights":
        return three["run"], five["run"], five["run"]
    if special == "three_straight_flushes":
        sf5 = five["run"] & five["suited"]
        return three["run"] & three["suited"], sf5, sf5
    if special == "double_monster":
        return hand.k3 // B3 >= Category.PAIR, five["full_house"], five["full_house"]
    return None


def special_split(
    cards: Sequence[Card], special: str, config: RuleConfig = DEFAULT_CONFIG
) -> Arranged | None:
    """A split showing a special that is defined by its rows (RULES.md §5).

    Foul-free whenever one exists (then the one with the highest expected water); None when
    the special needs no split or the cards do not make it.
    """
    hand = Hand(_card_indices(cards), config.a2345, not config.deck.is_classic)
    masks = witness_masks(hand, special)
    if masks is None:
        return None
    mf, mm, mb = masks
    witness = mf[SPLIT_F] & mm[SPLIT_M] & mb[SPLIT_B]
    candidates = np.flatnonzero(witness & hand.valid)
    if len(candidates) == 0:
        candidates = np.flatnonzero(witness)
    if len(candidates) == 0:
        return None
    values, _ = water_model(config, 3).split_values(hand, *hand.rows_of(candidates))
    split = int(candidates[int(np.argmax(values))])
    f, m, b = hand.split_cards(split)
    return Arranged(_to_cards(f), _to_cards(m), _to_cards(b))


# -- policies (the model and the baselines it is measured against) ---------------------------


class Policy:
    """A way to arrange: ``best`` (the model), ``strongest_back`` or ``strength_sum``.

    ``strongest_back``: the foul-free split with the strongest back, then middle, then front.
    ``strength_sum``: maximise the sum of each row's percentile among all hands of its size.
    """

    NAMES = ("best", "strongest_back", "strength_sum")

    def __init__(self, name: str, config: RuleConfig = DEFAULT_CONFIG) -> None:
        if name not in self.NAMES:
            raise ValueError(f"unknown policy {name!r}")
        self.name = name
        self.config = config

    def choose(self, card_indices: Sequence[int], tables: Tables | None = None) -> list[int]:
        """The 13 card indices ordered front (3), middle (5), back (5) (with spare cards: of
        the 16 dealt, by the model for ``best``; the baselines drop the three lowest cards)."""
        if len(card_indices) > 13:
            if self.name == "best":
                top = arrange16(card_indices, self.config, 3, 1, tables)[0]
                return [c.index for c in top.front + top.middle + top.back]
            kept = sorted(card_indices, key=lambda i: sort_key(ALL_CARDS[i]))[:13]
            return self.choose(kept, tables)
        hand = Hand(card_indices, self.config.a2345, not self.config.deck.is_classic)
        splits = np.flatnonzero(hand.valid)
        f, m, b = hand.rows_of(splits)
        if self.name == "best":
            values, _ = water_model(self.config, 3, tables).split_values(hand, f, m, b)
            split = int(splits[int(np.argmax(values))])
        elif self.name == "strongest_back":
            order = np.lexsort((hand.c3.take(f), hand.c5.take(m), hand.c5.take(b)))
            split = int(splits[order[-1]])
        else:
            t = tables or load(deck_name(self.config))
            p5, t5 = t.all5[self.config.a2345].less_equal(hand.k5)
            p3, t3 = t.all3.less_equal(hand.k3)
            s5, s3 = p5 + t5 / 2, p3 + t3 / 2
            values = s3.take(f) + s5.take(m) + s5.take(b)
            split = int(splits[int(np.argmax(values))])
        front, middle, back = hand.split_cards(split)
        return front + middle + back


# -- specials with their split and, with spare cards, the 13 played ----------------------------


@dataclass(frozen=True, slots=True)
class SpecialFound:
    """A special a hand makes: the 13 cards that make it, a split to show, the spare cards."""

    special: str
    cards: tuple[Card, ...]
    split: Arranged | None
    unused: tuple[Card, ...] = ()


def special_with_split(
    cards: Sequence[Card], config: RuleConfig = DEFAULT_CONFIG
) -> SpecialFound | None:
    """The special of a dealt hand (13 cards, or 16 with spare cards), with its split.

    With spare cards the 13 are the first, dropping the lowest cards first, that make the
    special (jokers are always kept: a joker can stand for any card it replaces)."""
    found = detect_special(cards, config)
    if found is None:
        return None
    kept: tuple[Card, ...] = tuple(cards)
    unused: tuple[Card, ...] = ()
    if len(cards) > 13:
        naturals = sorted((c for c in cards if not c.is_joker), key=sort_key, reverse=True)
        for drop in combinations(naturals, len(cards) - 13):
            rest = tuple(c for c in cards if c not in drop)
            if makes_special(rest, found):
                kept, unused = rest, tuple(drop)
                break
    split = special_split(kept, found, config) if found in SPLIT_SPECIALS else None
    return SpecialFound(found, kept, split, unused)

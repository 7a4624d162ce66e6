"""RULES.md §12.2–12.3: row hands with copies of diamonds and with jokers.

The exhaustive checks (python-chess perft style) count every 5-card hand of the 65-card deck and
every 3- and 5-card hand with one and two jokers by category, once with the vectorised
evaluator over all hands and once with the scalar one over each distinct rank pattern weighted
by how many hands have it; the two must agree, and on every pattern the keys are identical.
"""

from __future__ import annotations

from collections import Counter
from itertools import combinations_with_replacement
from math import comb, prod

import numpy as np
import pytest

from games.rules.cards import Deck, parse_cards
from games.rules.errors import FoulError
from games.rules.hands import Category, check_foul, evaluate, evaluate_ranks
from games.rules.vectorized import (
    B3,
    B5,
    CARD_RANK,
    CARD_SUIT,
    all_combinations,
    eval5,
    eval_cards3,
    eval_cards5,
)

VARIANT = Deck(extra_suits=2, jokers=2)


def ev(text: str, a2345: str = "lowest"):
    return evaluate(parse_cards(text.split(), deck=VARIANT), a2345)


# -- examples of the text ---------------------------------------------------------------------


def test_12_2_a_joker_may_repeat_a_card_of_its_row():
    flush = ev("AS KS 9S 5S BJ")
    assert flush.category == Category.FLUSH and flush.digits == (14, 14, 13, 9, 5)
    assert [(str(j), str(v)) for j, v in flush.jokers] == [("BJ", "AS")]
    assert flush.compare(ev("AS KS QS 9S 5S")) == 1


def test_12_2_examples_of_the_text():
    trips = ev("AS AH RJ")
    assert trips.category == Category.TRIPS and trips.digits == (14, 14, 14)
    sf = ev("9S TS JS QS BJ")
    assert sf.category == Category.STRAIGHT_FLUSH and sf.key == ev("9S TS JS QS KS").key
    five = ev("7C 7D 7H 7S RJ")
    assert five.category == Category.FIVE_OF_A_KIND
    assert [str(v) for _, v in five.jokers] == ["7S"]


def test_12_2_two_jokers_take_values_together():
    hand = ev("AS AH RJ BJ 2C")
    assert hand.category == Category.QUADS and hand.digits == (14, 14, 14, 14, 2)
    assert ev("RJ BJ KH").category == Category.TRIPS
    assert ev("2S 3H RJ BJ 9C").category == Category.TRIPS  # no straight can be made
    assert ev("2S 3H RJ BJ 5C").category == Category.STRAIGHT
    assert ev("2S 3S RJ BJ 5S").category == Category.STRAIGHT_FLUSH


def test_12_2_the_red_joker_takes_the_higher_value_whatever_the_order_of_the_row():
    # The two jokers of a wheel stand for a 4 and a 5; which one is which does not depend on
    # the order the cards were placed in (the page shows the same stands after a re-placement).
    for row in ("AS 2H 3C RJ BJ", "AS 2H 3C BJ RJ", "BJ AS RJ 2H 3C"):
        stands = {str(j): str(v) for j, v in ev(row).jokers}
        assert stands == {"RJ": "5S", "BJ": "4S"}, row


def test_12_2_a_row_with_a_joker_is_an_ordinary_row_for_the_foul_check():
    front, middle, back = ev("AS AH RJ"), ev("KS KH KC 2D 3D"), ev("QS QH QC QD BJ")
    assert back.category == Category.FIVE_OF_A_KIND
    with pytest.raises(FoulError):
        check_foul(front, middle, back)  # trips of aces in front above trips of kings
    check_foul(ev("KS KH RJ"), ev("AS AH AC 2D 3D"), back)


def test_12_2_the_wheel_with_a_joker_follows_a2345():
    wheel = ev("AS 2H 3C 4D RJ")  # RJ = 5: the only straight
    assert wheel.category == Category.STRAIGHT and wheel.compare(ev("2S 3H 4C 5D 6S")) == -1
    second = ev("AS 2H 3C 4D RJ", "second")
    assert second.compare(ev("9S TH JC QD KS", "second")) == 1


def test_12_3_five_of_a_kind_is_above_straight_flush_and_ties_on_rank():
    five = ev("7C 7D 7H 7S 7D2")
    assert five.category == Category.FIVE_OF_A_KIND > Category.STRAIGHT_FLUSH
    assert five.compare(ev("TS JS QS KS AS")) == 1
    assert ev("8C 8D 8H 8S 8D2").compare(five) == 1
    assert five.compare(ev("7C 7D2 7H 7S 7D3")) == 0
    assert five.cross == Category.FIVE_OF_A_KIND * B3


def test_12_3_flushes_with_equal_cards_break_ties_card_by_card():
    pair_flush = ev("AD AD2 KD 9D 5D")
    assert pair_flush.category == Category.FLUSH and pair_flush.digits == (14, 14, 13, 9, 5)
    assert pair_flush.compare(ev("AS KS QS 9S 5S")) == 1
    assert ev("7D 7D2 7D3 5D 2D").category == Category.FLUSH  # trips in one suit: a flush
    assert ev("7D 7D2 7D3 5D 5D2").category == Category.FULL_HOUSE
    assert ev("KD QD 5D 5D2 3D").compare(ev("KS QS JS 3S 2S")) == -1  # K Q 5 5 3 < K Q J 3 2


# -- exhaustive: the 65-card deck ------------------------------------------------------------


def _sorted_deck(indices: list[int]) -> tuple[np.ndarray, np.ndarray]:
    order = sorted(indices, key=lambda i: (-int(CARD_RANK[i]), i))
    return CARD_RANK[order], CARD_SUIT[order]


def test_12_3_every_5_card_hand_of_the_65_card_deck_by_category():
    ranks, suits = _sorted_deck(list(range(65)))
    counts = np.zeros(10, dtype=np.int64)
    for chunk in np.array_split(all_combinations(65, 5), 8):
        key, _ = eval5(ranks[chunk], suits[chunk])
        counts += np.bincount(key // B5, minlength=10)
    # Scalar, over rank patterns: a rank has 5 cards (S, H, C, D, D2); all five cards of a
    # hand share a suit in 3 ways when the ranks are distinct (S, H, C) plus the ways to take
    # every card from the two diamonds of its rank.
    expected = Counter[int]()
    keys_scalar, patterns = [], []
    for pattern in combinations_with_replacement(range(14, 1, -1), 5):
        mult = Counter(pattern)
        total = prod(comb(5, c) for c in mult.values())
        suited = (3 if max(mult.values()) == 1 else 0) + prod(comb(2, c) for c in mult.values())
        for is_suited, n in ((True, suited), (False, total - suited)):
            if n:
                s = [3] * 5 if is_suited else [0, 1, 0, 0, 0]
                hand = evaluate_ranks(list(pattern), s)
                expected[hand.category] += n
                keys_scalar.append(hand.key)
                patterns.append((pattern, s))
    assert counts.tolist() == [expected[c] for c in range(10)]
    assert counts.sum() == comb(65, 5)
    assert counts.tolist() == [
        3945930, 3552120, 427284, 214500, 30900, 69291, 15600, 3900, 350, 13
    ]  # fmt: skip
    r = np.array([p for p, _ in patterns])
    s = np.array([q for _, q in patterns])
    assert eval5(r, s)[0].tolist() == keys_scalar


# -- exhaustive: jokers ---------------------------------------------------------------------


def _natural_patterns(width: int):
    """(ranks high to low, suits, suited?, how many 52-card sets have them)."""
    for pattern in combinations_with_replacement(range(14, 1, -1), width):
        mult = Counter(pattern)
        if max(mult.values()) > 4:
            continue
        total = prod(comb(4, c) for c in mult.values())
        suited = total if width == 1 else (4 if max(mult.values()) == 1 else 0)
        if suited:
            yield pattern, [0] * width, suited
        if total - suited:
            yield (
                pattern,
                [1] + [0] * (width - 1) if max(mult.values()) == 1 else _spread(pattern),
                total - suited,
            )


def _spread(pattern: tuple[int, ...]) -> list[int]:
    seen: Counter[int] = Counter()
    out = []
    for r in pattern:
        out.append(seen[r])
        seen[r] += 1
    return out


@pytest.mark.parametrize(("size", "jokers"), [(5, 1), (5, 2), (3, 1), (3, 2)])
def test_12_2_every_hand_with_jokers_by_category(size, jokers):
    nat = size - jokers
    combos = all_combinations(52, nat)
    rows = np.column_stack((combos, np.tile(np.arange(78, 78 + jokers), (len(combos), 1))))
    key = eval_cards5(rows)[0] if size == 5 else eval_cards3(rows)
    div = B5 if size == 5 else B3
    counts = np.bincount(key // div, minlength=10)
    expected = np.zeros(10, dtype=np.int64)
    rank_of = {r: i for i, r in enumerate(range(2, 15))}
    for pattern, suits, n in _natural_patterns(nat):
        idx = [(rank_of[r]) * 4 + s for r, s in zip(pattern, suits, strict=True)]
        row = np.array([idx + list(range(78, 78 + jokers))])
        from games.rules.cards import ALL_CARDS

        hand = evaluate([ALL_CARDS[i] for i in row[0]])
        vec = eval_cards5(row)[0][0] if size == 5 else eval_cards3(row)[0]
        assert hand.key == vec, (pattern, suits)
        expected[hand.category] += n
    assert counts.tolist() == expected.tolist()
    assert counts.sum() == comb(52, nat)
    if size == 5 and jokers == 1:
        assert counts[Category.FIVE_OF_A_KIND] == 13  # the 13 natural quads
        assert counts[Category.HIGH_CARD] == 0 and counts[Category.TWO_PAIR] == 0


def test_12_2_scalar_and_vectorised_agree_on_random_rows_of_the_80_card_deck():
    rng = np.random.default_rng(12)
    deck = np.arange(80)
    for size in (3, 5):
        rows = np.array([rng.choice(deck, size, replace=False) for _ in range(3000)])
        if size == 5:
            keys, cross = eval_cards5(rows, "second")
        else:
            keys = cross = eval_cards3(rows)
        from games.rules.cards import ALL_CARDS

        for row, k, x in zip(rows, keys, cross, strict=True):
            hand = evaluate([ALL_CARDS[i] for i in row], "second")
            assert (hand.key, hand.cross) == (k, x)

"""RULES.md §3 (row hands) and §4 (foul)."""

from itertools import combinations

import numpy as np
import pytest

from games.rules import build_tables
from games.rules.cards import DECK
from games.rules.errors import FoulError, WrongCountError
from games.rules.hands import Category, check_foul, compare, evaluate, foul_rows
from games.rules.vectorized import eval3, eval5, sort_desc

from .helpers import c, ev

FIVE = [
    ("9H TH JH QH KH", Category.STRAIGHT_FLUSH),
    ("AS 2S 3S 4S 5S", Category.STRAIGHT_FLUSH),
    ("4C 4D 4H 4S 5C", Category.QUADS),
    ("3C 3D 3H 5S 5C", Category.FULL_HOUSE),
    ("8H 9H JH QH AH", Category.FLUSH),
    ("4S 5H 6D 7C 8S", Category.STRAIGHT),
    ("TS JH QD KC AS", Category.STRAIGHT),
    ("AS 2H 3D 4C 5S", Category.STRAIGHT),
    ("7S 7H 7D KC 2S", Category.TRIPS),
    ("7S 7H KD KC 2S", Category.TWO_PAIR),
    ("7S 7H QD KC 2S", Category.PAIR),
    ("7S 9H QD KC 2S", Category.HIGH_CARD),
    ("KS AH 2D 3C 4S", Category.HIGH_CARD),  # KA234 is not a straight
    ("QS KH AD 2C 3S", Category.HIGH_CARD),
]


@pytest.mark.parametrize(("hand", "category"), FIVE)
def test_3_1_five_card_categories(hand, category):
    assert ev(hand).category is category


def test_3_1_categories_are_ordered_high_to_low():
    one_of_each = [
        "9H TH JH QH KH",
        "4C 4D 4H 4S 5C",
        "3C 3D 3H 5S 5C",
        "8H 9H JH QH AH",
        "4S 5H 6D 7C 8S",
        "7S 7H 7D KC 2S",
        "7S 7H KD KC 2S",
        "7S 7H QD KC 2S",
        "7S 9H QD KC 2S",
    ]
    # five_of_a_kind (the top of the scale) exists only with the variant decks (RULES.md §12.3).
    assert [ev(h).category for h in one_of_each] == sorted(Category, reverse=True)[1:]
    keys = [ev(h).key for h in one_of_each]
    assert keys == sorted(keys, reverse=True)


@pytest.mark.parametrize(
    ("higher", "lower"),
    [
        ("TH JH QH KH AH", "9S TS JS QS KS"),  # straight flush by straight rank
        ("4C 4D 4H 4S 6C", "4C 4D 4H 4S 5D"),  # quads: kicker (only in theory; ranks only)
        ("5C 5D 5H 5S 2C", "4C 4D 4H 4S AD"),  # quads: quad rank first
        ("4C 4D 4H 2S 2C", "3C 3D 3H AS AC"),  # full house: trip rank first
        ("4C 4D 4H AS AC", "4S 4D 4H KS KC"),  # then pair rank
        ("AH KH 9H 5H 3H", "AS KS 9S 5S 2S"),  # flush: card by card
        ("2H 3S 4D 5C 6S", "AS 2H 3D 4C 5S"),  # A2345 lowest by default
        ("7S 7H 7D KC 3S", "7S 7H 7D QC JS"),  # trips: kickers
        ("KS KH 3D 3C 2S", "QS QH JD JC AS"),  # two pair: high pair
        ("KS KH 4D 4C 2S", "KS KH 3D 3C AS"),  # then low pair
        ("KS KH 4D 4C 3S", "KD KC 4H 4S 2S"),  # then kicker
        ("9S 9H AD 3C 2S", "9D 9C KH QC JS"),  # pair: kickers high to low
        ("AS 9H 7D 4C 3S", "AH 9D 7C 4S 2S"),  # high card: card by card
    ],
)
def test_3_1_tie_breaks(higher, lower):
    assert compare(c(higher), c(lower)) == 1
    assert compare(c(lower), c(higher)) == -1


def test_3_1_suits_never_break_ties():
    assert compare(c("AS KS 9H 5D 3C"), c("AH KH 9S 5C 3D")) == 0
    assert compare(c("TH JH QH KH AH"), c("TS JS QS KS AS")) == 0
    assert compare(c("8H 8S 5D"), c("8C 8D 5S")) == 0


def test_3_1_a2345_lowest_is_below_23456():
    wheel, six_high, king_high = c("AS 2H 3D 4C 5S"), c("2S 3H 4D 5C 6S"), c("9S TH JD QC KS")
    assert compare(wheel, six_high, "lowest") == -1
    assert compare(wheel, king_high, "lowest") == -1


def test_3_1_a2345_second_ranks_below_tjqka_above_9tjqk():
    wheel = c("AS 2H 3D 4C 5S")
    assert compare(wheel, c("9S TH JD QC KS"), "second") == 1
    assert compare(wheel, c("TS JH QD KC AS"), "second") == -1
    assert compare(c("AH 2H 3H 4H 5H"), c("9S TS JS QS KS"), "second") == 1


THREE = [
    ("QS QH QD", Category.TRIPS),
    ("QS QH 3D", Category.PAIR),
    ("QS JH 3D", Category.HIGH_CARD),
    ("QS KS AS", Category.HIGH_CARD),  # three consecutive suited cards are just high card
    ("2S 3H 4D", Category.HIGH_CARD),
]


@pytest.mark.parametrize(("hand", "category"), THREE)
def test_3_2_front_row_categories(hand, category):
    assert ev(hand).category is category


def test_3_2_front_row_order():
    assert compare(c("2S 2H 2D"), c("AS AH KD")) == 1
    assert compare(c("AS AH 2D"), c("KS KH AD")) == 1
    assert compare(c("AS AH 3D"), c("AD AC 2S")) == 1
    assert compare(c("AS KH 3D"), c("AD QC JS")) == 1


@pytest.mark.parametrize(
    ("front", "middle", "expected"),
    [
        ("QS QH 3D", "QD QC KH 9S 2C", -1),  # same pair, front kicker lower
        ("QS QH KD", "QD QC KH 9S 2C", 0),  # equal on the ranks the front has: allowed
        ("QS QH AD", "QD QC KH 9S 2C", 1),  # front kicker higher: front is higher
        ("7S 7H 7D", "7C 2H 2S 9S 9C", 1),  # trips front above a two-pair middle: a foul
        ("AS KH QD", "AD KC QH 3S 2C", 0),  # three high cards equal
        ("AS KH QD", "AD KC JH 3S 2C", 1),
        ("5S 5H 5D", "6S 6H 6D 2C 3C", -1),
        ("5S 5H 5D", "5C 2H 3D 8C 9C", 1),  # trips vs pair
        ("2S 2H 2D", "AS AH KD KC 3C", 1),  # trips above two pair on the one scale
        ("AS AH AD", "2S 3H 4D 5C 6C", -1),  # straight above trips
    ],
)
def test_3_3_front_against_middle(front, middle, expected):
    assert ev(front).compare(ev(middle)) == expected


def test_4_valid_arrangement_passes():
    check_foul(ev("QS QC 3D"), ev("8C 8D 8H 2S 2C"), ev("9H TH JH QH KH"))


def test_4_equal_rows_are_allowed():
    check_foul(ev("AS KH QD"), ev("AD KC QH 3S 2C"), ev("AC KD QS 3H 2D"))


def test_4_middle_above_back_is_a_foul_naming_the_rows():
    with pytest.raises(FoulError) as err:
        check_foul(ev("2S 3D 4C"), ev("9H TH JH QH KH"), ev("8C 8D 8H 2H 2C"))
    assert err.value.rows == ("middle", "back")
    assert "middle (straight_flush) is higher than back (full_house)" in str(err.value)


def test_4_front_above_middle_is_a_foul_naming_the_rows():
    front, middle, back = ev("AS AH 3D"), ev("KS KH 9D 5C 2C"), ev("9H TH JH QH KH")
    assert foul_rows(front, middle, back) == ("front", "middle")
    with pytest.raises(FoulError, match="front"):
        check_foul(front, middle, back)


def test_4_both_fouls_name_all_rows():
    assert foul_rows(ev("AS AH AD"), ev("KS KH 9D 5C 2C"), ev("QS JH 9C 5D 2D")) == (
        "front",
        "middle",
        "back",
    )


def test_3_rows_must_have_3_or_5_cards():
    with pytest.raises(WrongCountError):
        evaluate(c("AS KS"))


# -- exhaustive checks (python-chess perft style) -------------------------------------------

PUBLISHED_5 = {
    Category.STRAIGHT_FLUSH: 40,
    Category.QUADS: 624,
    Category.FULL_HOUSE: 3_744,
    Category.FLUSH: 5_108,
    Category.STRAIGHT: 10_200,
    Category.TRIPS: 54_912,
    Category.TWO_PAIR: 123_552,
    Category.PAIR: 1_098_240,
    Category.HIGH_CARD: 1_302_540,
}
# Distinct hand classes (equivalence under ranks only): the well-known 7,462.
PUBLISHED_5_CLASSES = {8: 10, 7: 156, 6: 156, 5: 1277, 4: 10, 3: 858, 2: 858, 1: 2860, 0: 1277}
PUBLISHED_3 = {Category.TRIPS: 52, Category.PAIR: 3_744, Category.HIGH_CARD: 18_304}


@pytest.fixture(scope="module")
def all_hands():
    return build_tables.all_hands()


@pytest.mark.parametrize("a2345", ["lowest", "second"])
def test_3_1_exhaustive_counts_over_all_2598960_five_card_hands(all_hands, a2345):
    dist = all_hands[0][a2345]
    cats = dist.keys // 32**5
    counts = np.bincount(cats, weights=dist.counts, minlength=9).astype(int)
    assert dist.total == 2_598_960
    assert {Category(i): int(n) for i, n in enumerate(counts)} == PUBLISHED_5
    assert dict(enumerate(np.bincount(cats, minlength=9).tolist())) == PUBLISHED_5_CLASSES


def test_3_2_exhaustive_counts_over_all_22100_three_card_hands(all_hands):
    dist = all_hands[1]
    counts = np.bincount(dist.keys // 32**3, weights=dist.counts, minlength=4).astype(int)
    assert dist.total == 22_100
    assert {Category(i): int(counts[i]) for i in (0, 1, 3)} == PUBLISHED_3


def test_3_vectorised_and_scalar_evaluators_agree_on_every_three_card_hand():
    hands = list(combinations(DECK, 3))
    ranks = np.array([[x.rank for x in h] for h in hands])
    suits = np.array([[x.suit for x in h] for h in hands])
    keys = eval3(sort_desc(ranks, suits)[0])
    assert [evaluate(h).key for h in hands] == keys.tolist()


@pytest.mark.parametrize("a2345", ["lowest", "second"])
def test_3_vectorised_and_scalar_evaluators_agree_on_random_five_card_hands(a2345):
    rng = np.random.default_rng(7)
    hands = [[DECK[i] for i in rng.choice(52, 5, replace=False)] for _ in range(30_000)]
    # Plus every straight and straight flush shape, where the two paths differ most in code.
    for top in range(5, 15):
        ranks_ = [14 if r == 1 else r for r in range(top - 4, top + 1)]
        hands.append([DECK[(r - 2) * 4] for r in ranks_])  # all spades
        hands.append([DECK[(r - 2) * 4 + (i % 2)] for i, r in enumerate(ranks_)])
    ranks = np.array([[x.rank for x in h] for h in hands])
    suits = np.array([[x.suit for x in h] for h in hands])
    keys, cross = eval5(*sort_desc(ranks, suits), a2345)
    scalar = [evaluate(h, a2345) for h in hands]
    assert [h.key for h in scalar] == keys.tolist()
    assert [h.cross for h in scalar] == cross.tolist()

"""RULES.md §5: special hands."""

import random

import numpy as np
import pytest

from games.rules.arrange import Hand, special_split, witness_masks
from games.rules.cards import DECK
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.hands import check_foul, evaluate
from games.rules.specials import (
    SPLIT_SPECIALS,
    detect_special,
    makes_special,
    qualifying_specials,
)
from games.rules.vectorized import SPLIT_B, SPLIT_F, SPLIT_M

from .helpers import c

EXAMPLES = {
    "supreme_dragon": "2S 3S 4S 5S 6S 7S 8S 9S TS JS QS KS AS",
    "dragon": "2S 3H 4S 5D 6S 7C 8S 9S TS JS QS KS AS",
    "twelve_royals": "JS JH JD QS QH QD QC KS KH KD AS AH AD",
    "three_straight_flushes": "2H 3H 4H 2S 3S 4S 5S 6S 9C TC JC QC KC",
    "three_quads": "4S 4H 4D 4C 5S 5H 5D 5C 9S 9H 9D 9C KS",
    "all_big": "8S 8H 9D TC JS QH KD AC AS 9S TD JD QC",
    "all_small": "2S 2H 3D 4C 5S 5H 6D 7C 7S 8H 8D 3C 6S",
    "one_color": "2S 2C 5S 7C 8S 9C TS JC QS KC AS 3C 4S",
    "four_trips": "2S 2H 2D 5S 5H 5D 9S 9H 9D KS KH KD AS",
    "five_pairs_trips": "2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH KD",
    "six_pairs": "2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD",
    "three_straights": "QS KH AD AS 2H 3D 4C 5S 6H 7D 8C 9S TH",
    "three_flushes": "2H 5H 9H 3S 7S 8S JS KS 4D 6D TD QD 2D",
}
OPTIONAL = {
    "double_monster": "2S 2H 9D 5S 5H 5D 8C 8S JH JD JC QS QH",
    "trips_and_bomb": "4S 4H 4D 4C 9S 9H 9D JS JH JD KS KH KD",
}
ALL_ON = RuleConfig.from_dict(
    {"specials": {"double_monster": {"enabled": True}, "trips_and_bomb": {"enabled": True}}}
)


@pytest.mark.parametrize(("special", "hand"), EXAMPLES.items())
def test_5_each_default_special_is_detected(special, hand):
    assert detect_special(c(hand), DEFAULT_CONFIG) == special


@pytest.mark.parametrize(("special", "hand"), OPTIONAL.items())
def test_5_optional_specials_are_off_by_default_and_detected_when_enabled(special, hand):
    assert makes_special(c(hand), special)
    assert detect_special(c(hand), DEFAULT_CONFIG) != special
    assert detect_special(c(hand), ALL_ON) == special


def test_5_ordinary_hand_is_not_special():
    assert detect_special(c("2S 5H 9D JC KS 3H 7D 8C QS 4H 6D TC 2C"), DEFAULT_CONFIG) is None


def test_5_disabled_special_never_appears():
    off = RuleConfig.from_dict({"specials": {"six_pairs": {"enabled": False}}})
    assert detect_special(c(EXAMPLES["six_pairs"]), off) is None
    # five_pairs_trips also qualifies as six_pairs; with five_pairs_trips off it falls back.
    off = RuleConfig.from_dict({"specials": {"five_pairs_trips": {"enabled": False}}})
    assert detect_special(c(EXAMPLES["five_pairs_trips"]), off) == "six_pairs"


def test_5_the_highest_ranked_enabled_special_counts():
    royals = c(EXAMPLES["twelve_royals"])
    assert {"twelve_royals", "all_big"} <= qualifying_specials(royals)
    assert detect_special(royals, DEFAULT_CONFIG) == "twelve_royals"
    no_royals = RuleConfig.from_dict({"specials": {"twelve_royals": {"enabled": False}}})
    assert detect_special(royals, no_royals) == "all_big"


def test_5_ranking_order_comes_from_the_configuration():
    hand = c(EXAMPLES["twelve_royals"])
    order = list(DEFAULT_CONFIG.to_dict()["special_order"])
    order.remove("all_big")
    order.insert(0, "all_big")
    assert detect_special(hand, RuleConfig.from_dict({"special_order": order})) == "all_big"


def test_5_three_straight_flushes_also_make_straights_and_flushes():
    hand = c(EXAMPLES["three_straight_flushes"])
    assert {"three_straight_flushes", "three_straights", "three_flushes"} <= qualifying_specials(
        hand
    )


def test_5_a_four_of_a_kind_may_serve_as_two_pairs():
    assert makes_special(c("2S 2H 2D 2C 3S 3H 5S 5H 7S 7H 9S 9H AD"), "six_pairs")


def test_5_a_four_of_a_kind_may_serve_as_trips_and_one():
    assert makes_special(c("2S 2H 2D 2C 5S 5H 5D 9S 9H 9D KS KH KD"), "four_trips")


def test_5_trips_and_bomb_also_qualifies_as_four_trips_and_ranks_above_it():
    hand = c(OPTIONAL["trips_and_bomb"])
    assert {"trips_and_bomb", "four_trips"} <= qualifying_specials(hand)
    assert detect_special(hand, DEFAULT_CONFIG) == "four_trips"


def test_5_five_pairs_trips_also_qualifies_as_six_pairs():
    assert {"five_pairs_trips", "six_pairs"} <= qualifying_specials(c(EXAMPLES["five_pairs_trips"]))


def test_5_both_optional_specials_rank_trips_and_bomb_above_double_monster():
    order = [s.id for s in ALL_ON.enabled_specials]
    assert order.index("one_color") < order.index("trips_and_bomb")
    assert order.index("trips_and_bomb") < order.index("double_monster")
    assert order.index("double_monster") < order.index("four_trips")


@pytest.mark.parametrize(
    "hand",
    [
        "AS 2H 3D 4C 5S 6H 7D 8C 9S TH JD QC KS",  # that is a dragon, so: check straights alone
        "AS 2H 3D AC 2S 3H 4D 5C TS JH QD KC AD",  # A23 front, A2345 middle, TJQKA back
        "QS KH AD 9C TS JH QD KC AS 2H 3D 4C 5S",  # QKA front
    ],
)
def test_5_three_straights_let_the_ace_be_low_or_high_whatever_a2345(hand):
    assert makes_special(c(hand), "three_straights")
    for mode in ("lowest", "second"):
        cfg = RuleConfig(a2345=mode)
        assert special_split(c(hand), "three_straights", cfg) is not None


def test_5_three_straights_do_not_wrap_around():
    # KA2 front with 23456 and 89TJQ is not three straights, and no other split works.
    hand = c("KS AH 2D 2S 3H 4D 5C 6S 8H 9D TC JS QH")
    assert not makes_special(hand, "three_straights")
    assert not _witness(hand, "three_straights")


def test_5_three_flushes_needs_each_row_one_suit():
    assert not makes_special(c("2H 5H 9H 3S 7S 8S JS KS 4D 6D TD QD AC"), "three_flushes")
    # 8 + 5: the eight of one suit give the front and one five-card row.
    assert makes_special(c("2H 3H 5H 6H 8H 9H JH QH 4D 6D TD QD AD"), "three_flushes")


@pytest.mark.parametrize(
    ("special", "hand"),
    [(s, EXAMPLES[s]) for s in ("three_straight_flushes", "three_straights", "three_flushes")]
    + [("double_monster", OPTIONAL["double_monster"])],
)
def test_5_split_specials_show_a_foul_free_witness_split(special, hand):
    cards = c(hand)
    split = special_split(cards, special, ALL_ON)
    assert split is not None
    assert sorted(split.cards, key=lambda x: x.index) == sorted(cards, key=lambda x: x.index)
    front, middle, back = (evaluate(r) for r in split.rows())
    check_foul(front, middle, back)
    if special in ("three_flushes", "three_straight_flushes"):
        assert all(len({x.suit for x in row}) == 1 for row in split.rows())
    if special == "double_monster":
        assert (middle.category.id, back.category.id) == ("full_house", "full_house")
        assert front.category.id in ("pair", "trips")


def test_5_special_split_is_none_for_specials_without_a_split():
    assert special_split(c(EXAMPLES["six_pairs"]), "six_pairs") is None
    assert special_split(c(EXAMPLES["six_pairs"]), "three_flushes") is None


def _witness(cards, special):
    hand = Hand([x.index for x in cards], "lowest")
    mf, mm, mb = witness_masks(hand, special)
    return bool((mf[SPLIT_F] & mm[SPLIT_M] & mb[SPLIT_B]).any())


def _run(rng: random.Random, size: int, suit: int | None) -> list:
    start = rng.randrange(1, 15 - size + 1)
    ranks = [14 if r == 1 else r for r in range(start, start + size)]
    return [DECK[(r - 2) * 4 + (rng.randrange(4) if suit is None else suit)] for r in ranks]


def _built(rng: random.Random, special: str) -> list:
    """A hand built from rows that witness ``special`` (cards may collide: then retried)."""
    if special == "double_monster":
        ranks = rng.sample(range(2, 15), 6)
        sizes = (3, 3, 2, 2, 2, 1)
        return [
            DECK[(r - 2) * 4 + s]
            for r, n in zip(ranks, sizes, strict=True)
            for s in rng.sample(range(4), n)
        ]
    suited = special != "three_straights"
    if special == "three_flushes":
        suits = [rng.randrange(4) for _ in range(3)]
        return [
            DECK[(r - 2) * 4 + suit]
            for size, suit in zip((3, 5, 5), suits, strict=True)
            for r in rng.sample(range(2, 15), size)
        ]
    return [x for size in (3, 5, 5) for x in _run(rng, size, rng.randrange(4) if suited else None)]


def _near_miss_hands(rng: random.Random, special: str, n: int):
    """Hands likely to be, or almost be, ``special``: built witnesses, some with one card
    swapped, and hands from few suits, a narrow band of ranks or few ranks."""
    made = 0
    while made < n:
        kind = rng.randrange(4)
        if kind == 0:
            suits = rng.sample(range(4), rng.choice((2, 3)))
            pool = [x for x in DECK if x.suit in suits]
        elif kind == 1:
            lo = rng.randrange(2, 8)
            pool = [x for x in DECK if lo <= x.rank <= lo + 6 or x.rank == 14]
        elif kind == 2:
            ranks = rng.sample(range(2, 15), 5)
            pool = [x for x in DECK if x.rank in ranks]
        else:
            hand = _built(rng, special)
            if len(set(hand)) != 13:
                continue
            if rng.random() < 0.5:
                hand[rng.randrange(13)] = rng.choice([x for x in DECK if x not in hand])
            made += 1
            yield hand
            continue
        made += 1
        yield rng.sample(pool, 13)


@pytest.mark.parametrize("special", sorted(SPLIT_SPECIALS))
def test_5_counting_detection_agrees_with_an_exhaustive_split_search(special):
    """The fast rank/suit-count tests against all 72,072 splits, on hands built to be close."""
    rng = random.Random(special)
    hits = 0
    for hand in _near_miss_hands(rng, special, 1500):
        fast = makes_special(hand, special)
        assert fast == _witness(hand, special), [str(x) for x in hand]
        hits += fast
    assert hits > 50  # the generator does produce positives


def test_5_detection_is_pure_counting_and_order_independent():
    hand = list(c(EXAMPLES["three_straights"]))
    for seed in range(5):
        random.Random(seed).shuffle(hand)
        assert detect_special(hand, DEFAULT_CONFIG) == "three_straights"
    assert np.all([detect_special(hand, DEFAULT_CONFIG) == "three_straights"])

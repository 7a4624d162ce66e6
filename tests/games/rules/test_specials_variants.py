"""RULES.md §12.2 and §12.4: special hands with jokers and with 16 cards (some 13 of them).

Besides examples, the count-based predicates of :mod:`games.rules.wild` are checked against
brute force with the classic predicates: every value of a joker, every 13 of 16 cards.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from games.rules.cards import ALL_CARDS, DECK, RED_JOKER, Deck, parse_cards
from games.rules.config import RuleConfig
from games.rules.specials import detect_special, qualifying_specials
from games.rules.wild import wild_qualifying

ANY = Deck(extra_suits=2, jokers=2)


def c(text: str):
    return parse_cards(text.split(), deck=ANY)


def test_12_2_a_dragon_missing_one_rank_with_one_joker():
    hand = c("2S 3H 4C 5D 6S 7H 8C 9D TS JH QC KD RJ")
    assert detect_special(hand, RuleConfig.from_dict({"jokers": 2})) == "dragon"
    assert "dragon" not in qualifying_specials(c("2S 3H 4C 5D 6S 7H 8C 9D TS JH QC KD KS"))


def test_12_2_supreme_dragon_with_two_jokers():
    hand = c("2S 3S 4S 6S 7S 8S 9S TS JS QS KS RJ BJ")
    assert detect_special(hand, RuleConfig.from_dict({"jokers": 2})) == "supreme_dragon"


def test_12_2_the_red_joker_completes_an_all_black_one_color():
    hand = c("2S 4S 6S 9S JS 3C 5C 7C 8C TC QC KC RJ")
    assert "one_color" in qualifying_specials(hand)


def test_12_2_jokers_complete_groups():
    assert "six_pairs" in qualifying_specials(c("2S 2H 4S 4H 6S 6H 8S 8H TS TH QS KD RJ"))
    assert "three_quads" in qualifying_specials(c("AS AH AC AD KS KH KC QS QH QC 2D RJ BJ"))
    assert "four_trips" in qualifying_specials(c("AS AH AC KS KH KC QS QH QC JS JH 2D RJ"))
    assert "six_pairs" not in qualifying_specials(c("2S 2H 4S 4H 6S 6H 8S 8H TS JH QS KD RJ"))


def test_12_2_jokers_complete_row_specials():
    assert "three_flushes" in qualifying_specials(c("2C 3C 5C 2H 6H 8H TH RJ 3S 9S JS KS AS"))
    straights = c("AS 2H 3C 4D 5S 6H 7C 8D 9S TH JC QD RJ")
    assert "three_straights" in qualifying_specials(straights)
    sf = c("AS 2S 3S 4H 5H 6H 7H 8H 9C TC JC QC RJ")
    assert "three_straight_flushes" in qualifying_specials(sf)


def test_12_1_five_equal_cards_serve_as_trips_and_a_pair():
    hand = c("7S 7H 7C 7D 7D2 9S 9H JS JH QS QH KS KH")
    assert {"five_pairs_trips", "six_pairs"} <= qualifying_specials(hand)
    assert "four_trips" not in qualifying_specials(hand)


def test_12_4_some_13_of_16_make_the_special():
    cfg = RuleConfig.from_dict({"extra_suits": 1, "spare_cards": 3})
    dragon = c("2S 3H 4C 5D 6S 7H 8C 9D TS JH QC KD AS AH 2D2 7C")
    assert detect_special(dragon, cfg) == "dragon"
    pairs = c("2S 2H 4S 4H 6S 6H 8S 8H TS TH QS QH KD 3C 5D 9C")
    assert detect_special(pairs, cfg) == "six_pairs"
    no_seven = c("2S 3S 5H 6H 8C 9C JD QD KS AH 4C 9D TD2 3D2 5C 9S")
    assert "dragon" not in qualifying_specials(no_seven)
    assert "dragon" in qualifying_specials(no_seven[:-1] + c("7S"))


# -- against brute force ----------------------------------------------------------------------


def _biased_hands(rng: np.random.Generator, n: int, size: int) -> list[list[int]]:
    """Random hands, half of them from few ranks or few suits (so that specials occur)."""
    out = []
    while len(out) < n:
        kind = len(out) % 3
        if kind == 0:
            pool = np.arange(52)
        elif kind == 1:
            ranks = rng.choice(13, 6, replace=False)
            pool = np.array([r * 4 + s for r in ranks for s in range(4)])
        else:
            suits = rng.choice(4, 2, replace=False)
            pool = np.array([r * 4 + s for r in range(13) for s in suits])
        out.append([int(x) for x in rng.choice(pool, size, replace=False)])
    return out


def test_12_4_sixteen_cards_agree_with_every_13_of_them():
    rng = np.random.default_rng(124)
    for hand in _biased_hands(rng, 60, 16):
        cards = [DECK[i] for i in hand]
        brute: frozenset[str] = frozenset().union(
            *(qualifying_specials(list(sub)) for sub in combinations(cards, 13))
        )
        assert wild_qualifying(cards) == brute, [str(x) for x in cards]


@pytest.mark.parametrize("jokers", [1, 2])
def test_12_2_jokers_agree_with_every_value_they_can_take(jokers):
    rng = np.random.default_rng(122 + jokers)
    count = 150 if jokers == 1 else 12
    for hand in _biased_hands(rng, count, 13 - jokers):
        cards = [DECK[i] for i in hand]
        brute: set[str] = set()
        for values in combinations(range(52 + jokers - 1), jokers):
            filled = cards + [DECK[v % 52] for v in values]
            brute |= qualifying_specials(filled)
        # A joker equal to a held card is fine for every special but the one reading suits as
        # sets (three_straight_flushes), which the classic code never sees with duplicates.
        got = wild_qualifying(cards + [RED_JOKER, ALL_CARDS[79]][:jokers])
        assert got - {"three_straight_flushes"} == frozenset(brute) - {"three_straight_flushes"}

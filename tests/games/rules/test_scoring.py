"""RULES.md §7.1–7.3 (scoring) and the worked examples of §11."""

import pytest

from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.errors import DuplicateCardError, FoulError, NotSpecialError, WrongCountError
from games.rules.hands import evaluate
from games.rules.scoring import Declared, Seat, row_water, score_round

from .helpers import arr, c
from .reference import expected_home_run, expected_pair_water

# §11 example 1
EX1_A = arr("QS QC 3D", "8C 8D 8H 2S 2C", "9H TH JH QH KH")
EX1_B = arr("AS KD 4C", "AC AD 3S 3H 4H", "5S 6D 7C 8S 9D")

PLAIN = RuleConfig.from_dict(
    {
        "row_bonus": {k: 0 for k in DEFAULT_CONFIG.to_dict()["row_bonus"]},
        "gun_water": 0,
        "home_run_water": 0,
    }
)


# Every row ranks A > B > C > D.
HR_A = arr("AS AH 2C", "KS KH KD 3C 3D", "9C TC JC QC KC")
HR_B = arr("QS QH 2D", "JS JH JD 4C 4D", "8S 8H 8D 8C 2S")
HR_C = arr("TS TD 3S", "6S 6H 6D 5C 5D", "9S 9D 9H 7S 7H")
HR_D = arr("QD 5S 4S", "AD AC 7D 7C 6C", "TH 5H 4H 3H 2H")


RUN_OVER_A = arr("QS 9H 4D", "AD KC JH 3S 2C", "9S TH JD QC KH")
RUN_OVER_B = arr("QH 9D 4C", "AH KS JS 3C 2D", "7S 7D 5H 4S 6D")


def score(*hands, config=DEFAULT_CONFIG, **kw):
    seats = [Seat(chr(65 + i), h, **kw) for i, h in enumerate(hands)]
    return score_round(seats, config)


def test_11_1_two_players_default_config():
    r = score(EX1_A, EX1_B)
    (pair,) = r.pairs
    assert pair.rows == (1, 1, 1)
    assert (pair.row_water, pair.bonus_water, pair.gun, pair.gun_water) == (3, 5, "gun", 3)
    assert r.water == (11, -11)
    assert r.coins == (1100, -1100)
    assert r.settlement.deltas == (1100, -1100)


def test_11_3_three_players_with_two_specials():
    a = Declared("six_pairs", c("2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD"))
    b = Declared("all_small", c("2D 2C 3D 4C 4D 5C 6D 6C 7D 7C 8D 8C 3C"))
    cc = arr("QD JD 4S", "TS TH 9D 6S 4H", "AS AH AC KD QS")
    r = score(a, b, cc)
    assert r.specials == ("six_pairs", "all_small", None)
    assert r.water == (-8, 24, -16)


def test_7_1_each_row_pays_one_water_and_a_tie_pays_nothing():
    b = arr("QH 9D 5C", "AH KS TS 3C 2D", "7S 7D 5H 4S 6D")
    r = score(RUN_OVER_A, b)
    assert r.pairs[0].rows == (-1, 1, 1)
    assert r.water == (1, -1)


def test_7_1_four_player_row_sums_are_3_1_minus1_minus3():
    r = score(HR_A, HR_B, HR_C, HR_D, config=PLAIN)
    assert r.water == (9, 3, -3, -9)


BONUS_LOSER = arr("2S 3H 4D", "9C 9S 5D 4C 3C", "TS TH TC 5C 6S")


@pytest.mark.parametrize(
    ("winner", "bonus"),
    [
        (arr("7S 7H 7D", "8S 9D TD JC QS", "2H 4H 6H 9H KH"), 2),  # front trips
        (arr("5S 6H 9D", "8S 8H 8D 2C 2D", "AS AH AD 3S 3D"), 1),  # middle full house
        (arr("5S 6H 9D", "8S 8H 8D 8C 2D", "AS AH AD AC 3D"), 6 + 3),  # middle + back quads
        (arr("5S 6D 8C", "4H 5H 6H 7H 8H", "9D TD JD QD KD"), 8 + 4),  # middle + back SF
        (arr("5S 6H 9D", "7S 7H 6D 6C 2D", "AS AH AD AC KS"), 3),  # back quads
        (arr("5S 6H 8D", "7S 7H 6D 6C 2D", "9D TD JD QD KD"), 4),  # back straight flush
    ],
)
def test_7_1_row_bonus_goes_to_the_winner_of_that_row(winner, bonus):
    loser = BONUS_LOSER
    cfg = RuleConfig.from_dict({"gun_water": 0})
    r = score(winner, loser, config=cfg)
    assert r.pairs[0].rows == (1, 1, 1)
    assert r.pairs[0].bonus_water == bonus
    assert r.water == (3 + bonus, -3 - bonus)
    zero = RuleConfig.from_dict(
        {"gun_water": 0, "row_bonus": {k: 0 for k in DEFAULT_CONFIG.to_dict()["row_bonus"]}}
    )
    assert score(winner, loser, config=zero).water == (3, -3)


def test_7_1_bonus_is_paid_by_the_row_loser_even_when_holding_the_same_category():
    a = arr("2S 3H 4D", "5S 5H 6D 6C 2D", "AS AH AD AC QS")
    b = arr("5D 6H 7D", "9S 9H 8D 8C 3C", "KH KD KC KS 2C")
    r = score(a, b, config=RuleConfig.from_dict({"gun_water": 0}))
    assert r.pairs[0].rows == (-1, -1, 1)
    assert r.pairs[0].bonus_water == 3  # only the winner's quads count
    assert r.water == (-1 + 3, 1 - 3)


@pytest.mark.parametrize(
    ("row", "a", "b", "water"),
    [
        ("front", "7S 7H 7D", "AS KD 4C", 1 + 2),  # trips win the front: its bonus too
        ("front", "AS KD 4C", "7S 7H 7D", -(1 + 2)),
        ("middle", "8C 8D 8H 2S 2C", "AC AD 3S 3H 4H", 1 + 1),  # full house
        ("back", "AS AH AD AC QS", "KH KD KC KS 2C", 1 + 3),  # quads over quads
        ("back", "KH KD KC KS 2C", "AS AH AD AC QS", -(1 + 3)),  # the winner's bonus only
        ("middle", "5S 5H 6D 6C 2D", "5C 5D 6H 6S 2H", 0),  # a tie moves nothing
        ("back", "9S TH JD QC KH", "7S 7D 5H 4S 6D", 1),  # no bonus for a straight
    ],
)
def test_7_1_row_water_is_one_plus_the_winners_bonus(row, a, b, water):
    ha, hb = evaluate(c(a)), evaluate(c(b))
    assert row_water(row, ha, hb, DEFAULT_CONFIG) == water
    assert row_water(row, hb, ha, DEFAULT_CONFIG) == -water
    assert row_water(row, ha, hb, PLAIN) == (water > 0) - (water < 0)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize(
    ("row", "a", "b", "bonus"),
    [
        ("front", "7S 7H 7D", "AS KD 4C", 2),
        ("middle", "8C 8D 8H 2S 2C", "AC AD 3S 3H 4H", 1),
        ("back", "AS AH AD AC QS", "KH KD KC KS 2C", 3),
        ("back", "9S TH JD QC KH", "7S 7D 5H 4S 6D", 0),
    ],
)
def test_7_1_row_water_k_pays_k_plus_the_winners_bonus(row, a, b, bonus, k):
    cfg = RuleConfig(row_water=k)
    ha, hb = evaluate(c(a)), evaluate(c(b))
    assert row_water(row, ha, hb, cfg) == k + bonus
    assert row_water(row, hb, ha, cfg) == -(k + bonus)
    tie = evaluate(c("5S 5H 6D 6C 2D")), evaluate(c("5C 5D 6H 6S 2H"))
    assert row_water("middle", *tie, cfg) == 0


@pytest.mark.parametrize(
    ("k", "gun_mode", "water"),
    [
        (1, "fixed", 3 + 5 + 3),  # §11 example 1
        (2, "fixed", 3 * 2 + 5 + 3),  # the rows pay 2 each; bonuses and the gun stay
        (3, "fixed", 3 * 3 + 5 + 3),
        (2, "double", (3 * 2 + 5) * 2),  # the gun doubles row water + bonus
        (3, "double", (3 * 3 + 5) * 2),
    ],
)
def test_7_1_row_water_in_example_1(k, gun_mode, water):
    r = score(EX1_A, EX1_B, config=RuleConfig(row_water=k, gun_mode=gun_mode))
    (pair,) = r.pairs
    assert (pair.row_water, pair.bonus_water) == (3 * k, 5)
    assert r.water == (water, -water)


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("gun_mode", ["fixed", "double"])
@pytest.mark.parametrize("run_over", [True, False])
def test_7_1_row_water_k_matches_the_reference_computation(k, gun_mode, run_over):
    """Home runs, guns, run-overs, ties and specials, scored with row water 2 and 3, against
    the reference reading of §7 (tests/games/rules/reference.py)."""
    cfg = RuleConfig(row_water=k, gun_mode=gun_mode, run_over_counts_as_gun=run_over)
    special = Declared("six_pairs", c("TS TD 6S 6H 5C 5D 9S 9D 7S 7H AD AC 3S"))
    tables = [
        (HR_A, HR_B, HR_C, HR_D),
        (HR_A, HR_B, HR_C),
        (RUN_OVER_A, RUN_OVER_B),
        (EX1_A, EX1_B),
        (HR_A, HR_B, special),
    ]
    for hands in tables:
        r = score(*hands, config=cfg)
        assert r.home_run == expected_home_run(r, cfg)
        for p in r.pairs:
            assert (p.rows, p.water) == expected_pair_water(r, p.a, p.b, cfg)
        assert sum(r.water) == 0


def test_7_2_home_run_in_double_mode_doubles_row_water_k_twice():
    r = score(HR_A, HR_B, HR_C, config=RuleConfig(row_water=3, gun_mode="double"))
    ab, ac, bc = r.pairs
    assert ab.row_water == 9
    assert ab.water == 4 * (9 + ab.bonus_water)
    assert bc.water == 2 * (9 + bc.bonus_water)


def test_7_3_row_water_does_not_change_special_water():
    a = Declared("six_pairs", c("2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD"))
    b = Declared("all_small", c("2D 2C 3D 4C 4D 5C 6D 6C 7D 7C 8D 8C 3C"))
    cc = arr("QD JD 4S", "TS TH 9D 6S 4H", "AS AH AC KD QS")
    assert score(a, b, cc, config=RuleConfig(row_water=3)).water == (-8, 24, -16)


def test_7_2_gun_pays_gun_water_on_top():
    r = score(EX1_A, EX1_B, config=RuleConfig.from_dict({"gun_water": 5}))
    assert r.water == (3 + 5 + 5, -(3 + 5 + 5))


def test_7_2_run_over_one_win_two_ties_counts_as_gun_by_default():
    r = score(RUN_OVER_A, RUN_OVER_B)
    assert r.pairs[0].rows == (0, 0, 1)
    assert r.pairs[0].gun == "gun"
    assert r.water == (1 + 3, -4)


def test_7_2_run_over_off_no_gun():
    r = score(RUN_OVER_A, RUN_OVER_B, config=RuleConfig(run_over_counts_as_gun=False))
    assert r.pairs[0].gun is None
    assert r.water == (1, -1)


def test_7_2_three_ties_are_no_gun():
    a = arr("QS 9H 4D", "AD KC JH 3S 2C", "8S 8H TC TD 5S")
    b = arr("QH 9D 4C", "AH KS JS 3C 2D", "8D 8C TS TH 5C")
    r = score(a, b)
    assert r.pairs[0].rows == (0, 0, 0)
    assert r.pairs[0].gun is None
    assert r.water == (0, 0)


def test_7_2_a_lost_row_means_no_gun():
    b = arr("QH 9D 5C", "AH KS JS 3C 2D", "7S 7D 5H 4S 6D")
    r = score(RUN_OVER_A, b)
    assert r.pairs[0].rows == (-1, 0, 1)
    assert r.pairs[0].gun is None


def test_7_2_home_run_fixed_pays_home_run_water_instead_of_gun_water():
    r = score(HR_A, HR_B, HR_C)
    assert r.home_run == 0
    ab, ac, bc = r.pairs
    assert (ab.gun, ac.gun, bc.gun) == ("home_run", "home_run", "gun")
    assert ab.gun_water == ac.gun_water == 12
    assert bc.gun_water == 3


def test_7_2_home_run_needs_home_run_min_players():
    r = score(HR_A, HR_B, HR_C, config=RuleConfig(home_run_min_players=4))
    assert r.home_run is None
    assert all(p.gun == "gun" for p in r.pairs)


def test_7_2_two_players_never_make_a_home_run_by_default():
    r = score(HR_A, HR_B)
    assert r.home_run is None
    assert r.pairs[0].gun == "gun"


def test_7_2_home_run_needs_every_other_player_arranged_normally():
    special = Declared("six_pairs", c("TS TD 6S 6H 5C 5D 9S 9D 7S 7H AD AC 3S"))
    r = score(HR_A, HR_B, special, config=RuleConfig(home_run_min_players=2))
    assert r.home_run is None
    assert r.pairs[0].gun == "gun"


def test_7_2_double_mode_doubles_the_gun_and_again_for_a_home_run():
    r = score(EX1_A, EX1_B, config=RuleConfig(gun_mode="double"))
    assert r.water == (16, -16)  # (3 rows + 5 bonus) doubled
    r = score(HR_A, HR_B, HR_C, config=RuleConfig(gun_mode="double"))
    ab, ac, bc = r.pairs
    assert ab.water == 4 * (ab.row_water + ab.bonus_water)
    assert ac.water == 4 * (ac.row_water + ac.bonus_water)
    assert bc.water == 2 * (bc.row_water + bc.bonus_water)


def test_7_3_special_against_normal_wins_its_water():
    special = Declared("six_pairs", c("2S 2H 5H 5D 6S 6H 7S 7H TS TH JS JH QS"))
    r = score(special, EX1_B)
    assert r.pairs[0].rows is None
    assert r.water == (4, -4)


def test_7_3_higher_special_wins_its_own_water_from_a_lower_one():
    low = Declared("six_pairs", c("2S 2H 5H 5D 6S 6H 7S 7H TS TH JS JH QS"))
    high = Declared("all_small", c("2D 2C 3S 3H 3D 4S 4H 5S 5C 6D 7D 8S 8H"))
    assert score(low, high).water == (-12, 12)
    # With the order reversed by configuration, six_pairs wins its own 4.
    order = [s.id for s in DEFAULT_CONFIG.specials]
    order.remove("six_pairs")
    order.insert(0, "six_pairs")
    assert score(low, high, config=RuleConfig.from_dict({"special_order": order})).water == (4, -4)


def test_7_3_same_special_on_both_sides_is_a_tie():
    a = Declared("six_pairs", c("2S 2H 5H 5D 6S 6H 7S 7H TS TH JS JH QS"))
    b = Declared("six_pairs", c("2D 2C 5S 5C 6D 6C 7D 7C TD TC JD JC QH"))
    assert score(a, b).water == (0, 0)


def test_7_3_declared_special_scores_as_the_highest_one_the_cards_make():
    hand = c("2S 2H TS TH 5H 5D 7S 7H 9S 9H KS KH KC")  # five pairs and trips
    r = score(Declared("six_pairs", hand), EX1_B)
    assert r.specials[0] == "five_pairs_trips"
    assert r.water == (5, -5)


def test_7_3_specials_are_neither_shooters_nor_targets():
    special = Declared("six_pairs", c("TS TD 6S 6H 5C 5D 9S 9D 7S 7H AD AC 3S"))
    r = score(HR_A, HR_B, special)
    assert r.pairs[1].gun is None and r.pairs[2].gun is None


def test_bad_hands_are_rejected_naming_the_player():
    fouled = arr("2S 3C 4D", "9H TH JH QH KH", "8C 8D 8H 2C 2D")
    with pytest.raises(FoulError, match="player B: foul: middle"):
        score(EX1_B, fouled)
    with pytest.raises(NotSpecialError, match="player A: the cards do not make six_pairs"):
        score(Declared("six_pairs", c("2S 5H 9S JC KS 3C 7D 8C QS 4D 6C TC 2C")), EX1_B)
    monster = c("2S 2H 9H 5C 5H 5D 8C 8H JH JD JC QS QH")
    with pytest.raises(NotSpecialError, match="disabled"):
        score(Declared("double_monster", monster), EX1_B)
    with pytest.raises(NotSpecialError, match="unknown special"):
        score(Declared("seven_pairs", monster), EX1_B)
    with pytest.raises(DuplicateCardError):
        score(EX1_A, EX1_A)
    with pytest.raises(WrongCountError):
        score(EX1_A)

"""RULES.md §6: arranging, suggestions and auto-arrange."""

import random

import numpy as np
import pytest

from games.rules.arrange import Hand, Policy, arrange, best_arrangement
from games.rules.cards import DECK
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.errors import DuplicateCardError, WrongCountError
from games.rules.expected_water import water_model
from games.rules.hands import evaluate, foul_rows
from games.rules.scoring import Seat, score_round

from .helpers import c


def hands(n: int, seed: int = 1):
    rng = random.Random(seed)
    return [rng.sample(DECK, 13) for _ in range(n)]


def is_foul_free(a, a2345: str = "lowest") -> bool:
    return not foul_rows(*(evaluate(r, a2345) for r in a.rows()))


@pytest.mark.parametrize("a2345", ["lowest", "second"])
def test_6_suggestions_are_foul_free_distinct_and_use_exactly_the_13_cards(a2345):
    cfg = RuleConfig(a2345=a2345)
    for hand in hands(150, seed=len(a2345)):
        result = arrange(hand, cfg)
        assert 1 <= len(result.suggestions) <= 10
        assert result.best == result.suggestions[0]
        triples = [s.categories for s in result.suggestions]
        assert len(set(triples)) == len(triples)
        values = [s.expected_water for s in result.suggestions]
        assert values == sorted(values, reverse=True)
        for s in result.suggestions:
            a = s.arranged()
            assert sorted(a.cards, key=lambda x: x.index) == sorted(hand, key=lambda x: x.index)
            assert is_foul_free(a, a2345)
            assert tuple(evaluate(r, a2345).category for r in a.rows()) == s.categories


def test_6_limit_caps_the_number_of_suggestions():
    hand = hands(1)[0]
    assert len(arrange(hand, limit=3).suggestions) <= 3
    assert len(arrange(hand, limit=1).suggestions) == 1


def test_6_best_is_deterministic_whatever_the_order_of_the_cards():
    for hand in hands(20, seed=9):
        first = arrange(hand)
        shuffled = list(hand)
        random.Random(3).shuffle(shuffled)
        assert arrange(shuffled) == first


def test_6_best_is_the_best_of_its_category_triple_and_overall():
    """No foul-free split has a higher expected water than the best (checked on the model)."""
    for hand in hands(20, seed=4):
        h = Hand([x.index for x in hand], "lowest")
        splits = np.flatnonzero(h.valid)
        values, _ = water_model(DEFAULT_CONFIG, 3).split_values(h, *h.rows_of(splits))
        assert arrange(hand).best.expected_water == pytest.approx(values.max(), abs=1e-3)


def test_6_auto_arrange_never_fouls_and_scores():
    deck = list(DECK)
    random.Random(11).shuffle(deck)
    seats = [Seat(str(i), best_arrangement(deck[13 * i : 13 * i + 13])) for i in range(4)]
    result = score_round(seats, DEFAULT_CONFIG)
    assert sum(result.water) == 0


def test_6_a_monster_hand_puts_straight_flushes_in_middle_and_back():
    result = arrange(c("2S 3S 4S 5S 6S 7H 8H 9H TH JH QD KD AD"))
    cats = [x.id for x in result.best.categories]
    assert cats[1:] == ["straight_flush", "straight_flush"]
    assert result.special == "dragon"


def test_6_row_bonuses_in_force_change_the_choice():
    """Trips in front pay +2 by default; a hand that can put them there does, and with the
    bonus at 0 the model weighs it like any other trips."""
    hand = c("7S 7H 7D 8S 8H 8D 2C 2D AS AH AD AC KS")
    default = arrange(hand).best
    assert default.categories[0].id == "trips"
    assert (
        default.expected_water
        > arrange(hand, RuleConfig.from_dict({"row_bonus": {"front.trips": 0}})).best.expected_water
    )


def test_6_gun_settings_change_expected_water():
    hand = hands(1, seed=5)[0]
    low = arrange(hand, RuleConfig(gun_water=0, home_run_water=0)).best.expected_water
    double = arrange(hand, RuleConfig(gun_mode="double")).best.expected_water
    assert low != arrange(hand).best.expected_water
    assert double != low


def test_6_wrong_input_is_rejected():
    with pytest.raises(WrongCountError):
        arrange(c("2S 3S 4S"))
    with pytest.raises(DuplicateCardError):
        arrange([*c("2S 3S 4S 5S 6S 7H 8H 9H TH JH QD KD"), DECK[0]])


@pytest.mark.parametrize("name", Policy.NAMES)
def test_6_every_policy_returns_a_foul_free_split_of_the_13_cards(name):
    from games.rules.scoring import Arranged

    policy = Policy(name)
    for hand in hands(30, seed=7):
        order = policy.choose([x.index for x in hand])
        assert sorted(order) == sorted(x.index for x in hand)
        cards = [DECK[i] for i in order]
        assert is_foul_free(Arranged(tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:])))


@pytest.mark.parametrize(
    "config",
    [
        DEFAULT_CONFIG,
        RuleConfig(row_water=3),
        RuleConfig.from_dict({"row_water": 2, "row_bonus": {"front.trips": 5, "back.quads": 0}}),
    ],
    ids=["default", "row_water_3", "row_water_2_other_bonuses"],
)
def test_7_1_the_models_row_water_is_the_scorers_over_the_reference_rows(config):
    """The model's expected row water of a row (its first feature column) is the average of
    what the scorer's :func:`row_water` gives that row against every row of the reference
    distribution: the vectorized tables price ``row_water`` and the bonuses as §7.1 does."""
    from games.rules.expected_water import row_classes
    from games.rules.hands import Category, RowHand
    from games.rules.scoring import row_water
    from games.rules.tables import load
    from games.rules.vectorized import B3, B5

    t = load()
    model = water_model(config, 3)
    cls = row_classes(config.a2345)
    for row, size, universe, table, div in (
        ("front", 3, cls.cross, model.front, B3),
        ("middle", 5, cls.keys5, model.middle, B5),
        ("back", 5, cls.keys5, model.back, B5),
    ):

        def hand(key: int, size: int = size, div: int = div) -> RowHand:
            return RowHand(size, Category(key // div), (), key, key)

        dist = t.rows[(config.a2345, row)]
        opponents = [(hand(int(k)), int(n)) for k, n in zip(dist.keys, dist.counts, strict=True)]
        # Classes spread over the whole range, and every row the reference plays often.
        picks = set(np.linspace(0, len(universe) - 1, 12).astype(int).tolist())
        picks |= set(np.searchsorted(universe, dist.keys[np.argsort(dist.counts)[-4:]]).tolist())
        for cls_index in sorted(picks):
            mine = hand(int(universe[cls_index]))
            exact = sum(n * row_water(row, mine, opp, config) for opp, n in opponents) / dist.total
            assert table[cls_index, 0] == pytest.approx(exact, rel=1e-4, abs=1e-4), (row, cls_index)


def test_7_2_the_models_double_gun_doubles_row_water_k():
    """In ``double`` mode a sure gun is worth the three rows' water again (3 × row water plus
    the bonuses), and a sure gunned split loses it: the model's gun terms scale with
    ``row_water`` as the scorer's do (§7.2)."""
    n = 3  # opponents; no home run below 5 players
    sure_win = np.array([[0.0, 1.0, 0.0, 0.0, 0.0]], dtype=np.float32)
    sure_loss = np.array([[0.0, 0.0, 1.0, 0.0, 0.0]], dtype=np.float32)
    no_bonus = np.zeros(1)
    values = {}
    for k in (1, 3):
        model = water_model(RuleConfig(row_water=k, gun_mode="double", home_run_min_players=5), n)
        win, _ = model.values_of(sure_win, sure_win, sure_win, lambda: no_bonus)
        loss, _ = model.values_of(sure_loss, sure_loss, sure_loss, lambda: no_bonus)
        values[k] = (float(win[0]), float(loss[0]))
    assert values[1][0] == pytest.approx(n * 3)
    assert values[3][0] == pytest.approx(n * 9)
    assert values[3][1] - values[1][1] == pytest.approx(-n * 6)

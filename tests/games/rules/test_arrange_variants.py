"""RULES.md §6 with §12.2 and §12.4: the best arrangement and suggestions with jokers and with
spare cards (which 13 of 16), under the same expected-water model."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules import arrange as engine
from games.rules.api import handle
from games.rules.cards import ALL_CARDS, Card, parse_cards
from games.rules.config import RuleConfig
from games.rules.expected_water import water_model
from games.rules.hands import check_foul, evaluate, foul_rows
from games.rules.presets import preset_config
from games.rules.spare import arrange16

LAIZI = preset_config("laizi")
DUOSANZHANG = preset_config("duosanzhang")
JOKERS_SPARE = RuleConfig.from_dict({"jokers": 2, "spare_cards": 3, "extra_suits": 1})


def check(cards: list[Card], config: RuleConfig, limit: int = 10) -> None:
    result = engine.arrange(cards, config, limit=limit)
    assert result.best == result.suggestions[0]
    assert len(result.suggestions) <= limit
    triples = [s.categories for s in result.suggestions]
    assert len(set(triples)) == len(triples)
    for s in result.suggestions:
        rows = [evaluate(r, config.a2345) for r in (s.front, s.middle, s.back)]
        assert foul_rows(*rows) == ()
        assert tuple(r.category for r in rows) == s.categories
        used = s.front + s.middle + s.back + s.unused
        assert sorted(c.index for c in used) == sorted(c.index for c in cards)
        assert len(s.unused) == config.spare_cards
    values = [s.expected_water for s in result.suggestions]
    assert values == sorted(values, reverse=True)


deal = st.randoms(use_true_random=False)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=deal, jokers=st.integers(1, 2), limit=st.integers(1, 10))
def test_12_2_arrange_with_jokers_never_fouls_and_uses_the_13_cards(rng, jokers, limit):
    deck = [c for c in LAIZI.deck.cards if not c.is_joker]
    cards = rng.sample(deck, 13 - jokers) + [ALL_CARDS[78], ALL_CARDS[79]][:jokers]
    check(cards, LAIZI, limit)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=deal, config=st.sampled_from([DUOSANZHANG, JOKERS_SPARE]))
def test_12_4_arrange_16_cards_never_fouls_and_sets_three_aside(rng, config):
    cards = rng.sample(list(config.deck.cards), 16)
    check(cards, config)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rng=deal, config=st.sampled_from([LAIZI, DUOSANZHANG]))
def test_12_arrange_is_deterministic_in_any_input_order(rng, config):
    cards = rng.sample(list(config.deck.cards), config.hand_size)
    shuffled = list(cards)
    rng.shuffle(shuffled)
    assert engine.arrange(cards, config) == engine.arrange(shuffled, config)


# A random hand, and one whose bounds stay loose (the search stops at MAX_BACKS backs).
HARD_16 = "TD2 8D 6H JS TH KC TD JD2 2D2 2D 9H 3D 8S 4D 4H 6C"


@pytest.mark.parametrize("hand", ["random", HARD_16])
def test_12_4_the_pruned_search_finds_the_best_of_every_13_of_16(hand):
    if hand == "random":
        indices = [int(i) for i in np.random.default_rng(124).choice(65, 16, replace=False)]
    else:
        indices = [c.index for c in parse_cards(hand.split(), deck=DUOSANZHANG.deck)]
    model = water_model(DUOSANZHANG, 3)
    best = max(
        float(model.split_values(h, *h.rows_of(np.flatnonzero(h.valid)))[0].max())
        for h in (engine.Hand(list(sub), "lowest", True) for sub in combinations(indices, 13))
    )
    assert arrange16(indices, DUOSANZHANG, 3, 1)[0].value == round(best, 4)


def test_12_2_a_joker_goes_where_it_helps_most():
    cards = [ALL_CARDS[i] for i in (48, 49, 50, 44, 45, 40, 36, 32, 28, 8, 4, 0, 78)]
    best = engine.arrange(cards, LAIZI).best
    check_foul(*(evaluate(r) for r in (best.front, best.middle, best.back)))
    assert any(c.is_joker for c in best.front + best.middle + best.back)


def test_12_cli_arrange_with_spare_cards_names_the_unused_three():
    cards = [
        "AS",
        "AH",
        "AC",
        "KS",
        "KH",
        "QS",
        "QH",
        "JD",
        "TD",
        "9C",
        "8C",
        "7S",
        "5D",
        "4H",
        "3C",
        "2D2",
    ]
    got = handle("arrange", {"cards": cards, "config": {"extra_suits": 1, "spare_cards": 3}})
    assert set(got["best"]) == {"front", "middle", "back", "unused"}
    for s in got["suggestions"]:
        used = s["front"] + s["middle"] + s["back"] + s["unused"]
        assert sorted(used) == sorted(cards)


def test_12_cli_arrange_with_jokers_reports_their_values():
    cards = ["AS", "AH", "AC", "KS", "KH", "QS", "QH", "JD", "TD", "9C", "8C", "RJ", "BJ"]
    got = handle("arrange", {"cards": cards, "config": {"jokers": 2}})
    best = got["suggestions"][0]
    assert set(best["jokers"]) == {"RJ", "BJ"}


def test_12_cli_special_split_with_a_joker_and_with_16_cards():
    three_flushes = ["2C", "3C", "5C", "2H", "6H", "8H", "TH", "RJ", "3S", "9S", "JS", "KS", "AS"]
    got = handle("special", {"cards": three_flushes, "config": {"jokers": 2}})
    assert got["special"] == "three_flushes"
    for row in got["split"].values():
        suits = {c[1] for c in row if c not in ("RJ", "BJ")}
        assert len(suits) == 1
    pairs = [
        "2S",
        "2H",
        "4S",
        "4H",
        "6S",
        "6H",
        "8S",
        "8H",
        "TS",
        "TH",
        "QS",
        "QH",
        "KD",
        "3C",
        "5D",
        "9C",
    ]
    got = handle("special", {"cards": pairs, "config": {"extra_suits": 1, "spare_cards": 3}})
    assert got["special"] == "six_pairs" and len(got["unused"]) == 3
    with pytest.raises(Exception, match="16 cards"):
        handle("special", {"cards": pairs[:13], "config": {"spare_cards": 3}})


@pytest.mark.parametrize("preset", ["classic", "duoyise", "laizi", "duosanzhang"])
def test_12_each_preset_deck_has_its_own_row_tables(preset):
    from games.rules.tables import data_path, deck_name, load

    name = deck_name(preset_config(preset))
    assert data_path(name).exists()
    tables = load(name)
    assert tables.deals > 0 and 0 < tables.gun_rate < 1

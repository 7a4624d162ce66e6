"""RULES.md §5.1: the advice on a special hand — its water against the best arrangement's
expected water for the same cards, this configuration and this many opponents."""

from __future__ import annotations

import pytest

from games.rules.advice import special_advice
from games.rules.arrange import arrange
from games.rules.cards import parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig

DRAGON = parse_cards(["AS", "KH", "QD", "JC", "TS", "9H", "8D", "7C", "6S", "5H", "4D", "3C", "2S"])
SIX_PAIRS = parse_cards(
    ["AS", "AH", "KS", "KH", "QS", "QH", "JS", "JH", "TS", "TH", "9S", "9H", "2C"]
)


def test_5_1_a_dragon_is_worth_declaring_against_any_number_of_opponents() -> None:
    for opponents in range(1, 6):
        advice = special_advice(DRAGON, DEFAULT_CONFIG, "dragon", opponents)
        assert advice.special_water == 36 * opponents
        assert advice.recommend == "special"
        assert advice.arrange_water < advice.special_water


def test_5_1_the_arrangement_is_valued_by_the_suggestions_model_for_those_opponents() -> None:
    for opponents in (1, 3):
        advice = special_advice(SIX_PAIRS, DEFAULT_CONFIG, "six_pairs", opponents)
        best = arrange(SIX_PAIRS, DEFAULT_CONFIG, limit=1, opponents=opponents).best
        assert advice.arrange_water == best.expected_water
        assert advice.best == best
        assert advice.opponents == opponents


def test_5_1_the_advice_follows_the_admins_water() -> None:
    worthless = RuleConfig.from_dict({"specials": {"six_pairs": {"water": 0}}}, base=DEFAULT_CONFIG)
    precious = RuleConfig.from_dict({"specials": {"six_pairs": {"water": 50}}}, base=DEFAULT_CONFIG)
    low = special_advice(SIX_PAIRS, worthless, "six_pairs", 3)
    high = special_advice(SIX_PAIRS, precious, "six_pairs", 3)
    assert low.special_water == 0 and low.recommend == "arrange"
    assert high.special_water == 150 and high.recommend == "special"
    # The same cards and opponents: the arrangement's value does not depend on the special's.
    assert low.arrange_water == high.arrange_water


def test_5_1_a_tie_recommends_the_special_it_is_certain() -> None:
    advice = special_advice(SIX_PAIRS, DEFAULT_CONFIG, "six_pairs", 3)
    tied = type(advice)(advice.special, 3, 6, 6.0, advice.best)
    assert tied.recommend == "special"


def test_5_1_the_advice_as_the_table_sends_it() -> None:
    advice = special_advice(DRAGON, DEFAULT_CONFIG, "dragon", 2)
    data = advice.to_json()
    assert data == {
        "special": "dragon",
        "opponents": 2,
        "special_water": 72,
        "arrange_water": round(advice.arrange_water, 2),
        "recommend": "special",
    }


def test_5_1_advice_with_spare_cards_values_the_16_card_hand() -> None:
    config = RuleConfig.from_dict({"extra_suits": 1, "spare_cards": 3}, base=DEFAULT_CONFIG)
    cards = parse_cards(
        [
            "AS",
            "KH",
            "QD",
            "JC",
            "TS",
            "9H",
            "8D",
            "7C",
            "6S",
            "5H",
            "4D",
            "3C",
            "2S",
            "2D2",
            "3D2",
            "4D2",
        ],
        deck=config.deck,
    )
    advice = special_advice(cards, config, "dragon", 3)
    assert advice.special_water == config.special("dragon").water * 3
    assert len(advice.best.unused) == 3 and advice.recommend == "special"


def test_5_1_opponents_are_one_to_five() -> None:
    for bad in (0, 6):
        with pytest.raises(ValueError, match="opponents"):
            special_advice(DRAGON, DEFAULT_CONFIG, "dragon", bad)

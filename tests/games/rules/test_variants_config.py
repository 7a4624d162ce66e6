"""RULES.md §12: the variant decks in the configuration, the card names and the presets."""

import pytest

from games.rules.cards import ALL_CARDS, DECK, Card, Deck, Rank, Suit, parse_card, parse_cards
from games.rules.config import RuleConfig
from games.rules.errors import ConfigError, DuplicateCardError, InvalidCardError
from games.rules.presets import PRESET_IDS, PRESETS, preset_config


def test_12_1_copies_are_diamonds_named_with_their_copy_number():
    card = parse_card("7d2", Deck(extra_suits=1))
    assert (card.rank, card.suit, card.copy, str(card)) == (Rank.SEVEN, Suit.DIAMONDS, 2, "7D2")
    assert card != parse_card("7D") and card.index == 52 + 5
    assert str(parse_card("10D3", Deck(extra_suits=2))) == "TD3"


@pytest.mark.parametrize("text", ["7D1", "7S2", "7H3", "7D4", "RJ2", "JK"])
def test_12_1_only_diamonds_have_copies_and_there_is_no_copy_1(text):
    with pytest.raises(InvalidCardError):
        parse_card(text, Deck(extra_suits=2, jokers=2))


def test_12_1_a_card_the_deck_does_not_have_is_a_bad_card():
    with pytest.raises(InvalidCardError, match="not in this deck"):
        parse_card("7D2")
    with pytest.raises(InvalidCardError, match="not in this deck"):
        parse_card("7D3", Deck(extra_suits=1))
    with pytest.raises(InvalidCardError, match="not in this deck"):
        parse_card("RJ", Deck(extra_suits=1))


def test_12_2_jokers_parse_case_insensitively_and_are_wild():
    deck = Deck(jokers=2)
    rj, bj = parse_card("rj", deck), parse_card("BJ", deck)
    assert rj.is_joker and bj.is_joker and rj != bj
    assert (str(rj), str(bj), rj.index, bj.index) == ("RJ", "BJ", 78, 79)
    with pytest.raises(DuplicateCardError):
        parse_cards(["RJ", "rj"], deck=deck)


@pytest.mark.parametrize(
    ("extra_suits", "jokers", "size"),
    [(0, 0, 52), (1, 0, 65), (2, 0, 78), (0, 2, 54), (1, 2, 67), (2, 2, 80)],
)
def test_12_deck_sizes_and_every_card_has_its_own_name(extra_suits, jokers, size):
    deck = Deck(extra_suits, jokers)
    cards = deck.cards
    assert len(cards) == size == deck.size == len({str(c) for c in cards})
    assert all(parse_card(str(c), deck) == c for c in cards)
    assert all(Card.from_index(c.index) == c for c in ALL_CARDS)
    assert cards[:52] == DECK


@pytest.mark.parametrize(
    ("overrides", "seats"),
    [
        ({}, 4),
        ({"extra_suits": 1}, 5),
        ({"extra_suits": 2}, 6),
        ({"jokers": 2}, 4),
        ({"extra_suits": 1, "jokers": 2}, 5),
        ({"spare_cards": 3}, 3),
        ({"extra_suits": 1, "spare_cards": 3}, 4),
        ({"extra_suits": 2, "jokers": 2, "spare_cards": 3}, 5),
    ],
)
def test_12_seats_allowed_by_the_deck(overrides, seats):
    cfg = RuleConfig.from_dict(overrides)
    assert cfg.max_seats == seats
    assert cfg.hand_size == 13 + cfg.spare_cards
    assert RuleConfig.from_dict(cfg.to_dict()) == cfg


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"extra_suits": 3}, "extra_suits must be one of 0, 1, 2"),
        ({"jokers": 1}, "jokers must be one of 0, 2"),
        ({"spare_cards": 2}, "spare_cards must be one of 0, 3"),
        ({"spare_cards": True}, "spare_cards must be one of 0, 3"),
        ({"home_run_min_players": 6}, "home_run_min_players must be between 2 and 5"),
        ({"extra_suits": 1, "home_run_min_players": 6}, "between 2 and 5"),
        ({"row_bonus": {"front.five_of_a_kind": 1}}, "unknown row bonus"),
    ],
)
def test_12_bad_variant_configurations_are_bad_config(overrides, message):
    with pytest.raises(ConfigError, match=message) as err:
        RuleConfig.from_dict(overrides)
    assert err.value.code == "bad_config"


def test_12_5_home_run_min_players_up_to_the_deck_seats():
    assert RuleConfig.from_dict({"extra_suits": 2, "home_run_min_players": 6}).max_seats == 6


def test_12_3_five_of_a_kind_bonuses_are_configurable():
    cfg = RuleConfig.from_dict({"extra_suits": 1, "row_bonus": {"middle.five_of_a_kind": 7}})
    assert dict(cfg.row_bonus)["middle.five_of_a_kind"] == 7
    assert dict(cfg.row_bonus)["back.five_of_a_kind"] == 5
    assert cfg.five_of_a_kind and not RuleConfig().five_of_a_kind


def test_12_6_presets_are_engine_data():
    assert PRESET_IDS[:6] == ("classic", "duoyise", "laizi", "duosanzhang", "fuzhou", "regional")
    assert preset_config("classic") == RuleConfig()
    duoyise = preset_config("duoyise")
    assert (duoyise.deck.size, duoyise.max_seats) == (65, 5)
    assert [s.id for s in duoyise.enabled_specials] == ["supreme_dragon", "dragon"]
    laizi = preset_config("laizi")
    assert (laizi.deck.size, laizi.jokers, laizi.max_seats) == (54, 2, 4)
    duosanzhang = preset_config("duosanzhang")
    assert (duosanzhang.hand_size, duosanzhang.max_seats) == (16, 4)
    fuzhou = preset_config("fuzhou")
    assert fuzhou.gun_mode == "double"
    assert [(s.id, s.water) for s in fuzhou.enabled_specials] == [
        ("supreme_dragon", 108),
        ("dragon", 36),
        ("six_pairs", 4),
        ("three_flushes", 3),
        ("three_straights", 3),
    ]
    regional = preset_config("regional")
    order = [s.id for s in regional.enabled_specials]
    assert order[4:10] == [
        "three_quads",
        "one_color",
        "all_big",
        "all_small",
        "trips_and_bomb",
        "four_trips",
    ]
    waters = {s.id: s.water for s in regional.enabled_specials}
    assert waters["supreme_dragon"] == 104 and waters["one_color"] == 15
    assert waters["six_pairs"] == 3 and waters["trips_and_bomb"] == 8
    bonus = dict(regional.row_bonus)
    totals = {k: v + 1 for k, v in bonus.items() if "five" not in k}
    assert totals == {
        "front.trips": 4,
        "middle.full_house": 3,
        "middle.quads": 10,
        "middle.straight_flush": 12,
        "back.quads": 5,
        "back.straight_flush": 6,
    }
    with pytest.raises(ConfigError, match="unknown preset"):
        preset_config("vegas")
    assert all(PRESETS[p].config == preset_config(p) for p in PRESET_IDS)

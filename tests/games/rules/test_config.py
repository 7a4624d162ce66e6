"""RULES.md §5–8: the rule configuration as a frozen, validated, JSON round-tripping value."""

import dataclasses
import json

import pytest

from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.errors import ConfigError
from games.rules.hands import Category


def test_defaults_are_rules_md_defaults():
    cfg = DEFAULT_CONFIG
    assert cfg.a2345 == "lowest"
    assert [(s.id, s.water) for s in cfg.enabled_specials] == [
        ("supreme_dragon", 108),
        ("dragon", 36),
        ("twelve_royals", 24),
        ("three_straight_flushes", 22),
        ("three_quads", 20),
        ("all_big", 15),
        ("all_small", 12),
        ("one_color", 10),
        ("four_trips", 6),
        ("five_pairs_trips", 5),
        ("six_pairs", 4),
        ("three_straights", 3),
        ("three_flushes", 3),
    ]
    assert not cfg.special("double_monster").enabled
    assert cfg.special("double_monster").water == 6
    assert cfg.special("trips_and_bomb").water == 8
    assert dict(cfg.row_bonus) == {
        "front.trips": 2,
        "middle.full_house": 1,
        "middle.quads": 6,
        "middle.straight_flush": 8,
        "back.quads": 3,
        "back.straight_flush": 4,
        # RULES.md §12.3: reachable only with the variant decks.
        "middle.five_of_a_kind": 10,
        "back.five_of_a_kind": 5,
    }
    assert (cfg.extra_suits, cfg.jokers, cfg.spare_cards) == (0, 0, 0)
    assert (cfg.run_over_counts_as_gun, cfg.gun_mode, cfg.gun_water) == (True, "fixed", 3)
    assert (cfg.home_run_water, cfg.home_run_min_players, cfg.base_score) == (12, 3, 100)
    assert (cfg.penalty_multiplier, cfg.escape_covers_losses) == (5, False)
    assert (cfg.ready_seconds, cfg.special_choice_seconds, cfg.arrange_seconds) == (15, 10, 30)
    assert (cfg.deal_mode, cfg.deal_interval_ms) == ("sequential", 120)
    assert (cfg.compare_mode, cfg.reveal_interval_ms) == ("sequential", 800)


def test_7_4_entry_minimum_default_is_32400():
    assert DEFAULT_CONFIG.entry_minimum == 108 * 100 * 3 == 32_400


def test_7_4_entry_minimum_follows_the_highest_enabled_special():
    cfg = RuleConfig.from_dict(
        {"base_score": 50, "specials": {"supreme_dragon": {"enabled": False}}}
    )
    assert cfg.entry_minimum == 36 * 50 * 3


def test_7_5_escape_covers_losses_variant_defaults_to_multiplier_10():
    assert RuleConfig.from_dict({"escape_covers_losses": True}).penalty_multiplier == 10
    cfg = RuleConfig.from_dict({"escape_covers_losses": True, "escape_penalty_multiplier": 7})
    assert cfg.penalty_multiplier == 7


def test_7_1_row_bonus_lookup():
    assert DEFAULT_CONFIG.bonus("front", Category.TRIPS) == 2
    assert DEFAULT_CONFIG.bonus("back", Category.STRAIGHT_FLUSH) == 4
    assert DEFAULT_CONFIG.bonus("back", Category.FULL_HOUSE) == 0


def test_7_1_row_water_defaults_to_1_and_round_trips():
    assert DEFAULT_CONFIG.row_water == 1
    assert DEFAULT_CONFIG.to_dict()["row_water"] == 1
    cfg = RuleConfig.from_dict({"row_water": 3, "gun_mode": "double"})
    assert cfg.row_water == 3
    assert RuleConfig.from_json(cfg.to_json()) == cfg
    assert json.loads(cfg.to_json())["row_water"] == 3
    assert RuleConfig.from_dict({"row_water": 100}).row_water == 100


def test_7_1_json_stored_before_row_water_existed_reads_as_1():
    old = DEFAULT_CONFIG.to_dict()
    del old["row_water"]
    old["gun_water"] = 5
    cfg = RuleConfig.from_dict(old)
    assert (cfg.row_water, cfg.gun_water) == (1, 5)
    assert RuleConfig.from_dict(old, base=RuleConfig(row_water=2)).row_water == 2


def test_7_1_row_total_is_row_water_plus_the_bonus():
    cfg = RuleConfig(row_water=2)
    assert cfg.row_total("front", Category.TRIPS) == 2 + 2
    assert cfg.row_total("back", Category.FULL_HOUSE) == 2


def test_json_round_trip_of_defaults_and_of_a_changed_config():
    assert RuleConfig.from_json(DEFAULT_CONFIG.to_json()) == DEFAULT_CONFIG
    cfg = RuleConfig.from_dict(
        {
            "a2345": "second",
            "specials": {"six_pairs": {"water": 5}, "double_monster": {"enabled": True}},
            "row_bonus": {"front.trips": 0},
            "gun_mode": "double",
            "escape_covers_losses": True,
        }
    )
    text = cfg.to_json()
    assert RuleConfig.from_json(text) == cfg
    assert json.loads(text)["specials"]["six_pairs"] == {"enabled": True, "water": 5}
    assert RuleConfig.from_dict(cfg.to_dict()).to_dict() == cfg.to_dict()


def test_config_is_frozen_and_hashable():
    with pytest.raises(dataclasses.FrozenInstanceError):
        DEFAULT_CONFIG.base_score = 5  # type: ignore[misc]
    assert hash(DEFAULT_CONFIG) == hash(RuleConfig())


def test_overrides_keep_everything_else():
    cfg = RuleConfig.from_dict({"specials": {"six_pairs": {"water": 9}}})
    assert cfg.special("six_pairs").water == 9
    assert cfg.special("six_pairs").enabled
    assert [s.id for s in cfg.specials] == list(SPECIAL_IDS)


def test_special_order_moves_specials():
    order = ["dragon", "supreme_dragon", *SPECIAL_IDS[2:]]
    cfg = RuleConfig.from_dict({"special_order": order})
    assert cfg.special_rank("dragon") == 0
    assert cfg.special_rank("supreme_dragon") == 1


def test_special_order_may_leave_out_disabled_specials_only():
    enabled = [s.id for s in DEFAULT_CONFIG.enabled_specials]
    cfg = RuleConfig.from_dict({"special_order": list(reversed(enabled))})
    assert cfg.special_rank("three_flushes") == 0
    with pytest.raises(ConfigError, match="must rank every enabled special; missing 'dragon'"):
        RuleConfig.from_dict({"special_order": [x for x in enabled if x != "dragon"]})


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"specials": {"six_pairs": {"water": -1}}}, "specials.six_pairs.water must be between"),
        ({"specials": {"seven_pairs": {"water": 4}}}, "unknown special hand 'seven_pairs'"),
        ({"specials": {"six_pairs": {"points": 4}}}, "unknown field specials.six_pairs.points"),
        ({"specials": {"six_pairs": {"enabled": "yes"}}}, "enabled must be true or false"),
        ({"specials": {"six_pairs": {"water": 4.5}}}, "must be a whole number"),
        ({"specials": [1]}, "specials must be an object"),
        ({"special_order": ["dragon", "dragon"]}, "lists 'dragon' more than once"),
        ({"special_order": ["nope"]}, "unknown special hand 'nope'"),
        ({"special_order": "dragon"}, "special_order must be a list"),
        ({"row_bonus": {"front.pair": 1}}, "unknown row bonus 'front.pair'"),
        ({"row_bonus": {"front.trips": -2}}, "row_bonus.front.trips must be between"),
        ({"a2345": "highest"}, "a2345 must be one of lowest, second"),
        ({"gun_mode": "triple"}, "gun_mode must be one of fixed, double"),
        ({"deal_mode": "random"}, "deal_mode must be one of"),
        ({"compare_mode": 1}, "compare_mode must be one of"),
        ({"run_over_counts_as_gun": 1}, "run_over_counts_as_gun must be true or false"),
        ({"base_score": 0}, "base_score must be between 1"),
        ({"base_score": "100"}, "base_score must be a whole number"),
        ({"base_score": True}, "base_score must be a whole number"),
        ({"gun_water": -3}, "gun_water must be between 0"),
        ({"home_run_min_players": 1}, "home_run_min_players must be between 2 and 5"),
        ({"arrange_seconds": 0}, "arrange_seconds must be between 1"),
        ({"escape_penalty_multiplier": -1}, "escape_penalty_multiplier must be between 0"),
        ({"colour": "red"}, "unknown config field 'colour'"),
        ({"row_water": 0}, "row_water must be between 1 and 100, got 0"),
        ({"row_water": -1}, "row_water must be between 1 and 100"),
        ({"row_water": 101}, "row_water must be between 1 and 100, got 101"),
        ({"row_water": 1.5}, "row_water must be a whole number"),
        ({"row_water": "2"}, "row_water must be a whole number"),
        ({"row_water": True}, "row_water must be a whole number"),
        ({"row_water": None}, "row_water must be a whole number"),
    ],
)
def test_bad_configurations_are_rejected_with_a_clear_message(overrides, message):
    with pytest.raises(ConfigError, match=message) as err:
        RuleConfig.from_dict(overrides)
    assert err.value.code == "bad_config"


def test_config_must_be_an_object_and_valid_json():
    with pytest.raises(ConfigError, match="JSON object"):
        RuleConfig.from_dict([1, 2])
    with pytest.raises(ConfigError, match="not valid JSON"):
        RuleConfig.from_json("{nope")


def test_direct_construction_is_validated_too():
    with pytest.raises(ConfigError):
        RuleConfig(gun_mode="triple")

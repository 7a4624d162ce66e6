"""The presets of the sources' remaining value tables (games/rules/presets.py), each value
asserted against the seed's line its comment cites (seeds/00N_*.txt:LINE)."""

from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.presets import PRESET_IDS, preset_config, preset_of


def waters(config: RuleConfig) -> dict[str, int]:
    return {s.id: s.water for s in config.enabled_specials}


def totals(config: RuleConfig) -> dict[str, int]:
    """What a row's winner wins in all (RULES.md §7.1), by row bonus key."""
    return {key: config.row_water + bonus for key, bonus in config.row_bonus}


def test_12_6_the_three_source_presets_are_offered_after_the_others() -> None:
    assert PRESET_IDS[-3:] == ("shuangguai", "general", "original")
    for preset_id in ("shuangguai", "general", "original"):
        assert preset_of(preset_config(preset_id)) == preset_id


def test_12_6_shuangguai_is_the_s1_table_with_double_monster() -> None:
    config = preset_config("shuangguai")
    # 001:9 ranks them; 001:56-95 pay them.
    assert list(waters(config).items()) == [
        ("supreme_dragon", 108),  # 001:56
        ("dragon", 36),  # 001:59
        ("twelve_royals", 24),  # 001:62
        ("three_straight_flushes", 20),  # 001:65
        ("three_quads", 20),  # 001:68
        ("all_big", 10),  # 001:74
        ("all_small", 10),  # 001:77
        ("one_color", 10),  # 001:71
        ("double_monster", 6),  # 001:95
        ("four_trips", 6),  # 001:80
        ("five_pairs_trips", 5),  # 001:83
        ("six_pairs", 4),  # 001:86
        ("three_straights", 3),  # 001:92
        ("three_flushes", 3),  # 001:92
    ]
    # Nothing else is S1's: rows, bonuses and guns stay RULES.md's.
    assert config.row_bonus == DEFAULT_CONFIG.row_bonus
    assert (config.row_water, config.gun_mode, config.gun_water) == (1, "fixed", 3)


def test_12_6_general_is_the_s2_scoring_table() -> None:
    config = preset_config("general")
    # 002:69-78 rank them; 002:193-216 pay them.
    assert list(waters(config).items()) == [
        ("supreme_dragon", 108),  # 002:215-216
        ("dragon", 36),  # 002:213-214
        ("twelve_royals", 24),  # 002:212
        ("three_straight_flushes", 20),  # 002:210-211
        ("three_quads", 20),  # 002:208-209
        ("all_big", 10),  # 002:206-207
        ("all_small", 10),  # 002:204-205
        ("one_color", 10),  # 002:203
        ("four_trips", 6),  # 002:201-202
        ("five_pairs_trips", 5),  # 002:199-200
        ("six_pairs", 4),  # 002:197-198
        ("three_flushes", 3),  # 002:193-194
        ("three_straights", 4),  # 002:195-196
    ]
    assert totals(config) == {
        "front.trips": 3,  # 002:183
        "middle.full_house": 2,  # 002:185
        "middle.five_of_a_kind": 11,  # 002:186
        "back.five_of_a_kind": 6,  # 002:186
        "middle.straight_flush": 9,  # 002:187
        "back.straight_flush": 5,  # 002:187
        "middle.quads": 7,  # 002:188
        "back.quads": 4,  # 002:188
    }
    assert config.row_water == 1  # 002:178
    assert config.gun_mode == "double"  # 002:190-192
    assert config.home_run_min_players == 4  # 002:65


def test_12_6_original_is_the_s3_original_row_values() -> None:
    config = preset_config("original")
    assert totals(config) == {
        "front.trips": 3,  # 003:189 (原3水)
        "middle.full_house": 3,  # 003:137
        "middle.quads": 8,  # 003:187 (原8水)
        "middle.straight_flush": 10,  # 003:185 (原10水)
        "back.quads": 4,  # 003:187 (原4水)
        "back.straight_flush": 5,  # 003:185 (原5水)
        "middle.five_of_a_kind": 11,  # not in S3: the default
        "back.five_of_a_kind": 6,
    }
    # The original special-hand water and order (003:161-173, 003:179) are RULES.md's.
    assert config.specials == DEFAULT_CONFIG.specials
    assert waters(config)["three_straight_flushes"] == 22  # 003:165 (原22水)
    assert waters(config)["all_big"] == 15  # 003:167 (原15水)
    assert waters(config)["one_color"] == 10  # 003:171 (原10水)
    assert waters(config)["six_pairs"] == 4  # 003:173 (原4水)
    assert config.row_water == 1  # 003:79

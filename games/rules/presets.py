"""The rule presets of RULES.md §12.6, as engine data.

Each preset is a set of overrides on the defaults (the JSON form of ``RuleConfig.from_dict``),
so the admin (which offers them as new, still editable configurations) and the tests load the
very same definitions. ``preset_config("laizi")`` is the ready configuration.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .config import DEFAULT_CONFIG, RuleConfig
from .errors import ConfigError


@dataclass(frozen=True, slots=True)
class Preset:
    id: str
    zh: str
    en: str
    source: str  # the seeds it comes from (RULES.md citation)
    overrides: MappingProxyType[str, Any]

    @property
    def config(self) -> RuleConfig:
        return RuleConfig.from_dict(dict(self.overrides))


def _only(*enabled: str) -> dict[str, dict[str, bool]]:
    """Enable exactly these specials."""
    return {s.id: {"enabled": s.id in enabled} for s in DEFAULT_CONFIG.specials}


_REGIONAL_ORDER = [
    "supreme_dragon",
    "dragon",
    "twelve_royals",
    "three_straight_flushes",
    "three_quads",
    "one_color",
    "all_big",
    "all_small",
    "trips_and_bomb",
    "four_trips",
    "five_pairs_trips",
    "six_pairs",
    "three_straights",
    "three_flushes",
]

_PRESETS: tuple[Preset, ...] = (
    Preset("classic", "经典", "Classic", "S0", MappingProxyType({})),
    Preset(
        "duoyise",
        "多一色",
        "Extra suit",
        "S2, S4",
        MappingProxyType({"extra_suits": 1, "specials": _only("supreme_dragon", "dragon")}),
    ),
    Preset("laizi", "癞子", "Jokers", "S2, S4", MappingProxyType({"jokers": 2})),
    Preset(
        "duosanzhang",
        "多三张",
        "Three spare cards",
        "S2, S4",
        MappingProxyType({"extra_suits": 1, "spare_cards": 3}),
    ),
    Preset(
        "fuzhou",
        "福州",
        "Fuzhou",
        "S2",
        MappingProxyType(
            {
                "gun_mode": "double",
                "specials": {
                    **_only(
                        "supreme_dragon", "dragon", "six_pairs", "three_flushes", "three_straights"
                    ),
                    "supreme_dragon": {"enabled": True, "water": 108},
                    "dragon": {"enabled": True, "water": 36},
                    "six_pairs": {"enabled": True, "water": 4},
                    "three_flushes": {"enabled": True, "water": 3},
                    "three_straights": {"enabled": True, "water": 3},
                },
                "special_order": [
                    "supreme_dragon",
                    "dragon",
                    "six_pairs",
                    "three_flushes",
                    "three_straights",
                ],
            }
        ),
    ),
    Preset(
        "regional",
        "地区",
        "Regional",
        "S3",
        MappingProxyType(
            {
                "specials": {
                    "supreme_dragon": {"water": 104},
                    "dragon": {"water": 26},
                    "three_straight_flushes": {"water": 20},
                    "all_big": {"water": 12},
                    "all_small": {"water": 10},
                    "one_color": {"water": 15},
                    "six_pairs": {"water": 3},
                    "trips_and_bomb": {"enabled": True, "water": 8},
                },
                "special_order": _REGIONAL_ORDER,
                # Row totals 6/12/5/10/3/4 (RULES.md §12.6): the bonus is one less.
                "row_bonus": {
                    "back.straight_flush": 5,
                    "middle.straight_flush": 11,
                    "back.quads": 4,
                    "middle.quads": 9,
                    "middle.full_house": 2,
                    "front.trips": 3,
                },
            }
        ),
    ),
)

# The value tables of the sources that no preset above plays, each value cited to the seed's
# line (seeds/00N_*.txt:LINE, the Chinese originals of RULES.md). Anything a table does not
# give keeps RULES.md's default.

# [S1] seeds/001_6dedd757d18cb0a9.txt: the special hands' water, 双怪冲三 enabled, ranked as
# line 9 ranks them (RULES.md's default order; 全大 > 全小 > 凑一色 although all three pay 10,
# as the tie rule's own example says, 001:109). S1 gives no row bonus and no gun water (a row
# won is 1, 001:105), so those keep their defaults.
_S1_SPECIALS = {
    "supreme_dragon": {"enabled": True, "water": 108},  # 001:56
    "dragon": {"enabled": True, "water": 36},  # 001:59
    "twelve_royals": {"enabled": True, "water": 24},  # 001:62
    "three_straight_flushes": {"enabled": True, "water": 20},  # 001:65
    "three_quads": {"enabled": True, "water": 20},  # 001:68
    "one_color": {"enabled": True, "water": 10},  # 001:71
    "all_big": {"enabled": True, "water": 10},  # 001:74
    "all_small": {"enabled": True, "water": 10},  # 001:77
    "four_trips": {"enabled": True, "water": 6},  # 001:80
    "five_pairs_trips": {"enabled": True, "water": 5},  # 001:83
    "six_pairs": {"enabled": True, "water": 4},  # 001:86
    "three_straights": {"enabled": True, "water": 3},  # 001:92 (三同花、三顺子赢每家3水)
    "three_flushes": {"enabled": True, "water": 3},  # 001:92
    "double_monster": {"enabled": True, "water": 6},  # 001:95
    "trips_and_bomb": {"enabled": False},  # not in S1
}

# [S2] seeds/002_c95eede003a5532e.txt, the general scoring table (4 记分, 002:170-216; the
# 福州 table after it is the ``fuzhou`` preset). Two of its headings are lost in the seed: the
# 10 at 002:203 follows 四套三条 and precedes 全小, which in the ranking of 002:69-78 is
# 凑一色; the 24 at 002:212 follows 三同花顺 and precedes 一条龙: 十二皇族. 002:196 pays 三顺子
# 4, although 002:139 says 3 (the table is what this preset plays).
_S2_SPECIALS = {
    "three_flushes": {"enabled": True, "water": 3},  # 002:193-194
    "three_straights": {"enabled": True, "water": 4},  # 002:195-196
    "six_pairs": {"enabled": True, "water": 4},  # 002:197-198
    "five_pairs_trips": {"enabled": True, "water": 5},  # 002:199-200
    "four_trips": {"enabled": True, "water": 6},  # 002:201-202
    "one_color": {"enabled": True, "water": 10},  # 002:203 (heading lost, see above)
    "all_small": {"enabled": True, "water": 10},  # 002:204-205
    "all_big": {"enabled": True, "water": 10},  # 002:206-207
    "three_quads": {"enabled": True, "water": 20},  # 002:208-209 (三分天下 = 三套炸弹, 002:72)
    "three_straight_flushes": {"enabled": True, "water": 20},  # 002:210-211
    "twelve_royals": {"enabled": True, "water": 24},  # 002:212 (heading lost, see above)
    "dragon": {"enabled": True, "water": 36},  # 002:213-214
    "supreme_dragon": {"enabled": True, "water": 108},  # 002:215-216
    "double_monster": {"enabled": False},  # not in S2
    "trips_and_bomb": {"enabled": False},  # not in S2
}
# 002:69-78: 清龙 > 一条龙 > 十二皇族 > 三同花顺 > 三套炸弹 > 全大 > 全小 > 凑一色 > 四套冲三 >
# 五对冲三 > 六对半 > 三同花 > 三顺子 (三同花 above 三顺子 again at 002:139).
_S2_ORDER = [
    "supreme_dragon",
    "dragon",
    "twelve_royals",
    "three_straight_flushes",
    "three_quads",
    "all_big",
    "all_small",
    "one_color",
    "four_trips",
    "five_pairs_trips",
    "six_pairs",
    "three_flushes",
    "three_straights",
]
# 002:178-188: a row won is 1 (+ its bonus); the bonuses are RULES.md's defaults, given here
# so that the preset states the whole table.
_S2_ROW_BONUS = {
    "front.trips": 2,  # 002:183 (冲三 1 + 2)
    "middle.full_house": 1,  # 002:185 (中墩葫芦 1 + 1)
    "middle.five_of_a_kind": 10,  # 002:186
    "back.five_of_a_kind": 5,  # 002:186
    "middle.straight_flush": 8,  # 002:187
    "back.straight_flush": 4,  # 002:187
    "middle.quads": 6,  # 002:188
    "back.quads": 3,  # 002:188
}

# [S3] seeds/003_82b42c878b8ce879.txt, the "original" (原, 大众化的玩法与规则, 003:159) values
# beside the regional ones (the ``regional`` preset). Its original special-hand water and
# order are RULES.md's defaults (003:161-173, 003:179); its original row totals differ in the
# middle row only. A row won is 1 (003:79), so each bonus is the total less 1.
_S3_ORIGINAL_ROW_BONUS = {
    "middle.straight_flush": 10 - 1,  # 003:185 中墩 (原10水); also 003:133
    "middle.quads": 8 - 1,  # 003:187 中墩 (原8水); also 003:135
    "middle.full_house": 3 - 1,  # 003:137 放中墩，則計3水 (not among the regional differences)
    "back.straight_flush": 5 - 1,  # 003:185 底墩 (原5水)
    "back.quads": 4 - 1,  # 003:187 底墩 (原4水)
    "front.trips": 3 - 1,  # 003:189 (原3水); also 003:153
}

_PRESETS += (
    Preset(
        "shuangguai",
        "双怪冲三",
        "Double monster",
        "S1",
        MappingProxyType({"specials": _S1_SPECIALS}),
    ),
    Preset(
        "general",
        "通用",
        "General table",
        "S2",
        MappingProxyType(
            {
                "specials": _S2_SPECIALS,
                "special_order": _S2_ORDER,
                "row_bonus": _S2_ROW_BONUS,
                # 打枪 doubles the pair's water, bonuses included, and a home run doubles it
                # again (002:190-192); a home run needs 4 players (002:64-65).
                "gun_mode": "double",
                "home_run_min_players": 4,
            }
        ),
    ),
    Preset(
        "original",
        "原版",
        "Original",
        "S3",
        MappingProxyType({"row_bonus": _S3_ORIGINAL_ROW_BONUS}),
    ),
)

PRESETS: MappingProxyType[str, Preset] = MappingProxyType({p.id: p for p in _PRESETS})
PRESET_IDS: tuple[str, ...] = tuple(PRESETS)


def preset_config(preset_id: str) -> RuleConfig:
    """The configuration of a preset; :class:`ConfigError` for an unknown id."""
    preset = PRESETS.get(preset_id)
    if preset is None:
        raise ConfigError(f"unknown preset {preset_id!r} (known: {', '.join(PRESET_IDS)})")
    return preset.config


# The table's pace and the base score: a room's own business, not what makes a preset.
PACE_FIELDS = (
    "base_score",
    "ready_seconds",
    "special_choice_seconds",
    "arrange_seconds",
    "reconnect_grace_seconds",
    "deal_mode",
    "deal_interval_ms",
    "compare_mode",
    "reveal_interval_ms",
)


def _rules_key(config: RuleConfig) -> str:
    """What a player plays by: every setting but the pace fields, and the specials as the
    enabled ones in their ranking order with their water (a disabled special's water and
    place change nothing at the table); as canonical JSON."""
    data = config.to_dict()
    for name in (*PACE_FIELDS, "specials", "special_order"):
        data.pop(name, None)
    data["enabled_specials"] = [[s.id, s.water] for s in config.enabled_specials]
    return json.dumps(data, sort_keys=True)


def preset_of(config: RuleConfig) -> str | None:
    """The id of the preset ``config`` plays (pace and base score aside), or None."""
    key = _rules_key(config)
    for preset in _PRESETS:
        if _rules_key(preset.config) == key:
            return preset.id
    return None

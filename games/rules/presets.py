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

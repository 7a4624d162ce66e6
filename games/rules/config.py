"""The rule configuration (RULES.md §5–9): one frozen value with the spec's defaults.

The admin-edited configuration and every round's snapshot are exactly this value's JSON form
(:meth:`RuleConfig.to_dict` / :meth:`RuleConfig.from_dict`), which round-trips. Validation lives
here and nowhere else, so the command line, the admin and the table all reject the same things.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from .cards import Deck
from .errors import ConfigError
from .hands import Category


@dataclass(frozen=True, slots=True)
class SpecialInfo:
    id: str
    zh: str
    en: str
    water: int
    enabled: bool


# Default ranking order, highest first (RULES.md §5). The two optional specials sit between
# one_color and four_trips, trips_and_bomb above double_monster; they are off by default.
SPECIAL_INFO: tuple[SpecialInfo, ...] = (
    SpecialInfo("supreme_dragon", "至尊清龙", "Supreme dragon", 108, True),
    SpecialInfo("dragon", "一条龙", "Dragon", 36, True),
    SpecialInfo("twelve_royals", "十二皇族", "Twelve royals", 24, True),
    SpecialInfo("three_straight_flushes", "三同花顺", "Three straight flushes", 22, True),
    SpecialInfo("three_quads", "三分天下", "Three quads", 20, True),
    SpecialInfo("all_big", "全大", "All big", 15, True),
    SpecialInfo("all_small", "全小", "All small", 12, True),
    SpecialInfo("one_color", "凑一色", "One colour", 10, True),
    SpecialInfo("trips_and_bomb", "三冲加弹", "Three trips and a bomb", 8, False),
    SpecialInfo("double_monster", "双怪冲三", "Double monster", 6, False),
    SpecialInfo("four_trips", "四套三条", "Four trips", 6, True),
    SpecialInfo("five_pairs_trips", "五对三条", "Five pairs and trips", 5, True),
    SpecialInfo("six_pairs", "六对半", "Six pairs", 4, True),
    SpecialInfo("three_straights", "三顺子", "Three straights", 3, True),
    SpecialInfo("three_flushes", "三同花", "Three flushes", 3, True),
)
SPECIAL_BY_ID: dict[str, SpecialInfo] = {s.id: s for s in SPECIAL_INFO}
SPECIAL_IDS: tuple[str, ...] = tuple(s.id for s in SPECIAL_INFO)

# Row bonus keys "row.category" (RULES.md §7.1) with their defaults.
ROW_BONUS_DEFAULTS: dict[str, int] = {
    "front.trips": 2,
    "middle.full_house": 1,
    "middle.quads": 6,
    "middle.straight_flush": 8,
    "back.quads": 3,
    "back.straight_flush": 4,
    # Only reachable with the variant decks (RULES.md §12.3).
    "middle.five_of_a_kind": 10,
    "back.five_of_a_kind": 5,
}

MAX_WATER = 10_000
# What a row's winner wins (RULES.md §7.1): at least 1 (0 would make rows worthless and every
# comparison a tie); at most 100, far above any table the sources play, so that a typo cannot
# turn one row into a fortune.
MAX_ROW_WATER = 100
MAX_BASE_SCORE = 1_000_000_000
CHOICES = {
    "a2345": ("lowest", "second"),
    "gun_mode": ("fixed", "double"),
    "deal_mode": ("sequential", "simultaneous"),
    "compare_mode": ("sequential", "simultaneous"),
}
# The variant decks (RULES.md §12): the values each setting may take.
DECK_CHOICES: dict[str, tuple[int, ...]] = {
    "extra_suits": (0, 1, 2),
    "jokers": (0, 2),
    "spare_cards": (0, 3),
}
# name -> (minimum, maximum) for the plain integer fields.
INT_RANGES: dict[str, tuple[int, int]] = {
    "row_water": (1, MAX_ROW_WATER),
    "gun_water": (0, MAX_WATER),
    "home_run_water": (0, MAX_WATER),
    "base_score": (1, MAX_BASE_SCORE),
    "escape_penalty_multiplier": (0, MAX_WATER),
    "ready_seconds": (1, 3600),
    "special_choice_seconds": (1, 3600),
    "arrange_seconds": (1, 3600),
    "reconnect_grace_seconds": (0, 60),
    "deal_interval_ms": (0, 10_000),
    "reveal_interval_ms": (0, 10_000),
}


@dataclass(frozen=True, slots=True)
class SpecialRule:
    id: str
    enabled: bool
    water: int


def _default_specials() -> tuple[SpecialRule, ...]:
    return tuple(SpecialRule(s.id, s.enabled, s.water) for s in SPECIAL_INFO)


def _default_bonus() -> tuple[tuple[str, int], ...]:
    return tuple(ROW_BONUS_DEFAULTS.items())


@dataclass(frozen=True, slots=True)
class RuleConfig:
    """Every configurable rule. ``specials`` is in ranking order, highest first."""

    a2345: str = "lowest"
    specials: tuple[SpecialRule, ...] = field(default_factory=_default_specials)
    row_bonus: tuple[tuple[str, int], ...] = field(default_factory=_default_bonus)
    # The water a row's winner wins before its bonus (RULES.md §7.1, 比牌水数).
    row_water: int = 1
    run_over_counts_as_gun: bool = True
    gun_mode: str = "fixed"
    gun_water: int = 3
    home_run_water: int = 12
    home_run_min_players: int = 3
    base_score: int = 100
    # None means the variant's default: 5, or 10 with escape_covers_losses (RULES.md §7.5).
    escape_penalty_multiplier: int | None = None
    escape_covers_losses: bool = False
    ready_seconds: int = 15
    special_choice_seconds: int = 10
    arrange_seconds: int = 30
    # A hosted hand waits this long after its player's disconnect once the others are in (§9).
    reconnect_grace_seconds: int = 10
    deal_mode: str = "sequential"
    deal_interval_ms: int = 120
    compare_mode: str = "sequential"
    reveal_interval_ms: int = 800
    # Variant decks (RULES.md §12); 0 everywhere is the classic 52-card game.
    extra_suits: int = 0
    jokers: int = 0
    spare_cards: int = 0

    def __post_init__(self) -> None:
        self.validate()

    # -- derived values -------------------------------------------------------------------
    @property
    def enabled_specials(self) -> tuple[SpecialRule, ...]:
        """Enabled specials, highest-ranked first; disabled ones are out of the ranking."""
        return tuple(s for s in self.specials if s.enabled)

    def special(self, special_id: str) -> SpecialRule:
        for s in self.specials:
            if s.id == special_id:
                return s
        raise ConfigError(f"unknown special hand {special_id!r}")

    def special_rank(self, special_id: str) -> int:
        """Position among enabled specials, 0 = highest."""
        for i, s in enumerate(self.enabled_specials):
            if s.id == special_id:
                return i
        raise ConfigError(f"special hand {special_id!r} is not enabled")

    def bonus(self, row: str, category: Category) -> int:
        """Extra water for the winner of ``row`` holding ``category`` (RULES.md §7.1)."""
        return dict(self.row_bonus).get(f"{row}.{category.id}", 0)

    def row_total(self, row: str, category: Category) -> int:
        """What the winner of ``row`` holding ``category`` wins in all: the row water plus
        its bonus (RULES.md §7.1), guns not included."""
        return self.row_water + self.bonus(row, category)

    # -- the deck (RULES.md §12) -----------------------------------------------------------
    @property
    def deck(self) -> Deck:
        return Deck(self.extra_suits, self.jokers)

    @property
    def hand_size(self) -> int:
        """Cards dealt to each player: 13, or 16 with three spare cards (§12.4)."""
        return 13 + self.spare_cards

    @property
    def max_seats(self) -> int:
        """Players the deck allows: ⌊cards ÷ cards per hand⌋, at most 4 + extra suits."""
        return min(4 + self.extra_suits, self.deck.size // self.hand_size)

    @property
    def is_classic_deck(self) -> bool:
        return self.extra_suits == 0 and self.jokers == 0 and self.spare_cards == 0

    @property
    def five_of_a_kind(self) -> bool:
        """Whether a row can be five of a kind (§12.3)."""
        return self.extra_suits > 0 or self.jokers > 0

    @property
    def penalty_multiplier(self) -> int:
        if self.escape_penalty_multiplier is not None:
            return self.escape_penalty_multiplier
        return 10 if self.escape_covers_losses else 5

    @property
    def entry_minimum(self) -> int:
        """Coins needed to sit down: max enabled special water × base score × 3 (§7.4)."""
        top = max((s.water for s in self.enabled_specials), default=0)
        return top * self.base_score * 3

    # -- validation -----------------------------------------------------------------------
    def validate(self) -> None:
        for name, choices in CHOICES.items():
            value = getattr(self, name)
            if value not in choices:
                raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
        for name in ("run_over_counts_as_gun", "escape_covers_losses"):
            if not isinstance(getattr(self, name), bool):
                raise ConfigError(f"{name} must be true or false")
        for name, (lo, hi) in INT_RANGES.items():
            value = getattr(self, name)
            if value is None and name == "escape_penalty_multiplier":
                continue
            _check_int(name, value, lo, hi)
        for name, allowed in DECK_CHOICES.items():
            value = getattr(self, name)
            if isinstance(value, bool) or value not in allowed:
                raise ConfigError(
                    f"{name} must be one of {', '.join(map(str, allowed))}, got {value!r}"
                )
        if self.max_seats < 2:  # pragma: no cover - every allowed deck seats at least 3
            raise ConfigError(f"a {self.deck.size}-card deck cannot deal two hands")
        # From 2 up to the deck's seats (RULES.md §12.5); 5 stays allowed with fewer seats, as
        # before the variant decks (a stored configuration may hold it; it never happens).
        _check_int("home_run_min_players", self.home_run_min_players, 2, max(5, self.max_seats))
        ids = [s.id for s in self.specials]
        for sid in ids:
            if sid not in SPECIAL_BY_ID:
                raise ConfigError(f"unknown special hand {sid!r}")
        dup = {sid for sid in ids if ids.count(sid) > 1}
        if dup:
            raise ConfigError(f"special hand order lists {sorted(dup)[0]!r} more than once")
        if set(ids) != set(SPECIAL_IDS):
            missing = [sid for sid in SPECIAL_IDS if sid not in ids]
            raise ConfigError(f"special hands missing from the configuration: {missing}")
        for s in self.specials:
            if not isinstance(s.enabled, bool):
                raise ConfigError(f"specials.{s.id}.enabled must be true or false")
            _check_int(f"specials.{s.id}.water", s.water, 0, MAX_WATER)
        keys = [k for k, _ in self.row_bonus]
        if sorted(keys) != sorted(ROW_BONUS_DEFAULTS):
            unknown = [k for k in keys if k not in ROW_BONUS_DEFAULTS]
            raise ConfigError(
                f"unknown row bonus {unknown[0]!r}" if unknown else "row_bonus is incomplete"
            )
        for k, v in self.row_bonus:
            _check_int(f"row_bonus.{k}", v, 0, MAX_WATER)

    # -- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The canonical JSON form; ``from_dict(to_dict())`` gives back an equal value."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name == "specials":
                out["specials"] = {s.id: {"enabled": s.enabled, "water": s.water} for s in value}
                out["special_order"] = [s.id for s in value]
            elif f.name == "row_bonus":
                out["row_bonus"] = dict(value)
            else:
                out[f.name] = value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, ensure_ascii=False)

    @classmethod
    def from_dict(cls, data: object, base: RuleConfig | None = None) -> RuleConfig:
        """Apply overrides (a JSON object) on top of ``base`` (default: RULES.md defaults).

        Unknown fields, wrong types and out-of-range values raise :class:`ConfigError`.
        """
        base = base or DEFAULT_CONFIG
        if data is None:
            return base
        if not isinstance(data, Mapping):
            raise ConfigError("config must be a JSON object")
        known = {f.name for f in fields(cls)} | {"special_order"}
        unknown = [k for k in data if k not in known]
        if unknown:
            raise ConfigError(f"unknown config field {unknown[0]!r}")
        changes: dict[str, Any] = {}
        for name, value in data.items():
            if name in ("specials", "special_order", "row_bonus"):
                continue
            changes[name] = value
        if "row_bonus" in data:
            changes["row_bonus"] = _merge_bonus(base.row_bonus, data["row_bonus"])
        if "specials" in data or "special_order" in data:
            changes["specials"] = _merge_specials(
                base.specials, data.get("specials", {}), data.get("special_order")
            )
        try:
            return replace(base, **changes)
        except TypeError as exc:  # pragma: no cover - unknown names are caught above
            raise ConfigError(str(exc)) from None

    @classmethod
    def from_json(cls, text: str) -> RuleConfig:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"config is not valid JSON: {exc.msg}") from None
        return cls.from_dict(data)


def _check_int(name: str, value: object, lo: int, hi: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{name} must be a whole number, got {value!r}")
    if not lo <= value <= hi:
        raise ConfigError(f"{name} must be between {lo} and {hi}, got {value}")


def _merge_bonus(base: tuple[tuple[str, int], ...], data: object) -> tuple[tuple[str, int], ...]:
    if not isinstance(data, Mapping):
        raise ConfigError('row_bonus must be an object like {"front.trips": 2}')
    merged = dict(base)
    for key, value in data.items():
        if key not in ROW_BONUS_DEFAULTS:
            raise ConfigError(f"unknown row bonus {key!r} (known: {', '.join(ROW_BONUS_DEFAULTS)})")
        merged[key] = value
    return tuple(merged.items())


def _merge_specials(
    base: tuple[SpecialRule, ...], data: object, order: object
) -> tuple[SpecialRule, ...]:
    if not isinstance(data, Mapping):
        raise ConfigError('specials must be an object like {"six_pairs": {"water": 4}}')
    rules = {s.id: s for s in base}
    for sid, spec in data.items():
        if sid not in rules:
            raise ConfigError(f"unknown special hand {sid!r}")
        if not isinstance(spec, Mapping):
            raise ConfigError(f"specials.{sid} must be an object with enabled and/or water")
        extra = [k for k in spec if k not in ("enabled", "water")]
        if extra:
            raise ConfigError(f"unknown field specials.{sid}.{extra[0]}")
        rules[sid] = replace(
            rules[sid],
            enabled=spec.get("enabled", rules[sid].enabled),
            water=spec.get("water", rules[sid].water),
        )
    ids = [s.id for s in base]
    if order is not None:
        if not isinstance(order, list) or not all(isinstance(x, str) for x in order):
            raise ConfigError("special_order must be a list of special hand ids")
        for sid in order:
            if sid not in rules:
                raise ConfigError(f"unknown special hand {sid!r} in special_order")
        dup = [sid for sid in order if order.count(sid) > 1]
        if dup:
            raise ConfigError(f"special_order lists {dup[0]!r} more than once")
        left_out = [sid for sid in ids if sid not in order and rules[sid].enabled]
        if left_out:
            raise ConfigError(
                f"special_order must rank every enabled special; missing {left_out[0]!r}"
            )
        # Disabled specials left out keep their relative place at the end; they are not ranked.
        ids = list(order) + [sid for sid in ids if sid not in order]
    return tuple(rules[sid] for sid in ids)


DEFAULT_CONFIG = RuleConfig()

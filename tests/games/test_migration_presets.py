"""games/migrations/0021_presets_out_of_the_box: every preset of RULES.md §12.6 and the 6-seat
deck exist after ``migrate``, each once, each with its own badge in the lobby; running the
migration again creates nothing; a configuration's ``preset`` follows its rules."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps
from django.utils import translation

from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.presets import PRESET_IDS, PRESETS, preset_config, preset_of
from games.variants import variant_filter
from lobby.selectors import variant_row, variants_offered

pytestmark = pytest.mark.django_db

migration = importlib.import_module("games.migrations.0021_presets_out_of_the_box")
sources = importlib.import_module("games.migrations.0024_source_value_presets")

BADGES = {
    "classic": ("经典", "Classic"),
    "fuzhou": ("福州", "Fuzhou"),
    "regional": ("地区", "Regional"),
    "duoyise": ("多一色", "Extra suit"),
    "laizi": ("癞子", "Jokers"),
    "duosanzhang": ("多三张", "Spare cards"),
    "duoerse": ("多两色", "Two extra suits"),
}


def fresh_default(config: RuleConfig = DEFAULT_CONFIG) -> RuleConfiguration:
    """Only the default configuration, paced like the migrated one (500 ms reveals)."""
    RuleConfiguration.objects.all().delete()
    default = RuleConfiguration.from_engine(config, name="Standard 标准", is_default=True)
    RuleConfiguration.objects.filter(pk=default.pk).update(reveal_interval_ms=500)
    default.refresh_from_db()
    return default


def by_kind() -> dict[str, list[RuleConfiguration]]:
    kinds: dict[str, list[RuleConfiguration]] = {}
    for rules in RuleConfiguration.objects.all():
        config = rules.engine_config()
        kind = "duoerse" if config.extra_suits == 2 else rules.preset
        kinds.setdefault(kind, []).append(rules)
    return kinds


def test_the_rules_key_ignores_pace_and_base_score_only() -> None:
    for preset_id in PRESET_IDS:
        assert preset_of(preset_config(preset_id)) == preset_id
    paced = RuleConfig.from_dict(
        {"arrange_seconds": 45, "base_score": 10, "compare_mode": "simultaneous"}
    )
    assert preset_of(paced) == "classic"
    assert preset_of(RuleConfig(gun_water=4)) is None
    assert preset_of(RuleConfig(extra_suits=2)) is None
    # A disabled special's water changes nothing at the table.
    fuzhou = PRESETS["fuzhou"].overrides
    disabled = RuleConfig.from_dict(
        {**fuzhou, "specials": {**fuzhou["specials"], "all_big": {"enabled": False, "water": 99}}}
    )
    assert preset_of(disabled) == "fuzhou"


def test_every_preset_and_the_six_seat_deck_exist_once_and_again_nothing_is_made() -> None:
    default = fresh_default()

    migration.forwards(apps, None)

    kinds = by_kind()
    assert set(kinds) == {kind for kind, _name, _description in migration.WANTED}
    assert all(len(made) == 1 for made in kinds.values()), kinds
    assert kinds["classic"] == [default]  # the default plays the classic preset: no second one
    for preset_id in PRESET_IDS[:6]:
        made = kinds[preset_id][0]
        assert made.engine_config().to_dict() == {
            **preset_config(preset_id).to_dict(),
            **{field: getattr(default, field) for field in migration.PACE},
        }
    six = kinds["duoerse"][0].engine_config()
    assert six.max_seats == 6 and six.deck.size == 78
    assert [s.id for s in six.enabled_specials] == ["supreme_dragon", "dragon"]
    names = set(RuleConfiguration.objects.values_list("name", flat=True))
    assert {"福州 Fuzhou", "地区 Regional", "多两色 Two extra suits"} <= names

    count = RuleConfiguration.objects.count()
    migration.forwards(apps, None)
    assert RuleConfiguration.objects.count() == count


def test_a_default_with_other_rules_gets_a_classic_beside_it_and_a_taken_name_a_number() -> None:
    fresh_default(RuleConfig(gun_water=4))
    RuleConfiguration.from_engine(RuleConfig(gun_water=5), name="福州 Fuzhou")

    migration.forwards(apps, None)

    kinds = by_kind()
    assert kinds["classic"][0].name == "经典 Classic"
    assert kinds["fuzhou"][0].name == "福州 Fuzhou (2)"
    assert RuleConfiguration.objects.get(name="福州 Fuzhou").preset == ""


def test_each_preset_has_its_own_badge_and_filter() -> None:
    fresh_default()
    migration.forwards(apps, None)

    for kind, made in by_kind().items():
        rules = made[0]
        with translation.override("zh-hans"):
            row = variant_row(rules=rules)
        assert row["tags"] == [kind]
        assert row["label"] == BADGES[kind][0]
        assert row["labels"] == {"zh": BADGES[kind][0], "en": BADGES[kind][1]}
        chosen = RuleConfiguration.objects.filter(variant_filter(kind, prefix=""))
        assert list(chosen) == [rules], kind  # the classic filter leaves 福州 and 地区 out
    assert variants_offered() == list(BADGES.keys())[:3] + [
        "duoyise",
        "duoerse",
        "laizi",
        "duosanzhang",
    ]


def test_the_preset_follows_the_rules_through_the_admins_save() -> None:
    fresh_default()
    rules = RuleConfiguration.from_engine(preset_config("fuzhou"), name="Mine")
    assert rules.preset == "fuzhou"

    row = rules.special_hands.get(special="dragon")
    row.water = 30
    row.save()
    assert rules.preset_refresh() == ""
    assert RuleConfiguration.objects.get(pk=rules.pk).preset == ""
    row.water = 36
    row.save()
    assert rules.preset_refresh() == "fuzhou"


def test_0024_the_source_presets_exist_once_and_again_nothing_is_made() -> None:
    default = fresh_default()
    migration.forwards(apps, None)

    sources.forwards(apps, None)

    kinds = by_kind()
    assert set(kinds) == {*PRESET_IDS, "duoerse"}
    assert all(len(made) == 1 for made in kinds.values()), kinds
    for preset_id in ("shuangguai", "general", "original"):
        made = kinds[preset_id][0]
        assert made.engine_config().to_dict() == {
            **preset_config(preset_id).to_dict(),
            **{field: getattr(default, field) for field in sources.PACE},
        }
    names = set(RuleConfiguration.objects.values_list("name", flat=True))
    assert {"双怪冲三 Double monster", "通用 General table", "原版 Original"} <= names
    count = RuleConfiguration.objects.count()
    sources.forwards(apps, None)
    assert RuleConfiguration.objects.count() == count

    sources.backwards(apps, None)
    assert not {"shuangguai", "general", "original"} & set(by_kind())


def test_0024_rules_saved_before_that_play_a_source_preset_get_its_tag_not_a_copy() -> None:
    fresh_default()
    mine = RuleConfiguration.from_engine(preset_config("original"), name="Mine")
    RuleConfiguration.objects.filter(pk=mine.pk).update(preset="")  # as saved before 0024
    RuleConfiguration.from_engine(RuleConfig(gun_water=5), name="通用 General table")

    sources.forwards(apps, None)

    kinds = by_kind()
    assert kinds["original"] == [mine]
    assert kinds["general"][0].name == "通用 General table (2)"

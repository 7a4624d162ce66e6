"""The variant decks are playable out of the box: one configuration per deck preset of
RULES.md §12.6 (多一色, 癞子, 多三张), from the engine's preset data, paced like the default
configuration (its ready, arrange, deal and reveal times). Skipped for a preset whose name is
taken; reversible (removes them when no room uses them)."""

from django.db import migrations

NAMES = {
    "duoyise": ("多一色 Extra suit", "RULES.md §12.6 duoyise: 65 cards, up to 5 players [S2, S4]."),
    "laizi": ("癞子 Jokers", "RULES.md §12.6 laizi: 54 cards, two wild jokers [S2, S4]."),
    "duosanzhang": (
        "多三张 Spare cards",
        "RULES.md §12.6 duosanzhang: 65 cards, 16 each, play 13, up to 4 players [S2, S4].",
    ),
}
PACE = (
    "ready_seconds",
    "special_choice_seconds",
    "arrange_seconds",
    "deal_mode",
    "deal_interval_ms",
    "compare_mode",
    "reveal_interval_ms",
)
# Frozen copies of games.models' field maps as they are when this migration is written.
ROW_BONUS_FIELDS = {
    "bonus_front_trips": "front.trips",
    "bonus_middle_full_house": "middle.full_house",
    "bonus_middle_quads": "middle.quads",
    "bonus_middle_straight_flush": "middle.straight_flush",
    "bonus_back_quads": "back.quads",
    "bonus_back_straight_flush": "back.straight_flush",
    "bonus_middle_five_of_a_kind": "middle.five_of_a_kind",
    "bonus_back_five_of_a_kind": "back.five_of_a_kind",
}
PLAIN_FIELDS = (
    "a2345",
    "run_over_counts_as_gun",
    "gun_mode",
    "gun_water",
    "home_run_water",
    "home_run_min_players",
    "base_score",
    "escape_penalty_multiplier",
    "escape_covers_losses",
    *PACE,
    "extra_suits",
    "jokers",
    "spare_cards",
)


def forwards(apps, schema_editor):
    from games.rules.presets import PRESETS

    RuleConfiguration = apps.get_model("games", "RuleConfiguration")
    SpecialHandSetting = apps.get_model("games", "SpecialHandSetting")
    default = RuleConfiguration.objects.filter(is_default=True).first()
    for preset_id, (name, description) in NAMES.items():
        if RuleConfiguration.objects.filter(name=name).exists():
            continue
        data = PRESETS[preset_id].config.to_dict()
        values = {field: data[field] for field in PLAIN_FIELDS}
        if default is not None:
            values.update({field: getattr(default, field) for field in PACE})
        values.update({f: data["row_bonus"][key] for f, key in ROW_BONUS_FIELDS.items()})
        config = RuleConfiguration.objects.create(name=name, description=description, **values)
        for position, sid in enumerate(data["special_order"], start=1):
            SpecialHandSetting.objects.create(
                configuration=config,
                special=sid,
                enabled=data["specials"][sid]["enabled"],
                water=data["specials"][sid]["water"],
                order=position,
            )


def backwards(apps, schema_editor):
    RuleConfiguration = apps.get_model("games", "RuleConfiguration")
    names = [name for name, _ in NAMES.values()]
    RuleConfiguration.objects.filter(name__in=names, rooms__isnull=True).delete()


class Migration(migrations.Migration):
    dependencies = [("games", "0011_variant_decks"), ("lobby", "0002_room_empty_since")]

    operations = [migrations.RunPython(forwards, backwards)]

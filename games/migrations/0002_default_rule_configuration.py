"""The default rule configuration (RULES.md's defaults) exists after `migrate`."""

from django.db import migrations

DEFAULT_NAME = "Standard 标准"


# Frozen copies of games.models' field maps as they were when this migration was written.
ROW_BONUS_FIELDS = {
    "bonus_front_trips": "front.trips",
    "bonus_middle_full_house": "middle.full_house",
    "bonus_middle_quads": "middle.quads",
    "bonus_middle_straight_flush": "middle.straight_flush",
    "bonus_back_quads": "back.quads",
    "bonus_back_straight_flush": "back.straight_flush",
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
    "ready_seconds",
    "special_choice_seconds",
    "arrange_seconds",
    "deal_mode",
    "deal_interval_ms",
    "compare_mode",
    "reveal_interval_ms",
)


def create_default(apps, schema_editor):
    from games.rules.config import DEFAULT_CONFIG

    RuleConfiguration = apps.get_model("games", "RuleConfiguration")
    SpecialHandSetting = apps.get_model("games", "SpecialHandSetting")
    if RuleConfiguration.objects.filter(is_default=True).exists():
        return
    data = DEFAULT_CONFIG.to_dict()
    values = {name: data[name] for name in PLAIN_FIELDS}
    values.update({f: data["row_bonus"][key] for f, key in ROW_BONUS_FIELDS.items()})
    config = RuleConfiguration.objects.create(
        name=DEFAULT_NAME,
        description="RULES.md defaults (game design document [S0]).",
        is_default=True,
        **values,
    )
    for position, sid in enumerate(data["special_order"], start=1):
        SpecialHandSetting.objects.create(
            configuration=config,
            special=sid,
            enabled=data["specials"][sid]["enabled"],
            water=data["specials"][sid]["water"],
            order=position,
        )


class Migration(migrations.Migration):
    dependencies = [("games", "0001_rule_configuration")]

    operations = [migrations.RunPython(create_default, migrations.RunPython.noop)]

"""Every preset of RULES.md §12.6 and the 6-seat deck are playable out of the box.

First each configuration gets its ``preset`` (the preset its rules play, pace and base score
aside). Then every preset no configuration plays is created from the engine's preset data
(``RuleConfiguration.engine_values``, the values ``from_engine`` saves), and so is the 78-card
deck (two extra suits, six seats: the 多一色 preset with a second extra suit) unless some
configuration already deals it; each is paced like the default configuration. A name already
taken gets " (2)", " (3)" … Running it again creates nothing. Reversible: the backwards step
removes what it created when no room uses it.
"""

from django.db import migrations

from games.rules.config import RuleConfig
from games.rules.presets import PRESETS, preset_of

# (preset or deck id, name, description); the names are bilingual data names, each page shows
# the half in its language (games.labels.data_name).
WANTED = (
    ("classic", "经典 Classic", "RULES.md §12.6 classic: every default of RULES.md [S0]."),
    ("duoyise", "多一色 Extra suit", "RULES.md §12.6 duoyise: 65 cards, up to 5 players [S2, S4]."),
    ("laizi", "癞子 Jokers", "RULES.md §12.6 laizi: 54 cards, two wild jokers [S2, S4]."),
    (
        "duosanzhang",
        "多三张 Spare cards",
        "RULES.md §12.6 duosanzhang: 65 cards, 16 each, play 13, up to 4 players [S2, S4].",
    ),
    ("fuzhou", "福州 Fuzhou", "RULES.md §12.6 fuzhou: guns double the water, five specials [S2]."),
    (
        "regional",
        "地区 Regional",
        "RULES.md §12.6 regional: regional special-hand water and row bonuses [S3].",
    ),
    (
        "duoerse",
        "多两色 Two extra suits",
        "RULES.md §12.1: 78 cards (two extra suits of diamonds), up to 6 players; specials as "
        "the duoyise preset [S2, S4].",
    ),
)
PACE = (
    "ready_seconds",
    "special_choice_seconds",
    "arrange_seconds",
    "reconnect_grace_seconds",
    "deal_mode",
    "deal_interval_ms",
    "compare_mode",
    "reveal_interval_ms",
)


def engine_config_of(obj, fields):
    """The engine's value of a stored configuration (fields this state of the schema has)."""
    from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS

    rows = sorted(obj.special_hands.all(), key=lambda s: (s.order, s.special))
    data = {name: getattr(obj, name) for name in PLAIN_FIELDS if name in fields}
    data["row_bonus"] = {key: getattr(obj, f) for f, key in ROW_BONUS_FIELDS.items() if f in fields}
    data["specials"] = {s.special: {"enabled": s.enabled, "water": s.water} for s in rows}
    data["special_order"] = [s.special for s in rows]
    return RuleConfig.from_dict(data)


def wanted_config(kind):
    if kind == "duoerse":
        return RuleConfig.from_dict({**PRESETS["duoyise"].overrides, "extra_suits": 2})
    return PRESETS[kind].config


def free_name(RuleConfiguration, name):
    taken = set(
        RuleConfiguration.objects.filter(name__startswith=name).values_list("name", flat=True)
    )
    candidate, n = name, 1
    while candidate in taken:
        n += 1
        candidate = f"{name} ({n})"
    return candidate


def forwards(apps, schema_editor):
    from games.models import RuleConfiguration as Current

    RuleConfiguration = apps.get_model("games", "RuleConfiguration")
    SpecialHandSetting = apps.get_model("games", "SpecialHandSetting")
    fields = {f.name for f in RuleConfiguration._meta.concrete_fields}
    for obj in RuleConfiguration.objects.prefetch_related("special_hands"):
        try:
            preset = preset_of(engine_config_of(obj, fields)) or ""
        except ValueError:  # the engine's ConfigError: stored rules it refuses
            preset = ""
        if preset != obj.preset:
            RuleConfiguration.objects.filter(pk=obj.pk).update(preset=preset)

    default = RuleConfiguration.objects.filter(is_default=True).first()
    for kind, name, description in WANTED:
        if kind == "duoerse":
            exists = RuleConfiguration.objects.filter(extra_suits=2, spare_cards=0).exists()
        else:
            exists = RuleConfiguration.objects.filter(preset=kind).exists()
        if exists:
            continue
        values, rows = Current.engine_values(wanted_config(kind))
        values = {k: v for k, v in values.items() if k in fields}
        if default is not None:
            values.update({k: getattr(default, k) for k in PACE if k in fields})
        config = RuleConfiguration.objects.create(
            name=free_name(RuleConfiguration, name), description=description, **values
        )
        SpecialHandSetting.objects.bulk_create(
            SpecialHandSetting(configuration=config, **row) for row in rows
        )


def backwards(apps, schema_editor):
    RuleConfiguration = apps.get_model("games", "RuleConfiguration")
    # Only what migration 0012 never makes (that one removes its own).
    descriptions = [
        d for kind, _name, d in WANTED if kind in ("classic", "fuzhou", "regional", "duoerse")
    ]
    RuleConfiguration.objects.filter(
        description__in=descriptions, rooms__isnull=True, is_default=False
    ).delete()


class Migration(migrations.Migration):
    dependencies = [("games", "0020_rule_presets"), ("lobby", "0008_room_series")]

    operations = [migrations.RunPython(forwards, backwards)]

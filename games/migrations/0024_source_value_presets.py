"""The three presets of the sources' remaining value tables (games/rules/presets.py:
``shuangguai`` [S1], ``general`` [S2], ``original`` [S3]) exist out of the box.

First every configuration's ``preset`` is recomputed (rules saved before may play one of
them). Then each is created from the engine's preset data (``RuleConfiguration.engine_values``) unless a
configuration already plays it, paced like the default configuration; a name already taken
gets " (2)", " (3)" … Running it again creates nothing. Reversible: the backwards step removes
what it created when no room uses it and it is not the default.
"""

from django.db import migrations, models

import importlib

from games.rules.presets import PRESETS, preset_of

# (preset id, name, description); bilingual data names as in migration 0021.
WANTED = (
    (
        "shuangguai",
        "双怪冲三 Double monster",
        "Preset shuangguai: the special-hand water of [S1], 双怪冲三 (6) enabled.",
    ),
    (
        "general",
        "通用 General table",
        "Preset general: the general scoring table of [S2] (special water, a gun doubles).",
    ),
    (
        "original",
        "原版 Original",
        "Preset original: the original row values of [S3] (middle row 3/8/10).",
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
    engine_config_of = importlib.import_module(
        "games.migrations.0021_presets_out_of_the_box"
    ).engine_config_of
    for obj in RuleConfiguration.objects.prefetch_related("special_hands"):
        try:
            preset = preset_of(engine_config_of(obj, fields)) or ""
        except ValueError:  # the engine's ConfigError: stored rules it refuses
            preset = ""
        if preset != obj.preset:
            RuleConfiguration.objects.filter(pk=obj.pk).update(preset=preset)

    default = RuleConfiguration.objects.filter(is_default=True).first()
    for kind, name, description in WANTED:
        if RuleConfiguration.objects.filter(preset=kind).exists():
            continue
        values, rows = Current.engine_values(PRESETS[kind].config)
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
    RuleConfiguration.objects.filter(
        description__in=[d for _kind, _name, d in WANTED], rooms__isnull=True, is_default=False
    ).delete()


class Migration(migrations.Migration):

    dependencies = [
        ('games', '0023_row_water'),
    ]

    operations = [
        migrations.AlterField(
            model_name='historicalruleconfiguration',
            name='preset',
            field=models.CharField(blank=True, choices=[('classic', '经典 Classic'), ('duoyise', '多一色 Extra suit'), ('laizi', '癞子 Jokers'), ('duosanzhang', '多三张 Three spare cards'), ('fuzhou', '福州 Fuzhou'), ('regional', '地区 Regional'), ('shuangguai', '双怪冲三 Double monster'), ('general', '通用 General table'), ('original', '原版 Original')], editable=False, help_text="The preset of RULES.md §12.6 these rules play, their pace and base score aside (the lobby's badge); empty for other rules. Kept up to date on every save.", max_length=16, verbose_name='preset'),
        ),
        migrations.AlterField(
            model_name='ruleconfiguration',
            name='preset',
            field=models.CharField(blank=True, choices=[('classic', '经典 Classic'), ('duoyise', '多一色 Extra suit'), ('laizi', '癞子 Jokers'), ('duosanzhang', '多三张 Three spare cards'), ('fuzhou', '福州 Fuzhou'), ('regional', '地区 Regional'), ('shuangguai', '双怪冲三 Double monster'), ('general', '通用 General table'), ('original', '原版 Original')], editable=False, help_text="The preset of RULES.md §12.6 these rules play, their pace and base score aside (the lobby's badge); empty for other rules. Kept up to date on every save.", max_length=16, verbose_name='preset'),
        ),
        migrations.RunPython(forwards, backwards),
    ]

"""Separation of powers over the economy: the permission `change_economy_money` and the
`economy_admin` group that holds it (`rules_admin` loses `change_economysettings`), the
settings' version and hard upper bounds, the pending changes a second administrator approves,
and the cause a ledger transaction was paid under.

Stored settings beyond a bound are lowered to it before the bound's constraint is added.
"""

from django.contrib.auth.management import create_permissions
import django.core.validators
import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


# The bounds as this migration set them (frozen: later migrations add fields of their own).
BOUNDS = {
    "signup_grant": 1_000_000,
    "daily_bonus": 100_000,
    "relief_amount": 100_000,
    "relief_below": 1_000_000,
    "relief_per_day": 10,
    "signups_per_address_per_day": 100,
    "collusion_min_rounds": 1_000,
    "collusion_days": 365,
    "collusion_min_share_percent": 100,
    "collusion_min_flow": 10_000_000,
}


def bounds_apply(apps, schema_editor):
    settings_model = apps.get_model("accounts", "EconomySettings")
    rows = settings_model.objects.using(schema_editor.connection.alias)
    for name, bound in BOUNDS.items():
        rows.filter(**{f"{name}__gt": bound}).update(**{name: bound})


def groups_apply(apps, schema_editor):
    from accounts.groups import groups_sync

    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(app_config, verbosity=0, using=schema_editor.connection.alias, apps=apps)
        app_config.models_module = None
    groups_sync(
        group_model=apps.get_model("auth", "Group"),
        permission_model=apps.get_model("auth", "Permission"),
        using=schema_editor.connection.alias,
    )


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0008_user_name_key_reset_permission"),
    ]

    operations = [
        migrations.CreateModel(
            name="EconomyChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("values", models.JSONField(verbose_name="proposed values")),
                (
                    "status",
                    models.CharField(
                        choices=[
                            ("pending", "Pending approval"),
                            ("applied", "Approved and applied"),
                        ],
                        default="pending",
                        max_length=16,
                        verbose_name="status",
                    ),
                ),
                (
                    "proposed_at",
                    models.DateTimeField(auto_now_add=True, verbose_name="proposed at"),
                ),
                (
                    "applied_at",
                    models.DateTimeField(blank=True, null=True, verbose_name="applied at"),
                ),
                (
                    "applied_version",
                    models.PositiveIntegerField(
                        blank=True, null=True, verbose_name="settings version applied"
                    ),
                ),
            ],
            options={
                "verbose_name": "economy change",
                "verbose_name_plural": "economy changes",
                "ordering": ["-id"],
            },
        ),
        migrations.AlterModelOptions(
            name="economysettings",
            options={
                "permissions": [
                    (
                        "change_economy_money",
                        "Can propose and approve changes to what the mint pays and to the protections",
                    )
                ],
                "verbose_name": "economy settings",
                "verbose_name_plural": "economy settings",
            },
        ),
        migrations.AddField(
            model_name="economysettings",
            name="version",
            field=models.PositiveIntegerField(
                default=1,
                editable=False,
                help_text="Raised by one with every approved change; the grants paid name the version they were paid under.",
                verbose_name="version",
            ),
        ),
        migrations.AddField(
            model_name="historicaleconomysettings",
            name="version",
            field=models.PositiveIntegerField(
                default=1,
                editable=False,
                help_text="Raised by one with every approved change; the grants paid name the version they were paid under.",
                verbose_name="version",
            ),
        ),
        migrations.AddField(
            model_name="transaction",
            name="cause",
            field=models.CharField(
                blank=True,
                help_text='Under what the platform paid it when no person did: "economy_settings:v3" for a grant paid under that version of the economy settings.',
                default="",
                db_default="",
                max_length=100,
                verbose_name="cause",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="collusion_days",
            field=models.PositiveIntegerField(
                default=7,
                help_text="The rounds of this many past days are examined.",
                validators=[
                    django.core.validators.MinValueValidator(1, "At least 1 day."),
                    django.core.validators.MaxValueValidator(365, "At most %(limit_value)s."),
                ],
                verbose_name="collusion: days",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="collusion_min_flow",
            field=models.BigIntegerField(
                default=20000,
                help_text="And at least this many coins went, net, from one to the other.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(10000000, "At most %(limit_value)s."),
                ],
                verbose_name="collusion: minimum flow",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="collusion_min_rounds",
            field=models.PositiveIntegerField(
                default=20,
                help_text="A pair is reported after at least this many settled rounds together.",
                validators=[
                    django.core.validators.MinValueValidator(1, "At least 1 shared round."),
                    django.core.validators.MaxValueValidator(1000, "At most %(limit_value)s."),
                ],
                verbose_name="collusion: shared rounds",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="daily_bonus",
            field=models.BigIntegerField(
                default=2000,
                help_text="Coins a player may claim once per day (UTC). 0 turns the bonus off.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(100000, "At most %(limit_value)s."),
                ],
                verbose_name="daily bonus",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="relief_amount",
            field=models.BigIntegerField(
                default=10000,
                help_text="Coins a broke player may claim. 0 turns relief off.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(100000, "At most %(limit_value)s."),
                ],
                verbose_name="relief grant",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="relief_below",
            field=models.BigIntegerField(
                default=5000,
                help_text="Relief may be claimed only by a player holding fewer coins than this.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(1000000, "At most %(limit_value)s."),
                ],
                verbose_name="relief below",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="relief_per_day",
            field=models.PositiveSmallIntegerField(
                default=2,
                help_text="How many times a player may claim relief per day (UTC).",
                validators=[
                    django.core.validators.MaxValueValidator(10, "At most %(limit_value)s.")
                ],
                verbose_name="reliefs per day",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="signup_grant",
            field=models.BigIntegerField(
                blank=True,
                help_text="Coins a new player receives. Empty: the SIGNUP_GRANT setting.",
                null=True,
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(1000000, "At most %(limit_value)s."),
                ],
                verbose_name="sign-up grant",
            ),
        ),
        migrations.AlterField(
            model_name="economysettings",
            name="signups_per_address_per_day",
            field=models.PositiveIntegerField(
                default=5,
                help_text="Accounts that may be created from one IP address (an IPv6 /64 network) per day (UTC). 0: no limit.",
                validators=[
                    django.core.validators.MaxValueValidator(100, "At most %(limit_value)s.")
                ],
                verbose_name="sign-ups per address per day",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="collusion_days",
            field=models.PositiveIntegerField(
                default=7,
                help_text="The rounds of this many past days are examined.",
                validators=[
                    django.core.validators.MinValueValidator(1, "At least 1 day."),
                    django.core.validators.MaxValueValidator(365, "At most %(limit_value)s."),
                ],
                verbose_name="collusion: days",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="collusion_min_flow",
            field=models.BigIntegerField(
                default=20000,
                help_text="And at least this many coins went, net, from one to the other.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(10000000, "At most %(limit_value)s."),
                ],
                verbose_name="collusion: minimum flow",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="collusion_min_rounds",
            field=models.PositiveIntegerField(
                default=20,
                help_text="A pair is reported after at least this many settled rounds together.",
                validators=[
                    django.core.validators.MinValueValidator(1, "At least 1 shared round."),
                    django.core.validators.MaxValueValidator(1000, "At most %(limit_value)s."),
                ],
                verbose_name="collusion: shared rounds",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="daily_bonus",
            field=models.BigIntegerField(
                default=2000,
                help_text="Coins a player may claim once per day (UTC). 0 turns the bonus off.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(100000, "At most %(limit_value)s."),
                ],
                verbose_name="daily bonus",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="relief_amount",
            field=models.BigIntegerField(
                default=10000,
                help_text="Coins a broke player may claim. 0 turns relief off.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(100000, "At most %(limit_value)s."),
                ],
                verbose_name="relief grant",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="relief_below",
            field=models.BigIntegerField(
                default=5000,
                help_text="Relief may be claimed only by a player holding fewer coins than this.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(1000000, "At most %(limit_value)s."),
                ],
                verbose_name="relief below",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="relief_per_day",
            field=models.PositiveSmallIntegerField(
                default=2,
                help_text="How many times a player may claim relief per day (UTC).",
                validators=[
                    django.core.validators.MaxValueValidator(10, "At most %(limit_value)s.")
                ],
                verbose_name="reliefs per day",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="signup_grant",
            field=models.BigIntegerField(
                blank=True,
                help_text="Coins a new player receives. Empty: the SIGNUP_GRANT setting.",
                null=True,
                validators=[
                    django.core.validators.MinValueValidator(
                        0, "Enter 0 or more coins; a negative amount is not allowed."
                    ),
                    django.core.validators.MaxValueValidator(1000000, "At most %(limit_value)s."),
                ],
                verbose_name="sign-up grant",
            ),
        ),
        migrations.AlterField(
            model_name="historicaleconomysettings",
            name="signups_per_address_per_day",
            field=models.PositiveIntegerField(
                default=5,
                help_text="Accounts that may be created from one IP address (an IPv6 /64 network) per day (UTC). 0: no limit.",
                validators=[
                    django.core.validators.MaxValueValidator(100, "At most %(limit_value)s.")
                ],
                verbose_name="sign-ups per address per day",
            ),
        ),
        migrations.RunPython(bounds_apply, migrations.RunPython.noop),
        migrations.AddConstraint(
            model_name="economysettings",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(
                        ("signup_grant__isnull", True),
                        ("signup_grant__lte", 1000000),
                        _connector="OR",
                    ),
                    ("collusion_days__lte", 365),
                    ("collusion_min_flow__lte", 10000000),
                    ("collusion_min_rounds__lte", 1000),
                    ("collusion_min_share_percent__lte", 100),
                    ("daily_bonus__lte", 100000),
                    ("relief_amount__lte", 100000),
                    ("relief_below__lte", 1000000),
                    ("relief_per_day__lte", 10),
                    ("signups_per_address_per_day__lte", 100),
                ),
                name="economy_values_within_bounds",
            ),
        ),
        migrations.AddField(
            model_name="economychange",
            name="approved_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="approved by",
            ),
        ),
        migrations.AddField(
            model_name="economychange",
            name="proposed_by",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.PROTECT,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
                verbose_name="proposed by",
            ),
        ),
        migrations.AddConstraint(
            model_name="economychange",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    ("approved_by__isnull", True),
                    models.Q(("approved_by", models.F("proposed_by")), _negated=True),
                    _connector="OR",
                ),
                name="economy_change_approved_by_another",
            ),
        ),
        migrations.RunPython(groups_apply, migrations.RunPython.noop),
    ]

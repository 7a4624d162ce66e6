"""Store the balances a round was settled with, and let `support` view the played rounds.

`support` audits settlements: it may view rounds, their players and the tables' event logs,
never change them. Permissions are created here first, as in migration 0005.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations, models

# Frozen copy of what this migration grants.
GRANTS = {"support": ("view_round", "view_roundplayer", "view_tableevent")}


def grant(apps, schema_editor):
    alias = schema_editor.connection.alias
    app_config = apps.get_app_config("games")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, using=alias, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group_name, codenames in GRANTS.items():
        group, _ = Group.objects.using(alias).get_or_create(name=group_name)
        found = Permission.objects.using(alias).filter(
            content_type__app_label="games", codename__in=codenames
        )
        group.permissions.add(*found)


def revoke(apps, schema_editor):
    alias = schema_editor.connection.alias
    Group = apps.get_model("auth", "Group")
    Permission = apps.get_model("auth", "Permission")
    for group_name, codenames in GRANTS.items():
        group = Group.objects.using(alias).filter(name=group_name).first()
        if group is not None:
            group.permissions.remove(
                *Permission.objects.using(alias).filter(
                    content_type__app_label="games", codename__in=codenames
                )
            )


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0006_tables"),
    ]

    operations = [
        migrations.AddField(
            model_name="round",
            name="balances",
            field=models.JSONField(
                blank=True,
                help_text="Each player's wallet balance (user id -> coins) the round was settled with.",
                null=True,
                verbose_name="balances before settlement",
            ),
        ),
        migrations.RunPython(grant, revoke),
    ]

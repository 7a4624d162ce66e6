"""Grant the staff groups their permissions on the rule configurations.

`rules_admin` may view, add and change configurations and their special-hand rows, but not
delete them (the admin refuses to delete the default configuration to anyone); `support` may
view them. The groups are created by accounts' migration 0004; permissions are normally created
after all migrations have run, so they are created here first for the games app.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

# Frozen copy of what this migration grants (group name -> "app_label.codename").
GRANTS = {
    "rules_admin": (
        "games.view_ruleconfiguration",
        "games.add_ruleconfiguration",
        "games.change_ruleconfiguration",
        "games.view_specialhandsetting",
        "games.add_specialhandsetting",
        "games.change_specialhandsetting",
    ),
    "support": (
        "games.view_ruleconfiguration",
        "games.view_specialhandsetting",
    ),
}


def _permissions(apps, alias, names):
    Permission = apps.get_model("auth", "Permission")
    codenames = [name.split(".", 1)[1] for name in names]
    found = list(
        Permission.objects.using(alias).filter(
            content_type__app_label="games", codename__in=codenames
        )
    )
    missing = set(codenames) - {p.codename for p in found}
    if missing:
        raise RuntimeError(f"permissions missing: {sorted(missing)}")
    return found


def grant(apps, schema_editor):
    alias = schema_editor.connection.alias
    app_config = apps.get_app_config("games")
    app_config.models_module = True
    create_permissions(app_config, verbosity=0, using=alias, apps=apps)
    app_config.models_module = None
    Group = apps.get_model("auth", "Group")
    for group_name, names in GRANTS.items():
        group, _ = Group.objects.using(alias).get_or_create(name=group_name)
        group.permissions.add(*_permissions(apps, alias, names))


def revoke(apps, schema_editor):
    alias = schema_editor.connection.alias
    Group = apps.get_model("auth", "Group")
    for group_name, names in GRANTS.items():
        group = Group.objects.using(alias).filter(name=group_name).first()
        if group is not None:
            group.permissions.remove(*_permissions(apps, alias, names))


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0004_history_baseline"),
        ("accounts", "0004_staff_groups"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [migrations.RunPython(grant, revoke)]

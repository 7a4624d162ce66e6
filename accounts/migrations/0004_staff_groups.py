"""Create the staff groups `support` and `rules_admin` with their permissions.

Permissions are normally created after all migrations have run, so they are created here first
for the apps migrated so far.
"""

from django.contrib.auth.management import create_permissions
from django.db import migrations

from accounts.groups import GROUP_PERMISSIONS, groups_sync


def forwards(apps, schema_editor):
    for app_config in apps.get_app_configs():
        app_config.models_module = True
        create_permissions(
            app_config, verbosity=0, using=schema_editor.connection.alias, apps=apps
        )
        app_config.models_module = None
    groups_sync(
        group_model=apps.get_model("auth", "Group"),
        permission_model=apps.get_model("auth", "Permission"),
        using=schema_editor.connection.alias,
    )


def backwards(apps, schema_editor):
    Group = apps.get_model("auth", "Group")
    Group.objects.using(schema_editor.connection.alias).filter(name__in=GROUP_PERMISSIONS).delete()


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0003_ledger_database_rules"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.RunPython(forwards, backwards),
    ]

from typing import Any

from django.db import migrations, models


def keys_fill(apps: Any, schema_editor: Any) -> None:
    """Every existing user's key. Existing look-alike pairs keep their names: only new sign-ups
    are refused."""
    from accounts.names import name_key

    user_model = apps.get_model("accounts", "User")
    users = user_model.objects.using(schema_editor.connection.alias)
    for user in users.only("pk", "username").iterator(chunk_size=2000):
        users.filter(pk=user.pk).update(name_key=name_key(user.username))


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0007_user_default_layout"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="user",
            options={
                "permissions": [
                    ("send_password_reset", "Can send a user a password reset link")
                ],
                "verbose_name": "user",
                "verbose_name_plural": "users",
            },
        ),
        migrations.AddField(
            model_name="user",
            name="name_key",
            field=models.CharField(
                blank=True,
                db_index=True,
                editable=False,
                help_text="The user name's Unicode skeleton: look-alike names share it.",
                max_length=600,
                verbose_name="look-alike key",
            ),
        ),
        migrations.RunPython(keys_fill, migrations.RunPython.noop, elidable=True),
    ]

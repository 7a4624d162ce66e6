"""Private table events belong to a player, not a seat position.

Rows logged before this have only the position; their player cannot be told apart from a later
occupant of the same seat, so they are shown to nobody (recipient "").
"""

from django.db import migrations, models


def hide_legacy_private_events(apps, schema_editor):
    TableEvent = apps.get_model("games", "TableEvent")
    TableEvent.objects.filter(audience__isnull=False).update(recipient="")


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0007_round_balances_support_audit"),
    ]

    operations = [
        migrations.AddField(
            model_name="tableevent",
            name="recipient",
            field=models.CharField(blank=True, max_length=64, null=True, verbose_name="recipient"),
        ),
        migrations.RunPython(hide_legacy_private_events, migrations.RunPython.noop),
    ]

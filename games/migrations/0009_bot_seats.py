"""Seats of bot players are marked in the stored table states (``SeatState.bot``), so the
table's rules know them without asking the users table."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def mark_bot_seats(apps: Any, schema_editor: Any) -> None:
    Table = apps.get_model("games", "Table")
    User = apps.get_model("accounts", "User")
    bots = {str(pk) for pk in User.objects.filter(is_bot=True).values_list("pk", flat=True)}
    for table in Table.objects.all().iterator():
        seats = table.state.get("seats", [])
        changed = False
        for seat in seats:
            bot = str(seat.get("player")) in bots
            if seat.get("bot") != bot:
                seat["bot"] = bot
                changed = True
        if changed:
            table.save(update_fields=["state"])


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0008_table_event_recipient"),
        ("accounts", "0005_user_is_bot"),
    ]

    operations = [migrations.RunPython(mark_bot_seats, migrations.RunPython.noop)]

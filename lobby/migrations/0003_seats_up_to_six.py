"""Rooms of 2 to 6 seats: a variant deck seats up to 5 (one extra suit) or 6 (two);
the services hold each room to its configuration's `max_seats`. After games 0012, which reads
the lobby's tables as they were at 0002."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("games", "0012_variant_presets"),
        ("lobby", "0002_room_empty_since"),
    ]

    operations = [
        migrations.RemoveConstraint(model_name="room", name="lobby_room_seats_2_to_4"),
        migrations.RemoveConstraint(model_name="seat", name="lobby_seat_position_in_range"),
        migrations.AddConstraint(
            model_name="room",
            constraint=models.CheckConstraint(
                condition=models.Q(("seats__in", (2, 3, 4, 5, 6))),
                name="lobby_room_seats_2_to_6",
            ),
        ),
        migrations.AddConstraint(
            model_name="seat",
            constraint=models.CheckConstraint(
                condition=models.Q(("position__lt", 6)), name="lobby_seat_position_in_range"
            ),
        ),
    ]

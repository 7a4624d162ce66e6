"""The lobby listens to the table: players the table lets go leave their lobby seats.

Connected in :meth:`lobby.apps.LobbyConfig.ready`. ``games.table_services.players_left`` is
sent inside the table command's transaction, so the seat is freed in the same transaction.
"""

from __future__ import annotations

from typing import Any

from lobby.models import Room
from lobby.services import seat_release


def free_seats_of_players_left(*, room_id: int, user_ids: list[int], **_: Any) -> None:
    room = Room.objects.get(pk=room_id)
    for user_id in user_ids:
        seat_release(room=room, user_id=user_id)

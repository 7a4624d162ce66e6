"""The lobby listens to the table.

Connected in :meth:`lobby.apps.LobbyConfig.ready`:

- ``games.live.services.players_left`` is sent inside the table command's transaction: the
  players the table let go leave their lobby seats in the same transaction, and a room their
  bots have just left empty closes (``lobby.services.seats_release``);
- ``games.live.services.transition_committed`` is sent on commit of every transition: a
  person whose round has just started or ended is told on their own lobby group
  (``seat.round``), so an open lobby page keeps its "you are in a round" banner right. Pure
  work on the two states, no query; a message only when a round starts or settles.
"""

from __future__ import annotations

import logging
from typing import Any

from games.table.state import TableState
from lobby.selectors import player_in_round
from lobby.services import seats_release
from shisanshui.publish import publish

logger = logging.getLogger(__name__)


def lobby_user_group(user_id: int) -> str:
    """The channel group of one player's lobby sockets."""
    return f"lobby.user.{user_id}"


def free_seats_of_players_left(*, room_id: int, user_ids: list[int], **_: Any) -> None:
    seats_release(room_id=room_id, user_ids=user_ids)


def round_changes(before: TableState, after: TableState) -> dict[int, bool]:
    """{user id: in a round now} for every person seated after the transition whose being in
    a round differs from before (bots have no lobby page)."""
    if before.phase == after.phase:
        return {}
    changes: dict[int, bool] = {}
    for seat in after.seats:
        now = player_in_round(after, seat.player)
        if not seat.bot and now != player_in_round(before, seat.player):
            changes[int(seat.player)] = now
    return changes


def tell_lobby_of_rounds(*, before: TableState, after: TableState, **_: Any) -> None:
    changes = round_changes(before, after)
    if not changes:
        return
    # Published with the table's own messages when the action came from the table's socket
    # (shisanshui.publish.outbox): the command's reply does not wait for the lobby.
    try:
        publish(
            [
                (lobby_user_group(user_id), {"type": "lobby.seat_round", "in_round": playing})
                for user_id, playing in changes.items()
            ]
        )
    except Exception:  # the banner is a convenience: the next snapshot has the truth
        logger.warning("could not tell the lobby of a round: %s", changes, exc_info=True)

"""Who hears of a table's transition, and what: its channel groups and messages, sent on commit.

Each player gets, on its own group (``table.<pk>.player.<id>``, type ``table.events``), the
events it may see, with the range of versions the batch covers; everyone else at the table,
seated or watching, gets the batch's public events on the table's public group. Another
player's private events (cards, drafts, arrangements) never travel to a connection, nor
through Redis to a process, that is not that player's. Nothing leaves before the commit.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction

from games.table.events import Event
from games.table.perspective import delivered, hand_suggestions
from games.table.state import Json, TableState
from shisanshui.publish import Message, publish, publish_later

logger = logging.getLogger(__name__)

# The key of the message for everyone at the table in ``batch_messages``: the batch's public
# events, for the spectators and for every player with no private event in the batch.
EVERYONE = "*"


def table_player_group(table_id: int, player: str) -> str:
    """The channel-layer group of one player's connections to a table: its events only."""
    return f"table.{table_id}.player.{player}"


def table_public_group(table_id: int) -> str:
    """The channel-layer group of every connection to a table, seated or watching: the public
    events of each batch (``batch_messages``), never a private one."""
    return f"table.{table_id}.public"


def notify_on_commit(
    *, table_id: int, events: list[Event], state: TableState, players: Iterable[str], watched: bool
) -> None:
    """Send ``events`` (a transition's, ending in ``state``) to ``players`` and, if anyone
    watches, to the spectators, once the transaction commits and the table's lock is released.
    The events go out at once; a person's dealt hand goes without its suggestions, which
    follow once the deal is out (``delivered``, live): the engine's few milliseconds a hand
    are not the deal's."""

    def notify() -> None:
        sent = [delivered(e, state, live=True) for e in events]
        send_messages(table_id, batch_messages(events=sent, players=players, spectators=watched))
        waiting = [
            e
            for e, out in zip(events, sent, strict=True)
            if out.type == "hand" and out.payload.get("suggestions", ()) is None
        ]
        if waiting:
            publish_later(lambda: suggestion_messages(table_id, waiting, state))

    transaction.on_commit(notify, robust=True)


def batch_messages(
    *, events: list[Event], players: Iterable[str], spectators: bool = False
) -> dict[str, Json]:
    """Each message of a batch of events, by whom it is for.

    A player with a private event in the batch (its hand, its own arrangement) gets its own
    message: every event it may see. Everyone else — the other players, and the spectators —
    gets one message of the public events (key EVERYONE), published once to the table's public
    group; it names the players who got their own (``except``), whose connections skip it. So
    a Ready is one publish and a submission two (the submitter's own, and everyone's), instead
    of one per player. The message for everyone is left out when every player has its own and
    nobody watches (``spectators``: the table's watcher count).

    ``first`` and ``last`` are the versions the whole batch covers, so that a connection knows
    it has seen every version up to ``last`` even when the batch holds nothing for it.
    """
    first, last = events[0].version, events[-1].version
    addressed = {e.audience for e in events if e.private}
    players = list(dict.fromkeys(players))
    own = [p for p in players if p in addressed]
    messages: dict[str, Json] = {
        player: {
            "type": "table.events",
            "first": first,
            "last": last,
            "events": [e.message() for e in events if e.visible_to(player)],
        }
        for player in own
    }
    if spectators or len(own) < len(players):
        messages[EVERYONE] = {
            "type": "table.events",
            "first": first,
            "last": last,
            "events": [e.message() for e in events if not e.private],
            "except": own,
        }
    return messages


def send_messages(table_id: int, messages: dict[str, Json]) -> None:
    """Publish each player's own message to its group and the message for everyone to the
    table's public group (kept in the thread's outbox, if any: shisanshui.publish)."""
    publish(
        [
            (
                table_public_group(table_id)
                if key == EVERYONE
                else table_player_group(table_id, key),
                m,
            )
            for key, m in messages.items()
        ]
    )


def suggestion_messages(table_id: int, hands: list[Event], state: TableState) -> list[Message]:
    """The ``table.suggestions`` message of each hand sent live without them, to its player's
    group. A hand whose suggestions fail gets none (logged), so that its client stops waiting
    and the other hands' still go out."""
    out: list[Message] = []
    for event in hands:
        try:
            found = hand_suggestions(event, state)
        except Exception:
            logger.exception("could not work out the suggestions of a hand (sent none)")
            found = {"cards": event.payload["cards"], "suggestions": []}
        if found is not None:
            group = table_player_group(table_id, event.audience)
            out.append((group, {"type": "table.suggestions", **found}))
    return out

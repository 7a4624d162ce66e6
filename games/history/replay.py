"""The replay of a settled round: its public events, for the table's own reducer (reads only).

:func:`round_replay_data` gives the replay page what the table page would have been given by a
spectator's socket: a snapshot of the table as it was before the round (its players seated and
ready, the round's rules) and every public event from the round's start to its settlement, the
settled phase included. The page feeds them to ``static/games/table/state.js`` and draws them
with the table's views, so a round is rendered one way only.

Public events are what every seat saw by the end: the comparison reveals every arrangement
and special. Nothing private to a player (a dealt hand, suggestions, drafts, a special offered
and declined) is replayed, nor the deck and salt the settlement reveals, nor the chat, nor the
balances the round was settled with. A round in play is refused (:class:`RoundInPlay`): before
the settlement nobody, staff included, sees a hand. Who may open a replay is the view's business.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from django.db.models import Subquery

from games.history.audit import RoundInPlay
from games.history.selectors import round_in_play
from games.models import Round, RoundPlayer, TableEvent
from games.rules.config import RuleConfig
from games.table.events import Event
from games.table.perspective import events_for, snapshot_for
from games.table.state import SeatState, TableState

Json = dict[str, Any]

# Public events the replay leaves out: what players said is not the play of the round.
NOT_REPLAYED = frozenset({"chat"})
# What the ``settled`` event reveals that the replay does not draw and never shows.
SETTLEMENT_SECRETS = ("deck", "salt")


def round_replay_data(*, round_: Round, viewer: int | None) -> Json:
    """The replay of a settled round as JSON-able data: ``snapshot`` (a spectator's, before
    the round) and ``events`` (the wire format ``{version, type, payload}``), with each seat's
    ``names`` and the ``viewer``'s seat and ``player_id`` (None for staff).

    Raises :class:`RoundInPlay` for a round not settled yet.
    """
    if round_in_play(round_):
        raise RoundInPlay(round_.pk)
    players = sorted(round_.players.all(), key=lambda p: p.position)
    shown = [
        _public(event, round_.result)
        for event in events_for(round_log(round_=round_), None)
        if event.type not in NOT_REPLAYED
    ]
    viewer_id = next((str(p.user_id) for p in players if p.position == viewer), None)
    return {
        "round": {
            "id": round_.pk,
            "number": round_.number,
            "settled_at": round_.settled_at.isoformat() if round_.settled_at else None,
        },
        "viewer": viewer,
        "player_id": viewer_id,
        "capacity": round_.table.room.seats,
        "names": {str(p.position): p.user.display_name() for p in players},
        "snapshot": _before(round_, players, version=shown[0].version - 1 if shown else 0),
        "events": [event.message() for event in shown],
    }


def round_log(*, round_: Round) -> list[Event]:
    """Every stored event of the round, private ones included, in order: from its
    ``round_start`` to the ``phase`` event that ends its settlement (one query)."""
    log = TableEvent.objects.filter(table_id=round_.table_id)
    start = log.filter(type="round_start", payload__round_no=round_.number).values("version")
    end = (
        log.filter(type="phase", payload__phase="settled", version__gt=Subquery(start[:1]))
        .order_by("version")
        .values("version")
    )
    rows = log.filter(version__gte=Subquery(start[:1]), version__lte=Subquery(end[:1]))
    return [row.as_event() for row in rows.order_by("version")]


def _public(event: Event, stored: Json | None) -> Event:
    """The event as replayed: a ``settled`` event without the deck and salt, and with the
    round's stored result when it has a table fee (a settlement told before the live table
    carried the fee has the machine's result, without it)."""
    if event.type != "settled":
        return event
    payload = {k: v for k, v in event.payload.items() if k not in SETTLEMENT_SECRETS}
    if stored and "fee_percent" in stored:
        payload["result"] = stored
    return replace(event, payload=payload)


def _before(round_: Round, players: Sequence[RoundPlayer], *, version: int) -> Json:
    """A spectator's snapshot of the table just before the round started: its players seated
    and ready, under the round's rules."""
    seats = tuple(
        SeatState(player=str(p.user_id), position=p.position, ready=True) for p in players
    )
    state = TableState(
        capacity=round_.table.room.seats,
        config=RuleConfig.from_dict(round_.config),
        version=version,
        round_no=round_.number - 1,
        seats=seats,
    )
    return snapshot_for(state, None, now=0.0)

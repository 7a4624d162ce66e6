"""Duplicate matches (复式赛): several tables play the same deals, so that players who
held the same cards can be compared and skill shows without the luck of the deal.

A match (:class:`~games.models.DuplicateMatch`, opened by ``games.live.matches``) has
``tables`` rooms with the same rules, base score and seats. Its tables are *lockstep* tables
(``TableState.lockstep``): deal k of every table comes from the match's secret seed
(``games.table.deck.seeded_deck``: same deck, salt and starting seat, so the player at
position p of every table holds the same 13 cards), and

- a table whose seats are all taken and ready waits; :func:`match_advance` starts deal k at
  every table together, once every table is full and ready (``machine.start``);
- a table whose hands are all in waits (``held``) instead of comparing; once every table's
  hands are in, :func:`match_advance` compares them all together (``machine.release``). So no
  hand of deal k is shown anywhere while any table still plays it: a player cannot learn a
  deal from a friend at a faster table. The arrange deadline is the same at every table (they
  were dealt together), so a slow table holds the others up by at most that long;
- after ``deals`` deals the match is over (``finished``) and its seed is revealed: anyone can
  recompute every deck from it and check it against the seed's commitment, published when the
  match was opened, and each round's ordinary deck commitment.

:func:`match_advance` runs after every committed transition of a lockstep table that may let
the match move (:func:`on_transition`), and from the sweeper (:func:`matches_sweep`) in case
one was missed. It locks every room of the match, then every table (the lock order of all the
services), so two tables finishing together cannot both miss the moment.

When no person sits at any of its tables between deals, a match is abandoned: its bots leave
and its rooms close (a room the bots leave empty is closed by the lobby at once). The results of
the deals played so far stay.

The results of a match are read by :mod:`games.history.matches`.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from typing import Any

from django.db import transaction
from django.utils import timezone

from games.live import services as table_services
from games.live import store as table_store
from games.models import DuplicateMatch, MatchStatus, Table
from games.table import machine
from games.table.state import LOBBY_PHASES, Phase, TableState
from lobby.models import Room, Seat

logger = logging.getLogger(__name__)

STARTED = "started"
RELEASED = "released"
FINISHED = "finished"
ABANDONED = "abandoned"


def _states(tables: list[Table]) -> list[TableState]:
    return [TableState.from_dict(t.state) for t in tables]


@transaction.atomic
def match_advance(*, match_id: int) -> str | None:
    """Move the match on if it can: compare every table's held hands, start the next deal at
    every table, mark it finished, or abandon it. Returns what it did (None: nothing)."""
    match = DuplicateMatch.objects.filter(pk=match_id, status=MatchStatus.PLAYING).first()
    if match is None:
        return None
    room_ids = list(Room.objects.filter(match=match).values_list("pk", flat=True))
    tables = table_store.tables_locked(room_ids=room_ids)
    # Re-read under the locks: another advance may have finished the match meanwhile.
    match = DuplicateMatch.objects.select_for_update().get(pk=match_id)
    if match.status != MatchStatus.PLAYING or len(tables) != match.tables:
        return None
    states = _states(tables)
    if len({s.round_no for s in states}) != 1:
        return None  # never in lockstep; a table out of step is not moved
    between = all(s.phase in LOBBY_PHASES for s in states)
    if all(s.held and s.phase is Phase.ARRANGING for s in states):
        for table in tables:
            table_services.table_command(
                table=table, command=lambda s, now: machine.release(s, now=now)
            )
        return RELEASED
    if between and all(s.match_over for s in states):
        _end(match, MatchStatus.FINISHED)
        return FINISHED
    if between and not Seat.objects.filter(room_id__in=room_ids, user__is_bot=False).exists():
        _abandon(match, room_ids)
        return ABANDONED
    if all(s.match_ready for s in states):
        for table in tables:
            table_services.table_command(
                table=table, command=lambda s, now: machine.start(s, now=now)
            )
        return STARTED
    return None


def _end(match: DuplicateMatch, status: str) -> None:
    match.status = status
    match.finished_at = timezone.now()
    match.save(update_fields=["status", "finished_at"])


def _abandon(match: DuplicateMatch, room_ids: list[int]) -> None:
    """Nobody plays any more: the bots leave (emptied rooms close) and the match ends."""
    _end(match, MatchStatus.ABANDONED)
    seats = Seat.objects.filter(room_id__in=room_ids, user__is_bot=True).select_related(
        "user", "room"
    )
    for seat in list(seats):
        # Leaving the table frees the lobby seat (lobby.signals), and the room once empty.
        table_services.table_leave(user=seat.user, room=seat.room)


def _match_of_table(table_id: int) -> int | None:
    return (
        Room.objects.filter(table__pk=table_id, match__status=MatchStatus.PLAYING)
        .values_list("match_id", flat=True)
        .first()
    )


def _may_move(before: TableState, after: TableState) -> bool:
    """Whether a transition may let the match move: the table is ready for its next deal, its
    hands are held, it ended the match's last deal, or someone left."""
    return (
        after.match_ready
        or (after.held and not before.held)
        or (after.match_over and after.phase in LOBBY_PHASES and before.phase not in LOBBY_PHASES)
        or len(after.seats) < len(before.seats)
    )


def on_transition(*, table_id: int, before: TableState, after: TableState, **_: Any) -> None:
    """``table_services.transition_committed``: advance the match of a lockstep table when the
    transition may let it move. Ordinary tables cost one attribute read."""
    if not after.lockstep or not _may_move(before, after):
        return
    match_id = _match_of_table(table_id)
    if match_id is not None:
        match_advance(match_id=match_id)


def matches_sweep(limit: int = 100) -> int:
    """Advance the playing matches that can move (read without locks, then advanced under
    them), in case an advance was missed: a match never waits for nothing. Returns how many
    moved."""
    by_match: dict[int, list[TableState]] = defaultdict(list)
    rows = Table.objects.filter(room__match__status=MatchStatus.PLAYING).values_list(
        "room__match_id", "state"
    )
    for match_id, state in rows.order_by("room__match_id")[: limit * 4]:
        by_match[match_id].append(TableState.from_dict(state))
    with_people = set(
        Seat.objects.filter(
            room__match__status=MatchStatus.PLAYING, user__is_bot=False
        ).values_list("room__match_id", flat=True)
    )
    moved = 0
    for match_id, states in by_match.items():
        between = all(s.phase in LOBBY_PHASES for s in states)
        can_move = (
            all(s.held for s in states)
            or all(s.match_ready for s in states)
            or (between and (all(s.match_over for s in states) or match_id not in with_people))
        )
        if can_move:
            try:
                moved += match_advance(match_id=match_id) is not None
            except Exception:
                logger.exception("advancing duplicate match %s failed", match_id)
    return moved


def connect() -> None:
    table_services.transition_committed.connect(on_transition, dispatch_uid="games.live.duplicate")

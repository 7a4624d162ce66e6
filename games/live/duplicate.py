"""Duplicate matches (复式赛): several tables play the same deals, so that players who held the
same cards can be compared and skill shows without the luck of the deal.

A match's tables (opened by ``games.live.matches``) are *lockstep* tables: deal k of every table
comes from the match's secret seed (``games.table.deck.seeded_deck``), so the player at
position p of every table holds the same 13 cards. :func:`match_advance` starts deal k at
every table together once every table is full and ready, and compares them all together once
every table's hands are in, so no hand of a deal is shown anywhere while any table still plays
it. After ``deals`` deals the seed is revealed, to be checked against its commitment. It runs
after every committed transition that may let the match move (:func:`on_transition`) and from
the sweeper (:func:`matches_sweep`), locking every room of the match, then every table (the
services' lock order). A match nobody plays any more between deals is abandoned: its bots
leave and its rooms close; the results of the deals played stay (:mod:`games.history.matches`).
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

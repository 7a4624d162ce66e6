"""The checks every table command starts with: who sits where, in which phase, still playing.

Each raises :class:`~games.table.errors.TableError` with the reason, so a command's
``verify_x`` reads as the list of its preconditions.
"""

from __future__ import annotations

from .errors import TableError
from .state import Phase, SeatState, TableState


def seat_at(state: TableState, position: int) -> SeatState:
    """The seat at ``position``; ``not_seated`` when nobody sits there."""
    seat = state.seat(position)
    if seat is None:
        raise TableError("not_seated", f"nobody sits at seat {position}", position=position)
    return seat


def require_phase(state: TableState, phases: frozenset[Phase], what: str) -> None:
    """``wrong_phase`` unless the table is in one of ``phases`` (``what``: the action refused)."""
    if state.phase not in phases:
        raise TableError(
            "wrong_phase",
            f"cannot {what} while the table is {state.phase}",
            phase=state.phase.value,
        )


def round_player(state: TableState, position: int, what: str) -> SeatState:
    """A seat playing the current round that may still act."""
    seat = seat_at(state, position)
    if not seat.in_round or seat.hand is None:
        raise TableError("not_in_round", f"seat {position} is not playing this round")
    if seat.escaped:
        raise TableError("escaped", f"seat {position} has left this round and cannot {what}")
    return seat

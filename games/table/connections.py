"""A player's connection: dropping it hosts a hand not yet in (托管, RULES.md §9), coming back
ends the hosting; between rounds, a person alone with bots gets a Ready clock while away
(:func:`games.table.flow.ready_timed`). Each command comes as ``verify_x`` and ``x``;
:mod:`games.table.machine` adds ``can_x`` and names them all.

A hosted hand is played once every connected player is done and
``reconnect_grace_seconds`` have passed since the disconnect, or at the arrange deadline
(:func:`games.table.flow.progress`); its player coming back before then plays on.
"""

from __future__ import annotations

from . import flow
from .errors import TableError
from .events import Step, Transition
from .guards import seat_at
from .state import PLAY_PHASES, Phase, TableState


def verify_disconnect(state: TableState, *, position: int) -> None:
    if not seat_at(state, position).connected:
        raise TableError("already_disconnected", f"seat {position} is already disconnected")


def disconnect(state: TableState, *, position: int, now: float) -> Transition:
    """The player's connection dropped. While its hand is not in, it is hosted (托管): played
    for once every connected player is done and the grace has passed, or at the arrange
    deadline (RULES.md §9)."""
    verify_disconnect(state, position=position)
    seat = seat_at(state, position)
    hosted = (
        seat.in_round
        and state.phase in (PLAY_PHASES | {Phase.DEALING})
        and not seat.done
        and not seat.escaped
    )
    step = Step(state)
    step.update_seat(position, connected=False, hosted=hosted, disconnected_at=now)
    step.emit("disconnected", {"position": position, "hosted": hosted})
    flow.progress(step, now)
    flow.between_rounds_changed(step, now)
    return step.done()


def verify_reconnect(state: TableState, *, position: int) -> None:
    if seat_at(state, position).connected:
        raise TableError("already_connected", f"seat {position} is connected")


def reconnect(state: TableState, *, position: int, now: float) -> Transition:
    """The player is back: hosting ends, and a hand not yet in is the player's to play again
    (its grace no longer times the table). Send it ``perspective.snapshot_for`` (or the events
    it missed): same phase, same cards, same draft, same deadline."""
    verify_reconnect(state, position=position)
    step = Step(state)
    step.update_seat(position, connected=True, hosted=False, disconnected_at=None)
    step.emit("reconnected", {"position": position})
    flow.progress(step, now)
    flow.between_rounds_changed(step, now)
    return step.done()

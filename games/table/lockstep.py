"""The commands a duplicate match gives its tables (``games.live.duplicate``): start the next
deal when every table of the match is full and ready, and release a table held with every
hand in once the match's other tables have theirs in too.
"""

from __future__ import annotations

from . import flow
from .errors import TableError
from .events import Step, Transition
from .state import Phase, TableState


def verify_start(state: TableState) -> None:
    if not state.lockstep:
        raise TableError("not_a_match", "only a duplicate match's table is started by its match")
    if not state.match_ready:
        raise TableError("match_not_ready", "the table is not full and ready for the next deal")


def start(state: TableState, *, now: float) -> Transition:
    """A duplicate match starts its next deal at this table (every table of the match is full
    and ready); the service then deals the match's deck."""
    verify_start(state)
    step = Step(state)
    flow.maybe_start(step, now, match=True)
    return step.done()


def verify_release(state: TableState) -> None:
    if not state.lockstep:
        raise TableError("not_a_match", "only a duplicate match's table is held")
    if not state.held or state.phase is not Phase.ARRANGING:
        raise TableError("not_held", "the table is not waiting for the other tables")


def release(state: TableState, *, now: float) -> Transition:
    """Every table of the duplicate match has its hands in: compare this one."""
    verify_release(state)
    step = Step(state)
    step.set(held=False)
    flow.start_compare(step, now)
    return step.done()

"""Timeouts: a timer only asks; the machine decides.

:func:`timeout` is given the ``version`` and ``phase`` the timer was scheduled for and acts
only if both still match and ``now`` has reached ``state.deadline``; otherwise it returns the
state unchanged with no events (a duplicated, late or stale timer is normal).
:func:`verify_timeout` raises :class:`StaleTimeout` — ``stale_timeout`` or ``early_timeout`` —
for callers that want to know why; an early timer should be scheduled again for
``state.deadline``. What it does depends on the phase: Ready timeouts remove the players who
did not press Ready; the end of the deal starts the choice or arranging; a choice timeout is
Yes; an arrange timeout submits the best arrangement (``auto="timeout"``, or ``"hosted"`` for
a disconnected player, whose complete draft is played if it has one), and before the arrange
deadline the end of a hosted hand's grace plays that hand (RULES.md §9); the end of the
comparison settles, with the players' ``balances`` (required then, ignored otherwise).
"""

from __future__ import annotations

from collections.abc import Mapping

from . import flow
from .errors import StaleTimeout, TableError
from .events import Step, Transition
from .state import LOBBY_PHASES, Phase, TableState


def verify_timeout(
    state: TableState,
    *,
    now: float,
    version: int,
    phase: str,
    balances: Mapping[str, int] | None = None,
) -> None:
    if phase != state.phase or version != state.version or state.deadline is None:
        raise StaleTimeout(
            "stale_timeout",
            f"the table moved on (now {state.phase} at version {state.version})",
            version=state.version,
            phase=state.phase.value,
        )
    if now < state.deadline:
        raise StaleTimeout(
            "early_timeout", "the deadline has not come yet", deadline=state.deadline
        )
    if state.phase is Phase.COMPARING:
        _check_balances(state, balances)


def _check_balances(state: TableState, balances: Mapping[str, int] | None) -> None:
    if balances is None:
        raise TableError("balances_required", "settling needs every player's balance")
    for seat in state.round_seats:
        value = balances.get(seat.player)
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise TableError(
                "bad_balances",
                f"player {seat.player} needs a balance of zero or more coins",
                player=seat.player,
            )


def timeout(
    state: TableState,
    *,
    now: float,
    version: int,
    phase: str,
    balances: Mapping[str, int] | None = None,
) -> Transition:
    """Act on the deadline of ``phase`` at ``version`` if it is still the current one; a stale,
    duplicated or early timer gets the state back unchanged, with no events."""
    try:
        verify_timeout(state, now=now, version=version, phase=phase, balances=balances)
    except StaleTimeout:
        return Transition(state)
    step = Step(state)
    if state.phase in LOBBY_PHASES:
        flow.ready_timeout(step, now)
    elif state.phase is Phase.DEALING:
        flow.begin_play(step, now)
    elif state.phase is Phase.SPECIAL_CHOICE:
        flow.choice_timeout(step, now)
    elif state.phase is Phase.ARRANGING:
        flow.arrange_timeout(step, now)
    else:
        assert balances is not None
        flow.settle(step, now, balances)
    return step.done()

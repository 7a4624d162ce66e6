"""Taking, readying and leaving seats, and the rules between rounds: the seating commands.

Between rounds (``waiting``, ``settled``) players sit, press Ready and leave freely, and the
rules may change; the last Ready of ≥ 2 seated players starts the round (``flow.lobby_changed``).
Leaving during a round is an escape (RULES.md §7.5, §9) unless the hand is already in.
Each command comes as ``verify_x`` and ``x``; :mod:`games.table.machine` adds ``can_x``.
"""

from __future__ import annotations

from games.rules.config import RuleConfig

from . import flow
from .errors import TableError
from .events import Step, Transition
from .guards import require_phase, seat_at
from .state import LOBBY_PHASES, ROUND_PHASES, SeatState, TableState

MAX_PLAYER_ID = 64


def verify_sit(state: TableState, *, player: str, position: int) -> None:
    if not isinstance(player, str) or not 0 < len(player) <= MAX_PLAYER_ID:
        message = f"a player id is a string of 1 to {MAX_PLAYER_ID} characters"
        raise TableError("bad_player", message)
    if not 0 <= position < state.capacity:
        raise TableError(
            "no_such_seat", f"this table has seats 0 to {state.capacity - 1}", position=position
        )
    if state.seat_of(player) is not None:
        raise TableError("already_seated", f"player {player} already sits at this table")
    if state.seat(position) is not None:
        raise TableError("seat_taken", f"seat {position} is taken", position=position)
    if len(state.seats) >= state.config.max_seats:
        raise TableError(
            "table_full",
            f"this deck deals at most {state.config.max_seats} hands",
            seats=state.config.max_seats,
        )


def sit(
    state: TableState, *, player: str, position: int, now: float, bot: bool = False
) -> Transition:
    """Take a free seat. Between rounds the Ready clock starts now if someone waits on this
    player (:func:`~games.table.flow.ready_timed`); during a round the new player waits for
    the next one (its clock starts at settlement). ``bot``: a house player (see
    :class:`SeatState`)."""
    verify_sit(state, player=player, position=position)
    step = Step(state)
    step.add_seat(SeatState(player, position, since=state.version + 1, bot=bot))
    deadline = None
    if state.phase in LOBBY_PHASES and flow.ready_timed(step.state, step.seat(position)):
        deadline = now + state.config.ready_seconds
        step.update_seat(position, ready_deadline=deadline)
    step.emit("seated", {"position": position, "player": player, "ready_deadline": deadline})
    flow.lobby_changed(step, now)  # a person sitting beside another starts the other's clock
    return step.done()


def verify_ready(state: TableState, *, position: int) -> None:
    seat = seat_at(state, position)
    require_phase(state, LOBBY_PHASES, "press Ready")
    if seat.ready:
        raise TableError("already_ready", f"seat {position} is already ready")
    if state.match_over:
        raise TableError(
            "match_over",
            f"this table's {state.last_round} rounds are all played",
            last_round=state.last_round,
        )


def ready(state: TableState, *, position: int, now: float) -> Transition:
    """Press Ready; the last Ready of at least two seated players starts the round."""
    verify_ready(state, position=position)
    step = Step(state)
    step.update_seat(position, ready=True, ready_deadline=None)
    step.emit("ready", {"position": position})
    flow.lobby_changed(step, now)
    return step.done()


def verify_leave(state: TableState, *, position: int) -> None:
    seat = seat_at(state, position)
    if seat.left:
        raise TableError("already_left", f"seat {position} has already left")


def leave(state: TableState, *, position: int, now: float) -> Transition:
    """Leave the table. During a round a player of the round whose hand is not in yet escapes
    (RULES.md §7.5, §9): the hand is played for it at once and it stays in the round, to be
    removed at settlement with the penalty. One whose hand is already in
    (:attr:`~games.table.state.SeatState.committed`) is removed at settlement without one."""
    verify_leave(state, position=position)
    seat = seat_at(state, position)
    step = Step(state)
    if seat.in_round and state.phase in ROUND_PHASES and seat.committed:
        # Its hand is in: it leaves at the settlement, like anyone, with no penalty.
        step.update_seat(position, left=True)
        step.emit("leaving", {"position": position})
    elif seat.in_round and state.phase in ROUND_PHASES:
        step.update_seat(position, left=True, escaped=True)
        step.emit("escaped", {"position": position, "reason": "left"})
        flow.progress(step, now)
    else:
        step.remove_seat(position)
        step.emit("left", {"position": position, "player": seat.player, "reason": "left"})
        flow.lobby_changed(step, now)
    return step.done()


DISMISS_REASONS = frozenset({"insufficient_coins", "transfers_frozen"})


def verify_dismiss(state: TableState, *, position: int, reason: str) -> None:
    seat_at(state, position)
    require_phase(state, LOBBY_PHASES, "send a player away")
    if reason not in DISMISS_REASONS:
        raise TableError(
            "bad_reason", f"a player is sent away for one of {sorted(DISMISS_REASONS)}"
        )


def dismiss(
    state: TableState, *, position: int, reason: str, now: float, **details: int
) -> Transition:
    """Between rounds, send a player back to the room list for ``reason`` (e.g. fewer coins
    than the table's entry minimum after a settlement); ``details`` go into the ``left``
    event so that the player is told why."""
    verify_dismiss(state, position=position, reason=reason)
    seat = seat_at(state, position)
    step = Step(state)
    step.remove_seat(position)
    step.emit("left", {"position": position, "player": seat.player, "reason": reason, **details})
    flow.lobby_changed(step, now)
    return step.done()


def verify_set_config(state: TableState, *, config: RuleConfig) -> None:
    require_phase(state, LOBBY_PHASES, "change the rules")
    if not isinstance(config, RuleConfig):
        raise TableError("bad_config", "config must be a RuleConfig")
    if len(state.seats) > config.max_seats:
        raise TableError(
            "deck_too_small",
            f"{len(state.seats)} players are seated; this deck deals at most "
            f"{config.max_seats} hands",
            seats=config.max_seats,
        )


def set_config(state: TableState, *, config: RuleConfig, now: float) -> Transition:
    """Change the rules between rounds; a round plays under the rules it started with."""
    verify_set_config(state, config=config)
    step = Step(state)
    step.set(config=config)
    step.emit("config", {"config": config.to_dict()})
    return step.done()

"""The table's internal transitions: what happens when a command or a timeout moves it on.

These work on a :class:`~games.table.events.Step` and are only called by the commands in
:mod:`games.table.machine`, after validation. Each keeps the invariants the commands rely on:

* between rounds (waiting, settled) ``deadline`` is the earliest Ready deadline of a player
  who has not pressed Ready, and the round starts as soon as every seated player (≥ 2) is ready;
  a player's Ready is timed only while someone else waits on it (:func:`ready_timed`);
* in a round, seats that cannot act are played for — an escaped player at once, a hosted
  (disconnected) player once every connected player is done and its grace has ended, or at
  the arrange deadline (RULES.md §9) — and the comparison starts the moment every hand is in;
* while arranging, ``deadline`` is the arrange deadline, or earlier the end of a hosted
  hand's grace (:func:`arranging_deadline`).
"""

from __future__ import annotations

from collections.abc import Mapping

from games.rules.api import jokers_json
from games.rules.arrange import arrange
from games.rules.cards import format_cards
from games.rules.config import RuleConfig

from .arrangements import draft_arrangement
from .compare import result_payload, score, script
from .events import Step
from .state import LOBBY_PHASES, PLAY_PHASES, Json, Phase, SeatState, TableState, arranged_json


def ready_timed(state: TableState, seat: SeatState) -> bool:
    """Whether a seat's Ready runs on the ``ready_seconds`` clock (RULES.md §8.1).

    The clock is there so that nobody keeps the other people at the table waiting. A person
    with no other person seated — alone, or with bots only — keeps nobody waiting (bots wait
    for the people and never play among themselves), so the table waits for its Ready with no
    deadline. The clock runs all the same for a disconnected person (it cannot press Ready,
    and would hold the seat and the bots for ever), after the last round of a series or a
    duplicate match (the table is over: its players go back to the room list), at a duplicate
    match's table (the match's other tables wait for it), and for a bot (the table presses
    Ready for it at the deadline)."""
    if seat.bot or state.lockstep or state.match_over or not seat.connected:
        return True
    return any(not s.bot and s.position != seat.position for s in state.seats)


def retime_ready(step: Step, now: float, *, start: float | None = None) -> None:
    """Between rounds, give every seat that has not pressed Ready the clock
    :func:`ready_timed` says it has: a clock that appears starts at ``start`` (default
    ``now``) and lasts ``ready_seconds`` — when a second person sits down, or a person alone
    with bots disconnects — and one that disappears is gone — when the other people leave, or
    the person comes back. A clock already running is kept. Each change is a public
    ``ready_clock`` event, so every seat's countdown stays right."""
    state = step.state
    if state.phase not in LOBBY_PHASES:
        return
    begin = now if start is None else start
    for s in state.seats:
        if s.ready:
            continue
        timed = ready_timed(state, s)
        if timed and s.ready_deadline is None:
            deadline: float | None = begin + state.config.ready_seconds
        elif not timed and s.ready_deadline is not None:
            deadline = None
        else:
            continue
        step.update_seat(s.position, ready_deadline=deadline)
        step.emit("ready_clock", {"position": s.position, "ready_deadline": deadline})


def between_rounds_changed(step: Step, now: float) -> None:
    """A connection came or went: between rounds, the Ready clocks follow (``ready_timed``)."""
    if step.state.phase in LOBBY_PHASES:
        retime_ready(step, now)
        refresh_ready_deadline(step)


def refresh_ready_deadline(step: Step) -> None:
    """Between rounds, the next timeout is the earliest pending Ready deadline."""
    if step.state.phase not in LOBBY_PHASES:
        return
    pending = [
        s.ready_deadline for s in step.state.seats if not s.ready and s.ready_deadline is not None
    ]
    step.set(deadline=min(pending, default=None))


def house_leaves_alone(step: Step) -> None:
    """Between rounds, bots never stay at a table without a person, so they never play a round
    among themselves: when no person is seated, every bot leaves (reason ``left``). During a
    round they stay and finish it, and leave at its settlement if no person is left."""
    state = step.state
    if state.phase not in LOBBY_PHASES or any(not s.bot for s in state.seats):
        return
    if state.lockstep and not state.match_over:
        return  # a duplicate match's bots are the field: they play its deals among themselves
    for s in state.seats:
        step.remove_seat(s.position)
        step.emit("left", {"position": s.position, "player": s.player, "reason": "left"})


def lobby_changed(step: Step, now: float) -> None:
    """After a change between rounds: bots alone leave, the round starts if everyone is ready,
    else the Ready deadline is kept current; a settled table with nobody left to wait for is
    waiting again."""
    house_leaves_alone(step)
    maybe_start(step, now)
    if step.state.phase not in LOBBY_PHASES:
        return
    retime_ready(step, now)
    refresh_ready_deadline(step)
    if step.state.phase is Phase.SETTLED and step.state.deadline is None:
        step.set(phase=Phase.WAITING, phase_started_at=now)
        emit_phase(step)


def maybe_start(step: Step, now: float, *, match: bool = False) -> None:
    """Start the round when every seated player (at least 2) is ready (RULES.md §8.1). A
    duplicate match's table waits for the match to start it (``match``: every table of the
    match is full and ready, see ``machine.start``)."""
    state = step.state
    if state.phase not in LOBBY_PHASES or len(state.seats) < 2:
        return
    if state.lockstep and not match:
        return
    if not all(s.ready for s in state.seats):
        return
    round_no = state.round_no + 1
    for s in state.seats:
        step.update_seat(
            s.position,
            ready=False,
            ready_deadline=None,
            in_round=True,
            hosted=False,
            escaped=False,
            left=False,
            hand=None,
            special=None,
            special_choice=None,
            arrangement=None,
            auto=None,
            draft=None,
        )
    step.set(
        phase=Phase.DEALING,
        round_no=round_no,
        deadline=None,
        phase_started_at=now,
        arrange_deadline=None,
        start_seat=None,
        commitment=None,
        salt=None,
        deck=None,
        result=None,
        held=False,
    )
    positions = [s.position for s in step.state.seats]
    step.emit(
        "round_start",
        {"round_no": round_no, "positions": positions, "config": state.config.to_dict()},
    )
    emit_phase(step)


def emit_phase(step: Step, **extra: object) -> None:
    state = step.state
    step.emit(
        "phase",
        {
            "phase": state.phase.value,
            "started_at": state.phase_started_at,
            "deadline": state.deadline,
            **extra,
        },
    )


def begin_play(step: Step, now: float) -> None:
    """The deal animation is over: the arrange clock starts for everyone (RULES.md §5.1).

    Holders of a special answer first, within ``special_choice_seconds``; everyone else
    arranges meanwhile. So a player who says No has exactly ``arrange_seconds`` minus the time
    spent on the choice.
    """
    config = step.state.config
    arrange_deadline = now + config.arrange_seconds
    if any(s.choosing for s in step.state.round_seats):
        choice_deadline = min(now + config.special_choice_seconds, arrange_deadline)
        step.set(phase=Phase.SPECIAL_CHOICE, deadline=choice_deadline)
    else:
        step.set(phase=Phase.ARRANGING, deadline=arrange_deadline)
    step.set(phase_started_at=now, arrange_deadline=arrange_deadline)
    emit_phase(step, arrange_deadline=arrange_deadline)
    progress(step, now)


def play_for(step: Step, position: int, reason: str) -> None:
    """Play a seat's hand for it: a pending special is taken as Yes (§5.1, §9); otherwise a
    hosted hand's own saved draft when it is complete and foul-free (§9), else the engine's
    best arrangement (§6) is submitted. Marked automatic, with the reason."""
    seat = step.seat(position)
    assert seat.hand is not None and not seat.done
    if seat.choosing:
        step.update_seat(position, special_choice=True, auto=reason)
        step.emit(
            "special_chosen",
            {"position": position, "play_special": True, "auto": reason, "deadline": None},
            audience=step.seat(position).player,
        )
    else:
        config = step.state.config
        arranged = draft_arrangement(seat, config) if reason == "hosted" else None
        if arranged is None:
            # The best against the opponents the table could hold (RULES.md §6).
            best = arrange(seat.hand, config, limit=1, opponents=step.state.table_opponents)
            arranged = best.best.arranged()
        step.update_seat(position, arrangement=arranged, auto=reason)
        step.emit(
            "arrangement",
            arrangement_payload(step.seat(position), step.state.config, reason),
            audience=step.seat(position).player,
        )
    step.emit("submitted", {"position": position, "auto": reason})


def arrangement_payload(seat: SeatState, config: RuleConfig, auto: str | None) -> Json:
    """The private ``arrangement`` event: the rows, and with the variant decks the cards set
    aside (``unused``) and what each joker stands for (``jokers``)."""
    assert seat.arrangement is not None
    payload: Json = {"position": seat.position, **arranged_json(seat.arrangement), "auto": auto}
    if config.spare_cards:
        payload["unused"] = [str(c) for c in seat.unused]
    jokers = jokers_json(seat.arrangement, config)
    if jokers:
        payload["jokers"] = jokers
    return payload


def grace_end(state: TableState, seat: SeatState) -> float | None:
    """When a disconnected seat's hand may be played once every connected player is done:
    ``reconnect_grace_seconds`` after the disconnect, never past the arrange deadline
    (RULES.md §9). None: no grace (a disconnect of no known time)."""
    if seat.disconnected_at is None or state.arrange_deadline is None:
        return None
    return min(seat.disconnected_at + state.config.reconnect_grace_seconds, state.arrange_deadline)


def waiting_for_grace(state: TableState) -> list[SeatState]:
    """The hosted hands the machine would play now but for their grace: every connected
    player is done, the seat is away, not done, and not asked about a special (a pending
    choice waits for the choice's own deadline)."""
    seats = state.round_seats
    if not all(s.done for s in seats if s.connected):
        return []
    return [s for s in seats if not s.connected and not s.done and not s.choosing]


def progress(step: Step, now: float) -> None:
    """After anything that may finish the play phases: play for those who cannot (a hosted
    hand once its grace has ended), move from the special choice to arranging when no answer
    is pending, compare when all are in, else keep the arranging's deadline current."""
    if step.state.phase not in PLAY_PHASES:
        return
    for s in step.state.round_seats:
        if s.escaped and not s.done:
            play_for(step, s.position, "escaped")
    for s in waiting_for_grace(step.state):
        end = grace_end(step.state, s)
        if end is None or now >= end:
            play_for(step, s.position, "hosted")
    state = step.state
    if state.phase is Phase.SPECIAL_CHOICE and not any(s.choosing for s in state.round_seats):
        step.set(phase=Phase.ARRANGING, deadline=state.arrange_deadline, phase_started_at=now)
        emit_phase(step, arrange_deadline=state.arrange_deadline)
    if all(s.done for s in step.state.round_seats):
        if not step.state.lockstep:
            start_compare(step, now)
        elif not step.state.held:
            # A duplicate match reveals a deal at every table together, once every table's
            # hands are in (``machine.release``): nobody learns a deal another table still plays.
            step.set(held=True, deadline=None)
            step.emit("held", {"round_no": step.state.round_no})
    elif step.state.phase is Phase.ARRANGING:
        step.set(deadline=arranging_deadline(step.state))


def arranging_deadline(state: TableState) -> float | None:
    """The arranging's timer: the arrange deadline, or the first grace to end of a hosted hand
    waiting for nothing else (a grace never ends past the arrange deadline). In the special
    choice the choice's deadline stays the timer: a hosted hand then waits for nothing else
    only while a disconnected player's choice is pending, which holds the comparison anyway."""
    ends = [grace_end(state, s) for s in waiting_for_grace(state)]
    return min((end for end in ends if end is not None), default=state.arrange_deadline)


def choice_timeout(step: Step, now: float) -> None:
    """Unanswered special choices count as Yes (RULES.md §5.1, §9)."""
    for s in step.state.round_seats:
        if s.choosing:
            play_for(step, s.position, "timeout" if s.connected else "hosted")
    progress(step, now)
    arrange_deadline = step.state.arrange_deadline
    ended = arrange_deadline is not None and now >= arrange_deadline
    if step.state.phase is Phase.ARRANGING and ended:
        arrange_timeout(step, now)


def arrange_timeout(step: Step, now: float) -> None:
    """At the arrange deadline, the best arrangement is submitted for everyone still arranging
    (§6; a hosted hand plays its draft, §9). Before it, a hosted hand's grace has ended."""
    arrange_deadline = step.state.arrange_deadline
    if arrange_deadline is None or now >= arrange_deadline:
        for s in step.state.round_seats:
            if not s.done:
                play_for(step, s.position, "timeout" if s.connected else "hosted")
    progress(step, now)


def start_compare(step: Step, now: float) -> None:
    """Every hand is in: emit the whole paced comparison (RULES.md §8.5)."""
    state = step.state
    seats = state.round_seats
    preview = score(seats, state.config)  # guns and specials do not depend on coins
    events, duration_ms = script(seats, state.config, preview)
    step.set(phase=Phase.COMPARING, phase_started_at=now, deadline=now + duration_ms / 1000)
    emit_phase(step, duration_ms=duration_ms)
    for type_, payload in events:
        step.emit(type_, payload)


def settle(step: Step, now: float, balances: Mapping[str, int]) -> None:
    """Score and settle the round (RULES.md §7), reveal the deck, and ask for Ready again.

    A player still disconnected now has escaped (§9) and pays the penalty (§7.5), unless its
    hand was already in while it was here (``committed``: it has nothing left to play, so it is
    settled normally and, if not back, returned to the room list at the Ready deadline);
    players who pressed Leave during the round are removed from the table after the
    settlement.
    """
    for s in step.state.round_seats:
        if not s.connected and not s.escaped and not s.committed:
            step.update_seat(s.position, escaped=True)
            step.emit("escaped", {"position": s.position, "reason": "disconnected"})
    state = step.state
    seats = state.round_seats
    result = result_payload(seats, score(seats, state.config, balances))
    assert state.deck is not None
    step.set(result=result)
    step.emit(
        "settled",
        {
            "round_no": state.round_no,
            "result": result,
            "deck": format_cards(state.deck),
            "salt": state.salt,
            "commitment": state.commitment,
        },
    )
    for s in seats:
        if s.left:
            step.remove_seat(s.position)
            reason = "escaped" if s.escaped else "left"
            step.emit("left", {"position": s.position, "player": s.player, "reason": reason})
    # The Ready clock starts once the settlement is on show: at the end of the comparison's
    # animation (the comparing phase's deadline, ``compare.script``'s duration), which is now
    # unless the round is settled early. A seat nobody waits on gets no clock (ready_timed).
    shown = max(now, state.deadline if state.deadline is not None else now)
    ready_deadline = shown + state.config.ready_seconds
    for s in step.state.seats:
        step.update_seat(s.position, ready=False, ready_deadline=None)
    step.set(phase=Phase.SETTLED, phase_started_at=now)
    for s in step.state.seats:
        if ready_timed(step.state, s):
            step.update_seat(s.position, ready_deadline=ready_deadline)
    if step.state.match_over:  # the duplicate match's last deal: its bots go
        for s in step.state.seats:
            if s.bot:
                step.remove_seat(s.position)
                step.emit("left", {"position": s.position, "player": s.player, "reason": "left"})
        step.emit("match_over", {"round_no": state.round_no})
    refresh_ready_deadline(step)
    clocks = {str(s.position): s.ready_deadline for s in step.state.seats}
    emit_phase(step, ready_deadlines=clocks)
    lobby_changed(step, now)


def ready_timeout(step: Step, now: float) -> None:
    """Players who did not press Ready in time go back to the room list (RULES.md §8.1).

    Bots only wait for the people, so at a Ready deadline every bot not yet ready presses
    Ready first: a bot never holds up a table, nor goes back to the room list."""
    house_leaves_alone(step)
    for s in step.state.seats:
        if s.bot and not s.ready:
            step.update_seat(s.position, ready=True, ready_deadline=None)
            step.emit("ready", {"position": s.position})
    maybe_start(step, now)
    if step.state.phase not in LOBBY_PHASES:
        return
    for s in step.state.seats:
        if not s.ready and s.ready_deadline is not None and s.ready_deadline <= now:
            step.remove_seat(s.position)
            # After a duplicate match's last deal nobody presses Ready: the match is over.
            reason = "match_over" if step.state.match_over else "ready_timeout"
            step.emit("left", {"position": s.position, "player": s.player, "reason": reason})
    house_leaves_alone(step)
    was_settled = step.state.phase is Phase.SETTLED
    if was_settled:
        step.set(phase=Phase.WAITING, phase_started_at=now)
    maybe_start(step, now)
    if step.state.phase is Phase.WAITING:
        retime_ready(step, now)
        refresh_ready_deadline(step)
        if was_settled:
            emit_phase(step)

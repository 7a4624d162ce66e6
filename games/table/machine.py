"""The commands of one table: ``verify_x`` raises :class:`TableError` with the reason,
``can_x`` answers True/False, ``x`` applies and returns a :class:`Transition`.

Pure and deterministic: no clock (``now`` is an argument, epoch seconds), no randomness (the
service supplies the shuffled deck, its salt and the starting seat), no I/O, no Django. The
service runs each command under the table's row lock: apply, save ``state.to_dict()`` (whose
deadline, ``transition.timer``, the workers' poller reads from the row), and on commit send
the events.

Commands
--------
Between rounds (``waiting``, ``settled``): :func:`sit`, :func:`ready`, :func:`leave`,
:func:`set_config`. The last Ready of ≥ 2 seated players starts the round: the state is then
``dealing`` with ``awaiting_deal`` set, and the service calls :func:`deal` in the same
transaction (any command may end that way — ``ready``, ``leave``, a Ready timeout; check
``state.awaiting_deal`` after each).

In a round: :func:`deal`, :func:`choose_special`, :func:`submit`, :func:`save_draft`, and at
any time :func:`disconnect`, :func:`reconnect`, :func:`leave` (an escape, RULES.md §9).

Timeouts
--------
A timer only asks; the machine decides. :func:`timeout` is given the ``version`` and
``phase`` the timer was scheduled for and acts only if both still match and ``now`` has
reached ``state.deadline``; otherwise it returns the state unchanged with no events (it never
raises for that: a duplicated, late or stale timer is normal). :func:`verify_timeout` raises
:class:`StaleTimeout` — code ``stale_timeout`` or ``early_timeout`` — for callers that want to
know why; an early timer should be scheduled again for ``state.deadline``. What a timeout does
depends on the phase: Ready timeouts remove the players who did not press Ready; the end of
the deal starts the choice or arranging; a choice timeout is Yes; an arrange timeout submits
the best arrangement (``auto="timeout"``, or ``"hosted"`` for a disconnected player); the end
of the comparison settles, with the players' ``balances`` (required then, ignored otherwise).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import ParamSpec

from games.rules.arrange import special_with_split
from games.rules.cards import Card
from games.rules.config import RuleConfig
from games.rules.errors import FoulError
from games.rules.hands import check_foul, evaluate
from games.rules.scoring import Arranged

from . import flow
from .chat import chat_value
from .deck import (
    commitment,
    deal_duration_ms,
    deal_hands,
    deal_offsets,
    deal_order,
    is_full_deck,
)
from .errors import StaleTimeout, TableError
from .events import Step, Transition
from .state import (
    LOBBY_PHASES,
    PLAY_PHASES,
    ROUND_PHASES,
    Json,
    Phase,
    SeatState,
    TableState,
)
from .suggest import special_advice_json

P = ParamSpec("P")

MAX_DRAFT_CHARS = 4000
MAX_PLAYER_ID = 64


def _can(verify: Callable[P, None]) -> Callable[P, bool]:
    def can(*args: P.args, **kwargs: P.kwargs) -> bool:
        try:
            verify(*args, **kwargs)
        except TableError:
            return False
        return True

    can.__doc__ = f"Whether {verify.__name__} would pass."
    return can


def _seat(state: TableState, position: int) -> SeatState:
    seat = state.seat(position)
    if seat is None:
        raise TableError("not_seated", f"nobody sits at seat {position}", position=position)
    return seat


def _phase(state: TableState, phases: frozenset[Phase], what: str) -> None:
    if state.phase not in phases:
        raise TableError(
            "wrong_phase",
            f"cannot {what} while the table is {state.phase}",
            phase=state.phase.value,
        )


def _player(state: TableState, position: int, what: str) -> SeatState:
    """A seat playing the current round that may still act."""
    seat = _seat(state, position)
    if not seat.in_round or seat.hand is None:
        raise TableError("not_in_round", f"seat {position} is not playing this round")
    if seat.escaped:
        raise TableError("escaped", f"seat {position} has left this round and cannot {what}")
    return seat


# -- between rounds ----------------------------------------------------------------------------


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
    """Take a free seat. Between rounds the Ready clock starts now; during a round the new
    player waits for the next one (its clock starts at settlement). ``bot``: a house player
    (see :class:`SeatState`)."""
    verify_sit(state, player=player, position=position)
    step = Step(state)
    deadline = now + state.config.ready_seconds if state.phase in LOBBY_PHASES else None
    step.add_seat(
        SeatState(player, position, ready_deadline=deadline, since=state.version + 1, bot=bot)
    )
    step.emit("seated", {"position": position, "player": player, "ready_deadline": deadline})
    flow.lobby_changed(step, now)
    return step.done()


def verify_ready(state: TableState, *, position: int) -> None:
    seat = _seat(state, position)
    _phase(state, LOBBY_PHASES, "press Ready")
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


def verify_chat(state: TableState, *, position: int, kind: str, value: object) -> None:
    _seat(state, position)
    chat_value(kind, value, text_allowed=state.chat_text)


def chat(state: TableState, *, position: int, kind: str, value: object, now: float) -> Transition:
    """A seated player's chat message (``games.table.chat``): a public ``chat`` event."""
    verify_chat(state, position=position, kind=kind, value=value)
    kind, text = chat_value(kind, value, text_allowed=state.chat_text)
    step = Step(state)
    step.emit("chat", {"position": position, "kind": kind, "value": text})
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


def verify_leave(state: TableState, *, position: int) -> None:
    seat = _seat(state, position)
    if seat.left:
        raise TableError("already_left", f"seat {position} has already left")


def leave(state: TableState, *, position: int, now: float) -> Transition:
    """Leave the table. During a round a player of the round whose hand is not in yet escapes
    (RULES.md §7.5, §9): the hand is played for it at once and it stays in the round, to be
    removed at settlement with the penalty. One whose hand is already in
    (:attr:`~games.table.state.SeatState.committed`) is removed at settlement without one."""
    verify_leave(state, position=position)
    seat = _seat(state, position)
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


DISMISS_REASONS = frozenset({"insufficient_coins"})


def verify_dismiss(state: TableState, *, position: int, reason: str) -> None:
    _seat(state, position)
    _phase(state, LOBBY_PHASES, "send a player away")
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
    seat = _seat(state, position)
    step = Step(state)
    step.remove_seat(position)
    step.emit("left", {"position": position, "player": seat.player, "reason": reason, **details})
    flow.lobby_changed(step, now)
    return step.done()


def verify_set_config(state: TableState, *, config: RuleConfig) -> None:
    _phase(state, LOBBY_PHASES, "change the rules")
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


# -- the deal ----------------------------------------------------------------------------------


def verify_deal(state: TableState, *, deck: Sequence[Card], salt: str, start_seat: int) -> None:
    if not state.awaiting_deal:
        raise TableError("wrong_phase", "no round is waiting for a deck", phase=state.phase.value)
    of = state.config.deck
    if not is_full_deck(deck, of):
        raise TableError(
            "bad_deck", f"the deck must hold each card of the {of.describe()} exactly once"
        )
    if len(state.round_seats) * state.config.hand_size > of.size:
        raise TableError("bad_deck", f"the {of.describe()} cannot deal every seat a hand")
    if not isinstance(salt, str) or not salt:
        raise TableError("bad_salt", "the salt must be a non-empty string")
    if start_seat not in [s.position for s in state.round_seats]:
        raise TableError(
            "bad_start_seat", f"seat {start_seat} is not playing this round", position=start_seat
        )


def deal(
    state: TableState, *, deck: Sequence[Card], salt: str, start_seat: int, now: float
) -> Transition:
    """Deal ``deck`` (already shuffled by the service) from ``start_seat`` (RULES.md §8.2).

    Publishes the commitment to deck and salt first; each seat privately gets its cards (13,
    or 16 with spare cards; in dealing order, with when each lands), its special if any (with
    spare cards, also the 3 it sets aside) with the advice on it (``advice``: play it or
    arrange, RULES.md §5.1). The ``hand`` event is logged without the engine's suggestions:
    they follow it once the deal is out, outside the table's lock
    (:func:`games.table.perspective.delivered`, :func:`games.table.perspective.hand_suggestions`).
    """
    verify_deal(state, deck=deck, salt=salt, start_seat=start_seat)
    config = state.config
    size = config.hand_size
    deck = tuple(deck)
    order = deal_order([s.position for s in state.round_seats], start_seat)
    hands = deal_hands(deck, order, size)
    duration_ms = deal_duration_ms(config.deal_mode, len(order), config.deal_interval_ms, size)
    deadline = now + duration_ms / 1000
    digest = commitment(deck, salt)
    step = Step(state)
    step.set(
        deck=deck,
        salt=salt,
        start_seat=start_seat,
        commitment=digest,
        deadline=deadline,
        phase_started_at=now,
    )
    for position, hand in hands.items():
        found = special_with_split(hand, config)
        aside = found.unused if found is not None and config.spare_cards else None
        step.update_seat(
            position,
            hand=hand,
            special=None if found is None else found.special,
            special_unused=aside,
        )
    step.emit(
        "deal",
        {
            "round_no": state.round_no,
            "commitment": digest,
            "start_seat": start_seat,
            "order": list(order),
            "mode": config.deal_mode,
            "interval_ms": config.deal_interval_ms,
            "duration_ms": duration_ms,
            "started_at": now,
            "deadline": deadline,
        },
    )
    for index, position in enumerate(order):
        hand = hands[position]
        seat = step.seat(position)
        payload: Json = {
            "position": position,
            "cards": [str(c) for c in hand],
            "offsets_ms": deal_offsets(
                config.deal_mode, len(order), index, config.deal_interval_ms, size
            ),
            "special": seat.special,
        }
        if seat.special is not None:
            payload["advice"] = special_advice_json(step.state, seat)
        if config.spare_cards:
            aside = seat.special_unused
            payload["special_unused"] = None if aside is None else [str(c) for c in aside]
        step.emit("hand", payload, audience=seat.player)
    return step.done()


# -- playing the hand --------------------------------------------------------------------------


def verify_choose_special(state: TableState, *, position: int, play_special: bool) -> None:
    _phase(state, frozenset({Phase.SPECIAL_CHOICE}), "choose a special hand")
    seat = _player(state, position, "choose")
    if seat.special is None:
        raise TableError("no_special", f"seat {position} holds no special hand")
    if seat.special_choice is not None:
        raise TableError("already_chosen", f"seat {position} has already answered")
    if not isinstance(play_special, bool):
        raise TableError("bad_choice", "play_special must be true or false")


def choose_special(
    state: TableState, *, position: int, play_special: bool, now: float
) -> Transition:
    """Answer whether to play the special hand (RULES.md §5.1). Yes: the hand is in. No: the
    player arranges normally until the common arrange deadline."""
    verify_choose_special(state, position=position, play_special=play_special)
    step = Step(state)
    step.update_seat(position, special_choice=play_special, hosted=False)
    step.emit(
        "special_chosen",
        {
            "position": position,
            "play_special": play_special,
            "auto": None,
            "deadline": None if play_special else state.arrange_deadline,
        },
        audience=step.seat(position).player,
    )
    if play_special:
        step.emit("submitted", {"position": position, "auto": None})
    flow.progress(step, now)
    return step.done()


def verify_submit(
    state: TableState,
    *,
    position: int,
    front: Sequence[Card],
    middle: Sequence[Card],
    back: Sequence[Card],
    unused: Sequence[Card] | None = None,
) -> None:
    """Check an arrangement: 13 of the seat's own cards, rows of 3/5/5, no foul (RULES.md §4).

    With spare cards (§12.4) the cards left out are set aside; ``unused``, when given, must be
    exactly those."""
    _phase(state, PLAY_PHASES, "submit an arrangement")
    seat = _player(state, position, "submit")
    if seat.done:
        raise TableError("already_submitted", f"seat {position} has already submitted")
    if seat.choosing:
        raise TableError("choose_special_first", "answer whether to play the special hand first")
    rows = {"front": front, "middle": middle, "back": back}
    for row, cards, size in (("front", front, 3), ("middle", middle, 5), ("back", back, 5)):
        if len(cards) != size:
            raise TableError(
                "wrong_count", f"the {row} row needs {size} cards, got {len(cards)}", row=row
            )
    cards = [c for row_cards in rows.values() for c in row_cards]
    dup = sorted({str(c) for c in cards if cards.count(c) > 1})
    if dup:
        raise TableError("duplicate_card", f"card {dup[0]} appears twice", cards=dup)
    assert seat.hand is not None
    foreign = [str(c) for c in cards if c not in seat.hand]
    if foreign:
        raise TableError("not_your_cards", f"not in your hand: {' '.join(foreign)}", cards=foreign)
    if unused is not None:
        left_out = {c for c in seat.hand if c not in cards}
        if not state.config.spare_cards:
            raise TableError("no_spare_cards", "this round has no spare cards to set aside")
        if len(unused) != len(left_out) or set(unused) != left_out:
            raise TableError(
                "wrong_unused",
                "the cards set aside must be exactly the ones not in the rows",
                cards=[str(c) for c in unused],
            )
    try:
        check_foul(*(evaluate(r, state.config.a2345) for r in (front, middle, back)))
    except FoulError as exc:
        raise TableError("foul", exc.message, rows=list(exc.rows)) from None


def submit(
    state: TableState,
    *,
    position: int,
    front: Sequence[Card],
    middle: Sequence[Card],
    back: Sequence[Card],
    now: float,
    unused: Sequence[Card] | None = None,
) -> Transition:
    """Submit front/middle/back. Refused (nothing changes) with the reason when the cards
    are not exactly the seat's or the rows foul; the player may then try again."""
    verify_submit(state, position=position, front=front, middle=middle, back=back, unused=unused)
    arranged = Arranged(tuple(front), tuple(middle), tuple(back))
    step = Step(state)
    step.update_seat(position, arrangement=arranged, auto=None, hosted=False)
    step.emit(
        "arrangement",
        flow.arrangement_payload(step.seat(position), state.config, None),
        audience=step.seat(position).player,
    )
    step.emit("submitted", {"position": position, "auto": None})
    flow.progress(step, now)
    return step.done()


def verify_save_draft(state: TableState, *, position: int, draft: Json) -> None:
    _phase(state, PLAY_PHASES | {Phase.DEALING}, "save a draft")
    seat = _player(state, position, "save a draft")
    if seat.done:
        raise TableError("already_submitted", f"seat {position} has already submitted")
    if not isinstance(draft, dict):
        raise TableError("bad_draft", "a draft must be a JSON object")
    try:
        text = json.dumps(draft, allow_nan=False)
    except (TypeError, ValueError):
        text = None
    if text is None or json.loads(text) != draft:
        raise TableError("bad_draft", "a draft must be plain JSON (string keys, no NaN)")
    if len(text) > MAX_DRAFT_CHARS:
        raise TableError("bad_draft", f"a draft holds at most {MAX_DRAFT_CHARS} characters")


def save_draft(state: TableState, *, position: int, draft: Json, now: float) -> Transition:
    """Keep the client's partial arrangement (any small JSON object) for a reconnect."""
    verify_save_draft(state, position=position, draft=draft)
    step = Step(state)
    step.update_seat(position, draft=draft)
    step.emit(
        "draft_saved", {"position": position, "draft": draft}, audience=step.seat(position).player
    )
    return step.done()


# -- connections -------------------------------------------------------------------------------


def verify_disconnect(state: TableState, *, position: int) -> None:
    if not _seat(state, position).connected:
        raise TableError("already_disconnected", f"seat {position} is already disconnected")


def disconnect(state: TableState, *, position: int, now: float) -> Transition:
    """The player's connection dropped. While its hand is not in, it is hosted (托管): played
    for as soon as every connected player is done, or at the deadline (RULES.md §9)."""
    verify_disconnect(state, position=position)
    seat = _seat(state, position)
    hosted = (
        seat.in_round
        and state.phase in (PLAY_PHASES | {Phase.DEALING})
        and not seat.done
        and not seat.escaped
    )
    step = Step(state)
    step.update_seat(position, connected=False, hosted=hosted)
    step.emit("disconnected", {"position": position, "hosted": hosted})
    flow.progress(step, now)
    return step.done()


def verify_reconnect(state: TableState, *, position: int) -> None:
    if _seat(state, position).connected:
        raise TableError("already_connected", f"seat {position} is connected")


def reconnect(state: TableState, *, position: int, now: float) -> Transition:
    """The player is back: hosting ends. Send it ``views.snapshot_for`` (or the events it
    missed): same phase, same cards, same draft, same deadline."""
    verify_reconnect(state, position=position)
    step = Step(state)
    step.update_seat(position, connected=True, hosted=False)
    step.emit("reconnected", {"position": position})
    return step.done()


# -- timeouts ----------------------------------------------------------------------------------


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


can_sit = _can(verify_sit)
can_ready = _can(verify_ready)
can_leave = _can(verify_leave)
can_start = _can(verify_start)
can_chat = _can(verify_chat)
can_release = _can(verify_release)
can_set_config = _can(verify_set_config)
can_deal = _can(verify_deal)
can_choose_special = _can(verify_choose_special)
can_submit = _can(verify_submit)
can_save_draft = _can(verify_save_draft)
can_disconnect = _can(verify_disconnect)
can_reconnect = _can(verify_reconnect)
can_timeout = _can(verify_timeout)

"""A round's hands: the deal, the special-hand choice, submitting an arrangement, drafts.

``deal`` is called by the service with the shuffled deck once a round starts
(``state.awaiting_deal``); the others are the players' commands while the hands are in play.
Each command comes as ``verify_x`` and ``x``; :mod:`games.table.machine` adds ``can_x``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from games.rules.arrange import special_with_split
from games.rules.cards import Card
from games.rules.scoring import Arranged

from . import flow
from .arrangements import verify_rows
from .deck import (
    commitment,
    deal_duration_ms,
    deal_hands,
    deal_offsets,
    deal_order,
    is_full_deck,
)
from .errors import TableError
from .events import Step, Transition
from .guards import require_phase, round_player
from .state import PLAY_PHASES, Json, Phase, TableState
from .suggest import special_advice_json

MAX_DRAFT_CHARS = 4000


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


def verify_choose_special(state: TableState, *, position: int, play_special: bool) -> None:
    require_phase(state, frozenset({Phase.SPECIAL_CHOICE}), "choose a special hand")
    seat = round_player(state, position, "choose")
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
    require_phase(state, PLAY_PHASES, "submit an arrangement")
    seat = round_player(state, position, "submit")
    if seat.done:
        raise TableError("already_submitted", f"seat {position} has already submitted")
    if seat.choosing:
        raise TableError("choose_special_first", "answer whether to play the special hand first")
    assert seat.hand is not None
    verify_rows(seat.hand, state.config, front=front, middle=middle, back=back, unused=unused)


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
    require_phase(state, PLAY_PHASES | {Phase.DEALING}, "save a draft")
    seat = round_player(state, position, "save a draft")
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

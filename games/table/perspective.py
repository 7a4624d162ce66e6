"""What one seat may see: its snapshot, its events, and what it missed.

A seat sees the public table (who sits where, who is ready, connected, hosted, done, the
phase and its deadline, the shuffle commitment) and its own secrets (its cards, its special,
its suggestions, its draft). Other seats' hands appear only once the comparison has started,
and the deck and salt only once the round is settled. ``position=None`` is a spectator.

A client that reconnects sends the last version it saw: :func:`missed_events` gives the
events after it (those it may see), or None when the log no longer reaches back that far —
then it gets :func:`snapshot_for`, which is the whole view at ``state.version``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from games.rules.cards import format_cards

from .compare import revealed_hand
from .events import Event
from .flow import arrangement_payload
from .state import LOBBY_PHASES, PLAY_PHASES, Json, Phase, SeatState, TableState
from .suggest import special_advice_json, suggestions


def delivered(event: Event, state: TableState, *, live: bool = False) -> Event:
    """``event`` as its player receives it, at ``state`` (the table's state when it is sent).

    A seat's ``hand`` is logged without the engine's suggestions: they are deterministic for
    the cards and the rules (RULES.md §6), yet were most of a deal's payload (up to ten
    arrangements a hand, stored with the event for good) and most of its CPU, inside the
    table's lock. They are added here, once the deal is committed: the snapshot's (a bot's
    seat gets none, a bot works out its own play, ``games.live.bots``). A hand of an earlier round
    (a reconnect's missed events) gets none either — its round is over, and a client that
    reconnects with an old version must not make the server arrange every hand it missed —
    and a hand whose logged payload already holds suggestions is sent as it was logged.

    ``live``: the hand goes out with its deal, which must not wait for the engine (a few
    milliseconds of CPU a hand, more while other threads hold the interpreter): a hand that
    would get suggestions gets ``"suggestions": null`` instead — they follow in a message of
    their own (:func:`hand_suggestions`, docs/protocol.md)."""
    if event.type != "hand" or "suggestions" in event.payload:
        return event
    seat = _holder(event, state)
    if live and seat is not None and _suggested(state, seat):
        return replace(event, payload={**event.payload, "suggestions": None})
    found = None if seat is None else _suggestions_of(state, seat)
    return replace(event, payload={**event.payload, "suggestions": found or []})


def hand_suggestions(event: Event, state: TableState) -> Json | None:
    """What follows a ``hand`` sent live without its suggestions (:func:`delivered`): its
    cards and the engine's suggestions for them, or None when the hand gets none (a bot's, a
    hand no longer held, a round no longer played)."""
    seat = None if event.type != "hand" else _holder(event, state)
    if seat is None or not _suggested(state, seat):
        return None
    return {"cards": event.payload["cards"], "suggestions": _suggestions_of(state, seat)}


def resync_suggestions(state: TableState, player: str, missed: Sequence[Event]) -> Json | None:
    """For a reconnect whose missed events hold no hand of the player's: the suggestions for
    the hand it holds while the round is played (it may have got the hand live, without them,
    and lost its socket before they came), as :func:`hand_suggestions` gives them; else None."""
    if any(e.type == "hand" and e.audience == player for e in missed):
        return None
    seat = state.seat_of(player)
    if seat is None or seat.hand is None or not _suggested(state, seat):
        return None
    return {"cards": format_cards(seat.hand), "suggestions": _suggestions_of(state, seat)}


def _holder(event: Event, state: TableState) -> SeatState | None:
    """The seat a private ``hand`` event dealt, while it still holds those cards."""
    seat = state.seat_of(event.audience) if event.private else None
    if seat is None or seat.hand is None or format_cards(seat.hand) != event.payload["cards"]:
        return None
    return seat


def _suggested(state: TableState, seat: SeatState) -> bool:
    """Whether the engine suggests arrangements for the seat's hand now: a person's, while the
    round is played."""
    return seat.hand is not None and not seat.bot and state.phase in PLAY_PHASES | {Phase.DEALING}


def _suggestions_of(state: TableState, seat: SeatState) -> list[Json] | None:
    """The engine's suggestions for the seat's hand while the round is played (None when it
    is not; none for a bot, which works out its own play: ``games.live.bots``)."""
    if seat.hand is None or state.phase not in PLAY_PHASES | {Phase.DEALING}:
        return None
    return [] if seat.bot else suggestions(seat.hand, state.config, state.table_opponents)


def seat_deadline(state: TableState, seat: SeatState) -> float | None:
    """The deadline that matters to this seat now: its Ready, its choice, its arranging."""
    if state.phase in LOBBY_PHASES:
        return None if seat.ready else seat.ready_deadline
    if not seat.in_round:
        return None
    if state.phase is Phase.SPECIAL_CHOICE and seat.choosing:
        return state.deadline
    if state.phase in PLAY_PHASES:
        return None if seat.done else state.arrange_deadline
    return state.deadline


def _public_seat(state: TableState, seat: SeatState) -> Json:
    shown = None
    if state.revealed and seat.in_round and seat.done:
        shown = revealed_hand(seat, state.config)
    return {
        "position": seat.position,
        "player": seat.player,
        "ready": seat.ready,
        "ready_deadline": seat.ready_deadline,
        "connected": seat.connected,
        "in_round": seat.in_round,
        "hosted": seat.hosted,
        "escaped": seat.escaped,
        "left": seat.left,
        "done": seat.in_round and seat.done,
        "committed": seat.in_round and seat.committed,
        "auto": seat.auto,
        "revealed": shown,
    }


def _private_seat(state: TableState, seat: SeatState, now: float) -> Json:
    deadline = seat_deadline(state, seat)
    hand = seat.hand
    playing = hand is not None and state.phase in (PLAY_PHASES | {Phase.DEALING})
    arrangement = None
    if seat.arrangement is not None:
        arrangement = arrangement_payload(seat, state.config, seat.auto)
        del arrangement["position"], arrangement["auto"]
    extra: Json = {}
    if state.config.spare_cards:
        aside = seat.special_unused
        extra["special_unused"] = None if aside is None else format_cards(aside)
    return {
        **extra,
        "position": seat.position,
        "hand": None if hand is None else format_cards(hand),
        "special": seat.special,
        "special_choice": seat.special_choice,
        "arrangement": arrangement,
        "auto": seat.auto,
        "draft": seat.draft,
        "suggestions": _suggestions_of(state, seat),
        "advice": special_advice_json(state, seat) if playing else None,
        "deadline": deadline,
        "remaining": None if deadline is None else max(0.0, deadline - now),
    }


def snapshot_for(state: TableState, position: int | None, *, now: float) -> Json:
    """Everything the seat at ``position`` may see at ``state.version`` (None: a spectator).

    ``you`` holds the seat's own cards, draft and the time it has left (``remaining``,
    seconds, from ``now``) — a reconnect restores exactly this screen (RULES.md §9).
    """
    settled = state.result is not None
    seat = None if position is None else state.seat(position)
    return {
        "version": state.version,
        "phase": state.phase.value,
        "round_no": state.round_no,
        "capacity": state.capacity,
        "started_at": state.phase_started_at,
        "deadline": state.phase_deadline,
        "arrange_deadline": state.arrange_deadline,
        "config": state.config.to_dict(),
        "start_seat": state.start_seat,
        "commitment": state.commitment,
        "deck": format_cards(state.deck) if settled and state.deck is not None else None,
        "salt": state.salt if settled else None,
        "result": state.result,
        "seats": [_public_seat(state, s) for s in state.seats],
        # A duplicate match's table: its last deal, and whether its hands wait for
        # the other tables (None at an ordinary table).
        "match": ({"last_round": state.last_round, "held": state.held} if state.lockstep else None),
        "chat_text": state.chat_text,
        # A series' or a match's last round (None: the table plays on).
        "last_round": state.last_round,
        "you": None if seat is None else _private_seat(state, seat, now),
    }


def events_for(events: Iterable[Event], player: str | None) -> list[Event]:
    """The events ``player`` may see (None: a spectator), in order."""
    return [e for e in events if e.visible_to(player)]


def missed_events(
    log: Sequence[Event], since_version: int, player: str | None, *, seated_at: int = 0
) -> list[Event] | None:
    """The events after ``since_version`` that ``player`` may see, or None: send a snapshot.

    ``log`` is the tail of the table's events, contiguous and ending at the current version.
    None when it does not reach back to ``since_version``, the client claims a version the
    table never had, or one from before its player sat down (``seated_at``, the version of
    its ``seated`` event: nothing logged before it is ever replayed to this player).
    """
    if not log:
        return None
    first, last = log[0].version, log[-1].version
    if not first - 1 <= since_version <= last or since_version < seated_at - 1:
        return None
    return events_for((e for e in log if e.version > since_version), player)

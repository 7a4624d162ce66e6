"""The engine's arrangement suggestions for one hand, as JSON (RULES.md §6).

Deterministic for the same cards and configuration, so they are not stored: the seat's
private ``hand`` event goes out with the deal without them and they follow a moment later,
outside the deal's transaction (``perspective.delivered``, ``perspective.hand_suggestions``;
the log keeps the hand without them); a reconnect's missed hand and a snapshot recompute them
(cached). With the variant decks (RULES.md §12) a suggestion also names the spare cards it
sets aside (``unused``) and what each joker stands for in its row (``jokers``).

With spare cards a player may also ask for the suggestions of the 13 cards it keeps after
swapping with its spare tray (:func:`kept_suggestions`, the ``suggest`` message).

A seat dealt a special hand also gets the advice on it (:func:`special_advice_json`): the
special's water against the best arrangement's expected water, and which to play.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

from games.rules.advice import special_advice
from games.rules.api import jokers_json
from games.rules.arrange import Suggestion, arrange
from games.rules.cards import Card, format_cards
from games.rules.config import RuleConfig

from .errors import TableError
from .state import PLAY_PHASES, Json, Phase, SeatState, TableState


def suggestions(cards: Sequence[Card], config: RuleConfig, opponents: int = 3) -> list[Json]:
    """At most 10 foul-free suggestions, best first (the shape of the engine's ``arrange``),
    valued against ``opponents`` (at a table: the opponents it could hold, RULES.md §6)."""
    out: list[Json] = []
    for s in _suggestions(tuple(cards), config, opponents):
        item: Json = {
            "front": format_cards(s.front),
            "middle": format_cards(s.middle),
            "back": format_cards(s.back),
            "categories": [c.id for c in s.categories],
            "expected_water": s.expected_water,
        }
        if config.spare_cards:
            item["unused"] = format_cards(s.unused)
        jokers = jokers_json(s.arranged(), config)
        if jokers:
            item["jokers"] = jokers
        out.append(item)
    return out


@lru_cache(maxsize=256)
def _suggestions(
    cards: tuple[Card, ...], config: RuleConfig, opponents: int
) -> tuple[Suggestion, ...]:
    return arrange(cards, config, opponents=opponents).suggestions


def verify_kept(state: TableState, *, position: int, cards: Sequence[Card]) -> None:
    """A ``suggest`` request: 13 distinct cards of the seat's own, while it still arranges."""
    if not state.config.spare_cards:
        raise TableError("no_spare_cards", "this round has no spare cards to swap")
    if state.phase not in PLAY_PHASES | {Phase.DEALING}:
        raise TableError(
            "wrong_phase", f"cannot ask for suggestions while the table is {state.phase}"
        )
    seat = state.seat(position)
    if seat is None or not seat.in_round or seat.hand is None:
        raise TableError("not_in_round", f"seat {position} is not playing this round")
    if seat.done or seat.escaped:
        raise TableError("already_submitted", f"seat {position} has nothing left to arrange")
    if len(cards) != 13:
        raise TableError("wrong_count", f"keep 13 cards, got {len(cards)}")
    if len(set(cards)) != len(cards):
        raise TableError("duplicate_card", "a card appears twice")
    foreign = [str(c) for c in cards if c not in seat.hand]
    if foreign:
        raise TableError("not_your_cards", f"not in your hand: {' '.join(foreign)}", cards=foreign)


def kept_suggestions(state: TableState, *, position: int, cards: Sequence[Card]) -> list[Json]:
    """The suggestions for the 13 cards a seat keeps of its 16 (RULES.md §12.4), each with the
    3 others as ``unused``. Raises :class:`TableError` for a request that cannot be answered."""
    verify_kept(state, position=position, cards=cards)
    seat = state.seat(position)
    assert seat is not None and seat.hand is not None
    kept = tuple(sorted(cards, key=lambda c: c.index))
    aside = format_cards(c for c in seat.hand if c not in kept)
    out = suggestions(kept, replace(state.config, spare_cards=0), state.table_opponents)
    for item in out:
        item["unused"] = aside
    return out


def special_advice_json(state: TableState, seat: SeatState) -> Json | None:
    """The advice on the seat's special (RULES.md §5.1, ``games.rules.advice``) against this
    round's opponents, for the seat's own eyes; None when it holds no special."""
    if seat.special is None or seat.hand is None or not seat.in_round:
        return None
    opponents = max(1, len(state.round_seats) - 1)
    return special_advice(seat.hand, state.config, seat.special, opponents).to_json()

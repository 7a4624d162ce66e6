"""An arrangement of a seat's own cards: the checks every one must pass, and a saved draft read
as one.

A submitted arrangement is refused with the reason (:func:`verify_rows`); a hosted hand is
played from its player's saved draft when the draft passes the same checks
(:func:`draft_arrangement`, RULES.md §9).
"""

from __future__ import annotations

from collections.abc import Sequence

from games.rules.cards import CARD_BY_TEXT, Card
from games.rules.config import RuleConfig
from games.rules.errors import FoulError
from games.rules.hands import check_foul, evaluate
from games.rules.scoring import Arranged

from .errors import TableError
from .state import SeatState

ROW_SIZES = (("front", 3), ("middle", 5), ("back", 5))


def verify_rows(
    hand: Sequence[Card],
    config: RuleConfig,
    *,
    front: Sequence[Card],
    middle: Sequence[Card],
    back: Sequence[Card],
    unused: Sequence[Card] | None = None,
) -> None:
    """Rows of 3/5/5 holding 13 distinct cards of ``hand``, no foul (RULES.md §4).

    With spare cards (§12.4) the cards left out are set aside; ``unused``, when given, must be
    exactly those."""
    rows = {"front": front, "middle": middle, "back": back}
    for row, size in ROW_SIZES:
        if len(rows[row]) != size:
            raise TableError(
                "wrong_count", f"the {row} row needs {size} cards, got {len(rows[row])}", row=row
            )
    cards = [c for row_cards in rows.values() for c in row_cards]
    dup = sorted({str(c) for c in cards if cards.count(c) > 1})
    if dup:
        raise TableError("duplicate_card", f"card {dup[0]} appears twice", cards=dup)
    foreign = [str(c) for c in cards if c not in hand]
    if foreign:
        raise TableError("not_your_cards", f"not in your hand: {' '.join(foreign)}", cards=foreign)
    if unused is not None:
        left_out = {c for c in hand if c not in cards}
        if not config.spare_cards:
            raise TableError("no_spare_cards", "this round has no spare cards to set aside")
        if len(unused) != len(left_out) or set(unused) != left_out:
            raise TableError(
                "wrong_unused",
                "the cards set aside must be exactly the ones not in the rows",
                cards=[str(c) for c in unused],
            )
    try:
        check_foul(*(evaluate(r, config.a2345) for r in (front, middle, back)))
    except FoulError as exc:
        raise TableError("foul", exc.message, rows=list(exc.rows)) from None


def draft_arrangement(seat: SeatState, config: RuleConfig) -> Arranged | None:
    """The seat's saved draft as an arrangement when it is complete and foul-free: its
    ``front``, ``middle`` and ``back`` name 3, 5 and 5 of the seat's own cards (the client's
    layout, docs/protocol.md ``draft``) that :func:`verify_rows` accepts. None otherwise — an
    incomplete or fouled draft, anything else in it, or no draft."""
    draft, hand = seat.draft, seat.hand
    if not isinstance(draft, dict) or hand is None:
        return None
    rows: list[tuple[Card, ...]] = []
    for row, size in ROW_SIZES:
        texts = draft.get(row)
        if not isinstance(texts, list) or len(texts) != size:
            return None
        cards = tuple(CARD_BY_TEXT.get(t) if isinstance(t, str) else None for t in texts)
        if None in cards:
            return None
        rows.append(cards)  # type: ignore[arg-type]
    front, middle, back = rows
    try:
        verify_rows(hand, config, front=front, middle=middle, back=back)
    except TableError:
        return None
    return Arranged(front, middle, back)

"""A player's review of its own hand in a settled round: what it played against the
engine's best arrangement of the same cards, in expected water and in water against the hands
that round revealed (``games.rules.review``).

Only the round's own players may read it, and only once the round is settled: before that a
review would tell what the model thinks of a hand still in play. It reads the player's own
cards and the hands the comparison showed everyone, nothing else. The REST API
(``games.apis``), the table's settlement panel and the replay page use it.
"""

from __future__ import annotations

from typing import Any

from games.history.audit import RoundInPlay, round_seats
from games.models import Round
from games.rules.api import jokers_json
from games.rules.cards import parse_cards
from games.rules.config import RuleConfig
from games.rules.review import review_hand
from games.rules.scoring import Arranged


class NotYourRound(Exception):
    """No such round, or the user did not play it (the same answer: nothing is revealed)."""


def round_for_review(
    *, user_id: int, round_id: int | None = None, room_id: int | None = None, number: int = 0
) -> Round:
    """The round by its id, or by its room and number (the table knows those)."""
    rounds = Round.objects.filter(players__user_id=user_id)
    if round_id is not None:
        rounds = rounds.filter(pk=round_id)
    else:
        rounds = rounds.filter(table__room_id=room_id, number=number)
    found = rounds.first()
    if found is None:
        raise NotYourRound
    return found


def round_review(*, round_: Round, user_id: int) -> dict[str, Any]:
    """The review of ``user_id``'s hand in ``round_`` as JSON. Raises :class:`RoundInPlay`
    before the settlement and :class:`NotYourRound` when the user did not play it."""
    if round_.settled_at is None or round_.result is None:
        raise RoundInPlay(round_.pk)
    rows = list(round_.players.order_by("position"))
    if not any(r.user_id == user_id for r in rows):
        raise NotYourRound
    config = RuleConfig.from_dict(round_.config)
    review = review_hand(round_seats(rows, config), str(user_id), config)
    out = review.to_json()
    out.update(round_id=round_.pk, round_no=round_.number, room_id=_room_id(round_))
    for key, option in (("played", review.played), ("best", review.best)):
        if isinstance(option.hand, Arranged) and config.jokers:
            out[key]["jokers"] = jokers_json(option.hand, config)
    mine = next(r for r in rows if r.user_id == user_id)
    out["dealt"] = [str(c) for c in parse_cards(mine.cards.split(), deck=config.deck)]
    return out


def _room_id(round_: Round) -> int:
    return int(round_.table.room_id)

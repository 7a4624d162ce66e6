"""The review of one player's hand after a round (post-hand review).

Two figures for what the player played and for the engine's best arrangement of the same
cards (RULES.md §6; with spare cards, of all 16, so the best may set aside other cards):

- **expected water**: the model's value against this round's opponents, before anyone's cards
  are known (:func:`games.rules.arrange.expected_water_of`; a declared special is worth its
  water from each opponent, as in :mod:`games.rules.advice`);
- **water against this round's hands**: what it scored — or would have scored, the other
  seats' hands unchanged — in the round itself (:func:`games.rules.scoring.score_round`, every
  rule of the configuration: row bonuses, guns, home runs, specials).

A seat's review reads only its own cards and the hands the comparison revealed to everyone,
so it may be shown to its player once the round is settled. Pure and deterministic.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from .arrange import arrange, expected_water_of
from .cards import Card, format_cards
from .config import RuleConfig
from .errors import RulesError
from .scoring import Arranged, Declared, Seat, score_round


@dataclass(frozen=True, slots=True)
class Option:
    hand: Arranged | Declared
    unused: tuple[Card, ...]  # with spare cards: the 3 set aside
    expected_water: float
    water: int  # against this round's hands


@dataclass(frozen=True, slots=True)
class HandReview:
    player: str
    opponents: int
    played: Option
    best: Option

    @property
    def played_best(self) -> bool:
        """Whether the player played the engine's best (the same rows, in any order)."""
        return _rows(self.played.hand) == _rows(self.best.hand)

    def to_json(self) -> dict[str, Any]:
        return {
            "player": self.player,
            "opponents": self.opponents,
            "played_best": self.played_best,
            "played": _option_json(self.played),
            "best": _option_json(self.best),
            "expected_gain": round(self.best.expected_water - self.played.expected_water, 2),
            "water_gain": self.best.water - self.played.water,
        }


def review_hand(seats: Sequence[Seat], player: str, config: RuleConfig) -> HandReview:
    """The review of ``player``'s hand in a round played by ``seats`` (as scored)."""
    seats = tuple(seats)
    index = next((i for i, s in enumerate(seats) if s.id == player), None)
    if index is None:
        raise RulesError(f"player {player} did not play this round")
    seat = seats[index]
    opponents = len(seats) - 1
    if opponents < 1:
        raise RulesError("a round has at least two players")
    free = [replace(s, balance=None, escaped=False) for s in seats]  # water, not coins
    played_water = score_round(free, config).water[index]
    hand = seat.hand
    if isinstance(hand, Declared):
        played_expected = float(config.special(hand.special).water * opponents)
    else:
        played_expected = expected_water_of(hand, config, opponents=opponents)
    played = Option(hand, seat.unused, round(played_expected, 4), played_water)

    dealt = (*hand.cards, *seat.unused)
    top = arrange(dealt, config, limit=1, opponents=opponents).best
    best_hand = top.arranged()
    free[index] = replace(free[index], hand=best_hand, unused=top.unused)
    best_water = score_round(free, config).water[index]
    best = Option(best_hand, top.unused, top.expected_water, best_water)
    return HandReview(player, opponents, played, best)


def _rows(hand: Arranged | Declared) -> object:
    if isinstance(hand, Declared):
        return ("special", hand.special)
    return tuple(frozenset(row) for row in hand.rows())


def _option_json(option: Option) -> dict[str, Any]:
    hand = option.hand
    out: dict[str, Any] = {
        "expected_water": round(option.expected_water, 2),
        "water": option.water,
        "unused": format_cards(option.unused),
    }
    if isinstance(hand, Declared):
        out.update(special=hand.special, cards=format_cards(hand.cards))
    else:
        out.update(
            special=None,
            front=format_cards(hand.front),
            middle=format_cards(hand.middle),
            back=format_cards(hand.back),
        )
    return out

"""A settled round with chosen hands, played through the table services, for the replay tests.

The deck is rigged (``secrets.SystemRandom`` replaced by :class:`RiggedRandom`) so that each
player is dealt the hand a test names, and the clock is the test's, so the deal and the
comparison end by their timeouts at once; the table's and the lobby's messages go nowhere.
Everything else is the real table: the special choice, the submitted arrangements, the
scoring and the settlement with its ledger.

Two rounds of the default rules (RULES.md §7.2, §7.3), one hand per seat in seat order:

- :data:`GUNS_AND_SPECIAL` (4 players): alice guns bob (打枪, all three rows), runs over dave
  (辗过: the front rows tie), dave guns bob, and carol declares six pairs (六对半, 4 water);
  no home run, since carol is not arranged normally.
- :data:`HOME_RUN` (3 players, carol left out): alice guns bob and runs over dave, which is a
  home run (全垒打) with the run-over counted as a gun.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import pytest

from accounts.models import User
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import services as table_services
from games.live import store as table_store
from games.models import Round
from games.rules.cards import DECK, Card, parse_cards
from games.table.deck import deal_order
from games.table.state import Phase
from lobby import store as lobby_store
from lobby.models import Room
from tests.games.table_helpers import (
    default_rules,
    make_player,
    open_table,
    press_ready,
    state_of,
    table_id,
)


@dataclass(frozen=True)
class Hand:
    """A seat's 13 cards and how it plays them: three rows, or a declared special."""

    front: str = ""
    middle: str = ""
    back: str = ""
    special: bool = False
    cards: str = ""

    def dealt(self) -> list[str]:
        return (self.cards or f"{self.front} {self.middle} {self.back}").split()


ALICE = Hand(front="AS AH 3C", middle="QC QD QS 8C 8D", back="7C 7D 7H 7S 2C")
BOB = Hand(front="4C 5C 6C", middle="9C 9H 8H 8S QH", back="KC KD JH JS TS")
CAROL = Hand(special=True, cards="2S 2H 3S 3H 4S 4H 5S 5H 6S 6H KS KH 9S")
DAVE = Hand(front="AC AD 3D", middle="2D 4D 5D 6D 9D", back="TC TD TH JC JD")

GUNS_AND_SPECIAL = {"alice": ALICE, "bob": BOB, "carol": CAROL, "dave": DAVE}
HOME_RUN = {"alice": ALICE, "bob": BOB, "dave": DAVE}


class RiggedRandom:
    """Stands in for ``secrets.SystemRandom``: "shuffles" to a fixed deck, starts dealing at
    the lowest seat."""

    def __init__(self, deck: Sequence[Card]) -> None:
        self.deck = list(deck)

    def shuffle(self, cards: list[Card]) -> None:
        cards[:] = self.deck

    def choice(self, seq: Sequence[int]) -> int:
        return min(seq)


def rigged_deck(hands: Mapping[int, Sequence[str]]) -> list[Card]:
    """A deck that deals ``hands[position]`` to each position, dealing from the lowest seat."""
    order = deal_order(sorted(hands), min(hands))
    cards = {p: parse_cards(list(h), count=13) for p, h in hands.items()}
    n = len(order)
    dealt = [cards[order[j % n]][j // n] for j in range(13 * n)]
    return dealt + [c for c in DECK if c not in set(dealt)]


def play_rigged_round(
    monkeypatch: pytest.MonkeyPatch,
    hands: Mapping[str, Hand],
    *,
    room_name: str | None = None,
    settle: bool = True,
    while_arranging: Callable[[Room, dict[str, User]], object] | None = None,
) -> tuple[Round, dict[str, User]]:
    """Sign up one player per name (seated in that order), deal them ``hands``, play them as
    the hands say and settle: the round, settled, and the players by name. ``settle=False``
    stops once the cards are dealt: the round is in play. ``while_arranging(room, users)``
    runs once the special hands are answered, before any hand is submitted."""
    clock = {"now": time.time()}
    monkeypatch.setattr(table_store, "clock", lambda: clock["now"])
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, messages: None)
    # Nobody watches the lobby either (and a browser test's thread runs an event loop).
    monkeypatch.setattr(lobby_store, "_group_send", lambda group, message: lambda: None)
    default_rules()
    users = {name: make_player(name) for name in hands}
    room = open_table(list(users.values()), rules=default_rules(), seats=len(users))
    if room_name:
        room.name = room_name
        room.save(update_fields=["name"])
    state = state_of(room)
    by_position: dict[int, Sequence[str]] = {}
    for name, user in users.items():
        seat = state.seat_of(str(user.pk))
        assert seat is not None
        by_position[seat.position] = hands[name].dealt()
    deck = rigged_deck(by_position)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: RiggedRandom(deck))
    press_ready(list(users.values()), room)

    tid = table_id(room)
    state = state_of(room)
    assert state.phase is Phase.DEALING and state.deadline is not None
    clock["now"] = state.deadline
    table_services.table_timeout(table_id=tid, version=state.version, phase="dealing")
    if not settle:
        round_ = Round.objects.get(table__room=room)
        assert round_.settled_at is None
        return round_, users
    for name, user in users.items():
        seat = state_of(room).seat_of(str(user.pk))
        assert seat is not None
        if seat.choosing:
            table_services.table_choose_special(
                user=user, room=room, play_special=hands[name].special
            )
        else:
            assert not hands[name].special, f"{name}'s hand makes no special"
    if while_arranging is not None:
        while_arranging(room, users)
    for name, user in users.items():
        hand = hands[name]
        if not hand.special:
            table_services.table_submit(
                user=user,
                room=room,
                front=hand.front.split(),
                middle=hand.middle.split(),
                back=hand.back.split(),
            )
    state = state_of(room)
    assert state.phase is Phase.COMPARING and state.deadline is not None
    clock["now"] = state.deadline
    table_services.table_timeout(table_id=tid, version=state.version, phase="comparing")
    round_ = Round.objects.get(table__room=room)
    assert round_.settled_at is not None
    return round_, users


def positions(round_: Round) -> dict[str, int]:
    """Each player's seat in the round, by username."""
    return {p.user.username: p.position for p in round_.players.select_related("user")}

"""A table driven by hand in tests: fixed decks, a clock that only moves when told, and a log
that checks every event's version as it arrives."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from games.rules.cards import DECK, Card, parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.scoring import Arranged
from games.rules.specials import detect_special
from games.table import machine
from games.table.deck import HAND_SIZE, deal_order
from games.table.events import Event, Transition
from games.table.state import SeatState, TableState

T0 = 1_000_000.0
RICH = 10**12


def c(text: str) -> tuple[Card, ...]:
    return parse_cards(text.split())


def arr(front: str, middle: str, back: str) -> Arranged:
    return Arranged(c(front), c(middle), c(back))


def deck_for(
    hands: Mapping[int, Sequence[Card]],
    positions: Sequence[int],
    start_seat: int,
    config: RuleConfig = DEFAULT_CONFIG,
) -> tuple[Card, ...]:
    """A deck that deals ``hands`` (position -> 13 cards); the other seats get shuffled
    leftovers that make no special hand."""
    order = deal_order(positions, start_seat)
    n = len(order)
    used = {card for hand in hands.values() for card in hand}
    assert len(used) == HAND_SIZE * len(hands)
    leftovers = [card for card in DECK if card not in used]
    rng = random.Random(7)
    while True:
        rng.shuffle(leftovers)
        rest = iter(leftovers)
        deck: list[Card | None] = [None] * len(DECK)
        for i, position in enumerate(order):
            for k in range(HAND_SIZE):
                deck[k * n + i] = hands[position][k] if position in hands else next(rest)
        full = tuple(card if card is not None else next(rest) for card in deck)
        others = [full[i : HAND_SIZE * n : n] for i, p in enumerate(order) if p not in hands]
        if all(detect_special(h, config) is None for h in others):
            return full


def plain_deck(n: int, seed: int, config: RuleConfig = DEFAULT_CONFIG) -> tuple[Card, ...]:
    """A shuffled deck (by ``seed``) in which no seat of an n-player round holds a special."""
    rng = random.Random(seed)
    while True:
        deck = list(DECK)
        rng.shuffle(deck)
        hands = [deck[i : HAND_SIZE * n : n] for i in range(n)]
        if all(detect_special(h, config) is None for h in hands):
            return tuple(deck)


CARD = re.compile(r"^(10|[2-9TJQKA])[SHCD]$")


def cards_in(value: Any) -> set[str]:
    """Every card-shaped string anywhere in a JSON value."""
    found: set[str] = set()
    if isinstance(value, str):
        if CARD.match(value):
            found.add(value)
    elif isinstance(value, Mapping):
        for item in value.values():
            found |= cards_in(item)
    elif isinstance(value, list | tuple):
        for item in value:
            found |= cards_in(item)
    return found


class Game:
    """One table under test. Every transition goes through :meth:`apply`, which checks that
    versions go up by exactly one per event and that no event means no change."""

    def __init__(
        self, players: int = 2, config: RuleConfig = DEFAULT_CONFIG, capacity: int | None = None
    ) -> None:
        self.state = TableState(capacity=capacity or max(players, 2), config=config)
        self.log: list[Event] = []
        self.now = T0
        # Called with every transition (and the time) before it is applied.
        self.watchers: list[Callable[[Transition, float], None]] = []
        for p in range(players):
            self.do(machine.sit, player=f"p{p}", position=p)

    def apply(self, transition: Transition) -> Transition:
        for watch in self.watchers:
            watch(transition, self.now)
        before = self.state.version
        versions = [e.version for e in transition.events]
        assert versions == list(range(before + 1, before + 1 + len(versions)))
        assert transition.state.version == before + len(versions)
        if not transition.events:
            assert transition.state == self.state
        self.log.extend(transition.events)
        self.state = transition.state
        return transition

    def do(self, command: Callable[..., Transition], **kwargs: Any) -> Transition:
        return self.apply(command(self.state, now=self.now, **kwargs))

    def wait(self, seconds: float) -> None:
        self.now += seconds

    def fire(self, balances: Mapping[str, int] | None = None, late: float = 0.0) -> Transition:
        """Let the scheduled timer go off (``late`` seconds after its time)."""
        timer = Transition(self.state).timer
        assert timer is not None, "nothing is scheduled"
        self.now = max(self.now, timer.at + late)
        if balances is None and self.state.phase == "comparing":
            balances = self.rich()
        return self.apply(
            machine.timeout(
                self.state,
                now=self.now,
                version=timer.version,
                phase=timer.phase,
                balances=balances,
            )
        )

    def rich(self) -> dict[str, int]:
        return {s.player: RICH for s in self.state.seats}

    def ready_all(self) -> None:
        for s in self.state.seats:
            if not s.ready:
                self.do(machine.ready, position=s.position)

    def deal(
        self,
        deck: Sequence[Card] | None = None,
        *,
        start_seat: int | None = None,
        salt: str = "salt-0001",
        hands: Mapping[int, Sequence[Card]] | None = None,
    ) -> Transition:
        positions = [s.position for s in self.state.round_seats]
        start = positions[0] if start_seat is None else start_seat
        if deck is None:
            if hands:
                deck = deck_for(hands, positions, start, self.state.config)
            else:
                deck = plain_deck(len(positions), 1, self.state.config)
        return self.do(machine.deal, deck=deck, salt=salt, start_seat=start)

    def start(self, **deal_kwargs: Any) -> None:
        """Ready everyone, deal, and let the deal animation end."""
        self.ready_all()
        assert self.state.awaiting_deal
        self.deal(**deal_kwargs)
        self.fire()

    def seat(self, position: int) -> SeatState:
        seat = self.state.seat(position)
        assert seat is not None, f"nobody at seat {position}"
        return seat

    def result(self) -> dict[str, Any]:
        assert self.state.result is not None, "not settled"
        return self.state.result

    def hand(self, position: int) -> tuple[Card, ...]:
        seat = self.state.seat(position)
        assert seat is not None and seat.hand is not None
        return seat.hand

    def submit(self, position: int, arranged: Arranged) -> Transition:
        return self.do(
            machine.submit,
            position=position,
            front=arranged.front,
            middle=arranged.middle,
            back=arranged.back,
        )

    def submit_best(self, position: int) -> Transition:
        from games.rules.arrange import best_arrangement

        return self.submit(position, best_arrangement(self.hand(position), self.state.config))

    def events(self, type_: str) -> list[Event]:
        return [e for e in self.log if e.type == type_]

    def types(self, since: int = 0) -> list[str]:
        return [e.type for e in self.log if e.version > since]


def pairs(items: Sequence[int]) -> Iterator[tuple[int, int]]:
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            yield a, b


def table_best(game: Game, position: int) -> Arranged:
    """What the table submits for a seat (auto-arrange): the best against the opponents the
    table could hold (RULES.md §6)."""
    from games.rules.arrange import arrange

    state = game.state
    best = arrange(game.hand(position), state.config, limit=1, opponents=state.table_opponents)
    return best.best.arranged()

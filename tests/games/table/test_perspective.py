"""What one seat may see (RULES.md §9 reconnection; the issue's "never another player's cards
before the reveal"): snapshots, event filtering, missed events, and a leak hunt over many
random rounds."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import replace

import pytest

from games.rules.cards import DECK, Card
from games.rules.config import RuleConfig
from games.rules.hands import ROWS
from games.rules.scoring import Arranged
from games.table import machine
from games.table.errors import TableError
from games.table.events import Event, Transition
from games.table.perspective import (
    delivered,
    events_for,
    hand_suggestions,
    missed_events,
    resync_suggestions,
    snapshot_for,
)
from games.table.state import LOBBY_PHASES, PLAY_PHASES, Phase, TableState

from .helpers import Game, c, cards_in, deck_for

SIX_PAIRS = c("2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD")
REVEALING = {"reveal", "reveal_special", "settled"}


def own_cards(state: TableState, position: int | None) -> set[str]:
    seat = None if position is None else state.seat(position)
    if seat is None or seat.hand is None:
        return set()
    return {str(card) for card in seat.hand}


def test_snapshot_shows_own_cards_only_until_the_comparison() -> None:
    game = Game(3)
    game.start()
    for p in range(3):
        view = snapshot_for(game.state, p, now=game.now)
        assert view["you"]["hand"] == [str(x) for x in game.hand(p)]
        assert cards_in(view) <= own_cards(game.state, p)
        assert all(s["revealed"] is None for s in view["seats"])
        assert view["deck"] is None and view["salt"] is None
        assert len(view["you"]["suggestions"]) >= 1
    spectator = snapshot_for(game.state, None, now=game.now)
    assert spectator["you"] is None and cards_in(spectator) == set()
    game.submit_best(0)
    game.submit_best(1)
    assert cards_in(snapshot_for(game.state, 2, now=game.now)) == own_cards(game.state, 2)
    game.submit_best(2)
    assert game.state.phase is Phase.COMPARING
    shown = snapshot_for(game.state, None, now=game.now)
    assert all(s["revealed"]["special"] is None for s in shown["seats"])
    assert {x for s in shown["seats"] for r in ROWS for x in s["revealed"][r]} == {
        str(x) for p in range(3) for x in game.hand(p)
    }
    assert shown["deck"] is None  # only at settlement
    game.fire(game.rich())
    settled = snapshot_for(game.state, 0, now=game.now)
    assert settled["deck"] is not None and len(settled["deck"]) == 52
    assert settled["salt"] == "salt-0001" and settled["result"] == game.state.result


def test_snapshot_shows_other_seats_as_done_without_saying_how() -> None:
    game = Game(2)
    game.start(hands={1: SIX_PAIRS})
    game.do(machine.choose_special, position=1, play_special=True)
    seat = snapshot_for(game.state, 0, now=game.now)["seats"][1]
    assert seat["done"] and seat["revealed"] is None
    assert "special" not in seat
    assert snapshot_for(game.state, 1, now=game.now)["you"]["special"] == "six_pairs"


def test_6_a_hand_is_logged_without_suggestions_and_sent_with_them() -> None:
    """The engine's suggestions (RULES.md §6) are worked out when the hand is sent, after the
    deal's commit (``views.delivered``), not inside the deal's lock, and never logged: the
    same as the snapshot's, none for a bot, a hand logged with them (before) sent as it was,
    and none for a hand whose round is over (a reconnect with an old version makes the
    server arrange nothing again)."""
    game = Game(3, capacity=4)
    game.do(machine.sit, player="b3", position=3, bot=True)
    game.start()
    logged = {e.payload["position"]: e for e in game.events("hand")}
    assert set(logged) == {0, 1, 2, 3}
    assert all("suggestions" not in e.payload for e in logged.values())
    for position in (0, 1, 2):
        sent = delivered(logged[position], game.state)
        assert sent.version == logged[position].version and sent.audience == f"p{position}"
        view = snapshot_for(game.state, position, now=game.now)["you"]
        assert sent.payload["suggestions"] == view["suggestions"] and view["suggestions"]
        assert sent.payload["cards"] == view["hand"]
    assert delivered(logged[3], game.state).payload["suggestions"] == []
    assert delivered(game.events("deal")[0], game.state) == game.events("deal")[0]
    old = replace(logged[0], payload={**logged[0].payload, "suggestions": ["as logged"]})
    assert delivered(old, game.state) is old
    # The next round: seat 0 holds other cards. Its first hand, in a reconnect's missed
    # events, is sent with none (its round is over; nothing is arranged again for it).
    for position in range(4):
        game.submit_best(position)
    while game.state.phase is not Phase.SETTLED:
        game.fire()
    game.start(deck=random.Random(6).sample(list(DECK), len(DECK)), start_seat=0)
    assert game.hand(0) != tuple(c(" ".join(logged[0].payload["cards"])))
    assert delivered(logged[0], game.state).payload["suggestions"] == []
    # The seat's hand of this round, once the round is settled: none either (as a snapshot).
    now = [e for e in game.events("hand") if e.audience == "p0"][-1]
    assert delivered(now, game.state).payload["suggestions"]
    for position in range(4):
        game.submit_best(position)
    while game.state.phase is not Phase.SETTLED:
        game.fire()
    assert snapshot_for(game.state, 0, now=game.now)["you"]["suggestions"] is None
    assert delivered(now, game.state).payload["suggestions"] == []


def test_6_a_hand_sent_live_goes_without_its_suggestions_which_follow() -> None:
    """Sent live with its deal, a person's hand carries ``"suggestions": None`` (the deal does
    not wait for the engine) and :func:`hand_suggestions` makes what follows: its cards and
    the snapshot's suggestions. A bot's hand goes with none and nothing follows; so does a
    hand whose round is over. A reconnect whose missed events hold no hand of the player's
    gets them (:func:`resync_suggestions`), one whose events hold it gets them with it."""
    game = Game(3, capacity=4)
    game.do(machine.sit, player="b3", position=3, bot=True)
    game.start()
    logged = {e.payload["position"]: e for e in game.events("hand")}
    for position in (0, 1, 2):
        live = delivered(logged[position], game.state, live=True)
        assert live.payload["suggestions"] is None
        assert {k: v for k, v in live.payload.items() if k != "suggestions"} == dict(
            logged[position].payload
        )
        view = snapshot_for(game.state, position, now=game.now)["you"]
        follow = hand_suggestions(logged[position], game.state)
        assert follow == {"cards": view["hand"], "suggestions": view["suggestions"]}
        assert view["suggestions"]
        player = f"p{position}"
        assert resync_suggestions(game.state, player, []) == follow
        assert resync_suggestions(game.state, player, [logged[position]]) is None
        others = [logged[p] for p in (0, 1, 2) if p != position]
        assert resync_suggestions(game.state, player, others) == follow
    # A bot's: none, at once, and nothing follows (a bot works out its own play).
    assert delivered(logged[3], game.state, live=True).payload["suggestions"] == []
    assert hand_suggestions(logged[3], game.state) is None
    assert resync_suggestions(game.state, "b3", []) is None
    # Not a hand: unchanged, nothing follows; a spectator never gets any.
    deal = game.events("deal")[0]
    assert delivered(deal, game.state, live=True) == deal
    assert hand_suggestions(deal, game.state) is None
    assert resync_suggestions(game.state, "nobody", []) is None
    # Once the round is over: a hand of it gets none, nothing follows, nothing on a resync.
    for position in range(4):
        game.submit_best(position)
    while game.state.phase is not Phase.SETTLED:
        game.fire()
    assert delivered(logged[0], game.state, live=True).payload["suggestions"] == []
    assert hand_suggestions(logged[0], game.state) is None
    assert resync_suggestions(game.state, "p0", []) is None


def test_events_for_filters_other_seats_private_events() -> None:
    game = Game(3)
    game.start()
    hands = game.events("hand")
    assert [e.audience for e in hands] == ["p0", "p1", "p2"]
    mine = events_for(game.log, "p1")
    assert [e.audience for e in mine if e.type == "hand"] == ["p1"]
    assert all(e.audience in ("all", "p1") for e in mine)
    assert all(e.audience == "all" for e in events_for(game.log, None))


def test_private_events_belong_to_the_player_not_the_position() -> None:
    """whoever sits at a position later sees none of its earlier player's events."""
    game = Game(2)
    game.start()
    earlier = [e for e in game.log if e.private]
    assert earlier and {e.audience for e in earlier} == {"p0", "p1"}
    assert not any(e.visible_to("newcomer") for e in earlier)
    assert not any(e.visible_to("") for e in earlier)


def test_missed_events_never_reach_back_before_the_player_sat_down() -> None:
    game = Game(2)
    game.start()
    log = game.log
    sat = game.state.seat(0)
    assert sat is not None and sat.since >= 1
    assert missed_events(log, sat.since - 1, "p0", seated_at=sat.since) is not None
    assert missed_events(log, sat.since - 2, "p0", seated_at=sat.since) is None


def test_missed_events_or_none_for_a_snapshot() -> None:
    game = Game(2)
    game.start()
    log = game.log[5:]
    first, last = log[0].version, log[-1].version
    assert missed_events(log, last, "p0") == []
    got = missed_events(log, first + 1, "p0")
    assert got is not None and [e.version for e in got] == [
        e.version for e in log if e.version > first + 1 and e.visible_to("p0")
    ]
    assert missed_events(log, first - 1, "p0") is not None  # exactly reaches back
    assert missed_events(log, first - 2, "p0") is None  # gap: snapshot
    assert missed_events(log, last + 1, "p0") is None  # a version the table never had
    assert missed_events([], 0, "p0") is None


def test_9_reconnect_restores_remaining_time() -> None:
    game = Game(2)
    game.start()
    start = game.now
    game.do(machine.disconnect, position=0)
    game.wait(12.5)
    game.do(machine.reconnect, position=0)
    you = snapshot_for(game.state, 0, now=game.now)["you"]
    assert you["deadline"] == start + 30
    assert you["remaining"] == pytest.approx(17.5)
    game.wait(60)
    assert snapshot_for(game.state, 0, now=game.now)["you"]["remaining"] == 0.0


# -- the leak hunt -----------------------------------------------------------------------------


class Observer:
    """Checks, after every transition, what each seat and a spectator may see."""

    def __init__(self, capacity: int) -> None:
        self.viewers: list[int | None] = [None, *range(capacity)]
        self.revealed = False

    def check(self, transition: Transition, now: float) -> None:
        state = transition.state
        for event in transition.events:
            if event.type == "round_start":
                self.revealed = False
            if event.type == "phase" and event.payload["phase"] == "comparing":
                self.revealed = True
            if event.type in REVEALING:
                assert self.revealed, f"{event.type} before the comparison"
        for viewer in self.viewers:
            mine = own_cards(state, viewer)
            player = None if viewer is None else f"p{viewer}"
            for event in events_for(transition.events, player):
                if event.type not in REVEALING:
                    assert cards_in(event.payload) <= mine, (viewer, event)
                if event.type != "settled":
                    assert "deck" not in event.payload
            view = snapshot_for(state, viewer, now=now)
            if not state.revealed:
                assert cards_in(view) <= mine, (viewer, state.phase)
            if state.result is None:
                assert view["deck"] is None and view["salt"] is None


def _random_rows(rng: random.Random, cards: Sequence[Card]) -> Arranged:
    shuffled = list(cards)
    rng.shuffle(shuffled)
    return Arranged(tuple(shuffled[:3]), tuple(shuffled[3:8]), tuple(shuffled[8:]))


def _one_random_round(seed: int) -> list[Event]:
    rng = random.Random(seed)
    players = rng.choice([2, 3, 4])
    config = RuleConfig(
        deal_mode=rng.choice(["sequential", "simultaneous"]),
        compare_mode=rng.choice(["sequential", "simultaneous"]),
    )
    game = Game(players, config, capacity=4)
    game.watchers.append(Observer(4).check)
    game.ready_all()
    positions = list(range(players))
    start = rng.choice(positions)
    if rng.random() < 0.3:
        deck = deck_for({rng.choice(positions): SIX_PAIRS}, positions, start, config)
    else:
        shuffled = list(DECK)
        rng.shuffle(shuffled)
        deck = tuple(shuffled)
    game.deal(deck, start_seat=start, salt=f"seed-{seed}")
    old_timers = []
    for _ in range(200):
        state = game.state
        if state.result is not None:  # settled (waiting already if nobody is left to wait on)
            break
        timer = Transition(state).timer
        assert timer is not None
        old_timers.append(timer)
        seat = state.seat(rng.choice(positions))
        assert seat is not None
        roll = rng.random()
        p = seat.position
        if roll < 0.25:
            game.fire(game.rich(), late=rng.choice([0.0, 0.5, 3.0]))
        elif roll < 0.30:
            old = rng.choice(old_timers)
            if old.version != state.version:
                stale = machine.timeout(
                    state,
                    now=game.now + 100,
                    version=old.version,
                    phase=old.phase,
                    balances=game.rich(),
                )
                assert stale.events == () and stale.state is state
        elif roll < 0.38:
            if seat.connected:
                game.do(machine.disconnect, position=p)
            else:
                game.do(machine.reconnect, position=p)
        elif roll < 0.40 and not seat.left:
            game.do(machine.leave, position=p)
        elif seat.escaped or seat.hand is None or state.phase not in PLAY_PHASES:
            game.wait(0.5)
        elif seat.choosing:
            game.do(machine.choose_special, position=p, play_special=rng.random() < 0.5)
        elif seat.done:
            with pytest.raises(TableError):
                game.submit_best(p)
        elif roll < 0.55:
            draft = {"front": [str(x) for x in rng.sample(seat.hand, 3)]}
            game.do(machine.save_draft, position=p, draft=draft)
        elif roll < 0.70:
            other = state.seat(rng.choice([q for q in positions if q != p]))
            assert other is not None and other.hand is not None
            try:
                game.submit(p, _random_rows(rng, seat.hand[:12] + other.hand[:1]))
            except TableError as err:
                assert err.code == "not_your_cards"
        elif roll < 0.80:
            try:
                game.submit(p, _random_rows(rng, seat.hand))
            except TableError as err:
                assert err.code == "foul"
        else:
            game.submit_best(p)
    assert game.state.phase in LOBBY_PHASES
    result = game.state.result
    assert result is not None
    assert sum(p["delta"] + p["penalty"] for p in result["players"]) == 0
    assert [e.version for e in game.log] == list(range(1, len(game.log) + 1))
    return game.log


def test_no_seat_ever_sees_another_seats_cards_before_the_reveal() -> None:
    seen: set[str] = set()
    autos: set[object] = set()
    for seed in range(120):
        log = _one_random_round(seed)
        seen |= {e.type for e in log}
        autos |= {e.payload["auto"] for e in log if e.type == "submitted"}
    # The random play reached every kind of step.
    assert {"special_chosen", "draft_saved", "escaped", "reveal_special", "gun"} <= seen
    assert {None, "timeout", "hosted", "escaped"} <= autos


def test_the_leak_check_catches_a_leak() -> None:
    game = Game(2)
    game.start()
    other = [str(x) for x in game.hand(1)]
    leak = Event(game.state.version + 1, "hint", {"cards": other})
    bad = Transition(replace(game.state, version=leak.version), (leak,))
    with pytest.raises(AssertionError):
        Observer(2).check(bad, game.now)


def test_events_survive_json_storage() -> None:
    game = Game(2)
    game.start()
    for event in game.log:
        assert Event.from_dict(event.to_dict()) == event

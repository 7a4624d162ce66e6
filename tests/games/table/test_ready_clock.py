"""RULES.md §8.1: the Ready clock runs only while someone else waits on the player, and after a
round it starts once the settlement is on show (the end of the comparison's animation)."""

from __future__ import annotations

from dataclasses import replace

from games.table import machine
from games.table.state import Phase

from .helpers import Game


def with_bots(bots: int = 3, *, person: str = "p0") -> Game:
    """A person at seat 0 and ``bots`` bots beside it, between rounds (Play now's table)."""
    game = Game(0, capacity=bots + 1)
    game.do(machine.sit, player=person, position=0)
    for b in range(1, bots + 1):
        game.do(machine.sit, player=f"b{b}", position=b, bot=True)
    return game


def fire_all(game: Game) -> None:
    """Let every timer go off, one after another, until nothing is timed."""
    for _ in range(10):
        if game.state.deadline is None:
            return
        game.fire()
    raise AssertionError("the timers never end")


def play_round(game: Game) -> None:
    """Ready everyone, deal, submit the best for every seat, and let the comparison end."""
    game.start()
    for s in game.state.round_seats:
        game.submit_best(s.position)
    assert game.state.phase is Phase.COMPARING
    game.fire()
    assert game.state.result is not None


def test_8_1_a_person_alone_with_bots_waits_with_no_ready_clock() -> None:
    game = with_bots()
    assert game.seat(0).ready_deadline is None
    assert game.events("seated")[0].payload["ready_deadline"] is None
    # The bots' own clocks end: the table presses Ready for them, and the person stays.
    game.fire()
    assert all(game.seat(b).ready for b in (1, 2, 3))
    assert game.state.deadline is None and game.state.phase is Phase.WAITING
    game.wait(3600)
    assert [s.position for s in game.state.seats] == [0, 1, 2, 3]
    assert not game.events("left")
    game.do(machine.ready, position=0)
    assert game.state.awaiting_deal  # the round starts whenever the person is ready


def test_8_1_a_second_person_brings_the_clock_and_takes_it_away_again() -> None:
    game = with_bots(2)
    game.do(machine.leave, position=2)  # a bot's seat freed for a person
    game.wait(30)
    game.do(machine.sit, player="p1", position=2)
    assert game.seat(0).ready_deadline == game.now + 15
    assert game.seat(2).ready_deadline == game.now + 15
    clock = game.events("ready_clock")[-1].payload
    assert clock == {"position": 0, "ready_deadline": game.now + 15}
    game.wait(5)
    game.do(machine.leave, position=2)
    assert game.seat(0).ready_deadline is None  # alone with bots again: no clock to fear
    assert game.events("ready_clock")[-1].payload == {"position": 0, "ready_deadline": None}
    fire_all(game)
    assert game.state.deadline is None and game.state.seat(0) is not None


def test_8_1_a_person_alone_with_bots_who_disconnects_goes_at_the_ready_deadline() -> None:
    game = with_bots(1)
    game.do(machine.disconnect, position=0)
    assert game.seat(0).ready_deadline == game.now + 15
    game.do(machine.reconnect, position=0)
    assert game.seat(0).ready_deadline is None  # back before it: no clock again
    game.wait(10)
    game.do(machine.disconnect, position=0)
    assert game.seat(0).ready_deadline == game.now + 15  # a fresh clock from the drop
    fire_all(game)
    left = [e.payload for e in game.events("left")]
    assert {"position": 0, "player": "p0", "reason": "ready_timeout"} in left
    assert game.state.seats == ()  # the bots went with the last person


def test_8_1_after_a_round_with_bots_only_the_person_still_has_no_clock() -> None:
    game = with_bots()
    play_round(game)
    assert game.state.phase is Phase.SETTLED
    assert game.seat(0).ready_deadline is None
    phase = game.events("phase")[-1].payload
    assert phase["phase"] == "settled" and phase["ready_deadlines"]["0"] is None
    assert phase["ready_deadlines"]["1"] is not None  # the table presses Ready for the bots
    game.fire()  # the bots' Ready deadline
    assert game.state.phase is Phase.WAITING and game.state.deadline is None
    assert game.state.seat(0) is not None and not game.events("left")


def test_8_1_with_people_the_ready_clock_starts_when_the_settlement_is_shown() -> None:
    game = Game(2)
    game.start()
    game.submit_best(0)
    game.submit_best(1)
    shown = game.state.deadline  # the comparison's animation ends (compare.script's duration)
    assert shown is not None and shown > game.now
    phase = game.events("phase")[-1].payload
    assert shown == game.now + phase["duration_ms"] / 1000
    game.fire()
    assert game.now == shown
    assert game.seat(0).ready_deadline == shown + 15
    assert game.seat(1).ready_deadline == shown + 15
    assert game.events("phase")[-1].payload["ready_deadlines"] == {"0": shown + 15, "1": shown + 15}


def test_8_1_a_settlement_late_on_its_timer_still_gives_the_full_ready_time() -> None:
    game = Game(2)
    game.start()
    game.submit_best(0)
    game.submit_best(1)
    game.fire(late=2.5)  # the deadline poller came late: the settlement shows now
    assert game.seat(0).ready_deadline == game.now + 15


def test_8_1_the_last_round_of_a_series_alone_with_bots_still_sends_the_person_back() -> None:
    game = with_bots(1)
    game.state = replace(game.state, last_round=1)
    play_round(game)
    assert game.seat(0).ready_deadline == game.now + 15  # the table is over: a clock again
    game.fire()
    left = [e.payload["reason"] for e in game.events("left") if e.payload["position"] == 0]
    assert left == ["match_over"]

"""A duplicate match's lockstep table (games.live.duplicate): it starts only when the
match
starts it, holds its comparison until the match releases it, and ends after its last deal."""

from __future__ import annotations

from dataclasses import replace

import pytest

from games.table import machine
from games.table.errors import TableError
from games.table.perspective import snapshot_for
from games.table.state import Phase

from .helpers import Game


def lockstep(players: int = 2, last_round: int = 2) -> Game:
    game = Game(players)
    game.state = replace(game.state, lockstep=True, last_round=last_round)
    return game


def test_a_full_and_ready_table_waits_for_the_match_to_start_it() -> None:
    game = lockstep()
    game.do(machine.ready, position=0)
    assert not game.state.match_ready
    game.do(machine.ready, position=1)
    assert game.state.phase is Phase.WAITING and game.state.match_ready
    assert not game.state.awaiting_deal
    game.do(machine.start)
    assert game.state.awaiting_deal and game.state.round_no == 1
    assert game.events("round_start")


def test_a_table_with_a_free_seat_or_a_player_not_ready_cannot_be_started() -> None:
    game = lockstep(players=2)
    game.state = replace(game.state, capacity=3)
    game.ready_all()
    with pytest.raises(TableError) as refused:
        game.do(machine.start)
    assert refused.value.code == "match_not_ready"
    ordinary = Game(2)
    with pytest.raises(TableError) as refused:
        ordinary.do(machine.start)
    assert refused.value.code == "not_a_match"


def test_the_comparison_waits_for_the_release_once_every_hand_is_in() -> None:
    game = lockstep()
    game.ready_all()
    game.do(machine.start)
    game.deal()
    game.fire()
    game.submit_best(0)
    game.submit_best(1)
    state = game.state
    assert state.held and state.phase is Phase.ARRANGING and state.deadline is None
    assert [e.payload for e in game.events("held")] == [{"round_no": 1}]
    assert not state.revealed
    for position in (0, 1):  # no hand of another seat is shown while held
        snap = snapshot_for(state, position, now=game.now)
        other = next(s for s in snap["seats"] if s["position"] != position)
        assert other["revealed"] is None and snap["match"] == {"last_round": 2, "held": True}
    game.do(machine.release)
    assert game.state.phase is Phase.COMPARING and not game.state.held
    with pytest.raises(TableError) as refused:
        game.do(machine.release)
    assert refused.value.code == "not_held"


def test_after_the_last_deal_ready_is_refused_and_the_bots_go() -> None:
    game = lockstep(last_round=1)
    game.state = replace(
        game.state, seats=tuple(replace(s, bot=s.position == 1) for s in game.state.seats)
    )
    game.ready_all()
    game.do(machine.start)
    game.deal()
    game.fire()
    game.submit_best(0)
    game.submit_best(1)
    game.do(machine.release)
    game.fire()  # the comparison ends: settled
    assert game.state.phase is Phase.SETTLED and game.state.match_over
    assert [s.position for s in game.state.seats] == [0]  # the bot left
    assert game.events("match_over")
    with pytest.raises(TableError) as refused:
        game.do(machine.ready, position=0)
    assert refused.value.code == "match_over"


def test_a_table_of_bots_stays_between_the_deals_of_a_match() -> None:
    game = lockstep()
    game.state = replace(game.state, seats=tuple(replace(s, bot=True) for s in game.state.seats))
    game.do(machine.ready, position=0)
    assert len(game.state.seats) == 2  # an ordinary table's bots alone would leave

"""A reconnect that forgives: hosted hands, their grace and drafts (RULES.md §9), and who is an
escaper (§7.5) — the table machine alone, on a clock that moves only when told."""

from __future__ import annotations

from typing import Any

import pytest

from games.rules.cards import format_cards
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.scoring import Arranged
from games.table import machine
from games.table.events import Transition
from games.table.perspective import snapshot_for
from games.table.state import Phase
from games.table.suggest import suggestions

from .helpers import Game, arr, c, table_best

GRACE = DEFAULT_CONFIG.reconnect_grace_seconds
NO_SPECIALS = RuleConfig.from_dict({"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}})
# Seat 1's hand, and an arrangement of it that is foul-free but not the table's best.
HAND = c("AS AH KS KH QS QH JS JH 9C 7D 5C 3D 2S")
DRAFT = arr("9C 7D 5C", "QS QH JS JH 3D", "AS AH KS KH 2S")
SIX_PAIRS = c("2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD")


def draft_of(arranged: Arranged, **extra: Any) -> dict[str, Any]:
    """A draft as the table page saves it: its layout (hand area, rows)."""
    return {
        "hand": [],
        "front": format_cards(arranged.front),
        "middle": format_cards(arranged.middle),
        "back": format_cards(arranged.back),
        **extra,
    }


def arranging(players: int = 3, config: RuleConfig = DEFAULT_CONFIG, **deal: Any) -> Game:
    game = Game(players, config)
    game.start(**deal)
    assert game.state.phase is Phase.ARRANGING
    return game


def with_hand(players: int = 3) -> Game:
    return arranging(players, hands={1: HAND})


def stale(transition: Transition) -> bool:
    return transition.events == ()


def early_timeout(game: Game) -> Transition:
    """The table's timer asked before its time: nothing happens."""
    timer = Transition(game.state).timer
    assert timer is not None
    return machine.timeout(game.state, now=game.now, version=timer.version, phase=timer.phase)


def test_9_hosted_hand_waits_for_the_grace() -> None:
    game = with_hand()
    arrange_deadline = game.state.arrange_deadline
    assert arrange_deadline is not None
    game.wait(3)
    gone = game.now
    game.do(machine.disconnect, position=1)
    game.wait(2)
    game.submit_best(0)
    game.submit_best(2)
    # Everyone here is in: the hosted hand now waits for its grace, counted from the disconnect.
    assert game.seat(1).arrangement is None
    assert game.state.phase is Phase.ARRANGING
    assert game.state.deadline == gone + GRACE < arrange_deadline
    # The players' clock still shows the arrange deadline.
    assert game.state.phase_deadline == arrange_deadline
    assert snapshot_for(game.state, 0, now=game.now)["deadline"] == arrange_deadline
    assert stale(early_timeout(game))
    game.fire()
    assert game.now == gone + GRACE
    seat = game.seat(1)
    assert seat.auto == "hosted" and seat.arrangement == table_best(game, 1)
    assert game.state.phase is Phase.COMPARING


def test_9_grace_already_over_plays_the_hosted_hand_with_the_last_submission() -> None:
    game = with_hand()
    game.do(machine.disconnect, position=1)
    game.wait(GRACE + 1)
    game.submit_best(0)
    assert game.seat(1).arrangement is None  # seat 2 still arranges
    game.submit_best(2)
    assert game.seat(1).auto == "hosted"
    assert game.state.phase is Phase.COMPARING


def test_9_grace_never_past_the_deadline() -> None:
    game = with_hand()
    arrange_deadline = game.state.arrange_deadline
    assert arrange_deadline is not None
    game.now = arrange_deadline - 4
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    assert game.state.deadline == arrange_deadline
    game.fire()
    assert game.now == arrange_deadline
    assert game.seat(1).auto == "hosted" and game.state.phase is Phase.COMPARING


def test_9_complete_draft_is_played() -> None:
    game = with_hand()
    assert table_best(game, 1) != DRAFT
    game.do(machine.save_draft, position=1, draft=draft_of(DRAFT))
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    game.fire()
    seat = game.seat(1)
    assert seat.auto == "hosted" and seat.arrangement == DRAFT
    mine = game.events("arrangement")[-1]
    assert mine.audience == "p1" and mine.payload["auto"] == "hosted"
    assert [mine.payload[row] for row in ("front", "middle", "back")] == [
        format_cards(r) for r in DRAFT.rows()
    ]
    # The comparison reveals the draft's rows.
    front = next(e for e in game.events("reveal") if e.payload["row"] == "front")
    revealed = next(h for h in front.payload["hands"] if h["position"] == 1)
    assert revealed["cards"] == ["9C", "7D", "5C"]


@pytest.mark.parametrize(
    "draft",
    [
        pytest.param(draft_of(Arranged(DRAFT.front, DRAFT.middle, DRAFT.back[:4])), id="short"),
        pytest.param({"front": ["9C", "7D", "5C"]}, id="front only"),
        pytest.param(draft_of(arr("AS AH 2S", "9C 7D 5C 3D KS", "QS QH JS JH KH")), id="fouled"),
        pytest.param(draft_of(arr("9C 7D 4C", "QS QH JS JH 3D", "AS AH KS KH 2S")), id="foreign"),
        pytest.param({**draft_of(DRAFT), "front": ["9C", "7D", "9C"]}, id="twice"),
        pytest.param({"front": "9C 7D 5C", "middle": 5, "back": None}, id="not lists"),
        pytest.param({"front": ["9C", 7, "5C"], "middle": [], "back": []}, id="not cards"),
        pytest.param({"front": ["XX", "7D", "5C"], "middle": [], "back": []}, id="no such card"),
    ],
)
def test_9_incomplete_or_fouled_draft_plays_the_best(draft: dict[str, Any]) -> None:
    game = with_hand()
    game.do(machine.save_draft, position=1, draft=draft)
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    game.fire()
    seat = game.seat(1)
    assert seat.auto == "hosted" and seat.arrangement == table_best(game, 1)


def test_9_hosted_at_the_arrange_deadline_plays_the_draft() -> None:
    game = with_hand()
    game.do(machine.save_draft, position=1, draft=draft_of(DRAFT))
    game.do(machine.disconnect, position=1)
    game.fire()  # seats 0 and 2 never submit: the arrange deadline
    assert game.now == game.state.arrange_deadline
    assert game.seat(1).auto == "hosted" and game.seat(1).arrangement == DRAFT
    assert game.seat(0).auto == "timeout" and game.seat(0).arrangement == table_best(game, 0)


def test_6_a_connected_players_timeout_plays_the_best_whatever_its_draft() -> None:
    game = with_hand(2)
    game.do(machine.save_draft, position=1, draft=draft_of(DRAFT))
    game.submit_best(0)
    game.fire()
    seat = game.seat(1)
    assert seat.auto == "timeout" and seat.arrangement == table_best(game, 1)


@pytest.mark.parametrize(
    "config",
    [
        pytest.param(RuleConfig.from_dict({**NO_SPECIALS.to_dict(), "spare_cards": 3}), id="spare"),
        pytest.param(RuleConfig.from_dict({**NO_SPECIALS.to_dict(), "jokers": 2}), id="jokers"),
    ],
)
def test_9_a_draft_of_the_variant_decks_is_played(config: RuleConfig) -> None:
    game = Game(3, config)
    game.ready_all()
    positions = [s.position for s in game.state.round_seats]
    deck = list(config.deck.cards)
    rotated = deck[7:] + deck[:7]  # any full deck deals; no special is enabled
    game.do(machine.deal, deck=rotated, salt="salt-0001", start_seat=positions[0])
    game.fire()
    hand = game.hand(1)
    offered = suggestions(hand, config, game.state.table_opponents)
    last = offered[-1]
    assert len(offered) > 1  # the draft is not the table's best
    game.do(machine.save_draft, position=1, draft={k: last[k] for k in ("front", "middle", "back")})
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    game.fire()
    seat = game.seat(1)
    assert seat.auto == "hosted" and seat.arrangement is not None
    assert [format_cards(r) for r in seat.arrangement.rows()] == [
        last["front"],
        last["middle"],
        last["back"],
    ]


def test_9_back_before_grace_cancels_hosting() -> None:
    game = with_hand()
    arrange_deadline = game.state.arrange_deadline
    assert arrange_deadline is not None
    game.do(machine.save_draft, position=1, draft=draft_of(DRAFT, hand=["AS"]))
    game.wait(2)
    before = snapshot_for(game.state, 1, now=game.now)["you"]
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    grace = Transition(game.state).timer
    assert grace is not None and grace.at == game.now + GRACE
    game.wait(GRACE - 1)
    game.do(machine.reconnect, position=1)
    seat = game.seat(1)
    assert seat.connected and not seat.hosted and seat.arrangement is None
    # Its grace no longer times the table: the arrange deadline does, for it to play on.
    assert game.state.deadline == arrange_deadline
    late = machine.timeout(game.state, now=grace.at, version=grace.version, phase=grace.phase)
    assert stale(late)
    view = snapshot_for(game.state, 1, now=game.now)
    you = view["you"]
    assert view["phase"] == "arranging" and view["deadline"] == arrange_deadline
    assert you["remaining"] == pytest.approx(arrange_deadline - game.now)
    same = ("hand", "draft", "suggestions", "deadline", "arrangement", "special")
    assert {k: you[k] for k in same} == {k: before[k] for k in same}
    game.submit(1, DRAFT)
    assert game.seat(1).auto is None and game.state.phase is Phase.COMPARING


def test_9_a_second_disconnect_starts_a_new_grace() -> None:
    game = with_hand()
    game.do(machine.disconnect, position=1)
    game.wait(8)
    game.do(machine.reconnect, position=1)
    game.wait(1)
    again = game.now
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    assert game.state.deadline == again + GRACE
    game.fire()
    assert game.seat(1).auto == "hosted"


def test_9_every_hosted_hand_waits_for_its_own_grace() -> None:
    game = arranging(3)
    game.do(machine.disconnect, position=1)
    game.wait(4)
    game.do(machine.disconnect, position=2)
    game.submit_best(0)
    game.fire()
    assert game.seat(1).auto == "hosted" and game.seat(2).arrangement is None
    assert game.state.deadline == game.now + 4
    game.fire()
    assert game.seat(2).auto == "hosted" and game.state.phase is Phase.COMPARING


def test_9_nobody_connected_still_waits_for_the_grace() -> None:
    game = arranging(2)
    game.do(machine.disconnect, position=0)
    game.do(machine.disconnect, position=1)
    assert game.state.deadline == game.now + GRACE
    game.fire()
    assert {game.seat(0).auto, game.seat(1).auto} == {"hosted"}


def test_9_no_grace_plays_a_hosted_hand_with_the_last_submission() -> None:
    game = arranging(2, RuleConfig(reconnect_grace_seconds=0))
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    assert game.seat(1).auto == "hosted" and game.state.phase is Phase.COMPARING


def test_9_a_hosted_hand_waits_for_a_pending_special_choice_then_its_grace() -> None:
    game = Game(3)
    game.start(hands={2: SIX_PAIRS})
    assert game.state.phase is Phase.SPECIAL_CHOICE
    choice_deadline = game.state.deadline
    game.wait(1)
    game.do(machine.disconnect, position=2)  # asked about its special, and gone
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    assert game.state.deadline == choice_deadline  # the choice is still the table's timer
    game.fire()
    assert game.seat(2).declared and game.seat(2).auto == "hosted"
    assert game.state.phase is Phase.ARRANGING
    assert game.seat(1).arrangement is None  # its grace ends a second after the choice's
    assert game.state.deadline == choice_deadline + 1
    game.fire()
    assert game.seat(1).auto == "hosted" and game.state.phase is Phase.COMPARING


def test_9_back_after_the_comparison_started_gets_the_settlement_and_ready() -> None:
    game = with_hand(2)
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.fire()  # the grace: the hosted hand is played, the comparison starts
    game.do(machine.reconnect, position=1)
    view = snapshot_for(game.state, 1, now=game.now)
    assert view["phase"] == "comparing" and view["seats"][1]["revealed"] is not None
    game.fire(game.rich())
    assert game.events("escaped") == []
    view = snapshot_for(game.state, 1, now=game.now)
    assert view["phase"] == "settled" and view["result"] is not None
    assert view["you"]["deadline"] == game.seat(1).ready_deadline
    assert machine.can_ready(game.state, position=1)


# -- §7.5 who escapes --------------------------------------------------------------------------


def test_7_5_hand_in_then_disconnect_is_not_an_escape() -> None:
    game = with_hand()
    game.submit(1, DRAFT)
    game.do(machine.disconnect, position=1)
    assert not game.seat(1).hosted
    game.submit_best(0)
    game.submit_best(2)
    assert game.state.phase is Phase.COMPARING  # nothing waits for a hand already in
    game.fire(game.rich())
    assert game.events("escaped") == []
    assert [p["penalty"] for p in game.result()["players"]] == [0, 0, 0]


def test_7_5_declared_special_then_disconnect_is_not_an_escape() -> None:
    game = Game(2)
    game.start(hands={1: SIX_PAIRS})
    game.do(machine.choose_special, position=1, play_special=True)
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.fire(game.rich())
    assert game.events("escaped") == []
    assert game.result()["players"][1]["penalty"] == 0


def test_7_5_leave_after_submit_no_penalty() -> None:
    game = with_hand()
    game.submit(1, DRAFT)
    game.do(machine.leave, position=1)
    assert game.events("escaped") == [] and game.events("leaving")[-1].payload == {"position": 1}
    game.submit_best(0)
    game.submit_best(2)
    game.fire(game.rich())
    assert [p["penalty"] for p in game.result()["players"]] == [0, 0, 0]
    assert game.state.seat(1) is None


def test_7_5_a_hosted_hand_not_back_by_settlement_is_an_escape_even_with_its_draft() -> None:
    game = with_hand()
    game.do(machine.save_draft, position=1, draft=draft_of(DRAFT))
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    game.fire()
    assert game.seat(1).arrangement == DRAFT
    game.fire(game.rich())
    assert [e.payload for e in game.events("escaped")] == [
        {"position": 1, "reason": "disconnected"}
    ]
    assert game.result()["players"][1]["penalty"] == 5 * 100


def test_7_5_leave_while_hosted_is_an_escape_at_once() -> None:
    game = with_hand()
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.submit_best(2)
    game.do(machine.leave, position=1)  # e.g. from the room list, during its grace
    seat = game.seat(1)
    assert seat.escaped and seat.auto == "escaped" and game.state.phase is Phase.COMPARING


def test_9_the_same_commands_at_the_same_times_give_the_same_events() -> None:
    def play() -> list[dict[str, Any]]:
        game = with_hand()
        game.do(machine.save_draft, position=1, draft=draft_of(DRAFT))
        game.wait(3)
        game.do(machine.disconnect, position=1)
        game.submit_best(0)
        game.submit_best(2)
        game.fire()
        game.fire(game.rich())
        return [e.to_dict() for e in game.log]

    assert play() == play()

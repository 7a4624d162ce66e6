"""The table's commands and timeouts: RULES.md §5.1, §8 (table flow) and §9 (hosting)."""

from __future__ import annotations

import hashlib
import json

import pytest

from games.rules.advice import special_advice
from games.rules.arrange import arrange, best_arrangement
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.hands import ROWS, evaluate
from games.rules.specials import detect_special
from games.table import machine
from games.table.compare import compare_order
from games.table.deck import deal_hands, verify_commitment
from games.table.errors import StaleTimeout, TableError
from games.table.events import Transition
from games.table.perspective import delivered, snapshot_for
from games.table.state import Phase

from .helpers import RICH, Game, arr, c, plain_deck, table_best

NO_SPECIALS = RuleConfig.from_dict({"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}})
SIX_PAIRS = c("2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD")

# RULES.md §11 example 1: A guns B, +11 / -11 water.
EX1_A = arr("QS QC 3D", "8C 8D 8H 2S 2C", "9H TH JH QH KH")
EX1_B = arr("AS KD 4C", "AC AD 3S 3H 4H", "5S 6D 7C 8S 9D")
# Every row ranks A > B > C > D (a home run for A with 3 or 4 players).
HR_A = arr("AS AH 2C", "KS KH KD 3C 3D", "9C TC JC QC KC")
HR_B = arr("QS QH 2D", "JS JH JD 4C 4D", "8S 8H 8D 8C 2S")
HR_C = arr("TS TD 3S", "6S 6H 6D 5C 5D", "9S 9D 9H 7S 7H")
HR_D = arr("QD 5S 4S", "AD AC 7D 7C 6C", "TH 5H 4H 3H 2H")


def arranging(players: int = 2, config: RuleConfig = DEFAULT_CONFIG, **deal: object) -> Game:
    game = Game(players, config)
    game.start(**deal)
    return game


def settle(game: Game, balances: dict[str, int] | None = None) -> Transition:
    assert game.state.phase is Phase.COMPARING
    return game.fire(balances or game.rich())


def conserved(result: dict[str, object]) -> bool:
    players = result["players"]
    assert isinstance(players, list)
    return sum(p["delta"] + p["penalty"] for p in players) == 0


# -- §8.1 ready --------------------------------------------------------------------------------


def test_8_1_round_starts_when_every_seated_player_is_ready() -> None:
    game = Game(3)
    game.do(machine.ready, position=0)
    game.do(machine.ready, position=2)
    assert game.state.phase is Phase.WAITING
    game.do(machine.ready, position=1)
    assert game.state.phase is Phase.DEALING and game.state.awaiting_deal
    assert game.state.round_no == 1
    assert game.types()[-2:] == ["round_start", "phase"]
    assert game.events("round_start")[0].payload["positions"] == [0, 1, 2]
    assert game.state.deadline is None  # nothing is timed until the deck arrives


def test_8_1_one_player_alone_never_starts() -> None:
    game = Game(1)
    game.do(machine.ready, position=0)
    assert game.state.phase is Phase.WAITING
    assert game.state.deadline is None


def test_8_1_ready_deadline_starts_when_a_player_sits_beside_another() -> None:
    game = Game(0, capacity=3)
    game.do(machine.sit, player="a", position=1)
    assert game.seat(1).ready_deadline is None  # nobody waits on a player alone
    assert game.state.deadline is None
    game.wait(5)
    game.do(machine.sit, player="b", position=0)
    # Both clocks start when the second person sits down.
    assert game.seat(1).ready_deadline == game.now + 15
    assert game.seat(0).ready_deadline == game.now + 15
    assert game.state.deadline == game.now + 15
    clock = game.events("ready_clock")[-1].payload
    assert clock == {"position": 1, "ready_deadline": game.now + 15}
    game.wait(5)
    game.do(machine.sit, player="c", position=2)
    assert game.state.deadline == game.now - 5 + 15  # the earliest pending Ready


def test_8_1_ready_timeout_returns_the_player_to_the_room_list() -> None:
    game = Game(3)
    game.do(machine.ready, position=0)
    game.do(machine.ready, position=1)
    game.fire()
    assert [s.position for s in game.state.seats] == [0, 1]
    (left,) = game.events("left")
    assert left.payload == {"position": 2, "player": "p2", "reason": "ready_timeout"}
    # The two who were ready are all the table now: the round starts.
    assert game.state.awaiting_deal


def test_8_1_ready_timeout_keeps_a_lone_ready_player_waiting() -> None:
    game = Game(2)
    game.do(machine.ready, position=0)
    game.fire()
    assert [s.player for s in game.state.seats] == ["p0"]
    assert game.state.phase is Phase.WAITING and game.state.deadline is None


def test_8_1_sit_is_refused_with_a_reason() -> None:
    game = Game(2, capacity=3)
    with pytest.raises(TableError) as taken:
        machine.verify_sit(game.state, player="x", position=1)
    assert taken.value.code == "seat_taken"
    with pytest.raises(TableError) as twice:
        machine.verify_sit(game.state, player="p0", position=2)
    assert twice.value.code == "already_seated"
    with pytest.raises(TableError) as outside:
        machine.verify_sit(game.state, player="x", position=3)
    assert outside.value.code == "no_such_seat"
    assert machine.can_sit(game.state, player="x", position=2)
    assert not machine.can_sit(game.state, player="x", position=0)


def test_8_1_ready_twice_or_during_a_round_is_refused() -> None:
    game = Game(2)
    game.do(machine.ready, position=0)
    with pytest.raises(TableError, match="already ready"):
        game.do(machine.ready, position=0)
    game.do(machine.ready, position=1)
    with pytest.raises(TableError) as err:
        machine.verify_ready(game.state, position=0)
    assert err.value.code == "wrong_phase"


def test_8_1_leaving_between_rounds_can_start_the_round_for_the_others() -> None:
    game = Game(3)
    game.do(machine.ready, position=0)
    game.do(machine.ready, position=1)
    game.do(machine.leave, position=2)
    assert game.events("left")[0].payload["reason"] == "left"
    assert game.state.awaiting_deal


def test_8_1_a_player_sitting_down_during_a_round_waits_for_the_next() -> None:
    game = Game(2, capacity=3)
    game.start()
    game.do(machine.sit, player="late", position=2)
    late = game.state.seat(2)
    assert late is not None and not late.in_round and late.ready_deadline is None
    game.submit_best(0)
    game.submit_best(1)
    settle(game)
    assert game.seat(2).ready_deadline == game.now + 15
    with pytest.raises(TableError) as err:
        machine.verify_submit(game.state, position=2, front=(), middle=(), back=())
    assert err.value.code == "wrong_phase"


def test_8_1_rules_change_only_between_rounds_and_a_round_keeps_its_own() -> None:
    game = Game(2)
    fast = RuleConfig(arrange_seconds=5)
    game.do(machine.set_config, config=fast)
    game.start()
    assert game.state.arrange_deadline == game.now + 5
    with pytest.raises(TableError) as err:
        machine.verify_set_config(game.state, config=DEFAULT_CONFIG)
    assert err.value.code == "wrong_phase"


# -- §8.2 the deal and the shuffle commitment --------------------------------------------------


def test_8_2_deal_goes_counter_clockwise_from_the_starting_seat() -> None:
    game = Game(3)
    game.ready_all()
    deck = plain_deck(3, 5)
    game.deal(deck, start_seat=1)
    (deal,) = game.events("deal")
    assert deal.payload["order"] == [1, 2, 0]
    assert deal.payload["start_seat"] == 1
    assert game.hand(1)[:2] == (deck[0], deck[3])
    assert game.hand(2)[0] == deck[1] and game.hand(0)[0] == deck[2]
    hands = {int(e.audience[1:]): e.payload for e in game.events("hand")}
    assert set(hands) == {0, 1, 2}
    assert hands[2]["cards"] == [str(x) for x in game.hand(2)]
    # Sequential pace: a round of cards every 120 ms, one player at a time (40 ms apart for
    # 3 players): card k of the 2nd seat dealt lands at (3k + 1) × 40 ms.
    assert hands[2]["offsets_ms"][:3] == [40, 160, 280]
    assert hands[1]["offsets_ms"][:2] == [0, 120] and hands[0]["offsets_ms"][-1] == 1520
    assert deal.payload["duration_ms"] == 13 * 120
    assert game.state.deadline == pytest.approx(game.now + 13 * 0.120)
    # The log holds no suggestions: they are added when the hand is sent (views.delivered).
    assert all("suggestions" not in hand for hand in hands.values())
    sent = {int(e.audience[1:]): delivered(e, game.state).payload for e in game.events("hand")}
    assert len(sent[0]["suggestions"]) >= 1
    assert {k: v for k, v in sent[0].items() if k != "suggestions"} == hands[0]


def test_8_2_a_bots_seat_is_dealt_no_suggestions() -> None:
    """A bot works out its own play (games.live.bots): the engine's suggestions, a quarter of a
    deal's CPU each, go only to the people; the bot's hand, special and advice are as ever."""
    game = Game(2, capacity=3)
    game.do(machine.sit, player="b2", position=2, bot=True)
    game.ready_all()
    deck = plain_deck(3, 9)
    game.deal(deck, start_seat=0)
    hands = {int(e.audience[1:]): delivered(e, game.state).payload for e in game.events("hand")}
    assert set(hands) == {0, 1, 2}
    assert hands[2]["suggestions"] == [] and hands[2]["cards"] == [str(x) for x in game.hand(2)]
    for person in (0, 1):
        opponents = game.state.table_opponents
        best = arrange(game.hand(person), DEFAULT_CONFIG, opponents=opponents).suggestions
        assert [s["expected_water"] for s in hands[person]["suggestions"]] == [
            s.expected_water for s in best
        ]
    assert snapshot_for(game.state, 2, now=game.now)["you"]["suggestions"] == []
    mine = snapshot_for(game.state, 0, now=game.now)["you"]["suggestions"]
    assert mine == hands[0]["suggestions"]


def test_8_2_simultaneous_deal_gives_everyone_a_card_at_once() -> None:
    game = Game(4, RuleConfig(deal_mode="simultaneous", deal_interval_ms=100))
    game.ready_all()
    game.deal(plain_deck(4, 2), start_seat=3)
    offsets = {int(e.audience[1:]): e.payload["offsets_ms"] for e in game.events("hand")}
    assert all(o == [k * 100 for k in range(13)] for o in offsets.values())
    assert game.events("deal")[0].payload["duration_ms"] == 1300


def test_8_2_commitment_is_published_first_and_verifies_after_settlement() -> None:
    game = Game(2)
    game.ready_all()
    deck = plain_deck(2, 3)
    game.deal(deck, salt="9f2c-salt")
    text = " ".join(str(card) for card in deck)
    expected = hashlib.sha256(f"{text}:9f2c-salt".encode()).hexdigest()
    (deal,) = game.events("deal")
    assert deal.payload["commitment"] == expected == game.state.commitment
    game.fire()
    game.submit_best(0)
    game.submit_best(1)
    settle(game)
    (settled,) = game.events("settled")
    revealed, salt = settled.payload["deck"], settled.payload["salt"]
    assert verify_commitment(revealed, salt, deal.payload["commitment"])
    assert not verify_commitment(revealed, salt + "x", deal.payload["commitment"])
    # Replaying the deal from the revealed deck gives the hands that were played.
    replay = deal_hands(c(" ".join(revealed)), deal.payload["order"])
    assert replay[0] == game.hand(0) and replay[1] == game.hand(1)
    # Before the settlement, the deck was in no event at all.
    before = [e for e in game.log if e.version < settled.version]
    assert all("deck" not in e.payload for e in before)


def test_8_2_deal_is_refused_with_a_reason() -> None:
    game = Game(2)
    game.ready_all()
    deck = plain_deck(2, 1)
    cases = [
        ({"deck": deck[:51], "salt": "s", "start_seat": 0}, "bad_deck"),
        ({"deck": (deck[0],) + deck[:51], "salt": "s", "start_seat": 0}, "bad_deck"),
        ({"deck": deck, "salt": "", "start_seat": 0}, "bad_salt"),
        ({"deck": deck, "salt": "s", "start_seat": 3}, "bad_start_seat"),
    ]
    for kwargs, code in cases:
        with pytest.raises(TableError) as err:
            machine.verify_deal(game.state, **kwargs)  # type: ignore[arg-type]
        assert err.value.code == code
    game.deal(deck)
    assert not machine.can_deal(game.state, deck=deck, salt="s", start_seat=0)


# -- full rounds -------------------------------------------------------------------------------


@pytest.mark.parametrize("players", [2, 3, 4])
def test_8_full_round(players: int) -> None:
    game = Game(players)
    game.ready_all()
    game.deal(plain_deck(players, 11 + players), start_seat=players - 1)
    assert game.state.phase is Phase.DEALING
    game.fire()
    assert game.state.phase is Phase.ARRANGING
    assert game.state.deadline == game.now + 30
    hands = {int(e.audience[1:]): delivered(e, game.state).payload for e in game.events("hand")}
    for p in range(players):
        first = hands[p]["suggestions"][0]
        game.submit(p, arr(*(" ".join(first[r]) for r in ROWS)))
    assert game.state.phase is Phase.COMPARING
    balances = {f"p{p}": 50_000 * (p + 1) for p in range(players)}
    settle(game, balances)
    state = game.state
    assert state.phase is Phase.SETTLED
    result = state.result
    assert result is not None and conserved(result)
    assert [p["position"] for p in result["players"]] == list(range(players))
    assert len(result["pairs"]) == players * (players - 1) // 2
    assert all(s.ready_deadline == game.now + 15 and not s.ready for s in state.seats)
    # Next round: everyone presses Ready again.
    game.ready_all()
    assert game.state.awaiting_deal and game.state.round_no == 2
    assert game.state.result is None and game.state.deck is None
    assert all(s.hand is None and s.arrangement is None for s in game.state.seats)


def test_8_settled_table_goes_back_to_waiting_at_the_ready_deadline() -> None:
    game = arranging(3)
    for p in range(3):
        game.submit_best(p)
    settle(game)
    game.do(machine.ready, position=0)
    game.fire()
    assert game.state.phase is Phase.WAITING
    assert [s.position for s in game.state.seats] == [0]
    assert game.state.result is not None  # the last result stays on show


# -- §5.1 special hands ------------------------------------------------------------------------


def test_5_1_special_holder_is_asked_and_yes_plays_the_special() -> None:
    game = Game(3)
    game.start(hands={1: SIX_PAIRS})
    state = game.state
    assert state.phase is Phase.SPECIAL_CHOICE
    assert state.deadline == game.now + 10 and state.arrange_deadline == game.now + 30
    assert game.seat(1).special == "six_pairs"
    assert {int(e.audience[1:]): e.payload["special"] for e in game.events("hand")} == {
        0: None,
        1: "six_pairs",
        2: None,
    }
    # The others arrange meanwhile.
    game.submit_best(0)
    game.do(machine.choose_special, position=1, play_special=True)
    assert game.state.phase is Phase.ARRANGING
    game.submit_best(2)
    assert game.state.phase is Phase.COMPARING
    types = [e.type for e in game.log if e.version > game.events("phase")[-1].version]
    assert types[-1] == "reveal_special"
    special = game.events("reveal_special")[0].payload
    assert special["position"] == 1 and special["special"] == "six_pairs"
    assert sorted(special["cards"]) == sorted(str(x) for x in SIX_PAIRS)
    assert all(h["position"] != 1 for e in game.events("reveal") for h in e.payload["hands"])
    settle(game)
    result = game.state.result
    assert result is not None
    assert [p["special"] for p in result["players"]] == [None, "six_pairs", None]
    assert result["players"][1]["water"] == 8


def test_5_1_the_special_holder_alone_is_advised_against_this_rounds_opponents() -> None:
    game = Game(3)
    game.start(hands={1: SIX_PAIRS})
    hands = {int(e.audience[1:]): e.payload for e in game.events("hand")}
    expected = special_advice(SIX_PAIRS, game.state.config, "six_pairs", 2).to_json()
    assert hands[1]["advice"] == expected and expected["opponents"] == 2
    assert "advice" not in hands[0] and "advice" not in hands[2]
    # A reconnect restores it; nobody else's snapshot holds it.
    assert snapshot_for(game.state, 1, now=game.now)["you"]["advice"] == expected
    assert snapshot_for(game.state, 0, now=game.now)["you"]["advice"] is None
    assert "advice" not in json.dumps(snapshot_for(game.state, None, now=game.now))
    # Once answered and compared, it is no longer offered.
    game.do(machine.choose_special, position=1, play_special=False)
    game.submit_best(0)
    game.submit_best(1)
    game.submit_best(2)
    assert snapshot_for(game.state, 1, now=game.now)["you"]["advice"] is None


def test_5_1_no_means_arrange_time_minus_the_time_spent_choosing() -> None:
    game = Game(2)
    game.start(hands={0: SIX_PAIRS})
    started = game.now
    game.wait(4)
    with pytest.raises(TableError) as first:
        game.submit_best(0)
    assert first.value.code == "choose_special_first"
    game.do(machine.choose_special, position=0, play_special=False)
    assert game.state.phase is Phase.ARRANGING
    you = snapshot_for(game.state, 0, now=game.now)["you"]
    assert you["remaining"] == pytest.approx(30 - 4)
    assert you["deadline"] == started + 30
    assert game.events("special_chosen")[0].payload["deadline"] == started + 30
    game.submit_best(0)
    game.submit_best(1)
    settle(game)
    assert game.result()["players"][0]["special"] is None


def test_5_1_choice_timeout_counts_as_yes() -> None:
    game = Game(2)
    game.start(hands={1: SIX_PAIRS})
    game.submit_best(0)
    game.fire()
    seat = game.state.seat(1)
    assert seat is not None and seat.declared and seat.auto == "timeout"
    assert game.state.phase is Phase.COMPARING
    chosen = game.events("special_chosen")[0]
    assert chosen.audience == "p1" and chosen.payload["auto"] == "timeout"


def test_5_1_choice_is_refused_with_a_reason() -> None:
    game = Game(2)
    game.start(hands={1: SIX_PAIRS})
    with pytest.raises(TableError) as none:
        machine.verify_choose_special(game.state, position=0, play_special=True)
    assert none.value.code == "no_special"
    game.do(machine.choose_special, position=1, play_special=False)
    with pytest.raises(TableError) as later:
        machine.verify_choose_special(game.state, position=1, play_special=True)
    assert later.value.code == "wrong_phase"


def test_5_1_choice_longer_than_arranging_ends_both_at_once() -> None:
    config = RuleConfig(special_choice_seconds=40, arrange_seconds=30)
    game = Game(2, config)
    game.start(hands={1: SIX_PAIRS})
    assert game.state.deadline == game.state.arrange_deadline
    game.fire()
    assert game.state.phase is Phase.COMPARING
    assert game.seat(0).auto == "timeout"


# -- §4, §6 arranging --------------------------------------------------------------------------


def test_4_fouled_submission_is_refused_then_a_valid_one_accepted() -> None:
    game = arranging(2)
    best = best_arrangement(game.hand(0))
    fouled = type(best)(best.front, best.back, best.middle)  # middle above back
    if not evaluate(best.middle).compare(evaluate(best.back)):
        pytest.skip("equal rows")  # pragma: no cover
    before = game.state
    with pytest.raises(TableError) as err:
        game.submit(0, fouled)
    assert err.value.code == "foul"
    assert err.value.details["rows"] == ["middle", "back"]
    assert "middle" in err.value.message
    assert game.state is before
    game.submit(0, best)
    assert game.seat(0).arrangement == best


def test_6_submission_with_someone_elses_cards_is_refused() -> None:
    game = arranging(2)
    mine, theirs = game.hand(0), game.hand(1)
    rows = best_arrangement(mine)
    swapped = (theirs[0],) + rows.front[1:]
    with pytest.raises(TableError) as err:
        game.submit(0, type(rows)(swapped, rows.middle, rows.back))
    assert err.value.code == "not_your_cards"
    assert err.value.details["cards"] == [str(theirs[0])]


def test_6_submission_with_a_wrong_row_size_or_a_repeated_card_is_refused() -> None:
    game = arranging(2)
    rows = best_arrangement(game.hand(0))
    with pytest.raises(TableError) as size:
        game.submit(0, type(rows)(rows.front + rows.middle[:1], rows.middle[1:], rows.back))
    assert size.value.code == "wrong_count"
    with pytest.raises(TableError) as dup:
        game.submit(0, type(rows)(rows.front[:2] + rows.back[:1], rows.middle, rows.back))
    assert dup.value.code == "duplicate_card"


def test_6_a_second_submission_is_refused() -> None:
    game = arranging(3)
    game.submit_best(0)
    with pytest.raises(TableError) as err:
        game.submit_best(0)
    assert err.value.code == "already_submitted"


def test_6_arrange_timeout_submits_the_best_arrangement_marked_timeout() -> None:
    game = arranging(2)
    game.submit_best(0)
    game.fire()
    seat = game.state.seat(1)
    assert seat is not None
    assert seat.arrangement == table_best(game, 1)
    assert seat.auto == "timeout"
    assert game.state.phase is Phase.COMPARING
    private = [e for e in game.events("arrangement") if e.audience == "p1"]
    assert private[0].payload["auto"] == "timeout"
    assert game.events("submitted")[-1].payload == {"position": 1, "auto": "timeout"}


def test_6_best_and_the_suggestions_count_the_opponents_the_table_could_hold() -> None:
    for capacity in (2, 3, 4):
        game = Game(2, capacity=capacity)
        game.start()
        assert game.state.table_opponents == capacity - 1
        hands = {int(e.audience[1:]): delivered(e, game.state).payload for e in game.events("hand")}
        model = arrange(game.hand(0), game.state.config, opponents=capacity - 1)
        assert [s["expected_water"] for s in hands[0]["suggestions"]] == [
            s.expected_water for s in model.suggestions
        ]
        view = snapshot_for(game.state, 0, now=game.now)["you"]
        assert view["suggestions"] == hands[0]["suggestions"]
        game.submit_best(0)
        game.fire()  # seat 1 times out: the best against the same opponents
        assert game.state.seat(1).arrangement == table_best(game, 1)  # type: ignore[union-attr]


# -- timeouts only ask -------------------------------------------------------------------------


def test_duplicated_timeout_does_nothing() -> None:
    game = arranging(2)
    timer = Transition(game.state).timer
    assert timer is not None
    game.fire()
    again = machine.timeout(game.state, now=game.now, version=timer.version, phase=timer.phase)
    assert again.events == () and again.state is game.state


def test_late_timeout_after_the_phase_moved_on_does_nothing() -> None:
    game = arranging(2)
    timer = Transition(game.state).timer
    assert timer is not None and timer.phase is Phase.ARRANGING
    game.submit_best(0)
    game.submit_best(1)
    state = game.state
    late = machine.timeout(state, now=timer.at + 60, version=timer.version, phase=timer.phase)
    assert late.events == () and late.state is state
    with pytest.raises(StaleTimeout) as err:
        machine.verify_timeout(state, now=timer.at + 60, version=timer.version, phase=timer.phase)
    assert err.value.code == "stale_timeout"


def test_timeout_for_an_older_version_of_the_same_phase_does_nothing() -> None:
    game = arranging(3)
    timer = Transition(game.state).timer
    assert timer is not None
    game.submit_best(0)  # same phase, newer version
    stale = machine.timeout(game.state, now=timer.at, version=timer.version, phase=timer.phase)
    assert stale.events == ()
    assert game.seat(1).arrangement is None


def test_early_timeout_does_nothing() -> None:
    game = arranging(2)
    timer = Transition(game.state).timer
    assert timer is not None
    early = machine.timeout(game.state, now=timer.at - 1, version=timer.version, phase=timer.phase)
    assert early.events == ()
    with pytest.raises(StaleTimeout) as err:
        machine.verify_timeout(
            game.state, now=timer.at - 1, version=timer.version, phase=timer.phase
        )
    assert err.value.code == "early_timeout"
    assert not machine.can_timeout(
        game.state, now=timer.at - 1, version=timer.version, phase=timer.phase
    )


def test_settling_needs_every_players_balance() -> None:
    game = arranging(2)
    game.submit_best(0)
    game.submit_best(1)
    timer = Transition(game.state).timer
    assert timer is not None and timer.phase is Phase.COMPARING
    kwargs = {"now": timer.at, "version": timer.version, "phase": timer.phase}
    with pytest.raises(TableError) as missing:
        machine.timeout(game.state, **kwargs)  # type: ignore[arg-type]
    assert missing.value.code == "balances_required"
    with pytest.raises(TableError) as partial:
        machine.timeout(game.state, balances={"p0": 5}, **kwargs)  # type: ignore[arg-type]
    assert partial.value.code == "bad_balances"


# -- §9 hosting, disconnects, escapes ----------------------------------------------------------


def test_9_hosted_hand_is_played_once_the_others_are_in_and_the_grace_ends() -> None:
    game = arranging(3)
    game.do(machine.disconnect, position=2)
    assert game.seat(2).hosted
    game.submit_best(0)
    assert game.seat(2).arrangement is None
    game.submit_best(1)
    assert game.seat(2).arrangement is None and game.state.phase is Phase.ARRANGING
    mark = game.state.version
    game.fire()  # the grace, counted from the disconnect
    seat = game.state.seat(2)
    assert seat is not None
    assert seat.auto == "hosted" and seat.arrangement == table_best(game, 2)
    assert game.state.phase is Phase.COMPARING
    assert game.types(mark)[:3] == ["arrangement", "submitted", "phase"]


def test_9_disconnecting_last_is_auto_submitted_when_the_grace_ends() -> None:
    game = arranging(2)
    game.submit_best(0)
    game.do(machine.disconnect, position=1)
    assert game.seat(1).auto is None
    assert game.state.deadline == game.now + DEFAULT_CONFIG.reconnect_grace_seconds
    game.fire()
    assert game.seat(1).auto == "hosted"
    assert game.state.phase is Phase.COMPARING


def test_9_reconnect_restores_remaining_time_cards_and_draft() -> None:
    game = arranging(3)
    started = game.now
    hand = game.hand(1)
    draft = {"front": [str(x) for x in hand[:3]], "note": "pair of nines in back?"}
    game.wait(3)
    game.do(machine.save_draft, position=1, draft=draft)
    before = snapshot_for(game.state, 1, now=game.now)["you"]
    game.do(machine.disconnect, position=1)
    game.wait(5)
    game.do(machine.reconnect, position=1)
    seat = game.state.seat(1)
    assert seat is not None and seat.connected and not seat.hosted
    view = snapshot_for(game.state, 1, now=game.now)
    you = view["you"]
    assert view["phase"] == "arranging"
    assert you["hand"] == [str(x) for x in hand]
    assert you["draft"] == draft
    assert you["remaining"] == pytest.approx(30 - 8)
    assert {k: v for k, v in you.items() if k != "remaining"} == {
        k: v for k, v in before.items() if k != "remaining"
    }
    assert you["deadline"] == started + 30
    # No longer hosted: the others submitting does not play for it.
    game.submit_best(0)
    game.submit_best(2)
    assert game.seat(1).arrangement is None
    assert game.state.phase is Phase.ARRANGING


def test_9_not_back_by_settlement_is_an_escape_and_pays_the_penalty() -> None:
    game = arranging(2)
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.fire()  # the grace ends
    assert game.state.phase is Phase.COMPARING
    settle(game, {"p0": 100_000, "p1": 100_000})
    escaped = game.events("escaped")
    assert [e.payload for e in escaped] == [{"position": 1, "reason": "disconnected"}]
    result = game.state.result
    assert result is not None and conserved(result)
    assert result["players"][1]["escaped"] and result["players"][1]["penalty"] == 5 * 100
    assert game.state.seat(1) is not None  # still seated; the Ready timeout removes it


def test_9_back_during_the_comparison_is_no_escape() -> None:
    game = arranging(2)
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    game.fire()  # the grace ends: the hand is played for it
    assert game.state.phase is Phase.COMPARING
    game.do(machine.reconnect, position=1)
    settle(game)
    assert game.events("escaped") == []
    assert game.result()["players"][1]["penalty"] == 0


def test_9_leaving_mid_round_is_an_escape_played_for_at_once_and_removed_after() -> None:
    game = arranging(3)
    game.do(machine.leave, position=2)
    seat = game.state.seat(2)
    assert seat is not None and seat.escaped and seat.left and seat.in_round
    assert seat.auto == "escaped" and seat.arrangement == table_best(game, 2)
    with pytest.raises(TableError) as err:
        machine.verify_leave(game.state, position=2)
    assert err.value.code == "already_left"
    assert not machine.can_sit(game.state, player="new", position=2)
    game.submit_best(0)
    game.submit_best(1)
    settle(game, {"p0": 100_000, "p1": 100_000, "p2": 100_000})
    result = game.state.result
    assert result is not None and conserved(result)
    escaper = result["players"][2]
    assert escaper["escaped"] and escaper["penalty"] == 5 * 100
    assert [p["penalty"] for p in result["players"][:2]] == [0, 0]
    assert game.events("left")[-1].payload == {"position": 2, "player": "p2", "reason": "escaped"}
    assert game.state.seat(2) is None
    assert machine.can_sit(game.state, player="new", position=2)


def test_9_leaving_during_the_deal_is_an_escape_too() -> None:
    game = Game(2)
    game.ready_all()
    game.deal()
    game.do(machine.leave, position=0)
    game.fire()  # the deal ends: the escaper is played for, the other arranges
    assert game.seat(0).auto == "escaped"
    assert game.state.phase is Phase.ARRANGING


def test_9_escaping_special_holder_plays_the_special() -> None:
    game = Game(2)
    game.start(hands={0: SIX_PAIRS})
    game.do(machine.leave, position=0)
    seat = game.state.seat(0)
    assert seat is not None and seat.declared and seat.auto == "escaped"
    assert game.state.phase is Phase.ARRANGING


def test_9_disconnected_special_holder_is_yes_when_the_choice_times_out() -> None:
    game = Game(2)
    game.start(hands={1: SIX_PAIRS})
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    assert game.state.phase is Phase.SPECIAL_CHOICE  # the choice still waits for its timeout
    game.fire()
    seat = game.state.seat(1)
    assert seat is not None and seat.declared and seat.auto == "hosted"
    assert game.state.phase is Phase.COMPARING


def test_9_an_escaped_or_absent_seat_cannot_act() -> None:
    game = arranging(2)
    game.do(machine.leave, position=1)
    with pytest.raises(TableError) as err:
        machine.verify_save_draft(game.state, position=1, draft={})
    assert err.value.code == "escaped"
    with pytest.raises(TableError) as nobody:
        machine.verify_disconnect(game.state, position=3)
    assert nobody.value.code == "not_seated"
    with pytest.raises(TableError) as twice:
        machine.verify_reconnect(game.state, position=0)
    assert twice.value.code == "already_connected"


def test_9_drafts_are_small_json_objects() -> None:
    game = arranging(2)
    with pytest.raises(TableError) as err:
        machine.verify_save_draft(game.state, position=0, draft={"x": "y" * 5000})
    assert err.value.code == "bad_draft"
    with pytest.raises(TableError):
        machine.verify_save_draft(game.state, position=0, draft=["AS"])  # type: ignore[arg-type]
    game.do(machine.save_draft, position=0, draft={"front": []})
    saved = game.events("draft_saved")[0]
    assert saved.audience == "p0" and saved.payload["draft"] == {"front": []}


# -- §8.5 the comparison -----------------------------------------------------------------------


def test_8_5_sequential_order_helper_starts_at_the_smallest_and_wraps() -> None:
    assert compare_order({0: 5, 1: 3, 2: 3, 3: 9}) == [1, 2, 3, 0]
    assert compare_order({0: 7, 2: 1, 3: 4}) == [2, 3, 0]


def test_8_5_sequential_reveal_starts_from_the_smallest_hand_counter_clockwise() -> None:
    game = Game(4, NO_SPECIALS)
    hands = {0: HR_B, 1: HR_A, 2: HR_D, 3: HR_C}
    game.start(hands={p: a.cards for p, a in hands.items()})
    for p, a in hands.items():
        game.submit(p, a)
    reveals = game.events("reveal")
    assert [e.payload["row"] for e in reveals] == [r for r in ROWS for _ in range(4)]
    # HR_D (seat 2) is smallest in every row: 2, then 3, 0, 1 (increasing position, wrapping).
    assert [e.payload["hands"][0]["position"] for e in reveals] == [2, 3, 0, 1] * 3
    assert [e.payload["offset_ms"] for e in reveals] == [800 * i for i in range(12)]
    # Every pair is a gun; A (seat 1) guns everyone: a home run.
    guns = {
        (e.payload["shooter"], e.payload["target"]): e.payload["kind"] for e in game.events("gun")
    }
    assert guns == {
        (1, 0): "home_run",
        (1, 2): "home_run",
        (1, 3): "home_run",
        (0, 2): "gun",
        (0, 3): "gun",
        (3, 2): "gun",
    }
    (home_run,) = game.events("home_run")
    assert home_run.payload["shooter"] == 1
    # A gun's effect lasts 1.5 intervals, a home run's 3, and each plays out before the next
    # event (and the settlement): 12 reveals, 3 home-run guns (no effect of their own), 3 guns.
    phase = game.events("phase")[-1].payload
    assert phase["phase"] == "comparing"
    assert phase["duration_ms"] == 800 * (12 + 3) + 1200 * 3 + 2400
    assert game.state.deadline == pytest.approx(game.now + 18.0)
    effects = [*game.events("gun"), home_run]
    assert [(e.payload.get("kind"), e.payload["effect_ms"]) for e in effects] == [
        (e.payload["kind"], 1200 if e.payload["kind"] == "gun" else 0) for e in game.events("gun")
    ] + [(None, 2400)]
    ends = [e.payload["offset_ms"] + e.payload["effect_ms"] for e in effects]
    starts = [e.payload["offset_ms"] for e in effects[1:]] + [phase["duration_ms"]]
    assert all(end <= start for end, start in zip(ends, starts, strict=True))
    assert not any(e.payload["run_over"] for e in game.events("gun"))


@pytest.mark.parametrize("seed", range(6))
def test_8_5_sequential_order_in_random_rounds(seed: int) -> None:
    game = Game(4)
    game.ready_all()
    game.deal(plain_deck(4, 100 + seed), start_seat=seed % 4)
    game.fire()
    for p in range(4):
        game.submit_best(p)
    for k, row in enumerate(ROWS):
        shown = [e.payload["hands"][0]["position"] for e in game.events("reveal")]
        order = shown[4 * k : 4 * k + 4]
        keys = {p: evaluate(game.seat(p).arrangement.rows()[k]).key for p in range(4)}
        smallest = min(keys.values())
        assert keys[order[0]] == smallest
        assert order[0] == min(p for p in keys if keys[p] == smallest)
        assert order == [(order[0] + i) % 4 for i in range(4)]
        assert all(e.payload["row"] == row for e in game.events("reveal")[4 * k : 4 * k + 4])


def test_8_5_simultaneous_reveals_one_event_per_row() -> None:
    config = RuleConfig(compare_mode="simultaneous", reveal_interval_ms=500)
    game = Game(3, config)
    game.start()
    for p in range(3):
        game.submit_best(p)
    reveals = game.events("reveal")
    assert [e.payload["row"] for e in reveals] == list(ROWS)
    assert [e.payload["offset_ms"] for e in reveals] == [0, 500, 1000]
    for e in reveals:
        assert [h["position"] for h in e.payload["hands"]] == [0, 1, 2]


def test_8_5_row_results_and_gun_line_for_rules_example_1() -> None:
    game = Game(2)
    game.start(hands={0: EX1_A.cards, 1: EX1_B.cards})
    assert detect_special(EX1_A.cards, DEFAULT_CONFIG) is None
    game.submit(0, EX1_A)
    game.submit(1, EX1_B)
    water = [e.payload["water"] for e in game.events("row_result")]
    assert water == [
        [{"position": 0, "water": 1}, {"position": 1, "water": -1}],
        [{"position": 0, "water": 2}, {"position": 1, "water": -2}],
        [{"position": 0, "water": 5}, {"position": 1, "water": -5}],
    ]
    # Head to head (two players: the same figures from seat 0's side).
    versus = [e.payload["versus"] for e in game.events("row_result")]
    assert versus == [[{"a": 0, "b": 1, "water": w}] for w in (1, 2, 5)]
    (gun,) = game.events("gun")
    assert gun.payload == {
        "offset_ms": 6 * 800,
        "shooter": 0,
        "target": 1,
        "kind": "gun",
        "run_over": False,
        "water": 3,
        "effect_ms": 1200,
    }
    assert game.events("home_run") == []  # two players: no home run (§7.2)
    settle(game)
    players = game.result()["players"]
    assert [p["water"] for p in players] == [11, -11]
    assert [p["delta"] for p in players] == [1100, -1100]


def test_8_6_cannot_cover_loss_is_cut_and_coins_are_conserved() -> None:
    game = Game(2)
    game.start(hands={0: EX1_A.cards, 1: EX1_B.cards})
    game.submit(0, EX1_A)
    game.submit(1, EX1_B)
    settle(game, {"p0": 0, "p1": 700})
    result = game.state.result
    assert result is not None and conserved(result)
    assert [p["delta"] for p in result["players"]] == [700, -700]
    assert result["cuts"] == [{"from": "p1", "to": "p0", "owed": 1100, "paid": 700}]


def test_versions_go_up_by_one_per_event_over_a_whole_evening() -> None:
    game = Game(3)
    for round_no in range(3):
        game.ready_all()
        game.deal(plain_deck(3, round_no), start_seat=round_no)
        game.fire()
        game.submit_best(0)
        game.do(machine.disconnect, position=1)
        game.do(machine.reconnect, position=1)
        game.submit_best(1)
        game.fire()
        settle(game, {f"p{p}": RICH for p in range(3)})
    assert [e.version for e in game.log] == list(range(1, len(game.log) + 1))
    assert game.state.version == len(game.log)


def test_8_a_settled_table_with_nobody_to_wait_for_is_waiting_again() -> None:
    game = arranging(2)
    game.do(machine.leave, position=0)
    game.do(machine.leave, position=1)
    assert game.state.phase is Phase.COMPARING  # both hands were played for them
    settle(game)
    assert game.state.seats == () and game.state.phase is Phase.WAITING
    assert game.state.deadline is None
    assert [e.payload["phase"] for e in game.events("phase")][-2:] == ["settled", "waiting"]


def test_9_drafts_must_round_trip_as_json() -> None:
    game = arranging(2)
    for draft in ({"x": float("nan")}, {1: "int key"}, {"t": ("a", "b")}, {"s": {1, 2}}):
        assert not machine.can_save_draft(game.state, position=0, draft=draft)


# -- leaving once the hand is in (docs/protocol.md "Leaving a round") --------------------------


def test_7_5_leaving_with_the_hand_in_is_no_escape_and_leaves_at_settlement() -> None:
    game = arranging(3)
    game.submit_best(2)
    game.do(machine.leave, position=2)
    seat = game.state.seat(2)
    assert seat is not None and seat.left and not seat.escaped and seat.auto is None
    assert game.events("leaving")[-1].payload == {"position": 2}
    assert game.events("escaped") == []
    with pytest.raises(TableError) as err:
        machine.verify_leave(game.state, position=2)
    assert err.value.code == "already_left"
    game.submit_best(0)
    game.submit_best(1)
    settle(game, {"p0": 100_000, "p1": 100_000, "p2": 100_000})
    result = game.result()
    assert conserved(result)
    assert [p["penalty"] for p in result["players"]] == [0, 0, 0]
    assert not result["players"][2]["escaped"]
    assert game.events("left")[-1].payload == {"position": 2, "player": "p2", "reason": "left"}
    assert game.state.seat(2) is None


def test_7_5_disconnected_after_submitting_pays_no_penalty_and_goes_at_the_ready_deadline() -> None:
    game = arranging(2)
    game.submit_best(1)
    game.do(machine.disconnect, position=1)
    game.submit_best(0)
    settle(game, {"p0": 100_000, "p1": 100_000})
    assert game.events("escaped") == []
    result = game.result()
    assert conserved(result) and result["players"][1]["penalty"] == 0
    assert game.state.seat(1) is not None
    game.fire()  # the Ready deadline: not back, so back to the room list
    left = [e.payload for e in game.events("left")]
    assert {"position": 1, "player": "p1", "reason": "ready_timeout"} in left


def test_7_5_timed_out_while_here_then_gone_is_no_escape_but_hosted_is() -> None:
    game = arranging(3)
    game.do(machine.disconnect, position=2)  # hosted: its hand is played for it in absence
    game.submit_best(0)
    game.fire()  # the arrange deadline: seat 1 (here) timed out, seat 2 is hosted
    assert game.seat(1).auto == "timeout" and game.seat(2).auto == "hosted"
    game.do(machine.disconnect, position=1)
    settle(game, {"p0": 100_000, "p1": 100_000, "p2": 100_000})
    escaped = [e.payload["position"] for e in game.events("escaped")]
    assert escaped == [2]
    penalties = [p["penalty"] for p in game.result()["players"]]
    assert penalties == [0, 0, 5 * 100]


def test_7_5_leaving_before_the_hand_is_in_is_still_an_escape() -> None:
    game = arranging(2)
    game.do(machine.leave, position=1)
    assert game.seat(1).escaped and game.events("leaving") == []


def test_7_2_a_run_over_is_named_so_in_the_gun_event() -> None:
    # Seat 0 wins the back and the middle and ties the front (same ranks): a run-over (辗过),
    # scored as a gun by default.
    a = arr("AS AH 3S", "KS KH KD 4C 4D", "9C TC JC QC KC")
    b = arr("AD AC 3H", "8S 8H 8D 2H 2S", "JS JH JD 5C 5D")
    game = Game(2, NO_SPECIALS)
    game.start(hands={0: a.cards, 1: b.cards})
    game.submit(0, a)
    game.submit(1, b)
    (gun,) = game.events("gun")
    assert gun.payload["kind"] == "gun" and gun.payload["run_over"] is True
    assert gun.payload["shooter"] == 0 and gun.payload["effect_ms"] == 1200


@pytest.mark.parametrize("seed", range(4))
def test_8_5_head_to_head_row_water_adds_up_to_each_seats_row_water(seed: int) -> None:
    game = Game(4)
    game.ready_all()
    game.deal(plain_deck(4, 200 + seed))
    game.fire()
    for p in range(4):
        game.submit_best(p)
    for event in game.events("row_result"):
        totals = dict.fromkeys(range(4), 0)
        for pair in event.payload["versus"]:
            assert pair["a"] < pair["b"]
            totals[pair["a"]] += pair["water"]
            totals[pair["b"]] -= pair["water"]
        assert len(event.payload["versus"]) == 6
        assert {w["position"]: w["water"] for w in event.payload["water"]} == totals


@pytest.mark.parametrize("seed", range(6))
def test_8_5_a_pairs_row_water_over_the_rows_is_what_the_engine_scores(seed: int) -> None:
    """The comparison shows the engine's row water (RULES.md §7.1): summed over the three
    rows, a pair's head-to-head water is its scored row water plus row bonuses."""
    game = Game(4)
    game.start(deck=plain_deck(4, 300 + seed))
    for p in range(4):
        game.submit_best(p)
    shown: dict[tuple[str, str], int] = {}
    for event in game.events("row_result"):
        for pair in event.payload["versus"]:
            key = (f"p{pair['a']}", f"p{pair['b']}")
            shown[key] = shown.get(key, 0) + pair["water"]
    game.fire()
    pairs = game.result()["pairs"]
    assert shown == {(p["a"], p["b"]): p["row_water"] + p["bonus_water"] for p in pairs}

"""static/games/table/state.js with the variant decks (RULES.md §12, docs/protocol.md "Variant
decks"), against the table machine: spare cards (the tray of the 3 set aside, swaps, the
``suggest`` reply, the draft, ``submit``'s ``unused``, ``reveal_unused`` and the settlement),
jokers (what each stands for in the player's rows and in the reveal) and 16-card deals.

As in tests/games/test_table_state_js.py, rounds are played by the Python machine and what the
page would receive goes through the ES module under Node, every state deep-frozen.
"""

from __future__ import annotations

import random
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from games.rules.arrange import arrange
from games.rules.cards import Card, Deck, parse_cards
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table import machine
from games.table.deck import deal_order
from games.table.perspective import delivered, hand_suggestions, snapshot_for
from games.table.suggest import kept_suggestions
from tests.games.table.helpers import Game
from tests.games.test_table_state_js import cfg, run_js, wire

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")

FULL = Deck(extra_suits=2, jokers=2)
NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
PACE = {"reveal_interval_ms": 600, "deal_interval_ms": 10}
SPARE = RuleConfig.from_dict(
    {**NO_SPECIALS, **PACE, "extra_suits": 1, "spare_cards": 3}, base=DEFAULT_CONFIG
)
JOKERS = RuleConfig.from_dict({**NO_SPECIALS, **PACE, "jokers": 2}, base=DEFAULT_CONFIG)
ROWS = ("front", "middle", "back")

MINE_16 = "AS KS QS JS 9S AH AD KH KD 7C 7H 4C 3D 2H 5C 8D2"
# Jokers: mine completes a royal straight flush (RJ = TS), seat 1's an ace-high flush (BJ = AH).
JOKER_ME = {"front": "7C 7D 2H", "middle": "9H 9C 9D 4C 4D", "back": "AS KS QS JS RJ"}
JOKER_OTHER = {"front": "8C 6D 3C", "middle": "KC KD 5C 5S 2S", "back": "BJ 8H 7H 5H 3H"}


def cards(text: str | Sequence[str]) -> tuple[Card, ...]:
    return parse_cards(text.split() if isinstance(text, str) else list(text), deck=FULL)


def names(cs: Sequence[Card]) -> list[str]:
    return [str(c) for c in cs]


def deal(game: Game, hands: Mapping[int, Sequence[Card]], seed: int = 3) -> None:
    """Ready everyone and deal a deck of the table's configuration giving ``hands``."""
    game.ready_all()
    config = game.state.config
    order = deal_order([s.position for s in game.state.round_seats], 0)
    used = {c for hand in hands.values() for c in hand}
    rest = [c for c in config.deck.cards if c not in used]
    random.Random(seed).shuffle(rest)
    leftovers = iter(rest)
    deck: list[Card] = []
    for k in range(config.hand_size):
        for position in order:
            deck.append(hands[position][k] if position in hands else next(leftovers))
    deck.extend(leftovers)
    game.deal(deck=deck, start_seat=0)


def submit_best(game: Game, position: int) -> None:
    seat = game.seat(position)
    assert seat.hand is not None
    best = arrange(seat.hand, game.state.config).suggestions[0]
    extra = {"unused": best.unused} if game.state.config.spare_cards else {}
    game.do(
        machine.submit,
        position=position,
        front=best.front,
        middle=best.middle,
        back=best.back,
        **extra,
    )


class SpareRound:
    """A 多三张 round (65 cards, 16 each, 4 players) dealt, ``snapshot`` before it."""

    def __init__(self, seats: int = 4) -> None:
        self.game = Game(seats, SPARE)
        self.snapshot = snapshot_for(self.game.state, 0, now=self.game.now)
        self.start = self.game.state.version
        deal(self.game, {0: cards(MINE_16)})
        self.game.fire()  # the deal is over: arranging

    def events(self) -> list[dict[str, Any]]:
        return wire([e for e in self.game.log if e.version > self.start], state=self.game.state)

    def hand(self) -> dict[str, Any]:
        (event,) = [e for e in self.game.events("hand") if e.payload["position"] == 0]
        return delivered(event, self.game.state).payload


def test_a_spare_hand_is_16_cards_with_the_best_suggestions_3_in_the_tray(
    tmp_path: Path,
) -> None:
    played = SpareRound()
    hand = played.hand()
    assert len(hand["cards"]) == 16
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const dealing = states[data.events.findIndex((e) => e.type === "hand")];
        const state = states[states.length - 1];
        return {
          layout: state.layout,
          kept: S.keptCards(state.layout).length,
          spare: S.spareOf(state.table.config),
          size: S.handSize(state.table.config),
          backs: S.dealtTo(dealing, 1, 1e9),
          landed: S.landedAt(dealing, 1e9).length,
          shown: S.shownSuggestions(state),
          ready: S.readyToSubmit(state.layout, 3),
          classic: S.emptyLayout(0),
        };
        """,
        {"cfg": cfg(), "snapshot": played.snapshot, "events": played.events()},
    )
    aside = hand["suggestions"][0]["unused"]
    assert got["layout"]["tray"] == aside and len(aside) == 3
    assert got["layout"]["hand"] == [c for c in hand["cards"] if c not in aside]
    assert got["layout"]["front"] == got["layout"]["middle"] == got["layout"]["back"] == []
    assert got["kept"] == 13 and got["spare"] == 3 and got["size"] == 16
    assert got["backs"] == 16 and got["landed"] == 16
    assert got["shown"]["fromDeal"] is True
    assert got["shown"]["list"] == hand["suggestions"]
    assert got["ready"] is False
    assert got["classic"] == {"hand": [], "front": [], "middle": [], "back": []}


def test_a_spare_hand_sent_live_takes_the_best_suggestions_tray_when_they_follow(
    tmp_path: Path,
) -> None:
    """Live, the 16 cards come without suggestions: the tray is the last 3 dealt and nothing
    is asked (the deal's are on their way). When they follow, a layout nobody has touched
    sets aside the best suggestion's 3, as a hand that came with them would; a layout the
    player has already changed (a swap) is left as it is."""
    played = SpareRound()
    game = played.game
    (event,) = [e for e in game.events("hand") if e.payload["position"] == 0]
    follow = hand_suggestions(event, game.state)
    assert follow is not None
    aside = follow["suggestions"][0]["unused"]
    live = wire([e for e in game.log if e.version > played.start], state=game.state, live=True)
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const dealt = deepFreeze(states[states.length - 1]);
        const kept = S.withHandSuggestions(dealt, data.follow);
        const tray = dealt.layout.tray;
        const other = dealt.layout.hand.find((c) => !data.aside.includes(c));
        const swapped = S.swapCards(dealt.layout, tray[0], other);
        const moved = Object.assign({}, dealt, { layout: swapped });
        const left = S.withHandSuggestions(deepFreeze(moved), data.follow);
        return {
          tray,
          waiting: S.shownSuggestions(dealt),
          after: kept.layout.tray,
          shown: S.shownSuggestions(kept),
          movedTray: moved.layout.tray,
          leftTray: left.layout.tray,
          leftSuggestions: left.you.suggestions,
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": played.snapshot,
            "events": live,
            "follow": follow,
            "aside": aside,
        },
    )
    dealt_last = follow["cards"][-3:]
    assert sorted(got["tray"]) == sorted(dealt_last)
    assert got["waiting"]["list"] is None and got["waiting"]["fromDeal"] is True
    assert got["after"] == aside
    assert got["shown"]["list"] == follow["suggestions"] and got["shown"]["fromDeal"] is True
    assert got["leftTray"] == got["movedTray"] != aside
    assert got["leftSuggestions"] == follow["suggestions"]


def test_a_swap_asks_for_suggestions_for_the_13_kept_and_the_reply_is_applied_and_submitted(
    tmp_path: Path,
) -> None:
    played = SpareRound()
    game = played.game
    hand = played.hand()
    aside = hand["suggestions"][0]["unused"]
    kept = [c for c in hand["cards"] if c not in aside]
    # A swap giving a tray that no suggestion of the deal sets aside.
    sets = [sorted(s["unused"]) for s in hand["suggestions"]]
    spare_card = aside[0]
    kept_card = next(k for k in kept if sorted([k, *aside[1:]]) not in sets)
    after = [spare_card if c == kept_card else c for c in kept]
    reply = {
        "type": "suggestions",
        "id": "suggest-1",
        "cards": after,
        "suggestions": kept_suggestions(game.state, position=0, cards=cards(after)),
    }
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        let state = deepFreeze(states[states.length - 1]);
        const layout = state.layout;
        const swapped = S.swapCards(layout, data.spare, data.kept);
        const backwards = S.swapCards(layout, data.kept, data.spare);
        const bothKept = S.swapCards(layout, layout.hand[0], layout.hand[1]);
        const bothSpare = S.swapCards(layout, layout.tray[0], layout.tray[1]);
        const unknown = S.swapCards(layout, data.spare, "2S");
        state = deepFreeze(S.withLayout(state, swapped));
        const waiting = S.shownSuggestions(state);
        const foreign = S.withSuggested(state, Object.assign({}, data.reply, {
          cards: data.reply.cards.slice(0, 12).concat(["RJ"]),
        }));
        const short = S.withSuggested(state, Object.assign({}, data.reply, {
          cards: data.reply.cards.slice(0, 12),
        }));
        state = deepFreeze(S.withSuggested(state, data.reply));
        const shown = S.shownSuggestions(state);
        const applied = S.applySuggestion(state.layout, shown.list[0], state.you.hand, 3);
        // Back to the first tray: the deal's suggestions again.
        const unswapped = S.swapCards(swapped, data.kept, data.spare);
        const back = S.shownSuggestions(S.withLayout(state, unswapped));
        return {
          layout, swapped, backwards, bothKept, bothSpare, unknown, waiting,
          foreignIgnored: foreign === state || foreign.suggested[waiting.key] === undefined,
          shortIgnored: short.suggested[waiting.key] === undefined,
          shown, applied,
          ready: S.readyToSubmit(applied, 3),
          fields: S.submitFields(applied, 3),
          backFromDeal: back.fromDeal,
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": played.snapshot,
            "events": played.events(),
            "spare": spare_card,
            "kept": kept_card,
            "reply": reply,
        },
    )
    layout, swapped = got["layout"], got["swapped"]
    i = layout["hand"].index(kept_card)
    assert swapped["hand"][i] == spare_card and swapped["hand"].count(spare_card) == 1
    assert swapped["tray"] == [kept_card if c == spare_card else c for c in layout["tray"]]
    assert got["backwards"] == swapped
    assert got["bothKept"] is None and got["bothSpare"] is None and got["unknown"] is None
    assert got["waiting"]["list"] is None and got["waiting"]["fromDeal"] is False
    assert got["waiting"]["key"] == " ".join(sorted(after))
    assert got["foreignIgnored"] and got["shortIgnored"]
    assert got["shown"]["list"] == reply["suggestions"] and got["shown"]["fromDeal"] is False
    best = reply["suggestions"][0]
    applied = got["applied"]
    assert {r: applied[r] for r in ROWS} == {r: best[r] for r in ROWS}
    assert applied["hand"] == [] and sorted(applied["tray"]) == sorted(swapped["tray"])
    assert got["ready"] is True and got["backFromDeal"] is True
    fields = got["fields"]
    assert sorted(fields["unused"]) == sorted(swapped["tray"])
    # The machine takes exactly what the page sends, and its `arrangement` names the tray.
    game.do(machine.submit, position=0, **{k: cards(v) for k, v in fields.items()})
    (arrangement,) = game.events("arrangement")
    assert sorted(arrangement.payload["unused"]) == sorted(fields["unused"])
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const state = states[states.length - 1];
        return { layout: state.layout, arrangement: state.you.arrangement };
        """,
        {"cfg": cfg(), "snapshot": played.snapshot, "events": played.events()},
    )
    assert got["layout"] == {"hand": [], **{r: fields[r] for r in ROWS}, "tray": fields["unused"]}
    assert got["arrangement"]["unused"] == fields["unused"]


def test_the_draft_keeps_the_tray_and_a_snapshot_restores_it(tmp_path: Path) -> None:
    played = SpareRound()
    game = played.game
    hand = played.hand()
    aside = hand["suggestions"][0]["unused"]
    kept = [c for c in hand["cards"] if c not in aside]
    tray = [kept[0], aside[1], aside[2]]
    draft = {
        "hand": kept[1:],
        "front": [aside[0]],
        "middle": [],
        "back": [],
        "tray": tray,
    }
    game.do(machine.save_draft, position=0, draft=draft)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    bad = dict(draft, tray=[kept[0], kept[0], aside[1]])
    foreign = dict(draft, tray=["RJ", aside[1], aside[2]])
    got = run_js(
        tmp_path,
        """
        const state = S.applySnapshot(S.initialState(data.cfg), data.snapshot);
        const you = state.you;
        return {
          layout: state.layout,
          bad: S.layoutFromYou(Object.assign({}, you, { draft: data.bad }), 3),
          foreign: S.layoutFromYou(Object.assign({}, you, { draft: data.foreign }), 3),
          noDraft: S.layoutFromYou(Object.assign({}, you, { draft: null }), 3),
        };
        """,
        {"cfg": cfg(), "snapshot": snapshot, "bad": bad, "foreign": foreign},
    )
    layout = got["layout"]
    assert layout["tray"] == tray and layout["front"] == [aside[0]]
    assert sorted(layout["hand"]) == sorted(kept[1:])
    # A draft's tray that is not 3 distinct cards of the hand: the first choice instead.
    for name in ("bad", "foreign", "noDraft"):
        assert got[name]["tray"] == aside, name
        kept_cards = got[name]["hand"] + got[name]["front"]
        assert sorted(kept_cards) == sorted(kept), name


def test_reveal_unused_shows_each_players_set_aside_cards_and_the_settlement_has_them(
    tmp_path: Path,
) -> None:
    played = SpareRound()
    game = played.game
    for position in (1, 2, 3, 0):
        submit_best(game, position)
    compared = game.state.version
    started = game.state.phase_started_at
    (unused,) = game.events("reveal_unused")
    back = next(e.payload for e in game.events("row_result") if e.payload["row"] == "back")
    assert unused.payload["offset_ms"] == back["offset_ms"]
    snapshot_comparing = snapshot_for(game.state, 0, now=started + 0.001)
    game.fire()  # settled
    result = game.result()
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const comparing = deepFreeze(
          states[data.events.findIndex((e) => e.version === data.compared)],
        );
        const settled = states[states.length - 1];
        const fromSnapshot = S.applySnapshot(S.initialState(data.cfg), data.comparing);
        return {
          before: S.compareAt(comparing, data.at - 1).unused,
          at: S.compareAt(comparing, data.at + 1).unused,
          settled: S.compareAt(settled, 0).unused,
          result: settled.table.result.players.map((p) => [p.position, p.unused]),
          snapshot: S.compareAt(fromSnapshot, 0).unused,
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": played.snapshot,
            "events": played.events(),
            "compared": compared,
            "at": unused.payload["offset_ms"],
            "comparing": snapshot_comparing,
        },
    )
    expected = {str(h["position"]): h["cards"] for h in unused.payload["hands"]}
    assert len(expected) == 4 and all(len(c) == 3 for c in expected.values())
    assert got["before"] == {}
    assert got["at"] == expected and got["settled"] == expected
    assert got["snapshot"] == expected  # a reload mid-comparison: from the seats' `revealed`
    assert sorted(got["result"]) == sorted([p["position"], p["unused"]] for p in result["players"])
    assert {str(p): u for p, u in got["result"]} == expected


def test_a_declared_special_with_spare_cards_names_its_set_aside_cards(tmp_path: Path) -> None:
    config = RuleConfig.from_dict(
        {
            **PACE,
            "extra_suits": 1,
            "spare_cards": 3,
            "specials": {sid: {"enabled": sid == "dragon"} for sid in SPECIAL_IDS},
        },
        base=DEFAULT_CONFIG,
    )
    game = Game(2, config)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    start = game.state.version
    dragon = cards("2S 3H 4C 5D 6S 7H 8C 9D TS JH QC KD AS 2H 2C 3S")
    deal(game, {0: dragon})
    game.fire()
    (hand,) = [e.payload for e in game.events("hand") if e.payload["position"] == 0]
    assert hand["special"] == "dragon" and len(hand["special_unused"]) == 3
    game.do(machine.choose_special, position=0, play_special=True)
    if game.seat(1).special is not None:
        game.do(machine.choose_special, position=1, play_special=False)
    submit_best(game, 1)
    (special,) = game.events("reveal_special")
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const state = states[states.length - 1];
        return {
          special_unused: state.you.special_unused,
          unused: S.compareAt(state, 1e9).unused,
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": snapshot,
            "events": wire([e for e in game.log if e.version > start], state=game.state),
        },
    )
    assert got["special_unused"] == hand["special_unused"]
    assert got["unused"]["0"] == special.payload["unused"]
    assert sorted(special.payload["unused"]) == sorted(hand["special_unused"])


def test_jokers_carry_what_they_stand_for_in_the_arrangement_and_the_reveal(
    tmp_path: Path,
) -> None:
    game = Game(2, JOKERS)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    start = game.state.version
    mine = {r: cards(JOKER_ME[r]) for r in ROWS}
    theirs = {r: cards(JOKER_OTHER[r]) for r in ROWS}
    deal(game, {0: sum(mine.values(), ()), 1: sum(theirs.values(), ())})
    game.fire()
    game.do(machine.submit, position=0, **mine)
    game.do(machine.submit, position=1, **theirs)
    started = game.state.phase_started_at
    snapshot_comparing = snapshot_for(game.state, 0, now=started + 0.001)
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const state = states[states.length - 1];
        const view = S.compareAt(state, 1e9);
        const reloaded = S.applySnapshot(S.initialState(data.cfg), data.comparing);
        const fromSnapshot = S.compareAt(reloaded, 0);
        const evaluate = () => ({ jokers: { RJ: "QS" } });  // a wrong local guess
        const back = state.layout.back;
        return {
          arrangement: state.you.arrangement.jokers,
          mine: view.rows[0].back.jokers,
          theirs: view.rows[1].back.jokers,
          front: view.rows[1].front.jokers,
          snapshotTheirs: fromSnapshot.rows[1].back.jokers,
          snapshotMiddle: fromSnapshot.rows[1].middle.jokers,
          known: S.rowJokers(back, state.you.arrangement.jokers, 5, evaluate, "lowest"),
          guessed: S.rowJokers(back, null, 5, evaluate, "lowest"),
          partial: S.rowJokers(back.slice(0, 4), null, 5, evaluate, "lowest"),
          none: S.rowJokers(state.layout.front, null, 3, evaluate, "lowest"),
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": snapshot,
            "events": wire([e for e in game.log if e.version > start], state=game.state),
            "comparing": snapshot_comparing,
        },
    )
    assert got["arrangement"] == {"RJ": "TS"}
    assert got["mine"] == {"RJ": "TS"} and got["theirs"] == {"BJ": "AH"}
    assert got["front"] is None
    assert got["snapshotTheirs"] == {"BJ": "AH"} and got["snapshotMiddle"] is None
    # The server's value wins; cards.js's evaluate only for a row the server has not named.
    assert got["known"] == {"RJ": "TS"} and got["guessed"] == {"RJ": "QS"}
    assert got["partial"] is None and got["none"] is None

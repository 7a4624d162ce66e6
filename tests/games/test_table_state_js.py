"""static/games/table/state.js, the table page's pure reducer, against the table machine.

Real rounds are played by the Python machine (tests/games/table/helpers.Game); what the page
would receive — a welcome snapshot (``snapshot_for``) and the events the player may see
(``events_for``, in the wire format ``{version, type, payload}``) — goes through the ES module
under Node, and the result is compared with what Python expects. Every state is deep-frozen
before the next event, so a reducer that changed its input would throw (modules are strict).
Skipped where Node is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table import machine
from games.table.events import Event
from games.table.perspective import delivered, events_for, hand_suggestions, snapshot_for
from games.table.state import TableState
from tests.games.table.helpers import Game, arr

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")

STATE_JS = Path(__file__).resolve().parents[2] / "static" / "games" / "table" / "state.js"

# Seat 1 guns everyone: a home run; seat 0 guns seats 2 and 3; seat 3 guns seat 2.
HR = {
    0: arr("QS QH 2D", "JS JH JD 4C 4D", "8S 8H 8D 8C 2S"),
    1: arr("AS AH 2C", "KS KH KD 3C 3D", "9C TC JC QC KC"),
    2: arr("TS TD 3S", "6S 6H 6D 5C 5D", "9S 9D 9H 7S 7H"),
    3: arr("QD 5S 4S", "AD AC 7D 7C 6C", "TH 5H 4H 3H 2H"),
}
NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
CONFIG = RuleConfig.from_dict(
    {**NO_SPECIALS, "reveal_interval_ms": 600, "deal_interval_ms": 10}, base=DEFAULT_CONFIG
)
NAMES = {"0": "ann", "1": "bob", "2": "cid", "3": "dan"}

RUNNER = """
import { readFileSync } from "node:fs";
const S = await import(process.argv[2]);
const data = JSON.parse(readFileSync(0, "utf8"));
function deepFreeze(value) {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    Object.values(value).forEach(deepFreeze);
  }
  return value;
}
// Apply events one by one, each on a frozen state; the states after each event.
function play(state, events) {
  const states = [];
  for (const event of events) {
    state = S.applyEvent(deepFreeze(state), event);
    states.push(state);
  }
  return states;
}
const result = (() => {
%s
})();
process.stdout.write(JSON.stringify(result === undefined ? null : result));
"""


def run_js(tmp_path: Path, body: str, data: dict[str, Any]) -> Any:
    """Run ``body`` (a function body with ``S``, ``data``, ``deepFreeze`` and ``play``) under
    Node; its return value, through JSON."""
    runner = tmp_path / "runner.mjs"
    runner.write_text(RUNNER % body)
    out = subprocess.run(
        ["node", str(runner), STATE_JS.as_uri()],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def wire(
    events: list[Event], *, state: TableState, player: str = "p0", live: bool = False
) -> list[dict[str, Any]]:
    """What ``player``'s client receives of ``events``, as the server sends them at ``state``
    (a hand with its suggestions, ``views.delivered``; ``live``: as they go out with the deal,
    a person's hand with ``"suggestions": None``, its ``hand_suggestions`` to follow)."""
    return [
        {"version": e.version, "type": e.type, "payload": e.payload}
        for e in (delivered(e, state, live=live) for e in events_for(events, player))
    ]


def cfg(position: int = 0) -> dict[str, Any]:
    return {
        "position": position,
        "player_id": f"p{position}",
        "username": NAMES[str(position)],
        "seats": 4,
        "base_score": 100,
        "names": NAMES,
    }


def rows(a: Any) -> dict[str, list[str]]:
    return {r: [str(c) for c in getattr(a, r)] for r in ("front", "middle", "back")}


class Round:
    """A 4-player round with a home run and guns; ``events`` after ``snapshot``."""

    def __init__(self) -> None:
        self.game = Game(4, CONFIG)
        self.snapshot = snapshot_for(self.game.state, 0, now=self.game.now)
        self.start = self.game.state.version
        self.game.ready_all()
        self.game.deal(hands={p: a.cards for p, a in HR.items()})
        self.dealt = self.game.state.version
        self.game.fire()  # the deal is over
        for position in (1, 2, 3, 0):
            self.game.submit(position, HR[position])
        self.compared = self.game.state.version
        self.game.fire()  # the comparison is over: settled

    def events(self, since: int | None = None, until: int | None = None) -> list[dict[str, Any]]:
        since = self.start if since is None else since
        chosen = [
            e for e in self.game.log if e.version > since and (until is None or e.version <= until)
        ]
        return wire(chosen, state=self.game.state)

    def payloads(self, type_: str) -> list[dict[str, Any]]:
        return [e.payload for e in self.game.events(type_)]


@pytest.fixture(scope="module")
def played() -> Round:
    return Round()


def test_a_snapshot_then_a_round_of_events_give_the_machines_view(
    tmp_path: Path, played: Round
) -> None:
    got = run_js(
        tmp_path,
        """
        let state = S.applySnapshot(deepFreeze(S.initialState(data.cfg)), data.snapshot);
        const states = play(state, data.events);
        state = states[states.length - 1];
        const view = S.compareAt(state, Infinity);
        return {
          version: state.table.version,
          phase: state.table.phase,
          round_no: state.table.round_no,
          result: state.table.result,
          hand: state.you.hand,
          arrangement: state.you.arrangement,
          layout: state.layout,
          seats: Object.values(state.table.seats).map((s) => [s.position, s.ready, s.in_round]),
          categories: Object.fromEntries(
            Object.entries(view.rows).map(([p, r]) => [
              p, [r.front.category, r.middle.category, r.back.category],
            ]),
          ),
          log: view.log.map((l) => l.kind),
          dealing: state.dealing,
          done: state.compare.done,
        };
        """,
        {"cfg": cfg(), "snapshot": played.snapshot, "events": played.events()},
    )
    game = played.game
    assert got["version"] == game.state.version
    assert got["phase"] == "settled" and got["round_no"] == 1
    assert got["result"] == played.payloads("settled")[0]["result"]
    assert got["hand"] == [str(c) for c in played.payloads("hand")[0]["cards"]]
    assert got["arrangement"] == rows(HR[0]) and got["layout"] == {"hand": [], **rows(HR[0])}
    assert got["seats"] == [[p, False, False] for p in range(4)]
    expected: dict[str, list[str]] = {}
    for reveal in played.payloads("reveal"):
        for h in reveal["hands"]:
            expected.setdefault(str(h["position"]), []).append(h["category"])
    assert got["categories"] == expected
    kinds = {"reveal": "reveal", "row_result": "row", "gun": "gun", "home_run": "home-run"}
    wanted = [
        kinds[e.type]
        for e in sorted(
            (e for e in game.log if e.type in kinds),
            key=lambda e: (e.payload["offset_ms"] + (e.type == "row_result"), e.version),
        )
        for _ in (e.payload["hands"] if e.type == "reveal" else [None])
    ]
    assert got["log"] == wanted and "home-run" in wanted and "gun" in wanted
    assert got["dealing"] is None and got["done"] is True


def test_events_at_or_below_the_version_are_ignored(tmp_path: Path, played: Round) -> None:
    got = run_js(
        tmp_path,
        """
        const start = S.applySnapshot(S.initialState(data.cfg), data.snapshot);
        const states = play(start, data.events);
        const last = deepFreeze(states[states.length - 1]);
        const again = data.events.map((e) => S.applyEvent(last, e) === last);
        const current = Object.assign({}, data.events[0], { version: last.table.version });
        const same = S.applyEvent(last, current);
        const ready = { type: "ready", payload: { position: 1 } };
        const next = S.applyEvent(last, Object.assign({ version: last.table.version + 1 }, ready));
        return {
          again,
          sameIsIgnored: same === last,
          next: next.table.version - last.table.version,
          readyNow: next.table.seats[1].ready,
          readyBefore: last.table.seats[1].ready,
          snapshotVersion: start.table.version,
        };
        """,
        {"cfg": cfg(), "snapshot": played.snapshot, "events": played.events()},
    )
    assert all(got["again"]) and got["sameIsIgnored"]
    assert got["next"] == 1 and got["readyNow"] and not got["readyBefore"]
    assert got["snapshotVersion"] == played.start


def test_the_input_state_is_never_changed(tmp_path: Path, played: Round) -> None:
    got = run_js(
        tmp_path,
        """
        const start = S.initialState(data.cfg);
        const before = JSON.stringify(start);
        const snap = S.applySnapshot(start, data.snapshot);
        const copy = JSON.stringify(snap);
        play(snap, data.events); // throws if any event writes into a frozen state
        return {
          initial: JSON.stringify(start) === before,
          snapshot: JSON.stringify(snap) === copy,
        };
        """,
        {"cfg": cfg(), "snapshot": played.snapshot, "events": played.events()},
    )
    assert got == {"initial": True, "snapshot": True}


def test_a_new_round_resets_the_round_and_the_settlement_keeps_names_of_players_gone(
    tmp_path: Path, played: Round
) -> None:
    game = Game(4, CONFIG)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    start = game.state.version
    game.ready_all()
    game.deal(hands={p: a.cards for p, a in HR.items()})
    game.fire()
    for position in (1, 2, 3, 0):
        game.submit(position, HR[position])
    game.fire()
    settled = game.state.version
    game.do(machine.leave, position=2)
    game.do(machine.leave, position=3)
    game.ready_all()
    game.deal()
    round_start = next(
        e.version for e in game.log if e.type == "round_start" and e.version > settled
    )
    events = wire([e for e in game.log if e.version > start], state=game.state)
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const at = (v) => states[data.events.findIndex((e) => e.version === v)];
        const settled = at(data.settled);
        const gone = at(data.round_start - 1);
        const fresh = at(data.round_start);
        return {
          roundNames: settled.roundNames,
          namesAfterLeaving: gone.names,
          goneNamesAfterLeaving: gone.goneNames,
          roundNamesAfterLeaving: gone.roundNames,
          goneNamesNextRound: fresh.goneNames,
          fresh: {
            round_no: fresh.table.round_no,
            result: fresh.table.result,
            you: fresh.you,
            layout: fresh.layout,
            timeline: fresh.compare.timeline.length,
            deal: fresh.deal,
            seats: Object.values(fresh.table.seats).map(
              (s) => [s.position, s.in_round, s.done, s.ready],
            ),
          },
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": snapshot,
            "events": events,
            "settled": settled,
            "round_start": round_start,
        },
    )
    assert got["roundNames"] == {"p0": "ann", "p1": "bob", "p2": "cid", "p3": "dan"}
    assert got["namesAfterLeaving"] == {"0": "ann", "1": "bob"}
    # The comparison log of the round on screen still names who played it, by position.
    assert got["goneNamesAfterLeaving"] == {"2": "cid", "3": "dan"}
    assert got["goneNamesNextRound"] == {}
    assert got["roundNamesAfterLeaving"] == got["roundNames"]
    fresh = got["fresh"]
    assert fresh["round_no"] == 2 and fresh["result"] is None
    assert fresh["you"]["hand"] is None and fresh["you"]["arrangement"] is None
    assert fresh["layout"] == {"hand": [], "front": [], "middle": [], "back": []}
    assert fresh["timeline"] == 0 and fresh["deal"] is None
    assert fresh["seats"] == [[0, True, False, False], [1, True, False, False]]


def test_compare_at_plays_the_comparison_at_its_offsets(tmp_path: Path, played: Round) -> None:
    reveals = played.payloads("reveal")
    guns = [g for g in played.payloads("gun") if g["kind"] == "gun"]
    (home_run,) = played.payloads("home_run")
    first = min(r["offset_ms"] for r in reveals)
    last_row = max(r["offset_ms"] for r in played.payloads("row_result")) + 1
    gun = guns[0]
    moments = {
        "before": first - 1,
        "first": first,
        "rows_done": last_row,
        "gun": gun["offset_ms"],
        "gun_end": gun["offset_ms"] + gun["effect_ms"] - 1,
        "after_gun": gun["offset_ms"] + gun["effect_ms"],
        "home_run": home_run["offset_ms"],
        "all_over": home_run["offset_ms"] + home_run["effect_ms"],
    }
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const state = deepFreeze(states[states.length - 1]);
        const out = {};
        for (const [name, ms] of Object.entries(data.moments)) {
          const v = S.compareAt(state, ms);
          out[name] = {
            rows: Object.fromEntries(Object.entries(v.rows).map(([p, r]) => [p, Object.keys(r)])),
            water: Object.fromEntries(
              Object.entries(v.rows).map(([p, r]) => [p, r.back ? r.back.water : null]),
            ),
            log: v.log.length,
            effect: v.effect,
            versus: Object.keys(v.versus),
          };
        }
        return out;
        """,
        {
            "cfg": cfg(),
            "snapshot": played.snapshot,
            "events": played.events(until=played.compared),
            "moments": moments,
        },
    )
    assert got["before"] == {"rows": {}, "water": {}, "log": 0, "effect": None, "versus": []}
    shown_first = [h["position"] for r in reveals if r["offset_ms"] <= first for h in r["hands"]]
    assert got["first"]["rows"] == {str(p): ["front"] for p in shown_first}
    assert got["first"]["log"] == len(shown_first) and got["first"]["versus"] == []
    assert got["rows_done"]["rows"] == {str(p): ["front", "middle", "back"] for p in range(4)}
    assert got["rows_done"]["versus"] == ["front", "middle", "back"]
    back = next(r for r in played.payloads("row_result") if r["row"] == "back")
    assert got["rows_done"]["water"] == {str(w["position"]): w["water"] for w in back["water"]}
    effect = got["gun"]["effect"]
    assert effect["type"] == "gun" and effect["shooter"] == gun["shooter"]
    assert effect["target"] == gun["target"] and effect["water"] == gun["water"]
    assert got["gun_end"]["effect"]["type"] == "gun"
    assert got["gun_end"]["effect"]["target"] == gun["target"]
    after = got["after_gun"]["effect"]
    assert after is None or after["target"] != gun["target"] or after["from"] > gun["offset_ms"]
    assert got["home_run"]["effect"]["type"] == "home_run"
    assert got["home_run"]["effect"]["shooter"] == home_run["shooter"]
    assert got["all_over"]["effect"] is None


def test_versus_is_the_head_to_head_water_for_the_player(tmp_path: Path, played: Round) -> None:
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const view = S.compareAt(states[states.length - 1], Infinity);
        const out = {};
        for (const p of [0, 1, 2, 3]) {
          out[p] = ["front", "middle", "back"].map((r) => S.versusFor(view, 0, p, r));
        }
        out.early = S.versusFor(S.compareAt(states[states.length - 1], 0), 0, 1, "front");
        return out;
        """,
        {"cfg": cfg(), "snapshot": played.snapshot, "events": played.events(until=played.compared)},
    )
    expected: dict[str, list[int]] = {}
    for result in played.payloads("row_result"):
        for pair in result["versus"]:
            if pair["a"] == 0:
                expected.setdefault(str(pair["b"]), []).append(pair["water"])
            elif pair["b"] == 0:
                expected.setdefault(str(pair["a"]), []).append(-pair["water"])
    assert got["0"] == [None, None, None] and got["early"] is None
    assert {p: got[p] for p in ("1", "2", "3")} == expected
    # Seat 1 guns me: I lose every row against it.
    assert all(w < 0 for w in got["1"])


def test_committed_and_escape_risk(tmp_path: Path) -> None:
    game = Game(2, CONFIG)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    start = game.state.version
    game.ready_all()
    game.deal()
    game.fire()
    arranging = game.state.version
    game.submit_best(0)
    by_me = game.state.version
    # Another table: my hand played by the arrange timeout.
    late = Game(2, CONFIG)
    late_snapshot = snapshot_for(late.state, 0, now=late.now)
    late_start = late.state.version
    late.ready_all()
    late.deal()
    late.fire()
    late.submit_best(1)
    late.fire()  # the arrange deadline: my hand is played for me
    timeout_submitted = next(
        e.payload for e in late.log if e.type == "submitted" and e.payload["position"] == 0
    )
    assert timeout_submitted["auto"] == "timeout"
    got = run_js(
        tmp_path,
        """
        const riskAt = (snapshot, events, version) => {
          const states = play(S.applySnapshot(S.initialState(data.cfg), snapshot), events);
          const state = states[events.findIndex((e) => e.version === version)];
          return { risk: S.escapeRisk(state), committed: S.committed(S.mySeat(state)) };
        };
        const seat = (auto, extra) => Object.assign({ done: true, auto }, extra || {});
        return {
          arranging: riskAt(data.snapshot, data.events, data.arranging),
          byMe: riskAt(data.snapshot, data.events, data.by_me),
          timeout: riskAt(data.late_snapshot, data.late_events, data.late_version),
          hosted: S.committed(seat("hosted")),
          escaped: S.committed(seat("escaped")),
          notDone: S.committed({ done: false, auto: null }),
          none: S.committed(null),
          penalty: S.penaltyCoins(S.initialState(data.cfg)),
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": snapshot,
            "events": wire([e for e in game.log if e.version > start], state=game.state),
            "arranging": arranging,
            "by_me": by_me,
            "late_snapshot": late_snapshot,
            "late_events": wire([e for e in late.log if e.version > late_start], state=late.state),
            "late_version": late.state.version,
        },
    )
    assert got["arranging"] == {"risk": True, "committed": False}
    assert got["byMe"] == {"risk": False, "committed": True}
    assert got["timeout"]["committed"] is True and got["timeout"]["risk"] is False
    assert got["hosted"] is False and got["escaped"] is False
    assert got["notDone"] is False and got["none"] is False
    assert got["penalty"] == 500  # base 100 × 5 without a configured multiplier


def test_landed_at_follows_the_deal_offsets(tmp_path: Path, played: Round) -> None:
    (hand,) = [h for h in played.payloads("hand") if h["position"] == 0]
    offsets = hand["offsets_ms"]
    got = run_js(
        tmp_path,
        """
        const events = data.events;
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), events);
        const dealing = states[events.findIndex((e) => e.type === "hand")];
        const over = (e) =>
          e.type === "phase" && e.payload.phase !== "dealing" && e.version > data.dealt;
        const after = states[events.findIndex(over)];
        return {
          before: S.landedAt(dealing, -1),
          steps: data.offsets.map((ms) => S.landedAt(dealing, ms).length),
          all: S.landedAt(dealing, 1e9),
          afterDeal: S.landedAt(after, -1),
          backsAtStart: S.dealtTo(dealing, 1, 0),
          backsAtEnd: S.dealtTo(dealing, 1, 1e9),
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": played.snapshot,
            "events": played.events(),
            "offsets": offsets,
            "dealt": played.dealt,
        },
    )
    cards = [str(c) for c in hand["cards"]]
    assert got["before"] == []
    assert got["steps"] == [sum(1 for o in offsets if o <= ms) for ms in offsets]
    assert got["steps"][0] >= 1 and got["steps"][-1] == 13
    assert got["all"] == cards and got["afterDeal"] == cards
    assert got["backsAtEnd"] == 13 and got["backsAtStart"] <= 1


def test_6_a_hand_sent_live_waits_for_its_suggestions_then_shows_them(tmp_path: Path) -> None:
    """The hand comes live with ``"suggestions": null``: nothing is shown yet, and it is the
    deal's suggestions that are awaited (nothing to ask). The ``hand_suggestions`` that
    follows is kept when it is for the hand held — another hand's is dropped — and then shown,
    as a hand that came with them would show them."""
    game = Game(4, CONFIG)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    start = game.state.version
    game.ready_all()
    game.deal(hands={p: a.cards for p, a in HR.items()})
    game.fire()  # the deal is over: arranging
    (hand,) = [e for e in game.events("hand") if e.audience == "p0"]
    follow = hand_suggestions(hand, game.state)
    assert follow is not None and follow["suggestions"]
    live = wire([e for e in game.log if e.version > start], state=game.state, live=True)
    assert [e["payload"]["suggestions"] for e in live if e["type"] == "hand"] == [None]
    other = {"cards": [str(c) for c in game.hand(1)], "suggestions": follow["suggestions"]}
    got = run_js(
        tmp_path,
        """
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), data.events);
        const dealt = states[states.length - 1];
        const wrong = S.withHandSuggestions(deepFreeze(dealt), data.other);
        const right = S.withHandSuggestions(deepFreeze(dealt), data.follow);
        return {
          pending: S.dealSuggestionsPending(dealt),
          waiting: S.shownSuggestions(dealt),
          wrong: wrong === dealt,
          after: S.dealSuggestionsPending(right),
          shown: S.shownSuggestions(right),
          layout: right.layout.hand,
        };
        """,
        {
            "cfg": cfg(),
            "snapshot": snapshot,
            "events": live,
            "other": other,
            "follow": follow,
        },
    )
    assert got["pending"] is True
    assert got["waiting"] == {"list": None, "key": None, "fromDeal": True}
    assert got["wrong"] is True
    assert got["after"] is False
    assert got["shown"] == {"list": follow["suggestions"], "key": None, "fromDeal": True}
    assert got["layout"] == [str(c) for c in game.hand(0)]


def test_8_1_each_seats_ready_clock_follows_the_machine(tmp_path: Path) -> None:
    """A person with a bot: no clock after a round; a second person sitting down brings one
    (``ready_clock``), leaving takes it away. Replayed by the page, every seat's
    ``ready_deadline`` is the machine's after each event."""
    game = Game(0, CONFIG, capacity=3)
    snapshot = snapshot_for(game.state, 0, now=game.now)
    game.do(machine.sit, player="p0", position=0)
    game.do(machine.sit, player="b1", position=1, bot=True)
    game.ready_all()
    game.deal()
    game.fire()
    game.submit_best(0)
    game.submit_best(1)
    game.fire()  # settled
    checkpoints = {game.state.version: _clocks(game.state)}
    game.do(machine.sit, player="p2", position=2)
    checkpoints[game.state.version] = _clocks(game.state)
    game.do(machine.leave, position=2)
    checkpoints[game.state.version] = _clocks(game.state)
    assert checkpoints[max(checkpoints)]["0"] is None
    assert any(clocks["0"] is not None for clocks in checkpoints.values())
    got = run_js(
        tmp_path,
        """
        const events = data.events;
        const states = play(S.applySnapshot(S.initialState(data.cfg), data.snapshot), events);
        const out = {};
        states.forEach((state, i) => {
          if (!(String(events[i].version) in data.checkpoints)) return;
          const clocks = {};
          Object.values(state.table.seats).forEach((s) => (clocks[s.position] = s.ready_deadline));
          out[events[i].version] = clocks;
        });
        return out;
        """,
        {
            "cfg": cfg(),
            "snapshot": snapshot,
            "events": wire(game.log, state=game.state),
            "checkpoints": {str(v): c for v, c in checkpoints.items()},
        },
    )
    assert got == {str(v): c for v, c in checkpoints.items()}


def _clocks(state: TableState) -> dict[str, float | None]:
    return {str(s.position): s.ready_deadline for s in state.seats}

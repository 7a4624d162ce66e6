"""static/games/table/state/handtypes.js: the groups behind the table page's hand-type buttons
(RULES.md §6), the hand's sort orders, a row's display order and the last row filled by itself.

The groups are checked against the engine (games/rules/hands.py, jokers wild as §12.2 says) on
random hands of every deck — the classic one, the extra diamonds (copies) and the jokers —: each
group is made of cards of the hand and is what its button names; every group the cards hold is
found, once, strongest first. The 5-card types are checked by brute force: every 5 of the hand
evaluated by the engine. Skipped where Node is not installed.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from collections import Counter
from itertools import combinations
from pathlib import Path
from typing import Any

import pytest

from games.rules.cards import Card, Deck, parse_cards
from games.rules.hands import Category, RowHand, evaluate

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")

STATE_JS = Path(__file__).resolve().parents[2] / "static" / "games" / "table" / "state.js"
FULL_DECK = Deck(2, 2)
TYPES = [
    "pair",
    "two_pair",
    "trips",
    "straight",
    "flush",
    "full_house",
    "quads",
    "straight_flush",
    "five_of_a_kind",
]
SIZE = {"pair": 2, "two_pair": 4, "trips": 3, "quads": 4}  # the others: 5

RUNNER = """
import { readFileSync } from "node:fs";
const S = await import(process.argv[2]);
const job = JSON.parse(readFileSync(0, "utf8"));
const result = (() => {
%s
})();
process.stdout.write(JSON.stringify(result));
"""


def run_js(body: str, data: Any, tmp_path: Path) -> Any:
    runner = tmp_path / "runner.mjs"
    runner.write_text(RUNNER % body)
    out = subprocess.run(
        ["node", str(runner), STATE_JS.as_uri()],
        input=json.dumps(data),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


GROUPS = """
return job.hands.map((h) => {
  const out = {};
  S.HAND_TYPES.forEach((t) => (out[t] = S.handTypeGroups(h.cards, t, h.options)));
  return out;
});
"""


def is_joker(card: str) -> bool:
    return card in ("RJ", "BJ")


def rank(card: str) -> int:
    return "23456789TJQKA".index(card[0]) + 2


def engine(cards: list[str] | tuple[str, ...], a2345: str) -> RowHand:
    return evaluate(parse_cards(list(cards), deck=FULL_DECK), a2345)


def random_hands(n: int) -> list[dict[str, Any]]:
    """Hands of 13 (and 16: spare cards) from every deck; small pools so that groups abound."""
    rng = random.Random(43)
    decks = [Deck(0, 0), Deck(1, 0), Deck(2, 0), Deck(0, 2), Deck(1, 2), Deck(2, 2)]
    hands = []
    for i in range(n):
        deck = decks[i % len(decks)]
        pool: list[Card] = list(deck.cards)
        if i % 3 == 1:  # few ranks: pairs, trips, quads, full houses
            ranks = set(rng.sample(range(2, 15), 6))
            pool = [c for c in pool if c.copy == 0 or c.rank in ranks]
        elif i % 3 == 2:  # few suits: flushes and straight flushes
            pool = [c for c in pool if c.copy == 0 or c.suit in (0, 3)]
        size = 16 if i % 5 == 4 else 13
        cards = [str(c) for c in rng.sample(pool, size)]
        options = {
            "a2345": rng.choice(["lowest", "second"]),
            "fiveOfAKind": deck.extra_suits > 0 or deck.jokers > 0,
        }
        hands.append({"cards": cards, "options": options})
    return hands


def expected_identities(cards: list[str], kind: str, a2345: str) -> list[Any]:
    """What each group of `kind` is (its identity), strongest first, worked out independently:
    the 2- to 4-card kinds and full houses from the counts of ranks and jokers (at least one
    card of each rank part, jokers for the rest); straights, straight flushes and flushes from
    every 5 of the cards, evaluated by the engine."""
    jokers = sum(1 for c in cards if is_joker(c))
    counts = Counter(rank(c) for c in cards if not is_joker(c))
    ranks = range(14, 1, -1)

    def fits(*parts: tuple[int, int]) -> bool:
        need = sum(max(0, n - counts[r]) for r, n in parts)
        return all(counts[r] >= 1 for r, _n in parts) and need <= jokers

    if kind in ("pair", "trips", "quads", "five_of_a_kind"):
        n = {"pair": 2, "trips": 3, "quads": 4, "five_of_a_kind": 5}[kind]
        return [r for r in ranks if fits((r, n))]
    if kind == "two_pair":
        return [(a, b) for a in ranks for b in ranks if a > b and fits((a, 2), (b, 2))]
    if kind == "full_house":
        # Read as the engine reads the cards: jokers in the trips with a higher pair would
        # rather make the higher trips.
        return [
            (t, p)
            for t in ranks
            for p in ranks
            if t != p and fits((t, 3), (p, 2)) and not (counts[t] < 3 and p > t)
        ]
    found: set[Any] = set()
    for five in combinations(cards, 5):
        naturals = [c for c in five if not is_joker(c)]
        if not naturals:
            continue
        if kind == "flush":
            suits = {c[1] for c in naturals}
            if len(suits) == 1:
                found.add((suits.pop(), tuple(sorted((rank(c) for c in naturals), reverse=True))))
            continue
        hand = engine(five, a2345)
        if kind == "straight" and hand.category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
            found.add(hand.key % 32**5)
        if kind == "straight_flush" and hand.category == Category.STRAIGHT_FLUSH:
            found.add((hand.key % 32**5, naturals[0][1]))
    return sorted(found, reverse=True)


def identity(group: list[str], kind: str, a2345: str) -> Any:
    """What a group found by the page is, read off its cards (and the engine's reading)."""
    naturals = [c for c in group if not is_joker(c)]
    by_rank = Counter(rank(c) for c in naturals)
    if kind in ("pair", "trips", "quads", "five_of_a_kind"):
        assert len(by_rank) == 1, group
        return next(iter(by_rank))
    if kind == "two_pair":
        assert len(by_rank) == 2 and max(by_rank.values()) <= 2, group
        high, low = sorted(by_rank, reverse=True)
        return (high, low)
    if kind == "full_house":
        assert len(by_rank) == 2 and max(by_rank.values()) <= 3, group
        # At least a full house when played (its jokers may make quads, or five of a kind).
        assert engine(group, a2345).category >= Category.FULL_HOUSE, group
        # The trips: the rank with three cards of its own, else (jokers in both readings)
        # the higher rank.
        t = max(by_rank, key=lambda r: (by_rank[r] == 3, r))
        (p,) = set(by_rank) - {t}
        return (t, p)
    hand = engine(group, a2345)
    if kind == "straight":
        assert hand.category in (Category.STRAIGHT, Category.STRAIGHT_FLUSH), (group, hand)
        return hand.key % 32**5
    if kind == "straight_flush":
        assert hand.category == Category.STRAIGHT_FLUSH, (group, hand)
        return (hand.key % 32**5, naturals[0][1])
    assert kind == "flush"
    suits = {c[1] for c in naturals}
    assert len(suits) == 1 and hand.category >= Category.FLUSH, (group, hand)
    return (suits.pop(), tuple(sorted((rank(c) for c in naturals), reverse=True)))


def test_6_every_group_of_every_hand_type_strongest_first(tmp_path: Path) -> None:
    hands = random_hands(90)
    got = run_js(GROUPS, {"hands": hands}, tmp_path)
    seen_jokers = seen_copies = 0
    for hand, groups in zip(hands, got, strict=True):
        cards, a2345 = hand["cards"], hand["options"]["a2345"]
        jokers = [c for c in cards if is_joker(c)]
        for kind in TYPES:
            found = groups[kind]
            if kind == "five_of_a_kind" and not hand["options"]["fiveOfAKind"]:
                assert found == []
                continue
            for group in found:
                assert len(group) == SIZE.get(kind, 5) and len(set(group)) == len(group), group
                assert set(group) <= set(cards), (group, cards)
                assert any(not is_joker(c) for c in group), group
                seen_jokers += any(is_joker(c) for c in group)
                seen_copies += any(len(c) == 3 for c in group)
            ids = [identity(g, kind, a2345) for g in found]
            expected = expected_identities(cards, kind, a2345)
            if kind == "flush":
                # One group per suit and ranks of its own cards (the rest jokers, as aces).
                assert sorted(ids) == sorted(expected), (kind, cards)
                strength = [
                    (
                        sorted([rank(c) if not is_joker(c) else 14 for c in g], reverse=True),
                        -sum(map(is_joker, g)),
                    )
                    for g in found
                ]
                assert strength == sorted(strength, reverse=True), (kind, cards)
            else:
                assert ids == expected, (kind, cards, found)
            # The fewest jokers that make the group.
            for group in found:
                used = sum(map(is_joker, group))
                assert used <= len(jokers)
                if kind in ("pair", "trips", "quads", "five_of_a_kind"):
                    own = Counter(rank(c) for c in cards if not is_joker(c))[
                        identity(group, kind, a2345)
                    ]
                    assert used == max(0, SIZE.get(kind, 5) - own), group
    assert seen_jokers > 50 and seen_copies > 20  # the variant decks were exercised


EXAMPLES = """
const o = { a2345: "lowest", fiveOfAKind: false };
const g = (cards, type, opts) => S.handTypeGroups(cards.split(" "), type, opts || o);
const cycle = (cards, type, n, opts) => {
  const groups = g(cards, type, opts);
  const out = [];
  let sel = [];
  for (let i = 0; i < n; i++) { sel = S.nextGroup(groups, sel); out.push(sel); }
  return out;
};
return {
  pairs: cycle("AS AH 2C KS KH KD 3C 3D 9C TC JC QC 5D", "pair", 4),
  none: g("AS KH 2C 4S 6H 8D TC QC 3D 5S 7H 9C JD", "pair"),
  jokerPair: g("RJ AS KH 2C 4S 6H 8D TC QC 3D 5S 7H 9C", "pair").slice(0, 2),
  jokerStraight: g("RJ 5S 6H 7C 8D KS KH 2C 2D 3S QC JD AH", "straight"),
  wheelLowest: g("AS 2H 3C 4D 5S KS KH 8C 8D 9S QC JD TH", "straight"),
  wheelSecond: g("AS 2H 3C 4D 5S KS KH 8C 8D 9S QC JD TH", "straight", { a2345: "second" }),
  five: g("7S 7H 7C 7D 7D2 2S 3S 4S 5S 9D 9D2 KS AS", "five_of_a_kind", { fiveOfAKind: true }),
  fiveOff: g("7S 7H 7C 7D 7D2 2S 3S 4S 5S 9D 9D2 KS AS", "five_of_a_kind"),
  copyPair: g("9D 9D2 2S 4H 6C 8S TH QC AS 3D 5H 7C JS", "pair"),
  types: S.handTypesFor({ extra_suits: 0, jokers: 0 }),
  typesJokers: S.handTypesFor({ extra_suits: 0, jokers: 2 }),
};
"""


def test_6_hand_type_examples_pairs_cycle_and_jokers_complete(tmp_path: Path) -> None:
    got = run_js(EXAMPLES, {}, tmp_path)
    # Pressing again cycles through every pair, strongest first, then back to the first.
    assert got["pairs"] == [["AS", "AH"], ["KS", "KH"], ["3C", "3D"], ["AS", "AH"]]
    assert got["none"] == []
    # A joker completes a pair of the highest single card (RULES.md §12.2).
    assert got["jokerPair"] == [["AS", "RJ"], ["KH", "RJ"]]
    # JQKA and a joker: the ace-high straight first (the joker as 10). 5678 and a joker is
    # the 9-high straight (the joker as 9), listed once, not again as 8-high.
    assert got["jokerStraight"][0] == ["JD", "QC", "KS", "AH", "RJ"]
    lows = [s for s in got["jokerStraight"] if set(s) == {"5S", "6H", "7C", "8D", "RJ"}]
    assert len(lows) == 1
    # A2345 is the lowest straight, or second only to TJQKA (a2345 "second").
    assert got["wheelLowest"][-1] == ["AS", "2H", "3C", "4D", "5S"]
    assert got["wheelSecond"][1] == ["AS", "2H", "3C", "4D", "5S"]
    assert got["five"] == [["7S", "7H", "7C", "7D", "7D2"]] and got["fiveOff"] == []
    assert got["copyPair"] == [["9D", "9D2"]]
    assert "five_of_a_kind" not in got["types"] and "five_of_a_kind" in got["typesJokers"]


ORDERS = """
const hand = "7D 2S RJ KH 7S AD 7D2 9C 2H KS 4C BJ 9S".split(" ");
return {
  rank: S.sortByRank(hand),
  suit: S.sortBySuit(hand),
  count: S.sortByCount(hand),
  cycle: [S.nextSort("rank"), S.nextSort("suit"), S.nextSort("count")],
  straight: S.rowDisplayOrder(["6S", "3H", "5C", "2D", "4S"], { category: "straight" }),
  wheel: S.rowDisplayOrder(["5S", "AH", "3C", "2D", "4S"], { category: "straight" }),
  jokerStraight: S.rowDisplayOrder(["9S", "RJ", "JS", "QS", "KS"],
    { category: "straight_flush", jokers: { RJ: "TS" } }),
  fullHouse: S.rowDisplayOrder(["2S", "KH", "2D", "KS", "2H"], { category: "full_house" }),
  fill: [
    S.autoFilled({ hand: ["2S", "3S", "4S", "5S", "6S"], front: ["AS", "AH", "AD"],
      middle: ["KS", "KH", "KD", "KC", "QS"], back: [] }),
    S.autoFilled({ hand: ["2S", "3S", "4S"], front: [],
      middle: ["KS", "KH", "KD", "KC", "QS"], back: ["AS", "AH", "AD", "AC", "QH"] }),
    S.autoFilled({ hand: ["2S", "3S", "4S", "5S", "6S"], front: ["AS", "AH", "AD"],
      middle: [], back: ["KS", "KH", "KD", "KC", "QS"] }),
    S.autoFilled({ hand: ["2S", "3S"], front: ["AS"],
      middle: ["KS", "KH", "KD", "KC", "QS"], back: ["AH", "AD", "AC", "QH", "QD"] }),
    S.autoFilled({ hand: ["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S"],
      front: ["AS", "AH", "AD"], middle: [], back: [] }),
    S.autoFilled({ hand: ["2S", "3S", "4S", "5S", "6S"], front: ["AS", "AH", "AD"],
      middle: ["KS", "KH", "KD", "KC", "QS"], back: [], tray: ["7S", "8S", "9S"] }),
  ],
};
"""


def test_6_sort_orders_straights_low_to_high_and_the_last_row_filled(tmp_path: Path) -> None:
    got = run_js(ORDERS, {}, tmp_path)
    # Jokers first (red, black), then rank high to low, suits ♠ ♥ ♣ ♦, a copy after its diamond.
    assert got["rank"] == [
        "RJ",
        "BJ",
        "AD",
        "KS",
        "KH",
        "9S",
        "9C",
        "7S",
        "7D",
        "7D2",
        "4C",
        "2S",
        "2H",
    ]
    assert got["suit"] == [
        "RJ",
        "BJ",
        "KS",
        "9S",
        "7S",
        "2S",
        "KH",
        "2H",
        "9C",
        "4C",
        "AD",
        "7D",
        "7D2",
    ]
    # Groups first: the three sevens, then the pairs high to low, then the singles.
    assert got["count"] == [
        "RJ",
        "BJ",
        "7S",
        "7D",
        "7D2",
        "KS",
        "KH",
        "9S",
        "9C",
        "2S",
        "2H",
        "AD",
        "4C",
    ]
    assert got["cycle"] == ["suit", "count", "rank"]
    assert got["straight"] == ["2D", "3H", "4S", "5C", "6S"]
    assert got["wheel"] == ["AH", "2D", "3C", "4S", "5S"]
    assert got["jokerStraight"] == ["9S", "RJ", "JS", "QS", "KS"]
    assert got["fullHouse"] == ["2S", "2H", "2D", "KS", "KH"]
    fill = got["fill"]
    assert fill[0]["back"] == ["2S", "3S", "4S", "5S", "6S"] and fill[0]["hand"] == []
    assert fill[1]["front"] == ["2S", "3S", "4S"]
    assert fill[2]["middle"] == ["2S", "3S", "4S", "5S", "6S"]
    assert fill[3]["front"] == ["AS", "2S", "3S"]  # the row's own card stays
    assert fill[4] is None  # two rows still open
    assert fill[5]["back"] == ["2S", "3S", "4S", "5S", "6S"] and fill[5]["tray"] == [
        "7S",
        "8S",
        "9S",
    ]


OPENING = """
const hand = "7C 2S AS KH 5H 7D QD 3D AH 4C KS 6S 7H".split(" ");
const best = { front: ["KS", "KH", "QD"], middle: ["2S", "3D", "4C", "5H", "6S"],
  back: ["7C", "7D", "7H", "AS", "AH"], categories: ["pair", "straight", "full_house"] };
const other = { front: ["AS", "AH", "QD"], middle: ["2S", "3D", "4C", "5H", "6S"],
  back: ["7C", "7D", "7H", "KS", "KH"], categories: ["pair", "straight", "full_house"] };
const cfg = (opening) => ({ position: 0, player_id: "1", username: "me", seats: 2,
  base_score: 100, names: {}, opening });
const dealt = (opening, suggestions) => S.applyEvent(S.initialState(cfg(opening)),
  { version: 1, type: "hand", payload: { cards: hand, suggestions } });
const late = (opening) => S.withHandSuggestions(dealt(opening, null),
  { cards: hand, suggestions: [best, other] });
const touched = (() => {
  const state = dealt("suggested", null);
  const moved = S.withLayout(state, Object.assign({}, state.layout,
    { hand: state.layout.hand.filter((c) => c !== "AS"), front: ["AS"] }));
  return S.withHandSuggestions(moved, { cards: hand, suggestions: [best, other] });
})();
const draft = { front: ["AS", "AH", "QD"], middle: [], back: [], hand: [] };
return {
  suggested: dealt("suggested", [best, other]).layout,
  sorted: dealt("sorted", [best, other]).layout,
  asDealt: dealt(null, [best, other]).layout,
  pending: dealt("suggested", null).layout,
  late: late("suggested").layout,
  lateSorted: late("sorted").layout,
  touched: touched.layout,
  draftWins: S.layoutFromYou({ hand, suggestions: [best], draft }, 0, "suggested"),
};
"""


def test_6_the_hand_opens_as_the_first_suggestion_or_sorted_and_a_draft_wins(
    tmp_path: Path,
) -> None:
    got = run_js(OPENING, {}, tmp_path)
    by_rank = ["AS", "AH", "KS", "KH", "QD", "7H", "7C", "7D", "6S", "5H", "4C", "3D", "2S"]
    rows = {"front": ["KS", "KH", "QD"], "middle": ["2S", "3D", "4C", "5H", "6S"]}
    rows["back"] = ["7C", "7D", "7H", "AS", "AH"]
    assert got["suggested"] == {"hand": [], **rows}
    assert got["sorted"] == {"hand": by_rank, "front": [], "middle": [], "back": []}
    dealt_order = ["7C", "2S", "AS", "KH", "5H", "7D", "QD", "3D", "AH", "4C", "KS", "6S", "7H"]
    assert got["asDealt"]["hand"] == dealt_order  # the replay and the reducer's own tests
    # The suggestions a moment after the hand: sorted meanwhile, laid out when they come...
    assert got["pending"]["hand"] == by_rank
    assert got["late"] == {"hand": [], **rows}
    assert got["lateSorted"]["hand"] == by_rank and got["lateSorted"]["front"] == []
    # ... unless the player has moved a card meanwhile.
    assert got["touched"]["front"] == ["AS"] and len(got["touched"]["hand"]) == 12
    # A saved draft (a reload, a reconnect) wins over the default layout.
    assert got["draftWins"]["front"] == ["AS", "AH", "QD"]
    assert got["draftWins"]["middle"] == [] and len(got["draftWins"]["hand"]) == 10

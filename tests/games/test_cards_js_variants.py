"""static/games/cards.js on the variant decks (RULES.md §12), against the engine.

The page's live foul check and category names must agree with games/rules/hands.py on rows
holding copies of diamonds (``7D2``) and jokers (``RJ``, ``BJ``): the same category, the same
joker values (RowHand.jokers), the same keys, so every comparison and every foul decision is
the engine's. Each test runs one Node process over a batch; skipped where Node is missing.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from collections import Counter
from itertools import combinations_with_replacement
from pathlib import Path
from typing import Any

import pytest

from games.rules.cards import Card, Deck, parse_cards, sort_cards
from games.rules.hands import RowHand, evaluate, foul_rows

SCRIPT = Path(__file__).resolve().parents[2] / "static" / "games" / "cards.js"

pytestmark = pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")

# Every deck with copies or jokers: 65 and 78 cards, and 54 / 67 / 80 with the jokers.
VARIANT_DECKS = [Deck(1, 0), Deck(2, 0), Deck(0, 2), Deck(1, 2), Deck(2, 2)]
FULL_DECK = Deck(2, 2)

# Rows in, for each: what the engine's RowHand says; `pairs` compared with compareHands;
# `arrangements` through foulRows.
RUNNER = """
global.window = {}; global.document = {};
require(process.argv[1]);
const C = window.ShisanshuiCards;
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
const hands = job.rows.map((r) => C.evaluate(r.cards, r.a2345));
const out = {
  rows: hands.map((h) => ({
    size: h.size, category: h.category, digits: h.digits, key: h.key, cross: h.cross,
    jokers: h.jokers,
  })),
  pairs: (job.pairs || []).map(([i, j]) => C.compareHands(hands[i], hands[j])),
  fouls: (job.arrangements || []).map((a) => C.foulRows(a, a.a2345).rows),
};
process.stdout.write(JSON.stringify(out));
"""


def _node(runner: str, payload: object) -> Any:
    run = subprocess.run(
        ["node", "-e", runner, str(SCRIPT)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return json.loads(run.stdout)


def _engine(cards: list[str], a2345: str) -> RowHand:
    return evaluate(parse_cards(cards, deck=FULL_DECK), a2345)


def _expected(hand: RowHand) -> dict[str, Any]:
    return {
        "size": hand.size,
        "category": hand.category.id,
        "digits": list(hand.digits),
        "key": hand.key,
        "cross": hand.cross,
        "jokers": {str(joker): str(value) for joker, value in hand.jokers},
    }


def _check_rows(rows: list[dict[str, Any]], pairs: list[tuple[int, int]]) -> None:
    """Node and the engine agree on every row and on every listed pair."""
    answer = _node(RUNNER, {"rows": rows, "pairs": pairs})
    engine = [_engine(r["cards"], r["a2345"]) for r in rows]
    for row, hand, got in zip(rows, engine, answer["rows"], strict=True):
        assert got == _expected(hand), row
    for (i, j), got in zip(pairs, answer["pairs"], strict=True):
        assert got == engine[i].compare(engine[j]), (rows[i], rows[j])


# ---- random arrangements from every variant deck -------------------------------------------


def _pools(deck: Deck, rng: random.Random) -> list[list[Card]]:
    """Card pools that make every category common, each of at least 13 cards."""
    cards = list(deck.cards)
    few_ranks = set(rng.sample(range(2, 15), 4))
    straights = {14, 2, 3, 4, 5, 6, 10, 11, 12, 13}
    return [
        cards,
        [c for c in cards if c.is_joker or c.rank in few_ranks],
        [c for c in cards if c.is_joker or c.suit == 3 or c.rank >= 12],  # diamonds and copies
        [c for c in cards if c.is_joker or c.rank in straights],
        [c for c in cards if c.is_joker or c.suit in (0, 3)],
    ]


def _arrangements(deck: Deck, n: int, seed: int) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        pool = rng.choice(_pools(deck, rng))
        cards = rng.sample(pool, 13)
        jokers = [c for c in pool if c.is_joker]
        if jokers and i % 2:  # half the hands hold both jokers, often in one row
            naturals = [c for c in cards if not c.is_joker][: 13 - len(jokers)]
            cards = naturals + jokers
            rng.shuffle(cards)
            if i % 4 == 1:
                at = rng.choice([0, 3, 8])
                rest = [c for c in cards if not c.is_joker]
                cards = rest[:at] + jokers + rest[at:]
        a2345 = rng.choice(["lowest", "second"])
        rows = {"front": cards[:3], "middle": cards[3:8], "back": cards[8:]}
        out.append({r: [str(c) for c in row] for r, row in rows.items()} | {"a2345": a2345})
    return out


@pytest.mark.parametrize("deck", VARIANT_DECKS, ids=lambda d: f"{d.size}cards")
def test_12_random_rows_of_each_variant_deck_agree_with_the_engine(deck: Deck) -> None:
    arrangements = _arrangements(deck, 1500, seed=deck.size)
    rows = [
        {"cards": a[r], "a2345": a["a2345"]}
        for a in arrangements
        for r in ("front", "middle", "back")
    ]
    # Every pair of rows within an arrangement, and random pairs across the batch (3 against
    # 5 cards too), with the same a2345 so the comparison means something.
    rng = random.Random(deck.size + 1)
    pairs = [
        (3 * k + a, 3 * k + b)
        for k in range(len(arrangements))
        for a, b in ((0, 1), (1, 2), (0, 2), (2, 1))
    ]
    by_rule: dict[str, list[int]] = {"lowest": [], "second": []}
    for i, row in enumerate(rows):
        by_rule[row["a2345"]].append(i)
    for indices in by_rule.values():
        pairs += [(rng.choice(indices), rng.choice(indices)) for _ in range(10_000)]
    answer = _node(RUNNER, {"rows": rows, "pairs": pairs, "arrangements": arrangements})

    engine = [_engine(r["cards"], r["a2345"]) for r in rows]
    seen = Counter()
    for row, hand, got in zip(rows, engine, answer["rows"], strict=True):
        assert got == _expected(hand), row
        seen[(hand.size, hand.category.id, bool(hand.jokers))] += 1
    for (i, j), got in zip(pairs, answer["pairs"], strict=True):
        assert got == engine[i].compare(engine[j]), (rows[i], rows[j])
    for k, (arrangement, got) in enumerate(zip(arrangements, answer["fouls"], strict=True)):
        assert got == list(foul_rows(*engine[3 * k : 3 * k + 3])), arrangement

    # The batch really exercises the variants: jokers in both row sizes, five of a kind,
    # and (with copies) flushes holding a pair.
    if deck.jokers:
        assert seen[(3, "trips", True)] and seen[(5, "straight_flush", True)]
        assert seen[(5, "five_of_a_kind", True)]
    if deck.extra_suits:
        assert any(h.category.id == "flush" and len(set(h.digits)) < 5 for h in engine), (
            "no flush with a pair"
        )
    assert sum(1 for f in answer["fouls"] if f) > 100


# ---- every rank pattern with jokers (exhaustive) --------------------------------------------

SUIT_TEXT = "SHCD"


def _cards_for(ranks: tuple[int, ...], how: str) -> list[str] | None:
    """Natural cards of these ranks: all diamonds (copies for repeats), all hearts, or mixed
    suits; None when the deck has no such cards."""
    symbols = "23456789TJQKA"
    seen: Counter[int] = Counter()
    out = []
    for r in ranks:
        k = seen[r]
        seen[r] += 1
        if how == "diamonds":
            if k > 2:
                return None
            out.append(f"{symbols[r - 2]}D{'' if k == 0 else k + 1}")
        elif how == "hearts":
            if k:
                return None
            out.append(f"{symbols[r - 2]}H")
        else:
            if k > 3:
                return None
            out.append(symbols[r - 2] + SUIT_TEXT[(k + r) % 4])
    if how == "mixed" and len({c[1] for c in out}) == 1:
        if len(out) == 1:
            return None
        # One suit means distinct ranks, so another suit for the first card is free.
        out[0] = out[0][0] + SUIT_TEXT[(SUIT_TEXT.index(out[0][1]) + 1) % 4]
    return out


def _pattern_rows() -> list[dict[str, Any]]:
    """Every 3- and 5-card row with one or two jokers, by the naturals' ranks and suits.

    Which joker (and in which order) and where the jokers sit vary with the pattern; the
    ``second`` wheel rule is tried too where the naturals could make A2345."""
    rows = []
    for size in (3, 5):
        for count in (1, 2):
            naturals = size - count
            for n, ranks in enumerate(combinations_with_replacement(range(14, 1, -1), naturals)):
                jokers = (
                    [["RJ"], ["BJ"]][n % 2] if count == 1 else [["RJ", "BJ"], ["BJ", "RJ"]][n % 2]
                )
                at = sum(ranks) % (naturals + 1)
                rules = ("lowest", "second") if set(ranks) <= {14, 2, 3, 4, 5} else ("lowest",)
                for how in ("diamonds", "hearts", "mixed"):
                    cards = _cards_for(ranks, how)
                    if cards is None:
                        continue
                    for a2345 in rules:
                        rows.append({"cards": cards[:at] + jokers + cards[at:], "a2345": a2345})
    return rows


def test_12_2_every_rank_pattern_with_jokers_agrees_with_the_engine() -> None:
    rows = _pattern_rows()
    assert len(rows) > 5_000
    rng = random.Random(122)
    same_rule = [i for i, r in enumerate(rows) if r["a2345"] == "lowest"]
    pairs = [(rng.choice(same_rule), rng.choice(same_rule)) for _ in range(20_000)]
    _check_rows(rows, pairs)


# ---- the examples of RULES.md §12 -----------------------------------------------------------


def _js(rows: list[str], pairs: list[tuple[int, int]]) -> dict[str, Any]:
    return _node(
        RUNNER, {"rows": [{"cards": r.split(), "a2345": "lowest"} for r in rows], "pairs": pairs}
    )


def test_12_2_examples() -> None:
    rows = [
        "AS KS 9S 5S BJ",  # 0: flush A-A-K-9-5
        "AS KS QS 9S 5S",  # 1: flush A-K-Q-9-5
        "AS AH RJ",  # 2: trips of aces in front
        "9S TS JS QS BJ",  # 3: king-high straight flush
        "7C 7D 7H 7S RJ",  # 4: five sevens
        "TS JS QS KS AS",  # 5: the royal straight flush
        "AC AD AH AS KD",  # 6: four aces
        "RJ BJ 2C",  # 7: trips of deuces
        "9H TH JH QH KH",  # 8: a natural king-high straight flush
    ]
    answer = _js(rows, [(0, 1), (4, 5), (4, 6), (3, 8), (2, 6), (7, 1)])
    got = answer["rows"]
    assert (got[0]["category"], got[0]["digits"], got[0]["jokers"]) == (
        "flush",
        [14, 14, 13, 9, 5],
        {"BJ": "AS"},
    )
    assert got[1]["category"] == "flush"
    assert (got[2]["category"], got[2]["digits"]) == ("trips", [14, 14, 14])
    assert got[2]["jokers"] == {"RJ": "AS"}
    assert (got[3]["category"], got[3]["jokers"]) == ("straight_flush", {"BJ": "KS"})
    assert (got[4]["category"], got[4]["digits"]) == ("five_of_a_kind", [7, 7, 7, 7, 7])
    # A-A-K-9-5 beats A-K-Q-9-5; five sevens beat the royal flush and four aces; a joker's
    # straight flush ties the natural one; trips in front are below quads and a flush (§3.3).
    assert answer["pairs"] == [1, 1, 1, 0, -1, -1]
    for row, hand in zip(rows, got, strict=True):
        assert hand == _expected(_engine(row.split(), "lowest")), row


def test_12_2_the_red_joker_takes_the_higher_value_whatever_the_order_of_the_row() -> None:
    rows = ["AS 2H 3C RJ BJ", "AS 2H 3C BJ RJ", "BJ AS RJ 2H 3C", "BJ 9D RJ"]
    got = _js(rows, [])["rows"]
    assert [hand["jokers"] for hand in got[:3]] == [{"RJ": "5S", "BJ": "4S"}] * 3
    assert got[3]["jokers"] == {"RJ": "9D", "BJ": "9D"}  # the suit of the natural card
    for row, hand in zip(rows, got, strict=True):
        assert hand == _expected(_engine(row.split(), "lowest")), row


def test_12_3_a_pair_of_copies_in_a_flush_row_is_a_flush() -> None:
    rows = [
        "7D 7D2 AD KD 2D",  # 0: flush A-K-7-7-2
        "AD KD 8D3 6D 2D",  # 1: flush A-K-8-6-2 (a copy is a diamond)
        "AD KD 7D3 6D 2D",  # 2: flush A-K-7-6-2
        "7D 7D2 7D3 7S 7H",  # 3: five of a kind from copies
        "7D 7D2 7S 7H 7C",  # 4: five of a kind
        "7D 7D2 AS KD 2D",  # 5: a pair of sevens, not a flush
    ]
    answer = _js(rows, [(0, 1), (0, 2), (3, 4), (0, 5)])
    got = answer["rows"]
    assert [h["category"] for h in got] == [
        "flush",
        "flush",
        "flush",
        "five_of_a_kind",
        "five_of_a_kind",
        "pair",
    ]
    assert got[0]["digits"] == [14, 13, 7, 7, 2]
    assert answer["pairs"] == [-1, 1, 0, 1]
    for row, hand in zip(rows, got, strict=True):
        assert hand == _expected(_engine(row.split(), "lowest")), row


def test_12_3_five_of_a_kind_in_the_middle_over_a_straight_flush_is_a_foul() -> None:
    arrangement = {
        "front": ["AS", "AH", "RJ"],
        "middle": ["7C", "7D", "7H", "7S", "BJ"],
        "back": ["9H", "TH", "JH", "QH", "KH"],
        "a2345": "lowest",
    }
    swapped = dict(arrangement, middle=arrangement["back"], back=arrangement["middle"])
    # Trips of aces in front over a middle of trips of deuces (both with a joker).
    front_high = {
        "front": ["AS", "AH", "RJ"],
        "middle": ["2S", "2H", "BJ", "9C", "4D"],
        "back": ["TS", "JS", "QS", "KS", "8S"],
        "a2345": "lowest",
    }
    answer = _node(RUNNER, {"rows": [], "arrangements": [arrangement, swapped, front_high]})
    assert answer["fouls"] == [["middle", "back"], [], ["front", "middle"]]
    for case, got in zip((arrangement, swapped, front_high), answer["fouls"], strict=True):
        hands = [_engine(case[r], "lowest") for r in ("front", "middle", "back")]
        assert got == list(foul_rows(*hands))


# ---- card names, sorting and drawing --------------------------------------------------------

NAMES_RUNNER = """
global.window = {}; global.document = {};
require(process.argv[1]);
const C = window.ShisanshuiCards;
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify({
  cards: job.cards.map((c) => [C.rankOf(c), C.suitOf(c), C.isRed(c), C.isJoker(c), C.copyOf(c)]),
  byRank: job.hands.map(C.sortByRank),
  bySuit: job.hands.map(C.sortBySuit),
}));
"""


def test_12_card_names_and_screen_order() -> None:
    cards = list(FULL_DECK.cards)
    rng = random.Random(12)
    hands = [[str(c) for c in rng.sample(cards, 16)] for _ in range(300)]
    answer = _node(NAMES_RUNNER, {"cards": [str(c) for c in cards], "hands": hands})
    for card, got in zip(cards, answer["cards"], strict=True):
        if card.is_joker:
            expected = [0, None, str(card) == "RJ", True, 0]
        else:
            expected = [int(card.rank), "SHCD"[card.suit], card.suit.is_red, False, card.copy]
        assert got == expected, card
    by_suit = {
        c: (0, c.index, 0, 0) if c.is_joker else (1, int(c.suit), -int(c.rank), c.copy)
        for c in cards
    }
    for hand, by_rank, by_suit_got in zip(hands, answer["byRank"], answer["bySuit"], strict=True):
        parsed = parse_cards(hand, deck=FULL_DECK)
        # Rank order is the engine's canonical order: jokers (red, black), then rank, suit, copy.
        assert by_rank == [str(c) for c in sort_cards(parsed)]
        assert by_suit_got == [str(c) for c in sorted(parsed, key=by_suit.__getitem__)]


# A small DOM: enough of document.createElement for cardElement, read back as a tree.
DRAW_RUNNER = """
class Node {
  constructor(tag) { this.tagName = tag.toUpperCase(); this.className = ""; this.dataset = {};
    this.attributes = {}; this.children = []; this._text = ""; const self = this;
    this.classList = { add(...names) { names.forEach((n) => { if (!this.contains(n))
      self.className = (self.className ? self.className + " " : "") + n; }); },
      contains(n) { return self.className.split(" ").includes(n); } }; }
  setAttribute(k, v) { this.attributes[k] = String(v); }
  append(...nodes) { this.children.push(...nodes); }
  set textContent(v) { this._text = String(v); this.children = []; }
  get textContent() { return this._text + this.children.map((c) => c.textContent).join(""); }
  toJSON() { return { tag: this.tagName, cls: this.className, data: this.dataset,
    attrs: this.attributes, text: this._text, children: this.children }; }
}
global.document = { createElement: (tag) => new Node(tag) };
global.window = {};
require(process.argv[1]);
const C = window.ShisanshuiCards;
const job = JSON.parse(require("fs").readFileSync(0, "utf8"));
process.stdout.write(JSON.stringify(job.map(([card, options]) => C.cardElement(card, options))));
"""


def _find(node: dict[str, Any], cls: str) -> list[dict[str, Any]]:
    found = [node] if cls in node["cls"].split() else []
    for child in node["children"]:
        found += _find(child, cls)
    return found


def test_12_cards_are_drawn_as_copies_and_jokers() -> None:
    jobs = [
        ["AS", {}],
        ["7D", {}],
        ["7D2", {}],
        ["TD3", {"small": True}],
        ["RJ", {}],
        ["BJ", {"small": True}],
        ["RJ", {"stands": "AS"}],
        ["BJ", {"stands": "QH", "small": True}],
        ["RJ", {"stands": "<b>x</b>"}],  # not a card: ignored
        ["BJ", {"stands": "7D2"}],  # a joker stands for a standard card only
        ["7D2", {"stands": "AS"}],  # only a joker stands for anything
    ]
    drawn = _node(DRAW_RUNNER, jobs)
    plain, diamond, copy2, copy3, red, black, red_as, black_qh, bad, bad2, copy_stands = drawn

    assert plain["attrs"]["aria-label"] == "A♠" and not _find(plain, "copy")
    assert plain["cls"] == "card black" and diamond["cls"] == "card red"
    assert diamond["attrs"]["aria-label"] == "7♦" and not _find(diamond, "copy")
    # A copy is a red diamond with a small copy number beside its rank.
    for node, number, rank in ((copy2, "2", "7"), (copy3, "3", "10")):
        assert "red" in node["cls"].split() and "joker" not in node["cls"]
        assert _find(node, "rank")[0]["text"] == rank
        assert _find(node, "suit")[0]["text"] == "♦" and _find(node, "pip")[0]["text"] == "♦"
        (badge,) = _find(node, "copy")
        assert badge["tag"] == "SUP" and badge["text"] == number
        assert badge in _find(node, "corner")[0]["children"]
        assert f"copy {number}" in node["attrs"]["aria-label"]
        assert node["attrs"]["aria-label"].startswith(rank + "♦")
    assert copy2["data"]["card"] == "7D2" and "small" in copy3["cls"].split()
    # Jokers: 大王 red, 小王 black, drawn as jokers.
    assert red["cls"].split() == ["card", "red", "joker"]
    assert black["cls"].split() == ["card", "black", "small", "joker"]
    assert _find(red, "rank")[0]["text"] == "大" and _find(black, "rank")[0]["text"] == "小"
    assert _find(red, "suit")[0]["text"] == "王" and _find(red, "joker-word")[0]["text"] == "JOKER"
    assert red["attrs"]["aria-label"] == "Red joker 大王"
    assert black["attrs"]["aria-label"] == "Black joker 小王"
    assert not _find(red, "stands") and not _find(black, "stands")
    # What a placed joker stands for.
    (tag,) = _find(red_as, "stands")
    assert tag["text"] == "=A♠" and "black" in tag["cls"].split()
    assert red_as["data"]["stands"] == "AS" and "A♠" in red_as["attrs"]["aria-label"]
    (tag,) = _find(black_qh, "stands")
    assert tag["text"] == "=Q♥" and "red" in tag["cls"].split()
    for node in (bad, bad2, copy_stands):
        assert not _find(node, "stands") and "stands" not in node["data"]
    assert bad["attrs"]["aria-label"] == "Red joker 大王"


# ---- the look, in Chromium -----------------------------------------------------------------

CHROMIUM = Path(os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium"))
# The table page's style sheets, in the order games/templates/games/table.html links them.
TABLE_CSS = (
    "table.css",
    "table-felt.css",
    "table-compare.css",
    "table-cards.css",
    "table-arrange.css",
    "table-dialogs.css",
    "table-phone.css",
    "table-compact.css",
    "table-chat.css",
    "table-rules.css",
    "table-showdown.css",
)

LOOK_PAGE = """<!doctype html><html><head><meta charset="utf-8"><style>{css}</style></head>
<body style="background:#166140"><div class="table-page">
<div id="big" style="display:flex;gap:6px;padding:10px"></div>
<div style="width:30rem"><div id="fan" class="mini-cards" style="padding:10px"></div></div>
</div><script>{js}</script><script>
const C = window.ShisanshuiCards;
const big = [["RJ", {{stands: "AS"}}], ["BJ", {{}}], ["7D2", {{}}], ["TD3", {{}}], ["7D", {{}}]];
big.forEach(([c, o]) => document.getElementById("big").append(C.cardElement(c, o)));
const fan = [["RJ", {{stands: "7H"}}], ["7D2", {{}}], ["BJ", {{}}], ["7S", {{}}], ["7C", {{}}]];
const fanBox = document.getElementById("fan");
fan.forEach(([c, o]) => fanBox.append(C.cardElement(c, Object.assign({{small: true}}, o))));
</script></body></html>"""

LOOK_SCRIPT = """() => {
  const box = (n) => n.getBoundingClientRect();
  const shown = (n) => n && getComputedStyle(n).display !== "none";
  const inside = (inner, outer, right) => {
    const a = box(inner), b = box(outer);
    return a.left >= b.left - 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5 &&
      a.right <= (right === undefined ? b.right : right) + 0.5;
  };
  const cards = [...document.querySelectorAll(".card")];
  return cards.map((card, i) => {
    const next = card.nextElementSibling;
    // In a fan, what shows of a card is what lies left of the next card.
    const visibleRight = next ? box(next).left : box(card).right;
    const marks = [...card.querySelectorAll(".copy, .stands, .corner")].filter(shown);
    return {
      card: card.dataset.card,
      fan: Boolean(card.closest("#fan")),
      background: getComputedStyle(card).backgroundImage,
      color: getComputedStyle(card).color,
      pip: shown(card.querySelector(".pip")),
      word: shown(card.querySelector(".joker-word")),
      stands: shown(card.querySelector(".stands")),
      badge: shown(card.querySelector(".copy")),
      marksInside: marks.every((m) => inside(m, card)),
      marksVisible: marks.every((m) => inside(m, card, visibleRight)),
    };
  });
}"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="Chromium is not installed")
def test_12_copies_and_jokers_look_right_in_chromium(test_output: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    css = "\n".join((SCRIPT.parent / name).read_text() for name in (*TABLE_CSS, "cards.css"))
    page_html = LOOK_PAGE.format(css=css, js=SCRIPT.read_text())
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 400})
            page.set_content(page_html)
            page.screenshot(path=str(test_output / "variant-cards.png"))
            looks = page.evaluate(LOOK_SCRIPT)
        finally:
            browser.close()
    by = {(x["card"], x["fan"]): x for x in looks}
    plain = by[("7D", False)]["background"]
    red, black = by[("RJ", False)], by[("BJ", False)]
    # Jokers have their own face: red 大王, black 小王, JOKER on the side on full-size cards.
    assert red["background"] != plain and black["background"] != plain
    assert red["color"] == "rgb(198, 40, 40)" and black["color"] != red["color"]
    assert red["word"] and black["word"] and not by[("RJ", True)]["word"]
    # A placed joker shows what it stands for in place of its star; an unplaced one, the star.
    assert red["stands"] and not red["pip"]
    assert black["pip"] and not black["stands"]
    assert by[("RJ", True)]["stands"] and by[("BJ", True)]["pip"]
    # A copy is a red diamond with its number; a plain diamond has none.
    assert by[("7D2", False)]["badge"] and by[("TD3", False)]["badge"]
    assert by[("7D2", False)]["color"] == "rgb(198, 40, 40)" and not by[("7D", False)]["badge"]
    # The marks stay on their card, and in a fan on the part the next card leaves uncovered.
    assert all(x["marksInside"] for x in looks), looks
    assert all(x["marksVisible"] for x in looks if x["fan"]), looks

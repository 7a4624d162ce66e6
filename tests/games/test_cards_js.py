"""static/games/cards.js ranks rows exactly as games/rules/hands.py (RULES.md §3, §4).

The page's live foul check must never disagree with the server's. The script runs under Node
on the same random arrangements as the engine; skipped where Node is not installed.
"""

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from games.rules.cards import DECK, parse_cards
from games.rules.hands import evaluate, foul_rows

SCRIPT = Path(__file__).resolve().parents[2] / "static" / "games" / "cards.js"

RUNNER = """
global.window = {}; global.document = {};
require(process.argv[1]);
const C = window.ShisanshuiCards;
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map((c) => {
  const [f, m, b] = [c.front, c.middle, c.back].map((r) => C.evaluate(r, c.a2345));
  return {
    categories: [f.category, m.category, b.category],
    compare: [C.compareHands(f, m), C.compareHands(m, b), C.compareHands(f, b)],
    foul: C.foulRows(c, c.a2345).rows,
  };
});
process.stdout.write(JSON.stringify(out));
"""


def _cases(n: int) -> list[dict[str, object]]:
    """Random arrangements, many from small decks so every category turns up."""
    rng = random.Random(13)
    pools = [
        list(DECK),
        [c for c in DECK if c.rank >= 10 or c.rank <= 5],
        [c for c in DECK if c.suit <= 1],
        [c for c in DECK if c.rank in (14, 2, 3, 4, 5, 6)],
    ]
    cases = []
    for i in range(n):
        cards = rng.sample(pools[i % len(pools)], 13)
        cases.append(
            {
                "front": [str(c) for c in cards[:3]],
                "middle": [str(c) for c in cards[3:8]],
                "back": [str(c) for c in cards[8:]],
                "a2345": rng.choice(["lowest", "second"]),
            }
        )
    return cases


@pytest.mark.skipif(shutil.which("node") is None, reason="Node is not installed")
def test_3_and_4_cards_js_agrees_with_the_engine() -> None:
    cases = _cases(8000)
    run = subprocess.run(
        ["node", "-e", RUNNER, str(SCRIPT)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    answers = json.loads(run.stdout)
    for case, answer in zip(cases, answers, strict=True):
        front, middle, back = (
            evaluate(parse_cards(case[row]), str(case["a2345"]))
            for row in ("front", "middle", "back")
        )
        expected = {
            "categories": [front.category.id, middle.category.id, back.category.id],
            "compare": [front.compare(middle), middle.compare(back), front.compare(back)],
            "foul": list(foul_rows(front, middle, back)),
        }
        assert answer == expected, case

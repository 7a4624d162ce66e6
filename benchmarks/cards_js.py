"""How long the table page's card model (static/games/cards.js) takes to evaluate a row
holding both jokers (RULES.md §12.2): the live foul check runs it on every drag.

    .venv/bin/python -m benchmarks.cards_js [--rows 300]

Prints the median and the 90th percentile (ms) over random 5-card rows with RJ and BJ, each
row the best of three runs in one Node process (what the code costs, not what a busy machine
adds). The aim: well under 5 ms per row, so dragging stays smooth on a slow phone.
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
from pathlib import Path

from games.rules.cards import Deck

CARDS_JS = Path(__file__).resolve().parent.parent / "static" / "games" / "cards.js"
RUNNER = """
global.window = {}; global.document = {};
require(process.argv[1]);
const C = window.ShisanshuiCards;
const rows = JSON.parse(require("fs").readFileSync(0, "utf8"));
const times = rows.map((row) => {
  let best = Infinity;
  for (let k = 0; k < 3; k++) {
    const t = process.hrtime.bigint();
    C.evaluate(row, "lowest");
    best = Math.min(best, Number(process.hrtime.bigint() - t) / 1e6);
  }
  return best;
});
process.stdout.write(JSON.stringify(times));
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=300)
    args = parser.parse_args()
    rng = random.Random(5)
    naturals = [c for c in Deck(2, 2).cards if not c.is_joker]
    rows = [[str(c) for c in rng.sample(naturals, 3)] + ["RJ", "BJ"] for _ in range(args.rows)]
    out = subprocess.run(
        ["node", "-e", RUNNER, str(CARDS_JS)],
        input=json.dumps(rows),
        capture_output=True,
        text=True,
        check=True,
    )
    times = sorted(json.loads(out.stdout)[20:])  # the first calls warm the JIT up
    print(f"rows with two jokers: {len(times)}")
    print(f"median ms: {times[len(times) // 2]:.3f}")
    print(f"p90 ms:    {times[int(len(times) * 0.9)]:.3f}")


if __name__ == "__main__":
    main()

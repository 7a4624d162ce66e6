"""How good is the engine's best arrangement? A reproducible simulation.

``python -m benchmarks.simulate_arrange [DEALS] [WORKERS]`` (default 20,000 deals, 2 workers).

Each deal gives four random hands. For every seat in turn, that seat arranges with the engine's
``best`` while the other three use a baseline heuristic, and the round is scored by the engine
under the default configuration (row bonuses, guns, run-over, home runs). A deal's figure is
the mean water of the ``best`` seat over its four rotations; the script prints the mean over
deals with its standard error, for each baseline:

* ``strongest_back``: the foul-free split with the strongest back, then middle, then front;
* ``strength_sum``: the foul-free split maximising the sum of the rows' percentiles among all
  hands of their size.

Every hand is arranged normally (a special hand's declaration is a separate choice). The deals
come from a fixed seed, so the figures are reproducible.
"""

from __future__ import annotations

import math
import sys
import time
from multiprocessing import Pool

import numpy as np

from games.rules.arrange import Policy
from games.rules.cards import DECK
from games.rules.config import DEFAULT_CONFIG
from games.rules.scoring import Arranged, Seat, score_round

SEED = 20261129
BASELINES = ("strongest_back", "strength_sum")


def _arranged(order: list[int]) -> Arranged:
    cards = [DECK[i] for i in order]
    return Arranged(tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:]))


def play(deal: int) -> dict[str, float]:
    """The ``best`` seat's mean water in this deal against each baseline."""
    deck = np.random.default_rng([SEED, deal]).permutation(52)
    hands = [[int(x) for x in deck[13 * p : 13 * p + 13]] for p in range(4)]
    best = [_arranged(Policy("best").choose(h)) for h in hands]
    out = {}
    for name in BASELINES:
        base = [_arranged(Policy(name).choose(h)) for h in hands]
        total = 0
        for seat in range(4):
            seats = [Seat(str(p), best[p] if p == seat else base[p]) for p in range(4)]
            total += score_round(seats, DEFAULT_CONFIG).water[seat]
        out[name] = total / 4
    return out


def main() -> None:
    deals = int(sys.argv[1]) if len(sys.argv) > 1 else 20_000
    workers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
    start = time.perf_counter()
    with Pool(workers) as pool:
        results = pool.map(play, range(deals), chunksize=50)
    elapsed = time.perf_counter() - start
    print(f"{deals:,} four-player deals, seed {SEED}, default configuration ({elapsed:.0f} s)")
    print("water per deal of the seat using `best` against three seats using the baseline:")
    for name in BASELINES:
        values = np.array([r[name] for r in results])
        mean, se = values.mean(), values.std(ddof=1) / math.sqrt(len(values))
        print(f"  vs {name:<15} mean {mean:+.3f} water (SE {se:.3f}, z = {mean / se:.1f})")


if __name__ == "__main__":
    main()

"""How strong is each bot level (games.rules.levels)? A reproducible round robin.

    python -m benchmarks.bot_levels [--deals N] [--workers W] [--samples S] [--seats K]

Each deal gives one hand per seat of the classic deck under the default rules. The four
levels sit at the table together, and the deal is played once per rotation of the levels
around the seats, so that every level plays every hand of the deal once (K seats: the first K
levels of easy, normal, strong, expert per rotation; every level in turn when K < 4). Every
hand is arranged (a special hand's declaration is a separate choice: see games.rules.advice).
The engine scores each rotation (row bonuses, guns, run-over, home runs). A level's figure is
its mean water per hand played, with the standard error over deals; the levels' figures sum
to zero at every table (water is zero-sum). The deals come from a fixed seed.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from functools import partial
from multiprocessing import Pool

import numpy as np

from games.rules.cards import ALL_CARDS
from games.rules.config import DEFAULT_CONFIG
from games.rules.levels import EXPERT_SAMPLES, LEVELS, level_play
from games.rules.scoring import Seat, score_round

SEED = 20261202


def play(deal: int, seats: int, samples: int) -> dict[str, list[int]]:
    """Each level's water for every hand of this deal it played (over the rotations)."""
    config = DEFAULT_CONFIG
    rng = np.random.default_rng([SEED, deal])
    order = rng.permutation(52)
    hands = [tuple(ALL_CARDS[int(i)] for i in order[13 * p : 13 * (p + 1)]) for p in range(seats)]
    opponents = seats - 1
    plays = {
        (level, p): level_play(hands[p], config, level, opponents=opponents, samples=samples)
        for level in LEVELS
        for p in range(seats)
    }
    water: dict[str, list[int]] = {level: [] for level in LEVELS}
    for shift in range(len(LEVELS)):
        # Rotations of the levels around the table: every level plays every hand once.
        table = [LEVELS[(p + shift) % len(LEVELS)] for p in range(seats)]
        result = score_round(
            [Seat(str(p), plays[(lv, p)].arranged) for p, lv in enumerate(table)], config
        )
        for p, lv in enumerate(table):
            water[lv].append(result.water[p])
    return water


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.bot_levels", description=__doc__)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=EXPERT_SAMPLES, help="the expert's deals")
    parser.add_argument("--seats", type=int, default=4, choices=(2, 3, 4))
    args = parser.parse_args(argv)
    start = time.perf_counter()
    job = partial(play, seats=args.seats, samples=args.samples)
    with Pool(args.workers) as pool:
        results = pool.map(job, range(args.deals), chunksize=4)
    elapsed = time.perf_counter() - start
    print(
        f"bot levels: {args.deals} deals, {args.seats} seats, default rules, seed {SEED}, "
        f"expert samples {args.samples} ({elapsed:.0f} s)"
    )
    print(f"  {'level':<8} {'water/hand':>11} {'SE':>6} {'hands':>7}")
    for level in LEVELS:
        per_deal = np.array([np.mean(r[level]) for r in results if r[level]])
        hands = sum(len(r[level]) for r in results)
        mean = float(per_deal.mean())
        se = float(per_deal.std(ddof=1) / math.sqrt(len(per_deal))) if len(per_deal) > 1 else 0.0
        print(f"  {level:<8} {mean:>+11.3f} {se:>6.3f} {hands:>7}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Does the skill rating (games.rules.rating) order bots of known strength? A seeded simulation.

    python -m benchmarks.rating_simulation [--steps N] [--runs R] [--deals D] [--workers W]

Eight bots play at 4-seat tables of the classic deck under the default rules, through the pure
engine (no database). Seven have a known order: ``easy``, ``normal`` and ``strong`` (the bot
levels of games.rules.levels) and mixtures between neighbours, which play each hand as the
stronger level with probability p and as the weaker otherwise (their expected water is linear
in p, so their order is known): easy < easy/normal ⅓ < ⅔ < normal < normal/strong ⅓ < ⅔ <
strong. The eighth is the ``expert`` (a rollout player, with ``--samples`` deals per decision):
it plays in the pool for the levels' ratings, but is left out of the order, since
``benchmarks.bot_levels`` cannot tell it from ``strong`` within a standard error.

A step seats all eight bots at two tables in a random order:
- *plain*: each table plays a deal of its own, and every table's pairs are rated (plain games);
- *duplicate*: both tables play the same deal, and every pair is rated on its water minus the
  pair's par over the two tables (duplicate games, weighted).
So after N steps every bot has played N rounds. The deals' hands are arranged once by every
level (a bank of ``--deals`` seeded deals; steps draw from it at random). Each of ``--runs``
runs starts every bot at 1500 ± 350; the table prints the mean Kendall τ between the ratings
and the known order after N rounds, the first N at which that mean reaches 0.9, and the mean
rating each level ends with (the pool is centred on 1500).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from functools import partial
from multiprocessing import Pool

import numpy as np

from benchmarks.host_probes import host_speed_ms
from games.rules.cards import ALL_CARDS
from games.rules.config import DEFAULT_CONFIG
from games.rules.levels import LEVELS, Play, level_play
from games.rules.rating import (
    Game,
    Rating,
    duplicate_games,
    pair_pars,
    plain_games,
    rate_round,
)
from games.rules.scoring import Seat, score_round

SEED = 20261207
SEATS = 4
# (name, weaker level, stronger level, probability of playing the stronger), weakest first.
ORDERED: tuple[tuple[str, str, str, float], ...] = (
    ("easy", "easy", "easy", 0.0),
    ("easy/normal ⅓", "easy", "normal", 1 / 3),
    ("easy/normal ⅔", "easy", "normal", 2 / 3),
    ("normal", "normal", "normal", 0.0),
    ("normal/strong ⅓", "normal", "strong", 1 / 3),
    ("normal/strong ⅔", "normal", "strong", 2 / 3),
    ("strong", "strong", "strong", 0.0),
)
BOTS = (*ORDERED, ("expert", "expert", "expert", 0.0))
CHECKPOINTS = (10, 25, 50, 100, 200, 300, 400, 600, 800)
TARGET_TAU = 0.9

Deal = dict[tuple[str, int], Play]  # (level, position) -> the level's play of that hand


def deal_plays(deal: int, samples: int) -> Deal:
    """Every level's play of every hand of seeded deal ``deal``."""
    rng = np.random.default_rng([SEED, deal])
    order = rng.permutation(52)
    hands = [tuple(ALL_CARDS[int(i)] for i in order[13 * p : 13 * (p + 1)]) for p in range(SEATS)]
    return {
        (level, p): level_play(
            hands[p], DEFAULT_CONFIG, level, opponents=SEATS - 1, samples=samples
        )
        for level in LEVELS
        for p in range(SEATS)
    }


def kendall_tau(values: Sequence[float]) -> float:
    """Kendall's τ between ``values`` and their index order (ties count as half)."""
    n = len(values)
    score = 0.0
    for i in range(n):
        for j in range(i + 1, n):
            score += 1.0 if values[j] > values[i] else (0.0 if values[j] == values[i] else -1.0)
    return score / (n * (n - 1) / 2)


def table_water(
    deal: Deal, bots: Sequence[int], rng: np.random.Generator
) -> dict[tuple[int, int], float]:
    """The pairs' water (by positions) of ``bots`` (by position) playing ``deal``."""
    seats = []
    for position, bot in enumerate(bots):
        _, weak, strong, p = BOTS[bot]
        level = strong if rng.random() < p else weak
        seats.append(Seat(str(position), deal[(level, position)].arranged))
    result = score_round(seats, DEFAULT_CONFIG)
    return {(pair.a, pair.b): float(pair.water) for pair in result.pairs}


def run(seed: int, bank: Sequence[Deal], steps: int, duplicate: bool) -> np.ndarray:
    """One run: the ratings of every bot (rows) after every step (columns)."""
    rng = np.random.default_rng([SEED, seed, int(duplicate)])
    ratings = {bot: Rating() for bot in range(len(BOTS))}
    history = np.zeros((len(BOTS), steps))
    for step in range(steps):
        order = [int(b) for b in rng.permutation(len(BOTS))]
        tables = [order[:SEATS], order[SEATS:]]
        games: list[Game[int]] = []
        if duplicate:
            deal = bank[int(rng.integers(len(bank)))]
            waters = [table_water(deal, bots, rng) for bots in tables]
            pars = pair_pars(waters)
            for bots, water in zip(tables, waters, strict=True):
                games += duplicate_games(
                    (bots[a], bots[b], w, pars[(a, b)]) for (a, b), w in water.items()
                )
        else:
            for bots in tables:
                water = table_water(bank[int(rng.integers(len(bank)))], bots, rng)
                games += plain_games((bots[a], bots[b], w) for (a, b), w in water.items())
        ratings.update(rate_round(ratings, games))
        history[:, step] = [ratings[b].rating for b in range(len(BOTS))]
    return history


def summary(histories: list[np.ndarray]) -> tuple[np.ndarray, int | None, np.ndarray]:
    """Mean τ after every step, the first N from which it stays at the target or above (None:
    it does not), and each bot's mean final rating."""
    known = len(ORDERED)
    taus = np.array([[kendall_tau(h[:known, s]) for s in range(h.shape[1])] for h in histories])
    mean = taus.mean(axis=0)
    # The first N from which the mean τ stays at or above the target to the end of the run.
    first = None
    for step in range(len(mean), 0, -1):
        if mean[step - 1] < TARGET_TAU:
            break
        first = step
    final = np.array([h[:, -1] for h in histories]).mean(axis=0)
    return mean, first, final


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.rating_simulation", description=__doc__
    )
    parser.add_argument("--steps", type=int, default=600, help="rounds per bot in a run")
    parser.add_argument("--runs", type=int, default=12)
    parser.add_argument("--deals", type=int, default=300, help="the bank of arranged deals")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--samples", type=int, default=12, help="the expert's deals")
    args = parser.parse_args(argv)
    start = time.perf_counter()
    with Pool(args.workers) as pool:
        bank = pool.map(partial(deal_plays, samples=args.samples), range(args.deals), chunksize=8)
        results = {
            duplicate: pool.map(
                partial(run, bank=bank, steps=args.steps, duplicate=duplicate), range(args.runs)
            )
            for duplicate in (False, True)
        }
    elapsed = time.perf_counter() - start
    print(
        f"rating simulation: {len(BOTS)} bots at two 4-seat tables, default rules, "
        f"{args.runs} runs of {args.steps} rounds per bot, a bank of {args.deals} deals, "
        f"seed {SEED}, expert samples {args.samples} ({elapsed:.0f} s with {args.workers} "
        f"workers; host speed {host_speed_ms():.0f} ms: benchmarks.host_probes)"
    )
    stats = {duplicate: summary(histories) for duplicate, histories in results.items()}
    marks = [n for n in CHECKPOINTS if n <= args.steps]
    print(f"  Kendall τ against the known order of {len(ORDERED)} bots (mean over runs)")
    print(f"  {'rounds N':<10}" + "".join(f"{n:>7}" for n in marks) + f"  {'N for τ≥0.9':>12}")
    for duplicate, (mean, first, _) in stats.items():
        name = "duplicate" if duplicate else "plain"
        needed = "-" if first is None else str(first)
        print(f"  {name:<10}" + "".join(f"{mean[n - 1]:>7.3f}" for n in marks) + f"  {needed:>12}")
    print(f"  mean rating after {args.steps} rounds")
    print(f"  {'bot':<17} {'plain':>7} {'duplicate':>10}")
    for bot, (name, *_) in enumerate(BOTS):
        print(f"  {name:<17} {stats[False][2][bot]:>7.0f} {stats[True][2][bot]:>10.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

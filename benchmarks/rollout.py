"""How far is the engine's ``best`` arrangement from a much stronger player? A Monte-Carlo
rollout player and the gap measurement.

``python -m benchmarks.rollout [--deals D] [--samples S] [--seats N] [--gun-mode fixed|double]
[--workers W] [--seed SEED]`` (defaults: 40 deals, 100 samples per half, 4 seats, the default
gun mode, 1 worker); on the shared 2-core machine, under ``nice -n 19``.

D seeded deals of N hands, every hand arranged normally (special hands are ignored, as in
``benchmarks/simulate_arrange.py``). Each seat's hand gets its cross-fitted gain
(benchmarks.rollout_player), and a deal's figure is the mean over its seats. Printed: the mean
± standard error over deals; the share of hands whose pick differs from the engine's ``best``;
the in-sample gain (biased upwards, for reference); and the "real deal" figure, the pick's
water against the other seats' actual ``best`` minus the engine ``best``'s (by ``score_round``).
Everything is seeded from ``--seed``, the deal and the seat: the same whatever the workers.
"""

from __future__ import annotations

import argparse
import math
import shlex
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from multiprocessing import Pool

import numpy as np

from benchmarks.rollout_candidates import HAND, check_config
from benchmarks.rollout_player import rollout_hand
from benchmarks.rollout_water import score_with_engine, table_water
from games.rules.config import CHOICES, DEFAULT_CONFIG, RuleConfig

SEED = 20261130
GUN_MODES: tuple[str, ...] = CHOICES["gun_mode"]


def make_config(gun_mode: str = DEFAULT_CONFIG.gun_mode) -> RuleConfig:
    """The default configuration with the given gun mode."""
    return replace(DEFAULT_CONFIG, gun_mode=gun_mode)


def deal_hands(deal: int, config: RuleConfig, seats: int, seed: int) -> list[list[int]]:
    deck = np.array([c.index for c in config.deck.cards], dtype=np.int64)
    dealt = deck[np.random.default_rng([seed, deal, 0]).permutation(len(deck))]
    return [[int(x) for x in dealt[HAND * p : HAND * (p + 1)]] for p in range(seats)]


@dataclass(frozen=True)
class DealResult:
    deal: int
    gain: float  # mean over seats of the cross-fitted gain
    real: float  # mean over seats of (pick - engine best) water in the actual deal
    in_sample: float
    differs: int  # seats whose full pick differs from the engine's best
    half_differs: int  # half picks (2 per seat) that differ
    candidates: float  # mean Pareto candidates per seat (engine's best included)
    best_dominated: int  # seats whose engine best is not Pareto-optimal


def play_deal(deal: int, config: RuleConfig, seats: int, samples: int, seed: int) -> DealResult:
    hands = deal_hands(deal, config, seats, seed)
    results = [
        rollout_hand(hand, config, seats, samples, np.random.default_rng([seed, deal, 1, seat]))
        for seat, hand in enumerate(hands)
    ]
    actual = [r.candidates.best for r in results]
    base = score_with_engine(actual, config)
    actual_keys = np.array([r.candidates.keys[0] for r in results])
    real = []
    for seat, r in enumerate(results):
        played = list(actual)
        played[seat] = r.candidates.arranged(r.pick)
        water = score_with_engine(played, config)[seat]
        # The vectorised scorer must agree with the engine on the real deal too.
        others = np.delete(actual_keys, seat, axis=0)[None]
        fast = table_water(r.candidates.keys[[0, r.pick]], others, config)[0]
        if (int(fast[0]), int(fast[1])) != (base[seat], water):  # pragma: no cover
            raise AssertionError(f"deal {deal}, seat {seat}: table_water != score_round")
        real.append(water - base[seat])
    return DealResult(
        deal=deal,
        gain=float(np.mean([r.gain for r in results])),
        real=float(np.mean(real)),
        in_sample=float(np.mean([r.in_sample for r in results])),
        differs=sum(r.pick != 0 for r in results),
        half_differs=sum((p != 0) for r in results for p in r.half_picks),
        candidates=float(np.mean([len(r.candidates.keys) for r in results])),
        best_dominated=sum(not r.candidates.best_on_front for r in results),
    )


def mean_se(values: Sequence[float]) -> tuple[float, float]:
    arr = np.asarray(values, dtype=np.float64)
    se = float(arr.std(ddof=1) / math.sqrt(len(arr))) if len(arr) > 1 else math.nan
    return float(arr.mean()), se


@dataclass(frozen=True)
class Summary:
    deals: list[DealResult]
    seats: int

    @property
    def hands(self) -> int:
        return len(self.deals) * self.seats

    def figure(self, name: str) -> tuple[float, float]:
        return mean_se([getattr(d, name) for d in self.deals])

    @property
    def differs(self) -> float:
        return sum(d.differs for d in self.deals) / self.hands

    @property
    def half_differs(self) -> float:
        return sum(d.half_differs for d in self.deals) / (2 * self.hands)


def measure(
    deals: int, samples: int, seats: int, config: RuleConfig, workers: int = 1, seed: int = SEED
) -> Summary:
    check_config(config)
    if not 2 <= seats <= min(4, config.max_seats):
        raise ValueError("2 to 4 seats")
    run = partial(play_deal, config=config, seats=seats, samples=samples, seed=seed)
    if workers <= 1:
        results = [run(d) for d in range(deals)]
    else:
        with Pool(workers) as pool:
            results = pool.map(run, range(deals), chunksize=1)
    return Summary(results, seats)


def report(summary: Summary, args: argparse.Namespace, elapsed: float, argv: Sequence[str]) -> str:
    gain, gain_se = summary.figure("gain")
    real, real_se = summary.figure("real")
    ins, ins_se = summary.figure("in_sample")
    cands, _ = summary.figure("candidates")
    dominated = sum(d.best_dominated for d in summary.deals)
    lines = [
        f"command: python -m benchmarks.rollout {shlex.join(argv)}".rstrip(),
        f"D = {args.deals} deals, S = {args.samples} samples per half, N = {args.seats} seats, "
        f"gun mode {args.gun_mode}, seed {args.seed}, {args.workers} worker(s)",
        f"cross-fitted gain (rollout pick - engine best), water per hand: "
        f"{gain:+.3f} ± {gain_se:.3f} (SE over deals)",
        f"real deal (pick vs the others' actual best - engine best): {real:+.3f} ± {real_se:.3f}",
        f"in-sample gain (biased, for reference): {ins:+.3f} ± {ins_se:.3f}",
        f"pick differs from engine best: {summary.differs:.1%} of {summary.hands} hands "
        f"(half picks: {summary.half_differs:.1%})",
        f"Pareto candidates per hand: {cands:.1f} on average; "
        f"engine best not Pareto-optimal in {dominated} hand(s)",
        f"wall time {elapsed:.1f} s",
    ]
    return "\n".join(lines)


def parse_args(argv: Sequence[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.rollout",
        description="Cross-fitted gain of a Monte-Carlo rollout player over the engine's best.",
    )
    parser.add_argument("--deals", type=int, default=40, help="deals D (default 40)")
    parser.add_argument("--samples", type=int, default=100, help="samples per half S (default 100)")
    parser.add_argument("--seats", type=int, choices=(2, 3, 4), default=4, help="players N")
    parser.add_argument(
        "--gun-mode",
        choices=GUN_MODES,
        default=DEFAULT_CONFIG.gun_mode,
        help=f"the configuration's gun_mode (default {DEFAULT_CONFIG.gun_mode})",
    )
    parser.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    parser.add_argument("--seed", type=int, default=SEED, help=f"seed (default {SEED})")
    args = parser.parse_args(list(argv))
    if args.deals < 1 or args.samples < 1:
        parser.error("--deals and --samples must be positive")
    return args


def main(argv: Sequence[str] | None = None) -> str:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    config = make_config(args.gun_mode)
    start = time.perf_counter()
    summary = measure(args.deals, args.samples, args.seats, config, args.workers, args.seed)
    text = report(summary, args, time.perf_counter() - start, argv)
    print(text)
    return text


if __name__ == "__main__":
    main()

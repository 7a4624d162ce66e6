"""How far is the engine's ``best`` arrangement from a much stronger player? A Monte-Carlo
rollout player and the gap measurement.

``python -m benchmarks.rollout [--deals D] [--samples S] [--seats N] [--gun-mode fixed|double]
[--workers W] [--seed SEED]`` (defaults: 40 deals, 100 samples per half, 4 seats, the default
gun mode, 1 worker). For example, on the shared 2-core machine::

    nice -n 19 python -m benchmarks.rollout --deals 40 --samples 100 --seats 4 --gun-mode fixed

Method, for one hand of 13 cards under a :class:`RuleConfig` (every hand is arranged normally;
special-hand declarations are ignored, as in ``benchmarks/simulate_arrange.py``):

1. **Candidates.** Every foul-free split (front 3, middle 5, back 5) is keyed row by row with
   the engine's own row keys (``games.rules.vectorized.eval_cards5`` / ``eval_cards3``, which
   honour the ``a2345`` mode); splits with the same key triple score the same against anything,
   so one stands for each triple. A split is dropped when another is at least as strong in every
   row (Pareto dominance on the three keys). A split at least as strong in every row wins at
   least every row it won before, gets the same or a higher row bonus (the bonus grows with the
   row's category, :func:`pareto_is_exact` checks the configuration), guns at least whom it
   gunned and is gunned by no one new, so it scores at least as much against any opponents:
   the Pareto set holds an optimal split against every possible deal. The engine's own ``best``
   (``arrange(cards, config, limit=1, opponents=N-1).best``) is always scored too, as
   candidate 0, and wins exact ties.
2. **Samples.** The player knows only its 13 cards. A sample deals the unseen cards at random to
   the N−1 opponents (13 each), and every opponent plays the engine's ``best``. Opponents'
   arrangements are computed and keyed once per sample and reused for every candidate.
3. **Exact values.** Every candidate is valued against every sample exactly, by
   :func:`table_water`: a numpy version of ``games.rules.scoring.score_round`` for one seat
   (row water, row bonuses, guns, run-over, home runs and the gun mode) that the tests check is
   equal to ``score_round`` on random tables.
4. **Cross-fitting.** 2·S samples are drawn; the candidate with the highest total on half A is
   scored (against the engine's ``best``) on half B and vice versa. The hand's gain is the mean
   of the two held-out differences, free of the bias of picking and scoring on the same samples.
5. **Measurement.** D seeded deals of N hands; every seat's hand gets its cross-fitted gain, and
   a deal's figure is the mean over its seats. The script prints the mean ± standard error over
   deals, the fraction of hands where the rollout pick (over all 2·S samples) differs from the
   engine's ``best`` (different key triple), the in-sample gain (biased upwards, for reference)
   and the "real deal" figure: in the actual deal, the water the rollout pick scores against the
   other seats' actual engine-``best`` arrangements minus what the engine's ``best`` scored
   (scored with ``score_round`` itself).

Everything is seeded from ``--seed``, the deal number and the seat, so a run gives the same
figures whatever the number of workers.
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
import numpy.typing as npt

from games.rules.arrange import arrange
from games.rules.cards import ALL_CARDS, Card
from games.rules.config import CHOICES, DEFAULT_CONFIG, RuleConfig
from games.rules.hands import ROWS, Category, evaluate
from games.rules.scoring import Arranged, Seat, score_round
from games.rules.vectorized import (
    B3,
    B5,
    COMB3,
    COMB5,
    SPLIT_B,
    SPLIT_F,
    SPLIT_M,
    BoolArray,
    IntArray,
    eval_cards3,
    eval_cards5,
)

SEED = 20261130
GUN_MODES: tuple[str, ...] = CHOICES["gun_mode"]
HAND = 13


# -- configuration ------------------------------------------------------------------------------


def make_config(gun_mode: str = DEFAULT_CONFIG.gun_mode) -> RuleConfig:
    """The default configuration with the given gun mode."""
    return replace(DEFAULT_CONFIG, gun_mode=gun_mode)


def bonus_table(config: RuleConfig) -> IntArray:
    """(3 rows, 10 categories): the bonus the winner of a row gets for its category."""
    return np.array(
        [[config.bonus(row, Category(c)) for c in range(10)] for row in ROWS], dtype=np.int64
    )


def pareto_is_exact(config: RuleConfig) -> bool:
    """Whether "at least as strong in every row" implies "scores at least as much" here.

    True when every row's bonus never decreases with the category and, in ``fixed`` mode, a
    home run pays at least a gun (else turning a gun into a home run could lose water).
    """
    bonus = bonus_table(config)
    top = 10 if config.five_of_a_kind else 9
    reachable = [bonus[0][[0, 1, 3]], bonus[1][:top], bonus[2][:top]]  # a front row: 0, 1, 3
    monotone = all(bool((np.diff(row) >= 0).all()) for row in reachable)
    if config.gun_mode == "fixed" and config.home_run_water < config.gun_water:
        return False
    return monotone


def _check_config(config: RuleConfig) -> None:
    if config.spare_cards:
        raise ValueError("the rollout player plays 13-card hands (no spare cards)")
    if not pareto_is_exact(config):
        raise ValueError("this configuration's bonuses make the Pareto reduction inexact")


# -- candidates -----------------------------------------------------------------------------------


def pareto_mask(keys: IntArray) -> BoolArray:
    """For distinct rows of ``keys`` (n, 3): True where no other row is >= in every column.

    Columns are ranked densely; fronts are swept from the strongest down, keeping for every
    back rank the strongest middle seen at a higher front (``g``), so each front level is one
    vectorised 2-D check against the levels above and within itself.
    """
    n = len(keys)
    if n == 0:
        return np.zeros(0, dtype=bool)
    f = np.unique(keys[:, 0], return_inverse=True)[1].reshape(-1)
    m = np.unique(keys[:, 1], return_inverse=True)[1].reshape(-1)
    b = np.unique(keys[:, 2], return_inverse=True)[1].reshape(-1)
    nb = int(b.max()) + 1
    g = np.full(nb + 1, -1, dtype=np.int64)  # g[x]: strongest middle, higher fronts, back >= x
    dominated = np.zeros(n, dtype=bool)
    order = np.argsort(-f, kind="stable")
    levels, starts = np.unique(-f[order], return_index=True)
    bounds = [*starts.tolist(), n]
    for i in range(len(levels)):
        idx = order[bounds[i] : bounds[i + 1]]
        bi, mi = b[idx], m[idx]
        at = np.full(nb + 1, -1, dtype=np.int64)  # strongest middle at each back, this level
        np.maximum.at(at, bi, mi)
        suffix = np.maximum.accumulate(at[::-1])[::-1]  # back >= x, this level
        dominated[idx] = (g[bi] >= mi) | (suffix[bi + 1] >= mi) | (at[bi] > mi)
        g = np.maximum(g, suffix)
    return ~dominated


def split_keys(card_indices: Sequence[int], a2345: str) -> tuple[IntArray, IntArray, IntArray]:
    """The hand's card indices (sorted), its foul-free splits and their (front, middle, back)
    keys, an (n, 3) array."""
    idx = np.array(sorted(card_indices), dtype=np.int64)
    if len(idx) != HAND:
        raise ValueError(f"a hand has {HAND} cards, got {len(idx)}")
    k5, x5 = eval_cards5(idx[COMB5], a2345)
    k3 = eval_cards3(idx[COMB3])
    # back >= middle, middle >= front (RULES.md §4; a front row's cross key is its key).
    valid = (k5[SPLIT_B] >= k5[SPLIT_M]) & (x5[SPLIT_M] >= k3[SPLIT_F])
    splits = np.flatnonzero(valid)
    keys = np.column_stack((k3[SPLIT_F[splits]], k5[SPLIT_M[splits]], k5[SPLIT_B[splits]]))
    return idx, splits, keys


def row_keys(arranged: Arranged, a2345: str) -> tuple[int, int, int]:
    """The (front, middle, back) keys of an arrangement, by the engine's scalar evaluator."""
    front, middle, back = (evaluate(row, a2345).key for row in arranged.rows())
    return front, middle, back


def engine_best(cards: Sequence[Card], config: RuleConfig, opponents: int) -> Arranged:
    """What the engine plays: ``arrange(...).best`` against ``opponents`` opponents."""
    return arrange(cards, config, limit=1, opponents=opponents).best.arranged()


@dataclass(frozen=True)
class Candidates:
    """The splits the rollout player chooses from. Row 0 is the engine's ``best``; rows 1.. are
    the other Pareto-optimal key triples, each with one split standing for it."""

    cards: IntArray  # the hand's 13 card indices, sorted (what COMB3 / COMB5 refer to)
    keys: IntArray  # (C, 3) row keys
    splits: IntArray  # (C,) split index of each row (-1 for row 0: ``best`` holds it)
    best: Arranged  # the engine's best
    best_on_front: bool  # whether the engine's best is itself Pareto-optimal
    foul_free: int  # foul-free splits of the hand
    triples: int  # distinct key triples among them

    def arranged(self, row: int) -> Arranged:
        if row == 0:
            return self.best
        split = int(self.splits[row])
        f, m, b = int(SPLIT_F[split]), int(SPLIT_M[split]), int(SPLIT_B[split])
        cards = self.cards.tolist()

        def pick(comb: IntArray, i: int) -> tuple[Card, ...]:
            return tuple(ALL_CARDS[cards[j]] for j in comb[i].tolist())

        return Arranged(pick(COMB3, f), pick(COMB5, m), pick(COMB5, b))


def candidates(card_indices: Sequence[int], config: RuleConfig, opponents: int) -> Candidates:
    """The engine's best first, then every other Pareto-optimal key triple (see the module
    docstring)."""
    cards, splits, keys = split_keys(card_indices, config.a2345)
    # Distinct triples through dense ranks packed in one integer (np.unique on rows is slow).
    codes = np.zeros(len(keys), dtype=np.int64)
    for col in range(3):
        codes = codes * 2048 + np.unique(keys[:, col], return_inverse=True)[1].reshape(-1)
    _, first = np.unique(codes, return_index=True)
    first.sort()
    uniq, reps = keys[first], splits[first]
    front = pareto_mask(uniq)
    best = engine_best([ALL_CARDS[i] for i in card_indices], config, opponents)
    best_keys = np.array(row_keys(best, config.a2345), dtype=np.int64)
    same = (uniq == best_keys).all(axis=1)
    if not same.any():  # pragma: no cover - the engine never fouls
        raise AssertionError("the engine's best is not a foul-free split of the hand")
    others = front & ~same
    return Candidates(
        cards=cards,
        keys=np.vstack((best_keys[None, :], uniq[others])),
        splits=np.concatenate(([-1], reps[others])),
        best=best,
        best_on_front=bool(front[same].any()),
        foul_free=len(splits),
        triples=len(uniq),
    )


# -- exact scoring --------------------------------------------------------------------------------


def _categories(keys: IntArray) -> IntArray:
    """Category of each (front, middle, back) key in the last axis."""
    return np.stack((keys[..., 0] // B3, keys[..., 1] // B5, keys[..., 2] // B5), axis=-1)


def _bonuses(keys: IntArray, config: RuleConfig) -> IntArray:
    """The bonus each row would win (the same shape as ``keys``)."""
    cats = _categories(keys)
    table = bonus_table(config)
    return np.stack([table[r][cats[..., r]] for r in range(3)], axis=-1)


def _guns(res: npt.NDArray[np.int8], run_over: bool) -> tuple[BoolArray, BoolArray]:
    """(gun for, gunned) from per-row results in the last axis (RULES.md §7.2)."""
    won, lost = (res > 0), (res < 0)
    if run_over:
        gun_for, gunned = won.any(-1) & ~lost.any(-1), lost.any(-1) & ~won.any(-1)
    else:
        gun_for, gunned = won.all(-1), lost.all(-1)
    return np.asarray(gun_for), np.asarray(gunned)


def opponents_gun_the_rest(opp_keys: IntArray, config: RuleConfig) -> BoolArray:
    """(T, M): whether opponent j of sample t guns every other opponent of that sample."""
    res = np.sign(opp_keys[:, :, None, :] - opp_keys[:, None, :, :]).astype(np.int8)
    gun, _ = _guns(res, config.run_over_counts_as_gun)
    m = opp_keys.shape[1]
    gun |= np.eye(m, dtype=bool)[None, :, :]
    return np.asarray(gun.all(axis=2))


def table_water(
    keys: IntArray,
    opp_keys: IntArray,
    config: RuleConfig,
    opp_guns_rest: BoolArray | None = None,
) -> IntArray:
    """Exact water of a seat playing each candidate against each sample (``score_round``'s
    ``water`` of that seat, everyone arranged normally).

    ``keys``: (C, 3) the candidates' row keys; ``opp_keys``: (T, M, 3) the M opponents' row keys
    in each of T samples; ``opp_guns_rest``: (T, M) from :func:`opponents_gun_the_rest` (computed
    when omitted). Returns (T, C) integer water.
    """
    if opp_guns_rest is None:
        opp_guns_rest = opponents_gun_the_rest(opp_keys, config)
    n_players = opp_keys.shape[1] + 1
    my_bonus = _bonuses(keys, config)[None, :, None, :]  # (1, C, 1, 3)
    opp_bonus = _bonuses(opp_keys, config)[:, None, :, :]  # (T, 1, M, 3)
    res = np.sign(keys[None, :, None, :] - opp_keys[:, None, :, :]).astype(np.int8)
    won, lost = res > 0, res < 0
    base = (
        res.sum(axis=-1, dtype=np.int64)
        + np.where(won, my_bonus, 0).sum(axis=-1)
        - np.where(lost, opp_bonus, 0).sum(axis=-1)
    )  # (T, C, M)
    gun_for, gunned = _guns(res, config.run_over_counts_as_gun)
    home_runs = n_players >= config.home_run_min_players
    my_hr = (gun_for.all(axis=-1) & home_runs)[:, :, None]  # (T, C, 1)
    opp_hr = gunned & opp_guns_rest[:, None, :] & home_runs  # (T, C, M)
    extra: IntArray
    if config.gun_mode == "fixed":
        gw, hw = config.gun_water, config.home_run_water
        extra = gun_for * np.where(my_hr, hw, gw) - gunned * np.where(opp_hr, hw, gw)
    else:  # double: the pair's water doubled, doubled again for a home run
        extra = base * (gun_for * np.where(my_hr, 3, 1) + gunned * np.where(opp_hr, 3, 1))
    return np.asarray((base + extra).sum(axis=-1), dtype=np.int64)


def score_with_engine(arrangements: Sequence[Arranged], config: RuleConfig) -> tuple[int, ...]:
    """Every seat's water by the engine's own ``score_round``."""
    seats = [Seat(str(i), a) for i, a in enumerate(arrangements)]
    return score_round(seats, config).water


# -- samples and cross-fitting -------------------------------------------------------------------


def draw_samples(
    card_indices: Sequence[int],
    config: RuleConfig,
    seats: int,
    count: int,
    rng: np.random.Generator,
) -> IntArray:
    """(count, seats-1, 13) opponents' hands: the unseen cards dealt at random, per sample."""
    held = set(card_indices)
    unseen = np.array([c.index for c in config.deck.cards if c.index not in held], dtype=np.int64)
    need = (seats - 1) * HAND
    out = np.empty((count, seats - 1, HAND), dtype=np.int64)
    for t in range(count):
        out[t] = rng.permutation(unseen)[:need].reshape(seats - 1, HAND)
    return out


def opponents_keys(hands: IntArray, config: RuleConfig) -> IntArray:
    """(T, M, 3) row keys of the engine's best for every opponent hand of every sample."""
    t, m, _ = hands.shape
    fronts, fives = [], []
    for hand in hands.reshape(t * m, HAND).tolist():
        best = engine_best([ALL_CARDS[i] for i in hand], config, m)
        fronts.append([c.index for c in best.front])
        fives += [[c.index for c in best.middle], [c.index for c in best.back]]
    k3 = eval_cards3(np.array(fronts, dtype=np.int64))
    k5 = eval_cards5(np.array(fives, dtype=np.int64), config.a2345)[0].reshape(-1, 2)
    return np.column_stack((k3, k5)).reshape(t, m, 3)


def halves(samples: int) -> tuple[IntArray, IntArray]:
    """Sample indices of half A and half B (of 2·samples)."""
    return np.arange(samples), np.arange(samples, 2 * samples)


def pick(water: IntArray) -> int:
    """The candidate with the highest total water; the first (row 0, the engine's best) wins
    exact ties."""
    return int(np.argmax(water.sum(axis=0)))


def cross_fit(water: IntArray) -> tuple[float, int, int]:
    """(gain, pick on A, pick on B) from (2S, C) water, row 0 being the engine's best: the pick
    of each half is scored on the other against the engine's best, and the two held-out
    differences are averaged."""
    a, b = halves(len(water) // 2)
    pick_a, pick_b = pick(water[a]), pick(water[b])
    gain_b = float((water[b, pick_a] - water[b, 0]).mean())
    gain_a = float((water[a, pick_b] - water[a, 0]).mean())
    return (gain_a + gain_b) / 2, pick_a, pick_b


@dataclass(frozen=True)
class HandResult:
    gain: float  # cross-fitted held-out gain of the rollout pick over the engine's best
    in_sample: float  # the full pick's gain on the samples it was picked on (biased upwards)
    pick: int  # the pick over all 2·S samples (0: the engine's best)
    half_picks: tuple[int, int]
    candidates: Candidates


def rollout_hand(
    card_indices: Sequence[int],
    config: RuleConfig,
    seats: int,
    samples: int,
    rng: np.random.Generator,
) -> HandResult:
    """The rollout player's decision for one hand and its cross-fitted gain."""
    cand = candidates(card_indices, config, seats - 1)
    hands = draw_samples(card_indices, config, seats, 2 * samples, rng)
    opp = opponents_keys(hands, config)
    water = table_water(cand.keys, opp, config)
    gain, pick_a, pick_b = cross_fit(water)
    full = pick(water)
    in_sample = float((water[:, full] - water[:, 0]).mean())
    return HandResult(gain, in_sample, full, (pick_a, pick_b), cand)


# -- the measurement -------------------------------------------------------------------------------


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
    _check_config(config)
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

"""The splits a rollout player chooses from: the engine's ``best``, then the Pareto set.

Every foul-free split (front 3, middle 5, back 5) is keyed row by row with the engine's own row
keys (``games.rules.vectorized.eval_cards5`` / ``eval_cards3``, which honour the ``a2345``
mode); splits with the same key triple score the same against anything, so one stands for each
triple. A split is dropped when another is at least as strong in every row. One at least as
strong in every row wins at least every row the other won, gets the same or a higher row bonus
(the bonus grows with the row's category: :func:`pareto_is_exact` checks the configuration),
guns at least whom it gunned and is gunned by no one new, so it scores at least as much against
any opponents: the Pareto set holds an optimal split against every possible deal. The engine's
own ``best`` (``arrange(cards, config, limit=1, opponents=N-1).best``) is always candidate 0,
and wins exact ties.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.rollout_water import bonus_table
from games.rules.arrange import arrange
from games.rules.cards import ALL_CARDS, Card
from games.rules.config import RuleConfig
from games.rules.hands import evaluate
from games.rules.scoring import Arranged
from games.rules.vectorized import (
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

HAND = 13


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


def check_config(config: RuleConfig) -> None:
    """Refuse a configuration the rollout player cannot measure exactly."""
    if config.spare_cards:
        raise ValueError("the rollout player plays 13-card hands (no spare cards)")
    if not pareto_is_exact(config):
        raise ValueError("this configuration's bonuses make the Pareto reduction inexact")


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

"""Arranging 16 cards: which 13 to play and how (RULES.md §12.4), under the same model.

The expected-water model of :mod:`games.rules.expected_water` scores a split (front, middle, back);
with three spare cards a split is any three disjoint rows of the 16 cards (40,360,320 of
them, 560 times the 72,072 of a 13-card hand), too many to score them all, so
:func:`arrange16` searches them by branch and bound over the back row.

The answer is the split of highest expected water, ties going to the first in a fixed order
(back, then middle and front), so it is deterministic and never a foul; the suggestions are the
best split of each category triple among the backs scored (always including the best split's).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from .cards import ALL_CARDS, Card
from .config import RuleConfig
from .errors import WrongCountError
from .expected_water import hand_order, row_classes, water_model
from .hands import Category
from .tables import Tables
from .vectorized import B3, B5, IntArray, all_combinations, eval_cards3, eval_cards5

N = 16
COMB5 = all_combinations(N, 5)  # (4368, 5)
COMB3 = all_combinations(N, 3)  # (560, 3)
_BITS = 1 << np.arange(N, dtype=np.int64)
MASK5 = _BITS[COMB5].sum(axis=1)
MASK3 = _BITS[COMB3].sum(axis=1)
_LOOK5 = np.full(1 << N, -1, dtype=np.int64)
_LOOK5[MASK5] = np.arange(len(MASK5))
_LOOK3 = np.full(1 << N, -1, dtype=np.int64)
_LOOK3[MASK3] = np.arange(len(MASK3))


def _local_splits() -> tuple[IntArray, IntArray, IntArray]:
    """Given a back, the other 11 cards: every middle (462) and, for each, every front of the
    6 left (20). Returns local middles (462, 5), and per split its middle and front (9240, 3)."""
    mids = all_combinations(11, 5)
    fronts3 = all_combinations(6, 3)
    split_m, split_f = [], []
    for i, mid in enumerate(mids.tolist()):
        rest = np.array([p for p in range(11) if p not in mid], dtype=np.int64)
        split_m.append(np.full(len(fronts3), i, dtype=np.int64))
        split_f.append(rest[fronts3])
    return mids, np.concatenate(split_m), np.concatenate(split_f)


LOC_MIDS, LOC_M, LOC_F = _local_splits()
# The 165 fronts of 11 cards, and each split's front among them (a gather, not 3 lookups).
LOC_FRONTS = all_combinations(11, 3)
_LOCAL3 = np.zeros(1 << 11, dtype=np.int64)
_LOCAL3[(1 << LOC_FRONTS).sum(axis=1)] = np.arange(len(LOC_FRONTS))
LOC_F_INDEX = _LOCAL3[(1 << LOC_F).sum(axis=1)]
BATCH = 12  # backs scored at once
CHUNK = 96  # backs whose bounds are tightened at once
# At most this many backs are scored (deterministically, best bound first), which bounds the
# time of a hand whose bounds stay loose: the search is exact unless a hand reaches it (rare
# hands where many backs stay within their bounds), and the answer is then the best split of
# the backs with the best bounds, still deterministic.
MAX_BACKS = 240


@dataclass(frozen=True, slots=True)
class SpareSplit:
    front: tuple[Card, ...]
    middle: tuple[Card, ...]
    back: tuple[Card, ...]
    unused: tuple[Card, ...]
    categories: tuple[Category, Category, Category]
    value: float


@lru_cache(maxsize=1)
def _rest_positions() -> IntArray:
    """For every back (4368), the 11 positions not in it, ascending."""
    inside = np.zeros((len(COMB5), N), dtype=bool)
    np.put_along_axis(inside, COMB5, True, axis=1)
    return np.nonzero(~inside)[1].reshape(len(COMB5), 11)


def arrange16(
    card_indices: Sequence[int],
    config: RuleConfig,
    opponents: int,
    limit: int,
    tables: Tables | None = None,
) -> list[SpareSplit]:
    """The best ``limit`` splits of distinct category triples of 13 of these 16 cards.

    Branch and bound over the back row, exactly:

    1. Every 5- and 3-card subset of the 16 cards is evaluated once (4,368 + 560 rows).
    2. For each back row ``b`` an upper bound of every split with that back: its own EV, plus
       the best middle EV among rows no stronger than ``b``, plus the best front EV, with the
       gun terms bounded by the product of the best no-loss rates (the model's value only
       grows with a row's EV and no-loss rate and only shrinks with its no-win rate). For the
       backs that might win the bound is tightened to middles and fronts disjoint from ``b``.
    3. Backs are scored exactly (all their 9,240 middle/front pairs, foul-free ones only), best
       bound first, until no remaining bound beats the best split found, or ``MAX_BACKS``
       backs have been scored.
    """
    if len(card_indices) != N:
        raise WrongCountError(f"a hand with spare cards has {N} cards, got {len(card_indices)}")
    idx = np.array(hand_order(card_indices), dtype=np.int64)
    variant = not config.deck.is_classic
    cls = row_classes(config.a2345, variant)
    model = water_model(config, opponents, tables)
    k5, x5 = eval_cards5(idx[COMB5], config.a2345)
    k3 = eval_cards3(idx[COMB3])
    c5 = np.searchsorted(cls.keys5, k5)
    cx5 = np.searchsorted(cls.cross, x5)
    c3 = np.searchsorted(cls.cross, k3)
    fm, fb, ff = model.middle[c5], model.back[c5], model.front[c3]
    bonus_m, bonus_b, bonus_f = model.bonus_middle[c5], model.bonus_back[c5], model.bonus3[c3]

    # -- bounds --------------------------------------------------------------------------
    n = opponents
    cfg = config
    hr = n + 1 >= cfg.home_run_min_players and n >= 2

    g0 = model.gun_rate
    lost = 3.0 * cfg.row_water + (
        model.bonus3.mean() + model.bonus_middle.mean() + model.bonus_back.mean()
    )

    def bound(ev: np.ndarray, nl: np.ndarray, against: np.ndarray | float = 0.0) -> np.ndarray:
        """Upper bound of a split's value from the sum of row EVs (at least the real one), the
        chance to gun (``nl``, at least the real one) and to be gunned (``against``, at most
        the real one)."""
        if cfg.gun_mode == "fixed":
            extra = cfg.home_run_water - cfg.gun_water
            out = n * (ev + cfg.gun_water * (nl - against))
            if hr:
                out = out + (
                    n * extra * (nl**n - against * g0 ** (n - 1))
                    if extra > 0
                    else -n * extra * g0 ** (n - 1)
                )
            return np.asarray(out)
        won = 3.0 * cfg.row_water + bonus_f.max() + bonus_m.max() + bonus_b.max()
        out = n * (ev + nl * won - against * lost)
        if hr:
            out = out + n * 2.0 * (nl**n * won - against * g0 ** (n - 1) * lost)
        return np.asarray(out)

    def against(nw: np.ndarray, tie: np.ndarray) -> np.ndarray:
        """Lower bound of the chance to be gunned from the rows' lowest no-win rates (``nw``:
        their product) and highest tie rates (``tie``: their product)."""
        if cfg.run_over_counts_as_gun:
            return np.asarray(np.maximum(0.0, nw - tie))
        return nw

    order5 = np.argsort(c5, kind="stable")
    sorted_c5 = c5[order5]
    cum_ev = np.maximum.accumulate(fm[order5, 0])
    cum_nl = np.maximum.accumulate(fm[order5, 1])
    upto = np.searchsorted(sorted_c5, c5, side="right") - 1
    cum_nw = np.minimum.accumulate(fm[order5, 2])
    cum_t = np.maximum.accumulate(fm[order5, 3])
    ub0 = bound(
        fb[:, 0] + cum_ev[upto] + ff[:, 0].max(),
        fb[:, 1] * cum_nl[upto] * ff[:, 1].max(),
        against(fb[:, 2] * cum_nw[upto] * ff[:, 2].min(), fb[:, 3] * cum_t[upto] * ff[:, 3].max()),
    )

    rest_all = _rest_positions()
    best_value = -np.inf
    best_key = (0, 0)
    per_triple: dict[int, tuple[float, int, int, int, int]] = {}  # triple -> value, b, m, f, local

    def score(backs: np.ndarray) -> None:
        nonlocal best_value, best_key
        rest = rest_all[backs]  # (B, 11)
        bits = _BITS[rest]
        mids = _LOOK5[bits[:, LOC_MIDS].sum(axis=2)]  # (B, 462)
        m = mids[:, LOC_M]  # (B, 9240)
        f = _LOOK3[bits[:, LOC_FRONTS].sum(axis=2)][:, LOC_F_INDEX]  # (B, 9240)
        b = np.broadcast_to(backs[:, None], m.shape)
        ok = (c5[m] <= c5[b]) & (c3[f] <= cx5[m])
        rows, local = np.nonzero(ok)
        if len(rows) == 0:
            return
        bb, mm, fr = backs[rows], m[rows, local], f[rows, local]

        def won() -> np.ndarray:
            return np.asarray(bonus_f[fr] + bonus_m[mm] + bonus_b[bb])

        values, triple = model.values_of(ff[fr], fm[mm], fb[bb], won)
        keys = bb * 10_000 + local  # the fixed order of ties
        for t in np.unique(triple):
            sel = np.flatnonzero(triple == t)
            top = values[sel].max()
            cand = sel[values[sel] == top]
            i = int(cand[np.argmin(keys[cand])])
            entry = (float(top), int(bb[i]), int(mm[i]), int(fr[i]), int(keys[i]))
            old = per_triple.get(int(t))
            if old is None or (entry[0], -entry[4]) > (old[0], -old[4]):
                per_triple[int(t)] = entry
            if (entry[0], -entry[4]) > (best_value, -best_key[1]):
                best_value, best_key = entry[0], (int(t), entry[4])

    def tight(part: np.ndarray) -> np.ndarray:
        """Bounds of these backs with middles (no stronger than the back) and fronts both
        disjoint from the back."""
        free5 = (MASK5[None, :] & MASK5[part][:, None]) == 0
        okm = free5 & (c5[None, :] <= c5[part][:, None])
        ev_m = np.where(okm, fm[None, :, 0], -np.inf).max(axis=1)
        nl_m = np.where(okm, fm[None, :, 1], 0.0).max(axis=1)
        nw_m = np.where(okm, fm[None, :, 2], 1.0).min(axis=1)
        t_m = np.where(okm, fm[None, :, 3], 0.0).max(axis=1)
        free3 = (MASK3[None, :] & MASK5[part][:, None]) == 0
        ev_f = np.where(free3, ff[None, :, 0], -np.inf).max(axis=1)
        nl_f = np.where(free3, ff[None, :, 1], 0.0).max(axis=1)
        nw_f = np.where(free3, ff[None, :, 2], 1.0).min(axis=1)
        t_f = np.where(free3, ff[None, :, 3], 0.0).max(axis=1)
        return bound(
            fb[part, 0] + ev_m + ev_f,
            fb[part, 1] * nl_m * nl_f,
            against(fb[part, 2] * nw_m * nw_f, fb[part, 3] * t_m * t_f),
        )

    # Best loose bound first; each chunk's bounds are tightened, then its backs are scored
    # best bound first while a bound beats the best split found. The best only grows, so a
    # back skipped could never have won.
    by_bound = np.argsort(-ub0, kind="stable")
    score(by_bound[:4])
    scored = 4
    pos = 4
    while pos < len(by_bound) and ub0[by_bound[pos]] > best_value and scored < MAX_BACKS:
        chunk = by_bound[pos : pos + CHUNK]
        chunk = chunk[ub0[chunk] > best_value]
        ub1 = tight(chunk)
        keep = np.argsort(-ub1, kind="stable")
        chunk, ub1 = chunk[keep], ub1[keep]
        i = 0
        while i < len(chunk) and ub1[i] > best_value and scored < MAX_BACKS:
            batch = chunk[i : i + BATCH]
            batch = batch[ub1[i : i + BATCH] > best_value]
            score(batch)
            scored += len(batch)
            i += BATCH
        pos += CHUNK

    ranked = sorted(per_triple.items(), key=lambda kv: (-kv[1][0], kv[1][4]))[: max(1, limit)]
    out = []
    for _triple, (value, b, m, f, _) in ranked:
        used = set(COMB5[b].tolist()) | set(COMB5[m].tolist()) | set(COMB3[f].tolist())
        cards = [ALL_CARDS[int(i)] for i in idx]
        out.append(
            SpareSplit(
                tuple(cards[p] for p in COMB3[f]),
                tuple(cards[p] for p in COMB5[m]),
                tuple(cards[p] for p in COMB5[b]),
                tuple(cards[p] for p in range(N) if p not in used),
                (
                    Category(int(k3[f]) // B3),
                    Category(int(k5[m]) // B5),
                    Category(int(k5[b]) // B5),
                ),
                round(value, 4),
            )
        )
    return out

"""Vectorised row evaluation and the 72,072 splits of a 13-card hand (numpy).

The keys computed here are bit-for-bit those of :mod:`games.rules.hands` (a test checks it),
so a hand can be scored by the scalar path and arranged by this one. Nothing here evaluates
a hand inside the split loop: a 13-card hand has only 1,287 five-card and 286 three-card
subsets, each evaluated once; a split is three indices into those.

Variant decks (RULES.md §12): :func:`eval_cards5` / :func:`eval_cards3` take card *indices*
(copies and jokers included). A row with jokers is looked up in completion tables built once:
for each multiset of the other cards' ranks (and whether they share a suit) and each number of
jokers, the strongest key over every rank the jokers can take — the same search as the scalar
:func:`hands.evaluate`, done for all rows at once.
"""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, combinations_with_replacement
from typing import Any

import numpy as np
import numpy.typing as npt

from .hands import WHEEL_STRENGTH, B

IntArray = npt.NDArray[np.integer[Any]]
BoolArray = npt.NDArray[np.bool_]

B2, B3, B4, B5 = B**2, B**3, B**4, B**5

COMB5: IntArray = np.array(list(combinations(range(13), 5)), dtype=np.int64)  # (1287, 5)
COMB3: IntArray = np.array(list(combinations(range(13), 3)), dtype=np.int64)  # (286, 3)


def _split_indices() -> tuple[IntArray, IntArray, IntArray]:
    """Every (front, middle, back) split as indices into COMB3, COMB5, COMB5."""
    weights = 1 << np.arange(13, dtype=np.int64)
    mask5 = (weights[COMB5]).sum(axis=1)
    mask3 = (weights[COMB3]).sum(axis=1)
    lookup3 = np.full(1 << 13, -1, dtype=np.int64)
    lookup3[mask3] = np.arange(len(mask3))
    middle, back = np.nonzero((mask5[:, None] & mask5[None, :]) == 0)
    front = lookup3[((1 << 13) - 1) ^ mask5[back] ^ mask5[middle]]
    return front.astype(np.int64), middle.astype(np.int64), back.astype(np.int64)


SPLIT_F, SPLIT_M, SPLIT_B = _split_indices()  # 72,072 each
N_SPLITS = len(SPLIT_F)
BACKS_PER_MIDDLE = 56  # C(8, 5): the splits run middle by middle, 56 backs each
assert (np.repeat(np.arange(len(COMB5)), BACKS_PER_MIDDLE) == SPLIT_M).all()


def _group_tables(width: int) -> tuple[IntArray, IntArray]:
    """For rows whose ranks are sorted high to low, index rank-equality patterns.

    Pattern bit ``i`` says card ``i`` has the rank of card ``i + 1``. For each pattern: the
    order that lists cards by (group size, rank) descending — stable, since ranks already
    descend — and the largest and second-largest group sizes.
    """
    perms, shapes = [], []
    for code in range(1 << (width - 1)):
        group, sizes = [0], [1]
        for i in range(width - 1):
            if code >> i & 1:
                sizes[-1] += 1
            else:
                sizes.append(1)
            group.append(len(sizes) - 1)
        perms.append(sorted(range(width), key=lambda p: -sizes[group[p]]))
        top = sorted(sizes, reverse=True) + [0]
        shapes.append(top[0] * 8 + top[1])
    return np.array(perms, dtype=np.int64), np.array(shapes, dtype=np.int64)


_PERM5, _SHAPE5 = _group_tables(5)
_PERM3, _SHAPE3 = _group_tables(3)
_POW4 = np.array([1, 2, 4, 8], dtype=np.int64)
# Category of a non-straight, non-flush 5-card row by shape (largest * 8 + second group).
_CAT_BY_SHAPE5 = np.zeros(64, dtype=np.int64)
for _shape, _cat in (
    (4 * 8 + 1, 7),
    (3 * 8 + 2, 6),
    (3 * 8 + 1, 3),
    (2 * 8 + 2, 2),
    (2 * 8 + 1, 1),
    (5 * 8 + 0, 9),  # five of a kind (RULES.md §12.3)
):
    _CAT_BY_SHAPE5[_shape] = _cat


def eval5(ranks: IntArray, suits: IntArray, a2345: str = "lowest") -> tuple[IntArray, IntArray]:
    """Keys of many 5-card rows at once: (key, cross key), as in :func:`hands.evaluate`.

    Each row's ranks must be sorted high to low (true of COMB5 over a hand sorted that way).
    """
    code = (ranks[:, :-1] == ranks[:, 1:]) @ _POW4
    d = np.take_along_axis(ranks, _PERM5[code], axis=1)
    shape = _SHAPE5[code]
    flush = (suits == suits[:, :1]).all(axis=1)
    distinct = code == 0
    top = d[:, 0]
    straight = distinct & (top - d[:, 4] == 4)
    wheel = distinct & (top == 14) & (d[:, 1] == 5)
    strength = np.where(straight, 2 * top, np.where(wheel, WHEEL_STRENGTH[a2345], 0))
    is_str = strength > 0
    cat = _CAT_BY_SHAPE5[shape]
    cat = np.where(flush & (cat < 5), 5, cat)
    cat = np.where(is_str, np.where(flush, 8, 4), cat)
    # A flush is read card by card, repeated ranks included (§12.3); with distinct ranks (every
    # 52-card flush) that is the same order.
    repeated = (cat == 5) & ~distinct
    if repeated.any():  # never with the 52-card deck
        d = np.where(repeated[:, None], ranks, d)
    head3 = d[:, 0] * B2 + d[:, 1] * B + d[:, 2]
    packed = head3 * B2 + d[:, 3] * B + d[:, 4]
    key = cat * B5 + np.where(is_str, strength * B4, packed)
    # Ranks matter against a front row only in the categories a front row can have.
    cross = cat * B3 + np.where((cat <= 3) & (cat != 2), head3, 0)
    return key, cross


def eval3(ranks: IntArray) -> IntArray:
    """Keys of many 3-card rows at once (ranks sorted high to low in each row)."""
    code = (ranks[:, :-1] == ranks[:, 1:]) @ _POW4[:2]
    d = np.take_along_axis(ranks, _PERM3[code], axis=1)
    top = _SHAPE3[code] // 8
    cat = np.where(top == 3, 3, np.where(top == 2, 1, 0))
    return cat * B3 + d[:, 0] * B2 + d[:, 1] * B + d[:, 2]


def sort_desc(ranks: IntArray, suits: IntArray) -> tuple[IntArray, IntArray]:
    """Sort each row's cards by rank high to low (for rows not drawn from a sorted hand)."""
    order = np.argsort(-ranks, axis=1, kind="stable")
    return np.take_along_axis(ranks, order, axis=1), np.take_along_axis(suits, order, axis=1)


def category5(keys: IntArray) -> IntArray:
    return keys // B5


def category3(keys: IntArray) -> IntArray:
    return keys // B3


# -- card indices, copies and jokers (RULES.md §12) ------------------------------------------

JOKER_MIN = 78  # indices 78 (RJ) and 79 (BJ)
_IDX = np.arange(80, dtype=np.int64)
# Rank and suit of every card index; a copy is a diamond; jokers get rank 0 and suit -1.
CARD_RANK: IntArray = np.where(
    _IDX < 52, _IDX // 4 + 2, np.where(_IDX < 78, (_IDX - 52) % 13 + 2, 0)
)
CARD_SUIT: IntArray = np.where(_IDX < 52, _IDX % 4, np.where(_IDX < 78, 3, -1))
_POW13 = 13 ** np.arange(4, -1, -1, dtype=np.int64)


def _multisets(width: int) -> IntArray:
    """Every multiset of ``width`` ranks, each row high to low."""
    return np.array(list(combinations_with_replacement(range(14, 1, -1), width)), dtype=np.int64)


@lru_cache(maxsize=4)
def _wild_tables(a2345: str) -> dict[tuple[int, int, int], tuple[IntArray, IntArray]]:
    """(row size, jokers, suited) -> (key, cross) indexed by the other cards' rank code.

    The rank code of the other ``size - jokers`` cards (high to low) is base 13 over their
    ranks minus 2. ``suited``: the other cards share a suit, so the jokers can take it.
    """
    out: dict[tuple[int, int, int], tuple[IntArray, IntArray]] = {}
    for size in (3, 5):
        for jokers in (1, 2):
            nat = _multisets(size - jokers)
            fills = _multisets(jokers)
            rows = np.concatenate(
                (np.repeat(nat, len(fills), axis=0), np.tile(fills, (len(nat), 1))), axis=1
            )
            rows = -np.sort(-rows, axis=1)
            code = (nat - 2) @ _POW13[5 - (size - jokers) :]
            for suited in (0, 1):
                if size == 3:
                    key = eval3(rows)
                    cross = key
                else:
                    suits = (
                        np.zeros_like(rows) if suited else np.tile([0, 1, 0, 0, 0], (len(rows), 1))
                    )
                    key, cross = eval5(rows, suits, a2345)
                best = key.reshape(len(nat), len(fills)).argmax(axis=1)
                pick = np.arange(len(nat)) * len(fills) + best
                tk = np.zeros(13 ** (size - jokers), dtype=np.int64)
                tx = np.zeros(13 ** (size - jokers), dtype=np.int64)
                tk[code], tx[code] = key[pick], cross[pick]
                out[(size, jokers, suited)] = (tk, tx)
    return out


def _eval_cards(idx: IntArray, a2345: str) -> tuple[IntArray, IntArray]:
    """(key, cross) of rows of card indices of any deck (RULES.md §12)."""
    idx = np.asarray(idx, dtype=np.int64)
    size = idx.shape[1]
    joker = idx >= JOKER_MIN
    n_jokers = joker.sum(axis=1)
    # Jokers sort last (rank 0), the other cards high to low.
    ranks = CARD_RANK[idx]
    order = np.argsort(-ranks, axis=1, kind="stable")
    ranks = np.take_along_axis(ranks, order, axis=1)
    suits = np.take_along_axis(CARD_SUIT[idx], order, axis=1)
    key = np.zeros(len(idx), dtype=np.int64)
    cross = np.zeros(len(idx), dtype=np.int64)
    plain = n_jokers == 0
    if plain.any():
        if size == 5:
            key[plain], cross[plain] = eval5(ranks[plain], suits[plain], a2345)
        else:
            key[plain] = cross[plain] = eval3(ranks[plain])
    if not plain.all():
        tables = _wild_tables(a2345)
        for j in (1, 2):
            sel = n_jokers == j
            if not sel.any():
                continue
            nat = size - j
            r, su = ranks[sel, :nat], suits[sel, :nat]
            code = (r - 2) @ _POW13[5 - nat :]
            suited = (su == su[:, :1]).all(axis=1)
            tk1, tx1 = tables[(size, j, 1)]
            tk0, tx0 = tables[(size, j, 0)]
            key[sel] = np.where(suited, tk1[code], tk0[code])
            cross[sel] = np.where(suited, tx1[code], tx0[code])
    return key, cross


def eval_cards5(idx: IntArray, a2345: str = "lowest") -> tuple[IntArray, IntArray]:
    """(key, cross key) of many 5-card rows given as card indices (copies, jokers allowed)."""
    return _eval_cards(idx, a2345)


def eval_cards3(idx: IntArray) -> IntArray:
    """Keys of many 3-card rows given as card indices (copies, jokers allowed)."""
    return _eval_cards(idx, "lowest")[0]


def all_combinations(n: int, k: int) -> IntArray:
    """Every k-subset of range(n) in lexicographic order, built with array operations."""
    out = np.arange(n, dtype=np.int64)[:, None]
    for _ in range(k - 1):
        last = out[:, -1]
        counts = n - 1 - last
        rep = np.repeat(out, counts, axis=0)
        starts = np.cumsum(counts) - counts
        offs = np.arange(int(counts.sum()), dtype=np.int64) - np.repeat(starts, counts)
        out = np.column_stack((rep, np.repeat(last + 1, counts) + offs))
    return out

"""Vectorised row evaluation and the 72,072 splits of a 13-card hand (numpy).

The keys computed here are bit-for-bit those of :mod:`games.rules.hands` (a test checks it),
so a hand can be scored by the scalar path and arranged by this one. Nothing here evaluates
a hand inside the split loop: a 13-card hand has only 1,287 five-card and 286 three-card
subsets, each evaluated once; a split is three indices into those.
"""

from __future__ import annotations

from itertools import combinations
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

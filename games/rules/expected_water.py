"""The expected-water model that ranks arrangements (RULES.md §6), as per-class tables.

From the row tables (:mod:`games.rules.tables`: how the rows opponents play are distributed),
a candidate row's chances to win, tie and lose give its row water, and the three rows'
together the chances to gun, to be gunned and to score a home run (:class:`WaterModel`). The
expected water of a split is the sum of these terms. Row keys are numbered by class (their
rank among every possible key), so the terms are looked up per class, never per hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations_with_replacement
from typing import Protocol

import numpy as np

from .cards import ALL_CARDS, sort_key
from .config import RuleConfig
from .hands import Category
from .tables import KeyDistribution, Tables, deck_name, load
from .vectorized import B3, B5, COMB5, IntArray, eval3, eval5

FloatArray = np.ndarray

POW13 = 13 ** np.arange(4, -1, -1, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class RowClasses:
    """Every possible row key of one ``a2345`` mode, sorted: a key's position is its class.

    Classes are small integers that order exactly like keys, so the 72,072-split foul check
    and the per-split gathers work on int16 arrays. Lookup tables indexed by a row's ranks
    (high to low, base 13) give the class directly, so a hand's 1,287 + 286 rows are
    classified with a few array gathers.
    """

    keys5: IntArray  # the 7,462 five-card keys
    cross: IntArray  # every 3-card key, plus one entry per 5-card-only category
    plain5: IntArray  # rank code -> class of the row when not all one suit
    suited5: IntArray  # rank code -> class when all one suit
    cross5: IntArray  # rank code -> cross class (the row compared with a front row)
    cross5_suited: IntArray
    front: IntArray  # 3-card rank code -> cross class


def _descending(width: int) -> IntArray:
    """Every multiset of ``width`` ranks (at most four of a rank), ranks high to low."""
    rows = np.array(list(combinations_with_replacement(range(14, 1, -1), width)), dtype=np.int64)
    if width > 4:
        rows = rows[~(rows == rows[:, :1]).all(axis=1)]  # no five of a kind
    return rows


@lru_cache(maxsize=4)
def row_classes(a2345: str, variant: bool = False) -> RowClasses:
    """The class universe of one ``a2345`` mode: the classic deck's, or with ``variant`` that
    of the variant decks (RULES.md §12)."""
    if variant:
        return _variant_classes(a2345)
    t = load()
    keys5 = t.all5[a2345].keys
    # 5-card categories a front row cannot have: two pair, then straight and above.
    cross = np.union1d(t.all3.keys, np.array([2, 4, 5, 6, 7, 8], dtype=np.int64) * B3)
    tables = []
    r5 = _descending(5)
    code5 = (r5 - 2) @ POW13
    for suits in (np.tile([0, 1, 0, 0, 0], (len(r5), 1)), np.zeros_like(r5)):
        key, x = eval5(r5, suits, a2345)
        for values, space in ((key, keys5), (x, cross)):
            table = np.zeros(13**5, dtype=np.int16)
            table[code5] = np.searchsorted(space, values)
            tables.append(table)
    r3 = _descending(3)
    front = np.zeros(13**3, dtype=np.int16)
    front[(r3 - 2) @ POW13[2:]] = np.searchsorted(cross, eval3(r3))
    return RowClasses(keys5, cross, tables[0], tables[2], tables[1], tables[3], front)


def _variant_classes(a2345: str) -> RowClasses:
    """The class universe of the variant decks (RULES.md §12): every key a 5-card row can
    have with copies and jokers (any rank multiset, five of a kind included, suited or not)
    and every 3-card key. The rank-code tables are unused: rows are evaluated by card index."""
    r5 = np.array(list(combinations_with_replacement(range(14, 1, -1), 5)), dtype=np.int64)
    keys, cross = [], []
    for suits in (np.tile([0, 1, 0, 0, 0], (len(r5), 1)), np.zeros_like(r5)):
        key, x = eval5(r5, suits, a2345)
        keys.append(key)
        cross.append(x)
    r3 = np.array(list(combinations_with_replacement(range(14, 1, -1), 3)), dtype=np.int64)
    keys5 = np.unique(np.concatenate(keys))
    cross_all = np.unique(np.concatenate(cross + [eval3(r3)]))
    empty = np.zeros(0, dtype=np.int16)
    return RowClasses(keys5, cross_all, empty, empty, empty, empty, empty)


def hand_order(card_indices: Sequence[int]) -> list[int]:
    """Canonical order of a hand: rank high to low, suit, copy; jokers last (so a subset's
    standard cards come first, as the joker completion tables expect)."""
    if all(i < 52 for i in card_indices):  # the 52-card deck: rank high to low, then suit
        return sorted(card_indices, key=lambda i: (-(i // 4), i % 4))
    cards = sorted((ALL_CARDS[i] for i in card_indices), key=sort_key)
    jokers = [c.index for c in cards if c.is_joker]
    return [c.index for c in cards if not c.is_joker] + jokers


class ClassifiedHand(Protocol):
    """A 13-card hand's subsets by class: ``c5`` of its 1,287 five-card rows, ``c3`` (cross
    classes) of its 286 three-card rows."""

    c5: IntArray
    c3: IntArray


def _row_features(
    dist: KeyDistribution,
    keys: IntArray,
    bonus: FloatArray,
    divisor: int,
    run_over: bool,
    row_water: int = 1,
) -> FloatArray:
    """Columns (row EV, P(no loss), P(no win), P(tie)) of each key against ``dist``, a row
    won or lost paying ``row_water`` before the winner's bonus (RULES.md §7.1).

    Without run-over the middle columns are P(win) and P(lose): only a clean sweep guns.
    """
    p_win, p_tie = dist.less_equal(keys)
    p_lose = 1.0 - p_win - p_tie
    weights = dist.counts * bonus[dist.keys // divisor]
    suffix = np.concatenate((np.cumsum(weights[::-1])[::-1], [0.0])) / dist.total
    opp_bonus = suffix[np.searchsorted(dist.keys, keys, side="right")]
    ev = p_win * (row_water + bonus[keys // divisor]) - p_lose * row_water - opp_bonus
    if run_over:
        return np.stack((ev, p_win + p_tie, p_lose + p_tie, p_tie), axis=1)
    return np.stack((ev, p_win, p_lose, p_tie), axis=1)


@dataclass(frozen=True, eq=False)
class WaterModel:
    """The expected-water model of one configuration, as per-class feature tables.

    For a candidate row hand with key ``k``:

    * ``p_win``, ``p_tie``, ``p_lose``: the fractions of opponents' rows below, equal to,
      above ``k``;
    * row water ``p_win · (w + bonus(k)) − p_lose · w − E[opponent's bonus when it beats k]``,
      ``w`` the row water and the bonuses taken from the configuration in force (RULES.md §7.1);
    * guns, treating the three rows as independent: ``P(gun) = Π(p_win + p_tie) − Π p_tie``
      with run-over (``Π p_win`` without), the same with ``p_lose`` for being gunned, paid as
      the configuration says (``fixed``: ± gun water; ``double``: the row water again);
    * a home run against ``opponents`` opponents (a full table: 3): ``P(gun)^n``, and an
      opponent's home run through us at ``P(gunned) · g0^(n−1)`` with ``g0`` the reference
      gun rate.
    """

    config: RuleConfig
    opponents: int
    gun_rate: float
    # Per-class feature columns: EV, no-loss, no-win, tie, and the class's category weighted
    # so that front + middle + back gives the split's category triple (front·100 + middle·10
    # + back).
    front: FloatArray  # (cross classes, 5)
    middle: FloatArray  # (5-card classes, 5)
    back: FloatArray
    bonus3: FloatArray  # bonus of each class when it wins its row
    bonus_middle: FloatArray
    bonus_back: FloatArray

    def split_values(
        self, hand: ClassifiedHand, f: IntArray, m: IntArray, b: IntArray
    ) -> tuple[FloatArray, IntArray]:
        """Expected water of the splits (f, m, b) against ``opponents`` reference opponents,
        and each split's category triple. The splits must be in ascending order (as
        ``np.flatnonzero`` gives them), so that their middles come in runs."""
        # One gather of all feature columns per row (float32: half the memory traffic), then
        # whole-array sums and products; their columns are the split's terms.
        gf = self.front.take(hand.c3, axis=0).take(f, axis=0)
        # Splits run middle by middle, so the middle rows repeat in runs: no gather needed.
        gm = np.repeat(
            self.middle.take(hand.c5, axis=0), np.bincount(m, minlength=len(COMB5)), axis=0
        )
        gb = self.back.take(hand.c5, axis=0).take(b, axis=0)

        def won_bonus() -> FloatArray:
            return np.asarray(
                self.bonus3.take(hand.c3).take(f)
                + self.bonus_middle.take(hand.c5).take(m)
                + self.bonus_back.take(hand.c5).take(b)
            )

        return self.values_of(gf, gm, gb, won_bonus)

    def values_of(
        self,
        gf: FloatArray,
        gm: FloatArray,
        gb: FloatArray,
        won_bonus: Callable[[], FloatArray],
    ) -> tuple[FloatArray, IntArray]:
        """Expected water and category triples from the rows' feature rows (see
        :meth:`split_values`); ``won_bonus()`` gives each split's row bonuses (double mode)."""
        cfg = self.config
        total = gf + gm
        total += gb
        prod = gf * gm
        prod *= gb
        rows = total[:, 0]
        g_for, g_against = prod[:, 1], prod[:, 2]
        if cfg.run_over_counts_as_gun:
            g_for = g_for - prod[:, 3]
            g_against = g_against - prod[:, 3]
        n = self.opponents
        g0 = self.gun_rate
        hr = n + 1 >= cfg.home_run_min_players and n >= 2
        if cfg.gun_mode == "fixed":
            value = n * (rows + cfg.gun_water * (g_for - g_against))
            if hr:
                extra = cfg.home_run_water - cfg.gun_water
                value += n * extra * (_ipow(g_for, n) - g_against * g0 ** (n - 1))
        else:
            won = 3.0 * cfg.row_water + won_bonus()
            lost = 3.0 * cfg.row_water + (
                self.bonus3.mean() + self.bonus_middle.mean() + self.bonus_back.mean()
            )
            value = n * (rows + g_for * won - g_against * lost)
            if hr:
                value += n * 2.0 * (_ipow(g_for, n) * won - g_against * g0 ** (n - 1) * lost)
        triple = total[:, 4].astype(np.intp)
        return np.asarray(value, dtype=np.float64), triple


def _ipow(x: FloatArray, n: int) -> FloatArray:
    """x**n by multiplication: numpy's float power is ~30x slower for small n."""
    out = x
    for _ in range(n - 1):
        out = out * x
    return out


def _bonus_by_category(config: RuleConfig, row: str) -> FloatArray:
    return np.array([config.bonus(row, Category(c)) for c in range(10)], dtype=np.float64)


@lru_cache(maxsize=64)
def water_model(config: RuleConfig, opponents: int, tables: Tables | None = None) -> WaterModel:
    """The model of ``config`` against ``opponents`` opponents, on ``tables`` (default: the
    stored tables of the configuration's deck). Cached by its arguments."""
    t = tables or load(deck_name(config))
    mode, run_over = config.a2345, config.run_over_counts_as_gun
    cls = row_classes(mode, not config.deck.is_classic)
    bf, bm, bb = (_bonus_by_category(config, r) for r in ("front", "middle", "back"))
    cat3, cat5 = cls.cross // B3, cls.keys5 // B5

    def table(
        row: str, keys: IntArray, bonus: FloatArray, div: int, weight: IntArray
    ) -> FloatArray:
        features = _row_features(t.rows[(mode, row)], keys, bonus, div, run_over, config.row_water)
        return np.column_stack((features, weight)).astype(np.float32)

    return WaterModel(
        config,
        opponents,
        t.gun_rate,
        table("front", cls.cross, bf, B3, cat3 * 100),
        table("middle", cls.keys5, bm, B5, cat5 * 10),
        table("back", cls.keys5, bb, B5, cat5),
        bf[cls.cross // B3],
        bm[cls.keys5 // B5],
        bb[cls.keys5 // B5],
    )

"""Exact water of one seat's candidate arrangements against sampled opponents, in numpy.

:func:`table_water` is ``games.rules.scoring.score_round``'s ``water`` for one seat, everyone
arranged normally: row water, row bonuses, guns, run-over, home runs and the gun mode, for
every candidate against every sample at once. The tests check it equals ``score_round`` on
random tables, and the rollout checks it again on every real deal it plays.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from games.rules.config import RuleConfig
from games.rules.hands import ROWS, Category
from games.rules.scoring import Arranged, Seat, score_round
from games.rules.vectorized import B3, B5, BoolArray, IntArray


def bonus_table(config: RuleConfig) -> IntArray:
    """(3 rows, 10 categories): the bonus the winner of a row gets for its category."""
    return np.array(
        [[config.bonus(row, Category(c)) for c in range(10)] for row in ROWS], dtype=np.int64
    )


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

"""The reference computation of a round's water, read straight from RULES.md §7.1–7.3.

It shares nothing with :mod:`games.rules.scoring` but the row comparison of §3, so the
scorer (and the command line, which answers with it) is checked against an independent
reading of the rules: the property tests and the command-line tests both use it.
"""

from __future__ import annotations

from collections.abc import Sequence

from games.rules.config import RuleConfig
from games.rules.hands import ROWS, compare, evaluate
from games.rules.scoring import Arranged, RoundResult


def row_results(result: RoundResult, config: RuleConfig) -> dict[tuple[int, int], list[int]]:
    """Seat i's result per row against seat j, for every pair of normal hands (i < j)."""
    out: dict[tuple[int, int], list[int]] = {}
    hands = [s.hand for s in result.seats]
    for i, hi in enumerate(hands):
        for j in range(i + 1, len(hands)):
            hj = hands[j]
            if isinstance(hi, Arranged) and isinstance(hj, Arranged):
                out[(i, j)] = [
                    compare(a, b, config.a2345) for a, b in zip(hi.rows(), hj.rows(), strict=True)
                ]
    return out


def gun_sign(rows: Sequence[int], config: RuleConfig) -> int:
    """1 if the first seat guns the second, -1 the other way round, else 0 (§7.2)."""

    def sweeps(res: Sequence[int]) -> bool:
        if config.run_over_counts_as_gun:
            return min(res) >= 0 and 1 in res
        return all(r == 1 for r in res)

    return 1 if sweeps(rows) else -1 if sweeps([-r for r in rows]) else 0


def expected_home_run(result: RoundResult, config: RuleConfig) -> int | None:
    n = len(result.seats)
    if n < config.home_run_min_players or any(s is not None for s in result.specials):
        return None
    results = row_results(result, config)
    for i in range(n):
        if all(
            gun_sign(results[(min(i, j), max(i, j))], config) == (1 if i < j else -1)
            for j in range(n)
            if j != i
        ):
            return i
    return None


def expected_pair_water(
    result: RoundResult, i: int, j: int, config: RuleConfig
) -> tuple[tuple[int, ...] | None, int]:
    """What seat i wins from seat j: each row's winner wins ``row_water`` plus its bonus
    (§7.1), a gun adds the gun or home-run water (``fixed``) or doubles the rows' water and
    bonuses, twice for a home run (``double``, §7.2); specials by §7.3."""
    si, sj = result.specials[i], result.specials[j]
    if si is not None or sj is not None:
        ranked = [s.id for s in config.specials if s.enabled]
        if si == sj:
            return None, 0
        if sj is None or (si is not None and ranked.index(si) < ranked.index(sj)):
            assert si is not None
            return None, config.special(si).water
        return None, -config.special(sj).water
    hi, hj = result.seats[i].hand, result.seats[j].hand
    assert isinstance(hi, Arranged) and isinstance(hj, Arranged)
    rows = row_results(result, config)[(i, j)]
    water = 0
    for k, row in enumerate(ROWS):
        if rows[k] == 1:
            water += config.row_water
            water += config.bonus(row, evaluate(hi.rows()[k], config.a2345).category)
        elif rows[k] == -1:
            water -= config.row_water
            water -= config.bonus(row, evaluate(hj.rows()[k], config.a2345).category)
    sign = gun_sign(rows, config)
    if sign != 0:
        home_run = expected_home_run(result, config) == (i if sign == 1 else j)
        if config.gun_mode == "fixed":
            water += sign * (config.home_run_water if home_run else config.gun_water)
        else:
            water *= 4 if home_run else 2
    return tuple(rows), water

"""RULES.md §6: the row tables behind "best" are refined towards the fixed point of the
engine's own play (games.rules.build_tables.refine) — damped mixing that keeps every row."""

from __future__ import annotations

import numpy as np

from games.rules import tables
from games.rules.build_tables import from_arrays, mix, refine
from games.rules.tables import KeyDistribution


def test_6_mixing_keeps_every_key_and_weighs_the_shares() -> None:
    old = KeyDistribution(np.array([1, 2, 3]), np.array([50, 30, 20]))
    new = KeyDistribution(np.array([2, 4]), np.array([1, 3]))

    mixed = mix(old, new, 0.5)

    assert mixed.keys.tolist() == [1, 2, 3, 4]
    shares = mixed.counts / mixed.total
    assert np.allclose(shares, [0.25, 0.15 + 0.125, 0.10, 0.375], atol=1e-6)


def test_6_a_refinement_step_returns_complete_tables_closer_to_the_play() -> None:
    before = tables.load()
    out = refine("classic", deals=30, iterations=1, weight=0.5, seed=1)
    refined = from_arrays(out)

    assert set(out) >= {"gun_rate", "deals", "all3_keys", "lowest_front_keys", "second_back_keys"}
    assert 0 < refined.gun_rate < 1 and refined.deals == 30
    for key, dist in refined.rows.items():
        assert dist.total > 0 and np.all(np.diff(dist.keys) > 0), key
    # The stored tables are untouched (refine only returns arrays).
    assert tables.load() is before

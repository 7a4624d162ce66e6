"""The rating simulation (benchmarks/rating_simulation.py): a tiny run prints its table, and its
pieces (Kendall's τ, the tables' water, a run's ratings) do what the table says."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks import rating_simulation as sim


def test_kendall_tau_against_the_index_order() -> None:
    assert sim.kendall_tau([1, 2, 3, 4]) == 1.0
    assert sim.kendall_tau([4, 3, 2, 1]) == -1.0
    assert sim.kendall_tau([1, 3, 2, 4]) == pytest.approx(4 / 6)


def test_a_table_has_every_pair_and_a_run_rates_every_bot() -> None:
    bank = [sim.deal_plays(deal, samples=2) for deal in range(2)]
    water = sim.table_water(bank[0], [0, 3, 6, 7], np.random.default_rng(0))

    assert sorted(water) == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]  # four seats' pairs
    for duplicate in (False, True):
        history = sim.run(0, bank, steps=3, duplicate=duplicate)
        assert history.shape == (len(sim.BOTS), 3)
        assert np.all(history[:, -1] != 1500)  # every bot played and moved


def test_the_first_n_is_where_the_mean_tau_stays_at_the_target() -> None:
    ordered = np.tile(np.arange(len(sim.BOTS), dtype=float)[:, None], (1, 4))
    reversed_then_ordered = ordered.copy()
    reversed_then_ordered[:, :2] = ordered[::-1, :2]

    mean, first, final = sim.summary([reversed_then_ordered])

    assert list(mean) == [-1.0, -1.0, 1.0, 1.0]
    assert first == 3
    assert sim.summary([ordered[::-1]])[1] is None
    assert list(final) == list(range(len(sim.BOTS)))


def test_the_table_prints_tau_and_the_bots_ratings(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--steps", "12", "--runs", "2", "--deals", "3", "--workers", "1", "--samples", "2"]
    assert sim.main(args) == 0

    out = capsys.readouterr().out
    assert "2 runs of 12 rounds per bot" in out
    assert "  plain " in out and "  duplicate " in out and "N for τ≥0.9" in out
    for name, *_ in sim.BOTS:
        assert f"  {name} " in out

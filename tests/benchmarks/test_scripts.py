"""The benchmark and simulation scripts run (their figures are printed, not asserted)."""

from benchmarks import simulate_arrange


def test_simulation_plays_a_deal_against_both_baselines():
    result = simulate_arrange.play(0)
    assert set(result) == set(simulate_arrange.BASELINES)
    # Water per seat is a multiple of 1/4 (the mean over four rotations).
    assert all((4 * v) == int(4 * v) for v in result.values())


def test_simulation_is_reproducible():
    assert simulate_arrange.play(7) == simulate_arrange.play(7)

"""The statistics' fast path: a time-bounded sample, its figures with 95 % intervals."""

import itertools
import math

import numpy as np
import pytest

from games.rules.config import DEFAULT_CONFIG
from games.rules.stats import (
    SAMPLE_CHUNK,
    DealShape,
    Interval,
    mean_interval,
    sample_deals,
    simulate_deals,
    special_intervals,
    special_stats,
    wilson_interval,
)
from tests.games.rules.stats_helpers import TINY


def ticking(step: float):
    """A clock that moves ``step`` seconds at every look."""
    counter = itertools.count()
    return lambda: next(counter) * step


def test_a_sample_stops_at_its_budget_and_is_reproducible() -> None:
    seen: list[tuple[int, int]] = []
    sample = sample_deals(
        7,
        budget_seconds=3.0,
        max_deals=10_000,
        clock=ticking(1.0),
        progress=lambda d, t: seen.append((d, t)),
    )
    # Looks at 1, 2, 3 s are inside the budget; the look at 4 s stops it.
    assert sample.deals == 3 * SAMPLE_CHUNK
    assert seen[-1] == (sample.deals, 10_000)
    again = sample_deals(7, budget_seconds=3.0, max_deals=10_000, clock=ticking(1.0))
    assert np.array_equal(sample.masks, again.masks)
    first = simulate_deals(SAMPLE_CHUNK, 7).masks
    assert np.array_equal(sample.masks[:SAMPLE_CHUNK], first)


def test_a_sample_keeps_its_minimum_and_maximum() -> None:
    assert (
        sample_deals(1, budget_seconds=0, min_deals=2 * SAMPLE_CHUNK, clock=ticking(9)).deals
        == 2 * SAMPLE_CHUNK
    )
    assert sample_deals(1, budget_seconds=100, max_deals=150, clock=ticking(0)).deals == 150
    with pytest.raises(ValueError):
        sample_deals(1, budget_seconds=-1)


def test_a_variant_deck_samples_its_own_table() -> None:
    shape = DealShape(extra_suits=2)
    sample = sample_deals(3, budget_seconds=0, min_deals=SAMPLE_CHUNK, shape=shape)
    assert (sample.deals, sample.players, sample.shape) == (SAMPLE_CHUNK, shape.players, shape)


def test_wilson_interval_known_values() -> None:
    # 10 of 100: Wilson 95 % is about [0.0552, 0.1744].
    interval = wilson_interval(10, 100)
    assert math.isclose(interval.low, 0.0552, abs_tol=5e-4)
    assert math.isclose(interval.high, 0.1744, abs_tol=5e-4)
    assert wilson_interval(0, 100).low == 0.0
    assert wilson_interval(0, 0) == Interval(0.0, 1.0)


def test_mean_interval_known_values() -> None:
    values = np.array([1.0, 2.0, 3.0, 4.0])
    interval = mean_interval(values)
    spread = 1.959964 * values.std(ddof=1) / 2
    assert math.isclose(interval.low, 2.5 - spread) and math.isclose(interval.high, 2.5 + spread)


def test_intervals_hold_the_point_figures() -> None:
    stats = special_stats(TINY, DEFAULT_CONFIG)
    intervals = special_intervals(TINY, DEFAULT_CONFIG)
    for row in stats.rows:
        interval = intervals[row.id]
        assert interval.frequency.low <= row.frequency <= interval.frequency.high
        water = interval.expected_water_per_deal
        assert water.low - 1e-9 <= row.expected_water_per_deal <= water.high + 1e-9
    total = intervals["*"].expected_water_per_deal
    assert total.low - 1e-9 <= stats.expected_water_per_deal <= total.high + 1e-9


def test_the_interval_narrows_with_the_sample() -> None:
    small = simulate_deals(200, 5)
    large = simulate_deals(800, 5)
    narrow = special_intervals(large, DEFAULT_CONFIG)["*"].frequency.half_width
    wide = special_intervals(small, DEFAULT_CONFIG)["*"].frequency.half_width
    assert narrow < wide

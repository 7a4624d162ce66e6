"""The bot levels' round robin (benchmarks/bot_levels.py): every level plays every hand of a
deal once, and water is zero-sum at every table."""

from __future__ import annotations

import pytest

from benchmarks import bot_levels
from games.rules.levels import LEVELS


@pytest.mark.parametrize("seats", [2, 3, 4])
def test_every_level_plays_every_hand_once_and_the_tables_are_zero_sum(seats: int) -> None:
    water = bot_levels.play(0, seats=seats, samples=2)

    assert set(water) == set(LEVELS)
    assert all(len(w) == seats for w in water.values())  # each hand once per level
    assert sum(sum(w) for w in water.values()) == 0


def test_the_table_prints_each_level(capsys: pytest.CaptureFixture[str]) -> None:
    assert bot_levels.main(["--deals", "2", "--workers", "1", "--samples", "2"]) == 0

    out = capsys.readouterr().out
    assert "2 deals, 4 seats" in out
    for level in LEVELS:
        assert f"  {level} " in out

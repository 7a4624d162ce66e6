"""The row-bonus sample benchmark (benchmarks/row_bonus_sample.py): a run with no budget (one
chunk of deals per deck) prints a row for every deck; a negative budget is refused."""

from __future__ import annotations

import pytest

from benchmarks import row_bonus_sample


def test_a_run_prints_every_deck(capsys: pytest.CaptureFixture[str]) -> None:
    assert row_bonus_sample.main(["--seconds", "0"]) == 0
    out = capsys.readouterr().out
    assert "host speed" in out
    for name, _config in row_bonus_sample.DECKS:
        row = next(line for line in out.splitlines() if line.strip().startswith(name))
        assert " 10 " in row and "±" in row  # one chunk of ten deals


def test_a_negative_budget_is_refused() -> None:
    with pytest.raises(SystemExit):
        row_bonus_sample.main(["--seconds", "-1"])

"""The collusion detection benchmark runs end to end on a small population and prints its table."""

from __future__ import annotations

import pytest

from benchmarks.collusion_detection import DUMPER_KINDS, main


def test_a_small_run_prints_recall_per_kind_and_the_honest_flags(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--weeks", "4", "--dumpers", "1", "--rounds", "6", "--workers", "1"]) == 0
    out = capsys.readouterr().out
    for kind in DUMPER_KINDS:
        assert any(line.startswith(kind + " ") for line in out.splitlines()), kind
    assert "flagged: 0; precision 1.0000" in out
    assert "worst" in out and "precision" in out

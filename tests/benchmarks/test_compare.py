"""benchmarks.compare: what it refuses before starting anything, and the tree it checks out."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchmarks import compare


@pytest.mark.parametrize(
    "argv",
    [
        ["HEAD", "--pairs", "0"],
        ["HEAD", "--pairs", "11"],
        ["HEAD", "--tables", "65"],
        ["--", "--output=x"],
    ],
)
def test_bad_arguments_are_refused(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stopped:
        compare.main(argv)
    assert stopped.value.code == 2
    assert "must" in capsys.readouterr().err


def test_an_unknown_revision_is_refused_before_any_platform_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def serve(*_: object) -> None:
        raise AssertionError("no platform may start")

    monkeypatch.setattr(compare, "serve", serve)
    with pytest.raises(SystemExit, match="no such revision: 'no-such-revision'"):
        compare.main(["no-such-revision"])


def test_the_other_side_is_the_revision_s_own_files(tmp_path: Path) -> None:
    tree = compare.checkout("HEAD", tmp_path)
    head = subprocess.run(
        ["git", "show", "HEAD:benchmarks/capacity.py"],
        cwd=compare.ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert (tree / "benchmarks" / "capacity.py").read_text() == head
    assert not (tree / ".git").exists()

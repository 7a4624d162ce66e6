"""Paired runs: the CPU per round of another revision against this working tree, alternately.

The command's --help (HELP, below) says how each measurement runs and what it prints.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any

# The command's --help text.
HELP = """Paired runs: the CPU per round of another revision against this working tree, alternately.

    python -m benchmarks.compare 5d35654                  # bursts: 1 table x 52 rounds, 4 pairs
    python -m benchmarks.compare HEAD~2 --pace --tables 16 --pairs 3   # human pace, steady

The host's speed moves by half within minutes on this shared machine (one run's CPU per round
can be 45 ms and the next one's 80), so two figures measured apart compare nothing; runs
taken in turn, on two platforms up at the same time, do. ``REVISION``'s tree comes from
``git archive`` into a temporary directory; each side gets a platform of its own, as
``benchmarks.capacity`` starts one (its own redis-server, daphne, a Celery worker, a fresh
database of the PostgreSQL server of ``DATABASE_URL``: ``shisanshui_compare_old`` and
``_new``), with that tree's code (``PYTHONPATH``). Then the pairs: ``benchmarks.load`` (this
tree's) against each platform in turn, the order swapped every pair (old-new, new-old, …)
so that a drift of the host weighs on both sides. Prints every run's CPU-ms per round by
process, with the host's steal, then the median of each side and the median of the pairs'
ratios (new / old, below 1: the working tree is cheaper).

The figure is the whole-round CPU of the steady window with ``--pace`` (the rounds settled
while every table was playing), of the whole run for bursts. Talks to 127.0.0.1 only; both
platforms are stopped at the end, whatever ends it.
"""


ROOT = Path(__file__).resolve().parent.parent

# Started in a tree (its directory first on the path): that tree's platform, as its
# benchmarks.capacity starts one, until this process closes its standard input.
SERVE = """
import sys
from benchmarks import capacity
url = capacity.database_url(sys.argv[1])
capacity.fresh_database(url)
platform = capacity.start_platform(url, 1)
try:
    print("URL", platform.url, flush=True)
    sys.stdin.read()
finally:
    platform.stop()
"""


def checkout(revision: str, into: Path) -> Path:
    """``revision``'s files (``git archive``) under ``into``; refuses an unknown revision."""
    found = subprocess.run(
        ["git", "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode:
        raise SystemExit(f"no such revision: {revision!r}")
    commit = found.stdout.strip()
    tree = into / commit[:12]
    tree.mkdir(parents=True)
    archive = subprocess.Popen(["git", "archive", commit], cwd=ROOT, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(tree)], stdin=archive.stdout, check=True)
    if archive.wait():
        raise SystemExit(f"git archive {revision} failed")
    return tree


def serve(tree: Path, database: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``tree``'s platform; the process (stop it by closing its stdin) and its URL."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    process = subprocess.Popen(
        [sys.executable, "-c", SERVE, database],
        cwd=tree,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    for line in process.stdout:
        if line.startswith("URL "):
            return process, line.split()[1]
    process.wait()
    raise SystemExit(f"the platform of {tree} did not start ({process.returncode})")


def stop(process: subprocess.Popen[str]) -> None:
    assert process.stdin is not None
    process.stdin.close()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def run_load(url: str, load_args: list[str], tag: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "benchmarks.load", "--url", url, "--json"]
    command += ["--players", "command", "--prefix", f"{tag}{time.time_ns()}", *load_args]
    done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=False)
    for line in done.stdout.splitlines():
        if line.startswith("json: "):
            result: dict[str, Any] = json.loads(line[6:])
            return result
    raise SystemExit(f"the load script failed ({done.returncode}):\n{done.stderr[-2000:]}")


def cpu_of(result: dict[str, Any], pace: bool) -> dict[str, float]:
    """CPU-ms per round by process: the steady window's at human pace (when it settled any
    round), the whole run's otherwise."""
    steady: dict[str, float] = result.get("steady_cpu_ms_per_round") or {}
    return steady if pace and steady else result["cpu_ms_per_round"]


def line(side: str, pair: int, result: dict[str, Any], cpu: dict[str, float]) -> str:
    parts = " ".join(f"{k}={v:.1f}" for k, v in sorted(cpu.items()))
    return (
        f"  pair {pair} {side}: total={sum(cpu.values()):6.1f}  ({parts})  "
        f"p99={result['p99_ms']:.1f} ms  steal={result.get('steal_percent', 0.0):.1f}%"
        f"  errors={result['errors']}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.compare", description=HELP)
    parser.add_argument("revision", help="the other revision (a commit, tag or branch)")
    parser.add_argument("--pairs", type=int, default=4, help="pairs of runs (1 to 10)")
    parser.add_argument("--pace", action="store_true", help="human pace (0.5-3 s) not bursts")
    parser.add_argument("--tables", type=int, help="tables of 4 (bursts: 1; --pace: 16)")
    parser.add_argument("--rounds", type=int, help="rounds per run (bursts: 52; --pace: 6)")
    args = parser.parse_args(argv)
    if args.revision.startswith("-"):
        parser.error("the revision must not start with '-'")
    if not 1 <= args.pairs <= 10:
        parser.error("--pairs must be 1 to 10")
    tables = args.tables or (16 if args.pace else 1)
    rounds = args.rounds or (6 if args.pace else 52)
    if not 1 <= tables <= 64 or not 1 <= rounds <= 1000:
        parser.error("--tables must be 1 to 64 and --rounds 1 to 1000")
    load_args = ["--tables", str(tables), "--rounds", str(rounds)]
    if args.pace:
        load_args += ["--think", "0.5,3"]
    totals: dict[str, list[float]] = {"old": [], "new": []}
    with ExitStack() as stack:
        temporary = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="compare-")))
        old_tree = checkout(args.revision, temporary)
        old, old_url = serve(old_tree, "shisanshui_compare_old")
        stack.callback(stop, old)
        new, new_url = serve(ROOT, "shisanshui_compare_new")
        stack.callback(stop, new)
        what = "human pace, steady window" if args.pace else "bursts"
        print(f"old: {args.revision} at {old_url}; new: this working tree at {new_url}")
        print(f"{args.pairs} pairs, {tables} table(s) x {rounds} rounds, {what}", flush=True)
        ratios = []
        for pair in range(1, args.pairs + 1):
            order = ("old", "new") if pair % 2 else ("new", "old")
            pair_totals = {}
            for side in order:
                result = run_load(old_url if side == "old" else new_url, load_args, side)
                cpu = cpu_of(result, args.pace)
                pair_totals[side] = sum(cpu.values())
                totals[side].append(pair_totals[side])
                print(line(side, pair, result, cpu), flush=True)
            ratios.append(pair_totals["new"] / pair_totals["old"])
        print(
            f"median CPU-ms per round: old {statistics.median(totals['old']):.1f}, "
            f"new {statistics.median(totals['new']):.1f}; "
            f"median ratio new/old {statistics.median(ratios):.3f} "
            f"(pairs: {', '.join(f'{r:.3f}' for r in ratios)})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

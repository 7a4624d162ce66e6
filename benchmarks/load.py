"""Load test of the running platform: bot players at many tables over real WebSockets.

    python -m benchmarks.load --url http://127.0.0.1:8000 --tables 4 --seats 4 --rounds 5
    python -m benchmarks.load --url http://127.0.0.1:8000 --tables 4 --duration 60
    python -m benchmarks.load --url http://127.0.0.1:8000 --ramp --rounds 5

Tables × seats players sign up or log in (benchmarks.seating; names start with ``--prefix``),
meet at private rooms with the "Load test" rules, play full rounds until ``--rounds`` rounds or
``--duration`` seconds are over, and leave (benchmarks.load_step); the figures printed are
benchmarks.load_result's. ``--ramp`` runs 1, 2, 4, 8 … tables until p99 exceeds ``--target-ms``,
then ``--refine`` steps in between; its small steps play rounds enough for ``--min-samples``
samples. Talks only to the given loopback URL, and stops by itself: after the rounds or the
duration, and in any case after ``--timeout`` seconds. docs/load-and-faults.md has the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import urllib.error
import urllib.parse

import psutil
import uvloop

from benchmarks.load_result import RAMP_HEADER, Result, ramp_row
from benchmarks.load_step import run_step
from benchmarks.seating import Sessions, find_rules
from benchmarks.server_usage import platform_database_url, server_processes
from benchmarks.vacuum import AutovacuumStandIn

RULES_NAME = "Load test"
RAMP_LIMIT = 256
# A ramp's step times at least this many samples: with 4 rounds, one table of four gives 96,
# and the 99th percentile of 96 samples is their maximum (one hiccup of the host ends a ramp).
RAMP_MIN_SAMPLES = 400


async def main_async(args: argparse.Namespace) -> int:
    command_env = None
    if args.players == "command":
        daphnes = [psutil.Process(pid) for pid in args.server_pids or []]
        daphnes = daphnes or server_processes(args.urls, None).get("daphne", [])
        if not daphnes:
            raise SystemExit("--players command: no daphne process found for the URL(s)")
        command_env = {**os.environ, **daphnes[0].environ()}
    sessions = Sessions(args.urls[0], args.prefix, command_env=command_env)
    first = await sessions.get(1)
    rules = args.rules or find_rules(args.urls[0], first[0][1], args.rules_name)
    think = f"{args.think[0]:g}-{args.think[1]:g} s" if args.think else "none (all at once)"
    stagger = f"0-{args.stagger:g} s" if args.stagger else "none (every table at once)"
    print(
        f"url: {' '.join(args.urls)} prefix: {args.prefix} rules: {rules} "
        f"seats: {args.seats} think: {think} first Ready: {stagger}",
        flush=True,
    )
    args.vacuum = None
    database_url = args.database_url or platform_database_url(
        server_processes(args.urls, args.server_pids)
    )
    args.database_url = database_url  # found once: run_step measures its backends
    if database_url and args.autovacuum == "auto" and AutovacuumStandIn.needed(database_url):
        args.vacuum = AutovacuumStandIn(database_url).start()
        print(
            "PostgreSQL's autovacuum is off on this server: this script vacuums the platform's "
            f"database by autovacuum's rule every {args.vacuum.naptime:g} s "
            "(benchmarks/vacuum.py; its CPU counts as PostgreSQL's)",
            flush=True,
        )
    try:
        return await _run_steps(args, sessions, rules)
    finally:
        if args.vacuum is not None:
            args.vacuum.stop()


async def _run_steps(args: argparse.Namespace, sessions: Sessions, rules: int) -> int:
    if not args.ramp:
        result = await run_step(args, sessions, rules, args.tables)
        print(result.report(), flush=True)
        if args.json:
            print("json: " + json.dumps(result.as_dict()), flush=True)
        return 0 if result.error_count == 0 else 1

    results: list[Result] = []
    tried: list[tuple[int, bool]] = []
    print(RAMP_HEADER, flush=True)
    step = next_ramp_step(tried, args.tables, min(args.max_tables, RAMP_LIMIT), args.refine)
    while step is not None:
        result = await run_step(args, sessions, rules, step)
        results.append(result)
        print(ramp_row(result), flush=True)
        if result.errors:
            print(f"       errors: {dict(result.errors)}", flush=True)
        if args.json:
            print("json: " + json.dumps(result.as_dict()), flush=True)
        tried.append((step, result.p(99) <= args.target_ms and result.error_count == 0))
        step = next_ramp_step(tried, args.tables, min(args.max_tables, RAMP_LIMIT), args.refine)
    held = [r.tables for r in results if r.p(99) <= args.target_ms and r.error_count == 0]
    print(f"largest_tables_under_{args.target_ms:g}ms: {max(held, default=0)}", flush=True)
    return 0


def next_ramp_step(tried: list[tuple[int, bool]], first: int, last: int, refine: int) -> int | None:
    """The ramp's next table count after ``tried`` ((tables, held) in order), or None when
    it is over: ``first`` (at least 1), then doubling while every step holds, up to ``last``
    (which is tried itself when a doubling passes it);
    after the first step that does not hold, up to ``refine`` more steps halve the gap
    between the largest count that held and the smallest that did not (32 held, 64 did not:
    48, then 40 or 56), so the figure is not only a power of two."""
    if not tried:
        return max(1, first) if max(1, first) <= last else None
    held = [t for t, ok in tried if ok]
    failed = [t for t, ok in tried if not ok]
    if not failed:
        previous = tried[-1][0]
        return min(previous * 2, last) if previous < last else None
    refined = len(tried) - 1 - next(i for i, (_, ok) in enumerate(tried) if not ok)
    low, high = max((t for t in held if t < min(failed)), default=0), min(failed)
    step = (low + high) // 2
    if refined >= refine or step <= low or not held:
        return None
    return step


def think_range(text: str) -> tuple[float, float]:
    try:
        low, high = (float(part) for part in text.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError("--think takes MIN,MAX seconds, e.g. 0.5,3") from None
    if not 0 <= low <= high <= 60:
        raise argparse.ArgumentTypeError("--think needs 0 <= MIN <= MAX <= 60")
    return low, high


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.load", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument(
        "--url",
        default="http://127.0.0.1:8000",
        help="the platform's URL; several, comma-separated, spread each table's seats over "
        "them (one web process each), or one load balancer's URL",
    )
    parser.add_argument("--tables", type=int, default=1, help="M concurrent tables")
    parser.add_argument("--seats", type=int, default=4, help="players per table (2-4)")
    stop = parser.add_mutually_exclusive_group()
    stop.add_argument("--rounds", type=int, help="rounds per table (default 3)")
    stop.add_argument("--duration", type=float, help="seconds of play (then finish the round)")
    parser.add_argument("--ramp", action="store_true", help="1, 2, 4 … tables until p99 > target")
    parser.add_argument("--max-tables", type=int, default=64, help="the ramp's last step")
    parser.add_argument("--target-ms", type=float, default=100.0, help="the ramp's p99 limit")
    parser.add_argument(
        "--refine",
        type=int,
        default=2,
        help="after the first step over the target, this many steps halving the gap between "
        "the largest count that held and the smallest that did not (default 2)",
    )
    parser.add_argument(
        "--min-samples",
        type=int,
        help="play more rounds at a small step, so that it times at least this many "
        "action → broadcast samples (each round of s seats gives 2·s·(s-1)); with --ramp by "
        "default 400 (a p99 of fewer samples is nearly their maximum), otherwise 0",
    )
    parser.add_argument("--timeout", type=float, help="hard limit per step, seconds")
    parser.add_argument("--prefix", help="player names' prefix (default: ld<time>)")
    parser.add_argument("--rules", type=int, help="rule configuration id (default: by name)")
    parser.add_argument("--rules-name", default=RULES_NAME, help="rule configuration's name")
    parser.add_argument(
        "--think",
        type=think_range,
        help="MIN,MAX seconds each bot waits before each action, like a person "
        "(default: act at once, every seat of a table in the same millisecond)",
    )
    parser.add_argument(
        "--stagger",
        type=float,
        default=0.0,
        help="each table's first Ready waits a random 0 to this many seconds, so that the "
        "tables' rounds do not begin (nor deal, nor settle) together as they would if every "
        "table sat down in the same second (default 0: all at once)",
    )
    parser.add_argument("--play-special", action="store_true", help="play special hands")
    parser.add_argument("--server-pids", type=int, nargs="*", help="processes to measure")
    parser.add_argument(
        "--database-url",
        help="the platform's PostgreSQL, whose backends' CPU is measured too (default: the "
        "web processes' DATABASE_URL)",
    )
    parser.add_argument("--no-postgres", action="store_true", help="do not measure PostgreSQL")
    parser.add_argument(
        "--players",
        choices=["form", "command"],
        default="form",
        help="sign the players up through the page (form), or create them with "
        "`manage.py load_test_players` in the platform's environment (command: no password "
        "hashing, for large ramps on a load-test machine)",
    )
    parser.add_argument("--json", action="store_true", help="also print each result as JSON")
    parser.add_argument(
        "--autovacuum",
        choices=["auto", "off"],
        default="auto",
        help="auto (default): when the platform's PostgreSQL runs with autovacuum off, as "
        "this machine's does, vacuum its database as autovacuum would (benchmarks/vacuum.py); "
        "off: never",
    )
    parser.add_argument(
        "--loop",
        choices=["uvloop", "asyncio"],
        default="uvloop",
        help="this script's event loop (default uvloop: the clients cost the machine less, "
        "and a frame waits less in this process before it is timed)",
    )
    args = parser.parse_args(argv)
    if not 2 <= args.seats <= 4:
        parser.error("--seats must be 2 to 4")
    if args.refine < 0:
        parser.error("--refine must be 0 or more")
    if not 0 <= args.stagger <= 60:
        parser.error("--stagger must be 0 to 60 seconds")
    if args.rounds is None and args.duration is None:
        args.rounds = 3
    if args.min_samples is None:
        args.min_samples = RAMP_MIN_SAMPLES if args.ramp else 0
    if args.min_samples < 0:
        parser.error("--min-samples must be 0 or more")
    if args.timeout is None:
        args.timeout = (args.duration or 0) + 30 * (args.rounds or 1) + 60
    args.prefix = args.prefix or f"ld{int(time.time()) % 1_000_000}"
    args.urls = [u.strip().rstrip("/") for u in args.url.split(",") if u.strip()]
    if not args.urls:
        parser.error("--url needs at least one URL")
    for url in args.urls:
        if urllib.parse.urlsplit(url).hostname not in ("127.0.0.1", "localhost", "::1"):
            parser.error("the load script only talks to the loopback interface")
    args.url = args.urls[0]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.loop == "uvloop":
            return uvloop.run(main_async(args))
        return asyncio.run(main_async(args))
    except urllib.error.URLError as exc:
        print(f"cannot reach {args.url}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())

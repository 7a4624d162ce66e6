"""The capacity figures of the platform, measured end to end on this machine.

The command's --help (HELP, below) says how each measurement runs and what it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

# The command's --help text.
HELP = """The capacity figures of the platform, measured end to end on this machine.

    python -m benchmarks.capacity bursts              # 1 table of 4 instant bots, 3 runs
    python -m benchmarks.capacity ramp --web 2        # human pace, 1, 2, 4 … tables
    python -m benchmarks.capacity all --web 2
    python -m benchmarks.capacity soak --web 2        # 10,000 rounds with faults, then the checks
    python -m benchmarks.capacity sockets             # CPU per table socket, connect to close

It starts a platform of its own — a private redis-server, ``--web`` daphne processes (behind
HAProxy when more than one, deploy/haproxy.cfg.template) and one Celery worker with beat, on a
fresh PostgreSQL database ``shisanshui_capacity`` (dropped and created again; the server of
``DATABASE_URL``, by default postgres://postgres@127.0.0.1:5432), with the production-like
settings ``shisanshui.settings.local`` and ``DEBUG=false`` — and runs ``benchmarks.load``
against it:

- **bursts**: ``--tables 1 --rounds 52`` three times: every seat of the table presses Ready and
  submits in the same millisecond. Prints each run's CPU-ms per settled round for each process
  (daphne, celery, redis, the PostgreSQL backends) and the action → broadcast latency, then the
  median of the three runs;
- **ramp**: ``--ramp --rounds 4 --think 0.5,3``: each bot waits 0.5–3 s before each action, as
  a (fast) person would; 1, 2, 4 … tables until p99 > 100 ms, then two steps halving the gap
  (32 held, 64 did not: 48, then 40 or 56); the small steps play more rounds, so that each
  times at least 400 samples (``--min-samples``); prints the table and the largest table
  count that held. Through the balancer when ``--web`` > 1;
- **sockets**: ``benchmarks.sockets`` (32 tables, 3 runs): every player's table socket
  connects, says hello, gets its welcome and closes, four at a time; prints the CPU-ms per
  socket of each process and the median of the runs;
- **soak**: ``benchmarks.soak`` (``--rounds``, by default 10,000, at 8 tables, seed 1, the
  default fault rates) against the same platform, then its checks in the platform's database:
  every round settled once, coins conserved, no negative balance, every client's view equal
  to the stored result, the protocol kept, ``ledger_audit`` clean. Exits 1 if one fails.

After bursts and ramps too, ``manage.py ledger_audit`` runs on the platform's database and its
verdict is printed (``ledger_audit: … The ledger reconciles.``); the script exits 1 if it does
not.

The load script plays faster than any person, so its per-user frame budget is raised for these
runs (``RATE_LIMITS``: ``table.message`` 1000/second;60000/minute, the same number of rates as
in production, so the cost of counting them is the same). Everything talks to 127.0.0.1 only,
and every process is stopped at the end.
"""


ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DATABASE = "shisanshui_capacity"
RATE_LIMITS = {"table.message": "1000/second;60000/minute"}


def database_url(name: str = DATABASE) -> str:
    """The database ``name`` on the PostgreSQL server of ``DATABASE_URL``."""
    base = os.environ.get("DATABASE_URL") or "postgres://postgres@127.0.0.1:5432/postgres"
    parts = urlsplit(base)
    if parts.scheme not in ("postgres", "postgresql"):
        raise SystemExit("these figures need PostgreSQL (DATABASE_URL)")
    return urlunsplit(parts._replace(path=f"/{name}"))


def empty_database(url: str) -> None:
    """Drop the database of ``url`` (its sessions ended) and create it again, empty."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    admin = urlunsplit(urlsplit(url)._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def fresh_database(url: str) -> None:
    """Drop and create the benchmark's database, migrate it and add the "Load test" rules."""
    empty_database(url)
    env = platform_env(url)
    for command in (["migrate", "-v", "0"], ["load_test_rules", "--open-signups"]):
        subprocess.run(
            [sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, text=True
        )


def platform_env(url: str) -> dict[str, str]:
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "shisanshui.settings.local",
        "DATABASE_URL": url,
        "DEBUG": "false",
        "RATE_LIMITS": json.dumps(RATE_LIMITS),
        "LOG_LEVEL": "WARNING",
    }


def start_platform(url: str, web: int) -> Any:
    sys.path.insert(0, str(ROOT))
    from tests.live_server import LiveCluster, LivePlatform

    extra = {k: v for k, v in platform_env(url).items() if k not in ("DATABASE_URL",)}
    extra.pop("DJANGO_SETTINGS_MODULE")
    settings = "shisanshui.settings.local"
    if web > 1:
        platform = LiveCluster(url, settings_module=settings, extra_env=extra, web_processes=web)
    else:
        platform = LivePlatform(url, settings_module=settings, extra_env=extra)
    return platform.start()


def load(url: str, *args: str) -> list[dict[str, Any]]:
    """Run benchmarks.load with ``args`` and ``--json``; its JSON lines (printed as they come)."""
    command = [
        sys.executable,
        "-m",
        "benchmarks.load",
        "--url",
        url,
        "--json",
        "--players",
        "command",
        *args,
    ]
    print("$", " ".join(command[1:]), flush=True)
    results = []
    with subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True) as process:
        assert process.stdout is not None
        for line in process.stdout:
            if line.startswith("json: "):
                results.append(json.loads(line[6:]))
            else:
                print("  " + line.rstrip(), flush=True)
    if process.returncode not in (0, 1):
        raise SystemExit(f"the load script failed ({process.returncode})")
    return results


def bursts(url: str, runs: int, rounds: int) -> dict[str, Any]:
    figures = []
    for run in range(runs):
        (result,) = load(
            url, "--tables", "1", "--rounds", str(rounds), "--prefix", f"cb{run}{time.time_ns()}"
        )
        figures.append(result)
    totals = [sum(r["cpu_ms_per_round"].values()) for r in figures]
    median = statistics.median(totals)
    processes = sorted({k for r in figures for k in r["cpu_ms_per_round"]})
    per_process = {
        k: statistics.median(r["cpu_ms_per_round"].get(k, 0.0) for r in figures) for k in processes
    }
    p99 = statistics.median(r["p99_ms"] for r in figures)
    errors = sum(r["errors"] for r in figures)
    print("\nbursts: 1 table x 4 instant bots x", rounds, "rounds, runs:", runs)
    for i, (r, total) in enumerate(zip(figures, totals, strict=True), 1):
        parts = " ".join(f"{k}={v:.1f}" for k, v in sorted(r["cpu_ms_per_round"].items()))
        print(
            f"  run {i}: cpu_ms_per_round {parts} total={total:.1f}  p99={r['p99_ms']:.1f} ms"
            f"  steal={r.get('steal_percent', 0.0):.1f}%"
            f"  host speed={r.get('host_speed_ms', float('nan')):.0f} ms"
        )
    parts = " ".join(f"{k}={v:.1f}" for k, v in per_process.items())
    print(f"  median: cpu_ms_per_round {parts} total={median:.1f}  p99={p99:.1f} ms")
    print(f"  errors: {errors}")
    return {"cpu_ms_per_round": median, "per_process": per_process, "p99_ms": p99}


def ramp(url: str, max_tables: int, think: str, stagger: float = 0.0) -> int:
    results = load(
        url,
        "--ramp",
        "--rounds",
        "4",
        "--think",
        think,
        "--stagger",
        f"{stagger:g}",
        "--max-tables",
        str(max_tables),
        "--prefix",
        f"cr{time.time_ns()}",
    )
    held = [r["tables"] for r in results if r["p99_ms"] <= 100 and r["errors"] == 0]
    spread = f"first Ready over 0-{stagger:g} s" if stagger else "every table at once"
    print(f"\nramp (human pace, think {think} s, {spread}):")
    for r in results:
        total = sum(r["cpu_ms_per_round"].values())
        parts = " ".join(f"{k}={v:.0f}" for k, v in sorted(r["cpu_ms_per_round"].items()))
        steady = sum(r.get("steady_cpu_ms_per_round", {}).values())
        print(
            f"  tables={r['tables']:>4} rounds/min={r['rounds_per_minute']:>7.1f} "
            f"p50={r['p50_ms']:.1f} p99={r['p99_ms']:.1f} ms "
            f"(steady p99={r['p99_steady_ms']:.1f}) errors={r['errors']} "
            f"cpu_ms_per_round={total:.1f} ({parts}; this script {r['client_cpu_percent']:.0f}%) "
            f"steady cpu_ms_per_round={steady:.1f} ({r.get('steady_rounds', 0)} rounds) "
            f"steal={r.get('steal_percent', 0.0):.1f}% "
            f"host stall max={r.get('host_stalls', {}).get('max', float('nan')):.0f} ms "
            f"host speed={r.get('host_speed_ms', float('nan')):.0f} ms "
            f"vacuums={r.get('vacuums')} "
            f"client loop lag p99={r.get('client_loop_lag_ms', {}).get('p99', float('nan')):.0f} ms"
        )
        print(f"    {tail_summary(r)}")
    largest = max(held, default=0)
    print(f"  largest table count with p99 < 100 ms and no error: {largest}")
    return largest


def tail_summary(result: dict[str, Any]) -> str:
    """A ramp step's p99 by what the broadcast carried, and where its slowest 1 % was sent."""
    by_action = " ".join(f"{name}={v['p99_ms']:.0f}" for name, v in result["by_action"].items())
    tail = result["tail"]
    where = ", ".join(f"{at:g} s" for at, _n in tail["windows"])
    if tail.get("sent"):  # how busy those half-seconds were (none when nothing was timed)
        sent = "/".join(str(n) for n in tail["sent"])
        where += f"; they sent {sent} samples, a mean half-second {tail['mean_sent']:.0f}"
    return (
        f"p99 by action: {by_action} ms; the slowest 1 %: {100 * tail['share']:.0f} % of it "
        f"sent in the {len(tail['windows'])} worst half-seconds ({where})"
    )


def soak(platform: Any, rounds: int, tables: int, seed: int) -> int:
    """benchmarks.soak against ``platform`` (its database, Redis and settings for the checks);
    its exit status."""
    env = {
        **os.environ,
        "DATABASE_URL": platform.database_url,
        "REDIS_URL": platform.redis_url,
        "DJANGO_SETTINGS_MODULE": platform.settings_module,
    }
    command = [
        sys.executable,
        "-m",
        "benchmarks.soak",
        "--url",
        platform.url,
        "--rounds",
        str(rounds),
        "--tables",
        str(tables),
        "--seed",
        str(seed),
        "--open-signups",
        "--timeout",
        str(max(600, rounds)),  # about 10 rounds a second here: a second per round is ample
    ]
    print("$", " ".join(command[1:]), flush=True)
    started = time.monotonic()
    done = subprocess.run(command, cwd=ROOT, env=env, check=False)
    print(f"soak: exit status {done.returncode}, {time.monotonic() - started:.0f} s", flush=True)
    return done.returncode


def ledger_reconciles(url: str) -> bool:
    """``manage.py ledger_audit`` on the platform's database after its runs: every coin
    accounted for (the balances sum to zero, every transaction balanced, no cached balance off,
    no negative wallet). Prints its verdict."""
    done = subprocess.run(
        [sys.executable, "manage.py", "ledger_audit"],
        cwd=ROOT,
        env=platform_env(url),
        capture_output=True,
        text=True,
    )
    print(f"ledger_audit: {(done.stdout + done.stderr).strip()}", flush=True)
    return done.returncode == 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.capacity", description=HELP)
    parser.add_argument("what", choices=["bursts", "ramp", "all", "soak", "sockets"])
    parser.add_argument("--web", type=int, default=1, help="daphne processes (HAProxy if > 1)")
    parser.add_argument("--runs", type=int, default=3, help="burst runs (the median is kept)")
    parser.add_argument(
        "--rounds", type=int, help="rounds per burst run (52), or of the soak (10000)"
    )
    parser.add_argument(
        "--tables", type=int, help="tables of 4: the soak's (8), the sockets' (32, at most 64)"
    )
    parser.add_argument("--seed", type=int, default=1, help="the seed of the soak's faults")
    parser.add_argument("--max-tables", type=int, default=256, help="the ramp's last step")
    parser.add_argument("--think", default="0.5,3", help="the ramp's think time, MIN,MAX s")
    parser.add_argument(
        "--stagger",
        type=float,
        default=0.0,
        help="the ramp's tables begin their first round over this many seconds (default 0: "
        "together; see benchmarks.load --stagger)",
    )
    args = parser.parse_args(argv)
    if not 1 <= args.web <= 8:
        parser.error("--web must be 1 to 8")
    if args.rounds is not None and args.rounds < 1:
        parser.error("--rounds must be at least 1")
    most = 64 if args.what == "sockets" else 10_000
    if args.tables is not None and not 1 <= args.tables <= most:
        parser.error("--tables must be at least 1 (at most 64 for sockets)")
    if args.what == "sockets" and not 1 <= args.runs <= 5:
        parser.error("--runs must be 1 to 5 for sockets (the per-user budget of table connections)")
    url = database_url()
    fresh_database(url)
    platform = start_platform(url, args.web)
    try:
        print(f"platform: {platform.url} ({args.web} web process(es))", flush=True)
        if args.what == "soak":
            return soak(platform, args.rounds or 10_000, args.tables or 8, args.seed)
        if args.what == "sockets":
            from benchmarks.sockets import measure

            asyncio.run(measure(platform.url, args.tables or 32, args.runs, concurrency=4))
            return 0
        if args.what in ("bursts", "all"):
            bursts(platform.url, args.runs, args.rounds or 52)
        if args.what in ("ramp", "all"):
            ramp(platform.url, args.max_tables, args.think, args.stagger)
        if not ledger_reconciles(url):
            return 1
    finally:
        platform.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())

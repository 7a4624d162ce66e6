"""Soak test of the running platform: many rounds with faults, then a check that nothing was lost.

    python -m benchmarks.soak --url http://127.0.0.1:8000 --rounds 10000 --tables 8 --seed 1

``--tables`` × 4 players sign up (or log in) and meet at private rooms with the "Soak" rules,
then play ``--rounds`` rounds in total over real WebSockets, every table at once, with faults
seeded by ``--seed`` (benchmarks.soak_faults, played by benchmarks.soak_play). Then, reading the
platform's database (``DJANGO_SETTINGS_MODULE``, by default ``shisanshui.settings.local``, and
``DATABASE_URL`` from the environment: the platform's own), it prints one PASS or FAIL line per
check (benchmarks.soak_checks); the exit status is 1 when a check fails. It first makes sure the
"Soak" rule configuration exists (``manage.py load_test_rules --name Soak``, 2-second clocks);
``--open-signups`` lifts the limit of sign-ups per address. Talks only to the loopback URL it
is given, and stops by itself after ``--timeout`` seconds. docs/load-and-faults.md has figures.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import time
import urllib.error
import urllib.parse
from collections import Counter

from benchmarks.seating import bases
from benchmarks.soak_checks import balances_of, room_codes, run_checks
from benchmarks.soak_faults import DEFAULT_P, DEFAULT_P_DECLINE, FAULTS
from benchmarks.soak_play import Run, Seat, Table, play, seat_players

RULES_NAME = "Soak"
# The Soak rules' clocks: a timed-out seat costs ~2 s; a Ready is never due before 30 s.
CLOCKS = {"ready_seconds": 30, "special_choice_seconds": 2, "arrange_seconds": 2}


def setup_django() -> None:
    """Django for the platform's database: DJANGO_SETTINGS_MODULE (default
    shisanshui.settings.local) and DATABASE_URL from the environment."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shisanshui.settings.local")
    import django  # noqa: PLC0415 - only the database phases need it

    django.setup()


def ensure_rules(args: argparse.Namespace) -> int:
    """The Soak rule configuration's id (created, or its clocks set, if needed)."""
    from django.core.management import call_command  # noqa: PLC0415

    options = [f"--{name.replace('_', '-')}={value}" for name, value in CLOCKS.items()]
    if args.open_signups:
        options.append("--open-signups")
    out = io.StringIO()
    call_command("load_test_rules", f"--name={args.rules_name}", *options, stdout=out)
    return int(out.getvalue().strip())


def client_figures(run: Run) -> str:
    errors: Counter[str] = Counter()
    benign: Counter[str] = Counter()
    closes: Counter[int | None] = Counter()
    for c in run.clients:
        errors.update(c.stats.errors)
        benign.update(c.stats.benign)
        closes.update(c.stats.close_codes)
    return (
        f"clients: {len(run.clients)} client objects, "
        f"reconnects {sum(c.stats.reconnects for c in run.clients)} "
        f"(closes {dict(closes) or 0}, failed connects "
        f"{sum(c.stats.connect_failures for c in run.clients)}, lobby retries "
        f"{run.notes['lobby_connect_retries']}), "
        f"resyncs {sum(c.stats.resyncs for c in run.clients)}, "
        f"snapshots {sum(c.stats.snapshots for c in run.clients)}, "
        f"errors {dict(errors) or 0}, benign refusals {dict(benign) or 0}"
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    origin, ws_base = bases(args.url)
    setup_django()
    rules = ensure_rules(args)
    print(
        f"url: {args.url} prefix: {args.prefix} rules: {args.rules_name} #{rules} "
        f"tables: {args.tables} rounds: {args.rounds} seed: {args.seed}",
        flush=True,
    )
    print(
        "fault probabilities per seat and round: "
        + " ".join(f"{k}={v:g}" for k, v in args.p.items())
        + f" (special declined: {args.p_decline:g})",
        flush=True,
    )
    try:
        seated = asyncio.run(seat_players(args, origin, ws_base, rules))
    except urllib.error.URLError as exc:
        print(f"cannot reach {args.url}: {exc}", file=sys.stderr)
        return 2
    run = Run(
        args, origin, ws_base, remaining=args.rounds, deadline=time.monotonic() + args.timeout
    )
    if args.trace:
        run.trace_file = open(args.trace, "w")  # noqa: SIM115 - closed after the run
    codes = room_codes([room for room, _ in seated])
    tables = [Table(run, i, room, codes[room]) for i, (room, _) in enumerate(seated)]
    seats = [Seat(t, n, c) for t, (_, group) in zip(tables, seated, strict=True) for n, c in group]
    start_balances = balances_of(s.name for s in seats)
    from django.db import close_old_connections  # noqa: PLC0415

    close_old_connections()

    seconds = asyncio.run(play(run, seats))
    if run.trace_file is not None:
        run.trace_file.close()
    played = sum(sum(t.decisions.values()) for t in tables)
    print(f"rounds: {played} started of {args.rounds}", flush=True)
    print(f"seconds: {seconds:.1f}", flush=True)
    print(f"rounds_per_minute: {60 * played / seconds if seconds else 0:.1f}", flush=True)
    kinds = [*FAULTS, "special"]
    print(
        "faults: "
        + " ".join(f"{k}={run.injected[k]}" for k in kinds)
        + f" (reload overlapping: {run.notes['reload_overlap']}, specials played "
        f"{run.notes['special_played']} / declined {run.notes['special_declined']}, "
        f"rejoins {run.notes['rejoins']})",
        flush=True,
    )
    print(client_figures(run), flush=True)
    checks, figures = run_checks(run, tables, start_balances, args.rounds)
    for line in figures:
        print(line, flush=True)
    for check in checks:
        print(check.line(), flush=True)
    for failure in run.failures[:40]:
        print(f"  failure: {failure}", flush=True)
    return 0 if all(c.ok for c in checks) else 1


def probability(text: str) -> float:
    value = float(text)
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError("a probability is between 0 and 1")
    return value


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.soak", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--url", default="http://127.0.0.1:8000", help="the platform's URL")
    parser.add_argument("--rounds", type=int, default=1000, help="rounds in all (default 1000)")
    parser.add_argument("--tables", type=int, default=8, help="tables of 4 at once (default 8)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the faults (default 1)")
    parser.add_argument("--timeout", type=float, help="stop after this many seconds")
    parser.add_argument("--prefix", help="player names' prefix (default: sk<time>)")
    parser.add_argument("--rules-name", default=RULES_NAME, help="the rule configuration's name")
    parser.add_argument("--trace", help="write every frame to this file (JSON lines)")
    parser.add_argument(
        "--open-signups",
        action="store_true",
        help="lift the limit of sign-ups per address (test machines only)",
    )
    for kind in FAULTS:
        parser.add_argument(
            f"--p-{kind}",
            type=probability,
            default=DEFAULT_P[kind],
            help=f"probability of a {kind} per seat and round (default {DEFAULT_P[kind]:g})",
        )
    parser.add_argument(
        "--p-decline",
        type=probability,
        default=DEFAULT_P_DECLINE,
        help=f"probability of declining a special hand (default {DEFAULT_P_DECLINE:g})",
    )
    args = parser.parse_args(argv)
    args.p = {kind: getattr(args, f"p_{kind}") for kind in FAULTS}
    if sum(args.p.values()) > 1:
        parser.error("the fault probabilities add up to more than 1")
    if args.rounds < 1 or args.tables < 1:
        parser.error("--rounds and --tables must be at least 1")
    if args.timeout is None:
        args.timeout = 300 + 6 * args.rounds / args.tables
    args.prefix = args.prefix or f"sk{int(time.time()) % 1_000_000}"
    if urllib.parse.urlsplit(args.url).hostname not in ("127.0.0.1", "localhost", "::1"):
        parser.error("the soak script only talks to the loopback interface")
    return args


if __name__ == "__main__":
    sys.exit(main())

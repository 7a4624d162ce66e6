"""One step of the load test: seat tables × seats players, play, leave, and take the figures.

Seat i of table t talks to URL (t × seats + i) mod len(urls), so with several web processes a
table's seats are spread over them. The server's processes are sampled every half-second while
the clients play, beside the host probes; the figures are a load_result.Result.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import math
import random
import time
from collections import Counter

import psutil

from benchmarks.host_probes import LoopLag, StallProbe, host_speed_ms, steal_share
from benchmarks.load_result import Result, rounds_settled_between, tail_windows
from benchmarks.seating import Sessions, bases, close_table, open_table
from benchmarks.server_usage import (
    PostgresBackends,
    Usage,
    platform_database_url,
    server_processes,
    window_cpu,
)
from benchmarks.table_client import ACTION_CLASSES, LatencyTracker, TableClient


def step_rounds(rounds: int | None, tables: int, seats: int, min_samples: int) -> int | None:
    """The rounds a step plays: ``rounds``, or more when they would time fewer than
    ``min_samples`` action → broadcast samples (each seat's Ready and submit reach the
    others: 2·s·(s-1) a round at a table of s seats). None with ``--duration``."""
    if rounds is None:
        return None
    per_round = 2 * seats * (seats - 1) * tables
    return max(rounds, -(-min_samples // per_round))


async def run_step(args: argparse.Namespace, sessions: Sessions, rules: int, tables: int) -> Result:
    """Seat ``tables`` × ``args.seats`` players, play, leave; the figures of that step."""
    # Seat i of table t talks to URL (t × seats + i) mod len(urls): with several web processes
    # the seats of one table are spread over them.
    seat_bases = [bases(url) for url in args.urls]
    origin, ws_base = seat_bases[0]
    players = await sessions.get(tables * args.seats)
    groups = [players[i * args.seats : (i + 1) * args.seats] for i in range(tables)]
    semaphore = asyncio.Semaphore(8)

    async def seat(group: list[tuple[str, dict[str, str]]]) -> int:
        async with semaphore:
            return await open_table(ws_base, origin, group, rules, args.seats)

    rooms = await asyncio.gather(*(seat(g) for g in groups))
    tracker = LatencyTracker()
    end = time.monotonic() + (args.duration or 0)
    decisions: dict[tuple[int, int], bool] = {}
    clients: list[TableClient] = []
    for table_no, (room, group) in enumerate(zip(rooms, groups, strict=True)):
        # --stagger: the table's first Ready waits a random part of that many seconds (every
        # seat of the table the same), as a table opened a moment later than the others would.
        first_delay = random.uniform(0, args.stagger) if args.stagger else 0.0
        for seat_no, (name, cookie) in enumerate(group):
            seat_origin, seat_ws = seat_bases[(table_no * args.seats + seat_no) % len(seat_bases)]
            client = TableClient(
                ws_url=seat_ws,
                room_id=room,
                cookie=cookie,
                origin=seat_origin,
                name=name,
                tracker=tracker,
                play_special=args.play_special,
                think=args.think,
                silence_seconds=max(2.0, 1.0 + (args.think[1] if args.think else 0.0)),
                first_delay=first_delay,
            )
            if args.duration:
                # Decided once per table and round, so every seat stops after the same round.
                client.want_round = lambda n, r=room: decisions.setdefault(
                    (r, n), time.monotonic() < end
                )
            clients.append(client)

    speed = host_speed_ms()
    vacuum = getattr(args, "vacuum", None)
    vacuums = vacuum.vacuums if vacuum is not None else 0
    # What exists now lives until the end: the collector never walks it again, so that its
    # pauses in this process do not count as the platform's latency (shisanshui/warm.py).
    gc.collect()
    gc.freeze()
    usage = Usage(server_processes(args.urls, args.server_pids))
    database_url = args.database_url or platform_database_url(usage.groups)
    if database_url and not args.no_postgres:
        usage.postgres = PostgresBackends(database_url)
    usage.sample()
    watcher = asyncio.create_task(usage.watch())
    psutil.cpu_percent()
    machine = psutil.cpu_times()
    me = psutil.Process()
    client_cpu = sum(me.cpu_times()[:2])
    rounds = step_rounds(args.rounds, tables, args.seats, args.min_samples)
    timeout = args.timeout + args.stagger + 30 * ((rounds or 0) - (args.rounds or 0))
    probe = StallProbe()
    lag = LoopLag()
    started = time.monotonic()
    try:
        outcomes = await asyncio.gather(
            *(c.play(rounds=rounds, seconds=timeout, leave=True) for c in clients),
            return_exceptions=True,
        )
        seconds = time.monotonic() - started
    finally:
        host_stalls = probe.stop()
        loop_lag = lag.stop()
    system_cpu = psutil.cpu_percent()
    steal = steal_share(machine, psutil.cpu_times())
    client_cpu = sum(me.cpu_times()[:2]) - client_cpu
    watcher.cancel()
    usage.sample()
    if usage.postgres is not None:
        usage.postgres.close()

    errors: Counter[str] = Counter()
    benign: Counter[str] = Counter()
    for client, outcome in zip(clients, outcomes, strict=True):
        errors.update(client.stats.errors)
        benign.update(client.stats.benign)
        errors.update({f"close_{c}": n for c, n in client.stats.close_codes.items()})
        errors["timeout"] += client.stats.timeouts
        if isinstance(outcome, BaseException) and not isinstance(outcome, TimeoutError):
            errors[f"client_{type(outcome).__name__}"] += 1
    rounds = sum(max(c.rounds_played for c in clients if c.room_id == room) for room in rooms)
    welcomed = [c.welcomed_at for c in clients]
    leaving = [c.leaving_at for c in clients if c.leaving_at is not None]
    steady_from = max(welcomed) if welcomed and None not in welcomed else math.inf
    steady_to = min(leaving, default=math.inf)
    steady = [1000 * s for at, s in tracker.timed if steady_from <= at < steady_to]
    cpu_seconds = usage.cpu_seconds()
    steady_cpu: dict[str, float] = {}
    steady_rounds = 0
    window = window_cpu(usage.timeline, steady_from, steady_to)
    if window is not None:
        first, last, seconds_by_group = window
        settled: dict[int, list[dict[int, float]]] = {}
        for c in clients:
            settled.setdefault(c.room_id, []).append(c.settled_at)
        steady_rounds = rounds_settled_between(settled, first, last)
        if steady_rounds:
            steady_cpu = {k: 1000 * v / steady_rounds for k, v in seconds_by_group.items()}
    # After the figures: the owners close their rooms, so the next step may open new ones.
    await asyncio.gather(
        *(
            close_table(ws_base, origin, group[0], room)
            for room, group in zip(rooms, groups, strict=True)
        )
    )
    return Result(
        tables=tables,
        clients=len(clients),
        rounds=rounds,
        seconds=seconds,
        latencies_ms=[1000 * s for s in tracker.samples],
        steady_ms=steady,
        by_class_ms={k: [1000 * s for s in tracker.by_class[k]] for k in ACTION_CLASSES},
        tail=tail_windows(tracker.timed, started),
        replies_ms=[1000 * s for s in tracker.replies],
        errors=+errors,
        benign=+benign,
        reconnects=sum(c.stats.reconnects for c in clients),
        resyncs=sum(c.stats.resyncs for c in clients),
        rss_mb={k: v / 2**20 for k, v in usage.peak_rss.items()},
        cpu_percent={k: 100 * v / seconds for k, v in cpu_seconds.items()},
        cpu_ms_per_round={k: 1000 * v / max(rounds, 1) for k, v in cpu_seconds.items()},
        system_cpu_percent=system_cpu,
        client_cpu_percent=100 * client_cpu / seconds,
        steal_percent=steal,
        steady_cpu_ms_per_round=steady_cpu,
        steady_rounds=steady_rounds,
        welcome_ms=[1000 * (at - started) for at in welcomed if at is not None],
        host_stalls=host_stalls,
        host_speed_ms=speed,
        loop_lag_ms=loop_lag,
        vacuums=(vacuum.vacuums - vacuums) if vacuum is not None else None,
    )

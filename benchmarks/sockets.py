"""What a table socket costs the platform: CPU-ms per connection, from the handshake to the close.

The command's --help (HELP, below) says how each measurement runs and what it prints.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

import websockets

from benchmarks.seating import Sessions, bases, close_table, find_rules, open_table
from benchmarks.server_usage import (
    PostgresBackends,
    Usage,
    platform_database_url,
    server_processes,
)
from benchmarks.table_client import cookie_header

# The command's --help text.
HELP = """\
What a table socket costs the platform: CPU-ms per connection, from the handshake to the close.

    python -m benchmarks.sockets --url http://127.0.0.1:8000 [--tables 32] [--runs 3]
    python -m benchmarks.capacity sockets      # on a platform of its own (the usual way)

The players of ``--tables`` tables of four are seated through the lobby (before the clock),
then every run opens each one's table socket, says ``hello``, waits for the ``welcome`` and
closes it, at most ``--concurrency`` at a time (so it measures the cost of a connection, not
a storm's queues). A run's CPU of the platform's processes (daphne, Celery, Redis, the
PostgreSQL backends of its database; found as ``benchmarks.load`` finds them) is divided by
its sockets. The first run's connections find their seats marked connected (as after sitting
down); the later ones reconnect seats their previous close marked away, so the other seats'
sockets hear ``reconnected`` and ``disconnected`` events too, as at a real table.

The players are made with ``manage.py load_test_players`` in the platform's environment (no
password to hash), which needs the daphne process's environment: run it on the platform's
machine. Talks to 127.0.0.1 only and ends by itself; the rooms are closed at the end.
"""


SEATS = 4


async def connect_once(ws_base: str, origin: str, room: int, cookie: dict[str, str]) -> None:
    """One table socket: handshake, hello, the welcome, close."""
    headers = {"Cookie": cookie_header(cookie), "Origin": origin}
    url = f"{ws_base}/ws/table/{room}/"
    async with websockets.connect(
        url, additional_headers=headers, open_timeout=30, ping_interval=None
    ) as ws:
        await ws.send(json.dumps({"type": "hello", "id": "h", "since": None}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame.get("type") == "welcome":
                return
            if frame.get("type") == "error":
                raise RuntimeError(f"refused: {frame['error']}")


async def measure(
    url: str, tables: int, runs: int, concurrency: int, rules_name: str = "Load test"
) -> dict[str, Any]:
    groups_found = server_processes([url], None)
    daphnes = groups_found.get("daphne", [])
    if not daphnes:
        raise SystemExit(f"no daphne process found for {url}")
    env = {**os.environ, **daphnes[0].environ()}
    sessions = Sessions(url, f"sk{time.time_ns()}", command_env=env)
    players = await sessions.get(tables * SEATS)
    rules = find_rules(url, players[0][1], rules_name)
    origin, ws_base = bases(url)
    groups = [players[i * SEATS : (i + 1) * SEATS] for i in range(tables)]
    rooms = [await open_table(ws_base, origin, g, rules, SEATS) for g in groups]
    seats = [(room, cookie) for room, g in zip(rooms, groups, strict=True) for _, cookie in g]
    gate = asyncio.Semaphore(concurrency)

    async def one(room: int, cookie: dict[str, str]) -> None:
        async with gate:
            await connect_once(ws_base, origin, room, cookie)

    database_url = platform_database_url(groups_found)
    figures: list[dict[str, float]] = []
    try:
        for run in range(1, runs + 1):
            usage = Usage(groups_found)
            if database_url:
                usage.postgres = PostgresBackends(database_url)
            usage.sample()
            watcher = asyncio.create_task(usage.watch())
            started = time.monotonic()
            await asyncio.gather(*(one(room, cookie) for room, cookie in seats))
            seconds = time.monotonic() - started
            await asyncio.sleep(1.0)  # the closes' services and their events
            watcher.cancel()
            usage.sample()
            if usage.postgres is not None:
                usage.postgres.close()
            sockets = tables * SEATS
            per_socket = {k: 1000 * v / sockets for k, v in sorted(usage.cpu_seconds().items())}
            per_socket["total"] = sum(per_socket.values())
            figures.append(per_socket)
            parts = " ".join(f"{k}={v:.2f}" for k, v in per_socket.items())
            print(f"run {run}: {sockets} sockets in {seconds:.1f} s, cpu_ms_per_socket {parts}")
    finally:
        owners = [(room, g[0]) for room, g in zip(rooms, groups, strict=True)]
        await asyncio.gather(*(close_table(ws_base, origin, o, room) for room, o in owners))
    median = {k: statistics.median(f.get(k, 0.0) for f in figures) for k in figures[0]}
    parts = " ".join(f"{k}={v:.2f}" for k, v in median.items())
    print(f"median of {runs}: cpu_ms_per_socket {parts}", flush=True)
    return median


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.sockets", description=HELP)
    parser.add_argument("--url", required=True, help="the platform's URL (one daphne)")
    parser.add_argument("--tables", type=int, default=32, help="tables of four (1-64)")
    parser.add_argument("--runs", type=int, default=3, help="connection rounds (1-5)")
    parser.add_argument("--concurrency", type=int, default=4, help="sockets at once (1-64)")
    parser.add_argument("--rules-name", default="Load test", help="the rooms' rule configuration")
    args = parser.parse_args(argv)
    if not 1 <= args.tables <= 64:
        parser.error("--tables must be 1 to 64")
    if not 1 <= args.runs <= 5:  # the per-user budget of table connections (table.connect)
        parser.error("--runs must be 1 to 5")
    if not 1 <= args.concurrency <= 64:
        parser.error("--concurrency must be 1 to 64")
    asyncio.run(measure(args.url, args.tables, args.runs, args.concurrency, args.rules_name))
    return 0


if __name__ == "__main__":
    sys.exit(main())

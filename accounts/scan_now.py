"""The collusion flags' "Scan now" (accounts.economy_admin): the worker is asked to scan, or the
admin runs the scan itself when no worker answers. Apart from `accounts.collusion`, which the
table's services read (transfers frozen), so that nothing the worker's app starts imports the
worker's app back.
"""

from __future__ import annotations

from collections.abc import Callable

from shisanshui.celery import app
from shisanshui.health import OK, check_celery

# "Scan now": the admin asks the worker, or runs the scan itself when no worker answers. The
# scan reads the played rounds (games.history.collusion), which this app may not import: the
# games app registers it (GamesConfig.ready).
SCAN_TASK = "accounts.tasks.collusion_scan"
_scans: list[Callable[[], int]] = []


def collusion_scan_register(scan: Callable[[], int]) -> None:
    """Have `collusion_scan_request` run ``scan()`` when no worker answers (once)."""
    if scan not in _scans:
        _scans.append(scan)


def _worker_answers() -> bool:
    """Whether a Celery worker answers (/healthz's check: a broadcast ping, its answer cached
    for a few seconds)."""
    return check_celery() == OK


def collusion_scan_request() -> int | None:
    """Run the collusion scan now: queued for a Celery worker when one answers (None), else
    run here and the number of pairs flagged returned."""
    if _worker_answers():
        app.send_task(SCAN_TASK)
        return None
    return sum(scan() for scan in _scans)

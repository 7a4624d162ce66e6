"""The special-hand simulation behind the rule configuration admin, never built in a request.

Simulating SPECIAL_STATS_DEALS deals takes tens of seconds. `make run` builds it at start in
the background (`manage.py warm_special_stats`, scripts/run.py); a deployment runs that command
once. A request only *reads* the cache file: when it is not there yet,
:func:`special_deals_ready` answers None, the page says the figures are being computed and
:func:`special_deals_build_in_background` starts the build in a thread of this process (one
at a time). Builds hold an exclusive lock on a file beside the cache, so the warm command and
the web processes never simulate at once: whoever comes second waits, then reads the file.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from games.rules.stats import (
    Progress,
    SimulatedDeals,
    StatsCacheError,
    cache_filename,
    load_deals,
    load_or_simulate,
)
from games.selectors import special_stats_settings

logger = logging.getLogger(__name__)

# path -> (modification time, deals): a file is read once per process, again if rebuilt.
_loaded: dict[Path, tuple[int, SimulatedDeals]] = {}
_thread_lock = threading.Lock()
_thread: threading.Thread | None = None


def _cache_path() -> tuple[Path, int, int, Path]:
    directory, n_deals, seed = special_stats_settings()
    return directory, n_deals, seed, directory / cache_filename(n_deals, seed)


@contextmanager
def _build_lock(path: Path) -> Iterator[None]:
    """An exclusive lock on ``path``.lock, shared by every process of this machine."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path.with_name(path.name + ".lock"), "a+b") as lock_file:
        fcntl.flock(lock_file, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock_file, fcntl.LOCK_UN)


def special_deals_ready() -> SimulatedDeals | None:
    """The cached simulation of the settings if its file is there and usable; never simulates."""
    _directory, n_deals, seed, path = _cache_path()
    try:
        mtime = path.stat().st_mtime_ns
    except FileNotFoundError:
        return None
    cached = _loaded.get(path)
    if cached is not None and cached[0] == mtime:
        return cached[1]
    try:
        deals = load_deals(path)
    except StatsCacheError:
        return None  # made for other special hands: the next build replaces it
    if deals.deals != n_deals or deals.seed != seed:
        return None
    _loaded[path] = (mtime, deals)
    return deals


def _build(
    where: tuple[Path, int, int, Path],
    *,
    rebuild: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
) -> SimulatedDeals:
    directory, n_deals, seed, path = where
    with _build_lock(path):
        deals = load_or_simulate(
            directory, n_deals, seed, rebuild=rebuild, workers=workers, progress=progress
        )
        _loaded[path] = (path.stat().st_mtime_ns, deals)
    return deals


def special_deals_build(
    *, rebuild: bool = False, workers: int = 1, progress: Progress | None = None
) -> SimulatedDeals:
    """The simulation of the settings: read from the cache, or simulated and saved, under the
    build lock (a build already running elsewhere is waited for, not repeated)."""
    return _build(_cache_path(), rebuild=rebuild, workers=workers, progress=progress)


def _build_quietly(where: tuple[Path, int, int, Path]) -> None:
    try:
        _build(where)
    except Exception:  # a thread has nobody to raise to; the next page view tries again
        logger.exception("Building the special-hand statistics failed")


def special_deals_build_in_background() -> bool:
    """Starts building in a daemon thread of this process unless one is running; True if this
    call started it. The settings are read here, in the caller's thread; the build uses one
    process (a web process is not forked) and no database."""
    global _thread
    with _thread_lock:
        if _thread is not None and _thread.is_alive():
            return False
        _thread = threading.Thread(
            target=_build_quietly, args=(_cache_path(),), name="special-stats-build", daemon=True
        )
        _thread.start()
        return True


def special_deals_building() -> bool:
    """Whether this process's background build is running."""
    return _thread is not None and _thread.is_alive()

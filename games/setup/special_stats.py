"""The special-hand simulation behind the rule configuration admin, never built in a request.

Simulating SPECIAL_STATS_DEALS deals takes tens of seconds. `make run` builds it at start in
the background (`manage.py warm_special_stats`, scripts/run.py); a deployment runs that command
once. A request only *reads* the cache file: when it is not there yet,
:func:`special_deals_ready` answers None, the page says the figures are being computed and
:func:`special_deals_build_in_background` starts the build in a thread of this process (one
at a time). Builds hold an exclusive lock on a file beside the cache, so the warm command and
the web processes never simulate at once: whoever comes second waits, then reads the file.

Each deck has its own simulation and cache file (RULES.md §12: :class:`DealShape`, a full table
of the deck's seats); the classic deck's is the default everywhere. The figures of a
configuration are those of its own deck. A variant deck's build is started, like the classic
one, by the first page that needs it; the background thread builds the decks asked for one
after the other.
"""

from __future__ import annotations

import fcntl
import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from games.rules.stats import (
    CLASSIC_SHAPE,
    DealShape,
    Progress,
    SimulatedDeals,
    StatsCacheError,
    cache_filename,
    load_deals,
    load_or_simulate,
)
from games.setup.selectors import special_stats_settings

logger = logging.getLogger(__name__)

# path -> (modification time, deals): a file is read once per process, again if rebuilt.
_loaded: dict[Path, tuple[int, SimulatedDeals]] = {}
# (cache directory, deals, seed, cache file, deck)
Where = tuple[Path, int, int, Path, DealShape]

_thread_lock = threading.Lock()
_thread: threading.Thread | None = None
# Guarded by _thread_lock: whether the thread still takes work, the builds it has yet to do,
# and the cache files queued or being built (each asked for once).
_running = False
_queue: list[Where] = []
_asked: set[Path] = set()


def _cache_path(shape: DealShape = CLASSIC_SHAPE) -> Where:
    directory, n_deals, seed = special_stats_settings()
    path = directory / cache_filename(n_deals, seed, shape=shape)
    return directory, n_deals, seed, path, shape


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


def special_deals_ready(shape: DealShape = CLASSIC_SHAPE) -> SimulatedDeals | None:
    """The cached simulation of the settings for ``shape``'s deck if its file is there and
    usable; never simulates."""
    _directory, n_deals, seed, path, _shape = _cache_path(shape)
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
    if deals.deals != n_deals or deals.seed != seed or deals.shape != shape:
        return None
    _loaded[path] = (mtime, deals)
    return deals


def _build(
    where: Where,
    *,
    rebuild: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
) -> SimulatedDeals:
    directory, n_deals, seed, path, shape = where
    with _build_lock(path):
        deals = load_or_simulate(
            directory,
            n_deals,
            seed,
            rebuild=rebuild,
            workers=workers,
            progress=progress,
            shape=shape,
        )
        _loaded[path] = (path.stat().st_mtime_ns, deals)
    return deals


def special_deals_build(
    *,
    rebuild: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
    shape: DealShape = CLASSIC_SHAPE,
) -> SimulatedDeals:
    """The simulation of the settings for ``shape``'s deck: read from the cache, or simulated
    and saved, under the build lock (a build already running elsewhere is waited for, not
    repeated)."""
    return _build(_cache_path(shape), rebuild=rebuild, workers=workers, progress=progress)


def _build_quietly(where: Where) -> None:
    try:
        _build(where)
    except Exception:  # a thread has nobody to raise to; the next page view tries again
        logger.exception("Building the special-hand statistics failed")


def _build_queued() -> None:
    """The thread's work: every queued build, one after the other, until none is left."""
    global _running
    finished = False
    try:
        while True:
            with _thread_lock:
                if not _queue:
                    # Under the lock that queues: a build asked for from now starts a thread.
                    _running, finished = False, True
                    return
                where = _queue.pop(0)
            try:
                _build_quietly(where)
            finally:
                with _thread_lock:
                    _asked.discard(where[3])
    finally:
        if not finished:  # stopped by a BaseException: the next page view starts again
            with _thread_lock:
                _running = False
                _asked.difference_update(queued[3] for queued in _queue)
                _queue.clear()


def special_deals_build_in_background(shape: DealShape = CLASSIC_SHAPE) -> bool:
    """Builds ``shape``'s simulation in a daemon thread of this process (one thread; decks
    asked for while it runs are built after); True if this call started or queued a build,
    False if that deck's build is already asked for. The settings are read here, in the
    caller's thread; the build uses one process (a web process is not forked) and no
    database."""
    global _thread, _running
    where = _cache_path(shape)
    with _thread_lock:
        if where[3] in _asked:
            return False
        _asked.add(where[3])
        _queue.append(where)
        if not _running:
            _running = True
            _thread = threading.Thread(
                target=_build_queued, name="special-stats-build", daemon=True
            )
            _thread.start()
        return True


def special_deals_building() -> bool:
    """Whether this process's background build is running."""
    return _thread is not None and _thread.is_alive()

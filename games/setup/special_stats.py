"""The special-hand simulation behind the rule configuration admin, never built in a request.

Simulating SPECIAL_STATS_DEALS deals takes tens of seconds. `make run` builds it at start in
the background (`manage.py warm_special_stats`, scripts/run.py); a deployment runs that command
once. A request only *reads* the cache file: when it is not there yet,
:func:`special_deals_ready` answers None, the page says the figures are being computed and
:func:`special_deals_build_in_background` starts the build in a thread of this process (one
at a time). Builds hold an exclusive lock on a file beside the cache, so the warm command and
the web processes never simulate at once: whoever comes second waits, then reads the file.

While the full simulation of a deck is missing, the background build first takes a *sample*
(``games.rules.stats.sample_deals``: SPECIAL_STATS_SAMPLE_SECONDS of deals, saved beside the
cache as its own file) so the page has a first answer, with 95 % intervals, within seconds; then
it runs the full simulation. Its phase and progress are kept in Django's cache
(:func:`special_stats_progress`), which every web process reads, for the page to poll.

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

from django.conf import settings
from django.core.cache import cache

from games.rules.stats import (
    CLASSIC_SHAPE,
    SAMPLE_CHUNK,
    DealShape,
    Progress,
    SimulatedDeals,
    StatsCacheError,
    cache_filename,
    load_deals,
    load_or_simulate,
    sample_deals,
    save_deals,
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


# Seconds of simulation the first answer (the sample) takes at most, per deck.
SAMPLE_SECONDS = 8.0
# How long a progress record outlives its last update (a dead build is seen as idle again).
_PROGRESS_TTL = 3600


def _sample_path(path: Path) -> Path:
    return path.with_name(path.stem + "_sample.npz")


def _progress_key(path: Path) -> str:
    return f"special-stats-progress:{path.name}"


def _progress_set(path: Path, phase: str, done: int = 0, total: int = 0) -> None:
    cache.set(_progress_key(path), {"phase": phase, "done": done, "total": total}, _PROGRESS_TTL)


def special_stats_progress(shape: DealShape = CLASSIC_SHAPE) -> dict[str, object]:
    """Where ``shape``'s statistics are: ``phase`` is "ready" (the full simulation is there),
    "sampled" (a sample is there, the full one is being built), "sampling", "building",
    "failed" or "idle" (nothing asked for yet, or the build died); ``done`` and ``total``
    count deals of the running step; ``percent`` is 0 to 100."""
    where = _cache_path(shape)
    if special_deals_ready(shape) is not None:
        return {"phase": "ready", "done": where[1], "total": where[1], "percent": 100}
    record = cache.get(_progress_key(where[3])) or {"phase": "idle", "done": 0, "total": 0}
    phase = str(record["phase"])
    if phase == "ready":  # recorded, but its file is gone (or of other settings): start again
        phase = "idle"
    if phase == "building" and special_sample_ready(shape) is not None:
        phase = "sampled"
    done, total = int(record["done"]), int(record["total"])
    percent = min(100, round(100 * done / total)) if total else 0
    return {"phase": phase, "done": done, "total": total, "percent": percent}


def special_sample_ready(shape: DealShape = CLASSIC_SHAPE) -> SimulatedDeals | None:
    """The sample of ``shape``'s deck if its file is there and usable; never simulates."""
    path = _sample_path(_cache_path(shape)[3])
    try:
        deals = load_deals(path)
    except StatsCacheError:
        return None
    return deals if deals.shape == shape else None


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
    if progress is None:  # recorded for the pages that poll it

        def progress(done: int, total: int) -> None:
            _progress_set(path, "building", done, total)

    with _build_lock(path):
        # Under the lock: a build that ran elsewhere meanwhile left its file, read below.
        if special_deals_ready(shape) is None and special_sample_ready(shape) is None:
            _sample(where)
        _progress_set(path, "building", 0, n_deals)
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


def _sample(where: Where) -> None:
    """A first answer for the page: a sample of the deck's deals, saved beside the cache."""
    _directory, n_deals, seed, path, shape = where
    seconds = float(getattr(settings, "SPECIAL_STATS_SAMPLE_SECONDS", SAMPLE_SECONDS))
    _progress_set(path, "sampling", 0, n_deals)
    deals = sample_deals(
        seed,
        budget_seconds=seconds,
        max_deals=n_deals,
        min_deals=min(SAMPLE_CHUNK, n_deals),
        shape=shape,
        progress=lambda done, total: _progress_set(path, "sampling", done, total),
    )
    save_deals(_sample_path(path), deals)


def _build_quietly(where: Where) -> None:
    path = where[3]
    try:
        _build(where)
        _progress_set(path, "ready", where[1], where[1])
    except Exception:  # a thread has nobody to raise to; the next page view tries again
        _progress_set(path, "failed")
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

"""The row-bonus statistics behind the rule configuration admin, never computed in a request.

Unlike the special hands' (:mod:`games.setup.special_stats`, one simulation per deck), a row
bonus's figures depend on the whole configuration — how hands are arranged follows its row
water, bonuses and specials — so they are computed per configuration, keyed by its rules' JSON
(an edit, once saved, is a new key; two configurations with the same rules share one). A page
that needs them starts the computation in a background thread of this process (one thread,
configurations queued) and polls :func:`row_bonus_progress`: first a sample of
ROW_BONUS_SAMPLE_SECONDS (an answer within seconds, with 95 % intervals), then a longer one of
ROW_BONUS_FULL_SECONDS that replaces it. Results and progress live in Django's cache, which
every web process reads; nothing touches the database.
"""

from __future__ import annotations

import hashlib
import logging
import threading
import time

from django.conf import settings
from django.core.cache import cache

from games.rules.config import RuleConfig
from games.rules.row_bonus_stats import CHUNK, RowBonusStats, row_bonus_stats

logger = logging.getLogger(__name__)

SAMPLE_SECONDS = 8.0
FULL_SECONDS = 60.0
FULL_MAX_DEALS = 20_000
# How long figures are kept (they never go stale: the key is the rules themselves).
_RESULT_TTL = 7 * 24 * 3600
_PROGRESS_TTL = 3600
# A running computation reports after every few deals; silent this long, it is dead.
_STALE = 120.0

_lock = threading.Lock()
_running = False
_queue: list[tuple[str, RuleConfig]] = []
_asked: set[str] = set()


def _key(config: RuleConfig) -> str:
    return hashlib.sha256(config.to_json().encode()).hexdigest()[:32]


def _seconds(name: str, default: float) -> float:
    return float(getattr(settings, name, default))


def row_bonus_ready(config: RuleConfig) -> tuple[RowBonusStats, bool] | None:
    """The latest figures for ``config`` and whether they are the first sample (True) or the
    full run (False); None before the first sample is done. Never computes."""
    full = cache.get(f"row-bonus:full:{_key(config)}")
    if isinstance(full, RowBonusStats):
        return full, False
    sample = cache.get(f"row-bonus:sample:{_key(config)}")
    if isinstance(sample, RowBonusStats):
        return sample, True
    return None


def row_bonus_progress(config: RuleConfig) -> dict[str, object]:
    """``phase``: "ready" (the full run is there), "sampled" (the sample is there, the full run
    is going), "sampling", "failed" or "idle"; ``done``/``total`` deals of the running step;
    ``percent`` 0 to 100."""
    ready = row_bonus_ready(config)
    if ready is not None and not ready[1]:
        return {"phase": "ready", "done": ready[0].deals, "total": ready[0].deals, "percent": 100}
    record = cache.get(f"row-bonus:progress:{_key(config)}") or {
        "phase": "idle",
        "done": 0,
        "total": 0,
        "at": 0.0,
    }
    phase = str(record["phase"])
    if phase == "ready":  # recorded, but the figures are gone from the cache: start again
        phase = "idle"
    if phase in ("sampling", "building") and time.time() - float(record["at"]) > _STALE:
        phase = "idle"  # its process died: the next page view starts again
    if phase in ("sampling", "building") and ready is not None:
        phase = "sampled"
    done, total = int(record["done"]), int(record["total"])
    percent = min(100, round(100 * done / total)) if total else 0
    return {"phase": phase, "done": done, "total": total, "percent": percent}


def _progress(key: str, phase: str, done: int = 0, total: int = 0) -> None:
    cache.set(
        f"row-bonus:progress:{key}",
        {"phase": phase, "done": done, "total": total, "at": time.time()},
        _PROGRESS_TTL,
    )


def _compute(key: str, config: RuleConfig) -> None:
    sample_seconds = _seconds("ROW_BONUS_SAMPLE_SECONDS", SAMPLE_SECONDS)
    full_seconds = _seconds("ROW_BONUS_FULL_SECONDS", FULL_SECONDS)
    max_deals = int(getattr(settings, "ROW_BONUS_FULL_MAX_DEALS", FULL_MAX_DEALS))
    _progress(key, "sampling", 0, max_deals)
    sample = row_bonus_stats(
        config,
        budget_seconds=sample_seconds,
        max_deals=max_deals,
        min_deals=CHUNK,
        progress=lambda done, total: _progress(key, "sampling", done, total),
    )
    cache.set(f"row-bonus:sample:{key}", sample, _RESULT_TTL)
    _progress(key, "building", 0, max_deals)
    full = row_bonus_stats(
        config,
        budget_seconds=full_seconds,
        max_deals=max_deals,
        min_deals=min(max_deals, sample.deals + CHUNK),  # always more than the sample
        progress=lambda done, total: _progress(key, "building", done, total),
    )
    cache.set(f"row-bonus:full:{key}", full, _RESULT_TTL)
    _progress(key, "ready", full.deals, full.deals)


def _work() -> None:
    global _running
    while True:
        with _lock:
            if not _queue:
                _running = False
                return
            key, config = _queue.pop(0)
        try:
            _compute(key, config)
        except Exception:  # a thread has nobody to raise to; the next page view tries again
            _progress(key, "failed")
            logger.exception("Computing the row-bonus statistics failed")
        finally:
            with _lock:
                _asked.discard(key)


def row_bonus_compute_in_background(config: RuleConfig) -> bool:
    """Starts (or queues) the computation of ``config``'s figures in this process's daemon
    thread; False when they are there already or already asked for (or the setting
    ROW_BONUS_STATS_IN_BACKGROUND is off, as in the tests, which compute when they mean to)."""
    global _running
    if not getattr(settings, "ROW_BONUS_STATS_IN_BACKGROUND", True):
        return False
    key = _key(config)
    ready = row_bonus_ready(config)
    if ready is not None and not ready[1]:
        return False
    with _lock:
        if key in _asked:
            return False
        if row_bonus_progress(config)["phase"] in ("sampling", "sampled"):
            return False  # another process is on it
        _asked.add(key)
        _queue.append((key, config))
        if not _running:
            _running = True
            threading.Thread(target=_work, name="row-bonus-stats", daemon=True).start()
        return True

"""Reads of rule configurations and of the special-hand statistics the admin shows."""

from __future__ import annotations

from pathlib import Path

from django.conf import settings

from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.stats import (
    DEFAULT_DEALS,
    DEFAULT_SEED,
    Progress,
    SimulatedDeals,
    SpecialStats,
    cache_filename,
    load_or_simulate,
    special_stats,
)

# path -> (modification time, deals): the file is read once per process, again if rebuilt.
_loaded: dict[Path, tuple[int, SimulatedDeals]] = {}


def rule_configuration_default() -> RuleConfiguration:
    """The default configuration (there is exactly one after ``migrate``)."""
    return RuleConfiguration.objects.get(is_default=True)


def special_stats_settings() -> tuple[Path, int, int]:
    """(cache directory, number of deals, seed) from the settings."""
    directory = Path(getattr(settings, "STATS_CACHE_DIR", settings.BASE_DIR / "var" / "cache"))
    deals = int(getattr(settings, "SPECIAL_STATS_DEALS", DEFAULT_DEALS))
    seed = int(getattr(settings, "SPECIAL_STATS_SEED", DEFAULT_SEED))
    return directory, deals, seed


def special_deals_get(
    *, rebuild: bool = False, workers: int = 1, progress: Progress | None = None
) -> SimulatedDeals:
    """The simulated deals of the settings, from the cache file; simulated on first need.

    Simulating 100,000 deals takes tens of seconds: ``manage.py warm_special_stats`` does it
    ahead of time so that no request waits for it.
    """
    directory, n_deals, seed = special_stats_settings()
    path = directory / cache_filename(n_deals, seed)
    if not rebuild:
        cached = _loaded.get(path)
        try:
            mtime: int | None = path.stat().st_mtime_ns
        except FileNotFoundError:
            mtime = None
        if cached is not None and cached[0] == mtime:
            return cached[1]
    deals = load_or_simulate(
        directory, n_deals, seed, rebuild=rebuild, workers=workers, progress=progress
    )
    _loaded[path] = (path.stat().st_mtime_ns, deals)
    return deals


def rule_config_special_stats(config: RuleConfig = DEFAULT_CONFIG) -> SpecialStats:
    """How often each special of ``config`` counts, and its expected water per deal."""
    return special_stats(special_deals_get(), config)


def rule_configuration_special_stats(*, configuration: RuleConfiguration) -> SpecialStats:
    """The statistics of a saved configuration's rules (as stored, not as being edited)."""
    return rule_config_special_stats(configuration.engine_config())

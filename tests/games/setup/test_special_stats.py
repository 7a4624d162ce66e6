"""The special-hand statistics are never simulated in a request (games.setup.special_stats).

With a cold cache the rule configuration's change page answers at once, says the figures are
being computed and starts one background build; once the file is there the page shows them.
Builds share a lock file, so the warm command at start and a web process never simulate twice.
"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from games.rules import stats
from games.rules.stats import cache_filename, save_deals
from games.setup import admin as games_admin
from games.setup import special_stats
from games.setup.selectors import rule_configuration_default
from tests.games.rules.stats_helpers import TINY

pytestmark = pytest.mark.django_db


@pytest.fixture
def cold(settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty statistics cache, and no simulation possible in this thread."""
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = TINY.deals
    settings.SPECIAL_STATS_SEED = 0
    monkeypatch.setattr(special_stats, "_loaded", {})

    def no_simulation(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated in the request")

    monkeypatch.setattr(stats, "simulate_deals", no_simulation)
    return tmp_path


def _change_page(admin_user: User) -> str:
    client = Client()
    client.force_login(admin_user)
    config = rule_configuration_default()
    response = client.get(reverse("admin:games_ruleconfiguration_change", args=[config.pk]))
    assert response.status_code == 200
    return response.content.decode()


def test_a_cold_cache_shows_the_figures_are_being_computed_and_starts_a_build(
    admin_user: User, cold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    started: list[bool] = []
    monkeypatch.setattr(
        games_admin, "special_deals_build_in_background", lambda: started.append(True) or True
    )

    html = _change_page(admin_user)

    assert 'data-testid="special-stats-pending"' in html
    assert "The statistics of the special hands are being computed" in html
    assert "32,400</strong> coins at base score 100" in html  # the entry minimum still shows
    assert started == [True]
    assert list(cold.iterdir()) == []  # nothing was computed in the request


def test_once_built_the_page_shows_the_figures(admin_user: User, cold: Path) -> None:
    save_deals(cold / cache_filename(TINY.deals, 0), TINY)

    html = _change_page(admin_user)

    assert "special-stats-pending" not in html
    assert "4 four-player deals (16 hands, seed 0)" in html


def test_the_background_build_runs_once_at_a_time_and_fills_the_cache(
    cold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    release = threading.Event()
    real_build = special_stats._build

    def slow_build(where: tuple[Path, int, int, Path]) -> object:
        assert release.wait(10)
        monkeypatch.setattr(stats, "simulate_deals", lambda *a, **k: TINY)
        return real_build(where)

    monkeypatch.setattr(special_stats, "_build", slow_build)

    assert special_stats.special_deals_build_in_background() is True
    assert special_stats.special_deals_build_in_background() is False  # one is running
    assert special_stats.special_deals_building()
    assert special_stats.special_deals_ready() is None
    release.set()
    assert special_stats._thread is not None
    special_stats._thread.join(10)

    ready = special_stats.special_deals_ready()
    assert ready is not None and ready.deals == TINY.deals
    assert (cold / cache_filename(TINY.deals, 0)).exists()


def test_a_build_waits_for_one_running_elsewhere_and_reads_its_file(cold: Path) -> None:
    path = cold / cache_filename(TINY.deals, 0)
    with special_stats._build_lock(path):  # as the warm command holds it
        assert special_stats.special_deals_build_in_background() is True
        assert special_stats._thread is not None
        special_stats._thread.join(0.3)
        assert special_stats._thread.is_alive()  # waiting for the lock
        save_deals(path, TINY)  # what the other build wrote
    special_stats._thread.join(10)

    # Read, not simulated (simulating raises in this test).
    ready = special_stats.special_deals_ready()
    assert ready is not None and (ready.masks == TINY.masks).all()


def test_a_cache_made_for_other_specials_is_not_used_nor_rebuilt_in_the_request(
    cold: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (cold / cache_filename(TINY.deals, 0)).write_bytes(b"not an npz file")

    assert special_stats.special_deals_ready() is None

"""The statistics of a configuration while they are computed: a sample first (with its 95 %
intervals), then the full simulation; the change page polls a small JSON endpoint."""

from pathlib import Path

import pytest
from django.core.cache import cache
from django.urls import reverse

from accounts.models import User
from games.models import RuleConfiguration
from games.rules.stats import cache_filename, load_deals, save_deals
from games.setup import admin as setup_admin
from games.setup import special_stats
from games.setup.selectors import rule_configuration_default
from games.setup.services import rule_configuration_save_as_draft
from tests.games.rules.stats_helpers import TINY
from tests.games.setup.test_admin import change_url, logged_in

pytestmark = pytest.mark.django_db


def progress_url(config: RuleConfiguration) -> str:
    return reverse("admin:games_ruleconfiguration_stats_progress", args=[config.pk])


@pytest.fixture
def stats_dir(settings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty statistics cache of TINY's size; no background build starts in a request."""
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = TINY.deals
    settings.SPECIAL_STATS_SEED = 0
    monkeypatch.setattr(setup_admin, "special_deals_build_in_background", lambda *a: False)
    cache.clear()
    return tmp_path


def full_path(directory: Path) -> Path:
    return directory / cache_filename(TINY.deals, 0)


def test_nothing_yet_shows_the_progress_and_the_endpoint_has_no_table(
    rules_admin: User, stats_dir: Path
) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    client = logged_in(rules_admin)
    page = client.get(change_url(draft)).content.decode()
    assert 'data-testid="special-stats-pending"' in page
    assert f'data-progress-url="{progress_url(draft)}"' in page
    assert "admin_rule_stats.js" in page

    body = client.get(progress_url(draft)).json()
    assert body["phase"] == "idle" and "html" not in body


def test_a_sample_is_shown_with_its_intervals_while_the_full_one_runs(
    rules_admin: User, stats_dir: Path
) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    save_deals(special_stats._sample_path(full_path(stats_dir)), TINY)
    special_stats._progress_set(full_path(stats_dir), "building", 1, 4)
    client = logged_in(rules_admin)

    page = client.get(change_url(draft)).content.decode()
    assert 'data-testid="special-stats-sampled"' in page
    assert "95 %" in page and 'class="ci"' in page

    body = client.get(progress_url(draft)).json()
    assert (body["phase"], body["done"], body["total"], body["percent"]) == ("sampled", 1, 4, 25)
    assert 'data-testid="special-stats-sampled"' in body["html"]


def test_the_full_simulation_replaces_the_sample(rules_admin: User, stats_dir: Path) -> None:
    save_deals(full_path(stats_dir), TINY)
    config = rule_configuration_default()
    body = logged_in(rules_admin).get(progress_url(config)).json()
    assert body["phase"] == "ready" and body["percent"] == 100
    assert "special-stats-sampled" not in body["html"]
    assert "<table>" in body["html"]


def test_the_background_build_samples_then_simulates(settings, tmp_path: Path) -> None:
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = 300
    settings.SPECIAL_STATS_SEED = 2
    settings.SPECIAL_STATS_SAMPLE_SECONDS = 0  # one chunk
    cache.clear()
    where = special_stats._cache_path()
    special_stats._build_quietly(where)
    assert load_deals(special_stats._sample_path(where[3])).deals == 100
    assert special_stats.special_stats_progress()["phase"] == "ready"
    assert load_deals(where[3]).deals == 300


def test_the_endpoint_is_for_staff_only(
    rules_admin: User, support: User, stats_dir: Path, client
) -> None:
    config = rule_configuration_default()
    assert client.get(progress_url(config)).status_code == 302  # to the admin's login
    player = User.objects.create_user(username="someone", password="not-used-1")
    assert logged_in(player).get(progress_url(config)).status_code == 302
    assert logged_in(support).get(progress_url(config)).status_code == 200
    missing = reverse("admin:games_ruleconfiguration_stats_progress", args=[10**9])
    assert logged_in(rules_admin).get(missing).status_code == 404


def test_the_endpoint_is_rate_limited(settings, rules_admin: User, stats_dir: Path) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.rule_stats_progress": "2/minute"}
    client = logged_in(rules_admin)
    url = progress_url(rule_configuration_default())
    assert [client.get(url).status_code for _ in range(3)] == [200, 200, 429]
    response = client.get(url)
    assert response.status_code == 429 and int(response["Retry-After"]) > 0


def test_a_recorded_ready_without_its_file_is_idle(stats_dir: Path) -> None:
    special_stats._progress_set(full_path(stats_dir), "ready", 4, 4)
    assert special_stats.special_stats_progress()["phase"] == "idle"


def test_the_progress_speaks_chinese(rules_admin: User, stats_dir: Path) -> None:
    special_stats._progress_set(full_path(stats_dir), "sampling", 2, 4)
    page = logged_in(rules_admin).get(
        change_url(rule_configuration_default()), headers={"accept-language": "zh-hans"}
    )
    text = page.content.decode()
    assert "正在抽样牌局…" in text and 'value="50"' in text

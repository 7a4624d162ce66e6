"""The row bonuses' figures on a configuration's change page (RULES.md §7.1): computed per
configuration in the background, a sample first, polled by the page, never in a request."""

import time

import pytest
from django.core.cache import cache
from django.urls import reverse

from accounts.models import User
from games.models import RuleConfiguration
from games.rules.config import RuleConfig
from games.setup import admin as setup_admin
from games.setup import row_bonus_stats
from games.setup.selectors import rule_configuration_default
from games.setup.services import rule_configuration_save_as_draft
from tests.games.setup.test_admin import change_url, logged_in

pytestmark = pytest.mark.django_db


def progress_url(config: RuleConfiguration) -> str:
    return reverse("admin:games_ruleconfiguration_row_bonus_progress", args=[config.pk])


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[RuleConfig]:
    """No thread starts in a request; the configurations asked for are recorded."""
    cache.clear()
    asked: list[RuleConfig] = []
    monkeypatch.setattr(
        setup_admin, "row_bonus_compute_in_background", lambda config: asked.append(config)
    )
    return asked


def compute(config: RuleConfiguration) -> None:
    rules = config.engine_config()
    row_bonus_stats._compute(row_bonus_stats._key(rules), rules)


def test_nothing_yet_starts_the_computation_and_shows_its_progress(
    rules_admin: User, started: list[RuleConfig]
) -> None:
    config = rule_configuration_default()
    page = logged_in(rules_admin).get(change_url(config)).content.decode()
    assert 'data-testid="row-bonus-stats"' in page
    assert 'data-testid="row-bonus-progress"' in page
    assert f'data-progress-url="{progress_url(config)}"' in page
    assert started == [config.engine_config()]
    body = logged_in(rules_admin).get(progress_url(config)).json()
    assert body["phase"] == "idle" and "html" not in body


def test_the_figures_name_every_bonus_in_words_with_intervals_and_coins(
    rules_admin: User, started: list[RuleConfig]
) -> None:
    config = rule_configuration_default()
    compute(config)
    body = logged_in(rules_admin).get(progress_url(config)).json()
    assert body["phase"] == "ready" and body["percent"] == 100
    html = body["html"]
    assert "data-progress-url" not in html  # nothing more to poll
    for key, _bonus in config.engine_config().row_bonus:
        assert f'data-key="{key}"' in html
    assert "Trips" in html and "front" in html and "Straight flush" in html
    assert "all row bonuses" in html and "± " in html
    figures, sampled = row_bonus_stats.row_bonus_ready(config.engine_config()) or (None, True)
    assert figures is not None and not sampled
    assert f"{figures.expected_water_per_deal:.4f}" in html
    page = logged_in(rules_admin).get(change_url(config)).content.decode()
    assert 'data-key="front.trips"' in page and started == []


def test_a_sample_is_shown_while_more_deals_are_arranged(
    rules_admin: User, started: list[RuleConfig]
) -> None:
    config = rule_configuration_default()
    rules = config.engine_config()
    key = row_bonus_stats._key(rules)
    sample = row_bonus_stats.row_bonus_stats(rules, budget_seconds=0, max_deals=10)
    cache.set(f"row-bonus:sample:{key}", sample)
    row_bonus_stats._progress(key, "building", 5, 20)
    body = logged_in(rules_admin).get(progress_url(config)).json()
    assert (body["phase"], body["done"], body["total"], body["percent"]) == ("sampled", 5, 20, 25)
    assert "A first sample" in body["html"] and "data-progress-url" in body["html"]


def test_a_draft_has_the_figures_of_its_own_rules(
    rules_admin: User, started: list[RuleConfig]
) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    draft.bonus_back_quads = 0
    draft.save()
    compute(draft)
    compute(rule_configuration_default())
    mine = row_bonus_stats.row_bonus_ready(draft.engine_config())
    published = row_bonus_stats.row_bonus_ready(rule_configuration_default().engine_config())
    assert mine is not None and published is not None
    assert mine[0]["back.quads"].water_won == 0 and mine[0]["back.quads"].bonus == 0
    assert published[0]["back.quads"].bonus == 3


def test_a_silent_computation_is_seen_as_dead_and_started_again(started: list[RuleConfig]) -> None:
    rules = rule_configuration_default().engine_config()
    key = row_bonus_stats._key(rules)
    cache.set(
        f"row-bonus:progress:{key}",
        {"phase": "sampling", "done": 1, "total": 20, "at": time.time() - 3600},
    )
    assert row_bonus_stats.row_bonus_progress(rules)["phase"] == "idle"
    row_bonus_stats._progress(key, "sampling", 1, 20)
    assert row_bonus_stats.row_bonus_progress(rules)["phase"] == "sampling"


def test_the_background_thread_samples_then_runs_longer(settings) -> None:
    settings.ROW_BONUS_STATS_IN_BACKGROUND = True
    cache.clear()
    rules = rule_configuration_default().engine_config()
    assert row_bonus_stats.row_bonus_compute_in_background(rules) is True
    assert row_bonus_stats.row_bonus_compute_in_background(rules) is False  # asked already
    deadline = time.monotonic() + 60
    while row_bonus_stats.row_bonus_progress(rules)["phase"] != "ready":
        assert time.monotonic() < deadline, row_bonus_stats.row_bonus_progress(rules)
        time.sleep(0.05)
    ready = row_bonus_stats.row_bonus_ready(rules)
    assert ready is not None and ready[1] is False and ready[0].deals == 20
    assert row_bonus_stats.row_bonus_compute_in_background(rules) is False  # done


def test_the_endpoint_is_for_staff_only_and_rate_limited(
    settings, rules_admin: User, support: User, started: list[RuleConfig], client
) -> None:
    config = rule_configuration_default()
    assert client.get(progress_url(config)).status_code == 302
    player = User.objects.create_user(username="someone", password="not-used-1")
    assert logged_in(player).get(progress_url(config)).status_code == 302
    assert logged_in(support).get(progress_url(config)).status_code == 200
    missing = reverse("admin:games_ruleconfiguration_row_bonus_progress", args=[10**9])
    assert logged_in(rules_admin).get(missing).status_code == 404
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.rule_stats_progress": "2/minute"}
    staff = logged_in(rules_admin)
    codes = [staff.get(progress_url(config)).status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_the_table_speaks_chinese(rules_admin: User, started: list[RuleConfig]) -> None:
    config = rule_configuration_default()
    compute(config)
    page = logged_in(rules_admin).get(change_url(config), headers={"accept-language": "zh-hans"})
    text = page.content.decode()
    assert "墩的额外水数" in text and "三条" in text and "头墩" in text

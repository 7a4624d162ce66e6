"""Comparing any two rule configurations side by side, and the history's values in words."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from accounts.groups import ECONOMY_ADMIN
from accounts.models import User
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG
from games.setup.selectors import rule_configuration_default
from tests.games.conftest import MakeStaff
from tests.games.setup.test_admin import change_url, errors_of, form_data, logged_in

pytestmark = pytest.mark.django_db

COMPARE = "admin:games_ruleconfiguration_compare"


def _other() -> RuleConfiguration:
    specials = tuple(
        replace(s, enabled=False) if s.id == "six_pairs" else s for s in DEFAULT_CONFIG.specials
    )
    config = replace(DEFAULT_CONFIG, gun_water=5, escape_covers_losses=True, specials=specials)
    return RuleConfiguration.from_engine(config, name="Other 其他")


def _row(html: str, table: str, attr: str, value: str) -> str:
    body = re.search(rf'<table id="{table}">(.*?)</table>', html, re.S).group(1)
    return re.search(rf'<tr {attr}="{value}"[^>]*>.*?</tr>', body, re.S).group(0)


def test_two_configurations_side_by_side_in_words(rules_admin: User) -> None:
    a, b = rule_configuration_default(), _other()
    response = logged_in(rules_admin).get(reverse(COMPARE), {"a": a.pk, "b": b.pk})

    assert response.status_code == 200
    html = response.content.decode()
    gun = _row(html, "compare-fields", "data-field", "gun_water")
    assert 'class="differs"' in gun and ">5<" in gun
    escape = _row(html, "compare-fields", "data-field", "escape_covers_losses")
    assert ">No<" in escape and ">Yes<" in escape
    penalty = _row(html, "compare-fields", "data-field", "escape_penalty_multiplier")
    assert "—" in penalty and "None" not in penalty
    assert 'class="differs"' not in _row(html, "compare-fields", "data-field", "row_water")
    six = _row(html, "compare-specials", "data-special", "six_pairs")
    assert "Six pairs" in six and 'class="differs"' in six
    table = re.search(r'<table id="compare-fields">(.*?)</table>', html, re.S).group(1)
    assert "True" not in table and "False" not in table
    rows_differ = len(re.findall(r'<tr data-[a-z]+="[^"]+" class="differs">', html))
    assert f'<p id="differences">{rows_differ} differences</p>' in html


def test_the_comparison_speaks_chinese(rules_admin: User) -> None:
    a, b = rule_configuration_default(), _other()
    html = (
        logged_in(rules_admin)
        .get(reverse(COMPARE), {"a": a.pk, "b": b.pk}, headers={"accept-language": "zh-hans"})
        .content.decode()
    )
    assert "六对半" in _row(html, "compare-specials", "data-special", "six_pairs")


def test_the_list_action_compares_the_two_selected(rules_admin: User) -> None:
    a, b = rule_configuration_default(), _other()
    client = logged_in(rules_admin)
    changelist = reverse("admin:games_ruleconfiguration_changelist")

    response = client.post(changelist, {"action": "compare_two", "_selected_action": [a.pk, b.pk]})
    assert response.status_code == 302
    assert response["Location"].startswith(reverse(COMPARE))

    response = client.post(changelist, {"action": "compare_two", "_selected_action": [a.pk]})
    assert "Select exactly two configurations" in " ".join(
        str(m) for m in get_messages(response.wsgi_request)
    )


def test_an_unknown_configuration_is_refused_at_the_field(rules_admin: User) -> None:
    a = rule_configuration_default()
    response = logged_in(rules_admin).get(reverse(COMPARE), {"a": a.pk, "b": "999999"})
    assert response.status_code == 400
    assert "Select a valid choice" in errors_of(response)


def test_staff_without_view_permission_cannot_compare(make_staff: MakeStaff) -> None:
    a, b = rule_configuration_default(), _other()
    client = logged_in(make_staff(ECONOMY_ADMIN))
    assert client.get(reverse(COMPARE), {"a": a.pk, "b": b.pk}).status_code == 403


def test_the_version_compare_shows_words_and_the_reason(rules_admin: User) -> None:
    config = rule_configuration_default()
    client = logged_in(rules_admin)
    response = client.post(
        change_url(config),
        form_data(config, escape_covers_losses=True, change_reason="Stricter escapes"),
    )
    assert response.status_code == 302, errors_of(response)
    new, old = config.history.order_by("-history_date", "-history_id")[:2]
    compare = reverse("admin:games_ruleconfiguration_history_compare", args=[config.pk])
    html = client.get(compare, {"old": old.history_id, "new": new.history_id}).content.decode()
    row = re.search(r'<tr data-field="escape_covers_losses">.*?</tr>', html, re.S).group(0)
    assert ">No<" in row and ">Yes<" in row and "True" not in row
    assert "Stricter escapes" in html


def test_comparisons_are_rate_limited(rules_admin: User, settings) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.rule_compare": "1/minute"}
    client = logged_in(rules_admin)
    assert client.get(reverse(COMPARE)).status_code == 200
    refused = client.get(reverse(COMPARE))
    assert refused.status_code == 429 and "Too many comparisons" in refused.content.decode()
    assert int(refused["Retry-After"]) > 0

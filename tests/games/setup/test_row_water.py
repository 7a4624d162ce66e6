"""RULES.md §7.1 row water in the rule configuration admin, the round snapshot and the table's
rules sheet."""

from typing import Any

import pytest
from django.utils import translation

from games.models import RuleConfiguration, SpecialHandSetting
from games.rules.config import RuleConfig
from games.setup.selectors import rule_configuration_default
from games.setup.sheet import rules_sheet
from tests.games.setup.test_admin import change_url, errors_of, form_data, logged_in, state

pytestmark = pytest.mark.django_db


def test_7_1_rules_admin_sets_row_water_and_rounds_carry_it(rules_admin) -> None:
    config = rule_configuration_default()

    response = logged_in(rules_admin).post(change_url(config), form_data(config, row_water=3))

    assert response.status_code == 302, errors_of(response)
    fresh = RuleConfiguration.objects.get(pk=config.pk)
    assert fresh.row_water == 3
    assert fresh.engine_config().row_water == 3
    snapshot = fresh.snapshot()
    assert snapshot["row_water"] == 3
    assert RuleConfiguration.engine_config_from_snapshot(snapshot).row_water == 3
    assert fresh.history.first().row_water == 3


def test_7_1_a_snapshot_from_before_row_water_plays_row_water_1() -> None:
    snapshot = rule_configuration_default().snapshot()
    del snapshot["row_water"]

    assert RuleConfiguration.engine_config_from_snapshot(snapshot).row_water == 1


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (0, "must be between 1 and 100, got 0"),  # the engine's limit
        (101, "must be between 1 and 100, got 101"),
        (-1, "greater than or equal to 0"),  # the form's
        ("two", "Enter a whole number"),
    ],
)
def test_7_1_a_bad_row_water_shows_why_and_saves_nothing(rules_admin, value, message) -> None:
    config = rule_configuration_default()
    before = state(config)
    history = (RuleConfiguration.history.count(), SpecialHandSetting.history.count())

    data = form_data(config, name="Renamed", gun_water=9, row_water=value)
    response = logged_in(rules_admin).post(change_url(config), data)

    assert response.status_code == 200
    assert message in errors_of(response)
    assert state(config) == before
    assert (RuleConfiguration.history.count(), SpecialHandSetting.history.count()) == history


def sheet(config: RuleConfig, language: str = "en") -> dict[str, Any]:
    with translation.override(language):
        made = rules_sheet(config, name="经典 Classic", preset="", base_score=100)
    return {row["key"]: row["value"] for row in made["rows"]}


def test_7_1_the_rules_sheet_shows_row_water_only_when_it_is_not_1() -> None:
    assert "row_water" not in sheet(RuleConfig())
    assert sheet(RuleConfig(row_water=2))["row_water"] == (
        "the winner of a row wins 2 water, plus its row bonus"
    )
    assert (
        sheet(RuleConfig(row_water=2), "zh-hans")["row_water"]
        == "每墩赢家赢 2 水，另加该墩的额外水"
    )


def test_7_1_the_change_page_offers_row_water_in_both_languages(rules_admin) -> None:
    config = rule_configuration_default()
    client = logged_in(rules_admin)

    english = client.get(change_url(config)).content.decode()
    chinese = client.get(change_url(config), headers={"accept-language": "zh-hans"}).content
    assert 'name="row_water"' in english
    assert "Water the winner of each row wins from the loser" in english
    assert "每一墩的赢家从输家赢得的水数" in chinese.decode()

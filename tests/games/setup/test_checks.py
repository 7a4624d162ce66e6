"""The checks on money of a rule configuration: the pure function, and the admin's save that
warns (and asks for a confirmation), refuses at the field, and keeps the reason for a change."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from django.urls import reverse

from accounts.models import User
from games.models import RuleConfiguration, SpecialHandSetting
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS
from games.setup.checks import configuration_money_checks, special_field
from games.setup.selectors import rule_configuration_default
from lobby.models import Room
from tests.games.setup.test_admin import change_url, errors_of, form_data, logged_in, state

pytestmark = pytest.mark.django_db

GRANT = 100_000


def _no_specials():
    return replace(
        DEFAULT_CONFIG, specials=tuple(replace(s, enabled=False) for s in DEFAULT_CONFIG.specials)
    )


def _water(special: str, water: int):
    return replace(
        DEFAULT_CONFIG,
        specials=tuple(
            replace(s, water=water) if s.id == special else s for s in DEFAULT_CONFIG.specials
        ),
    )


# -- the function ------------------------------------------------------------------------------


def test_the_default_rules_pass_the_checks() -> None:
    assert configuration_money_checks(DEFAULT_CONFIG, GRANT) == ([], [])


def test_no_enabled_special_warns_of_an_entry_minimum_of_0() -> None:
    warnings, errors = configuration_money_checks(_no_specials(), GRANT)
    assert errors == []
    assert [w.field for w in warnings] == [None]
    assert "entry minimum is 0 coins" in warnings[0].message


def test_a_special_above_the_grant_warns_at_its_water() -> None:
    warnings, errors = configuration_money_checks(_water("supreme_dragon", 500), GRANT)
    assert errors == []
    assert [w.field for w in warnings] == [None, special_field("supreme_dragon", "water")]
    assert "150,000" in warnings[0].message and "100,000" in warnings[0].message
    assert "至尊清龙" in warnings[1].message


def test_an_escape_penalty_of_0_warns() -> None:
    warnings, _errors = configuration_money_checks(
        replace(DEFAULT_CONFIG, escape_penalty_multiplier=0), GRANT
    )
    assert [w.field for w in warnings] == ["escape_penalty_multiplier"]


def test_ranks_beyond_the_specials_are_errors() -> None:
    ranks = {special: i for i, special in enumerate(SPECIAL_IDS, start=1)}
    ranks["six_pairs"] = 100_000
    _warnings, errors = configuration_money_checks(DEFAULT_CONFIG, GRANT, ranks=ranks)
    assert [e.field for e in errors] == [special_field("six_pairs", "order")]
    assert "between 1 and 15" in errors[0].message


# -- the admin ---------------------------------------------------------------------------------


def _disable_all() -> dict[str, dict[str, bool]]:
    return {special: {"enabled": False} for special in SPECIAL_IDS}


def test_disabling_every_special_warns_saves_nothing_then_saves_when_confirmed(
    rules_admin: User,
) -> None:
    config = rule_configuration_default()
    before = state(config)
    client = logged_in(rules_admin)

    response = client.post(change_url(config), form_data(config, specials=_disable_all()))

    assert response.status_code == 200
    assert "entry minimum is 0 coins" in errors_of(response)
    assert "save despite the warnings" in errors_of(response)
    assert state(config) == before

    response = client.post(
        change_url(config), form_data(config, specials=_disable_all(), confirm_warnings=True)
    )
    assert response.status_code == 302, errors_of(response)
    assert RuleConfiguration.objects.get(pk=config.pk).engine_config().entry_minimum == 0


def test_a_special_above_the_sign_up_grant_is_highlighted_and_not_saved(
    rules_admin: User,
) -> None:
    config = rule_configuration_default()
    before = state(config)

    response = logged_in(rules_admin).post(
        change_url(config), form_data(config, specials={"supreme_dragon": {"water": 500}})
    )

    assert response.status_code == 200
    assert "above the sign-up grant of 100,000 coins" in errors_of(response)
    html = response.content.decode()
    row = config.special_hands.order_by("order").get(special="supreme_dragon").order - 1
    water = re.search(rf'<input[^>]*name="special_hands-{row}-water"[^>]*>', html).group(0)
    assert "config-warning" in water
    assert state(config) == before


def test_an_escape_penalty_of_0_needs_a_confirmation(rules_admin: User) -> None:
    config = rule_configuration_default()
    client = logged_in(rules_admin)
    response = client.post(change_url(config), form_data(config, escape_penalty_multiplier=0))
    assert response.status_code == 200
    assert "escape penalty is 0" in errors_of(response)
    assert RuleConfiguration.objects.get(pk=config.pk).escape_penalty_multiplier != 0

    response = client.post(
        change_url(config), form_data(config, escape_penalty_multiplier=0, confirm_warnings=True)
    )
    assert response.status_code == 302, errors_of(response)


@pytest.mark.parametrize("rank", [16, 100_000])
def test_a_rank_beyond_the_specials_is_refused_at_the_field(rules_admin: User, rank: int) -> None:
    config = rule_configuration_default()
    before = state(config)

    response = logged_in(rules_admin).post(
        change_url(config),
        form_data(config, specials={"six_pairs": {"order": rank}}, confirm_warnings=True),
    )

    assert response.status_code == 200
    html = response.content.decode()
    row = config.special_hands.order_by("order").get(special="six_pairs").order - 1
    field = re.search(rf'<input[^>]*name="special_hands-{row}-order"[^>]*>', html).group(0)
    assert "config-error" in field and 'aria-invalid="true"' in field
    # The banner at the top jumps to it, in words with the limit (not the column's 32767).
    assert f'href="#id_special_hands-{row}-order"' in html
    assert "Rank of 六对半 (six pairs): between 1 and 15" in html
    assert "32767" not in html
    assert state(config) == before


@pytest.mark.parametrize(
    ("change", "words"),
    [
        ({"water": -3}, "Water of 六对半 (six pairs): at least 0."),
        ({"order": -1}, "Rank of 六对半 (six pairs): between 1 and 15"),
        ({"water": 10**12}, "Water of 六对半 (six pairs): at most 10000"),
    ],
)
def test_out_of_range_values_are_refused_in_words(
    rules_admin: User, change: dict[str, int], words: str
) -> None:
    config = rule_configuration_default()
    before = state(config)
    response = logged_in(rules_admin).post(
        change_url(config),
        form_data(config, specials={"six_pairs": change}, confirm_warnings=True),
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert words in html and "Ensure this value" not in html
    assert state(config) == before


def test_the_banner_names_the_field_in_words(rules_admin: User) -> None:
    config = rule_configuration_default()
    response = logged_in(rules_admin).post(
        change_url(config), form_data(config, specials={"six_pairs": {"water": 20_000}})
    )
    banner = re.search(
        r'<p class="errornote" id="first-problem">(.*?)</p>', response.content.decode(), re.S
    )
    assert banner is not None
    assert "Water of 六对半 (six pairs): at most 10000" in banner.group(1)
    assert "specials.six_pairs" not in response.content.decode()


def test_a_change_of_rules_open_rooms_use_needs_a_reason_kept_in_the_history(
    rules_admin: User, admin_user: User
) -> None:
    config = rule_configuration_default()
    Room.objects.create(
        name="Four", rules=config, base_score=100, seats=4, owner=admin_user, entry_minimum=0
    )
    before = state(config)
    client = logged_in(rules_admin)

    response = client.post(change_url(config), form_data(config, gun_water=4))
    assert response.status_code == 200
    assert "say why it changes" in errors_of(response)
    assert state(config) == before

    response = client.post(
        change_url(config),
        form_data(
            config, gun_water=4, specials={"six_pairs": {"water": 5}}, change_reason="Club night"
        ),
    )
    assert response.status_code == 302, errors_of(response)
    assert config.history.first().history_change_reason == "Club night"
    row = SpecialHandSetting.objects.get(configuration=config, special="six_pairs")
    assert row.history.first().history_change_reason == "Club night"
    history = client.get(
        reverse("admin:games_ruleconfiguration_history", args=[config.pk])
    ).content.decode()
    assert "Club night" in history


def test_a_configuration_no_open_room_uses_needs_no_reason(rules_admin: User) -> None:
    config = rule_configuration_default()
    response = logged_in(rules_admin).post(change_url(config), form_data(config, gun_water=4))
    assert response.status_code == 302, errors_of(response)
    assert config.history.first().history_change_reason is None

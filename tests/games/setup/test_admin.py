"""The rule configuration admin, used by a `rules_admin` member and looked at by `support`."""

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from games.models import PLAIN_FIELDS, ROW_BONUS_FIELDS, RuleConfiguration, SpecialHandSetting
from games.rules.config import DEFAULT_CONFIG, SPECIAL_BY_ID, SPECIAL_IDS
from games.rules.hands import Category
from games.rules.stats import cache_filename, save_deals, special_mask, special_stats
from games.setup.selectors import rule_configuration_default
from tests.games.rules.stats_helpers import TINY

pytestmark = pytest.mark.django_db

PREFIX = "special_hands"


def change_url(config: RuleConfiguration) -> str:
    return reverse("admin:games_ruleconfiguration_change", args=[config.pk])


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def form_data(config: RuleConfiguration, **changes: Any) -> dict[str, Any]:
    """The change form as the browser posts it for ``config``, with ``changes`` applied.

    ``specials={"six_pairs": {"water": 5}}`` changes inline rows.
    """
    row_changes = changes.pop("specials", {})
    values = {"name": config.name, "description": config.description}
    for name in ("is_default", *PLAIN_FIELDS, *ROW_BONUS_FIELDS):
        values[name] = getattr(config, name)
    values.update(changes)
    data: dict[str, Any] = {}
    for name, value in values.items():
        if isinstance(value, bool):
            if value:
                data[name] = "on"
        else:
            data[name] = "" if value is None else value
    rows = list(config.special_hands.order_by("order")) if config.pk else []
    data.update(
        {
            f"{PREFIX}-TOTAL_FORMS": len(rows),
            f"{PREFIX}-INITIAL_FORMS": len(rows),
            f"{PREFIX}-MIN_NUM_FORMS": 0,
            f"{PREFIX}-MAX_NUM_FORMS": len(SPECIAL_IDS),
        }
    )
    for i, row in enumerate(rows):
        fields = {"enabled": row.enabled, "water": row.water, "order": row.order}
        fields.update(row_changes.get(row.special, {}))
        data[f"{PREFIX}-{i}-id"] = row.pk
        data[f"{PREFIX}-{i}-configuration"] = config.pk
        if fields["enabled"]:
            data[f"{PREFIX}-{i}-enabled"] = "on"
        data[f"{PREFIX}-{i}-water"] = fields["water"]
        data[f"{PREFIX}-{i}-order"] = fields["order"]
    return data


def state(config: RuleConfiguration) -> tuple[dict[str, Any], list[tuple[str, bool, int, int]]]:
    """Everything stored about a configuration, to compare before and after a request."""
    fresh = RuleConfiguration.objects.get(pk=config.pk)
    fields = {f.attname: getattr(fresh, f.attname) for f in fresh._meta.concrete_fields}
    rows = list(
        SpecialHandSetting.objects.filter(configuration=fresh)
        .order_by("special")
        .values_list("special", "enabled", "water", "order")
    )
    return fields, rows


def errors_of(response: Any) -> str:
    """The visible text of the page's error lists."""
    html = response.content.decode()
    found = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', html, re.S)
    return " ".join(re.sub(r"<[^>]+>", " ", chunk) for chunk in found)


# -- rules_admin: changes ----------------------------------------------------------------------


def test_rules_admin_changes_a_specials_water_and_history_records_who(rules_admin) -> None:
    config = rule_configuration_default()
    client = logged_in(rules_admin)

    response = client.post(
        change_url(config), form_data(config, specials={"six_pairs": {"water": 5}})
    )

    assert response.status_code == 302, errors_of(response)
    six_pairs = config.special_hands.get(special="six_pairs")
    assert six_pairs.water == 5
    record = six_pairs.history.first()
    assert (record.history_type, record.history_user, record.water) == ("~", rules_admin, 5)
    # Only the changed row is written.
    assert SpecialHandSetting.history.filter(history_user=rules_admin).count() == 1
    assert config.history.first().history_user == rules_admin
    assert config.engine_config().special("six_pairs").water == 5


def test_rules_admin_changes_plain_fields_and_swaps_ranks(rules_admin) -> None:
    config = rule_configuration_default()
    response = logged_in(rules_admin).post(
        change_url(config),
        form_data(
            config,
            base_score=200,
            gun_mode="double",
            a2345="second",
            bonus_back_quads=0,
            specials={"three_straights": {"order": 15}, "three_flushes": {"order": 14}},
        ),
    )

    assert response.status_code == 302, errors_of(response)
    engine = RuleConfiguration.objects.get(pk=config.pk).engine_config()
    assert (engine.base_score, engine.gun_mode, engine.a2345) == (200, "double", "second")
    assert engine.bonus("back", Category.QUADS) == 0
    assert [s.id for s in engine.enabled_specials[-2:]] == ["three_flushes", "three_straights"]


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"specials": {"three_flushes": {"order": 14}}},
            "Two special hands have the same rank",
        ),
        ({"specials": {"six_pairs": {"water": -1}}}, "Water of 六对半 (six pairs): at least 0."),
        # In words with the limit, not the engine's keys.
        (
            {"specials": {"six_pairs": {"water": 20_000}}},
            "Water of 六对半 (six pairs): at most 10000",
        ),
        (
            {"specials": {"six_pairs": {"order": 16}}},
            "Rank of 六对半 (six pairs): between 1 and 15",
        ),
        ({"home_run_min_players": 7}, "must be between 2 and 5"),
        ({"ready_seconds": 0}, "must be between 1 and 3600"),
    ],
)
def test_an_invalid_change_shows_why_and_saves_nothing(rules_admin, changes, message) -> None:
    config = rule_configuration_default()
    before = state(config)
    history = (RuleConfiguration.history.count(), SpecialHandSetting.history.count())

    # A valid change rides along: it must not be saved either.
    data = form_data(config, name="Renamed", gun_water=9, **changes)
    response = logged_in(rules_admin).post(change_url(config), data)

    assert response.status_code == 200
    assert message in errors_of(response)
    assert state(config) == before
    assert (RuleConfiguration.history.count(), SpecialHandSetting.history.count()) == history


def test_an_enabled_special_cannot_go_missing(rules_admin) -> None:
    config = rule_configuration_default()
    before = state(config)
    data = form_data(config, specials={"six_pairs": {"water": 5}})
    # Drop the last row (three_flushes) from the submitted formset.
    data[f"{PREFIX}-TOTAL_FORMS"] = len(SPECIAL_IDS) - 1
    for field in ("id", "configuration", "enabled", "water", "order"):
        data.pop(f"{PREFIX}-{len(SPECIAL_IDS) - 1}-{field}", None)

    response = logged_in(rules_admin).post(change_url(config), data)

    assert response.status_code == 200
    assert "exactly one row for each of the 15 special hands" in errors_of(response)
    assert state(config) == before


def test_rows_cannot_be_added_or_renamed(rules_admin) -> None:
    config = rule_configuration_default()
    before = state(config)
    data = form_data(config)
    data[f"{PREFIX}-0-special"] = "six_pairs"  # ignored: the special of a row is not editable
    data[f"{PREFIX}-TOTAL_FORMS"] = len(SPECIAL_IDS) + 1
    n = len(SPECIAL_IDS)
    data.update(
        {
            f"{PREFIX}-{n}-special": "dragon",
            f"{PREFIX}-{n}-enabled": "on",
            f"{PREFIX}-{n}-water": 1,
            f"{PREFIX}-{n}-order": 99,
        }
    )

    response = logged_in(rules_admin).post(change_url(config), data)

    assert response.status_code == 302, errors_of(response)
    assert state(config)[1] == before[1]
    assert config.special_hands.count() == len(SPECIAL_IDS)


def test_the_change_page_has_the_15_specials_without_add_or_delete(rules_admin) -> None:
    config = rule_configuration_default()
    html = logged_in(rules_admin).get(change_url(config)).content.decode()
    assert f'name="{PREFIX}-TOTAL_FORMS" value="15"' in html
    for sid in SPECIAL_IDS:
        info = SPECIAL_BY_ID[sid]
        assert f"<strong>{info.en}</strong>" in html  # the page's language only
        assert info.zh not in html
    assert f'name="{PREFIX}-0-DELETE"' not in html
    assert f'name="{PREFIX}-0-special"' not in html  # shown as text, never submitted


def test_adding_a_configuration_starts_from_the_engine_defaults(rules_admin) -> None:
    client = logged_in(rules_admin)
    html = client.get(reverse("admin:games_ruleconfiguration_add")).content.decode()
    assert f'name="{PREFIX}-TOTAL_FORMS" value="15"' in html
    assert "<strong>Double monster</strong>" in html

    new = RuleConfiguration(name="Quick", arrange_seconds=20)
    data = form_data(new)
    data.update(
        {
            f"{PREFIX}-TOTAL_FORMS": 15,
            f"{PREFIX}-INITIAL_FORMS": 0,
        }
    )
    for i, rule in enumerate(DEFAULT_CONFIG.specials):
        data[f"{PREFIX}-{i}-enabled"] = "on" if rule.enabled else ""
        data[f"{PREFIX}-{i}-water"] = 7 if rule.id == "six_pairs" else rule.water
        data[f"{PREFIX}-{i}-order"] = i + 1
    data = {k: v for k, v in data.items() if v != ""}
    response = client.post(reverse("admin:games_ruleconfiguration_add"), data)

    assert response.status_code == 302, errors_of(response)
    created = RuleConfiguration.objects.get(name="Quick")
    engine = created.engine_config()
    assert engine.arrange_seconds == 20
    assert engine.special("six_pairs").water == 7
    assert [s.id for s in engine.specials] == [s.id for s in DEFAULT_CONFIG.specials]
    assert not created.is_default
    assert created.history.first().history_user == rules_admin


def test_making_another_configuration_the_default(rules_admin) -> None:
    old = rule_configuration_default()
    new = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other")
    client = logged_in(rules_admin)

    response = client.post(change_url(new), form_data(new, is_default=True))
    assert response.status_code == 302, errors_of(response)
    assert rule_configuration_default() == new

    response = client.post(
        reverse("admin:games_ruleconfiguration_changelist"),
        {"action": "make_default", "_selected_action": [old.pk]},
    )
    assert response.status_code == 302
    assert rule_configuration_default() == old
    assert RuleConfiguration.objects.filter(is_default=True).count() == 1


def test_the_default_cannot_just_be_unset(rules_admin) -> None:
    config = rule_configuration_default()
    response = logged_in(rules_admin).post(change_url(config), form_data(config, is_default=False))
    assert response.status_code == 200
    assert "There must be a default configuration" in errors_of(response)
    assert rule_configuration_default() == config


def test_the_default_cannot_be_deleted_even_by_a_superuser(admin_client) -> None:
    config = rule_configuration_default()
    url = reverse("admin:games_ruleconfiguration_delete", args=[config.pk])
    assert admin_client.post(url, {"post": "yes"}).status_code == 403
    response = admin_client.post(
        reverse("admin:games_ruleconfiguration_changelist"),
        {"action": "delete_selected", "_selected_action": [config.pk], "post": "yes"},
    )
    assert response.status_code == 200  # the "cannot delete" page
    assert RuleConfiguration.objects.filter(pk=config.pk).exists()


def test_old_versions_can_be_seen_not_restored(rules_admin) -> None:
    config = rule_configuration_default()
    client = logged_in(rules_admin)
    client.post(change_url(config), form_data(config, specials={"six_pairs": {"water": 5}}))

    history = client.get(reverse("admin:games_ruleconfiguration_history", args=[config.pk]))
    html = history.content.decode()
    assert history.status_code == 200
    assert "Changes of the special hands" in html
    assert "water: 4 → 5" in html
    assert rules_admin.username in html

    version = config.history.last()
    url = reverse(
        "admin:games_ruleconfiguration_simple_history", args=[config.pk, version.history_id]
    )
    assert client.get(url).status_code == 200
    assert client.post(url, form_data(config, name="Old")).status_code == 403
    assert RuleConfiguration.objects.get(pk=config.pk).name == config.name


# -- the figures on the change page ------------------------------------------------------------


def test_the_change_page_shows_entry_minimum_and_special_frequencies(
    rules_admin, settings, tmp_path
) -> None:
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = TINY.deals
    settings.SPECIAL_STATS_SEED = 0
    save_deals(tmp_path / cache_filename(TINY.deals, 0), TINY)
    config = rule_configuration_default()
    config.special_hands.filter(special="six_pairs").update(water=10)

    html = logged_in(rules_admin).get(change_url(config)).content.decode()
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))

    assert "32,400 coins = 108 water" in text
    assert "4 four-player deals (16 hands, seed 0)" in text
    # Columns: rank, special, enabled, water, frequency, 1 hand in, water per deal, coins per
    # deal (base 100), hands that make it. six_pairs (rank 13 of the 15 rows, the 11th
    # enabled): 2 of 16 hands; wins 10 x 3 + 10 x 2 = 50 water in 4 deals.
    assert "13 Six pairs yes 10 12.5 % 8 12.5000 1,250.0 2" in text
    # dragon: 1 of 16; 36 x 3 in 4 deals. three_flushes: 3 of 16, 18 water.
    assert "2 Dragon yes 36 6.25 % 16 27.0000 2,700.0 1" in text
    assert "15 Three flushes yes 3 18.8 % 5 4.5000 450.0 4" in text
    assert "1 Supreme dragon yes 108 0 % not dealt" in text
    # The figures are the engine's, for the rules as saved.
    expected = special_stats(TINY, config.engine_config())
    assert expected["six_pairs"].water_won == 50
    assert f"{expected.expected_water_per_deal:.4f}" in text


def test_the_change_page_figures_are_for_the_saved_rules(rules_admin) -> None:
    config = rule_configuration_default()
    response = logged_in(rules_admin).post(
        change_url(config), form_data(config, base_score=50, specials={"dragon": {"order": 1}})
    )
    assert response.status_code == 200  # duplicate rank: not saved
    text = re.sub(r"<[^>]+>", " ", response.content.decode())
    assert "32,400 coins = 108 water" in text  # still the saved base score 100


def test_special_mask_of_the_tiny_deals() -> None:
    assert TINY.masks[1, 0] == special_mask(["dragon"])


# -- support: looks, never changes -------------------------------------------------------------


def test_support_can_view_the_list_and_the_change_page(support) -> None:
    config = rule_configuration_default()
    client = logged_in(support)
    listing = client.get(reverse("admin:games_ruleconfiguration_changelist"))
    assert listing.status_code == 200
    assert config.name in listing.content.decode()
    assert "32,400" in listing.content.decode()
    page = client.get(change_url(config))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Six pairs" in html
    assert 'name="_save"' not in html
    assert client.get(reverse("admin:games_ruleconfiguration_add")).status_code == 403


def test_support_cannot_change_or_delete(support) -> None:
    config = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other")
    before = state(config), state(other)
    client = logged_in(support)

    changed = client.post(
        change_url(config), form_data(config, specials={"six_pairs": {"water": 5}})
    )
    deleted = client.post(
        reverse("admin:games_ruleconfiguration_delete", args=[other.pk]), {"post": "yes"}
    )
    bulk = client.post(
        reverse("admin:games_ruleconfiguration_changelist"),
        {"action": "delete_selected", "_selected_action": [other.pk], "post": "yes"},
    )
    made_default = client.post(
        reverse("admin:games_ruleconfiguration_changelist"),
        {"action": "make_default", "_selected_action": [other.pk]},
    )

    assert changed.status_code == 403
    assert deleted.status_code == 403
    # Actions it does not have are not offered (it has "compare"): refused, nothing runs.
    assert bulk.status_code in (200, 302) and made_default.status_code in (200, 302)
    assert (state(config), state(other)) == before
    assert rule_configuration_default() == config


def test_rules_admin_cannot_delete(rules_admin) -> None:
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other")
    url = reverse("admin:games_ruleconfiguration_delete", args=[other.pk])
    assert logged_in(rules_admin).post(url, {"post": "yes"}).status_code == 403
    assert RuleConfiguration.objects.filter(pk=other.pk).exists()


def test_the_change_page_speaks_chinese(rules_admin) -> None:
    config = rule_configuration_default()
    client = logged_in(rules_admin)
    html = client.get(change_url(config), headers={"accept-language": "zh-hans"}).content.decode()
    assert "特殊牌型统计：出现频率与期望水数" in html
    assert "每局期望水数" in html
    assert "以铁支赢尾墩时的额外水数。" in html  # a help text
    assert "入场最低金币" in html

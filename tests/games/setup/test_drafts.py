"""Drafts of rule configurations: "Save as new" makes one, Publish (with a reason, after the
money checks) makes it usable."""

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from games.models import RuleConfiguration
from games.setup.selectors import rule_configuration_default
from games.setup.services import (
    PublishRefused,
    draft_name,
    rule_configuration_publish,
    rule_configuration_save_as_draft,
)
from tests.games.setup.test_admin import change_url, form_data, logged_in

pytestmark = pytest.mark.django_db


def save_as_draft_url(config: RuleConfiguration) -> str:
    return reverse("admin:games_ruleconfiguration_save_as_draft", args=[config.pk])


def publish_url(config: RuleConfiguration) -> str:
    return reverse("admin:games_ruleconfiguration_publish", args=[config.pk])


def rows(config: RuleConfiguration) -> list[tuple[str, bool, int, int]]:
    return list(
        config.special_hands.order_by("special").values_list("special", "enabled", "water", "order")
    )


def test_save_as_new_makes_a_draft_copy_with_its_specials(rules_admin: User) -> None:
    source = rule_configuration_default()
    source.special_hands.filter(special="six_pairs").update(water=7)

    response = logged_in(rules_admin).post(save_as_draft_url(source))

    draft = RuleConfiguration.objects.get(name=f"{source.name} (draft)")
    assert response.status_code == 302
    assert response["Location"] == change_url(draft)
    assert draft.is_draft and not draft.is_default
    assert draft.engine_config() == source.engine_config()
    assert rows(draft) == rows(source)
    record = draft.history.first()
    assert (record.history_type, record.history_user) == ("+", rules_admin)
    assert draft.special_hands.first().history.first().history_user == rules_admin


def test_save_as_new_again_numbers_the_draft(rules_admin: User) -> None:
    source = rule_configuration_default()
    first = rule_configuration_save_as_draft(configuration=source, user=rules_admin)
    second = rule_configuration_save_as_draft(configuration=source, user=rules_admin)
    assert first.name == f"{source.name} (draft)"
    assert second.name == f"{source.name} (draft 2)"
    assert len(draft_name("x" * 80)) <= 80


def test_save_as_new_is_a_post_and_needs_the_add_permission(support: User) -> None:
    source = rule_configuration_default()
    before = RuleConfiguration.objects.count()
    assert logged_in(support).post(save_as_draft_url(source)).status_code == 403
    assert logged_in(support).get(save_as_draft_url(source)).status_code == 403
    assert RuleConfiguration.objects.count() == before


def test_the_list_and_the_change_page_label_a_draft(rules_admin: User) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    client = logged_in(rules_admin)
    listing = client.get(reverse("admin:games_ruleconfiguration_changelist")).content.decode()
    assert "Draft 草稿" in listing
    page = client.get(change_url(draft)).content.decode()
    assert 'id="draft-note"' in page and publish_url(draft) in page


def test_a_draft_cannot_be_made_the_default(rules_admin: User) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    client = logged_in(rules_admin)
    response = client.post(change_url(draft), form_data(draft, is_default=True))
    assert response.status_code == 200
    response = client.post(
        reverse("admin:games_ruleconfiguration_changelist"),
        {"action": "make_default", "_selected_action": [draft.pk]},
    )
    draft.refresh_from_db()
    assert not draft.is_default


def test_publish_needs_a_reason_and_records_who_when_why(rules_admin: User) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    client = logged_in(rules_admin)
    assert client.get(publish_url(draft)).status_code == 200

    response = client.post(publish_url(draft), {"reason": "  "})
    assert response.status_code == 400
    assert RuleConfiguration.objects.get(pk=draft.pk).is_draft

    response = client.post(publish_url(draft), {"reason": "Weekend trial"})
    assert response.status_code == 302
    draft.refresh_from_db()
    assert not draft.is_draft
    assert (draft.published_by, draft.publish_reason) == (rules_admin, "Weekend trial")
    assert draft.published_at is not None
    record = draft.history.first()
    assert record.history_user == rules_admin
    assert record.history_change_reason == "Published: Weekend trial"


def test_publish_warns_about_money_and_needs_the_tick(rules_admin: User) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    draft.special_hands.filter(special="supreme_dragon").update(water=500)
    client = logged_in(rules_admin)

    page = client.get(publish_url(draft)).content.decode()
    assert "above the sign-up grant of 100,000 coins" in page

    response = client.post(publish_url(draft), {"reason": "Bigger dragon"})
    assert response.status_code == 400
    assert 'id="publish-refusal"' in response.content.decode()
    assert RuleConfiguration.objects.get(pk=draft.pk).is_draft

    response = client.post(
        publish_url(draft), {"reason": "Bigger dragon", "confirm_warnings": "on"}
    )
    assert response.status_code == 302
    assert not RuleConfiguration.objects.get(pk=draft.pk).is_draft


def test_publish_refuses_errors_and_a_published_configuration(rules_admin: User) -> None:
    source = rule_configuration_default()
    with pytest.raises(PublishRefused):
        rule_configuration_publish(configuration_id=source.pk, user=rules_admin, reason="x")
    draft = rule_configuration_save_as_draft(configuration=source, user=rules_admin)
    RuleConfiguration.objects.filter(pk=draft.pk).update(home_run_min_players=9)
    with pytest.raises(PublishRefused) as caught:
        rule_configuration_publish(
            configuration_id=draft.pk, user=rules_admin, reason="x", confirm_warnings=True
        )
    assert caught.value.errors
    assert RuleConfiguration.objects.get(pk=draft.pk).is_draft


def test_support_cannot_publish(support: User, rules_admin: User) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    client: Client = logged_in(support)
    assert client.post(publish_url(draft), {"reason": "x"}).status_code == 403
    assert RuleConfiguration.objects.get(pk=draft.pk).is_draft


def test_the_draft_pages_speak_chinese(rules_admin: User) -> None:
    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    client = logged_in(rules_admin)
    with translation.override("zh-hans"):
        page = client.get(publish_url(draft), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "发布" in page


def test_drafts_and_publishing_are_rate_limited(settings, rules_admin: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.rule_draft": "2/minute"}
    source = rule_configuration_default()
    client = logged_in(rules_admin)
    before = RuleConfiguration.objects.count()
    codes = [client.post(save_as_draft_url(source)).status_code for _ in range(3)]
    assert codes == [302, 302, 429]
    assert RuleConfiguration.objects.count() == before + 2
    draft = RuleConfiguration.objects.filter(is_draft=True).first()
    response = client.post(publish_url(draft), {"reason": "x"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert RuleConfiguration.objects.get(pk=draft.pk).is_draft


def test_a_duplicate_match_refuses_a_draft(rules_admin: User) -> None:
    from accounts.services import user_signup
    from games.live.matches import match_create
    from lobby.errors import DraftRules

    draft = rule_configuration_save_as_draft(
        configuration=rule_configuration_default(), user=rules_admin
    )
    owner = user_signup(username="matchowner", password="not-used-1")
    with pytest.raises(DraftRules):
        match_create(owner=owner, base_score=100, seats=4, tables=2, deals=2, rules=draft)

"""A rules administrator tries a rule change before it is live, in Chromium at 1280x800.

From the default configuration: "Save as new (draft)" → the draft's page says no room can use
it → a special hand's water is raised (the save warns about money and is confirmed) → the
statistics of the draft show (a sample or the full simulation, polled by the page) → Publish
warns again, refuses without the tick, publishes with a reason and the tick → an idle room is
moved to the published configuration from the rooms admin. Shots in test-output/<test>/.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.contrib.auth.models import Group
from django.test import override_settings
from playwright.sync_api import expect

from accounts.groups import RULES_ADMIN
from accounts.models import User
from accounts.services import user_signup
from games.models import RuleConfiguration
from lobby.models import Room
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, NewPage, Shot
from tests.games.table_helpers import default_rules
from tests.live_server import session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)


def test_rules_admin_clones_drafts_checks_publishes_and_moves_a_room(
    live_server: object, new_page: NewPage, shot: Shot, settings, tmp_path: Path
) -> None:
    # A cold cache, and a simulation long enough to be seen running: the first page shows the
    # progress, and its script puts in the table when there is one, without a reload.
    settings.STATS_CACHE_DIR = tmp_path
    settings.SPECIAL_STATS_DEALS = 30_000
    settings.SPECIAL_STATS_SAMPLE_SECONDS = 1.5
    # The row bonuses' figures: a short sample, then a longer run the page polls for.
    settings.ROW_BONUS_STATS_IN_BACKGROUND = True
    settings.ROW_BONUS_SAMPLE_SECONDS = 0.5
    settings.ROW_BONUS_FULL_SECONDS = 3.0
    settings.ROW_BONUS_FULL_MAX_DEALS = 400
    # The default configuration (an earlier test's flush may have removed the migration's).
    source = default_rules()
    with override_settings(SIGNUP_GRANT=100_000):
        owner = user_signup(username="idleowner", password="not-used-1")
    room = room_create(owner=owner, name="Idle room", base_score=100, seats=4)
    admin_user = User.objects.create_user(username="rulesboss", password="x", is_staff=True)
    admin_user.groups.add(Group.objects.get(name=RULES_ADMIN))
    base = live_server.url  # type: ignore[attr-defined]
    page = new_page(viewport=DESKTOP)
    page.context.add_cookies(
        [{"name": k, "value": v, "url": base} for k, v in session_cookie_for(admin_user).items()]
    )

    # Clone: a draft copy opens.
    page.goto(f"{base}/admin/games/ruleconfiguration/{source.pk}/change/")
    expect(page.get_by_test_id("special-stats-progress")).to_be_visible()
    expect(page.locator(".special-stats > table")).to_be_visible(timeout=30_000)
    page.get_by_test_id("save-as-draft").click()
    expect(page.locator("#draft-note")).to_be_visible()
    draft = RuleConfiguration.objects.get(name=f"{source.name} (draft)")
    assert draft.is_draft
    assert page.url.endswith(f"/admin/games/ruleconfiguration/{draft.pk}/change/")

    # Change a special's water: the save warns about money, then is confirmed.
    row = draft.special_hands.get(special="supreme_dragon").order - 1
    page.locator(f'input[name="special_hands-{row}-water"]').fill("500")
    page.locator('input[name="_continue"]').click()
    expect(page.locator(".errornote").first).to_be_visible()
    expect(page.get_by_text("above the sign-up grant of 100,000 coins").first).to_be_visible()
    page.locator('input[name="confirm_warnings"]').check()
    page.locator('input[name="_continue"]').click()
    expect(page.locator(".messagelist .success")).to_be_visible()
    assert draft.special_hands.get(special="supreme_dragon").water == 500

    # The draft's statistics: the page polls until a table is there.
    stats = page.locator(".special-stats > table")
    expect(stats).to_be_visible(timeout=30_000)
    expect(page.locator(".special-stats > table tr.special-supreme_dragon td").nth(3)).to_have_text(
        "500"
    )
    # ... and what each row bonus of the draft's rules moves per deal, with its interval.
    trips = page.locator('.row-bonus-stats tr[data-key="front.trips"]')
    expect(trips).to_be_visible(timeout=30_000)
    expect(trips.locator("td").nth(2)).to_have_text("2")
    expect(page.locator(".row-bonus-stats tfoot")).to_contain_text("all row bonuses")
    expect(page.locator(".row-bonus-stats tfoot")).to_contain_text("±")
    page.locator(".row-bonus-stats").scroll_into_view_if_needed()  # the window, 1280x800
    page.screenshot(path=str(shot(page, "draft-row-bonus-statistics-en-1280")), full_page=False)
    chinese = new_page(viewport=DESKTOP, locale="zh-CN")
    chinese.context.add_cookies(
        [
            {"name": k, "value": v, "url": base}
            for k, v in {**session_cookie_for(admin_user), "django_language": "zh-hans"}.items()
        ]
    )
    chinese.goto(f"{base}/admin/games/ruleconfiguration/{draft.pk}/change/")
    expect(chinese.locator(".row-bonus-stats tfoot")).to_contain_text("全部墩的额外水数")
    chinese.locator(".row-bonus-stats").scroll_into_view_if_needed()
    chinese.screenshot(
        path=str(shot(chinese, "draft-row-bonus-statistics-zh-hans-1280")), full_page=False
    )
    shot(page, "draft-statistics")

    # Publish: the money warning, a refusal without the tick, then published with a reason.
    page.get_by_test_id("publish").click()
    expect(page.locator("#publish-warnings")).to_contain_text("above the sign-up grant")
    page.locator('input[name="reason"]').fill("Trial of a bigger dragon")
    page.get_by_test_id("publish-submit").click()
    expect(page.locator("#publish-refusal")).to_be_visible()
    assert RuleConfiguration.objects.get(pk=draft.pk).is_draft
    page.locator('input[name="reason"]').fill("Trial of a bigger dragon")
    page.locator('input[name="confirm_warnings"]').check()
    shot(page, "publish-warning")
    page.get_by_test_id("publish-submit").click()
    expect(page.locator(".messagelist .success")).to_contain_text("is published")
    draft.refresh_from_db()
    assert not draft.is_draft and draft.published_by == admin_user
    assert draft.publish_reason == "Trial of a bigger dragon"

    # Move the idle room to it.
    page.goto(f"{base}/admin/lobby/room/")
    page.locator(f'input[name="_selected_action"][value="{room.pk}"]').check()
    page.locator('select[name="action"]').select_option("move_rules")
    page.locator('button[name="index"]').click()
    page.locator('select[name="rules"]').select_option(str(draft.pk))
    page.locator('input[name="reason"]').fill("Try the bigger dragon")
    page.get_by_role("button", name="Move").click()
    expect(page.locator(".messagelist .success")).to_contain_text("Idle room")
    assert Room.objects.get(pk=room.pk).rules_id == draft.pk
    shot(page, "room-moved")

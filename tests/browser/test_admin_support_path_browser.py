# ruff: noqa: F811  (the fixtures imported from test_table_services are used as arguments)
"""The support person's path through the admin, in Chromium at 1280x800, by links only.

A four-player round is settled through the table services. A member of the support group
opens a player's page, follows "Their rounds" to the round list (Players, Amount and Flags
inside the window), opens the round (its rule configuration named, coins beside water in the
pair table), follows its ledger transaction, and comes back to the round by the transaction's
reference link. The round page, the user page and the ledger entry are shot at 1280x800 in
English and Chinese (test-output/<test>/; copies live in docs/screens/).
"""

from __future__ import annotations

import pytest
from django.contrib.auth.models import Group
from playwright.sync_api import expect

from accounts.groups import SUPPORT
from accounts.models import User
from tests.browser.conftest import DESKTOP, NewPage, Shot
from tests.games.live.test_table_services import World, world  # noqa: F401  (fixture)
from tests.games.played_rounds import play_round
from tests.live_server import session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = ["alice", "bob", "carol", "dave"]


def _viewport_shot(page: object, shot: Shot, name: str) -> None:
    """A shot of the window itself (1280x800), not of the whole page."""
    path = shot(page, name)  # type: ignore[arg-type]
    page.screenshot(path=str(path), full_page=False)  # type: ignore[attr-defined]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_support_walks_player_rounds_round_ledger_and_back_by_links(
    world: World,
    live_server: object,
    new_page: NewPage,
    shot: Shot,
    language: str,
) -> None:
    round_ = play_round(world, NAMES)
    staff = User.objects.create_user(username="helpdesk", password="x", is_staff=True)
    staff.groups.add(Group.objects.get(name=SUPPORT))
    player = User.objects.get(username="alice")
    base = live_server.url  # type: ignore[attr-defined]
    cookies = [
        {"name": k, "value": v, "url": base}
        for k, v in {**session_cookie_for(staff), "django_language": language}.items()
    ]
    page = new_page(viewport=DESKTOP, locale=language)
    page.context.add_cookies(cookies)

    # The player's page: its links to their rounds and their ledger entries.
    page.goto(f"{base}/admin/accounts/user/{player.pk}/change/")
    expect(page.locator("#user-entries")).to_be_visible()
    _viewport_shot(page, shot, f"admin-user-{language}-1280")
    page.locator("#user-rounds").click()

    # Their rounds: the columns that matter are inside the window.
    page.wait_for_url("**/admin/games/round/?player=alice")
    # Inside the window and inside the list's own box (which scrolls sideways when too wide).
    results = page.locator("#changelist-form .results").bounding_box()
    assert results is not None
    right = min(DESKTOP["width"], results["x"] + results["width"])
    assert page.evaluate(
        "(() => { const r = document.querySelector('#changelist-form .results');"
        " return r.scrollWidth <= r.clientWidth; })()"
    ), "the round list scrolls sideways"
    for column in ("player_names", "amount", "flags"):
        header = page.locator(f"#result_list th.column-{column}")
        box = header.bounding_box()
        assert box is not None, column
        assert box["x"] + box["width"] <= right, f"{column} ends at {box}, the list at {right}"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= DESKTOP["width"], f"the round list is {width} px wide"
    _viewport_shot(page, shot, f"admin-round-list-{language}-1280")
    page.locator(f'#result_list a[href*="/admin/games/round/{round_.pk}/change/"]').first.click()

    # The round: its configuration named, coins per pair.
    page.wait_for_url(f"**/admin/games/round/{round_.pk}/change/**")
    rules = page.locator("#round-rules").inner_text()
    assert round_.table.room.rules.name in rules
    assert str(round_.config["base_score"]) in rules
    coins = page.locator("#pairs td.pair-coins").all_inner_texts()
    assert len(coins) == len(round_.result["pairs"]) and all(c.strip() for c in coins)
    _viewport_shot(page, shot, f"admin-round-{language}-1280")
    page.locator("a.ledger-transaction").first.click()

    # Its ledger transaction, then back to the round by the reference link.
    page.wait_for_url("**/admin/accounts/transaction/*/change/")
    _viewport_shot(page, shot, f"admin-ledger-{language}-1280")
    page.locator(f'a[href$="/admin/games/round/{round_.pk}/change/"]').first.click()
    page.wait_for_url(f"**/admin/games/round/{round_.pk}/change/")
    expect(page.locator("#round-rules")).to_be_visible()

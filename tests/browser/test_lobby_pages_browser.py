"""The live lobby page on a paginated room list (static/lobby/lobby.js), in Chromium.

Three rooms a page (LOBBY_PAGE_SIZE=3). Rooms opened and closed by other players through the
API reach the page as events: a new room goes on top of page 1 and the oldest row drops off;
a page left short asks for itself again; the pager's links and the filters go over the socket
and keep the address bar in step.
"""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from rest_framework.authtoken.models import Token

from lobby.models import Room
from tests.browser.conftest import NewPage, Shot
from tests.games.table_helpers import default_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = 15_000


def api(platform: LivePlatform, token: str, path: str, body: dict[str, Any] | None = None) -> Any:
    request = urllib.request.Request(
        f"{platform.url}{path}",
        data=json.dumps(body or {}).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def shown(page: Page) -> list[int]:
    return [
        int(r)
        for r in page.locator("#lobby-rooms tbody tr").evaluate_all(
            "rows => rows.map(r => r.dataset.room)"
        )
    ]


def expect_rows(page: Page, ids: list[int]) -> None:
    expect(page.locator("#lobby-rooms tbody tr")).to_have_count(len(ids), timeout=PAGE)
    page.wait_for_function(
        "ids => JSON.stringify([...document.querySelectorAll('#lobby-rooms tbody tr')]"
        ".map(r => Number(r.dataset.room))) === JSON.stringify(ids)",
        arg=ids,
        timeout=PAGE,
    )


@pytest.mark.parametrize("live_platform", [{"LOBBY_PAGE_SIZE": "3"}], indirect=True)
def test_the_live_lobby_keeps_a_page_current(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    rules = default_rules()
    viewer, opener = make_player("viewer"), make_player("opener")
    old = Room.objects.bulk_create(
        Room(name=f"Old {i}", rules=rules, owner=viewer, base_score=10, seats=4, entry_minimum=0)
        for i in range(4)
    )
    r1, r2, r3, r4 = (room.pk for room in old)
    token = Token.objects.create(user=opener).key
    page = new_page()
    page.context.add_cookies(
        [
            {"name": k, "value": v, "url": live_platform.url}
            for k, v in session_cookie_for(viewer).items()
        ]
    )
    page.goto(f"{live_platform.url}/lobby/")
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)
    expect_rows(page, [r4, r3, r2])
    expect(page.locator("#lobby-pager .page-info")).to_have_text("Page 1 of 2 · 4 open rooms")
    expect(page.locator("#lobby-pager .newer")).to_be_hidden()

    created = api(
        live_platform, token, "/api/lobby/rooms/", {"name": "New", "base_score": 10, "seats": 2}
    )

    expect_rows(page, [created["id"], r4, r3])  # on top; the oldest row moved to page 2
    expect(page.locator("#lobby-pager .page-info")).to_have_text("Page 1 of 2 · 5 open rooms")
    shot(page, "new-room-on-top")

    api(live_platform, token, "/api/lobby/leave/")
    api(live_platform, token, f"/api/lobby/rooms/{created['id']}/close/")

    expect_rows(page, [r4, r3, r2])  # short, so asked for again
    expect(page.locator("#lobby-pager .page-info")).to_have_text("Page 1 of 2 · 4 open rooms")

    page.locator("#lobby-pager .older").click()

    expect_rows(page, [r1])
    expect(page).to_have_url(re.compile(r"/lobby/\?page=2$"))
    expect(page.locator("#lobby-pager .newer")).to_be_visible()
    expect(page.locator("#lobby-pager .older")).to_be_hidden()
    shot(page, "page-two")

    page.locator("#lobby-filters select[name=seats]").select_option("2")

    expect_rows(page, [])
    expect(page.locator("#lobby-empty")).to_be_visible()
    expect(page).to_have_url(re.compile(r"/lobby/\?[^#]*seats=2"))
    expect(page.locator("#lobby-pager .page-info")).to_have_text("Page 1 of 1 · 0 open rooms")
    page.reload()  # the address bar holds the page and filters
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)
    expect_rows(page, [])
    assert shown(page) == []

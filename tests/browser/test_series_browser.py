"""A series (房卡) in Chromium: a private room of 4 rounds opened from the lobby's
form with a bot, played to its end at the table ("Round 3 / 4"), then its final scoreboard at
the share link — in a fresh browser that is not signed in — with the image to share."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    SERVER,
    Player,
    open_bot_room,
    open_lobby,
    page_deltas,
    play_hand,
    press_ready,
    sign_up,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

RULES = "Series (browser)"
live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})


def test_a_four_round_series_to_its_final_scoreboard(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    fay = Player("series-fay", new_page(viewport=DESKTOP))
    sign_up(fay, live_platform.url)
    open_lobby(fay, live_platform.url)
    room = open_bot_room(fay, name="Fay's series", rules=RULES, private=True, series_rounds=4)
    assert room.series_rounds == 4 and room.is_private
    expect(fay.testid("series-chip")).to_contain_text("4 rounds")

    for n in range(1, 5):
        press_ready(fay)
        expect(fay.testid("phase")).to_contain_text(f"Round {n} / 4", timeout=SERVER)
        play_hand(fay, room)
        page_deltas(fay)  # the settlement is shown
        if n == 3:
            shot(fay.page, "round-3-of-4")
    expect(fay.page.locator("#status-line")).to_contain_text("series is over", timeout=SERVER)
    expect(fay.testid("ready-button")).to_be_hidden()

    link = fay.testid("series-chip").get_attribute("href")
    assert link == f"/games/series/{room.series_token}/"
    visitor = new_page(viewport=PHONE)  # a friend who got the link, not signed in
    visitor.goto(f"{live_platform.url}{link}")
    expect(visitor.get_by_test_id("series-meta")).to_contain_text("4 of 4 rounds played")
    rows = visitor.locator("[data-testid=series-row]")
    expect(rows).to_have_count(2)
    expect(rows.first.locator("td.number")).to_have_count(4 + 4)  # 4 rounds, then 4 totals
    expect(visitor.get_by_test_id("series-best")).to_have_count(2)
    image = visitor.locator("img.series-image")
    expect(image).to_be_visible()
    assert visitor.evaluate("document.querySelector('img.series-image').naturalWidth") == 640
    shot(visitor, "scoreboard-phone")

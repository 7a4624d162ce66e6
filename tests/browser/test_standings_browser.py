"""Standings and statistics in Chromium: a player plays a round against a bot; the
beat job (every 2 s here) computes the standings; the header's Standings link shows them (the
player's row, not the bot's), both periods and both rankings, in English and Chinese, and a
row leads to the player's statistics page."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    Player,
    open_bot_room,
    open_lobby,
    page_deltas,
    play_hand,
    press_ready,
    sign_up,
    switch_language,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

RULES = "Standings (browser)"
live_platform = module_platform(
    {"BOT_DELAY_SCALE": "0.1", "STANDINGS_SECONDS": "2", "STANDINGS_MIN_ROUNDS_WEEK": "1"}
)


def test_a_players_round_shows_in_the_standings_and_on_its_page(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    gus = Player("standing-gus", new_page(viewport=DESKTOP))
    sign_up(gus, live_platform.url)
    open_lobby(gus, live_platform.url)
    room = open_bot_room(gus, name="Gus table", rules=RULES)
    press_ready(gus)
    play_hand(gus, room)
    deltas = page_deltas(gus)

    page = gus.page.context.new_page()
    page.goto(f"{live_platform.url}/lobby/")
    page.locator("a[data-nav=standings]").click()
    page.wait_for_url("**/games/standings/", timeout=PAGE)
    row = page.locator('[data-testid=standing-row][data-player="standing-gus"]')
    for _ in range(20):  # the beat job runs every 2 s
        if row.count():
            break
        page.wait_for_timeout(1000)
        page.reload()
    expect(row).to_have_count(1)
    expect(page.locator("[data-testid=standing-row]")).to_have_count(1)  # no bot
    # Its net coins are the round's (gus sits at position 0).
    expect(row.locator("td").nth(3)).to_contain_text(f"{abs(deltas[0]):,}")
    page.get_by_test_id("by-water").click()
    expect(page.locator("#standings")).to_have_attribute("data-by", "water")
    page.get_by_test_id("period-all").click()
    expect(page.locator("#standings")).to_have_attribute("data-period", "all")
    shot(page, "standings")
    switch_language(page, "zh-hans")
    expect(page.get_by_test_id("by-water")).to_have_text("按每局水数")
    page.get_by_test_id("period-week").click()
    row.locator("a").click()
    page.wait_for_url("**/games/players/standing-gus/", timeout=PAGE)
    rounds = page.locator('[data-testid=player-stats] tr[data-stat="rounds"] td')
    expect(rounds.first).to_have_text("1")
    shot(page, "player-zh")

"""Spectators in Chromium: a player's table with a bot, watched from another
browser context. The lobby offers "Watch" and counts the watchers (👁); the spectator's page
shows the seats and the play, never a hand before the reveal, and then the revealed rows; it
has no Ready button, no hand to arrange and no chat box."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    SERVER,
    Player,
    answer_special,
    open_bot_room,
    open_lobby,
    play_hand,
    press_ready,
    sign_up,
    wait_for_hand,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

RULES = "Spectators (browser)"
live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})


def test_a_spectator_watches_a_round_without_seeing_a_hand_before_the_reveal(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    dan = Player("watch-dan", new_page(viewport=DESKTOP))
    eve = Player("watch-eve", new_page(viewport=PHONE))
    for player in (dan, eve):
        sign_up(player, live_platform.url)
        open_lobby(player, live_platform.url)

    room = open_bot_room(dan, name="Show table", rules=RULES)

    row = eve.page.locator(f'#lobby-rooms tr[data-room="{room.pk}"]')
    watch = row.locator("[data-testid=watch-link]")
    expect(watch).to_be_visible(timeout=PAGE)
    watch.click()
    eve.page.wait_for_url(f"**/games/table/{room.pk}/watch/", timeout=PAGE)
    expect(eve.testid("connection-state")).to_have_attribute("data-state", "live", timeout=SERVER)
    expect(eve.testid("watching")).to_be_visible()
    expect(eve.page.locator("[data-testid=seat]")).to_have_count(2, timeout=PAGE)
    expect(eve.testid("ready-button")).to_be_hidden()
    eve.testid("chat-toggle").click()
    expect(eve.testid("chat-spectator")).to_be_visible()
    expect(eve.testid("chat-form")).to_have_count(0)

    # The lobby counts the watcher.
    lobby = eve.page.context.new_page()
    lobby.goto(f"{live_platform.url}/lobby/")
    expect(
        lobby.locator(f'#lobby-rooms tr[data-room="{room.pk}"] [data-field=seats]')
    ).to_have_text("2 / 2 · 👁 1", timeout=PAGE)
    lobby.close()

    press_ready(dan)
    # Dealt a special hand, Dan is asked first; the round stays in special_choice until he
    # answers (and would skip arranging altogether if he let the question time out).
    wait_for_hand(dan)
    if answer_special(dan):
        assert eve.page.locator("#seats [data-card]").count() == 0
    expect(eve.testid("phase")).to_have_attribute("data-phase", "arranging", timeout=SERVER)
    # While hands are arranged the spectator sees no card face: no hand, no row.
    assert eve.page.locator("[data-testid=hand] [data-card]").count() == 0
    assert eve.page.locator("#seats [data-card]").count() == 0
    shot(eve.page, "watching-arranging-phone")
    play_hand(dan, room)
    # The comparison reveals the rows to everyone, the spectator too.
    expect(eve.page.locator("#seats [data-card]").first).to_be_visible(timeout=SERVER)
    expect(eve.testid("settlement-panel")).to_be_visible(timeout=SERVER)
    expect(eve.page.locator("#review-button")).to_be_hidden()
    shot(eve.page, "watching-settled-phone")

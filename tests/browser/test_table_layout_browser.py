"""The table and lobby pages at phone and desktop widths, and the table page in Chinese.

One player plays on a phone-sized page (390×844), the other on a desktop one (1280×800): the
13 cards, the rows and Submit must be on screen with no horizontal scrolling.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import Locator, Page, expect

from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot
from tests.browser.table_flow import (
    PACING,
    PAGE,
    ROWS,
    Player,
    answer_special,
    apply_best_suggestion,
    best_rows,
    check_settlement,
    join_from_list,
    open_lobby,
    open_room,
    place,
    press_ready,
    round_config,
    sign_up,
    submit,
    switch_language,
    wait_for_hand,
    wait_for_table,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

RULES = "Browser layout 布局"


def assert_no_horizontal_overflow(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width} px wide in a {width} px viewport"


def assert_within_width(page: Page, locator: Locator, count: int) -> None:
    """``count`` elements, each visible and horizontally inside the viewport."""
    expect(locator).to_have_count(count, timeout=PAGE)
    width = page.viewport_size["width"] if page.viewport_size else 0
    for index in range(count):
        expect(locator.nth(index)).to_be_visible()
    edges = locator.evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"
    )
    for left, right in edges:
        assert left >= 0 and right <= width + 0.5, (left, right, width)


def assert_reachable(page: Page, locator: Locator) -> None:
    """Scrolled to, it lies inside the viewport and nothing covers it (a trial click)."""
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    size = page.viewport_size
    assert box is not None and size is not None
    assert box["x"] >= 0 and box["x"] + box["width"] <= size["width"] + 0.5, box
    assert box["y"] >= 0 and box["y"] + box["height"] <= size["height"] + 0.5, box
    locator.click(trial=True, timeout=PAGE)


def test_table_and_lobby_fit_phone_and_desktop(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    base = live_platform.url
    phone = Player("phone_player", new_page(viewport=PHONE))
    desktop = Player("desktop_player", new_page(viewport=DESKTOP))
    for player in (phone, desktop):
        sign_up(player, base)
        open_lobby(player, base)
        assert_no_horizontal_overflow(player.page)
        shot(player.page, f"lobby-{player.name}")

    room = open_room(desktop, name="Layout table", rules=RULES, seats=2)
    # On the phone each room is a card (lobby.css): its Join button is on screen.
    join = phone.page.locator(f"#lobby-rooms tr[data-room='{room.pk}'] .join-form button")
    expect(join).to_be_visible(timeout=PAGE)
    assert_reachable(phone.page, join)
    assert_no_horizontal_overflow(phone.page)
    shot(phone.page, "lobby-room-listed-phone")
    join_from_list(phone, room)
    for player in (phone, desktop):
        assert_no_horizontal_overflow(player.page)
        press_ready(player)

    config = round_config(room)
    hands = {}
    for player in (phone, desktop):
        hands[player.name] = wait_for_hand(player)
        answer_special(player)
        assert_within_width(player.page, player.page.locator("[data-testid=hand] [data-card]"), 13)
        for row in ROWS:
            expect(player.testid(f"row-{row}")).to_be_visible()
            assert_within_width(player.page, player.testid(f"row-{row}"), 1)
        assert_no_horizontal_overflow(player.page)
        shot(player.page, f"dealt-{player.name}")

    # On the phone: tap the cards and the rows (and drag one), then Submit.
    place(phone, best_rows(hands[phone.name], config), drag=1)
    for row in ROWS:
        cards = phone.page.locator(f"[data-testid=row-{row}] [data-card]")
        assert_within_width(phone.page, cards, 3 if row == "front" else 5)
    assert_no_horizontal_overflow(phone.page)
    assert_reachable(phone.page, phone.testid("submit-button"))
    shot(phone.page, "arranged-phone")
    submit(phone)

    apply_best_suggestion(desktop)
    assert_reachable(desktop.page, desktop.testid("submit-button"))
    submit(desktop)
    check_settlement([phone, desktop], room)
    for player in (phone, desktop):
        assert_no_horizontal_overflow(player.page)
        shot(player.page, f"settlement-{player.name}")
    assert_within_width(desktop.page, desktop.testid("settlement-delta"), 2)

    # The settlement's columns fit the phone's width (the Total column once overflowed).
    width = PHONE["width"]
    rights = phone.testid("settlement-delta").evaluate_all(
        "els => els.map(e => e.getBoundingClientRect().right)"
    )
    assert max(rights) <= width + 0.5, f"the Total column ends at {max(rights):.0f} px"


def test_table_page_switches_to_chinese(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    player = Player("zh_player", new_page(locale="zh-Hans"))
    sign_up(player, live_platform.url)
    open_lobby(player, live_platform.url)
    switch_language(player.page, "en")
    open_room(player, name="Language table", rules=RULES, seats=2)
    expect(player.testid("ready-button")).to_have_text("Ready")
    expect(player.testid("phase")).to_have_text("Waiting")

    switch_language(player.page, "zh-hans")
    wait_for_table(player)
    # Template strings and the script's (gettext from /jsi18n/).
    expect(player.testid("ready-button")).to_have_text("准备")
    expect(player.testid("submit-button")).to_have_text("出牌")
    expect(player.testid("phase")).to_have_text("等待中")
    expect(player.testid("connection-state")).to_have_text("已连接")
    expect(player.page.locator("#status-line")).to_have_text("点击“准备”开始下一局。")
    shot(player.page, "table-zh")

"""Table chat in Chromium: two players at one table, each in a browser context of
its own. A quick phrase, a reaction and a text float over the sender's seat and go into the
other's chat log — the text as text, never markup; a muted player's messages are not shown;
a room with free text off offers phrases and reactions only. In English and Chinese."""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    Player,
    join_from_list,
    open_lobby,
    open_room,
    sign_up,
    switch_language,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

RULES = "Chat (browser)"
live_platform = module_platform({"RATE_LIMITS": '{"table.chat": "30/5seconds;200/minute"}'})


def open_chat(player: Player) -> None:
    panel = player.testid("chat-panel")
    if not panel.is_visible():
        player.testid("chat-toggle").click()
    expect(panel).to_be_visible(timeout=PAGE)


def log_lines(player: Player) -> list[str]:
    return player.page.locator("[data-testid=chat-line] .chat-what").all_text_contents()


def test_two_players_chat_and_one_mutes_the_other(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    ann = Player("chat-ann", new_page(viewport=DESKTOP))
    ben = Player("chat-ben", new_page(viewport=PHONE, locale="zh-CN"))
    for player in (ann, ben):
        sign_up(player, live_platform.url)
        open_lobby(player, live_platform.url)
    switch_language(ben.page, "zh-hans")
    room = open_room(ann, name="Chatty", rules=RULES, seats=2)
    join_from_list(ben, room)
    expect(ann.page.locator("[data-testid=seat]")).to_have_count(2, timeout=PAGE)

    open_chat(ann)
    ann.testid("chat-phrase-hurry").click()
    bubble = ben.page.locator("[data-testid=chat-bubble]")
    expect(bubble).to_have_text("快点吧", timeout=PAGE)  # ben reads Chinese
    expect(ben.testid("chat-unread")).to_have_text("1")
    ann.testid("chat-reaction-clap").click()
    expect(bubble).to_have_text("👏", timeout=PAGE)
    shot(ben.page, "bubble-zh-phone")

    ann.testid("chat-input").fill('<img src=x onerror="alert(1)"> gg')
    ann.testid("chat-send").click()
    open_chat(ben)
    expect(ben.page.locator("[data-testid=chat-line]")).to_have_count(3, timeout=PAGE)
    assert log_lines(ben) == ["快点吧", "👏", '<img src=x onerror="alert(1)"> gg']
    assert ben.page.locator("[data-testid=chat-log] img").count() == 0  # text, not markup
    expect(ben.testid("chat-unread")).to_be_hidden()
    expect(ann.page.locator("[data-testid=chat-line]")).to_have_count(3, timeout=PAGE)
    shot(ben.page, "chat-panel-zh-phone")

    # Ben answers; then mutes Ann: her next message does not reach his screen.
    ben.testid("chat-phrase-thanks").click()
    expect(ann.page.locator("[data-testid=chat-line] .chat-what").last).to_have_text(
        "Thanks", timeout=PAGE
    )
    ben.testid("chat-mute").check()
    ann.testid("chat-phrase-bye").click()
    expect(ann.page.locator("[data-testid=chat-line]")).to_have_count(5, timeout=PAGE)
    ben.page.wait_for_timeout(1000)
    assert log_lines(ben) == ["快点吧", "👏", '<img src=x onerror="alert(1)"> gg', "谢谢"]
    # … and the mute survives a reload.
    ben.page.reload()
    open_chat(ben)
    expect(ben.testid("chat-mute")).to_be_checked(timeout=PAGE)
    shot(ann.page, "chat-panel-en")


def test_a_room_without_free_text_offers_phrases_and_reactions_only(
    live_platform: LivePlatform, new_page: NewPage
) -> None:
    fast_rules(name=RULES, **PACING)
    cat = Player("chat-cat", new_page(viewport=DESKTOP))
    sign_up(cat, live_platform.url)
    open_lobby(cat, live_platform.url)
    form = cat.page.locator("form[data-action='room.create']")
    form.locator("input[name=chat_text]").set_checked(False)
    room = open_room(cat, name="Quiet", rules=RULES, seats=2)
    assert room.chat_text is False
    open_chat(cat)
    expect(cat.testid("chat-form")).to_be_hidden()
    expect(cat.testid("chat-text-off")).to_be_visible()
    cat.testid("chat-phrase-hello").click()
    expect(cat.page.locator("[data-testid=chat-line]")).to_have_count(1, timeout=PAGE)


def test_a_text_that_shows_nothing_or_stacks_marks_is_refused_in_the_readers_language(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    dan = Player("chat-dan", new_page(viewport=DESKTOP))
    sign_up(dan, live_platform.url)
    open_lobby(dan, live_platform.url)
    open_room(dan, name="Blank", rules=RULES, seats=2)
    open_chat(dan)
    toast = dan.page.locator("#toast")

    dan.testid("chat-input").fill("\u3164 \u2800\u3164")  # Hangul fillers, blank Braille
    dan.testid("chat-send").click()
    expect(toast).to_have_text("This message shows nothing: write something visible.", timeout=PAGE)
    shot(dan.page, "invisible-refused")

    switch_language(dan.page, "zh-hans")
    open_chat(dan)
    dan.testid("chat-input").fill("z" + "\u0301" * 12)
    dan.testid("chat-send").click()
    expect(toast).to_have_text("一个字符最多只能带 4 个附加符号。", timeout=PAGE)
    dan.testid("chat-input").fill("gg")
    dan.testid("chat-send").click()
    expect(dan.page.locator("[data-testid=chat-line]")).to_have_count(1, timeout=PAGE)
    assert log_lines(dan) == ["gg"]  # neither refused text was sent

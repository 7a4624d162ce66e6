"""Bot levels in the lobby, in Chromium: the "Open a room" form asks the level only
when bots are chosen (static/lobby/create.js) and opens the room at it; a room's row shows how
its bots play, live (static/lobby/lobby.js) and as the server draws it, in English and Chinese."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect
from rest_framework.authtoken.models import Token

from lobby.models import Room
from tests.browser.conftest import NewPage, Shot
from tests.browser.test_lobby_pages_browser import api, expect_rows
from tests.games.table_helpers import default_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

PAGE = 15_000
NAMES = {"en": "Expert bots", "zh-hans": "大师机器人"}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_lobby_shows_and_asks_the_bot_level(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot, language: str
) -> None:
    default_rules()
    viewer, opener = make_player(f"viewer-{language}"), make_player(f"opener-{language}")
    token = Token.objects.create(user=opener).key
    page = new_page(locale="zh-CN" if language == "zh-hans" else "en")
    cookies = {**session_cookie_for(viewer), "django_language": language}
    page.context.add_cookies(
        [{"name": k, "value": v, "url": live_platform.url} for k, v in cookies.items()]
    )
    page.goto(f"{live_platform.url}/lobby/")
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)

    # A room of expert bots opened elsewhere appears, live, with its level.
    created = api(
        live_platform,
        token,
        "/api/lobby/rooms/",
        {"name": "Sharks", "base_score": 10, "seats": 4, "bots": 2, "bot_level": "expert"},
    )
    expect_rows(page, [created["id"]])
    badge = page.locator(f'#lobby-rooms tr[data-room="{created["id"]}"] [data-testid=bot-level]')
    expect(badge).to_have_text(NAMES[language])
    expect(badge).to_be_visible()
    # … and as the server draws the page.
    page.reload()
    expect(badge).to_have_text(NAMES[language], timeout=PAGE)

    # The form asks the level only with bots, and opens the room at the level chosen.
    form = page.locator("form[data-room-create]")
    level = form.locator("[data-bot-level]")
    expect(level).to_be_hidden()
    form.locator("select[name=bots]").select_option("2")
    expect(level).to_be_visible()
    form.locator("select[name=bot_level]").select_option("easy")
    shot(page, "create-form-bot-level")
    form.locator("button[type=submit]").click()
    expect(page).to_have_url(re.compile(r"/games/table/\d+/$"), timeout=PAGE)
    room = Room.objects.get(pk=int(re.findall(r"/table/(\d+)/", page.url)[0]))
    assert room.bot_level == "easy" and room.owner == viewer

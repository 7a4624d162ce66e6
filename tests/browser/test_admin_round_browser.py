# ruff: noqa: F811  (the fixtures imported from test_table_services are used as arguments)
"""The round audit page of the admin in Chromium: it fits a 1280 px wide window.

A four-player round (long usernames, a bot with its nickname) is settled through the table
services, then a staff member opens its page at 1280x800, in English and in Chinese: the
document is no wider than the window (no horizontal scrolling), the pair and transfer tables
name the players, and the page links the favicon, which is served.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from accounts.models import User
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot
from tests.games.live.test_table_services import World, world  # noqa: F401  (fixture)
from tests.games.played_rounds import make_bot, play_round
from tests.live_server import session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

NAMES = [
    "alexandra_the_long_named",
    "bartholomew_plays_nights",
    "constantinople_cardshark",
    "bot-ee37f740",
]


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_round_page_fits_1280_pixels(
    world: World,
    live_server: object,
    admin_user: User,
    new_page: NewPage,
    shot: Shot,
    language: str,
) -> None:
    round_ = play_round(world, NAMES)
    bot = make_bot(User.objects.get(username="bot-ee37f740"), zh="金龙", en="Dragon")
    url = f"{live_server.url}/admin/games/round/{round_.pk}/change/"  # type: ignore[attr-defined]
    cookies = [
        {"name": k, "value": v, "url": live_server.url}  # type: ignore[attr-defined]
        for k, v in {**session_cookie_for(admin_user), "django_language": language}.items()
    ]

    page = new_page(viewport=DESKTOP, locale=language)
    page.context.add_cookies(cookies)
    page.goto(url)
    expect(page.locator("#pairs")).to_be_visible()

    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= DESKTOP["width"], f"the round page is {width} px wide"
    pairs = page.locator("#pairs tbody").inner_text()
    nickname = "金龙" if language == "zh-hans" else "Dragon"
    assert NAMES[0] in pairs and f"{nickname} ({bot.username})" in pairs
    transfers = page.locator("#transfers").inner_text()
    assert "→" in transfers and any(name in transfers for name in NAMES[:3])
    for user_id in User.objects.filter(username__in=NAMES).values_list("pk", flat=True):
        assert f"{user_id} → " not in transfers
    shot(page, f"round-{language}-1280")

    icon = page.locator("link[rel=icon]")
    href = icon.get_attribute("href")
    assert href and href.endswith(".svg")
    favicon = page.request.get(f"{live_server.url}{href}")  # type: ignore[attr-defined]
    assert favicon.ok and "<svg" in favicon.text()

    phone = new_page(viewport=PHONE, locale=language)
    phone.context.add_cookies(cookies)
    phone.goto(url)
    expect(phone.locator("#pairs")).to_be_visible()
    shot(phone, f"round-{language}-phone")

"""The front page and the lobby for a newcomer, in Chromium at 1280×800 and 390×844.

A visitor signs up on the way to Play now and lands at a table with bots; back in
the lobby a banner leads to that table, and goes away live when the player leaves; on a phone
every Join button of the room list is on screen; the table's "why you are back" (?left=) is
said in English and in Chinese, once.
"""

from __future__ import annotations

import json
import re
import urllib.request
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from rest_framework.authtoken.models import Token

from accounts.models import User
from games.labels import data_name
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from lobby.models import Room, Seat
from lobby.services import room_create
from tests.browser.conftest import PHONE, NewPage, Shot
from tests.browser.table_flow import PACING, PAGE, PASSWORD, SERVER
from tests.browser.test_table_layout_browser import assert_no_horizontal_overflow, assert_reachable
from tests.games.table_helpers import make_player
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)


def patient_default_rules() -> RuleConfiguration:
    """The default rules (Play now's) with the browser tests' long clocks: no Ready deadline
    sends the player away while the test looks at the lobby."""
    existing = RuleConfiguration.objects.filter(is_default=True).first()
    if existing is not None:
        return existing
    config = RuleConfig.from_dict(PACING, base=DEFAULT_CONFIG)
    return RuleConfiguration.from_engine(config, name="Standard 标准", is_default=True)


def log_in(page: Page, platform: LivePlatform, user: User) -> None:
    page.context.add_cookies(
        [{"name": k, "value": v, "url": platform.url} for k, v in session_cookie_for(user).items()]
    )


def api(platform: LivePlatform, user: User, path: str) -> Any:
    token, _ = Token.objects.get_or_create(user=user)
    request = urllib.request.Request(
        f"{platform.url}{path}",
        data=b"{}",
        headers={"Authorization": f"Token {token.key}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def assert_inside_viewport(page: Page, selector: str) -> int:
    """Every visible element matching ``selector`` lies horizontally inside the viewport;
    returns how many there are."""
    width = page.viewport_size["width"] if page.viewport_size else 0
    boxes = page.locator(selector).evaluate_all(
        "els => els.filter(e => e.offsetParent !== null)"
        ".map(e => { const r = e.getBoundingClientRect(); return [r.left, r.right]; })"
    )
    for left, right in boxes:
        assert left >= 0 and right <= width + 0.5, (selector, left, right, width)
    return len(boxes)


def test_a_newcomer_plays_now_and_the_lobby_leads_back_to_the_table(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    patient_default_rules()
    base = live_platform.url

    # The front page, on a phone: what the game is, and Play now on screen.
    phone = new_page(viewport=PHONE)
    phone.goto(f"{base}/")
    phone_play = phone.get_by_test_id("home-play-now")
    expect(phone_play).to_have_text("Play now against bots")
    assert_reachable(phone, phone_play)
    phone.evaluate("window.scrollTo(0, 0)")
    assert_no_horizontal_overflow(phone)
    assert assert_inside_viewport(phone, ".home-hand .pcard") == 13  # the rows 3/5/5
    shot(phone, "home-phone")

    # On a desktop: Play now → sign up → a table with bots.
    page = new_page()
    page.goto(f"{base}/")
    expect(page.locator("h1")).to_contain_text("Shisanshui")
    expect(page.locator(".home-hand .hand-row")).to_have_count(3)
    assert "under construction" not in page.content()
    assert_no_horizontal_overflow(page)
    shot(page, "home-desktop")
    # (The front page's Play now makes a visitor a guest: test_guest_play_browser. Here the
    # visitor signs up first, from the log-in page, which keeps ?next=/lobby/play/.)
    page.goto(f"{base}/accounts/login/?next=/lobby/play/")
    page.get_by_role("link", name="Create an account").click()
    page.wait_for_url(re.compile(r"/accounts/signup/\?next=/lobby/play/$"), timeout=PAGE)
    form = page.locator("form.form")
    form.locator("input[name=username]").fill("newcomer")
    form.locator("input[name=password1]").fill(PASSWORD)
    form.locator("input[name=password2]").fill(PASSWORD)
    form.locator("button[type=submit]").click()

    page.wait_for_url(re.compile(r"/games/table/\d+/$"), timeout=SERVER)
    user = User.objects.get(username="newcomer")
    seat = Seat.objects.select_related("room").get(user=user)
    room = seat.room
    assert page.url == f"{base}/games/table/{room.pk}/"
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 3  # a full table
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=SERVER
    )
    shot(page, "table-with-bots")

    # Back in the lobby while seated: the banner leads to the table.
    page.goto(f"{base}/lobby/")
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)
    banner = page.get_by_test_id("seat-banner")
    expect(banner).to_be_visible()
    # The room's name in the page's language only (stored as the platform gave it).
    expect(banner).to_contain_text(f"You are seated at table “{data_name(room.name)}”")
    expect(banner.get_by_test_id("go-to-table")).to_have_attribute(
        "href", f"/games/table/{room.pk}/"
    )
    expect(page.locator("#play-now")).to_be_hidden()
    shot(page, "lobby-seated-desktop")

    # On a phone, another player sees the room (full: Play now filled it with bots) and can
    # reach every Join.
    host = make_player("host")
    private = room_create(
        owner=host, name="A rather long room name for phones", base_score=10, seats=3, private=True
    )
    log_in(phone, live_platform, make_player("phoner"))
    phone.goto(f"{base}/lobby/")
    expect(phone.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)
    expect(phone.get_by_test_id("play-now")).to_be_visible()
    expect(phone.locator(f"#lobby-rooms tr[data-room='{room.pk}']")).to_have_count(1)
    full = phone.locator(f"#lobby-rooms tr[data-room='{room.pk}'] .join-form button")
    expect(full).to_be_hidden()
    join = phone.locator(f"#lobby-rooms tr[data-room='{private.pk}'] .join-form button")
    expect(join).to_be_visible()
    assert assert_inside_viewport(phone, "#lobby-rooms .join-form button") == 1
    assert assert_inside_viewport(phone, "#lobby-rooms .join-form input.code") == 1
    assert_reachable(phone, join)
    phone.evaluate("window.scrollTo(0, 0)")
    assert_no_horizontal_overflow(phone)
    shot(phone, "lobby-phone")

    # The player leaves (another tab, the API): live, the banner goes and Play now is back;
    # the room its bots left empty closes and leaves the phone's list.
    api(live_platform, user, "/api/lobby/leave/")
    expect(banner).to_be_hidden(timeout=PAGE)
    expect(page.locator("#play-now")).to_be_visible()
    expect(phone.locator(f"#lobby-rooms tr[data-room='{room.pk}']")).to_have_count(0, timeout=PAGE)
    room.refresh_from_db()
    assert room.status == "closed"
    shot(page, "lobby-left-desktop")


@pytest.mark.parametrize(
    ("locale", "lang", "message"),
    [
        ("en-US", "en", "You did not press Ready in time"),
        ("zh-CN", "zh-hans", "你没有及时按“准备”"),
    ],
)
def test_the_lobby_says_why_the_table_sent_the_player_back(
    live_platform: LivePlatform,
    new_page: NewPage,
    shot: Shot,
    locale: str,
    lang: str,
    message: str,
) -> None:
    patient_default_rules()
    base = live_platform.url
    desktop, phone = new_page(locale=locale), new_page(viewport=PHONE, locale=locale)
    for index, page in enumerate((desktop, phone)):
        log_in(page, live_platform, make_player(f"back{index}"))
        page.goto(f"{base}/lobby/?left=ready_timeout&seats=4")
        expect(page.locator("html")).to_have_attribute("lang", lang)
        notice = page.get_by_test_id("left-message")
        expect(notice).to_be_visible()
        expect(notice).to_contain_text(message)
        expect(page).to_have_url(f"{base}/lobby/?seats=4")  # said once: a reload won't repeat
        assert_inside_viewport(page, "[data-testid=left-message]")
        assert_no_horizontal_overflow(page)
        shot(page, f"left-{lang}-{'desktop' if index == 0 else 'phone'}")

    phone.reload()
    expect(phone.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)
    expect(phone.get_by_test_id("left-message")).to_have_count(0)
    phone.goto(f"{base}/lobby/?left=%3Cb%3Ebogus%3C/b%3E")
    expect(phone.get_by_test_id("left-message")).to_have_count(0)
    assert "bogus" not in phone.locator("[data-lobby]").inner_html()
    assert Room.objects.count() == 0  # nothing here seats anyone

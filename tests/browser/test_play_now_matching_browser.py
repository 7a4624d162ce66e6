"""Play now's wait for people of a similar rating, in Chromium: two players pressing Play now
within the wait sit at one table (bots in the other seats); the waiting page says so in
English and Chinese, and counts down."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from lobby.models import PlayWait, Seat
from tests.browser.conftest import NewPage, Shot
from tests.browser.table_flow import PAGE, SERVER
from tests.browser.test_front_page_browser import log_in, patient_default_rules
from tests.games.table_helpers import make_player
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)


def chinese(page: Page, base: str) -> None:
    page.context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": base}])


def test_two_players_pressing_play_now_within_the_wait_sit_at_one_table(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    patient_default_rules()
    base = live_platform.url
    first, second = make_player("first"), make_player("second")  # both unrated: close
    one = new_page()
    two = new_page(locale="zh-hans")
    log_in(one, live_platform, first)
    log_in(two, live_platform, second)
    chinese(two, base)

    one.goto(f"{base}/lobby/")
    one.get_by_test_id("play-now").first.click()
    waiting = one.get_by_test_id("play-waiting")
    expect(waiting).to_contain_text(re.compile(r"Finding players of your level… \([1-4] s\)"))
    shot(one, "play-now-waiting")
    assert PlayWait.objects.filter(user=first).exists()

    two.goto(f"{base}/lobby/")
    two.get_by_test_id("play-now").first.click()

    two.wait_for_url(re.compile(r"/games/table/\d+/$"), timeout=PAGE)
    one.wait_for_url(re.compile(r"/games/table/\d+/$"), timeout=PAGE)
    assert one.url == two.url
    room = Seat.objects.get(user=first).room
    assert Seat.objects.get(user=second).room == room
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 2  # a full table
    assert not PlayWait.objects.exists()
    expect(one.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=SERVER
    )


def test_alone_the_waiting_page_counts_down_then_seats_with_bots_in_chinese(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    patient_default_rules()
    base = live_platform.url
    player = make_player("alone")
    page = new_page(locale="zh-hans")
    log_in(page, live_platform, player)
    chinese(page, base)

    page.goto(f"{base}/lobby/")
    page.get_by_test_id("play-now").first.click()
    expect(page.get_by_test_id("play-waiting")).to_contain_text("正在寻找水平相近的玩家")
    shot(page, "play-now-waiting-zh")

    page.wait_for_url(re.compile(r"/games/table/\d+/$"), timeout=PAGE)
    room = Seat.objects.get(user=player).room
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 3

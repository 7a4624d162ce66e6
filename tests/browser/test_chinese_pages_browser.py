"""No English left on the Chinese pages (point 10): each page a player sees —
the front page, sign-up and log-in, the lobby, the table, the hand history, the profile (the
replay's: tests/browser/test_replay_browser.py) — is rendered in zh-hans in Chromium and its
visible text scanned for English words. What may stay: names (players', bots' and rooms',
which are data), the brand, the language switch's own "English", and acronyms."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from lobby.models import Room
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot
from tests.browser.test_front_page_browser import log_in, patient_default_rules
from tests.games.table_helpers import make_player
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

WORD = re.compile(r"[A-Za-z]{3,}")
# Acronyms Chinese uses as they are ("API 文档", "UTC").
ALWAYS_ALLOWED = {"Shisanshui", "English", "API", "UTC"}


def english_words(page: Page, allowed: set[str]) -> set[str]:
    text = page.evaluate("document.body.innerText")
    return set(WORD.findall(text)) - ALWAYS_ALLOWED - allowed


def names_of(*things: str) -> set[str]:
    return {word for thing in things for word in WORD.findall(thing)}


def chinese(page: Page, platform: LivePlatform) -> None:
    page.context.add_cookies([{"name": "django_language", "value": "zh-hans", "url": platform.url}])


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_chinese_pages_have_no_english_left(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot, viewport: dict[str, int]
) -> None:
    patient_default_rules()
    visitor = new_page(viewport=viewport, locale="zh-CN")
    chinese(visitor, live_platform)
    for path in ("/", "/accounts/signup/", "/accounts/login/"):
        visitor.goto(f"{live_platform.url}{path}")
        expect(visitor.locator("html")).to_have_attribute("lang", "zh-hans")
        assert english_words(visitor, set()) == set(), path

    player: User = make_player("xiaoming")
    page = new_page(viewport=viewport, locale="zh-CN")
    chinese(page, live_platform)
    log_in(page, live_platform, player)
    room: Room = room_create(owner=player, base_score=100, seats=4, bots=3)
    people = names_of(
        player.username,
        room.name,
        *(seat.user.display_name() for seat in room.taken_seats.select_related("user")),
        *(r.name for r in type(room.rules).objects.all()),
    )
    for path in (
        "/",
        "/lobby/",
        f"/games/table/{room.pk}/",
        "/games/history/",
        "/accounts/profile/",
        "/lobby/create-match/",
        "/games/standings/",
        f"/games/players/{player.username}/",
    ):
        page.goto(f"{live_platform.url}{path}")
        expect(page.locator("html")).to_have_attribute("lang", "zh-hans")
        page.wait_for_load_state("networkidle")
        found = english_words(page, people)
        assert found == set(), f"{path}: {sorted(found)}"
        shot(page, path.strip("/").replace("/", "-") or "home")

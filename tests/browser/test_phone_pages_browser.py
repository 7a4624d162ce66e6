"""Every page of the site at 390×844 in Chromium, on the live platform, with real data behind
it: a player plays a duplicate match's deal and a series round (so the match results, the
series scoreboard, the replay with its review, the history and the standings have rows), then
each page — signed in, signed out, in English and in Chinese — is no wider than the phone and
its header is one line with a menu. And the table's rules chip: the variant and a one-line
summary in the header, which opens the rules."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import pytest
from django.core.management import call_command
from playwright.sync_api import Page, expect

from games.models import DuplicateMatch, MatchStatus, Round, RuleConfiguration
from games.rules.presets import preset_config
from lobby.models import Room
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    Player,
    open_bot_room,
    open_lobby,
    open_site_menu,
    page_deltas,
    play_hand,
    press_ready,
    sign_up,
    wait_for_table,
)
from tests.games.table_helpers import fast_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

T = TypeVar("T")
RULES = "Phone pages (browser)"
# The one-line header: about one row of touch targets.
HEADER_MAX_PX = 56
# Bots act at a tenth of their delays; one round is enough to be ranked.
live_platform = module_platform(
    {"BOT_DELAY_SCALE": "0.1", "STANDINGS_MIN_ROUNDS_WEEK": "1", "STANDINGS_MIN_ROUNDS_ALL": "1"}
)


def apart(make: Callable[[], T]) -> T:
    """``make()`` in a thread of its own: the services notify on commit through async_to_sync,
    which refuses the thread where Playwright's event loop runs."""
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(make).result()


def log_in(page: Page, url: str, user: Any, language: str) -> None:
    cookies = {**session_cookie_for(user), "django_language": language}
    page.context.add_cookies([{"name": k, "value": v, "url": url} for k, v in cookies.items()])


def fits(page: Page, url: str, *, header: bool = True) -> dict[str, int]:
    """Open ``url``: the page is no wider than the viewport and (``header``) the site header
    is one line."""
    response = page.goto(url)
    assert response is not None and response.ok, f"{url}: {response and response.status}"
    page.wait_for_load_state("load")
    size: dict[str, int] = page.evaluate(
        """() => ({
            scroll: document.documentElement.scrollWidth,
            inner: window.innerWidth,
            header: (document.querySelector('.site-header') || {offsetHeight: -1}).offsetHeight,
        })"""
    )
    assert size["scroll"] <= size["inner"], f"{url} is {size['scroll']} px wide at {size['inner']}"
    if header:
        assert 0 < size["header"] <= HEADER_MAX_PX, f"{url}: header {size['header']} px high"
    return size


def play_a_match_deal(ann: Player, base_url: str) -> DuplicateMatch:
    """Ann opens a match of 2 tables of 2 with bots, 1 deal, and plays it."""
    open_lobby(ann, base_url)
    ann.testid("open-match-page").click()
    ann.page.wait_for_url("**/lobby/create-match/", timeout=PAGE)
    form = ann.page.locator("form[data-match-create]")
    form.locator("input[name=name]").fill("Phone duplicate")
    form.locator("select[name=rules]").select_option(
        str(RuleConfiguration.objects.get(name=RULES).pk)
    )
    form.locator("input[name=base_score]").fill("10")
    form.locator("select[name=tables]").select_option("2")
    form.locator("select[name=seats]").select_option("2")
    form.locator("input[name=deals]").fill("1")
    form.locator("input[name=bots]").set_checked(True)
    form.locator("button[type=submit]").click()
    wait_for_table(ann)
    match = DuplicateMatch.objects.get(owner=ann.user)
    one = match.rooms.order_by("match_table").first()
    assert one is not None
    press_ready(ann)
    play_hand(ann, one)
    page_deltas(ann)
    wait_until(
        "the match to finish",
        lambda: DuplicateMatch.objects.filter(pk=match.pk, status=MatchStatus.FINISHED).exists(),
        seconds=60,
    )
    return match


def test_every_page_fits_a_phone_with_a_one_line_header(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    url = live_platform.url
    fast_rules(name=RULES, **PACING)
    ann = Player("phone-ann", new_page(viewport=DESKTOP))
    sign_up(ann, url)
    match = play_a_match_deal(ann, url)
    open_lobby(ann, url)
    banner = ann.testid("seat-banner")
    if banner.is_visible():  # still seated at the finished match's table: leave it
        banner.locator("button[type=submit]").click()
        expect(banner).to_be_hidden(timeout=PAGE)
    room = open_bot_room(ann, name="Ann's series", rules=RULES, private=True, series_rounds=4)
    press_ready(ann)
    play_hand(ann, room)
    page_deltas(ann)
    round_ = wait_until(
        "the series round to be settled",
        lambda: Round.objects.filter(table__room=room, settled_at__isnull=False).first(),
        seconds=60,
    )
    call_command("compute_standings", "--full")
    # A public room someone else sits in, to watch.
    bob = make_player("phone-bob")
    watched = apart(
        lambda: room_create(owner=bob, name="Bob's table", base_score=10, seats=2, rules=room.rules)
    )
    assert Room.objects.get(pk=watched.pk).allow_spectators

    signed_in = [
        "/",
        "/accounts/profile/",
        "/accounts/password/",
        "/lobby/",
        "/lobby/play/",
        "/lobby/create-match/",
        f"/games/table/{room.pk}/",
        f"/games/table/{watched.pk}/watch/",
        f"/games/rounds/{round_.pk}/replay/",
        "/games/history/",
        "/games/standings/",
        "/games/standings/?period=all",
        f"/games/players/{ann.name}/",
        f"/games/series/{room.series_token}/",
        f"/games/matches/{match.pk}/",
    ]
    signed_out = [
        "/",
        "/accounts/login/",
        "/accounts/signup/",
        f"/games/series/{room.series_token}/",
    ]
    no_site_header = ["/api/docs/", "/admin/login/"]  # Swagger's and the admin's own pages

    for language, locale in (("en", "en"), ("zh-hans", "zh-CN")):
        page = new_page(viewport=PHONE, locale=locale)
        log_in(page, url, ann.user, language)
        for path in signed_in:
            fits(page, url + path)
        # The review on the replay page, opened: still no wider than the phone.
        page.goto(f"{url}/games/rounds/{round_.pk}/replay/")
        review = page.get_by_test_id("review-button")
        if review.count():
            review.first.click()
            expect(page.get_by_test_id("review-box")).to_be_visible(timeout=PAGE)
            assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
        shot(page, f"replay-{language}")
        # The header's menu holds the links, one line closed.
        fits(page, f"{url}/games/standings/")
        open_site_menu(page)
        expect(page.locator(".site-header a[data-nav=standings]")).to_be_visible()
        expect(page.locator(".site-header form.language")).to_be_visible()
        shot(page, f"menu-open-{language}")
        page.keyboard.press("Escape")
        expect(page.locator("#site-menu")).to_be_hidden()
        fits(page, f"{url}/games/matches/{match.pk}/")
        shot(page, f"match-{language}")
        fits(page, f"{url}/games/series/{room.series_token}/")
        shot(page, f"series-{language}")

        visitor = new_page(viewport=PHONE, locale=locale)
        visitor.context.add_cookies([{"name": "django_language", "value": language, "url": url}])
        for path in signed_out:
            fits(visitor, url + path)
        for path in no_site_header:
            fits(visitor, url + path, header=False)


def fuzhou_rules() -> RuleConfiguration:
    existing = RuleConfiguration.objects.filter(preset="fuzhou").first()
    return existing or RuleConfiguration.from_engine(preset_config("fuzhou"), name="福州 Fuzhou")


@pytest.mark.parametrize(
    ("viewport", "language", "locale"),
    [(DESKTOP, "en", "en"), (PHONE, "zh-hans", "zh-CN")],
    ids=["desktop-en", "phone-zh"],
)
def test_the_rules_chip_names_the_variant_and_opens_the_rules(
    live_platform: LivePlatform,
    new_page: NewPage,
    shot: Shot,
    viewport: dict[str, int],
    language: str,
    locale: str,
) -> None:
    cho = make_player(f"chip-cho-{language}")
    rules = fuzhou_rules()
    room = apart(
        lambda: room_create(owner=cho, name="Cho's table", base_score=100, seats=4, rules=rules)
    )
    page = new_page(viewport=viewport, locale=locale)
    log_in(page, live_platform.url, cho, language)
    page.goto(f"{live_platform.url}/games/table/{room.pk}/")
    chinese = language == "zh-hans"

    summary = page.get_by_test_id("rules-summary")
    expect(summary).to_be_visible()
    expect(summary).to_have_text(
        "福州 · 52张 · 打枪×2" if chinese else "Fuzhou · 52 cards · gun ×2"
    )
    sheet = page.get_by_test_id("rules-sheet")
    expect(sheet).to_be_hidden()

    summary.click()
    expect(sheet).to_be_visible()
    box = sheet.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    deck = sheet.locator("[data-key=deck] dd")
    expect(deck).to_contain_text("52 张牌" if chinese else "52 cards")
    expect(deck).to_contain_text("最多 4 人" if chinese else "up to 4 players")
    expect(sheet.locator("[data-key=gun] dd")).to_contain_text("翻倍" if chinese else "doubles")
    expect(sheet.locator("[data-key=escape] dd")).to_contain_text("500")
    expect(sheet.locator("[data-key=arrange] dd")).to_have_text("30 秒" if chinese else "30 s")
    specials = sheet.locator(".rules-specials li")
    expect(specials).to_have_count(5)
    expect(specials.first).to_contain_text("至尊清龙" if chinese else "Supreme dragon")
    expect(specials.first).to_contain_text("108")
    if chinese:
        assert "Gun" not in sheet.inner_text() and "water" not in sheet.inner_text()
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"]
    shot(page, f"rules-sheet-{language}")

    page.keyboard.press("Escape")
    expect(sheet).to_be_hidden()
    summary.click()
    expect(sheet).to_be_visible()
    page.mouse.click(5, viewport["height"] - 5)  # a tap outside closes it
    expect(sheet).to_be_hidden()

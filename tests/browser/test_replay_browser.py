"""The replay page in Chromium: a settled round drawn as the table, stepped through.

A four-player round with chosen hands is settled through the table services
(tests/games/replay_helpers.py: alice guns bob and runs over dave, dave guns bob, carol plays
six pairs). Alice finds it from the header's History link and its row's Replay link, then
steps through it at 1280x800 in English and at 390x844 in Chinese: the hands are card elements
(never JSON text), the step indicator and the track follow previous / next, the arrow keys,
Home / End and play, the compared row is highlighted with its water, guns and run-overs are
named, the settlement shows each player's coins — and the page never scrolls sideways.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot
from tests.games.replay_helpers import GUNS_AND_SPECIAL, HOME_RUN, play_rigged_round, positions
from tests.live_server import session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

PAGE = 15_000
STEPS = 8  # deal, arrange, front, middle, back, guns, specials, settlement

TEXT = {
    "en": {
        "history": "History",
        "replay": "Replay",
        "first": "Step 1 of 8 · Deal",
        "last": "Step 8 of 8 · Settlement",
        "front": "Front row 前墩",
        "run_over": "runs over",
        "gun": "shoots",
        "special": "Six pairs",
        "pause": "Pause",
    },
    "zh-hans": {
        "history": "牌局记录",
        "replay": "回放",
        "first": "第 1 / 8 步 · 发牌",
        "last": "第 8 / 8 步 · 结算",
        "front": "前墩",
        "run_over": "辗过",
        "gun": "打枪",
        "special": "六对半",
        "pause": "暂停",
    },
}


def assert_no_horizontal_overflow(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width} px wide in a {width} px viewport"


def assert_cards_inside(page: Page, count: int) -> None:
    """``count`` cards drawn as card elements (rank and suit), every one inside the window."""
    cards = page.locator("#replay-seats .card[data-card]")
    expect(cards).to_have_count(count, timeout=PAGE)
    width = page.viewport_size["width"] if page.viewport_size else 0
    boxes: list[dict[str, Any]] = cards.evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {left: r.left, right: r.right, width: r.width, rank: e.querySelector('.rank')"
        " && e.querySelector('.rank').textContent}; })"
    )
    for box in boxes:
        assert box["width"] > 20 and box["rank"], box
        assert box["left"] >= 0 and box["right"] <= width, box


def watch_errors(page: Page) -> list[str]:
    """Script errors and Content-Security-Policy complaints of the page, as they come."""
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(f"script error: {error}"))

    def console(message: Any) -> None:
        if message.type == "error" and "content security policy" in message.text.lower():
            errors.append(message.text)

    page.on("console", console)
    return errors


def at_step(page: Page, n: int, kind: str) -> None:
    indicator = page.get_by_test_id("replay-step")
    expect(indicator).to_have_attribute("data-step", str(n), timeout=PAGE)
    expect(indicator).to_have_attribute("data-kind", kind)
    expect(page.locator("#replay-track [aria-current=step]")).to_have_count(1)
    current = page.locator("#replay-track button").nth(n - 1)
    expect(current).to_have_attribute("aria-current", "step")


@pytest.mark.parametrize(
    ("viewport", "language"),
    [(DESKTOP, "en"), (PHONE, "zh-hans")],
    ids=["desktop-en", "phone-zh"],
)
def test_a_replay_steps_through_the_round_drawn_as_the_table(
    monkeypatch: pytest.MonkeyPatch,
    live_server: Any,
    new_page: NewPage,
    shot: Shot,
    viewport: dict[str, int],
    language: str,
) -> None:
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL, room_name="Replay table")
    seat = positions(round_)
    text = TEXT[language]
    page = new_page(viewport=viewport, locale=language)
    errors = watch_errors(page)
    cookies = {**session_cookie_for(users["alice"]), "django_language": language}
    page.context.add_cookies(
        [{"name": k, "value": v, "url": live_server.url} for k, v in cookies.items()]
    )

    # The header links the hand history; its row links the replay.
    page.goto(f"{live_server.url}/accounts/profile/")
    page.locator(".site-header a[data-nav=history]").click()
    page.wait_for_url("**/games/history/", timeout=PAGE)
    expect(page.locator(".site-header a[data-nav=history]")).to_have_text(text["history"])
    assert_no_horizontal_overflow(page)
    shot(page, "history")
    page.locator(f"#hand-history tr[data-round='{round_.pk}'] a").click()
    page.wait_for_url(f"**/games/rounds/{round_.pk}/replay/", timeout=PAGE)

    # The deal: every player's 13 cards, drawn as cards, not a JSON dump.
    indicator = page.get_by_test_id("replay-step")
    expect(indicator).to_have_text(text["first"], timeout=PAGE)
    at_step(page, 1, "deal")
    expect(page.get_by_test_id("replay-seat")).to_have_count(4)
    assert_cards_inside(page, 52)
    body = page.locator("main").inner_text()
    assert '"front"' not in body and "{" not in body and "[" not in body
    expect(page.get_by_test_id("replay-prev")).to_be_disabled()
    me = page.locator("[data-testid=replay-seat][data-me=true]")
    expect(me).to_have_attribute("data-position", str(seat["alice"]))
    assert_no_horizontal_overflow(page)
    shot(page, "deal")

    # The arrangements: three rows of 3, 5 and 5 cards; carol's special hand.
    page.get_by_test_id("replay-next").click()
    at_step(page, 2, "arrange")
    for name in ("alice", "bob", "dave"):
        box = page.locator(f"[data-testid=replay-seat][data-position='{seat[name]}']")
        for row, count in (("front", 3), ("middle", 5), ("back", 5)):
            expect(box.locator(f".rp-row[data-row={row}] .card[data-card]")).to_have_count(count)
    carol = page.locator(f"[data-testid=replay-seat][data-position='{seat['carol']}']")
    expect(carol.locator(".special-tag")).to_contain_text(text["special"])
    expect(carol.locator(".card[data-card]")).to_have_count(13)
    assert_cards_inside(page, 52)
    assert_no_horizontal_overflow(page)
    shot(page, "arranged")

    # The comparison row by row: the compared row is highlighted and shows its water.
    for n, row in ((3, "front"), (4, "middle"), (5, "back")):
        page.keyboard.press("ArrowRight")
        at_step(page, n, "row")
        expect(page.locator(".rp-row.current")).to_have_count(3)
        expect(page.locator(f".rp-row.current[data-row={row}]")).to_have_count(3)
        expect(page.locator(f".rp-row[data-row={row}] .rp-water")).to_have_count(3)
        assert_no_horizontal_overflow(page)
        if row == "front":
            expect(page.get_by_test_id("replay-title")).to_have_text(text["front"])
            shot(page, "front-row")
    alice = page.locator(f"[data-testid=replay-seat][data-position='{seat['alice']}']")
    waters = alice.locator(".rp-water").all_inner_texts()
    assert waters == ["+1", "+4", "+8"], waters

    # Guns: a gun and a run-over, named.
    page.get_by_test_id("replay-next").click()
    at_step(page, 6, "guns")
    lines = page.get_by_test_id("replay-lines")
    expect(lines).to_contain_text(text["run_over"])
    expect(lines).to_contain_text(text["gun"])
    expect(lines.locator("li")).to_have_count(3)
    expect(alice.locator(".badge.gun")).to_have_count(2)
    assert_no_horizontal_overflow(page)
    shot(page, "guns")

    page.get_by_test_id("replay-next").click()
    at_step(page, 7, "specials")
    expect(lines).to_contain_text(text["special"])

    # The settlement: each player's coins, the pairs, no next step.
    page.get_by_test_id("replay-next").click()
    at_step(page, 8, "settle")
    expect(indicator).to_have_text(text["last"])
    expect(page.get_by_test_id("replay-next")).to_be_disabled()
    deltas = {
        name: page.locator(f"[data-testid=replay-seat][data-position='{seat[name]}']")
        .get_by_test_id("replay-delta")
        .inner_text()
        for name in ("alice", "bob", "carol", "dave")
    }
    assert deltas == {"alice": "+150", "bob": "-200", "carol": "+120", "dave": "-70"}, deltas
    expect(page.get_by_test_id("replay-result-table")).to_be_visible()
    expect(page.get_by_test_id("replay-pair")).to_have_count(6)
    assert_no_horizontal_overflow(page)
    shot(page, "settlement")

    # Keys: left steps back, Home and End jump; play moves on by itself, pause stops it.
    page.keyboard.press("ArrowLeft")
    at_step(page, 7, "specials")
    page.keyboard.press("Home")
    at_step(page, 1, "deal")
    page.keyboard.press("End")
    at_step(page, STEPS, "settle")
    page.keyboard.press("Home")
    play = page.get_by_test_id("replay-play")
    play.click()
    expect(play).to_have_attribute("aria-pressed", "true")
    expect(play).to_contain_text(text["pause"])
    at_step(page, 2, "arrange")
    play.click()
    expect(play).to_have_attribute("aria-pressed", "false")
    page.wait_for_timeout(3_000)
    at_step(page, 2, "arrange")
    assert errors == []


def test_a_home_run_is_named_on_the_replay(
    monkeypatch: pytest.MonkeyPatch, live_server: Any, new_page: NewPage, shot: Shot
) -> None:
    """Three players: alice guns bob and runs over dave, a home run (全垒打, RULES.md §7.2)."""
    round_, users = play_rigged_round(monkeypatch, HOME_RUN, room_name="Home run table")
    seat = positions(round_)
    page = new_page(viewport=DESKTOP)
    errors = watch_errors(page)
    page.context.add_cookies(
        [
            {"name": k, "value": v, "url": live_server.url}
            for k, v in session_cookie_for(users["bob"]).items()
        ]
    )
    page.goto(f"{live_server.url}/games/rounds/{round_.pk}/replay/")
    at_step(page, 1, "deal")
    assert_cards_inside(page, 39)
    page.locator("#replay-track button", has_text="Guns").click()  # the track jumps
    at_step(page, 6, "guns")
    lines = page.get_by_test_id("replay-lines")
    expect(lines.locator("li.home-run")).to_have_text("alice hit a home run (全垒打)!")
    expect(lines.locator("li.gun", has_text="in the home run")).to_have_count(2)
    alice = page.locator(f"[data-testid=replay-seat][data-position='{seat['alice']}']")
    expect(alice).to_have_class(re.compile(r"\bhome-run\b"))
    expect(alice.locator(".badge.home-run")).to_have_count(1)
    bob = page.locator("[data-testid=replay-seat][data-me=true]")
    expect(bob).to_have_attribute("data-position", str(seat["bob"]))
    expect(bob.locator(".badge.shot")).to_have_count(2)
    assert_no_horizontal_overflow(page)
    shot(page, "home-run")
    page.get_by_test_id("replay-next").click()  # no specials: the settlement is next
    at_step(page, 7, "settle")
    expect(page.get_by_test_id("replay-step")).to_have_text("Step 7 of 7 · Settlement")
    expect(page.get_by_test_id("replay-lines")).to_contain_text("home run")
    assert errors == []

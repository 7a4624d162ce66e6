"""The replay page in Chromium: a settled round drawn by the table's own reducer and views.

A four-player round with chosen hands is settled through the table services
(tests/games/replay_helpers.py: alice guns bob and runs over dave, dave guns bob, carol plays
six pairs). Alice finds it from the header's History link and its row's Replay link, then
steps through it at 1280x800 in English and at 390x844 in Chinese: the seats around the felt
as the table draws them (card backs until the reveal), the step indicator and the track follow
previous / next, the arrow keys, Home / End and play, each row is revealed with its water,
guns, run-overs and the special are named in the table's log, the settlement panel shows each
player's coins — and the page never scrolls sideways.

Then a round is played at a real table (a player and a bot, watched by a spectator): the
spectator's final table and the staff replay's last step are the same DOM, and so are the
player's settlement at the table and in the player's replay.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from games.models import Round
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    SERVER,
    Player,
    open_bot_room,
    open_lobby,
    open_site_menu,
    play_hand,
    press_ready,
    sign_up,
)
from tests.games.replay_helpers import GUNS_AND_SPECIAL, HOME_RUN, play_rigged_round, positions
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})

PAGE = 15_000
STEPS = 8  # deal, arrange, front, middle, back, guns, specials, settlement
RULES = "Replay (browser)"

TEXT = {
    "en": {
        "history": "History",
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
        "first": "第 1 / 8 步 · 发牌",
        "last": "第 8 / 8 步 · 结算",
        "front": "前墩",
        "run_over": "辗过",
        "gun": "打枪",
        "special": "六对半",
        "pause": "暂停",
    },
}

# The table's DOM as both pages draw it: what differs between a live table and a replay
# (buttons, timers, whether a seat has pressed Ready since, ids) is taken out.
NORMALISED = """(selectors) => selectors.map((selector) => {
  const node = document.querySelector(selector);
  if (!node) return null;
  const copy = node.cloneNode(true);
  copy.querySelectorAll("button, .timer-bar, .countdown, .badge.ready, .badge.waiting")
    .forEach((n) => n.remove());
  copy.querySelectorAll("[id]").forEach((n) => n.removeAttribute("id"));
  return copy.innerHTML;
})"""
TABLE_PARTS = ["#seats", "#compare-log", "#settlement-body"]


def log_in(page: Page, url: str, user: User, language: str = "en") -> None:
    cookies = {**session_cookie_for(user), "django_language": language}
    page.context.add_cookies([{"name": k, "value": v, "url": url} for k, v in cookies.items()])


def assert_no_horizontal_overflow(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width} px wide in a {width} px viewport"


def assert_seats_inside(page: Page, count: int) -> None:
    """``count`` seats around the felt, every one inside the window."""
    seats = page.locator("#seats [data-testid=seat]")
    expect(seats).to_have_count(count, timeout=PAGE)
    width = page.viewport_size["width"] if page.viewport_size else 0
    boxes: list[dict[str, Any]] = seats.evaluate_all(
        "els => els.map(e => { const r = e.getBoundingClientRect();"
        " return {left: r.left, right: r.right, width: r.width}; })"
    )
    for box in boxes:
        assert box["width"] > 40 and box["left"] >= 0 and box["right"] <= width, box


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


def seat_of(page: Page, position: int) -> Any:
    return page.locator(f"#seats [data-testid=seat][data-position='{position}']")


def faces(page: Page, row: str) -> Any:
    return page.locator(f"#seats .mini-row[data-row={row}] .card[data-card]")


@pytest.mark.parametrize(
    ("viewport", "language"),
    [(DESKTOP, "en"), (PHONE, "zh-hans")],
    ids=["desktop-en", "phone-zh"],
)
def test_a_replay_steps_through_the_round_drawn_as_the_table(
    monkeypatch: pytest.MonkeyPatch,
    live_platform: LivePlatform,
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
    log_in(page, live_platform.url, users["alice"], language)

    # The header links the hand history; its row links the replay.
    page.goto(f"{live_platform.url}/accounts/profile/")
    open_site_menu(page)  # on a phone the header's links are in its menu
    page.locator(".site-header a[data-nav=history]").click()
    page.wait_for_url("**/games/history/", timeout=PAGE)
    expect(page.locator(".site-header a[data-nav=history]")).to_have_text(text["history"])
    assert_no_horizontal_overflow(page)
    shot(page, "history")
    page.locator(f"#hand-history tr[data-round='{round_.pk}'] a").click()
    page.wait_for_url(f"**/games/rounds/{round_.pk}/replay/", timeout=PAGE)

    # The deal: the seats as the table draws them, alice's below, 13 card backs each.
    indicator = page.get_by_test_id("replay-step")
    expect(indicator).to_have_text(text["first"], timeout=PAGE)
    at_step(page, 1, "deal")
    assert_seats_inside(page, 4)
    expect(page.locator("#seats .card.back")).to_have_count(52)
    expect(page.locator("#seats .card[data-card]")).to_have_count(0)
    body = page.locator("main").inner_text()
    assert '"front"' not in body and "{" not in body and "[" not in body
    expect(page.get_by_test_id("replay-prev")).to_be_disabled()
    me = page.locator("#seats [data-testid=seat][data-me=true]")
    expect(me).to_have_attribute("data-position", str(seat["alice"]))
    expect(me).to_have_class(re.compile(r"\bplace-bottom\b"))
    expect(page.get_by_test_id("settlement-panel")).to_be_hidden()
    assert_no_horizontal_overflow(page)
    shot(page, "deal")

    # The arranging: every hand is in (carol's special too), nothing of it shown yet.
    page.get_by_test_id("replay-next").click()
    at_step(page, 2, "arrange")
    expect(page.locator("#seats .badge.done")).to_have_count(4)
    expect(page.locator("#seats .card[data-card]")).to_have_count(0)
    shot(page, "arranged")

    # The comparison row by row: each row's cards revealed with their water.
    for n, row in ((3, "front"), (4, "middle"), (5, "back")):
        page.keyboard.press("ArrowRight")
        at_step(page, n, "row")
        expect(faces(page, row)).to_have_count(3 * (3 if row == "front" else 5))
        expect(page.locator(f"#seats .mini-row[data-row={row}] .water")).to_have_count(3)
        expect(page.locator("#compare-log li.log-row")).to_have_count(n - 2)
        assert_no_horizontal_overflow(page)
        if row == "front":
            expect(page.get_by_test_id("replay-title")).to_have_text(text["front"])
            expect(faces(page, "middle")).to_have_count(0)
            shot(page, "front-row")
    alice = seat_of(page, seat["alice"])
    waters = alice.locator(".mini-row .water").all_inner_texts()
    assert waters == ["+1", "+4", "+8"], waters
    carol = seat_of(page, seat["carol"])
    expect(carol.locator(".card[data-card]")).to_have_count(0)  # a special: after the rows

    # Guns: a gun and a run-over, named in the table's log.
    page.get_by_test_id("replay-next").click()
    at_step(page, 6, "guns")
    guns = page.locator("#compare-log li.log-gun")
    expect(guns).to_have_count(3)
    expect(guns.filter(has_text=text["run_over"])).to_have_count(1)
    expect(guns.filter(has_text=text["gun"])).to_have_count(2)
    assert_no_horizontal_overflow(page)
    shot(page, "guns")

    # The special hand: carol's 13 cards.
    page.get_by_test_id("replay-next").click()
    at_step(page, 7, "specials")
    expect(page.locator("#compare-log li.log-special")).to_contain_text(text["special"])
    expect(carol.locator(".special-tag")).to_contain_text(text["special"])
    expect(carol.locator(".card[data-card]")).to_have_count(13)

    # The settlement: each player's coins, the pairs, no next step.
    page.get_by_test_id("replay-next").click()
    at_step(page, 8, "settle")
    expect(indicator).to_have_text(text["last"])
    expect(page.get_by_test_id("replay-next")).to_be_disabled()
    panel = page.get_by_test_id("settlement-panel")
    expect(panel).to_be_visible()
    deltas = {
        name: panel.locator(
            f"[data-testid=settlement-delta][data-position='{seat[name]}']"
        ).get_attribute("data-delta")
        for name in ("alice", "bob", "carol", "dave")
    }
    assert deltas == {"alice": "150", "bob": "-200", "carol": "120", "dave": "-70"}, deltas
    expect(seat_of(page, seat["bob"]).locator(".seat-delta")).to_have_text("-200")
    expect(panel.locator(".pair")).to_have_count(6)
    expect(panel.locator(".result-table tr.me")).to_have_count(1)
    assert_no_horizontal_overflow(page)
    shot(page, "settlement")

    # Keys: left steps back, Home and End jump; play moves on by itself, pause stops it.
    page.keyboard.press("ArrowLeft")
    at_step(page, 7, "specials")
    expect(panel).to_be_hidden()
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
    monkeypatch: pytest.MonkeyPatch, live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    """Three players: alice guns bob and runs over dave, a home run (全垒打, RULES.md §7.2)."""
    round_, users = play_rigged_round(monkeypatch, HOME_RUN, room_name="Home run table")
    seat = positions(round_)
    page = new_page(viewport=DESKTOP)
    errors = watch_errors(page)
    log_in(page, live_platform.url, users["bob"])
    page.goto(f"{live_platform.url}/games/rounds/{round_.pk}/replay/")
    at_step(page, 1, "deal")
    assert_seats_inside(page, 3)
    page.locator("#replay-track button", has_text="Guns").click()  # the track jumps
    at_step(page, 6, "guns")
    log = page.locator("#compare-log")
    expect(log.locator("li.log-home-run")).to_have_text("alice hits a home run (全垒打)!")
    expect(log.locator("li.log-gun", has_text="home run takes")).to_have_count(2)
    bob = page.locator("#seats [data-testid=seat][data-me=true]")
    expect(bob).to_have_attribute("data-position", str(seat["bob"]))
    # Against alice, head to head, bob lost every row.
    versus = seat_of(page, seat["alice"]).get_by_test_id("versus-total")
    expect(versus).to_contain_text("You vs alice")
    assert_no_horizontal_overflow(page)
    shot(page, "home-run")
    page.get_by_test_id("replay-next").click()  # no specials: the settlement is next
    at_step(page, 7, "settle")
    expect(page.get_by_test_id("replay-step")).to_have_text("Step 7 of 7 · Settlement")
    expect(page.locator("#settlement-body .home-run-line")).to_contain_text("home run")
    assert errors == []


def test_the_replay_of_a_round_is_the_table_that_played_it(
    live_platform: LivePlatform, new_page: NewPage, admin_user: User, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    dan = Player("replay-dan", new_page(viewport=DESKTOP))
    eve = Player("replay-eve", new_page(viewport=DESKTOP))
    for player in (dan, eve):
        sign_up(player, live_platform.url)
        open_lobby(player, live_platform.url)
    room = open_bot_room(dan, name="Replayed table", rules=RULES)

    # Eve watches from before the round: her page gets every event of it, as the replay does.
    eve.page.goto(f"{live_platform.url}/games/table/{room.pk}/watch/")
    expect(eve.testid("connection-state")).to_have_attribute("data-state", "live", timeout=SERVER)
    expect(eve.page.locator("#seats [data-testid=seat]")).to_have_count(2, timeout=PAGE)
    press_ready(dan)
    play_hand(dan, room)
    for player in (dan, eve):
        expect(player.testid("settlement-panel")).to_be_visible(timeout=SERVER)
        expect(player.testid("phase")).to_have_attribute("data-phase", "settled")
    watched = eve.page.evaluate(NORMALISED, TABLE_PARTS)
    (played,) = dan.page.evaluate(NORMALISED, ["#settlement-body"])
    shot(eve.page, "table-watched")
    round_ = Round.objects.get(table__room=room, settled_at__isnull=False)
    assert all(watched) and "data-card" in watched[0] and "settlement-delta" in watched[2]

    # Staff see the round as a spectator saw it: at its last step, the same table.
    staff = new_page(viewport=DESKTOP)
    errors = watch_errors(staff)
    log_in(staff, live_platform.url, admin_user)
    staff.goto(f"{live_platform.url}/games/rounds/{round_.pk}/replay/")
    at_step(staff, 1, "deal")
    staff.keyboard.press("End")
    expect(staff.get_by_test_id("replay-step")).to_have_attribute("data-kind", "settle")
    expect(staff.get_by_test_id("settlement-panel")).to_be_visible()
    replayed = staff.evaluate(NORMALISED, TABLE_PARTS)
    shot(staff, "replayed")
    for part, live, again in zip(TABLE_PARTS, watched, replayed, strict=True):
        assert again == live, part

    # The player's replay is drawn from his seat: the same settlement as at his table.
    own = new_page(viewport=DESKTOP)
    errors += watch_errors(own)
    assert dan.user is not None
    log_in(own, live_platform.url, dan.user)
    own.goto(f"{live_platform.url}/games/rounds/{round_.pk}/replay/")
    at_step(own, 1, "deal")
    own.keyboard.press("End")
    expect(own.get_by_test_id("settlement-panel")).to_be_visible()
    me = own.locator("#seats [data-testid=seat][data-me=true]")
    expect(me).to_have_class(re.compile(r"\bplace-bottom\b"))
    expect(me.locator(".card[data-card]")).to_have_count(13)
    assert own.evaluate(NORMALISED, ["#settlement-body"]) == [played]
    assert errors == []

"""The table as a newcomer meets it, each defect the playtest found as a browser
test: gun, run-over and home-run effects over the whole screen and never under the
settlement; leaving mid-round asks first and names the penalty; "keep playing" presses Ready;
a player sent back to the room list is told why; an old settlement is not shown to someone who
did not play it. The page is the real one; its socket is served by the pure table machine
(tests/browser/mock_table.py), so the hands — and the guns — are the test's choice.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from django.contrib.auth.models import User
from playwright.sync_api import Page, expect

from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table import machine
from lobby.models import Room
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import PAGE, Player, sign_up
from tests.games.table.helpers import arr
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

# Seat 1 (HR_A) guns everyone: a home run; seat 0 guns seats 2 and 3; seat 3 guns seat 2.
HR_A = arr("AS AH 2C", "KS KH KD 3C 3D", "9C TC JC QC KC")
HR_B = arr("QS QH 2D", "JS JH JD 4C 4D", "8S 8H 8D 8C 2S")
HR_C = arr("TS TD 3S", "6S 6H 6D 5C 5D", "9S 9D 9H 7S 7H")
HR_D = arr("QD 5S 4S", "AD AC 7D 7C 6C", "TH 5H 4H 3H 2H")
# Seat 0 wins the middle and the back and ties the front: a run-over (辗过).
RUN_A = arr("AS AH 3S", "KS KH KD 4C 4D", "9C TC JC QC KC")
RUN_B = arr("AD AC 3H", "8S 8H 8D 2H 2S", "JS JH JD 5C 5D")

NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
PACE = {"reveal_interval_ms": 600, "deal_interval_ms": 10, "arrange_seconds": 90}


def config(**overrides: object) -> RuleConfig:
    return RuleConfig.from_dict({**NO_SPECIALS, **PACE, **overrides}, base=DEFAULT_CONFIG)


@dataclass
class Seated:
    player: Player
    room: Room

    @property
    def page(self) -> Page:
        return self.player.page

    @property
    def user(self) -> User:
        assert self.player.user is not None
        return self.player.user


live_platform = module_platform()


@pytest.fixture
def seated(live_platform: LivePlatform, new_page: NewPage) -> Iterator[Seated]:
    """A signed-up player seated (in the database) at a 4-seat room of its own."""
    default_rules()
    player = Player("newcomer", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    assert player.user is not None
    room = room_create(owner=player.user, base_score=100, seats=4, name="Mock table")
    yield Seated(player, room)


def open_table(seated: Seated, base_url: str, table: MockTable) -> None:
    seated.page.goto(f"{base_url}/games/table/{seated.room.pk}/")
    expect(seated.page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    assert table.socket is not None


def others(seated: Seated, n: int) -> list[str]:
    return [str(seated.user.pk)] + [f"guest-{i}" for i in range(1, n)]


def wait_until(at: float) -> None:
    time.sleep(max(0.0, at - time.time()))


def covers_the_screen(page: Page, testid: str) -> None:
    """The effect's box is the viewport, and at its centre nothing is drawn over it (measured
    in one go: an effect lasts about a second)."""
    box, on_top = page.evaluate(
        """(id) => {
            const fx = document.querySelector(`[data-testid=${id}]`);
            const r = fx.getBoundingClientRect();
            fx.style.pointerEvents = "auto";  // to be found by elementFromPoint
            const hit = document.elementFromPoint(innerWidth / 2, innerHeight / 2);
            fx.style.pointerEvents = "";
            return [[r.left, r.top, r.right, r.bottom], fx.contains(hit)];
        }""",
        testid,
    )
    size = page.viewport_size
    assert size is not None
    left, top, right, bottom = box
    assert left <= 0 and top <= 0, box
    assert right >= size["width"] - 0.5 and bottom >= size["height"] - 0.5, (box, size)
    assert on_top, f"{testid} is covered at the centre of the screen"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_home_run_and_guns_play_over_the_whole_screen_before_the_settlement(
    seated: Seated, live_platform: LivePlatform, shot: Shot, viewport: dict[str, int]
) -> None:
    page = seated.page
    page.set_viewport_size(viewport)
    table = MockTable(page, others(seated, 4), config())
    open_table(seated, live_platform.url, table)
    hands = {0: HR_B, 1: HR_A, 2: HR_D, 3: HR_C}
    table.deal({p: a.cards for p, a in hands.items()})
    table.fire()  # the deal is over
    for position in (1, 2, 3):
        table.do(machine.submit, position=position, **rows(hands[position]))
    expect(page.get_by_test_id("submit-button")).to_be_visible(timeout=PAGE)
    table.do(machine.submit, position=0, **rows(hands[0]))
    state = table.game.state
    assert state.phase.value == "comparing" and state.deadline is not None
    started = state.phase_started_at
    guns = [e for e in table.game.events("gun") if e.payload["kind"] == "gun"]
    (home_run,) = table.game.events("home_run")

    # A gun: full screen, on top, named.
    wait_until(started + guns[0].payload["offset_ms"] / 1000 - 0.5)
    shown(page, "gun-animation")
    fx = page.get_by_test_id("gun-animation")
    expect(fx.locator(".fx-title")).to_have_text("Gun!")
    covers_the_screen(page, "gun-animation")
    shot(page, "gun")

    # The home run: full screen, on top, and over before the settlement opens.
    wait_until(started + home_run.payload["offset_ms"] / 1000 - 0.5)
    shown(page, "home-run-animation")
    covers_the_screen(page, "home-run-animation")
    shot(page, "home-run")
    # Head to head: against each opponent, my water of each row and in all.
    totals = page.get_by_test_id("versus-total")
    expect(totals).to_have_count(3, timeout=PAGE)
    expected = versus_totals(table, me=0)
    for position, water in expected.items():
        total = page.locator(f"[data-testid=versus-total][data-position='{position}']")
        expect(total).to_contain_text(f"{water:+d}" if water else "0")
    if viewport == DESKTOP:
        width = page.locator(".seat .mini-cards .card").first.bounding_box()
        assert width is not None and width["width"] >= 36, width
    wait_until(state.deadline)
    table.fire()  # the comparison's deadline: settled
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    expect(page.get_by_test_id("home-run-animation")).to_be_hidden()
    expect(page.get_by_test_id("gun-animation")).to_be_hidden()
    shot(page, "settlement")


def versus_totals(table: MockTable, me: int) -> dict[int, int]:
    """My rows' water against each opponent, from the row_result events (head to head)."""
    totals: dict[int, int] = {}
    for event in table.game.events("row_result"):
        for pair in event.payload["versus"]:
            if me in (pair["a"], pair["b"]):
                other = pair["b"] if pair["a"] == me else pair["a"]
                sign = 1 if pair["a"] == me else -1
                totals[other] = totals.get(other, 0) + sign * pair["water"]
    return totals


def shown(page: Page, testid: str) -> None:
    """Wait (every frame: an effect lasts about a second) until the effect is showing."""
    page.wait_for_function(
        "(id) => !document.querySelector(`[data-testid=${id}]`).hidden",
        arg=testid,
        polling="raf",
        timeout=PAGE,
    )


def rows(arranged: object) -> dict[str, object]:
    return {
        "front": arranged.front,  # type: ignore[attr-defined]
        "middle": arranged.middle,  # type: ignore[attr-defined]
        "back": arranged.back,  # type: ignore[attr-defined]
    }


@pytest.mark.parametrize(("locale", "title"), [("en", "Run-over!"), ("zh-hans", "辗过！")])
def test_a_run_over_is_named_run_over_not_gun(
    seated: Seated, live_platform: LivePlatform, locale: str, title: str
) -> None:
    page = seated.page
    if locale != "en":
        page.goto(f"{live_platform.url}/lobby/")
        page.locator(f"form.language button[name=language][value={locale}]").click()
        expect(page.locator("html")).to_have_attribute("lang", locale, timeout=PAGE)
    table = MockTable(page, others(seated, 2), config(reveal_interval_ms=600))
    open_table(seated, live_platform.url, table)
    table.deal({0: RUN_A.cards, 1: RUN_B.cards})
    table.fire()
    table.do(machine.submit, position=1, **rows(RUN_B))
    table.do(machine.submit, position=0, **rows(RUN_A))
    (gun,) = table.game.events("gun")
    assert gun.payload["run_over"]
    shown(page, "gun-animation")
    fx = page.get_by_test_id("gun-animation")
    expect(fx.locator(".fx-title")).to_have_text(title)
    expect(page.locator("#compare-log")).to_contain_text("辗过")


def arranging(seated: Seated, base_url: str, n: int = 2) -> MockTable:
    table = MockTable(seated.page, others(seated, n), config())
    open_table(seated, base_url, table)
    table.deal({0: RUN_A.cards, 1: RUN_B.cards})
    table.fire()
    expect(seated.page.get_by_test_id("hand").locator("[data-card]")).to_have_count(
        13, timeout=PAGE
    )
    return table


def test_leaving_mid_round_by_a_link_asks_first_and_names_the_penalty(
    seated: Seated, live_platform: LivePlatform, shot: Shot
) -> None:
    page = seated.page
    table = arranging(seated, live_platform.url)
    lobby = page.locator(".site-header a", has_text="Lobby")
    lobby.click()
    dialog = page.get_by_test_id("leave-overlay")
    expect(dialog).to_be_visible()
    expect(page.get_by_test_id("leave-question")).to_contain_text("500")  # 5 × base score 100
    expect(page.get_by_test_id("leave-confirm")).to_contain_text("500")
    shot(page, "leave-question")
    page.get_by_test_id("leave-stay").click()
    expect(dialog).to_be_hidden()
    assert "/games/table/" in page.url and table.sent("leave") == []

    # Closing the tab or reloading asks too (the browser's own words: beforeunload).
    assert before_unload_asks(page)


BEFORE_UNLOAD = """() => {
    const event = new Event("beforeunload", { cancelable: true });
    window.dispatchEvent(event);
    return event.defaultPrevented;
}"""


def before_unload_asks(page: Page) -> bool:
    return bool(page.evaluate(BEFORE_UNLOAD))


def test_leaving_by_the_leave_button_confirms_then_escapes(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    table = arranging(seated, live_platform.url)
    page.get_by_test_id("leave-button").click()
    expect(page.get_by_test_id("leave-overlay")).to_be_visible()
    page.get_by_test_id("leave-confirm").click()
    expect(page.get_by_test_id("leave-overlay")).to_be_hidden()
    page.wait_for_function("() => true")
    deadline = time.time() + 5
    while not table.sent("leave") and time.time() < deadline:
        page.wait_for_timeout(50)
    assert len(table.sent("leave")) == 1


def test_with_the_hand_in_a_link_leaves_without_asking(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    table = arranging(seated, live_platform.url)
    page.locator("[data-testid=suggestion]").first.click()
    page.get_by_test_id("submit-button").click()
    deadline = time.time() + 5
    while not table.sent("submit") and time.time() < deadline:
        page.wait_for_timeout(50)
    (submit,) = table.sent("submit")
    table.do(
        machine.submit,
        position=0,
        **{row: tuple(parse(submit[row])) for row in ("front", "middle", "back")},
    )
    expect(page.get_by_test_id("submit-button")).to_be_disabled(timeout=PAGE)
    assert not before_unload_asks(page)
    page.locator(".site-header a", has_text="Lobby").click()
    page.wait_for_url("**/lobby/**", timeout=PAGE)
    assert table.sent("leave") == []  # nothing to leave: a disconnect after submitting is free


def parse(cards: list[str]) -> list[object]:
    from games.rules.cards import parse_cards

    return list(parse_cards(cards))


def settle_a_round(table: MockTable, page: Page) -> None:
    table.deal({0: RUN_A.cards, 1: RUN_B.cards})
    table.fire()
    table.do(machine.submit, position=1, **rows(RUN_B))
    table.do(machine.submit, position=0, **rows(RUN_A))
    state = table.game.state
    assert state.deadline is not None
    wait_until(state.deadline)
    table.fire()
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)


def test_keep_playing_presses_ready_after_the_settlement_is_shown(
    seated: Seated, live_platform: LivePlatform, shot: Shot
) -> None:
    page = seated.page
    table = MockTable(page, others(seated, 2), config())
    open_table(seated, live_platform.url, table)
    keep = page.get_by_test_id("keep-playing")
    page.get_by_test_id("ready-button").click()  # the first Ready is the player's own
    settle_a_round(table, page)
    expect(page.get_by_test_id("ready-timer")).to_be_visible()
    keep.check()
    shot(page, "keep-playing")
    deadline = time.time() + 10
    while len(table.sent("ready")) < 2 and time.time() < deadline:
        page.wait_for_timeout(100)
    assert len(table.sent("ready")) == 2
    page.reload()  # the choice is remembered
    expect(page.get_by_test_id("keep-playing")).to_be_checked(timeout=PAGE)


def test_sent_back_to_the_room_list_the_lobby_says_why(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    table = MockTable(page, others(seated, 2), config(ready_seconds=1))
    open_table(seated, live_platform.url, table)
    expect(page.get_by_test_id("ready-button")).to_be_visible()
    state = table.game.state
    assert state.deadline is not None
    wait_until(state.deadline)
    table.fire()  # the Ready deadline: back to the room list
    table.close(4000)
    page.wait_for_url("**/lobby/?left=ready_timeout", timeout=PAGE)


def test_a_settlement_is_only_shown_to_its_players(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    guest = "guest-x"
    table = MockTable(page, [guest, "guest-y"], config())
    # The page's player sits down after a round it did not play.
    table.game.now = time.time()
    table.game.ready_all()
    table.game.deal(hands={0: RUN_A.cards, 1: RUN_B.cards})
    table.game.fire()
    table.game.submit(1, RUN_B)
    table.game.submit(0, RUN_A)
    table.game.fire()
    assert table.game.state.result is not None
    table.game.do(machine.leave, position=0)
    table.game.do(machine.sit, player=str(seated.user.pk), position=0)
    table.me = str(seated.user.pk)
    open_table(seated, live_platform.url, table)
    expect(page.get_by_test_id("ready-button")).to_be_visible()
    expect(page.get_by_test_id("settlement-panel")).to_be_hidden()


FOUR = {0: HR_B, 1: HR_A, 2: HR_D, 3: HR_C}

ON_SCREEN = """(selectors) => selectors.map((s) => {
    const boxes = [...document.querySelectorAll(s)].filter((e) => e.offsetParent !== null)
        .map((e) => e.getBoundingClientRect());
    const inside = boxes.length > 0 && boxes.every((r) =>
        r.left >= 0 && r.top >= 0 && r.right <= innerWidth + 0.5 && r.bottom <= innerHeight + 0.5);
    return [s, boxes.length, inside];
})"""


def assert_on_one_screen(page: Page, selectors: list[str]) -> None:
    """Each selector matches visible elements, all inside the viewport, and the page does not
    scroll either way."""
    for selector, count, inside in page.evaluate(ON_SCREEN, selectors):
        assert count and inside, f"{selector}: {count} visible, inside the viewport: {inside}"
    width, height = page.evaluate(
        "[document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    size = page.viewport_size
    assert size is not None
    assert width <= size["width"] and height <= size["height"], (width, height, size)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_arranging_fits_one_screen(
    seated: Seated, live_platform: LivePlatform, shot: Shot, viewport: dict[str, int]
) -> None:
    page = seated.page
    page.set_viewport_size(viewport)
    table = MockTable(page, others(seated, 4), config(deal_interval_ms=60))
    open_table(seated, live_platform.url, table)
    table.deal({p: a.cards for p, a in FOUR.items()})
    # The deal plays where the hand is: on screen.
    expect(page.locator("[data-testid=hand] .card.dealt").first).to_be_attached(timeout=PAGE)
    assert_on_one_screen(page, ["[data-testid=hand]"])
    shot(page, "dealing")
    table.fire()
    table.do(machine.submit, position=2, **rows(FOUR[2]))
    expect(page.get_by_test_id("arrange-timer")).to_be_visible(timeout=PAGE)
    page.locator("[data-testid=hand] [data-card]").nth(12).click()  # one card selected
    assert_on_one_screen(
        page,
        [
            "[data-testid=hand] [data-card]",
            "[data-testid=row-front]",
            "[data-testid=row-middle]",
            "[data-testid=row-back]",
            "[data-testid=submit-button]",
            "[data-testid=suggestion]",
            "[data-testid=arrange-timer]",
            "#seats .seat:not([data-me=true])",
        ],
    )
    expect(page.locator("[data-testid=suggestion]")).to_have_count(3)
    expect(page.locator("[data-testid=suggestion]").first.locator(".card")).to_have_count(13)
    shot(page, "arranging")
    page.get_by_test_id("suggestions-more").click()
    assert page.locator("[data-testid=suggestion]").count() > 3


ENGLISH_WORD = r"[A-Za-z]{3,}"


def english_words(page: Page, allowed: set[str]) -> set[str]:
    import re

    text = page.evaluate("document.body.innerText")
    return set(re.findall(ENGLISH_WORD, text)) - allowed


def test_the_chinese_table_page_has_no_english_left(
    seated: Seated, live_platform: LivePlatform, shot: Shot
) -> None:
    page = seated.page
    page.goto(f"{live_platform.url}/lobby/")
    page.locator("form.language button[name=language][value=zh-hans]").click()
    expect(page.locator("html")).to_have_attribute("lang", "zh-hans", timeout=PAGE)
    table = MockTable(page, others(seated, 4), config())
    open_table(seated, live_platform.url, table)
    # Names, the brand and the language switch are not translated.
    allowed = {"newcomer", "guest", "Mock", "table", "Shisanshui", "English"}
    assert english_words(page, allowed) == set()
    table.deal({p: a.cards for p, a in FOUR.items()})
    table.fire()
    expect(page.get_by_test_id("arrange-timer")).to_be_visible(timeout=PAGE)
    assert english_words(page, allowed) == set()
    shot(page, "arranging-zh")
    for position in (1, 2, 3, 0):
        table.do(machine.submit, position=position, **rows(FOUR[position]))
    state = table.game.state
    assert state.deadline is not None
    wait_until(state.deadline)
    table.fire()
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    page.locator("#settlement-panel details").evaluate_all("els => els.forEach(e => e.open = true)")
    assert english_words(page, allowed) == set()
    shot(page, "settlement-zh")


def test_the_arrange_timer_is_a_bar_that_turns_red_in_the_last_5_seconds(
    seated: Seated, live_platform: LivePlatform, shot: Shot
) -> None:
    page = seated.page
    table = MockTable(page, others(seated, 2), config(arrange_seconds=8))
    open_table(seated, live_platform.url, table)
    table.deal({0: RUN_A.cards, 1: RUN_B.cards})
    table.fire()
    bar = page.get_by_test_id("arrange-timer")
    expect(bar).to_be_visible(timeout=PAGE)
    assert "urgent" not in (bar.get_attribute("class") or "")
    deadline = table.game.state.arrange_deadline
    assert deadline is not None
    wait_until(deadline - 4.0)
    expect(bar).to_have_class(re.compile(r"\burgent\b"), timeout=PAGE)
    color = bar.locator("span").evaluate("e => getComputedStyle(e).backgroundColor")
    assert color == "rgb(224, 70, 58)", color  # the red of .timer-bar.urgent
    shot(page, "timer-red")


def test_sounds_are_served_and_the_mute_toggle_is_remembered(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    table = MockTable(page, others(seated, 2), config())
    open_table(seated, live_platform.url, table)
    sounds = json.loads(page.locator("#table-config").text_content() or "{}")["sounds"]
    assert set(sounds) == {"gun", "home_run", "deal", "settle"}
    for url in sounds.values():
        response = page.request.get(f"{live_platform.url}{url}")
        assert response.ok and response.body()[:4] == b"RIFF", url  # small WAV files of ours
    toggle = page.get_by_test_id("sound-toggle")
    expect(toggle).to_have_attribute("aria-pressed", "true")
    toggle.click()
    expect(toggle).to_have_attribute("aria-pressed", "false")
    page.reload()
    expect(page.get_by_test_id("sound-toggle")).to_have_attribute(
        "aria-pressed", "false", timeout=PAGE
    )

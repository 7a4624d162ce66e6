"""Ready that fits people, one question to leave, Play now, and the true reason, in Chromium.

Against the live platform: Play now seats a full table (the player and bots), and a newcomer
alone with bots can look at it for longer than ``ready_seconds`` without being sent away; a
player whose network drops at such a table is sent away at the Ready deadline and, back, is
told why in the lobby. With a page whose socket the test serves from the table machine
(tests/browser/mock_table.py): with two people the Ready clock shows only once the settlement
is on show, and leaving mid-round asks one question — no browser "Leave site?" after it.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from playwright.sync_api import Dialog, Page, expect

from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table import machine
from lobby.models import Room, Seat
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, NewPage, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import (
    PAGE,
    PLAY_PHASES,
    SERVER,
    SOCKET_HOOK,
    Player,
    network_drop,
    network_return,
    open_lobby,
    sign_up,
)
from tests.games.table.helpers import arr
from tests.games.table_helpers import default_rules, state_of
from tests.live_server import LivePlatform, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})

READY_SECONDS = 5  # the Play now tables' clock here: short, so that waiting past it is quick
NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
A = arr("AS AH 3S", "KS KH KD 4C 4D", "9C TC JC QC KC")
B = arr("AD AC 3H", "8S 8H 8D 2H 2S", "JS JH JD 5C 5D")


def play_now_rules() -> RuleConfiguration:
    """The default rules (what Play now plays) with a short Ready clock."""
    default_rules()
    RuleConfiguration.objects.filter(is_default=True).update(is_default=False)
    config = RuleConfig.from_dict({"ready_seconds": READY_SECONDS}, base=DEFAULT_CONFIG)
    return RuleConfiguration.from_engine(config, name="Play now (tests)", is_default=True)


def play_now(live_platform: LivePlatform, new_page: NewPage, name: str) -> tuple[Player, Room]:
    play_now_rules()
    page = new_page(viewport=DESKTOP)
    page.context.add_init_script(SOCKET_HOOK)
    player = Player(name, page)
    sign_up(player, live_platform.url)
    open_lobby(player, live_platform.url)
    page.get_by_test_id("play-now").first.click()
    page.wait_for_url("**/games/table/*/", timeout=PAGE)
    expect(player.testid("connection-state")).to_have_attribute(
        "data-state", "live", timeout=SERVER
    )
    room = Seat.objects.get(user=player.user).room
    return player, room


def test_play_now_seats_a_full_table_where_a_newcomer_may_look_past_the_ready_clock(
    live_platform: LivePlatform, new_page: NewPage
) -> None:
    player, room = play_now(live_platform, new_page, "newcomer-nina")
    page = player.page
    seated_at = time.time()

    # A full table: the player and a bot in every other seat, on the page as in the room.
    assert room.seats == 4 and Seat.objects.filter(room=room).count() == 4
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 3
    expect(page.locator("[data-testid=seat][data-me=true]")).to_have_count(1)
    for position in range(4):
        seat = page.locator(f"[data-testid=seat][data-position='{position}']")
        expect(seat).to_have_count(1)
    expect(player.testid("ready-button")).to_be_visible()
    expect(player.testid("ready-countdown")).to_have_text("")  # no clock to fear

    # The bots' own Ready clocks end (the table presses Ready for them); the player looks on.
    wait_until(
        "the bots' Ready deadline",
        lambda: all(s.ready for s in state_of(room).seats if s.bot),
        seconds=READY_SECONDS + 30,
    )
    wait_until(
        "more than ready_seconds", lambda: time.time() > seated_at + READY_SECONDS + 1, seconds=30
    )
    me = state_of(room).seat_of(str(player.user.pk) if player.user else "")
    assert me is not None and me.ready_deadline is None
    assert "/games/table/" in page.url
    expect(player.testid("connection-state")).to_have_attribute("data-state", "live")
    expect(player.testid("ready-countdown")).to_have_text("")

    # Still the player's table: Ready deals a round.
    player.testid("ready-button").click()
    expect(player.testid("phase")).to_have_attribute("data-phase", PLAY_PHASES, timeout=SERVER)


def test_back_after_being_sent_away_while_dropped_the_lobby_says_why(
    live_platform: LivePlatform, new_page: NewPage
) -> None:
    player, room = play_now(live_platform, new_page, "dropped-dora")
    page = player.page
    network_drop(page)
    expect(player.testid("connection-state")).to_have_attribute("data-state", "reconnecting")
    # Away, the player has a Ready clock; at its end the table sends it back to the room list.
    wait_until(
        "the player to be sent away",
        lambda: not Seat.objects.filter(user=player.user).exists(),
        seconds=READY_SECONDS + 30,
    )
    network_return(page)

    page.wait_for_url(re.compile(r".*/lobby/.*"), timeout=SERVER)
    message = player.testid("left-message")
    expect(message).to_contain_text("You did not press Ready in time")
    # Said once: the lobby again says nothing of it.
    page.goto(f"{live_platform.url}/lobby/")
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)
    expect(page.get_by_text("Ready in time")).to_have_count(0)
    # Nor does the table page: the player is not seated there.
    page.goto(f"{live_platform.url}/games/table/{room.pk}/")
    page.wait_for_url(re.compile(r".*/lobby/.*"), timeout=PAGE)
    expect(page.get_by_text("You are not seated at that table")).to_be_visible()
    expect(page.get_by_text("Ready in time")).to_have_count(0)


# -- the page's own socket: the table machine ----------------------------------------------------


@dataclass
class Seated:
    player: Player
    room: Room

    @property
    def page(self) -> Page:
        return self.player.page


@pytest.fixture
def seated(live_platform: LivePlatform, new_page: NewPage) -> Iterator[Seated]:
    default_rules()
    player = Player("reader-rita", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    assert player.user is not None
    room = room_create(owner=player.user, base_score=100, seats=4, name="Mock table")
    yield Seated(player, room)


def mock_table(seated: Seated, base_url: str, **overrides: object) -> MockTable:
    """Two people at the page's table (the page's player and a guest), in a round being
    arranged."""
    assert seated.player.user is not None
    pace = {"reveal_interval_ms": 400, "deal_interval_ms": 10, "arrange_seconds": 90}
    config = RuleConfig.from_dict({**NO_SPECIALS, **pace, **overrides}, base=DEFAULT_CONFIG)
    table = MockTable(seated.page, [str(seated.player.user.pk), "guest-1"], config)
    seated.page.goto(f"{base_url}/games/table/{seated.room.pk}/")
    expect(seated.page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    table.deal({0: A.cards, 1: B.cards})
    table.fire()
    expect(seated.page.locator("[data-testid=hand] [data-card]")).to_have_count(13, timeout=PAGE)
    return table


# Every change of the Ready countdown's text, with whether the settlement was on show then.
WATCH_READY_CLOCK = """() => {
  window.__clock = [];
  const clock = document.querySelector("[data-testid=ready-countdown]");
  const sheet = document.getElementById("settlement-overlay");
  new MutationObserver(() => {
    window.__clock.push({ text: clock.textContent, shown: !sheet.hidden });
  }).observe(clock, { childList: true, characterData: true, subtree: true });
}"""


def test_with_two_people_the_ready_clock_shows_once_the_settlement_is_on_show(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    table = mock_table(seated, live_platform.url)
    page.evaluate(WATCH_READY_CLOCK)
    table.do(machine.submit, position=1, front=B.front, middle=B.middle, back=B.back)
    table.do(machine.submit, position=0, front=A.front, middle=A.middle, back=A.back)
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "comparing")
    ends = table.game.state.deadline
    assert ends is not None
    expect(page.get_by_test_id("ready-countdown")).to_have_text("")
    # The comparison plays out in real time; then the table settles.
    page.wait_for_function(f"() => Date.now() / 1000 > {ends}", timeout=SERVER)
    table.fire()
    expect(page.locator("#settlement-overlay")).to_be_visible(timeout=PAGE)
    expect(page.get_by_test_id("ready-countdown")).to_have_text(re.compile(r"^1[45] s$"))
    changes = page.evaluate("() => window.__clock")
    assert changes and all(c["shown"] for c in changes if c["text"]), changes
    # The clock started when the settlement came, after the comparison's animation.
    mine = table.game.state.seat(0)
    assert mine is not None and mine.ready_deadline == table.game.now + 15 >= ends + 15


def record_dialogs(page: Page) -> list[str]:
    """Every browser dialog the page opens, by type; each is dismissed ("Stay")."""
    seen: list[str] = []

    def on_dialog(dialog: Dialog) -> None:
        seen.append(dialog.type)
        dialog.dismiss()

    page.on("dialog", on_dialog)
    return seen


@pytest.mark.parametrize("way", ["lobby link", "leave button"])
def test_leaving_mid_round_asks_once_in_the_page_and_never_in_the_browser(
    seated: Seated, live_platform: LivePlatform, way: str
) -> None:
    page = seated.page
    table = mock_table(seated, live_platform.url)
    dialogs = record_dialogs(page)
    if way == "lobby link":
        page.locator(".site-header a", has_text="Lobby").click()
    else:
        page.get_by_test_id("leave-button").click()
    expect(page.get_by_test_id("leave-overlay")).to_be_visible()
    expect(page.get_by_test_id("leave-confirm")).to_contain_text("500")
    page.get_by_test_id("leave-confirm").click()

    page.wait_for_url(re.compile(r".*/lobby/.*"), timeout=PAGE)
    assert dialogs == []  # no "Leave site?" after the page's own question
    assert len(table.sent("leave")) == 1


def test_a_player_who_stays_at_the_browsers_question_is_not_fined(
    seated: Seated, live_platform: LivePlatform
) -> None:
    page = seated.page
    table = mock_table(seated, live_platform.url)
    dialogs = record_dialogs(page)
    # Stay at the page's question (a click: the page may now ask the browser's too).
    page.locator(".site-header a", has_text="Lobby").click()
    page.get_by_test_id("leave-stay").click()
    expect(page.get_by_test_id("leave-overlay")).to_be_hidden()
    # Going back asks the browser's question alone, and "Stay" keeps the player at the table.
    page.evaluate("() => history.back()")
    page.wait_for_function("() => true")
    deadline = time.monotonic() + 5
    while not dialogs and time.monotonic() < deadline:
        page.wait_for_timeout(50)
    assert dialogs == ["beforeunload"]
    assert "/games/table/" in page.url
    assert table.sent("leave") == []  # nothing was sent: no escape, no fine
    expect(page.get_by_test_id("connection-state")).to_have_attribute("data-state", "live")

"""Arranging like the apps (RULES.md §6), at 1280×800 and 390×844: the hand-type buttons select
the right groups (pressed again, the next; pairs cycle through every pair; disabled when there
is none), the hand opens laid out as the first suggestion (or, the player's setting off,
sorted with the rows empty), the last row fills itself, the sort button cycles rank → suit →
count, straights read low to high, the desktop shortcuts, and suggestion thumbnails a phone can
read. The page is the real one; its socket is served by the pure table machine
(tests/browser/mock_table.py), so the hand is the test's choice.

With SHOTS_DIR set, the arrange screen with its hand-type buttons is saved there as
handtypes-1280.png and handtypes-390.png.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from accounts.models import User
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table.suggest import suggestions
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import PAGE, Player, cards_in, sign_up
from tests.games.table.helpers import c
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
CONFIG = RuleConfig.from_dict(
    {**NO_SPECIALS, "reveal_interval_ms": 300, "deal_interval_ms": 10, "arrange_seconds": 300},
    base=DEFAULT_CONFIG,
)
# Pairs of aces and kings, trips of sevens, the straights 3-7, 2-6 and A2345: no flush, no
# quads, no straight flush.
MINE = c("7C 2S AS KH 5H 7D QD 3D AH 4C KS 6S 7H")
OTHER = c("9S 9H 9D TS TH JC JD 8S 8H 8D QS QH 4D")
BY_RANK = ["AS", "AH", "KS", "KH", "QD", "7H", "7C", "7D", "6S", "5H", "4C", "3D", "2S"]
BY_SUIT = ["AS", "KS", "6S", "2S", "AH", "KH", "7H", "5H", "7C", "4C", "QD", "7D", "3D"]
BY_COUNT = ["7H", "7C", "7D", "AS", "AH", "KS", "KH", "QD", "6S", "5H", "4C", "3D", "2S"]

live_platform = module_platform()

VIEWPORTS = pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])


@dataclass
class Seated:
    player: Player
    user: User
    base_url: str

    @property
    def page(self) -> Page:
        return self.player.page


@pytest.fixture
def seated(live_platform: LivePlatform, new_page: NewPage) -> Iterator[Seated]:
    """A signed-up player seated (in the database) at a 2-seat room of its own, with the
    site's default table setting (the hand opens laid out as the first suggestion)."""
    default_rules()
    player = Player("arranger", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url, default_layout=True)
    assert player.user is not None
    room_create(owner=player.user, base_score=100, seats=2, name="Arranging table")
    yield Seated(player, player.user, live_platform.url)


def dealt(seated: Seated, viewport: dict[str, int], language: str = "en") -> MockTable:
    """The table page open at ``viewport`` (in ``language``), MINE dealt and being arranged."""
    page = seated.page
    page.set_viewport_size(viewport)
    page.context.add_cookies(
        [{"name": "django_language", "value": language, "url": seated.base_url}]
    )
    table = MockTable(page, [str(seated.user.pk), "guest-1"], CONFIG, capacity=2)
    page.goto(f"{seated.base_url}/games/table/{_room_id(seated)}/")
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    table.deal({0: MINE, 1: OTHER})
    table.fire()
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "arranging")
    expect(page.locator("#arrange [data-card]")).to_have_count(13, timeout=PAGE)
    return table


def _room_id(seated: Seated) -> int:
    from lobby.models import Room

    return Room.objects.get(name="Arranging table").pk


def opening_off(seated: Seated) -> None:
    User.objects.filter(pk=seated.user.pk).update(default_layout=False)


def selected(page: Page) -> list[str]:
    return [
        str(x)
        for x in page.locator("#arrange .card.selected").evaluate_all(
            "els => els.map(e => e.dataset.card)"
        )
    ]


def press(page: Page, kind: str) -> list[str]:
    """Press a hand-type button; the cards it selected (in screen order)."""
    before = selected(page)
    page.get_by_test_id(f"handtype-{kind}").click()
    page.wait_for_function(
        "(before) => JSON.stringify([...document.querySelectorAll('#arrange .card.selected')]"
        ".map(e => e.dataset.card)) !== JSON.stringify(before)",
        arg=before,
        timeout=PAGE,
    )
    return selected(page)


def save_shot(page: Page, name: str) -> None:
    folder = os.environ.get("SHOTS_DIR")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(Path(folder) / name))


@VIEWPORTS
def test_6_hand_type_buttons_select_cycle_and_place_and_the_last_row_fills_itself(
    seated: Seated, shot: Shot, viewport: dict[str, int]
) -> None:
    opening_off(seated)
    page = seated.page
    dealt(seated, viewport)
    hand = page.get_by_test_id("hand")
    # Opt-out: sorted by rank, the rows empty.
    assert cards_in(seated.player, "hand") == BY_RANK
    for row in ("front", "middle", "back"):
        expect(page.locator(f"[data-testid=row-{row}] [data-card]")).to_have_count(0)

    # Enabled only when the unplaced cards hold one; five of a kind only with the variant decks.
    for kind, groups in {
        "pair": 3,
        "two_pair": 3,
        "trips": 1,
        "straight": 3,
        "full_house": 2,
        "flush": 0,
        "quads": 0,
        "straight_flush": 0,
    }.items():
        button = page.get_by_test_id(f"handtype-{kind}")
        expect(button).to_have_attribute("data-groups", str(groups))
        if groups:
            expect(button).to_be_enabled()
        else:
            expect(button).to_be_disabled()
    expect(page.get_by_test_id("handtype-five_of_a_kind")).to_have_count(0)

    # Pairs, strongest first, then every pair (the trips' too), then back to the first.
    assert press(page, "pair") == ["AS", "AH"]
    expect(page.get_by_test_id("handtype-pair")).to_contain_text("1/3")
    assert press(page, "pair") == ["KS", "KH"]
    assert press(page, "pair") == ["7H", "7C"]
    assert press(page, "pair") == ["AS", "AH"]
    save_shot(page, f"handtypes-{viewport['width']}.png")
    shot(page, "handtypes")

    # The full house of sevens and aces to the back; the 6-high straight to the middle (shown
    # low to high); the three left go to the front by themselves.
    assert sorted(press(page, "full_house")) == sorted(["7H", "7C", "7D", "AS", "AH"])
    page.get_by_test_id("row-back").click()
    expect(page.locator("[data-testid=row-back] [data-card]")).to_have_count(5)
    expect(page.get_by_test_id("handtype-full_house")).to_be_disabled()
    assert press(page, "straight") == ["6S", "5H", "4C", "3D", "2S"]
    page.get_by_test_id("row-middle").click()
    expect(hand.locator("[data-card]")).to_have_count(0, timeout=PAGE)
    assert cards_in(seated.player, "row-middle") == ["2S", "3D", "4C", "5H", "6S"]
    assert sorted(cards_in(seated.player, "row-front")) == sorted(["KS", "KH", "QD"])
    expect(page.get_by_test_id("submit-button")).to_be_enabled()
    shot(page, "auto-filled-front")

    # Reset clears the rows; the front and the middle filled: the back fills itself.
    page.get_by_test_id("reset").click()
    expect(hand.locator("[data-card]")).to_have_count(13)
    assert press(page, "pair") == ["AS", "AH"]
    page.get_by_test_id("row-front").click()
    expect(page.locator("[data-testid=row-front] [data-card]")).to_have_count(2)
    page.locator("[data-testid=hand] [data-card='QD']").click()
    page.get_by_test_id("row-front").click()
    expect(page.locator("[data-testid=row-front] [data-card]")).to_have_count(3)
    assert press(page, "straight") == ["7H", "6S", "5H", "4C", "3D"]
    assert press(page, "straight") == ["6S", "5H", "4C", "3D", "2S"]
    page.get_by_test_id("row-middle").click()
    expect(page.locator("[data-testid=row-back] [data-card]")).to_have_count(5, timeout=PAGE)
    assert sorted(cards_in(seated.player, "row-back")) == sorted(["7H", "7C", "7D", "KS", "KH"])
    # A full house is shown groups first.
    assert cards_in(seated.player, "row-back") == ["7H", "7C", "7D", "KS", "KH"]
    expect(hand.locator("[data-card]")).to_have_count(0)


def test_6_the_hand_types_speak_chinese_and_fit_a_phone(seated: Seated, shot: Shot) -> None:
    opening_off(seated)
    page = seated.page
    dealt(seated, PHONE, "zh-hans")
    names = ["对子", "两对", "三条", "顺子", "同花", "葫芦", "铁支", "同花顺"]
    buttons = page.locator("#handtypes button[data-type]")
    expect(buttons).to_have_count(8)
    assert [t.strip() for t in buttons.locator(".ht-name").all_inner_texts()] == names
    expect(page.get_by_test_id("sort")).to_have_text("排序：点数")
    # All eight on the phone's one line, none cut off, a group selected too.
    press(page, "pair")
    expect(page.get_by_test_id("handtype-pair")).to_have_class(re.compile(r"\bactive\b"))
    edges = buttons.evaluate_all(
        """els => {
            const line = document.getElementById('handtypes').getBoundingClientRect();
            return els.map(e => {
                const r = e.getBoundingClientRect();
                return [r.left - line.left, line.right - r.right];
            });
        }"""
    )
    assert all(left >= 0 and right >= 0 for left, right in edges), edges
    shot(page, "handtypes-zh-phone")
    save_shot(page, "handtypes-390-zh.png")


@VIEWPORTS
def test_6_the_sort_button_cycles_rank_suit_count(seated: Seated, viewport: dict[str, int]) -> None:
    opening_off(seated)
    page = seated.page
    dealt(seated, viewport)
    sort = page.get_by_test_id("sort")
    expect(sort).to_have_attribute("data-order", "rank")
    assert cards_in(seated.player, "hand") == BY_RANK
    for order, expected in (("suit", BY_SUIT), ("count", BY_COUNT), ("rank", BY_RANK)):
        sort.click()
        expect(sort).to_have_attribute("data-order", order)
        assert cards_in(seated.player, "hand") == expected, order
    # Cards sent back from a row take their place in the hand's order.
    sort.click()  # by suit
    page.locator("[data-testid=hand] [data-card='AS']").click()
    page.locator("[data-testid=hand] [data-card='2S']").click()
    page.get_by_test_id("row-front").click()
    expect(page.locator("[data-testid=row-front] [data-card]")).to_have_count(2)
    page.locator("[data-testid=row-front] [data-card='AS']").dblclick()
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(12)
    assert cards_in(seated.player, "hand") == [c for c in BY_SUIT if c != "2S"]


@VIEWPORTS
def test_6_the_hand_opens_laid_out_as_the_first_suggestion(
    seated: Seated, shot: Shot, viewport: dict[str, int]
) -> None:
    page = seated.page
    table = dealt(seated, viewport)
    seat = table.game.state.seats[0]
    assert seat.hand is not None
    first = suggestions(seat.hand, table.game.state.config, table.game.state.table_opponents)[0]
    for row in ("front", "middle", "back"):
        expect(page.locator(f"[data-testid=row-{row}] [data-card]")).to_have_count(
            len(first[row]), timeout=PAGE
        )
        assert sorted(cards_in(seated.player, f"row-{row}")) == sorted(first[row]), row
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(0)
    expect(page.get_by_test_id("submit-button")).to_be_enabled()
    shot(page, "default-layout")
    # One tap clears the rows: the hand sorted by rank.
    page.get_by_test_id("reset").click()
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(13)
    assert cards_in(seated.player, "hand") == BY_RANK


def test_6_the_profile_setting_turns_the_default_layout_off(seated: Seated, shot: Shot) -> None:
    page = seated.page
    page.goto(f"{seated.base_url}/accounts/profile/")
    form = page.get_by_test_id("table-settings")
    expect(form.locator("input[value=suggested]")).to_be_checked()
    form.locator("input[value=sorted]").check()
    page.get_by_test_id("save-settings").click()
    expect(page.locator("ul.messages")).to_contain_text("saved", timeout=PAGE)
    expect(page.get_by_test_id("table-settings").locator("input[value=sorted]")).to_be_checked()
    assert User.objects.get(pk=seated.user.pk).default_layout is False
    shot(page, "profile-setting")
    dealt(seated, DESKTOP)
    assert cards_in(seated.player, "hand") == BY_RANK
    for row in ("front", "middle", "back"):
        expect(page.locator(f"[data-testid=row-{row}] [data-card]")).to_have_count(0)


def test_6_double_click_clears_the_selection_and_right_click_selects_a_suit(
    seated: Seated,
) -> None:
    opening_off(seated)
    page = seated.page
    dealt(seated, DESKTOP)
    hand = page.get_by_test_id("hand")
    hand.locator("[data-card='QD']").click()
    hand.locator("[data-card='7C']").click()
    assert sorted(selected(page)) == ["7C", "QD"]
    # A right-click on a card: every unplaced spade, and no context menu.
    hand.locator("[data-card='6S']").click(button="right")
    expect(page.locator("#arrange .card.selected")).to_have_count(4)
    assert selected(page) == ["AS", "KS", "6S", "2S"]
    prevented = page.evaluate(
        """() => {
            const card = document.querySelector('[data-testid=hand] [data-card="AH"]');
            const event = new MouseEvent('contextmenu', {bubbles: true, cancelable: true});
            card.dispatchEvent(event);
            return event.defaultPrevented;
        }"""
    )
    assert prevented
    assert selected(page) == ["AH", "KH", "7H", "5H"]
    # A double-click clears the selection: on a card of the hand, its two clicks toggle it
    # (on, off), then every selected card is let go.
    hand.locator("[data-card='QD']").dblclick()
    expect(page.locator("#arrange .card.selected")).to_have_count(0)
    expect(hand.locator("[data-card]")).to_have_count(13)


RANKS_SHOWN = """() => {
    const out = [];
    const buttons = [...document.querySelectorAll('[data-testid=suggestion]')];
    const boxes = buttons.map((b) => b.getBoundingClientRect());
    buttons.forEach((button, i) => {
        const cards = [...button.querySelectorAll('.card')];
        cards.forEach((card, k) => {
            const rank = card.querySelector('.rank');
            const r = rank.getBoundingClientRect();
            const own = card.getBoundingClientRect();
            const next = cards[k + 1] && cards[k + 1].parentElement === card.parentElement
                ? cards[k + 1].getBoundingClientRect() : null;
            out.push({
                suggestion: i, text: rank.textContent,
                clipped: r.left < own.left - 0.5 || r.right > own.right + 0.5
                    || r.bottom > own.bottom + 0.5 || r.width < 3,
                box: [r.left, r.right, own.left, own.right],
                covered: next !== null && next.left < r.right - 0.5,
                height: r.height, fontSize: parseFloat(getComputedStyle(rank).fontSize),
                inside: r.left >= boxes[i].left - 0.5 && r.right <= boxes[i].right + 0.5,
            });
        });
    });
    const overlaps = [];
    boxes.forEach((a, i) => boxes.forEach((b, j) => {
        if (i < j && a.left < b.right - 0.5 && b.left < a.right - 0.5
            && a.top < b.bottom - 0.5 && b.top < a.bottom - 0.5) overlaps.push([i, j]);
    }));
    return {ranks: out, overlaps};
}"""


@VIEWPORTS
def test_6_suggestion_thumbnails_are_legible(
    seated: Seated, shot: Shot, viewport: dict[str, int]
) -> None:
    opening_off(seated)
    page = seated.page
    table = MockTable(page, [str(seated.user.pk), "guest-1"], CONFIG, capacity=2)
    page.set_viewport_size(viewport)
    page.goto(f"{seated.base_url}/games/table/{_room_id(seated)}/")
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    # Tens in every row of the suggestions.
    table.deal(
        {
            0: c("TS TH TD 9C 9D 8S 8H JC QD KS 2C 3H 4S"),
            1: c("AS AH AD AC KH KD KC QS QH QC JS JH JD"),
        }
    )
    table.fire()
    expect(page.locator("[data-testid=suggestion]").first).to_be_visible(timeout=PAGE)
    page.locator("[data-testid=suggestion]").first.scroll_into_view_if_needed()
    shot(page, "suggestions")
    got = page.evaluate(RANKS_SHOWN)
    assert got["overlaps"] == []
    assert any(r["text"] == "10" for r in got["ranks"])
    for r in got["ranks"]:
        assert not r["clipped"] and not r["covered"] and r["inside"], r
        assert r["fontSize"] >= 10, r  # readable on a phone
    # The page still fits the screen's width.
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"]

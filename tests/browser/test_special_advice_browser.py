"""The special hand's dialog advises (RULES.md §5.1): the special's water against the
best arrangement's expected water for these cards, this room's rules and this round's
opponents, and the recommended answer marked — in English and in Chinese, on a phone too.

The page is the real one; its socket is served by the pure table machine
(tests/browser/mock_table.py), so the hands are the test's choice.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Page, expect

from games.rules.advice import special_advice
from games.rules.cards import parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.table import machine
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import PAGE, Player, sign_up
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

DRAGON = "AS KH QD JC TS 9H 8D 7C 6S 5H 4D 3C 2S"  # 一条龙: 36 water from each opponent
SIX_PAIRS = "AS AH KS KH QS QH JS JH TS TH 9S 9H 2C"  # 六对半
PACE = {"deal_interval_ms": 10, "special_choice_seconds": 90, "arrange_seconds": 90}

live_platform = module_platform()


@pytest.fixture
def page_at_table(
    live_platform: LivePlatform, new_page: NewPage
) -> Iterator[tuple[Page, str, str]]:
    """A signed-up player's page, its table's URL and its user id (seated at a room of its
    own, in the database)."""
    default_rules()
    player = Player("adviced", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    assert player.user is not None
    room = room_create(owner=player.user, base_score=100, seats=4, name="Advice")
    player.page.goto("about:blank")
    yield player.page, f"{live_platform.url}/games/table/{room.pk}/", str(player.user.pk)


def deal_special(
    page: Page, url: str, me: str, hand: str, config: RuleConfig, seats: int
) -> MockTable:
    table = MockTable(page, [me] + [f"guest-{i}" for i in range(1, seats)], config)
    page.goto(url)
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    mine = parse_cards(hand.split(), count=13)
    rest = [c for c in config.deck.cards if c not in mine]
    hands = {0: mine, **{p: rest[13 * (p - 1) : 13 * p] for p in range(1, seats)}}
    table.deal(hands)
    table.fire()  # the deal is over: the special choice
    expect(page.get_by_test_id("special-dialog")).to_be_visible(timeout=PAGE)
    return table


def config(**overrides: object) -> RuleConfig:
    return RuleConfig.from_dict({**PACE, **overrides}, base=DEFAULT_CONFIG)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_a_dragon_is_worth_declaring_and_the_dialog_says_so(
    page_at_table: tuple[Page, str, str], shot: Shot, viewport: dict[str, int]
) -> None:
    page, url, me = page_at_table
    page.set_viewport_size(viewport)
    rules = config()
    deal_special(page, url, me, DRAGON, rules, seats=4)
    advice = special_advice(parse_cards(DRAGON.split()), rules, "dragon", 3)
    assert advice.special_water == 108 and advice.recommend == "special"

    box = page.get_by_test_id("special-advice")
    expect(box).to_be_visible()
    expect(page.get_by_test_id("advice-special")).to_have_text(
        "Declare it: +108 water for sure (+36 from each of 3 opponents)"
    )
    expected = f"{round(advice.arrange_water, 2):+g}".replace("+-", "-")
    expect(page.get_by_test_id("advice-arrange")).to_contain_text(expected)
    expect(page.get_by_test_id("advice-verdict")).to_have_text(
        "Recommended: play the special hand."
    )
    expect(page.get_by_test_id("special-yes")).to_have_attribute("data-recommended", "true")
    expect(page.get_by_test_id("special-no")).not_to_have_attribute("data-recommended", "true")
    shot(page, "special-advice")


def test_a_worthless_special_is_advised_against_in_chinese_at_two_seats(
    page_at_table: tuple[Page, str, str], live_platform: LivePlatform
) -> None:
    page, url, me = page_at_table
    page.context.add_cookies(
        [{"name": "django_language", "value": "zh-hans", "url": live_platform.url}]
    )
    rules = config(specials={"six_pairs": {"water": 0}})
    table = deal_special(page, url, me, SIX_PAIRS, rules, seats=2)
    advice = special_advice(parse_cards(SIX_PAIRS.split()), rules, "six_pairs", 1)
    assert advice.recommend == "arrange" and advice.opponents == 1

    expect(page.get_by_test_id("advice-special")).to_contain_text("1 位对手")
    expect(page.get_by_test_id("advice-verdict")).to_have_text("建议：正常摆牌——预计赢得更多。")
    expect(page.get_by_test_id("special-no")).to_have_attribute("data-recommended", "true")
    expect(page.get_by_test_id("special-yes")).not_to_have_attribute("data-recommended", "true")

    # The advice is followed: No, and the page arranges as usual.
    page.get_by_test_id("special-no").click()
    for _ in range(100):  # the socket's messages arrive while Playwright waits
        if table.sent("choose_special"):
            break
        page.wait_for_timeout(50)
    (choice,) = table.sent("choose_special")
    assert choice["play_special"] is False
    table.do(machine.choose_special, position=0, play_special=False)
    expect(page.get_by_test_id("special-dialog")).to_be_hidden(timeout=PAGE)
    expect(page.get_by_test_id("submit-button")).to_be_visible(timeout=PAGE)

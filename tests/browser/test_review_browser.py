"""The review of one's own hand in Chromium: on the replay page of a settled round,
against the real API (a rigged round: bob's 4C 5C 6C front is not the engine's best; carol
declared six pairs), in English and in Chinese; and on the table's settlement panel, whose
request names the room and the round (the table's socket is the pure machine of
tests/browser/mock_table.py, the review it asks for answered from the same hands).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest
from playwright.sync_api import Page, Route, expect

from games.history.review import round_review
from games.rules.arrange import arrange
from games.rules.cards import format_cards
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.review import review_hand
from games.rules.scoring import Seat
from games.table import machine
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import PAGE, Player, sign_up
from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round
from tests.games.table.helpers import plain_deck
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform, session_cookie_for

pytestmark = pytest.mark.django_db(transaction=True)

live_platform = module_platform()


def signed(value: float) -> str:
    text = f"{value:+,.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("+0", "-0") else text


def log_in(page: Page, url: str, user: Any, language: str) -> None:
    cookies = {**session_cookie_for(user), "django_language": language}
    page.context.add_cookies([{"name": k, "value": v, "url": url} for k, v in cookies.items()])


def test_a_player_reviews_its_hand_from_the_replay(
    monkeypatch: pytest.MonkeyPatch, live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL, room_name="Review table")
    expected = round_review(round_=round_, user_id=users["bob"].pk)
    page = new_page(viewport=DESKTOP)
    log_in(page, live_platform.url, users["bob"], "en")

    page.goto(f"{live_platform.url}/games/rounds/{round_.pk}/replay/")
    page.get_by_test_id("review-button").click()

    review = page.get_by_test_id("review")
    expect(review).to_be_visible(timeout=PAGE)
    played, best = page.get_by_test_id("review-played"), page.get_by_test_id("review-best")
    # The rows as cards: bob's own, then the engine's best of the same 13.
    shown = played.locator(".card[data-card]").evaluate_all("els => els.map(e => e.dataset.card)")
    assert shown == [
        *expected["played"]["front"],
        *expected["played"]["middle"],
        *expected["played"]["back"],
    ]
    best_cards = best.locator(".card[data-card]").evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )
    assert best_cards == [
        *expected["best"]["front"],
        *expected["best"]["middle"],
        *expected["best"]["back"],
    ]
    expect(page.get_by_test_id("review-played-water")).to_have_text(
        f"Against this round's hands: {signed(expected['played']['water'])} water"
    )
    expect(page.get_by_test_id("review-best-expected")).to_have_text(
        f"Expected: {signed(expected['best']['expected_water'])} water"
    )
    assert not expected["played_best"]
    verdict = page.get_by_test_id("review-verdict")
    if expected["water_gain"] > 0:
        expect(verdict).to_contain_text(f"would have scored {expected['water_gain']} more water")
    else:
        expect(verdict).to_contain_text("expected to win")
    shot(page, "replay-review")


def test_a_declared_special_is_reviewed_in_chinese_on_a_phone(
    monkeypatch: pytest.MonkeyPatch, live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL, room_name="复盘桌")
    expected = round_review(round_=round_, user_id=users["carol"].pk)
    page = new_page(viewport=PHONE, locale="zh-CN")
    log_in(page, live_platform.url, users["carol"], "zh-hans")

    page.goto(f"{live_platform.url}/games/rounds/{round_.pk}/replay/")
    page.get_by_test_id("review-button").click()

    played = page.get_by_test_id("review-played")
    expect(played).to_contain_text("六对半", timeout=PAGE)
    expect(played.locator(".card[data-card]")).to_have_count(13)
    expect(page.get_by_test_id("review-played-expected")).to_have_text("预期：+12 水")
    expect(page.get_by_test_id("review-verdict")).to_contain_text("对这几手牌")
    assert expected["played"]["special"] == "six_pairs"
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= PHONE["width"]
    shot(page, "replay-review-special")


def test_the_table_offers_the_review_of_the_round_just_settled(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    default_rules()
    player = Player("reviewer", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    assert player.user is not None
    room = room_create(owner=player.user, base_score=100, seats=2, name="Review at the table")
    page = player.page
    me = str(player.user.pk)
    rules = RuleConfig.from_dict(
        {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}, "deal_interval_ms": 10},
        base=DEFAULT_CONFIG,
    )
    table = MockTable(page, [me, "guest-1"], rules, capacity=2)
    asked: list[str] = []

    def answer(route: Route) -> None:
        asked.append(route.request.url)
        seats = [
            Seat(s.player, s.arrangement)  # type: ignore[arg-type]
            for s in table.game.state.round_seats
        ]
        body = review_hand(seats, me, rules).to_json()
        body.update(round_id=1, round_no=table.game.state.round_no, room_id=room.pk, dealt=[])
        route.fulfill(status=200, content_type="application/json", body=json.dumps(body))

    page.route(re.compile(r".*/api/games/rooms/\d+/rounds/\d+/review/$"), answer)
    page.goto(f"{live_platform.url}/games/table/{room.pk}/")
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    deck = plain_deck(2, seed=5, config=rules)
    table.deal({0: deck[:13], 1: deck[13:26]})
    table.fire()
    weakest = arrange(deck[:13], rules, limit=10, opponents=1).suggestions[-1]
    table.do(machine.submit, position=1, **_rows(arrange(deck[13:26], rules, limit=1).best))
    table.do(machine.submit, position=0, **_rows(weakest))
    state = table.game.state
    page.wait_for_timeout(max(0.0, (state.deadline or 0) - time.time()) * 1000)
    table.fire()  # the comparison's deadline: settled
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)

    page.get_by_test_id("review-button").click()

    expect(page.get_by_test_id("review")).to_be_visible(timeout=PAGE)
    assert asked and asked[0].endswith(f"/api/games/rooms/{room.pk}/rounds/1/review/")
    mine = page.get_by_test_id("review-played").locator(".card[data-card]")
    shown = mine.evaluate_all("els => els.map(e => e.dataset.card)")
    assert shown == format_cards(weakest.front + weakest.middle + weakest.back)
    expect(page.get_by_test_id("review-verdict")).not_to_have_text("")
    shot(page, "table-review")


def _rows(suggestion: Any) -> dict[str, Any]:
    return {"front": suggestion.front, "middle": suggestion.middle, "back": suggestion.back}

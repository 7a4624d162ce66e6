"""Whole rounds in real browsers: sign up, open and join a room from the lobby, Ready, arrange
the 13 cards by clicking and dragging, submit, and the settlement every page shows is the
one the database and the ledger hold.

Every player has its own browser context. The rules are fast (short deal and reveal pacing) so
the animations run but quickly.
"""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from games.models import RoundPlayer
from tests.browser.conftest import NewPage, Shot
from tests.browser.table_flow import (
    PACING,
    PAGE,
    SERVER,
    Player,
    answer_special,
    apply_best_suggestion,
    assert_rows,
    best_rows,
    cards_in,
    check_settlement,
    draft_saved,
    fouled_rows,
    join_from_list,
    open_lobby,
    open_room,
    place,
    place_by_clicks,
    play_hand,
    press_ready,
    round_config,
    seat_and_ready,
    sign_up,
    submit,
    wait_for_hand,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

RULES = "Browser fast 浏览器"


@pytest.mark.parametrize("count", [2, 3, 4])
def test_players_sign_up_join_arrange_and_settle(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot, count: int
) -> None:
    fast_rules(name=RULES, **PACING)
    base = live_platform.url
    players = [Player(f"br{count}p{i}", new_page()) for i in range(count)]
    for player in players:
        sign_up(player, base)
        open_lobby(player, base)
    first, *others = players
    shot(first.page, "lobby")

    room = open_room(first, name=f"Browser table {count}", rules=RULES, seats=count)
    shot(first.page, "table-waiting")
    for player in others:
        join_from_list(player, room)
    for player in players:
        expect(player.testid("seat")).to_have_count(count, timeout=PAGE)
        expect(player.page.locator("[data-testid=seat][data-me=true]")).to_have_count(1)
        press_ready(player)

    hands = {p.name: wait_for_hand(p) for p in players}
    shot(first.page, "dealt-hand")
    config = round_config(room)
    for player in players:
        answer_special(player)  # a special hand (rare): "No", arranged like any hand
        place(player, best_rows(hands[player.name], config), drag=1 if player is not first else 2)
        if player is first:
            shot(first.page, "arranged")
        submit(player)

    expect(first.testid("compare-panel")).to_be_visible(timeout=SERVER)
    shot(first.page, "compare")
    deltas = check_settlement(players, room)
    assert sorted(deltas) == list(range(count))
    shot(first.page, "settlement")
    shot(players[-1].page, "settlement-last-player")


def test_reload_mid_arrange_restores_the_draft(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    a, b = Player("reload_a", new_page()), Player("reload_b", new_page())
    room = seat_and_ready([a, b], live_platform.url, rules=RULES, room_name="Reload table")
    hand = wait_for_hand(a)
    answer_special(a)
    rows = best_rows(hand, round_config(room))
    place_by_clicks(a, rows["back"], "back")
    draft_saved(a, room, {"back": rows["back"]})
    shot(a.page, "before-reload")

    # A reload: the page continues from its stored view (sessionStorage) and the events since.
    a.page.reload()
    expect(a.testid("connection-state")).to_have_attribute("data-state", "live", timeout=SERVER)
    assert_rows(a, {"front": [], "middle": [], "back": rows["back"]})
    expect(a.page.locator("[data-testid=hand] [data-card]")).to_have_count(8, timeout=PAGE)
    shot(a.page, "after-reload")

    # Without the stored view (as in a new tab) the snapshot's draft restores the same rows.
    a.page.evaluate(
        "() => { sessionStorage.clear();"
        " window.addEventListener('pagehide', () => sessionStorage.clear()); }"
    )
    a.page.reload()
    expect(a.testid("connection-state")).to_have_attribute("data-state", "live", timeout=SERVER)
    assert_rows(a, {"front": [], "middle": [], "back": rows["back"]})
    assert sorted(cards_in(a, "hand")) == sorted(rows["front"] + rows["middle"])

    place(a, rows, drag=1)
    submit(a)
    play_hand(b, room)
    check_settlement([a, b], room)
    shot(a.page, "settlement")


def test_player_who_never_acts_is_auto_arranged(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **{**PACING, "arrange_seconds": 12})
    a, b = Player("active_a", new_page()), Player("idle_b", new_page())
    room = seat_and_ready([a, b], live_platform.url, rules=RULES, room_name="Idle table")
    wait_for_hand(a)
    answer_special(a)
    apply_best_suggestion(a)
    submit(a)

    wait_for_hand(b)
    # B does nothing; a special hand left unanswered is played as one (no arrangement then).
    b_special = b.testid("special-dialog").is_visible()
    shot(b.page, "idle")
    if not b_special:
        expect(b.testid("auto-notice")).to_be_visible(timeout=SERVER)
        expect(b.testid("auto-notice")).to_contain_text("已自动理牌")
    check_settlement([a, b], room)
    shot(b.page, "settlement-idle")
    idle = RoundPlayer.objects.get(round__table__room=room, user=b.user)
    assert idle.auto == "timeout"
    assert RoundPlayer.objects.get(round__table__room=room, user=a.user).auto == ""


def test_fouled_arrangement_is_flagged_then_fixed(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    a, b = Player("foul_a", new_page()), Player("foul_b", new_page())
    room = seat_and_ready([a, b], live_platform.url, rules=RULES, room_name="Foul table")
    hand = wait_for_hand(a)
    answer_special(a)
    config = round_config(room)
    fouled, bad = fouled_rows(hand, config)
    assert "front" in bad
    for row in ("front", "middle", "back"):
        place_by_clicks(a, fouled[row], row)
    warning = a.testid("foul-warning")
    expect(warning).to_be_visible(timeout=PAGE)
    expect(warning).to_have_attribute("data-rows", ",".join(bad))
    expect(a.testid("submit-button")).to_be_disabled()
    for row in bad:
        expect(a.page.locator(f".row-zone[data-row={row}]")).to_have_class(re.compile(r"\bfoul\b"))
    shot(a.page, "foul")

    a.testid("reset").click()
    expect(a.page.locator("[data-testid=hand] [data-card]")).to_have_count(13, timeout=PAGE)
    expect(warning).to_be_hidden()
    place(a, best_rows(hand, config), drag=1)
    shot(a.page, "fixed")
    submit(a)
    play_hand(b, room)
    check_settlement([a, b], room)

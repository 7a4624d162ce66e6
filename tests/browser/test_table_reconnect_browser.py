"""A dropped connection forgiven (RULES.md §9), in Chromium against the live platform: a player
arranges against a bot, loses the table's socket for 10 s while the bot submits, and comes
back within a second of the network returning. The hand played for it is its saved draft
when complete and foul-free, else the engine's best; it is no escaper (no penalty, still
seated) and sees the settlement with Ready. Bots are fast (BOT_DELAY_SCALE).

The drop is real: the page's sockets are closed from the page (the server sees the close),
the context goes offline, and while it lasts a new socket cannot reach the server.
"""

from __future__ import annotations

import random
import time
from collections.abc import Sequence

import pytest
from playwright.sync_api import expect

from accounts.models import Transaction
from games.models import Round, RoundPlayer
from games.rules.cards import format_cards, parse_cards
from games.rules.hands import evaluate, foul_rows
from games.table.state import SeatState
from lobby.models import Room
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    SOCKET_HOOK,
    Player,
    answer_special,
    best_rows,
    draft_saved,
    network_drop,
    network_return,
    open_bot_room,
    open_lobby,
    page_deltas,
    place,
    press_ready,
    round_config,
    sign_up,
    wait_for_hand,
)
from tests.games.table_helpers import fast_rules, state_of
from tests.live_server import LivePlatform, wait_until

pytestmark = [pytest.mark.django_db(transaction=True)]

RULES = "Reconnect (browser)"
DROP_SECONDS = 10
live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})


def my_seat(player: Player, room: Room) -> SeatState:
    assert player.user is not None
    return next(s for s in state_of(room).seats if s.player == str(player.user.pk))


def fair_other_rows(hand: Sequence[str], room: Room) -> dict[str, list[str]]:
    """A complete arrangement with no foul that is not the engine's best (so the hand played
    shows whose it was)."""
    config = round_config(room)
    best = best_rows(hand, config)
    cards = list(parse_cards(list(hand)))
    rng = random.Random(9)
    for _attempt in range(2000):
        rng.shuffle(cards)
        front, middle, back = cards[:3], cards[3:8], cards[8:]
        a2345 = config.a2345
        if foul_rows(evaluate(front, a2345), evaluate(middle, a2345), evaluate(back, a2345)):
            continue
        rows = {
            "front": format_cards(front),
            "middle": format_cards(middle),
            "back": format_cards(back),
        }
        if any(sorted(rows[r]) != sorted(best[r]) for r in rows):
            return rows
    raise AssertionError(f"no other fair arrangement found for {hand}")


def seated_with_a_bot(
    live_platform: LivePlatform, new_page: NewPage, name: str
) -> tuple[Player, Room]:
    fast_rules(name=RULES, **PACING)
    page = new_page(viewport=DESKTOP)
    page.context.add_init_script(SOCKET_HOOK)
    player = Player(name, page)
    sign_up(player, live_platform.url)
    open_lobby(player, live_platform.url)
    room = open_bot_room(player, name=f"{name}'s room", rules=RULES)
    press_ready(player)
    return player, room


def drop_until_played(player: Player, room: Room) -> float:
    """Close the page's sockets and stay offline for DROP_SECONDS, and until the hand has been
    played for the player; then the network returns. Returns how long the page took to be
    live again (seconds)."""
    page = player.page
    network_drop(page)
    expect(player.testid("connection-state")).to_have_attribute("data-state", "reconnecting")
    dropped = time.monotonic()
    me = my_seat(player, room)
    wait_until(
        "the server to see the drop",
        lambda: not state_of(room).seat(me.position).connected,
        seconds=10,
    )
    wait_until(
        "the hand to be played for the player",
        lambda: state_of(room).phase.value not in ("dealing", "special_choice", "arranging"),
        seconds=DROP_SECONDS + 20,
    )
    time.sleep(max(0.0, DROP_SECONDS - (time.monotonic() - dropped)))
    back = time.monotonic()
    network_return(page)
    expect(player.testid("connection-state")).to_have_attribute("data-state", "live", timeout=PAGE)
    return time.monotonic() - back


def forgiven(player: Player, room: Room) -> RoundPlayer:
    """Back in time: the settlement with Ready, no penalty, still seated. Returns the
    player's round."""
    page_deltas(player)
    expect(player.testid("ready-button")).to_be_visible(timeout=PAGE)
    expect(player.page.locator("[data-testid=seat][data-me=true]")).to_have_count(1)
    round_ = wait_until(
        "the round to be settled",
        lambda: Round.objects.filter(table__room=room, settled_at__isnull=False).first(),
        seconds=30,
    )
    mine = round_.players.get(user=player.user)
    assert mine.auto == "hosted", mine.auto
    assert not mine.escaped and mine.penalty == 0
    assert not Transaction.objects.filter(idempotency_key__contains=":penalty:").exists()
    assert my_seat(player, room) is not None
    return mine


def played_rows(mine: RoundPlayer) -> dict[str, list[str]]:
    arrangement = mine.arrangement or {}
    return {r: sorted(arrangement.get(r, [])) for r in ("front", "middle", "back")}


def test_the_saved_draft_is_played_for_a_player_back_after_a_10_s_drop(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    player, room = seated_with_a_bot(live_platform, new_page, "drop-dana")
    hand = wait_for_hand(player)
    answer_special(player)
    rows = fair_other_rows(hand, room)
    place(player, rows, drag=0)
    draft_saved(player, room, rows)
    took = drop_until_played(player, room)
    assert took < 1.5, f"live again {took:.1f} s after the network returned"
    mine = forgiven(player, room)
    assert played_rows(mine) == {r: sorted(c) for r, c in rows.items()}
    shot(player.page, "back-to-the-settlement")


def test_the_best_arrangement_is_played_when_no_card_was_placed(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    player, room = seated_with_a_bot(live_platform, new_page, "drop-dora")
    hand = wait_for_hand(player)
    answer_special(player)
    took = drop_until_played(player, room)
    assert took < 1.5, f"live again {took:.1f} s after the network returned"
    mine = forgiven(player, room)
    best = best_rows(hand, round_config(room))
    assert played_rows(mine) == {r: sorted(c) for r, c in best.items()}
    player.page.set_viewport_size(PHONE)
    panel = player.testid("settlement-panel")
    expect(panel).to_be_visible(timeout=PAGE)
    width = player.page.evaluate("() => document.documentElement.scrollWidth")
    assert width <= PHONE["width"], f"the page is {width} px wide at 390 px"
    expect(player.testid("ready-button")).to_be_in_viewport(timeout=PAGE)
    shot(player.page, "back-on-a-phone")

"""The table fee at the table: with a fee set in the economy settings, the settlement panel of
the real table (its socket, bots and timers) shows each winner's fee in a Table fee column and
totals of delta − fee, and the balance the page shows after it is the ledger's. The wallet API
is blocked, so that the balance shown is the page's own sum (what it falls back to); rounds are
played until the player wins one and pays a fee (three at most, each checked in full)."""

from __future__ import annotations

from typing import Any

import pytest
from playwright.sync_api import expect

from accounts.models import EconomySettings, Entry
from accounts.selectors import wallet_balance
from accounts.services import economy_settings_get_or_create
from games.models import Round
from lobby.models import Room
from tests.browser.conftest import DESKTOP, NewPage, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    SERVER,
    Player,
    answer_special,
    apply_best_suggestion,
    open_bot_room,
    open_lobby,
    press_ready,
    sign_up,
    submit,
    wait_for_hand,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform, wait_until

pytestmark = pytest.mark.django_db(transaction=True)

FEE_PERCENT = 10

live_platform = module_platform()


def test_the_settlement_shows_the_table_fee_and_the_balance_is_the_ledgers(
    live_platform: LivePlatform, new_page: NewPage
) -> None:
    economy_settings_get_or_create()
    EconomySettings.objects.update(table_fee_percent=FEE_PERCENT)
    fast_rules(name="Fee rules", **PACING)
    me = Player("fee_player", new_page(viewport=DESKTOP))
    sign_up(me, live_platform.url)
    assert me.user is not None
    open_lobby(me, live_platform.url)
    room = open_bot_room(me, name="Fee table", rules="Fee rules", seats=4, bots=3)
    me.page.route("**/api/wallet/", lambda route: route.abort())
    # Up to three rounds, until I win one and pay a fee (each round is checked in full).
    for number in (1, 2, 3):
        before = wallet_balance(user=me.user)
        mine = play_and_check(me, room, number, before)
        if mine["fee"]:
            break


def play_and_check(me: Player, room: Room, number: int, before: int) -> dict[str, Any]:
    """Play round ``number`` at the table, check its settlement panel and the balance shown
    against the stored round and the ledger; my line of the stored result."""
    assert me.user is not None
    press_ready(me)
    wait_for_hand(me)
    answer_special(me)
    apply_best_suggestion(me)
    submit(me)

    panel = me.testid("settlement-panel")
    expect(panel).to_be_visible(timeout=SERVER)
    round_ = wait_until(
        "the round to be settled",
        lambda: Round.objects.filter(
            table__room=room, number=number, settled_at__isnull=False
        ).first(),
        seconds=30,
    )
    assert round_.result["fee_percent"] == FEE_PERCENT
    players = {p["position"]: p for p in round_.result["players"]}
    assert any(p["fee"] for p in players.values()), "somebody won"
    expect(panel.get_by_role("columnheader", name="Table fee")).to_be_visible(timeout=PAGE)
    expect(panel.get_by_test_id("settlement-fee")).to_have_count(len(players), timeout=PAGE)
    shown = panel.get_by_test_id("settlement-fee").evaluate_all(
        "els => els.map(e => [Number(e.dataset.position), Number(e.dataset.fee)])"
    )
    assert dict(shown) == {pos: p["fee"] for pos, p in players.items()}
    totals = panel.get_by_test_id("settlement-delta").evaluate_all(
        "els => els.map(e => [Number(e.dataset.position), Number(e.dataset.net), e.textContent])"
    )
    for position, net, text in totals:
        assert net == players[position]["delta"] - players[position]["fee"], position
        assert int(text.replace(",", "").replace("+", "").replace("−", "-")) == net

    # The wallet moved by delta − fee in the ledger, and the page's balance is the ledger's.
    mine = next(p for p in players.values() if int(p["id"]) == me.user.pk)
    moved = sum(
        Entry.objects.filter(
            account__user=me.user, transaction__reference=f"round:{round_.pk}"
        ).values_list("amount", flat=True)
    )
    after = wallet_balance(user=me.user)
    assert moved == mine["delta"] - mine["fee"] == after - before
    expect(me.testid("my-balance")).to_have_attribute("data-balance", str(after), timeout=PAGE)
    return mine

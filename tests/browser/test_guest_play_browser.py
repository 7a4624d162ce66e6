"""Guest play in Chromium: a stranger taps the front page's Play now once, is a guest seated
with bots, plays a round to its end; the header names the guest and calls to sign up; signing
up keeps the account, its coins and the round in its history — in English, and the header in
Chinese."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from accounts.models import Transaction, User
from accounts.selectors import wallet_balance
from accounts.services import GUEST_NAME_PREFIX, guest_signup_topup
from games.models import Round
from lobby.models import Seat
from tests.browser.conftest import NewPage, Shot
from tests.browser.table_flow import (
    PAGE,
    PASSWORD,
    PLAY_PHASES,
    SERVER,
    Player,
    answer_special,
    page_deltas,
    press_ready,
    submit,
    switch_language,
    wait_for_table,
)
from tests.browser.test_front_page_browser import patient_default_rules
from tests.live_server import LivePlatform, wait_until

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stranger_plays_as_a_guest_in_one_tap_then_signs_up_and_keeps_the_round(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    patient_default_rules()
    base = live_platform.url
    page = new_page()
    page.goto(f"{base}/")
    expect(page.get_by_test_id("header-guest")).to_have_count(0)
    shot(page, "home-stranger")

    # One tap: a guest, seated at a full table with bots.
    page.get_by_test_id("home-play-now").click()
    player = Player("guest", page)
    wait_for_table(player)
    guest = User.objects.get(is_guest=True)
    player.user = guest
    assert guest.username.startswith(GUEST_NAME_PREFIX)
    seat = Seat.objects.select_related("room").get(user=guest)
    room = seat.room
    assert page.url == f"{base}/games/table/{room.pk}/"
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == room.seats - 1
    header = page.get_by_test_id("header-guest")
    expect(header).to_have_text(f"Guest: {guest.username}")
    expect(page.get_by_test_id("guest-signup")).to_have_text("Sign up to keep your coins")
    granted = wallet_balance(user=guest)
    assert granted > 0
    shot(page, "guest-at-the-table")

    # A first round, played to its end. The hand opens laid out as the best suggestion.
    press_ready(player)
    expect(player.testid("phase")).to_have_attribute("data-phase", PLAY_PHASES, timeout=SERVER)
    answer_special(player)
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(0, timeout=PAGE)
    submit(player)
    deltas = page_deltas(player)
    played = wait_until(
        "the round to be settled",
        lambda: Round.objects.filter(table__room=room, settled_at__isnull=False).first(),
        seconds=30,
    )
    mine = played.players.get(user=guest)
    assert deltas[mine.position] == mine.delta
    after_round = wallet_balance(user=guest)
    assert after_round == granted + mine.delta
    expect(player.testid("my-balance")).to_have_attribute(
        "data-balance", str(after_round), timeout=PAGE
    )
    shot(page, "guest-round-settled")

    # The header's call to sign up: the guest's name offered, the coins kept.
    topup = guest_signup_topup(user=guest)
    page.get_by_test_id("guest-signup").click()
    page.wait_for_url(re.compile(r"/accounts/signup/$"), timeout=PAGE)
    form = page.locator("form.form")
    expect(form.locator("input[name=username]")).to_have_value(guest.username)
    expect(page.get_by_test_id("guest-signup-lead")).to_contain_text(f"{after_round:,} coins")
    shot(page, "guest-sign-up")
    form.locator("input[name=username]").fill("keeper")
    form.locator("input[name=password1]").fill(PASSWORD)
    form.locator("input[name=password2]").fill(PASSWORD)
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/accounts/profile/", timeout=PAGE)

    user = User.objects.get(pk=guest.pk)
    assert user.username == "keeper" and not user.is_guest
    assert wallet_balance(user=user) == after_round + topup
    expect(page.get_by_test_id("header-guest")).to_have_count(0)
    expect(page.locator("[data-header-balance]")).to_have_text(f"{after_round + topup:,}")
    # The round is in the history, with the same coins won or lost.
    page.goto(f"{base}/games/history/")
    row = page.locator(f"tr[data-round='{played.pk}']")
    expect(row).to_be_visible(timeout=PAGE)
    coins = row.locator("td.number").nth(1)  # water, coins, escape penalty
    expect(coins).to_have_text(f"{'+' if mine.delta > 0 else ''}{mine.delta:,}")
    shot(page, "history-after-sign-up")
    # Its settlement still names this account's wallet, no other.
    settlement = Transaction.objects.get(idempotency_key=f"round:{played.pk}:settlement")
    if mine.delta:
        assert settlement.entries.get(account__user=user).amount == mine.delta


def test_the_guest_header_speaks_chinese(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    patient_default_rules()
    page = new_page(locale="zh-CN")
    page.goto(f"{live_platform.url}/")
    switch_language(page, "zh-hans")
    page.get_by_test_id("home-play-now").click()
    wait_for_table(Player("guest", page))
    guest = User.objects.get(is_guest=True)

    expect(page.get_by_test_id("header-guest")).to_have_text(f"游客：{guest.username}")
    expect(page.get_by_test_id("guest-signup")).to_have_text("注册以保留金币")
    shot(page, "guest-header-zh")

"""The tempo of a round with the platform's Standard pacing: the time from the
last Ready to a full hand on screen, and the comparison's length from the last Submit to the
settlement, measured in a real browser against the live platform and written to
test-output/<test>/tempo.json (the closing note quotes them). Timings are figures, not
assertions (this machine is shared and noisy); what is asserted is the server's own schedule:
the deal lasts 13 rounds of the deal interval, the comparison its script."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from playwright.sync_api import expect

from games.models import Round, RuleConfiguration
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from tests.browser.conftest import DESKTOP, NewPage
from tests.browser.table_flow import (
    PAGE,
    SERVER,
    Player,
    answer_special,
    apply_best_suggestion,
    join_from_list,
    open_lobby,
    open_room,
    sign_up,
)
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

BRISK_REVEAL_MS = 500  # games/migrations/0010_brisker_comparison
DEALT = (
    "() => document.querySelectorAll("
    "'[data-testid=hand] .card[data-card]:not(.undealt)').length === 13"
)


def test_standard_tempo_ready_to_hand_and_comparison(
    live_platform: LivePlatform, new_page: NewPage, test_output: Path
) -> None:
    config = RuleConfig.from_dict({"reveal_interval_ms": BRISK_REVEAL_MS}, base=DEFAULT_CONFIG)
    RuleConfiguration.from_engine(config, name="Standard tempo")
    players = [Player(f"tempo_{i}", new_page(viewport=DESKTOP)) for i in range(2)]
    for player in players:
        sign_up(player, live_platform.url)
        open_lobby(player, live_platform.url)
    first, second = players
    room = open_room(first, name="Tempo table", rules="Standard tempo", seats=2)
    join_from_list(second, room)
    first.testid("ready-button").click()
    expect(first.testid("ready-button")).to_be_hidden(timeout=PAGE)

    started = time.monotonic()
    second.testid("ready-button").click()
    for player in players:
        player.page.wait_for_function(DEALT, polling="raf", timeout=SERVER)
    ready_to_hand = time.monotonic() - started

    for player in players:
        answer_special(player)
        if player is second:
            break
        apply_best_suggestion(player)
        player.testid("submit-button").click()
    apply_best_suggestion(second)
    started = time.monotonic()
    second.testid("submit-button").click()
    for player in players:
        expect(player.testid("settlement-panel")).to_be_visible(timeout=SERVER)
    comparison = time.monotonic() - started

    round_ = Round.objects.get(table__room=room)
    figures = {
        "players": 2,
        "deal_interval_ms": config.deal_interval_ms,
        "reveal_interval_ms": config.reveal_interval_ms,
        "ready_to_full_hand_s": round(ready_to_hand, 2),
        "deal_scheduled_s": 13 * config.deal_interval_ms / 1000,
        "comparison_s": round(comparison, 2),
        "round": round_.pk,
    }
    (test_output / "tempo.json").write_text(json.dumps(figures, indent=2))
    print("tempo:", json.dumps(figures))
    # The deal played, not skipped (a skipped deal shows the hand at once). The page lays each
    # card at the server's time converted by its estimate of the clocks' skew, which can be a
    # few ms early: 1.5595 s against 1.56 scheduled in one CI run.
    assert ready_to_hand >= figures["deal_scheduled_s"] - 0.05

"""Duplicate matches in Chromium, on the live platform (daphne, a Celery worker and
its bots): a player opens a match from the lobby's form page, plays its deals at table 1
against a bot while a table of bots plays the same cards, and reads the results page, which
compares the player with the bot who held the same cards; another player sees the match's
table in the lobby with its badge; the results page in Chinese."""

from __future__ import annotations

import re

import pytest
from playwright.sync_api import expect

from games.models import DuplicateMatch, MatchStatus, Round, RuleConfiguration
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    SERVER,
    Player,
    open_lobby,
    page_deltas,
    play_hand,
    press_ready,
    sign_up,
    switch_language,
    wait_for_table,
)
from tests.games.table_helpers import fast_rules
from tests.live_server import LivePlatform, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

RULES = "Duplicate (browser)"
# Bots act at a tenth of their human-like delays.
live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})


def open_match(player: Player, base_url: str) -> DuplicateMatch:
    """The lobby's "Open a duplicate match…" button, then its form: 2 tables of 2, 2 deals,
    the other seats filled with bots."""
    open_lobby(player, base_url)
    player.testid("open-match-page").click()
    player.page.wait_for_url("**/lobby/create-match/", timeout=PAGE)
    form = player.page.locator("form[data-match-create]")
    form.locator("input[name=name]").fill("Friday duplicate")
    form.locator("select[name=rules]").select_option(
        str(RuleConfiguration.objects.get(name=RULES).pk)
    )
    form.locator("input[name=base_score]").fill("10")
    form.locator("select[name=tables]").select_option("2")
    form.locator("select[name=seats]").select_option("2")
    form.locator("input[name=deals]").fill("2")
    form.locator("input[name=bots]").set_checked(True)
    form.locator("select[name=bot_level]").select_option("normal")
    form.locator("button[type=submit]").click()
    wait_for_table(player)
    return DuplicateMatch.objects.get(owner=player.user)


def test_a_player_plays_a_duplicate_match_against_the_field_and_reads_the_results(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot
) -> None:
    fast_rules(name=RULES, **PACING)
    alice = Player("dup-alice", new_page(viewport=DESKTOP))
    sign_up(alice, live_platform.url)

    # Another player's lobby lists the match's table with a person, with its badge.
    viewer = Player("dup-viewer", new_page(viewport=PHONE))
    sign_up(viewer, live_platform.url)
    open_lobby(viewer, live_platform.url)

    match = open_match(alice, live_platform.url)
    one, two = match.rooms.order_by("match_table")
    assert alice.page.url.endswith(f"/games/table/{one.pk}/")
    chip = alice.testid("match-chip")
    expect(chip).to_contain_text("table 1 of 2")
    expect(chip).to_have_attribute("href", f"/games/matches/{match.pk}/")

    badge = viewer.page.locator(f'#lobby-rooms tr[data-room="{one.pk}"] [data-testid=match-badge]')
    expect(badge).to_have_text("Duplicate 1/2", timeout=PAGE)
    expect(badge).to_have_attribute("href", f"/games/matches/{match.pk}/")
    viewer.page.reload()  # … and as the server draws the page
    expect(badge).to_have_text("Duplicate 1/2", timeout=PAGE)

    for deal in (1, 2):
        press_ready(alice)
        play_hand(alice, one)
        deltas = page_deltas(alice)  # the settlement: both tables have revealed deal k
        assert len(deltas) == 2
        rounds = wait_until(
            f"deal {deal} to be settled at both tables",
            lambda deal=deal: (
                list(Round.objects.filter(table__room__match=match, number=deal))
                if Round.objects.filter(
                    table__room__match=match, number=deal, settled_at__isnull=False
                ).count()
                == 2
                else None
            ),
            seconds=60,
        )
        # Both tables were dealt the same cards, seat for seat.
        by_table = {r.table.room_id: {p.position: p.cards for p in r.players.all()} for r in rounds}
        assert by_table[one.pk] == by_table[two.pk]
        shot(alice.page, f"settled-deal-{deal}")

    # The match is over: no Ready any more, the status line says so.
    expect(alice.testid("ready-button")).to_be_hidden(timeout=PAGE)
    expect(alice.page.locator("#status-line")).to_contain_text("match is over", timeout=SERVER)
    match.refresh_from_db()
    wait_until(
        "the match to finish",
        lambda: DuplicateMatch.objects.filter(pk=match.pk, status=MatchStatus.FINISHED).exists(),
        seconds=30,
    )

    # The results page: the standings, both deals, alice's rows, the seed with its check.
    results = alice.page.context.new_page()
    results.goto(f"{live_platform.url}/games/matches/{match.pk}/")
    expect(results.get_by_test_id("match-status")).to_have_text("Finished", timeout=PAGE)
    expect(results.locator("[data-testid=match-standings] tbody tr")).to_have_count(4)
    expect(results.get_by_test_id("my-standing")).to_be_visible()
    expect(results.get_by_test_id("match-deal")).to_have_count(2)
    expect(results.get_by_test_id("my-entry")).to_have_count(2)
    match.refresh_from_db()
    expect(results.get_by_test_id("seed")).to_have_text(match.seed)
    # Each of alice's hands is compared with the bot of table 2 who held the same cards.
    for section in results.get_by_test_id("match-deal").all():
        hand = section.locator(".match-hand").filter(has=results.get_by_test_id("my-entry"))
        expect(hand.locator("tbody tr")).to_have_count(2)
        expect(hand.locator('tbody tr[data-table="2"] .bot-tag')).to_be_visible()
    shot(results, "results")

    switch_language(results, "zh-hans")
    expect(results.locator("h2").first).to_have_text("排名")
    expect(results.get_by_test_id("match-status")).to_have_text("已结束")
    results.set_viewport_size(PHONE)
    shot(results, "results-zh-phone")
    assert re.search(r"复式赛", results.title())

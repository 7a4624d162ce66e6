"""Variant rooms in a real browser against the live platform: a person opens a room
of every rule preset (RULES.md §12.6, and the 78-card deck of six) from the lobby, fills it
with bots, and plays a round to a settlement. The page's settlement is the one the database,
the ledger and support's recomputation hold.

One platform for the module (daphne and a Celery worker with beat: the bots act through their
tasks, at a tenth of their human pace); each test starts from an empty database.
"""

from __future__ import annotations

import pytest
from playwright.sync_api import expect

from accounts.selectors import wallet_balance
from games.history.audit import round_verify
from games.models import Round, RuleConfiguration
from games.rules.cards import parse_cards
from games.rules.config import RuleConfig
from games.rules.presets import PRESETS
from games.table.suggest import suggestions
from lobby.models import Seat
from lobby.services import room_leave
from tests.browser.conftest import NewPage, Shot, module_platform
from tests.browser.table_flow import (
    PACING,
    PAGE,
    SERVER,
    Player,
    answer_special,
    apply_best_suggestion,
    open_lobby,
    page_deltas,
    press_ready,
    sign_up,
    submit,
    wait_for_hand,
    wait_for_table,
)
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
]

DECKS: dict[str, RuleConfig] = {p.id: p.config for p in PRESETS.values()}
DECKS["two_extra_suits"] = RuleConfig(extra_suits=2)


live_platform = module_platform({"BOT_DELAY_SCALE": "0.1"})


def zone_cards(player: Player, zone: str) -> list[str]:
    return [
        str(c)
        for c in player.page.locator(f"[data-testid={zone}] [data-card]").evaluate_all(
            "els => els.map(e => e.dataset.card)"
        )
    ]


def fresh_swap(hand: list[str], tray: list[str], config: RuleConfig, opponents: int) -> str:
    """A card of the hand whose swap for ``tray[0]`` makes a tray that no suggestion of the
    deal sets aside: the page then asks `suggest` for the 13 kept (with a tray that one of
    them sets aside, it shows the deal's list again, as it should, and asks nothing)."""
    deal = suggestions(parse_cards([*hand, *tray], deck=config.deck), config, opponents)
    aside = {frozenset(s["unused"]) for s in deal}
    for card in hand:
        if frozenset([card, *tray[1:]]) not in aside:
            return card
    raise AssertionError(f"every swap for {tray[0]} gives a tray the deal suggests: {aside}")


# What the jokers matched by a selector stand for, sorted (a JavaScript function of it).
ROW_STANDS = """(selector) => Array.from(document.querySelectorAll(selector))
    .map((e) => e.dataset.stands || "").sort()"""


def tap(player: Player, card: str) -> None:
    """A tap on a card of the hand or the tray (its top-left corner, visible in a fan)."""
    player.page.locator(f"#arrange [data-card='{card}']").click(position={"x": 6, "y": 6})


@pytest.mark.parametrize("key", sorted(DECKS))
def test_a_room_of_each_preset_filled_with_bots_plays_to_a_settlement(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot, key: str
) -> None:
    default_rules()
    config = RuleConfig.from_dict({**DECKS[key].to_dict(), **PACING})
    rules = RuleConfiguration.from_engine(config, name=f"Browser {key}")
    seats = config.max_seats
    base = live_platform.url
    player = Player(f"v{key}"[:20], new_page())
    sign_up(player, base)
    open_lobby(player, base)

    form = player.page.locator("form[data-action='room.create']")
    form.locator("input[name=name]").fill(f"Variant {key}")
    form.locator("select[name=rules]").select_option(str(rules.pk))
    form.locator("select[name=seats]").select_option(str(seats))
    form.locator("select[name=bots]").select_option(str(seats - 1))
    form.locator("input[name=private]").set_checked(False)
    form.locator("button[type=submit]").click()
    wait_for_table(player)
    expect(player.testid("seat")).to_have_count(seats, timeout=SERVER)

    press_ready(player)
    hand = wait_for_hand(player)
    answer_special(player)  # a special hand: "No", arranged like any hand
    swapped_out = None
    if config.spare_cards:
        # 多三张: a card of the tray swapped (two taps) for one of the hand; the suggestions
        # asked for the 13 now kept are the ones applied.
        tray = zone_cards(player, "tray")
        assert len(tray) == 3 and len(set(hand) | set(tray)) == 16
        swapped_out = fresh_swap(hand, tray, config, opponents=seats - 1)
        tap(player, tray[0])
        tap(player, swapped_out)
        expect(
            player.page.locator(f"[data-testid=tray] [data-card='{swapped_out}']")
        ).to_be_visible(timeout=PAGE)
        kept = sorted(zone_cards(player, "hand"))
        player.page.wait_for_function(  # the answer to `suggest`: it sets nothing aside
            """() => {
                const first = document.querySelector('[data-testid=suggestion]');
                return first !== null && !first.querySelector('.sg-aside') &&
                    document.querySelector('.sg-waiting') === null;
            }""",
            timeout=SERVER,
        )
    apply_best_suggestion(player)
    if swapped_out is not None:  # the rows hold the 13 kept; the tray still the swapped card
        rows = [c for r in ("front", "middle", "back") for c in zone_cards(player, f"row-{r}")]
        assert sorted(rows) == kept
        assert swapped_out in zone_cards(player, "tray")
    if config.jokers:
        # 癞子: a joker of the hand, if dealt one, taken back and placed by hand again.
        placed = player.page.locator(
            "[data-testid^=row-] [data-card=RJ], [data-testid^=row-] [data-card=BJ]"
        )
        if placed.count():
            joker = placed.first
            card = joker.get_attribute("data-card")
            row = joker.evaluate("e => e.closest('[data-testid^=row-]').dataset.testid")
            in_row = f"[data-testid={row}] [data-card=RJ], [data-testid={row}] [data-card=BJ]"
            stands = player.page.evaluate(ROW_STANDS, in_row)
            joker.dblclick()
            expect(player.page.locator(f"[data-testid=hand] [data-card={card}]")).to_be_visible(
                timeout=PAGE
            )
            tap(player, card)
            player.testid(row).click()
            # The row stands for the same cards again (as a set: which of two jokers takes which
            # value is the red-joker rule's, tested in tests/games/test_cards_js_variants.py).
            player.page.wait_for_function(
                f"""([selector, expected]) =>
                    JSON.stringify(({ROW_STANDS})(selector)) === JSON.stringify(expected)""",
                arg=[in_row, stands],
                timeout=PAGE,
            )
    shot(player.page, "arranged")
    submit(player)

    expect(player.testid("compare-panel")).to_be_visible(timeout=SERVER)
    deltas = page_deltas(player)
    shot(player.page, "settlement")
    round_ = wait_until(
        "the round to be settled",
        lambda: (
            Round.objects.filter(table__room__name=f"Variant {key}", settled_at__isnull=False)
            .order_by("-number")
            .first()
        ),
        seconds=30,
    )
    stored = {rp.position: rp.delta for rp in round_.players.all()}
    assert len(stored) == seats and deltas == stored
    assert sum(deltas.values()) == 0
    if swapped_out is not None:
        mine = round_.players.get(user=player.user)
        assert swapped_out in mine.unused.split()  # the card swapped out was set aside
    report = round_verify(round_=round_)
    assert report.mismatches == [] and report.commitment_ok
    assert player.user is not None
    expect(player.testid("my-balance")).to_have_attribute(
        "data-balance", str(wallet_balance(user=player.user)), timeout=PAGE
    )
    # The person leaves (the round is settled: no escape), and the bots with her: nothing is
    # left acting on the platform when the test's database is emptied.
    room_leave(user=player.user)
    wait_until(
        "the bots to leave",
        lambda: not Seat.objects.filter(room__name=f"Variant {key}").exists(),
        seconds=30,
    )

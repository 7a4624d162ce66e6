"""The table page with the variant decks (RULES.md §12): five and six seats on a
desktop and a phone with nothing off-screen while arranging; a joker placed in a row showing
what it stands for; spare cards (多三张) swapped with the hand by taps and by drag and drop,
13 submitted with the 3 set aside, and the set-aside cards shown at the reveal and in the
settlement. The page is the real one; its socket is served by the pure table machine
(tests/browser/mock_table.py, answering ``suggest`` as the consumer does), so the hands are
the test's choice.
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from playwright.sync_api import Locator, Page, expect

from games.models import RuleConfiguration
from games.rules.arrange import arrange
from games.rules.cards import Card, Deck, parse_cards
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.table import machine
from games.table.deck import deal_order
from games.table.perspective import delivered
from games.table.suggest import kept_suggestions
from lobby.models import Room
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
from tests.browser.table_flow import PAGE, Player, sign_up
from tests.games.table_helpers import default_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

NO_SPECIALS = {"specials": {sid: {"enabled": False} for sid in SPECIAL_IDS}}
PACE = {"reveal_interval_ms": 300, "deal_interval_ms": 5, "arrange_seconds": 120}
ROWS = ("front", "middle", "back")


def variant(**settings: object) -> RuleConfig:
    return RuleConfig.from_dict({**NO_SPECIALS, **PACE, **settings}, base=DEFAULT_CONFIG)


FULL = Deck(extra_suits=2, jokers=2)  # every card name there is


def cards(text: str | list[str]) -> tuple[Card, ...]:
    return parse_cards(text.split() if isinstance(text, str) else text, deck=FULL)


class VariantTable(MockTable):
    """The mock table, dealing any configured deck and answering ``suggest`` with the
    engine's suggestions for the 13 cards named (as the consumer does)."""

    def __init__(
        self, page: Page, players: Sequence[str], config: RuleConfig, capacity: int
    ) -> None:
        super().__init__(page, players, config, capacity=capacity)
        self.page = page
        self.unanswered = False  # `suggest` recorded, never answered

    def _message(self, raw: str | bytes) -> None:
        message = json.loads(raw)
        if message.get("type") == "draft":
            # Kept as the consumer keeps it, so a reload's snapshot restores it.
            self.received.append(message)
            self.do(machine.save_draft, position=self.position, draft=message["draft"])
            self.send({"type": "ok", "id": message["id"], "action": "draft"})
            return
        if message.get("type") != "suggest":
            super()._message(raw)
            return
        self.received.append(message)
        if self.unanswered:  # as if the socket dropped before the answer
            return
        kept = cards(message["cards"])
        found = kept_suggestions(self.game.state, position=self.position, cards=kept)
        self.send(
            {
                "type": "suggestions",
                "id": message["id"],
                "cards": message["cards"],
                "suggestions": found,
            }
        )

    def deal_hands(self, hands: Mapping[int, Sequence[Card]], seed: int = 5) -> None:
        """Ready every seat and deal a deck of the round's configuration in which each seat
        of ``hands`` gets those cards (the others shuffled leftovers)."""
        self.game.now = time.time()
        for s in self.game.state.seats:
            if not s.ready:
                self.push(self.game.do(machine.ready, position=s.position))
        config = self.game.state.config
        order = deal_order([s.position for s in self.game.state.round_seats], 0)
        size = config.hand_size
        used = {c for hand in hands.values() for c in hand}
        rest = [c for c in config.deck.cards if c not in used]
        random.Random(seed).shuffle(rest)
        leftovers = iter(rest)
        deck: list[Card] = []
        for k in range(size):
            for position in order:
                deck.append(hands[position][k] if position in hands else next(leftovers))
        deck.extend(leftovers)
        self.push(self.game.deal(deck=deck))

    def submit_sent(self) -> dict[str, Any]:
        """Apply what the page submitted to the machine; the message."""
        wait_for(self.page, lambda: self.sent("submit"))
        (message,) = self.sent("submit")
        fields = {r: cards(message[r]) for r in ROWS}
        if "unused" in message:
            fields["unused"] = cards(message["unused"])
        self.do(machine.submit, position=self.position, **fields)
        return message

    def others_submit_best(self) -> None:
        config = self.game.state.config
        for s in self.game.state.round_seats:
            if s.position == self.position or s.done:
                continue
            assert s.hand is not None
            best = arrange(s.hand, config).suggestions[0]
            extra = {"unused": best.unused} if config.spare_cards else {}
            self.do(
                machine.submit,
                position=s.position,
                front=best.front,
                middle=best.middle,
                back=best.back,
                **extra,
            )


def wait_for(page: Page, check: Any, seconds: float = 10.0) -> Any:
    """Poll ``check`` while Playwright runs (its socket routes are served only then)."""
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = check()
        if value:
            return value
        page.wait_for_timeout(50)
    raise AssertionError("timed out")


# One platform for the module (it only serves the pages: every table socket here is the
# test's); each test starts from an empty database.
live_platform = module_platform()


@pytest.fixture
def player(live_platform: LivePlatform, new_page: NewPage) -> Player:
    default_rules()
    player = Player("variant_player", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    return player


def open_variant_table(
    player: Player, base_url: str, config: RuleConfig, seats: int
) -> VariantTable:
    """A room of ``seats`` with these rules, the player at seat 0, guests in the others."""
    assert player.user is not None
    rules = RuleConfiguration.from_engine(config, name=f"variant {uuid.uuid4().hex[:10]}")
    room: Room = room_create(
        owner=player.user, base_score=100, seats=seats, name="Variant table", rules=rules
    )
    players = [str(player.user.pk)] + [f"guest-{i}" for i in range(1, seats)]
    table = VariantTable(player.page, players, config, capacity=seats)
    player.page.goto(f"{base_url}/games/table/{room.pk}/")
    expect(player.page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    return table


def on_screen(page: Page, locator: Locator, count: int | None = None) -> None:
    """Each element is drawn wholly inside the viewport, the page scrolled to the top."""
    if count is not None:
        expect(locator).to_have_count(count, timeout=PAGE)
    page.evaluate("window.scrollTo(0, 0)")
    size = page.viewport_size
    assert size is not None
    boxes = locator.evaluate_all(
        """els => els.map(e => {
            const r = e.getBoundingClientRect();
            return [e.dataset.card || e.dataset.position || e.dataset.testid || e.id,
                    r.left, r.top, r.right, r.bottom, r.width];
        })"""
    )
    assert boxes, "nothing to check"
    for name, left, top, right, bottom, width in boxes:
        assert width > 0, f"{name} is not drawn"
        assert left >= -0.5 and top >= -0.5, (name, left, top)
        assert right <= size["width"] + 0.5 and bottom <= size["height"] + 0.5, (
            name,
            right,
            bottom,
            size,
        )


def no_horizontal_overflow(page: Page) -> None:
    width = page.viewport_size["width"] if page.viewport_size else 0
    scroll_width = page.evaluate("document.documentElement.scrollWidth")
    assert scroll_width <= width, f"the page is {scroll_width} px wide in a {width} px viewport"


def hand_cards(page: Page, zone: str) -> list[str]:
    return page.locator(f"[data-testid={zone}] [data-card]").evaluate_all(
        "els => els.map(e => e.dataset.card)"
    )


def dealt(page: Page, count: int) -> None:
    """The deal is over and its animation played: ``count`` cards in the hand and tray."""
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "arranging", timeout=PAGE)
    expect(page.locator(".zone [data-card]:not(.undealt)")).to_have_count(count, timeout=PAGE)
    expect(page.locator(".zone .card.dealt")).to_have_count(0, timeout=PAGE)


# ---- five and six seats ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seats", "extra_suits"), [(5, 1), (6, 2)], ids=["five-duoyise", "six-two-extra-suits"]
)
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_five_and_six_seats_fit_the_screen_while_arranging(
    player: Player,
    live_platform: LivePlatform,
    shot: Shot,
    seats: int,
    extra_suits: int,
    viewport: dict[str, int],
) -> None:
    page = player.page
    page.set_viewport_size(viewport)
    config = variant(extra_suits=extra_suits)
    table = open_variant_table(player, live_platform.url, config, seats)
    expect(page.get_by_test_id("seat")).to_have_count(seats, timeout=PAGE)
    no_horizontal_overflow(page)
    shot(page, "seated")
    table.deal_hands({})
    table.fire()  # the deal is over
    dealt(page, 13)
    # Every seat, every card, the suggestions' first and Submit: on screen, no scrolling.
    shot(page, "arranging")
    on_screen(page, page.get_by_test_id("seat"), seats)
    on_screen(page, page.locator(".zone [data-card]"), 13)
    on_screen(page, page.get_by_test_id("submit-button"), 1)
    on_screen(page, page.get_by_test_id("suggestion").first)
    no_horizontal_overflow(page)

    page.get_by_test_id("suggestion").first.click()
    expect(page.get_by_test_id("submit-button")).to_be_enabled(timeout=PAGE)
    on_screen(page, page.locator(".zone [data-card]"), 13)
    page.get_by_test_id("submit-button").click()
    table.submit_sent()
    table.others_submit_best()
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "comparing", timeout=PAGE)
    state = table.game.state
    assert state.deadline is not None
    expect(
        page.locator("[data-testid=seat] .mini-row[data-row=back] .card:not(.back)")
    ).to_have_count(5 * (seats - 1), timeout=PAGE)
    no_horizontal_overflow(page)
    shot(page, "compared")
    table.fire()  # settled
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    expect(page.get_by_test_id("settlement-delta")).to_have_count(seats)
    no_horizontal_overflow(page)
    shot(page, "settlement")


# ---- jokers (癞子) --------------------------------------------------------------------------

# Mine: the red joker completes the back row's royal straight flush (RJ = 10♠).
JOKER_ME = {
    "front": ["7C", "7D", "2H"],
    "middle": ["9H", "9C", "9D", "4C", "4D"],
    "back": ["AS", "KS", "QS", "JS", "RJ"],
}
# Seat 1: the black joker makes its back row an ace-high flush (BJ = A♥).
JOKER_OTHER = {
    "front": ["8C", "6D", "3C"],
    "middle": ["KC", "KD", "5C", "5S", "2S"],
    "back": ["BJ", "8H", "7H", "5H", "3H"],
}


def all_cards(rows: Mapping[str, Sequence[str]]) -> list[str]:
    return [c for r in ROWS for c in rows[r]]


# Near a card's top left corner, which every fan of cards leaves showing (the tray is fanned
# downwards on a phone).
CORNER = {"x": 10, "y": 10}


def click_card(page: Page, card: str) -> None:
    page.locator(f"#arrange [data-card='{card}']").click(position=CORNER)


def place_by_taps(page: Page, cards_: Sequence[str], row: str) -> None:
    for card in cards_:
        click_card(page, card)
    page.get_by_test_id(f"row-{row}").click()
    for card in cards_:
        expect(page.locator(f"[data-testid=row-{row}] [data-card='{card}']")).to_be_visible(
            timeout=PAGE
        )


def drag(page: Page, card: str, target: Locator, arrived: Locator) -> None:
    """Drag ``card`` with the mouse onto ``target`` and hover there until the page is ready
    to drop it there (``arrived`` shows: the card moved into a row, or the card to swap with
    highlighted), then drop (see tests/browser/table_flow.drag_card)."""
    source = page.locator(f"#arrange [data-card='{card}']")
    source.scroll_into_view_if_needed()
    start = source.bounding_box()
    assert start is not None
    x, y = start["x"] + CORNER["x"], start["y"] + CORNER["y"]
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 6, y + 6, steps=3)
    page.wait_for_timeout(150)
    end = target.bounding_box()
    assert end is not None
    x, y = end["x"] + CORNER["x"] + 4, end["y"] + CORNER["y"] + 4
    page.mouse.move(x, y, steps=10)
    for step in range(40):  # at most ~4 s
        page.mouse.move(x - 3 * (step % 2), y, steps=2)
        page.wait_for_timeout(100)
        if arrived.count():
            break
    page.mouse.up()


def test_a_joker_dragged_into_a_row_shows_what_it_stands_for(
    player: Player, live_platform: LivePlatform, shot: Shot
) -> None:
    page = player.page
    config = variant(jokers=2)
    table = open_variant_table(player, live_platform.url, config, 2)
    table.deal_hands({0: cards(all_cards(JOKER_ME)), 1: cards(all_cards(JOKER_OTHER))})
    table.fire()
    dealt(page, 13)
    place_by_taps(page, JOKER_ME["front"], "front")
    place_by_taps(page, JOKER_ME["middle"], "middle")
    # The front and the middle full, the page put the rest in the back: the joker is taken
    # back to the hand, to be dragged there.
    joker = page.locator("[data-testid=row-back] [data-card=RJ]")
    expect(page.locator("[data-testid=row-back] [data-card]")).to_have_count(5, timeout=PAGE)
    joker.dblclick()
    expect(page.locator("[data-testid=hand] [data-card=RJ]")).to_be_visible(timeout=PAGE)
    # In the hand a joker stands for nothing yet.
    expect(page.locator("[data-testid=hand] [data-card=RJ]")).not_to_have_attribute(
        "data-stands", "TS"
    )
    drag(page, "RJ", page.get_by_test_id("row-back"), joker)
    expect(joker).to_be_visible(timeout=PAGE)
    expect(joker).to_have_attribute("data-stands", "TS")
    expect(joker.locator(".stands")).to_have_text("=10♠")
    expect(page.locator(".row-zone[data-row=back] .row-cat")).to_have_text("Straight flush")
    expect(page.get_by_test_id("foul-warning")).to_be_hidden()
    shot(page, "joker-placed")

    # Back to the hand: it stands for nothing again; in the back row once more.
    joker.dblclick()
    expect(page.locator("[data-testid=hand] [data-card=RJ]")).to_be_visible(timeout=PAGE)
    expect(page.locator("[data-testid=hand] [data-card=RJ] .stands")).to_have_count(0)
    place_by_taps(page, ["RJ"], "back")
    expect(joker).to_have_attribute("data-stands", "TS")

    page.get_by_test_id("submit-button").click()
    message = table.submit_sent()
    assert sorted(message["back"]) == sorted(JOKER_ME["back"]) and "unused" not in message
    (arrangement,) = table.game.events("arrangement")[-1:]
    assert arrangement.payload["jokers"] == {"RJ": "TS"}
    table.do(machine.submit, position=1, **{r: cards(JOKER_OTHER[r]) for r in ROWS})
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "comparing", timeout=PAGE)
    # The opponent's joker at the reveal: the server's value.
    other = next(
        h
        for e in table.game.events("reveal")
        if e.payload["row"] == "back"
        for h in e.payload["hands"]
        if h["position"] == 1
    )
    assert other["jokers"] == {"BJ": "AH"}
    theirs = page.locator(
        "[data-testid=seat][data-position='1'] .mini-row[data-row=back] [data-card=BJ]"
    )
    expect(theirs).to_have_attribute("data-stands", "AH", timeout=PAGE)
    expect(joker).to_have_attribute("data-stands", "TS")
    shot(page, "joker-revealed")
    table.fire()  # settled
    panel = page.get_by_test_id("settlement-panel")
    expect(panel).to_be_visible(timeout=PAGE)
    expect(panel.locator("[data-card=RJ]")).to_have_attribute("data-stands", "TS")
    expect(panel.locator("[data-card=BJ]")).to_have_attribute("data-stands", "AH")
    shot(page, "joker-settlement")


# ---- spare cards (多三张) -------------------------------------------------------------------

SPARE_ME = cards("AS KS QS JS 9S AH AD KH KD 7C 7H 4C 3D 2H 5C 8D2")


def zone_of(page: Page, card: str) -> str:
    return page.locator(f"#arrange [data-card='{card}']").evaluate(
        "e => e.closest('[data-zone]').dataset.zone"
    )


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_spare_cards_are_swapped_by_tap_and_drag_and_shown_set_aside(
    player: Player, live_platform: LivePlatform, shot: Shot, viewport: dict[str, int]
) -> None:
    page = player.page
    page.set_viewport_size(viewport)
    config = variant(extra_suits=1, spare_cards=3)
    table = open_variant_table(player, live_platform.url, config, 4)
    table.deal_hands({0: SPARE_ME})
    table.fire()
    dealt(page, 16)
    (hand,) = [e for e in table.game.events("hand") if e.payload["position"] == 0][-1:]
    first_aside = delivered(hand, table.game.state).payload["suggestions"][0]["unused"]
    assert len(first_aside) == 3
    assert sorted(hand_cards(page, "tray")) == sorted(first_aside)
    assert len(hand_cards(page, "hand")) == 13
    shot(page, "spare-dealt")
    on_screen(page, page.get_by_test_id("seat"), 4)
    on_screen(page, page.locator(".zone [data-card]"), 16)
    on_screen(page, page.get_by_test_id("submit-button"), 1)
    on_screen(page, page.get_by_test_id("suggestion").first)
    no_horizontal_overflow(page)

    # A tap on a tray card, then on a card of the hand: they swap places.
    spare_a, spare_b, spare_c = hand_cards(page, "tray")
    kept = hand_cards(page, "hand")
    out_a = kept[0]
    click_card(page, spare_a)
    click_card(page, out_a)
    expect(page.locator(f"[data-testid=hand] [data-card='{spare_a}']")).to_be_visible(timeout=PAGE)
    expect(page.locator(f"[data-testid=tray] [data-card='{out_a}']")).to_be_visible()
    assert len(hand_cards(page, "tray")) == 3 and len(hand_cards(page, "hand")) == 13
    # The suggestions are asked for the 13 now kept, and shown.
    asked = wait_for(page, lambda: table.sent("suggest"))
    assert sorted(asked[-1]["cards"]) == sorted(hand_cards(page, "hand"))
    expect(page.get_by_test_id("suggestion").first).to_be_visible(timeout=PAGE)
    shot(page, "spare-tapped")

    # Dragged onto a card of the hand: they swap places too.
    out_b = hand_cards(page, "hand")[5]
    assert out_b != spare_a
    target = page.locator(f"[data-testid=hand] [data-card='{out_b}']")
    drag(
        page, spare_b, target, page.locator(f"[data-testid=hand] [data-card='{out_b}'].swap-target")
    )
    expect(page.locator(f"[data-testid=hand] [data-card='{spare_b}']")).to_be_visible(timeout=PAGE)
    expect(page.locator("[data-testid=tray] [data-card]")).to_have_count(3)
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(13)
    tray = hand_cards(page, "tray")
    assert sorted(tray) == sorted([out_a, out_b, spare_c]), f"{spare_b} did not swap with {out_b}"

    # A card of the hand dropped on a tray card: they swap places.
    out_c = next(c for c in hand_cards(page, "hand") if c not in (spare_a, spare_b))
    drag(
        page,
        out_c,
        page.locator(f"[data-testid=tray] [data-card='{out_a}']"),
        page.locator(f"[data-testid=tray] [data-card='{out_a}'].swap-target"),
    )
    expect(page.locator(f"[data-testid=tray] [data-card='{out_c}']")).to_be_visible(timeout=PAGE)
    expect(page.locator(f"[data-testid=hand] [data-card='{out_a}']")).to_be_visible()
    tray = hand_cards(page, "tray")
    assert sorted(tray) == sorted([out_c, out_b, spare_c])
    assert len(hand_cards(page, "hand")) == 13
    wait_for(
        page, lambda: sorted(table.sent("suggest")[-1]["cards"]) == sorted(hand_cards(page, "hand"))
    )
    expect(page.locator("[data-testid=suggestion]").first).to_be_visible(timeout=PAGE)

    # A reload restores the tray from the draft.
    wait_for(page, lambda: (table.game.seat(0).draft or {}).get("tray"))
    wait_for(page, lambda: sorted(table.game.seat(0).draft["tray"]) == sorted(tray))
    page.reload()
    expect(page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    expect(page.locator("[data-testid=tray] [data-card]")).to_have_count(3, timeout=PAGE)
    assert sorted(hand_cards(page, "tray")) == sorted(tray)

    # A suggestion for the 13 kept fills the rows; Submit sends them and the tray.
    page.get_by_test_id("suggestion").first.click()
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(0, timeout=PAGE)
    assert sorted(hand_cards(page, "tray")) == sorted(tray)
    on_screen(page, page.locator(".zone [data-card]"), 16)
    expect(page.get_by_test_id("submit-button")).to_be_enabled()
    page.get_by_test_id("submit-button").click()
    message = table.submit_sent()
    assert sum(len(message[r]) for r in ROWS) == 13
    assert sorted(message["unused"]) == sorted(tray)
    table.others_submit_best()
    expect(page.get_by_test_id("phase")).to_have_attribute("data-phase", "comparing", timeout=PAGE)

    # At the reveal each opponent's set-aside cards, face up.
    (unused,) = table.game.events("reveal_unused")
    for h in unused.payload["hands"]:
        if h["position"] == 0:
            continue
        line = page.locator(
            f"[data-testid=seat] [data-testid=set-aside][data-position='{h['position']}']"
        )
        expect(line).to_be_visible(timeout=PAGE)
        assert sorted(
            line.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)")
        ) == sorted(h["cards"])
    shot(page, "spare-revealed")
    table.fire()  # settled
    panel = page.get_by_test_id("settlement-panel")
    expect(panel).to_be_visible(timeout=PAGE)
    result = table.game.result()
    for p in result["players"]:
        line = panel.locator(f"[data-testid=set-aside][data-position='{p['position']}']")
        expect(line.locator("[data-card]")).to_have_count(3)
        got = line.locator("[data-card]").evaluate_all("els => els.map(e => e.dataset.card)")
        assert sorted(got) == sorted(p["unused"])
    mine = next(p for p in result["players"] if p["position"] == 0)
    assert sorted(mine["unused"]) == sorted(tray)
    no_horizontal_overflow(page)
    shot(page, "spare-settlement")


def test_a_suggest_lost_with_its_socket_is_asked_again_after_the_reconnect(
    player: Player, live_platform: LivePlatform
) -> None:
    page = player.page
    page.set_viewport_size(DESKTOP)
    table = open_variant_table(player, live_platform.url, variant(extra_suits=1, spare_cards=3), 4)
    table.deal_hands({0: SPARE_ME})
    table.fire()
    dealt(page, 16)
    table.unanswered = True
    spare = hand_cards(page, "tray")[0]
    click_card(page, spare)
    click_card(page, hand_cards(page, "hand")[0])
    expect(page.locator(f"[data-testid=hand] [data-card='{spare}']")).to_be_visible(timeout=PAGE)
    kept = sorted(hand_cards(page, "hand"))
    asked = wait_for(page, lambda: table.sent("suggest"))
    assert sorted(asked[0]["cards"]) == kept
    expect(page.locator(".sg-waiting")).to_be_visible(timeout=PAGE)
    # The swap is in the saved draft, so the reconnected page keeps these 13.
    wait_for(page, lambda: spare not in (table.game.seat(0).draft or {}).get("tray", [spare]))

    # The socket drops before the answer (a server restarting): the page reconnects, says
    # hello and asks again for the same 13, and this time shows the answer.
    table.unanswered = False
    table.close(1011)
    asked = wait_for(page, lambda: table.sent("suggest")[1:], seconds=15)
    assert sorted(asked[0]["cards"]) == kept
    expect(page.get_by_test_id("suggestion").first).to_be_visible(timeout=PAGE)
    expect(page.locator(".sg-waiting")).to_have_count(0)
    assert len(table.sent("hello")) == 2


def test_a_special_hand_with_spare_cards_names_the_cards_it_sets_aside(
    player: Player, live_platform: LivePlatform, shot: Shot
) -> None:
    page = player.page
    specials = {sid: {"enabled": sid == "dragon"} for sid in SPECIAL_IDS}
    config = variant(extra_suits=1, spare_cards=3, specials=specials)
    table = open_variant_table(player, live_platform.url, config, 2)
    table.deal_hands({0: cards("2S 3H 4C 5D 6S 7H 8C 9D TS JH QC KD AS 2H 2C 3S")})
    table.fire()
    (hand,) = [e.payload for e in table.game.events("hand") if e.payload["position"] == 0]
    assert hand["special"] == "dragon" and len(hand["special_unused"]) == 3
    dialog = page.get_by_test_id("special-dialog")
    expect(dialog).to_be_visible(timeout=PAGE)
    aside = dialog.locator("[data-testid=set-aside] [data-card]")
    expect(aside).to_have_count(3)
    assert sorted(aside.evaluate_all("els => els.map(e => e.dataset.card)")) == sorted(
        hand["special_unused"]
    )
    shot(page, "special-aside")
    page.get_by_test_id("special-yes").click()
    wait_for(page, lambda: table.sent("choose_special"))
    table.do(machine.choose_special, position=0, play_special=True)
    mine = page.locator("[data-testid=seat][data-me=true]")
    expect(mine.locator("[data-testid=set-aside] [data-card]")).to_have_count(3, timeout=PAGE)
    expect(mine.locator(".mini-cards.thirteen [data-card]")).to_have_count(13)

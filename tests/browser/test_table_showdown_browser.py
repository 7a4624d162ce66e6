"""The showdown in view: through the whole comparison and the settlement, my own three rows
and their results stay on screen beside the opponents' rows, at 1280×800 and 390×844 with 2
to 6 seats; on the phone the settlement covers neither Chat nor Ready; the chat panel never
opens over Submit; a gun and a home run read as events, within the comparison's schedule.

The page is the real one; its socket is served by the pure table machine
(tests/browser/mock_table.py), so the hands, the specials and the guns are the test's choice.
With ``SHOTS_DIR`` set, the showdown and the settlement are saved there too (showdown-1280.png,
settlement-390.png…).
"""

from __future__ import annotations

import os
import random
import shutil
import time
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest
from playwright.sync_api import Locator, Page, expect

from games.models import RuleConfiguration
from games.rules.arrange import arrange
from games.rules.cards import Card, parse_card
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.hands import Category, evaluate
from games.rules.specials import detect_special
from games.table import machine
from games.table.deck import deal_order
from lobby.models import Room
from lobby.services import room_create
from tests.browser.conftest import DESKTOP, PHONE, NewPage, Shot, module_platform
from tests.browser.mock_table import MockTable
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
from tests.games.table.helpers import arr, c
from tests.games.table_helpers import default_rules, fast_rules
from tests.live_server import LivePlatform

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = ("front", "middle", "back")
ONLY_DRAGON = {"specials": {sid: {"enabled": sid == "dragon"} for sid in SPECIAL_IDS}}
DRAGON = c("2S 3H 4D 5C 6S 7H 8D 9C TS JH QD KC AS")
EXTRA_SUITS = {2: 0, 3: 0, 4: 0, 5: 1, 6: 2}  # the decks that seat them (RULES.md §12.1)

live_platform = module_platform()


def rules(**settings: object) -> RuleConfig:
    pace = {"reveal_interval_ms": 250, "deal_interval_ms": 5, "arrange_seconds": 120}
    return RuleConfig.from_dict({**ONLY_DRAGON, **pace, **settings}, base=DEFAULT_CONFIG)


class ShowdownTable(MockTable):
    """The mock table dealing a shuffled deck of its configuration, some seats' hands fixed."""

    def deal_hands(self, fixed: Mapping[int, Sequence[Card]], seed: int) -> None:
        self.game.now = time.time()
        for s in self.game.state.seats:
            if not s.ready:
                self.push(self.game.do(machine.ready, position=s.position))
        config = self.game.state.config
        seats = [s.position for s in self.game.state.round_seats]
        order = deal_order(seats, 0)
        used = {c for hand in fixed.values() for c in hand}
        rng = random.Random(seed)
        while True:  # no special hand but the fixed ones
            rest = [c for c in config.deck.cards if c not in used]
            rng.shuffle(rest)
            hands = {
                p: list(fixed[p]) if p in fixed else rest[k * 13 : k * 13 + 13]
                for k, p in enumerate(seats)
            }
            if all(p in fixed or detect_special(hands[p], config) is None for p in seats):
                break
        leftovers = iter(c for c in rest if not any(c in h for h in hands.values()))
        deck = [hands[p][k] for k in range(13) for p in order]
        deck.extend(leftovers)
        self.push(self.game.deal(deck=deck))

    def play_out(self, declare: Sequence[int] = ()) -> None:
        """Seats in ``declare`` play their special hand; every other seat its best rows."""
        config = self.game.state.config
        for position in declare:
            self.do(machine.choose_special, position=position, play_special=True)
        for s in self.game.state.round_seats:
            if s.position in declare:
                continue
            assert s.hand is not None
            best = arrange(s.hand, config).suggestions[0]
            self.do(
                machine.submit,
                position=s.position,
                front=best.front,
                middle=best.middle,
                back=best.back,
            )


def open_table(player: Player, base_url: str, config: RuleConfig, seats: int) -> ShowdownTable:
    """A room of ``seats`` with these rules, the player at seat 0, guests in the others."""
    assert player.user is not None
    saved = RuleConfiguration.from_engine(config, name=f"showdown {seats} {time.time_ns()}")
    room: Room = room_create(
        owner=player.user, base_score=100, seats=seats, name="Showdown table", rules=saved
    )
    players = [str(player.user.pk)] + [f"guest-{i}" for i in range(1, seats)]
    table = ShowdownTable(player.page, players, config, capacity=seats)
    player.page.goto(f"{base_url}/games/table/{room.pk}/")
    expect(player.page.get_by_test_id("connection-state")).to_have_attribute(
        "data-state", "live", timeout=PAGE
    )
    expect(player.page.get_by_test_id("seat")).to_have_count(seats, timeout=PAGE)
    return table


@pytest.fixture
def player(live_platform: LivePlatform, new_page: NewPage) -> Player:
    default_rules()
    player = Player("showdown_player", new_page(viewport=DESKTOP))
    sign_up(player, live_platform.url)
    return player


def save_shot(page: Page, shot: Shot, name: str, *, keep: bool) -> None:
    """The viewport as the player sees it; copied to SHOTS_DIR when set and ``keep``."""
    path = shot(page, name)
    page.screenshot(path=str(path))
    target = os.environ.get("SHOTS_DIR")
    if target and keep:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(target) / f"{name}.png")


def in_view(page: Page, selector: str, what: str) -> None:
    """Every element the CSS selector finds is drawn wholly inside the viewport as it is (no
    scrolling). Found and measured in one go: the seats are drawn again at every step."""
    size = page.viewport_size
    assert size is not None
    boxes = page.evaluate(
        """(selector) => [...document.querySelectorAll(selector)].map(e => {
            const r = e.getBoundingClientRect();
            return [r.left, r.top, r.right, r.bottom, r.width * r.height,
                    e.closest("[data-position]")?.dataset.position]; })""",
        selector,
    )
    assert boxes, f"no {what}"
    for left, top, right, bottom, area, position in boxes:
        assert area > 0, f"{what} (seat {position}) is not drawn"
        assert left >= -0.5 and top >= -0.5, (what, left, top)
        assert right <= size["width"] + 0.5 and bottom <= size["height"] + 0.5, (
            what,
            right,
            bottom,
            size,
        )


def assert_straights_low_to_high(page: Page, table: MockTable, me: int) -> int:
    """Every opponent's straight row is shown as RULES.md §6 writes it, low to high (a wheel
    A2345 with the ace first), whatever order the arrangement holds its cards in. Returns how
    many straights were checked."""
    checked = 0
    for seat in table.game.state.round_seats:
        if seat.position == me or seat.arrangement is None:
            continue
        for row in ("middle", "back"):
            cards = getattr(seat.arrangement, row)
            if evaluate(cards).category not in (Category.STRAIGHT, Category.STRAIGHT_FLUSH):
                continue
            shown = page.locator(
                f".seat[data-position='{seat.position}'] .mini-row[data-row='{row}'] [data-card]"
            ).evaluate_all("els => els.map(e => e.dataset.card)")
            deck = table.game.state.config.deck
            ranks = [int(parse_card(text, deck).rank) for text in shown]
            wheel = 14 in ranks and 2 in ranks
            assert ranks == sorted(ranks, key=lambda r: 1 if wheel and r == 14 else r), (
                f"seat {seat.position}'s {row} row reads {shown}"
            )
            checked += 1
    return checked


def on_top(locator: Locator, what: str) -> None:
    """The element's centre is inside the viewport and nothing is drawn over it there (what
    a tap at its centre would reach)."""
    x, y, hit, top = locator.evaluate(
        """e => { const r = e.getBoundingClientRect();
            const x = r.left + r.width / 2, y = r.top + r.height / 2;
            const top = document.elementFromPoint(x, y);
            const html = top ? top.outerHTML.slice(0, 120) : null;
            return [x, y, Boolean(top) && e.contains(top), html];
        }"""
    )
    assert hit, f"{what} at ({x:.0f}, {y:.0f}) is covered by {top}"


MY_ROWS = ".arrange .row-zone"


def opponents_rows(row: str) -> str:
    return f".seat:not([data-me]) .mini-row[data-row={row}]"


@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_my_rows_stay_in_view_beside_the_opponents_through_the_showdown(
    player: Player, live_platform: LivePlatform, shot: Shot, seats: int, viewport: dict[str, int]
) -> None:
    page = player.page
    page.set_viewport_size(viewport)
    config = rules(extra_suits=EXTRA_SUITS[seats])
    table = open_table(player, live_platform.url, config, seats)
    declarer = seats - 1 if seats >= 3 else None  # its special is revealed after the rows
    table.deal_hands({declarer: DRAGON} if declarer is not None else {}, seed=seats)
    table.fire()  # the deal is over
    table.play_out(declare=[declarer] if declarer is not None else [])
    normal = seats - 1 - (declarer is not None)
    for row in ROWS:
        # The row's result is in: every normal opponent's row shows my water against it.
        expect(page.locator(opponents_rows(row) + " .water")).to_have_count(normal, timeout=PAGE)
        in_view(page, MY_ROWS, "my rows")
        expect(page.locator(MY_ROWS + " .row-water").nth(ROWS.index(row))).not_to_have_text("")
        in_view(page, opponents_rows(row), f"the opponents' {row} rows")
        if row == "middle":
            save_shot(page, shot, f"showdown-{viewport['width']}", keep=seats == 4)
    if declarer is not None:
        special = page.locator(f".seat[data-position='{declarer}'] .special-tag")
        expect(special).to_be_visible(timeout=PAGE)
        in_view(page, MY_ROWS, "my rows")
        in_view(page, f".seat[data-position='{declarer}'] .mini-row", "the special")
    state = table.game.state
    assert state.deadline is not None
    page.wait_for_timeout(max(0, (state.deadline - time.time()) * 1000))
    table.fire()  # settled
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    in_view(page, MY_ROWS, "my rows")
    for row in ROWS:
        in_view(page, opponents_rows(row), f"the opponents' {row} rows")
    straights = assert_straights_low_to_high(page, table, me=0)
    if seats == 4:  # this deal's opponents hold straights (seed 4)
        assert straights >= 1
    # Ready and Chat in reach, nothing over them.
    on_top(page.get_by_test_id("ready-button"), "Ready")
    on_top(page.get_by_test_id("chat-toggle"), "Chat")
    save_shot(page, shot, f"settlement-{viewport['width']}", keep=seats == 4)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_the_open_chat_panel_leaves_submit_and_the_suggestions_in_reach(
    player: Player, live_platform: LivePlatform, shot: Shot, viewport: dict[str, int]
) -> None:
    page = player.page
    page.set_viewport_size(viewport)
    table = open_table(player, live_platform.url, rules(), 4)
    table.deal_hands({}, seed=11)
    table.fire()  # the deal is over
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(13, timeout=PAGE)
    suggestions = page.get_by_test_id("suggestion")
    expect(suggestions.first).to_be_visible(timeout=PAGE)
    page.get_by_test_id("chat-toggle").click()
    panel = page.get_by_test_id("chat-panel")
    expect(panel).to_be_visible()
    in_view(page, "[data-testid=chat-panel]", "the chat panel")
    save_shot(page, shot, f"chat-open-{viewport['width']}", keep=False)
    for n in range(suggestions.count()):
        if suggestions.nth(n).is_visible():
            on_top(suggestions.nth(n), f"suggestion {n + 1}")
    on_top(page.get_by_test_id("submit-button"), "Submit")
    on_top(page.get_by_test_id("chat-toggle"), "Chat")
    # With the panel open: a suggestion applied, then submitted, by taps at their centres.
    suggestions.first.click()
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(0, timeout=PAGE)
    submit = page.get_by_test_id("submit-button")
    expect(submit).to_be_enabled(timeout=PAGE)
    on_top(submit, "Submit")
    submit.click()
    deadline = time.time() + 10
    while not table.sent("submit") and time.time() < deadline:
        page.wait_for_timeout(50)
    assert table.sent("submit"), "Submit did not reach the table"
    expect(panel).to_be_visible()


# Seat 1 guns everyone (a home run); seat 0 (mine) guns seats 2 and 3; seat 3 guns seat 2.
HR_A = arr("AS AH 2C", "KS KH KD 3C 3D", "9C TC JC QC KC")
HR_B = arr("QS QH 2D", "JS JH JD 4C 4D", "8S 8H 8D 8C 2S")
HR_C = arr("TS TD 3S", "6S 6H 6D 5C 5D", "9S 9D 9H 7S 7H")
HR_D = arr("QD 5S 4S", "AD AC 7D 7C 6C", "TH 5H 4H 3H 2H")

# The effect playing: its length (--fx-ms), when each of its CSS animations ends (none with
# reduced motion), the size of its title and icon, and the viewport's smaller side.
EFFECT = """(id) => {
    const fx = document.querySelector(`[data-testid=${id}]`);
    const ends = fx.getAnimations({ subtree: true })
        .filter((a) => a instanceof CSSAnimation)
        .map((a) => a.effect.getComputedTiming().endTime);
    const style = getComputedStyle(fx.querySelector(".fx-icon"));
    return {
        ms: parseFloat(getComputedStyle(fx).getPropertyValue("--fx-ms")),
        ends,
        title: parseFloat(getComputedStyle(fx.querySelector(".fx-title")).fontSize),
        icon: Math.min(parseFloat(style.width), parseFloat(style.height)),
        side: Math.min(innerWidth, innerHeight),
        opacity: getComputedStyle(fx).opacity,
    };
}"""


def effect_shown(page: Page, testid: str) -> dict[str, object]:
    """Wait (every frame) for the effect to show; what EFFECT says of it then."""
    page.wait_for_function(
        "(id) => !document.querySelector(`[data-testid=${id}]`).hidden",
        arg=testid,
        polling="raf",
        timeout=PAGE,
    )
    return dict(page.evaluate(EFFECT, testid))


@pytest.mark.parametrize(
    ("viewport", "motion"), [(DESKTOP, "no-preference"), (PHONE, "reduce")], ids=["1280", "390"]
)
def test_a_gun_and_a_home_run_read_as_events_within_the_comparison_s_schedule(
    player: Player, live_platform: LivePlatform, shot: Shot, viewport: dict[str, int], motion: str
) -> None:
    page = player.page
    page.set_viewport_size(viewport)
    page.emulate_media(reduced_motion=motion)  # type: ignore[arg-type]
    table = open_table(player, live_platform.url, rules(reveal_interval_ms=600), 4)
    hands = {0: HR_B, 1: HR_A, 2: HR_D, 3: HR_C}
    table.deal_hands({p: a.cards for p, a in hands.items()}, seed=3)
    table.fire()  # the deal is over
    for position in (1, 2, 3, 0):
        a = hands[position]
        table.do(machine.submit, position=position, front=a.front, middle=a.middle, back=a.back)
    guns = [e.payload for e in table.game.events("gun") if e.payload["kind"] == "gun"]
    (home_run,) = [e.payload for e in table.game.events("home_run")]

    for testid, effect_ms in (
        ("gun-animation", guns[0]["effect_ms"]),
        ("home-run-animation", home_run["effect_ms"]),
    ):
        fx = effect_shown(page, testid)
        # It plays for exactly the time the comparison leaves it, never longer.
        assert fx["ms"] == effect_ms, fx
        ends = fx["ends"]
        assert isinstance(ends, list)
        if motion == "reduce":
            assert ends == [] and fx["opacity"] == "1", fx  # shown still, whole
        else:
            assert ends and max(ends) <= effect_ms + 1, fx
            assert max(ends) >= effect_ms * 0.9, fx  # it lasts its whole time
        # Big: a title of at least 2.8rem, an icon of at least a quarter of the screen's side.
        assert float(fx["title"]) >= 44, fx  # type: ignore[arg-type]
        assert float(fx["icon"]) >= 0.25 * float(fx["side"]), fx  # type: ignore[arg-type]
        save_shot(page, shot, f"{testid}-{viewport['width']}", keep=False)

    # What the guns left: a stamp on each gunned seat, "Home run!" on the shooter's.
    for gun in guns:
        stamp = page.locator(
            f".seat[data-position='{gun['target']}'] [data-testid=seat-shot]"
            f"[data-shooter='{gun['shooter']}']"
        )
        expect(stamp).to_be_visible(timeout=PAGE)
    expect(page.locator(".seat[data-position='1'] [data-testid=seat-home-run]")).to_be_visible(
        timeout=PAGE
    )
    state = table.game.state
    assert state.deadline is not None
    page.wait_for_timeout(max(0, (state.deadline - time.time()) * 1000))
    table.fire()  # settled at the comparison's deadline, as scheduled
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    expect(page.get_by_test_id("home-run-animation")).to_be_hidden()
    expect(page.locator("[data-testid=seat-shot]")).to_have_count(len(guns) + 3)
    in_view(page, MY_ROWS, "my rows")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_with_bots_on_the_live_platform_the_showdown_stays_on_one_screen(
    live_platform: LivePlatform, new_page: NewPage, shot: Shot, viewport: dict[str, int]
) -> None:
    """The real table (its socket, bots and timers): my rows beside the opponents' from the
    first revealed row to the settlement, then Ready pressed where it is."""
    fast_rules(name="Showdown live", **{**PACING, "reveal_interval_ms": 400})
    me = Player("showdown_live", new_page(viewport=viewport))
    sign_up(me, live_platform.url)
    open_lobby(me, live_platform.url)
    open_bot_room(me, name="Showdown with bots", rules="Showdown live", seats=4, bots=3)
    press_ready(me)
    wait_for_hand(me)
    answer_special(me)
    apply_best_suggestion(me)
    submit(me)
    page = me.page
    expect(page.get_by_test_id("phase")).to_have_attribute(
        "data-phase", "comparing", timeout=SERVER
    )
    expect(page.locator(MY_ROWS + " .row-water").first).not_to_have_text("", timeout=SERVER)
    in_view(page, MY_ROWS, "my rows")
    in_view(page, opponents_rows("front") + ":has(.water)", "the opponents' front rows")
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=SERVER)
    in_view(page, MY_ROWS, "my rows")
    in_view(page, ".seat:not([data-me]) .mini-row", "the opponents' rows")
    on_top(page.get_by_test_id("ready-button"), "Ready")
    on_top(page.get_by_test_id("chat-toggle"), "Chat")
    save_shot(page, shot, f"live-settlement-{viewport['width']}", keep=False)
    page.get_by_test_id("ready-button").click()
    expect(page.get_by_test_id("ready-button")).to_be_hidden(timeout=PAGE)


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1280", "390"])
def test_my_declared_special_stays_in_view_beside_the_opponents_rows(
    player: Player, live_platform: LivePlatform, shot: Shot, viewport: dict[str, int]
) -> None:
    page = player.page
    page.set_viewport_size(viewport)
    table = open_table(player, live_platform.url, rules(), 3)
    table.deal_hands({0: DRAGON}, seed=8)
    table.fire()  # the deal is over
    page.get_by_test_id("special-yes").click()
    deadline = time.time() + 10
    while not table.sent("choose_special") and time.time() < deadline:
        page.wait_for_timeout(50)
    table.play_out(declare=[0])
    state = table.game.state
    assert state.deadline is not None
    page.wait_for_timeout(max(0, (state.deadline - time.time()) * 1000))
    table.fire()  # settled
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    in_view(page, ".seat[data-me] .seat-cards .card", "my special's cards")
    expect(page.locator("#arrange")).to_be_hidden()
    in_view(page, ".seat:not([data-me]) .mini-row", "the opponents' rows")
    on_top(page.get_by_test_id("ready-button"), "Ready")
    save_shot(page, shot, f"my-special-{viewport['width']}", keep=False)


def test_a_settlement_that_overtakes_the_comparison_plays_no_effect_over_it(
    player: Player, live_platform: LivePlatform
) -> None:
    page = player.page
    table = open_table(player, live_platform.url, rules(reveal_interval_ms=600), 4)
    hands = {0: HR_B, 1: HR_A, 2: HR_D, 3: HR_C}
    table.deal_hands({p: a.cards for p, a in hands.items()}, seed=3)
    table.fire()  # the deal is over
    expect(page.locator("[data-testid=hand] [data-card]")).to_have_count(13, timeout=PAGE)
    # Every time an effect is shown, from now on.
    page.evaluate(
        """() => {
            window.effectsShown = [];
            for (const fx of document.querySelectorAll(".fx")) {
                new MutationObserver(() => {
                    if (!fx.hidden) window.effectsShown.push(fx.id);
                }).observe(fx, { attributes: true, attributeFilter: ["hidden"] });
            }
        }"""
    )
    for position in (1, 2, 3, 0):
        a = hands[position]
        table.do(machine.submit, position=position, front=a.front, middle=a.middle, back=a.back)
    assert table.game.events("home_run")
    table.fire()  # settled long before the comparison's first gun was due
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    # The comparison is shown whole (its guns' stamps included), its effects not played.
    expect(page.locator(".seat[data-position='1'] [data-testid=seat-home-run]")).to_be_visible()
    assert page.evaluate("window.effectsShown") == []


def test_an_effect_playing_when_the_settlement_comes_ends_at_once(
    player: Player, live_platform: LivePlatform
) -> None:
    page = player.page
    table = open_table(player, live_platform.url, rules(reveal_interval_ms=1500), 2)
    hands = {0: HR_B, 1: HR_A}  # seat 1 guns me
    table.deal_hands({p: a.cards for p, a in hands.items()}, seed=3)
    table.fire()  # the deal is over
    for position in (1, 0):
        a = hands[position]
        table.do(machine.submit, position=position, front=a.front, middle=a.middle, back=a.back)
    (gun,) = [e.payload for e in table.game.events("gun")]
    assert gun["effect_ms"] == 2250
    effect_shown(page, "gun-animation")
    table.fire()  # settled while the gun's effect still has about two seconds to play
    expect(page.get_by_test_id("settlement-panel")).to_be_visible(timeout=PAGE)
    assert page.evaluate("document.querySelector('[data-testid=gun-animation]').hidden")

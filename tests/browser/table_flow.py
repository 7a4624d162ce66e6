"""Steps of the table page's browser tests: sign up, open or join a room, play, check.

Each step drives the real pages (forms, buttons, cards) of a platform started by the
``live_platform`` fixture and waits with an explicit timeout: a failure fails, never hangs.
The checks read the database the platform writes (the tests are transactional).
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from playwright.sync_api import Locator, Page, expect

from accounts.models import AccountKind, Entry, Transaction, User
from accounts.selectors import wallet_balance
from games.models import Round, RuleConfiguration
from games.rules.arrange import best_arrangement
from games.rules.cards import Card, format_cards, parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.hands import evaluate, foul_rows
from lobby.models import Room
from tests.live_server import wait_until

PASSWORD = "Browser-test-pass-2718"
ROWS = ("front", "middle", "back")
# Server-driven steps (a deal, a timeout, a settlement) on a slow shared machine.
SERVER = 60_000
PAGE = 15_000
PLAY_PHASES = re.compile(r"^(special_choice|arranging)$")


@dataclass
class Player:
    """One player: its page (its own browser context) and, once signed up, its user."""

    name: str
    page: Page
    user: User | None = None

    def testid(self, testid: str) -> Locator:
        return self.page.get_by_test_id(testid)


# ---- accounts and lobby ----------------------------------------------------------------------


# The browser tests' rules: clocks long enough for a slow machine, short animations so that
# the deal and the comparison still play.
PACING = {
    "ready_seconds": 120,
    "special_choice_seconds": 15,
    "arrange_seconds": 90,
    "deal_interval_ms": 20,
    "reveal_interval_ms": 150,
}


def sign_up(player: Player, base_url: str, *, default_layout: bool = False) -> None:
    """Sign up through the form; the site then shows the profile page, logged in.

    The table opens a new hand laid out as the first suggestion unless the player turned
    that off (RULES.md §6, the profile's table settings). The steps below place the cards of a
    hand one by one, so a player starts with it off (``default_layout=False``: the hand opens
    sorted in the hand area, the rows empty) unless the test asks for the site's default."""
    page = player.page
    page.goto(f"{base_url}/accounts/signup/")
    form = page.locator("form.form")
    form.locator("input[name=username]").fill(player.name)
    form.locator("input[name=password1]").fill(PASSWORD)
    form.locator("input[name=password2]").fill(PASSWORD)
    form.locator("button[type=submit]").click()
    page.wait_for_url("**/accounts/profile/", timeout=PAGE)
    User.objects.filter(username=player.name).update(default_layout=default_layout)
    player.user = User.objects.get(username=player.name)


def open_site_menu(page: Page) -> None:
    """On a phone the header's links and language switch are in its menu: open it (nothing
    to do on a wide screen, where they are always shown)."""
    toggle = page.locator("#menu-toggle")
    if toggle.is_visible() and toggle.get_attribute("aria-expanded") != "true":
        toggle.click()
        expect(page.locator("#site-menu")).to_be_visible()


def switch_language(page: Page, code: str) -> None:
    """Press the header's language button (Django's set_language), back on the same page."""
    open_site_menu(page)
    page.locator(f"form.language button[name=language][value={code}]").click()
    expect(page.locator("html")).to_have_attribute("lang", code, timeout=PAGE)


def open_lobby(player: Player, base_url: str) -> None:
    page = player.page
    page.goto(f"{base_url}/lobby/")
    expect(page.locator("#lobby-live")).to_have_attribute("data-state", "online", timeout=PAGE)


def open_room(player: Player, *, name: str, rules: str, seats: int) -> Room:
    """The lobby's create form (a public room); the player lands on its table page."""
    page = player.page
    form = page.locator("form[data-action='room.create']")
    form.locator("input[name=name]").fill(name)
    # By value: an option's label also shows the rules' variant badge and seats.
    form.locator("select[name=rules]").select_option(
        str(RuleConfiguration.objects.get(name=rules).pk)
    )
    form.locator("select[name=seats]").select_option(str(seats))
    form.locator("input[name=private]").set_checked(False)
    form.locator("button[type=submit]").click()
    wait_for_table(player)
    return Room.objects.get(name=name)


def open_bot_room(
    player: Player,
    *,
    name: str,
    rules: str,
    seats: int = 2,
    bots: int = 1,
    private: bool = False,
    series_rounds: int | None = None,
) -> Room:
    """The lobby's create form with ``bots`` bots (and, for a private room, optionally a
    series of ``series_rounds``); the player lands on its table page."""
    page = player.page
    form = page.locator("form[data-action='room.create']")
    form.locator("input[name=name]").fill(name)
    form.locator("select[name=rules]").select_option(
        str(RuleConfiguration.objects.get(name=rules).pk)
    )
    form.locator("select[name=seats]").select_option(str(seats))
    form.locator("select[name=bots]").select_option(str(bots))
    form.locator("input[name=private]").set_checked(private)
    if series_rounds is not None:
        form.locator("select[name=series_rounds]").select_option(str(series_rounds))
    form.locator("button[type=submit]").click()
    wait_for_table(player)
    return Room.objects.get(name=name)


def join_from_list(player: Player, room: Room) -> None:
    """The Join button of the room's row in the lobby's live list; lands on the table page."""
    row = player.page.locator(f"#lobby-rooms tbody tr[data-room='{room.pk}']")
    expect(row.locator("[data-field=name]")).to_have_text(room.name, timeout=PAGE)
    row.locator(".join-form button[type=submit]").click()
    wait_for_table(player, room)


def wait_for_table(player: Player, room: Room | None = None) -> None:
    """On the table page (of ``room``), its socket live."""
    pattern = f"**/games/table/{room.pk if room else '*'}/"
    player.page.wait_for_url(pattern, timeout=PAGE)
    state = player.testid("connection-state")
    expect(state).to_have_attribute("data-state", "live", timeout=SERVER)


def press_ready(player: Player) -> None:
    button = player.testid("ready-button")
    expect(button).to_be_visible(timeout=PAGE)
    button.click()
    expect(button).to_be_hidden(timeout=PAGE)


# ---- the hand --------------------------------------------------------------------------------


def cards_in(player: Player, zone: str) -> list[str]:
    """The cards of a zone (``hand`` or a row), in their order on the page."""
    locator = player.page.locator(f"[data-testid={zone}] [data-card]")
    return [str(card) for card in locator.evaluate_all("els => els.map(e => e.dataset.card)")]


def wait_for_hand(player: Player) -> list[str]:
    """Wait for the 13 cards to be dealt and playable, and for the deal's suggestions (they
    come a moment after the hand, and an untouched layout takes them: with spare cards the
    tray becomes the best one's); returns them."""
    expect(player.testid("phase")).to_have_attribute("data-phase", PLAY_PHASES, timeout=SERVER)
    expect(player.page.locator("[data-testid=hand] [data-card]")).to_have_count(13, timeout=PAGE)
    expect(player.page.locator("#suggestions .sg-waiting")).to_have_count(0, timeout=SERVER)
    hand = cards_in(player, "hand")
    assert len(set(hand)) == 13, hand
    return hand


def answer_special(player: Player, *, play: bool = False) -> bool:
    """Answer the special hand question if it is asked; True when the player holds one.

    The question is asked only once the round is in a play phase: the last dealt card can be
    drawn while the phase is still ``dealing``, so looking for the dialog before that misses it.
    """
    expect(player.testid("phase")).to_have_attribute("data-phase", PLAY_PHASES, timeout=SERVER)
    dialog = player.testid("special-dialog")
    if not dialog.is_visible():
        return False
    player.testid("special-yes" if play else "special-no").click()
    expect(dialog).to_be_hidden(timeout=PAGE)
    return True


def round_config(room: Room) -> RuleConfig:
    """The rules the room's current round is played under."""
    round_ = Round.objects.filter(table__room=room).order_by("-number").first()
    return RuleConfig.from_dict(round_.config) if round_ else DEFAULT_CONFIG


def best_rows(hand: Sequence[str], config: RuleConfig = DEFAULT_CONFIG) -> dict[str, list[str]]:
    """The engine's best arrangement of the hand (never a foul)."""
    best = best_arrangement(parse_cards(list(hand)), config)
    return {
        "front": format_cards(best.front),
        "middle": format_cards(best.middle),
        "back": format_cards(best.back),
    }


def fouled_rows(
    hand: Sequence[str], config: RuleConfig = DEFAULT_CONFIG
) -> tuple[dict[str, list[str]], tuple[str, ...]]:
    """An arrangement whose front beats its middle (a foul), and the rows the engine names.

    The strongest cards go to the front and the weakest to the middle; when that is not a foul
    (rare), random splits are tried.
    """
    cards = sorted(parse_cards(list(hand)), key=lambda c: (c.rank, c.suit), reverse=True)
    rng = random.Random(13)
    order: list[Card] = list(cards)
    for _attempt in range(500):
        front, middle, back = order[:3], order[-5:], order[3:8]
        bad = _foul_of(front, middle, back, config)
        if "front" in bad:
            return {
                "front": format_cards(front),
                "middle": format_cards(middle),
                "back": format_cards(back),
            }, bad
        order = list(cards)
        rng.shuffle(order)
    raise AssertionError(f"no fouled arrangement found for {hand}")


def _foul_of(
    front: Iterable[Card], middle: Iterable[Card], back: Iterable[Card], config: RuleConfig
) -> tuple[str, ...]:
    a2345 = config.a2345
    return foul_rows(
        evaluate(list(front), a2345), evaluate(list(middle), a2345), evaluate(list(back), a2345)
    )


def click_card(player: Player, card: str) -> None:
    node = player.page.locator(f"[data-testid=hand] [data-card='{card}']")
    node.click()
    expect(node).to_have_class(re.compile(r"\bselected\b"), timeout=PAGE)


def place_by_clicks(player: Player, cards: Sequence[str], row: str) -> None:
    """Click each card of the hand (it is selected), then the row: they move there. Cards
    already in the row are left there (when two rows are full, the page fills the third)."""
    cards = [c for c in cards if c not in cards_in(player, f"row-{row}")]
    if not cards:
        return
    for card in cards:
        click_card(player, card)
    player.testid(f"row-{row}").click()
    for card in cards:
        expect(player.page.locator(f"[data-testid=row-{row}] [data-card='{card}']")).to_be_visible(
            timeout=PAGE
        )


def drag_card(player: Player, card: str, row: str) -> None:
    """Drag a card of the hand onto a row with the mouse.

    SortableJS uses native HTML5 drag and drop here (no forceFallback): it starts the drag a
    tick after ``dragstart`` and ignores ``dragover`` while it is not started or a card is
    animating. So the mouse pauses after starting, then moves to the row's free end (past its
    last card: the card is appended) and keeps hovering there until SortableJS has moved the
    card into the row, and only then releases (the drop keeps it there)."""
    page = player.page
    source = page.locator(f"[data-testid=hand] [data-card='{card}']")
    placed = page.locator(f"[data-testid=row-{row}] [data-card='{card}']")
    source.scroll_into_view_if_needed()
    start = source.bounding_box()
    assert start is not None
    x, y = start["x"] + start["width"] / 2, start["y"] + start["height"] / 2
    page.mouse.move(x, y)
    page.mouse.down()
    page.mouse.move(x + 6, y - 6, steps=3)
    page.wait_for_timeout(150)
    end = player.testid(f"row-{row}").bounding_box()
    assert end is not None
    x, y = end["x"] + end["width"] - 8, end["y"] + end["height"] / 2
    page.mouse.move(x - 20, y, steps=10)
    for step in range(40):  # at most ~4 s
        page.mouse.move(x - 4 * (step % 2), y, steps=2)
        page.wait_for_timeout(100)
        if placed.count():
            break
    page.mouse.up()
    expect(placed).to_be_visible(timeout=PAGE)
    expect(source).to_have_count(0, timeout=PAGE)


def place(player: Player, rows: dict[str, list[str]], *, drag: int = 1) -> None:
    """Place the cards of the hand as ``rows`` says (cards already in their row stay): the
    last ``drag`` cards to place (back row first) by drag and drop, first, then the others by
    clicks, row by row (when two rows are full the page moves the rest to the third itself)."""
    missing = {r: [c for c in rows[r] if c not in cards_in(player, f"row-{r}")] for r in ROWS}
    dragged: dict[str, list[str]] = {r: [] for r in ROWS}
    left = drag
    for row in ("back", "middle", "front"):
        take = min(left, len(missing[row]))
        if take:
            dragged[row] = missing[row][-take:]
        left -= take
    assert left == 0, f"fewer than {drag} cards to place"
    for row in ROWS:
        for card in dragged[row]:
            drag_card(player, card, row)
    for row in ROWS:
        place_by_clicks(player, [c for c in missing[row] if c not in dragged[row]], row)
    assert_rows(player, rows)


def assert_rows(player: Player, rows: dict[str, list[str]]) -> None:
    for row in ROWS:
        expect(player.page.locator(f"[data-testid=row-{row}] [data-card]")).to_have_count(
            len(rows[row]), timeout=PAGE
        )
        assert sorted(cards_in(player, f"row-{row}")) == sorted(rows[row]), row


def submit(player: Player) -> None:
    button = player.testid("submit-button")
    expect(player.testid("foul-warning")).to_be_hidden(timeout=PAGE)
    expect(button).to_be_enabled(timeout=PAGE)
    button.click()
    expect(player.page.locator("[data-testid=seat][data-me=true] .badge.done")).to_be_visible(
        timeout=SERVER
    )


def play_hand(player: Player, room: Room, *, drag: int = 1) -> None:
    """Wait for the hand, answer a special hand question with No, arrange the engine's best
    arrangement by clicks and ``drag`` drags, submit."""
    hand = wait_for_hand(player)
    answer_special(player)
    place(player, best_rows(hand, round_config(room)), drag=drag)
    submit(player)


# ---- the settlement --------------------------------------------------------------------------


def page_deltas(player: Player) -> dict[int, int]:
    panel = player.testid("settlement-panel")
    expect(panel).to_be_visible(timeout=SERVER)
    deltas = panel.locator("[data-testid=settlement-delta]").evaluate_all(
        "els => els.map(e => [Number(e.dataset.position), Number(e.dataset.delta)])"
    )
    return {int(position): int(delta) for position, delta in deltas}


def check_settlement(
    players: Sequence[Player], room: Room, *, escapes: bool = False
) -> dict[int, int]:
    """Every page shows the same deltas, which the round and its ledger transaction hold, and
    each page's balance is its wallet's. Returns the deltas by position."""
    shown = [page_deltas(p) for p in players]
    deltas = shown[0]
    assert len(deltas) == len(players), deltas
    for other in shown[1:]:
        assert other == deltas
    if not escapes:
        assert sum(deltas.values()) == 0, deltas

    round_ = wait_until(
        "the round to be settled",
        lambda: (
            Round.objects.filter(table__room=room, settled_at__isnull=False)
            .order_by("-number")
            .first()
        ),
        seconds=30,
    )
    by_position = {rp.position: rp for rp in round_.players.all()}
    assert {pos: rp.delta for pos, rp in by_position.items()} == deltas

    key = f"round:{round_.pk}:settlement"
    transaction = Transaction.objects.filter(idempotency_key=key).first()
    if any(deltas.values()):
        assert transaction is not None
        assert round_.transaction_id == transaction.pk
        entries = {
            e.account.user_id: e.amount
            for e in Entry.objects.filter(
                transaction=transaction, account__kind=AccountKind.WALLET
            ).select_related("account")
        }
        for position, rp in by_position.items():
            assert entries.get(rp.user_id, 0) == deltas[position], position
    else:
        assert transaction is None

    for player in players:
        assert player.user is not None
        expect(player.testid("my-balance")).to_have_attribute(
            "data-balance", str(wallet_balance(user=player.user)), timeout=PAGE
        )
    return deltas


# ---- a table with a round being dealt ----------------------------------------------------------


def seat_and_ready(players: Sequence[Player], base_url: str, *, rules: str, room_name: str) -> Room:
    """Everyone signs up and opens the lobby; the first opens a public room with a seat for
    each, the others join it from the lobby's list; everyone presses Ready (the last deals)."""
    for player in players:
        sign_up(player, base_url)
        open_lobby(player, base_url)
    first, *others = players
    room = open_room(first, name=room_name, rules=rules, seats=len(players))
    for player in others:
        join_from_list(player, room)
    for player in players:
        press_ready(player)
    return room


def apply_best_suggestion(player: Player) -> None:
    """One click on the best suggestion places all 13 cards."""
    player.page.locator("[data-testid=suggestion]").first.click()
    expect(player.page.locator("[data-testid=hand] [data-card]")).to_have_count(0, timeout=PAGE)


def draft_saved(player: Player, room: Room, rows: dict[str, list[str]]) -> None:
    """Wait until the server has acknowledged the draft holding these rows (``draft_saved``,
    which the page keeps in sessionStorage)."""
    player.page.wait_for_function(
        """([key, rows]) => {
            const saved = JSON.parse(sessionStorage.getItem(key) || "null");
            const draft = saved && saved.you && saved.you.draft;
            if (!draft) return false;
            return Object.entries(rows).every(([row, cards]) =>
                Array.isArray(draft[row]) && draft[row].length === cards.length &&
                cards.every((c) => draft[row].includes(c)));
        }""",
        arg=[f"shisanshui.table.{room.pk}", rows],
        timeout=SERVER,
    )


# Every WebSocket the page opens is kept in window.__sockets; while window.__dropped is set a
# new one goes to a path the server refuses (the same origin, which the page's CSP allows), as
# it would fail with no network.
SOCKET_HOOK = """
(() => {
  const Native = window.WebSocket;
  window.__sockets = [];
  window.__dropped = false;
  function Hooked(url, protocols) {
    const to = window.__dropped ? url.replace("/ws/table/", "/ws/dropped/") : url;
    const socket = new Native(to, protocols);
    window.__sockets.push(socket);
    return socket;
  }
  Hooked.prototype = Native.prototype;
  for (const name of ["CONNECTING", "OPEN", "CLOSING", "CLOSED"]) Hooked[name] = Native[name];
  window.WebSocket = Hooked;
})();
"""


def network_drop(page: Page) -> None:
    """The network goes: the page's sockets close and, until :func:`network_return`, every
    socket it opens fails (the page needs ``page.context.add_init_script(SOCKET_HOOK)``)."""
    page.context.set_offline(True)
    page.evaluate("() => { window.__dropped = true; window.__sockets.forEach((s) => s.close()); }")


def network_return(page: Page) -> None:
    """The network is back after :func:`network_drop`."""
    page.evaluate("() => { window.__dropped = false; }")
    page.context.set_offline(False)

"""Attack: a staff member reads the hands of a round still being played (2).

Against the live platform (real daphne, Celery worker and Redis: ``tests.live_server``), with
plain HTTP requests. Alice and Bob are dealt a round; Alice's arrangement is in and Bob has
saved a draft. `support`, `rules_admin` and a superuser then fetch every round page of the
admin (list, each filter, search, change page, object history), run its actions (verify, CSV
exports), verify by date, try URL lookups on the cards and the table state, open the replay,
the hand history, the staff pages around it and the API. No card of either hand may appear in
any response. Before the fix, `/admin/games/round/<id>/change/` showed all 26. Once the
round is settled, the same pages show every hand again (the audit is intact).
"""

from __future__ import annotations

import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass, field
from datetime import timedelta

import pytest
from django.contrib.auth.models import Group
from django.utils import timezone

from accounts.groups import RULES_ADMIN, SUPPORT
from accounts.models import User
from games.live import notify as table_notify
from games.live import services as table_services
from games.models import Round, RoundPlayer
from games.table.state import Phase
from lobby.models import Room
from tests.games.table_helpers import (
    fast_rules,
    make_player,
    open_table,
    press_ready,
    state_of,
    submit_best,
    table_id,
)
from tests.live_server import LivePlatform, session_cookie_for

SECONDS = 30  # every wait's deadline
CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][SHCD])(?![A-Za-z0-9])")
IN_PLAY = "in play — cards hidden until settlement"


@dataclass
class Response:
    url: str
    status: int
    text: str


@dataclass
class Browser:
    """One signed-in user's plain HTTP session (cookies kept by hand, CSRF token from pages)."""

    base: str
    cookies: dict[str, str]
    seen: list[Response] = field(default_factory=list)

    def _open(self, path: str, data: dict[str, object] | None = None) -> Response:
        headers = {"Cookie": "; ".join(f"{k}={v}" for k, v in self.cookies.items())}
        body = None
        if data is not None:
            body = urllib.parse.urlencode(data, doseq=True).encode()
            headers["Referer"] = self.base + path
        request = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=60) as raw:
                status, text, reply = raw.status, raw.read(), raw
                set_cookies = raw.headers.get_all("Set-Cookie") or []
        except urllib.error.HTTPError as error:
            status, text, reply = error.code, error.read(), error
            set_cookies = error.headers.get_all("Set-Cookie") or []
        for header in set_cookies:
            name, _sep, rest = header.partition("=")
            self.cookies[name.strip()] = rest.split(";", 1)[0]
        response = Response(reply.geturl(), status, text.decode("utf-8-sig", errors="replace"))
        self.seen.append(response)
        return response

    def get(self, path: str, query: dict[str, object] | None = None) -> Response:
        suffix = "?" + urllib.parse.urlencode(query) if query else ""
        return self._open(path + suffix)

    def post(self, path: str, fields: dict[str, object]) -> Response:
        """POST the page's form with its CSRF token (no form: the refused page itself)."""
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        if token is None:
            assert page.status in (403, 404), f"no CSRF token on {path} ({page.status})"
            return page
        return self._open(path, {"csrfmiddlewaretoken": token.group(1), **fields})


def wait_until(what: str, check: object, seconds: float = SECONDS) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        time.sleep(0.1)


def to_arranging(room: Room, players: list[User]) -> None:
    """End the deal (the platform's sweeper may do it first) and answer No to any special."""

    def arranging() -> bool:
        state = state_of(room)
        if state.phase is Phase.DEALING and state.deadline and state.deadline <= time.time():
            table_services.table_timeout(
                table_id=table_id(room), version=state.version, phase="dealing"
            )
        for user in players:
            now = state_of(room)  # the deal may not be over yet (a few ms of pacing)
            seat = now.seat_of(str(user.pk))
            if seat is not None and seat.choosing and now.phase is Phase.SPECIAL_CHOICE:
                table_services.table_choose_special(user=user, room=room, play_special=False)
        return state_of(room).phase is Phase.ARRANGING

    wait_until("the arranging phase", arranging)


def settle(room: Room, round_: Round) -> None:
    """Bob's hand goes in; the comparison ends (by us or by the platform's sweeper)."""

    def settled() -> bool:
        state = state_of(room)
        if state.phase is Phase.COMPARING and state.deadline and state.deadline <= time.time():
            table_services.table_timeout(
                table_id=table_id(room), version=state.version, phase="comparing"
            )
        round_.refresh_from_db()
        return round_.settled_at is not None

    wait_until("the settlement", settled)


def staff(name: str, group: str | None) -> User:
    if group is None:
        return User.objects.create_superuser(name, password="not-used-1")
    user = User.objects.create_user(name, password="not-used-1", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return user


def visit_everything(browser: Browser, round_: Round, room: Room, player: str) -> None:
    """Every page a staff member could read a round's hands from."""
    rounds = "/admin/games/round/"
    now = timezone.now()
    for query in (
        {},
        {"status": "in_play"},
        {"status": "settled"},
        {"player": player},
        {"table__room__id__exact": room.pk},
        {"settled_at__isnull": "True"},
        {
            "settled_at__gte": (now - timedelta(days=1)).isoformat(),
            "settled_at__lt": (now + timedelta(days=1)).isoformat(),
        },
        {"amount": "0-99"},
        {"amount": "10000-"},
        {"flag": "escape"},
        {"flag": "cut"},
        {"flag": "auto"},
        {"q": player},
        {"q": room.name},
        {"q": round_.commitment},
        {"settled_at__year": now.year},
    ):
        browser.get(rounds, query)
    browser.get(f"{rounds}{round_.pk}/change/")
    browser.get(f"{rounds}{round_.pk}/history/")
    for action in ("verify_selected", "export_rounds_csv", "export_ledger_csv"):
        browser.post(rounds, {"action": action, "_selected_action": round_.pk})
    today = now.date()
    browser.get(
        f"{rounds}verify/",
        {"date_from": str(today - timedelta(days=1)), "date_to": str(today)},
    )
    browser.get(f"/games/rounds/{round_.pk}/replay/")
    for path in (
        "/admin/",
        "/admin/games/",
        f"/admin/lobby/room/{room.pk}/change/",
        "/admin/accounts/transaction/",
        "/games/history/",
        "/api/me/",
        "/api/wallet/entries/",
        "/api/lobby/rooms/",
        f"/api/lobby/rooms/{room.pk}/",
        "/api/lobby/me/",
    ):
        browser.get(path)


def test_no_staff_member_reads_a_hand_before_the_settlement(
    live_platform: LivePlatform, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The round is driven here, through the services; the platform only serves the pages.
    monkeypatch.setattr(table_notify, "send_messages", lambda *args, **kwargs: None)
    rules = fast_rules(name="Hidden hands", special_choice_seconds=3600, arrange_seconds=3600)
    alice, bob = make_player("hhalice"), make_player("hhbob")
    room = open_table([alice, bob], rules=rules)
    press_ready([alice, bob], room)
    to_arranging(room, [alice, bob])
    submit_best(room, alice)
    round_ = Round.objects.get(table__room=room)
    hands = dict(RoundPlayer.objects.filter(round=round_).values_list("user__username", "cards"))
    table_services.table_save_draft(
        user=bob, room=room, draft={"front": hands[bob.username].split()[:3]}
    )
    secret = {card for hand in hands.values() for card in hand.split()}
    assert len(secret) == 26 and round_.settled_at is None

    browsers = {
        name: Browser(live_platform.url, session_cookie_for(staff(name, group)))
        for name, group in (("hhsupport", SUPPORT), ("hhrules", RULES_ADMIN), ("hhroot", None))
    }
    for browser in browsers.values():
        visit_everything(browser, round_, room, alice.username)
        card = hands[alice.username].split()[0]
        # URL lookups that would tell the cards without showing them: refused.
        oracles = [
            browser.get("/admin/games/round/", query)
            for query in (
                {"players__cards__contains": card},
                {"players__arrangement__isnull": "False"},
                {"deck__contains": card},
                {"table__state__has_key": "seats"},
                {"table__events__payload__has_key": "hand"},
            )
        ]
        assert all(r.status in (400, 403) for r in oracles), [(r.url, r.status) for r in oracles]
        for response in browser.seen:
            assert response.status < 500, (response.url, response.status)
            shown = set(CARD.findall(response.text)) & secret
            assert not shown, f"{response.url} ({response.status}) shows {sorted(shown)}"

    support, rules_admin, root = browsers["hhsupport"], browsers["hhrules"], browsers["hhroot"]
    # Rules administrators view rounds (where the rules are used) as support does.
    for browser in (support, rules_admin, root):
        change = browser.get(f"/admin/games/round/{round_.pk}/change/")
        assert change.status == 200 and IN_PLAY in change.text
        assert round_.commitment in change.text
        replay = browser.get(f"/games/rounds/{round_.pk}/replay/")
        assert replay.status == 403 and "replay opens once it is settled" in replay.text
    player = Browser(live_platform.url, session_cookie_for(alice))
    refused = player.get(f"/games/rounds/{round_.pk}/replay/")
    assert refused.status == 403 and "Your hand is at the table" in refused.text
    assert not set(CARD.findall(refused.text)) & secret

    # Settled: the audit shows every hand again.
    submit_best(room, bob)
    settle(room, round_)
    for browser in (support, root):
        change = browser.get(f"/admin/games/round/{round_.pk}/change/")
        assert change.status == 200 and IN_PLAY not in change.text
        assert all(hand in change.text for hand in hands.values())
        assert "MISMATCH" not in change.text and "MATCH" in change.text
        export = browser.post(
            "/admin/games/round/", {"action": "export_rounds_csv", "_selected_action": round_.pk}
        )
        assert all(hand in export.text for hand in hands.values())
        replay = browser.get(f"/games/rounds/{round_.pk}/replay/")
        assert replay.status == 200 and secret <= set(CARD.findall(replay.text))
    assert player.get(f"/games/rounds/{round_.pk}/replay/").status == 200

"""Attacks by staff and look-alikes (1, 3, 4), replayed against the live platform.

Real daphne, Celery worker (with beat) and Redis (``tests.live_server``); every step goes
through HTTP (the admin's real forms, with their CSRF tokens, after a real log-in) or the
table's socket. Before the fixes:

1. a rules admin saved Economy settings with daily_bonus = 900,000,000,000,000 and claimed it
   (`POST /api/wallet/daily-bonus/`); the same form switched the collusion report off and
   lifted the sign-up cap;
3. a superuser set a seated player's password in the admin, logged in as the player and read
   the live hand on the table socket;
4. sign-up took ``аlice`` (Cyrillic а) beside ``alice``; chat took invisible-only text and 80
   stacked combining marks; the statistics API told which names exist, staff included.

Now: (a) a rules admin changes nothing through any route and the bonus pays the configured
amount; (b) a superuser's value above its bound is refused, a legal one is only a proposal
until another economy administrator approves it (grants name the settings version they were
paid under), and nobody approves their own; (c) nobody sets a seated player's password, the
superuser's socket shows no hand, a reset link marks the round; (d) the look-alike sign-up,
the three chat texts and the name probe are refused or answered alike. The money reconciles
(`manage.py ledger_audit`). One test, so one platform is started.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import Any

import pytest
import websockets
from django.contrib.auth.models import Group
from rest_framework.authtoken.models import Token

from accounts.groups import ECONOMY_ADMIN, RULES_ADMIN
from accounts.models import (
    ECONOMY_BOUNDS,
    EconomyChange,
    EconomyChangeStatus,
    EconomySettings,
    Transaction,
    TransactionKind,
    User,
)
from accounts.services import economy_settings_get_or_create
from games.live import notify as table_notify
from games.models import Round, RoundPlayer, RoundStaffAction
from lobby.models import Room
from tests.accounts.helpers import balance_of
from tests.games.table_helpers import fast_rules, make_player, open_table, press_ready
from tests.live_server import LivePlatform
from tests.security.test_economy import _ledger_reconciles, _sign_up
from tests.security.test_staff_hidden_hands import CARD, to_arranging

TIMEOUT = 30
PASSWORD = "staff-powers-Pass-7"
ATTACK = 900_000_000_000_000
SETTINGS = "/admin/accounts/economysettings/1/change/"
CHANGES = "/admin/accounts/economychange/"
NOT_PERMITTED = "needs the economy administrator permission; nothing was changed"
LOOKS_LIKE = "This name looks like the name of an existing player. Please choose another."


@dataclass
class Page:
    status: int
    text: str
    location: str


class Session:
    """One browser: its cookies, no redirect followed unless asked."""

    def __init__(self, base: str) -> None:
        class Keep(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: object, **kwargs: object) -> None:
                return None

        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), Keep
        )

    def open(self, path: str, data: dict[str, Any] | None = None) -> Page:
        body = None if data is None else urllib.parse.urlencode(data, doseq=True).encode()
        headers = {"Accept-Language": "en", "Referer": self.base + path}
        request = urllib.request.Request(self.base + path, data=body, headers=headers)
        try:
            with self.opener.open(request, timeout=TIMEOUT) as raw:
                status, text, location = raw.status, raw.read(), raw.headers.get("Location")
        except urllib.error.HTTPError as error:
            status, text, location = error.code, error.read(), error.headers.get("Location")
        return Page(status, text.decode("utf-8", errors="replace"), location or "")

    def submit(self, path: str, fields: dict[str, Any], *, follow: bool = False) -> Page:
        """POST the form of the page at `path` with its CSRF token; with `follow`, GET where a
        redirect leads (the admin's messages are on that page)."""
        page = self.open(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.text)
        if token is None:  # no form: post with the cookie's token, as a script would
            token_value = next((c.value for c in self.jar if c.name == "csrftoken"), "")
        else:
            token_value = token.group(1)
        answer = self.open(path, {"csrfmiddlewaretoken": token_value, **fields})
        if follow and answer.status == 302:
            return self.open(urllib.parse.urlsplit(answer.location).path)
        return answer

    def log_in(self, username: str) -> None:
        """The admin's log-in form."""
        answer = self.submit(
            "/admin/login/", {"username": username, "password": PASSWORD, "next": "/admin/"}
        )
        assert answer.status == 302, (username, answer.status, answer.text[:300])

    def cookie_header(self) -> str:
        return "; ".join(f"{c.name}={c.value}" for c in self.jar)


def staff(username: str, group: str | None) -> User:
    if group is None:
        return User.objects.create_superuser(username, password=PASSWORD)
    user = User.objects.create_user(username, password=PASSWORD, is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    return user


def economy_form(**changes: object) -> dict[str, object]:
    """The economy settings form as stored, with `changes`."""
    stored = economy_settings_get_or_create()
    form: dict[str, object] = {
        name: "" if getattr(stored, name) is None else getattr(stored, name)
        for name in ECONOMY_BOUNDS
    }
    form.update(changes)
    return form


def economy_now() -> dict[str, object]:
    stored = EconomySettings.objects.get(pk=EconomySettings.SINGLETON_ID)
    return {name: getattr(stored, name) for name in (*ECONOMY_BOUNDS, "version")}


def api(platform: LivePlatform, method: str, path: str, token: str, body: bytes = b"") -> Page:
    request = urllib.request.Request(
        platform.url + path,
        data=body if method != "GET" else None,
        method=method,
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT) as raw:
            return Page(raw.status, raw.read().decode(), "")
    except urllib.error.HTTPError as error:
        return Page(error.code, error.read().decode(), "")


def daily_bonus_of(player: User) -> Transaction:
    return Transaction.objects.get(kind=TransactionKind.DAILY_BONUS, reference=f"user:{player.pk}")


def user_form(user: User, **changes: object) -> dict[str, object]:
    """The user change form as the page posts it (the password field is read-only)."""
    return {
        "username": user.username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "is_active": "on",
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        **changes,
    }


# The socket.


async def _frames(socket: Any, seconds: float) -> list[dict[str, Any]]:
    frames = []
    deadline = time.monotonic() + seconds
    try:
        while (left := deadline - time.monotonic()) > 0:
            frames.append(json.loads(await asyncio.wait_for(socket.recv(), left)))
    except (TimeoutError, websockets.ConnectionClosed):
        pass
    return frames


def chats(frames: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        event["payload"]
        for frame in frames
        if frame["type"] == "events"
        for event in frame["events"]
        if event["type"] == "chat"
    ]


async def table_sockets(
    platform: LivePlatform, room: Room, players: dict[str, str], root: str
) -> dict[str, Any]:
    """Alice, Bob and the superuser on the table's socket (cookie headers given). Alice sends
    the three texts the attack sent, then a plain one once the chat budget allows."""
    url = platform.ws_url(f"ws/table/{room.pk}/")

    def connect(cookie: str) -> Any:
        headers = {"Cookie": cookie, "Origin": platform.url}
        return websockets.connect(url, additional_headers=headers)

    async with connect(players["alice"]) as alice, connect(players["bob"]) as bob:
        hello = {"type": "hello", "id": "h", "since": None}
        for socket in (alice, bob):
            await socket.send(json.dumps(hello))
        seen_by = {"alice": await _frames(alice, 2)}
        async with connect(root) as superuser:
            await superuser.send(json.dumps(hello))
            seen_by["root"] = await _frames(superuser, 3)
        bad = ["\u3164", "\u2800", "a" + "\u0301" * 80]
        for n, text in enumerate(bad):
            await alice.send(
                json.dumps({"type": "chat", "id": f"c{n}", "kind": "text", "value": text})
            )
        replies = await _frames(alice, 2)
        await asyncio.sleep(5.2)  # the chat budget: 3 messages per 5 s
        await alice.send(json.dumps({"type": "chat", "id": "ok", "kind": "text", "value": "gg"}))
        replies += await _frames(alice, 2)
        seen_by["bob"] = await _frames(bob, 1)
        return {"seen_by": seen_by, "replies": replies}


# The attacks.


def test_staff_powers_and_look_alikes_hold_against_the_live_platform(
    live_platform: LivePlatform, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The round is driven here, through the services; the platform serves the pages, the API
    # and the sockets.
    monkeypatch.setattr(table_notify, "send_messages", lambda *args, **kwargs: None)
    rules = fast_rules(name="Staff powers", special_choice_seconds=3600, arrange_seconds=3600)
    alice, bob = make_player("alice"), make_player("bob")
    User.objects.filter(pk=alice.pk).update(email="alice@example.com")
    for user in (alice, bob):
        user.set_password(PASSWORD)
        user.save(update_fields=["password"])
    economy_settings_get_or_create()
    staff("ecrules", RULES_ADMIN)
    root_user, approver = staff("ecroot", None), staff("ececon", ECONOMY_ADMIN)
    rules_admin, root, economist = (Session(live_platform.url) for _ in range(3))
    rules_admin.log_in("ecrules")
    root.log_in("ecroot")
    economist.log_in("ececon")
    first, second = make_player("claimer1"), make_player("claimer2")
    tokens = {user.username: Token.objects.create(user=user).key for user in (first, second)}
    before = economy_now()

    # (b, first half) A superuser: a value above its bound is refused; a legal raise is a
    # proposal only.
    for value in (ECONOMY_BOUNDS["daily_bonus"] + 1, ATTACK):
        answer = root.submit(SETTINGS, economy_form(daily_bonus=value))
        assert answer.status == 200 and "At most 100000." in answer.text, answer.text[:300]
    assert economy_now() == before and not EconomyChange.objects.exists()
    answer = root.submit(SETTINGS, economy_form(daily_bonus=3_000), follow=True)
    assert "Proposed as economy change" in answer.text
    raise_ = EconomyChange.objects.get()
    assert raise_.status == EconomyChangeStatus.PENDING and raise_.values == {"daily_bonus": 3_000}
    assert economy_now() == before

    # (a) A rules admin, through every route the admin offers.
    page = rules_admin.open(SETTINGS)
    assert page.status == 200 and 'name="daily_bonus"' not in page.text  # read-only
    for changes in (
        {"daily_bonus": ATTACK},
        {"signup_grant": ECONOMY_BOUNDS["signup_grant"]},
        {"collusion_min_rounds": 1_000, "collusion_min_share_percent": 100},
        {"signups_per_address_per_day": 0},
    ):
        assert rules_admin.submit(SETTINGS, economy_form(**changes)).status == 403, changes
        version = EconomySettings.history.latest().history_id
        old_version = f"/admin/accounts/economysettings/1/history/{version}/"
        assert rules_admin.submit(old_version, economy_form(**changes)).status == 403, changes
        add = rules_admin.submit(f"{CHANGES}add/", {"values": json.dumps(changes)})
        assert add.status == 403, changes
    approve = {"action": "economy_changes_approve", "_selected_action": raise_.pk}
    assert rules_admin.submit(CHANGES, approve).status == 403
    assert rules_admin.submit(f"{CHANGES}{raise_.pk}/change/", {"status": "applied"}).status == 403
    # No API sets the economy; a claim's body is not read.
    for path in ("/api/economy/", "/api/wallet/", "/api/wallet/daily-bonus/"):
        assert api(
            live_platform, "PATCH", path, tokens["claimer1"], b'{"daily_bonus": 9}'
        ).status in (
            404,
            405,
        )
    assert economy_now() == before
    assert EconomyChange.objects.get().status == EconomyChangeStatus.PENDING
    claim = api(
        live_platform,
        "POST",
        "/api/wallet/daily-bonus/",
        tokens["claimer1"],
        json.dumps({"amount": ATTACK}).encode(),
    )
    assert claim.status == 201, claim.text
    assert balance_of(first) - 100_000 == before["daily_bonus"] == 2_000
    assert daily_bonus_of(first).cause == f"economy_settings:v{before['version']}"

    # (b, second half) The proposer cannot approve it; another economy administrator does.
    own = root.submit(CHANGES, approve, follow=True)
    assert "must be approved by another economy administrator" in own.text
    assert EconomyChange.objects.get().status == EconomyChangeStatus.PENDING
    done = economist.submit(CHANGES, approve, follow=True)
    assert f"Economy change #{raise_.pk} applied." in done.text
    assert EconomyChange.objects.get().approved_by == approver
    after = economy_now()
    assert after["daily_bonus"] == 3_000 and after["version"] == before["version"] + 1  # type: ignore[operator]
    assert api(live_platform, "POST", "/api/wallet/daily-bonus/", tokens["claimer2"]).status == 201
    assert balance_of(second) - 100_000 == 3_000
    assert daily_bonus_of(second).cause == f"economy_settings:v{after['version']}"

    # (c) Alice and Bob in a round in play: Alice's hand is dealt.
    room = open_table([alice, bob], rules=rules)
    press_ready([alice, bob], room)
    to_arranging(room, [alice, bob])
    round_ = Round.objects.get(table__room=room)
    hands = dict(RoundPlayer.objects.filter(round=round_).values_list("user__username", "cards"))
    secret = set(hands["alice"].split())
    alice.refresh_from_db()
    hash_before = alice.password
    password_url = f"/admin/accounts/user/{alice.pk}/password/"
    assert root.open(password_url).status == 403
    set_it = {"password1": "rooted-Pass-99", "password2": "rooted-Pass-99"}
    assert root.submit(password_url, set_it).status == 403
    posted_hash = User.objects.get(pk=root_user.pk).password  # a hash whose password root knows
    change = root.submit(
        f"/admin/accounts/user/{alice.pk}/change/", user_form(alice, password=posted_hash)
    )
    assert change.status == 302, change.text[:300]
    for action in ("set_password", "change_password", "delete_selected"):
        root.submit("/admin/accounts/user/", {"action": action, "_selected_action": alice.pk})
    alice.refresh_from_db()
    assert alice.password == hash_before and alice.is_active
    assert not RoundStaffAction.objects.exists()  # nothing was changed: nothing to mark
    logged_in_as_alice = Session(live_platform.url)
    assert logged_in_as_alice.submit(
        "/accounts/login/", {"username": "alice", "password": "rooted-Pass-99"}
    ).status in (200, 403, 429)
    assert "sessionid" not in logged_in_as_alice.cookie_header()

    # The superuser's socket (a spectator's) shows no hand; Alice's own shows hers. (d) Chat.
    players = {}
    for name in ("alice", "bob"):
        session = Session(live_platform.url)
        answer = session.submit("/accounts/login/", {"username": name, "password": PASSWORD})
        assert answer.status == 302, answer.text[:300]
        players[name] = session.cookie_header()
    seen = asyncio.run(table_sockets(live_platform, room, players, root.cookie_header()))
    root_text = json.dumps(seen["seen_by"]["root"])
    assert seen["seen_by"]["root"], "the superuser's socket said nothing"
    assert not set(CARD.findall(root_text)) & secret, root_text[:500]
    assert secret <= set(CARD.findall(json.dumps(seen["seen_by"]["alice"])))
    errors = {r["id"]: r["error"]["code"] for r in seen["replies"] if r["type"] == "error"}
    assert errors == {"c0": "bad_chat", "c1": "bad_chat", "c2": "bad_chat"}, seen["replies"]
    assert chats(seen["seen_by"]["bob"]) == [{"position": 0, "kind": "text", "value": "gg"}]

    # A reset link goes to the player's address, and marks the round.
    sent = root.submit(
        "/admin/accounts/user/",
        {"action": "send_password_reset_link", "_selected_action": alice.pk},
        follow=True,
    )
    assert "Sent a password reset link to 1 account." in sent.text
    mark = RoundStaffAction.objects.get(round=round_, player=alice)
    assert mark.actions == ["reset_link"] and mark.staff_id == root_user.pk
    alice.refresh_from_db()
    assert alice.password == hash_before
    round_.refresh_from_db()
    assert round_.settled_at is None

    # (d) A look-alike sign-up; the statistics API asked about a missing, a staff and a bot name.
    users = User.objects.count()
    status, body = _sign_up(live_platform, "\u0430lice")
    assert status == 200 and LOOKS_LIKE in body
    assert User.objects.count() == users
    User.objects.create_user(username="bot-c0ffee00", is_bot=True)
    answers = {
        (page.status, page.text.replace(name, "NAME"))
        for name in ("nobody-here", "ecroot", "ecrules", "bot-c0ffee00")
        for page in [
            api(live_platform, "GET", f"/api/games/players/{name}/stats/", tokens["claimer1"])
        ]
    }
    assert len(answers) == 1 and next(iter(answers))[0] == 404, answers

    _ledger_reconciles(live_platform)

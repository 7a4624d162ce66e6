"""Attacks on the HTTP side (5 and 6), against the live platform.

Real daphne, Celery worker and Redis (``tests.live_server``); every request comes from
127.0.0.1. Before the fix: log-in and /api/auth/token/ could be brute-forced (no lockout, no
429), an API token outlived a password change, and a WebSocket from http://localhost:31337 or
https://127.0.0.1 was accepted (the Origin's host alone was compared). Now:

- the 5th wrong password for one user name locks that name out from the address (429 with
  Retry-After), even for the right password, on the web log-in and on the token endpoint,
  and the token endpoint answers at most 10 requests a minute per address;
- a password change deletes the API tokens: the old one is refused at once;
- a WebSocket from another origin (port, scheme) or without an Origin is refused at the
  handshake; the platform's own origin connects.
"""

from __future__ import annotations

import asyncio
import http.cookiejar
import json
import re
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

import websockets
from websockets.exceptions import InvalidStatus

from accounts.models import User
from benchmarks.table_client import cookie_header
from tests.live_server import LivePlatform, session_cookie_for

PASSWORD = "Correct-horse-battery-9"
NEW_PASSWORD = "Another-horse-battery-10"
LIMIT = 5
TOKEN_RATE = 10
TIMEOUT = 30


class Browser:
    """Cookies, CSRF tokens, no redirects followed: (status, headers, body) of each answer."""

    def __init__(self, platform: LivePlatform) -> None:
        self.base = platform.url

        class Keep(urllib.request.HTTPRedirectHandler):
            def redirect_request(self, *args: object, **kwargs: object) -> None:
                return None

        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.jar), Keep
        )

    def open(
        self, path: str, data: bytes | None = None, headers: dict[str, str] | None = None
    ) -> tuple[int, Any, str]:
        request = urllib.request.Request(
            self.base + path,
            data=data,
            headers={"Accept-Language": "en", "Referer": self.base + path, **(headers or {})},
        )
        try:
            with self.opener.open(request, timeout=TIMEOUT) as response:
                return response.status, response.headers, response.read().decode()
        except urllib.error.HTTPError as answer:
            return answer.code, answer.headers, answer.read().decode()

    def post_form(self, path: str, fields: dict[str, str]) -> tuple[int, Any, str]:
        """GETs the page for its CSRF token, then POSTs the form."""
        _status, _headers, page = self.open(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token is not None, page[:300]
        form = {"csrfmiddlewaretoken": token.group(1), **fields}
        return self.open(path, urllib.parse.urlencode(form).encode())

    def api(
        self, method: str, path: str, body: dict[str, str] | None = None, token: str = ""
    ) -> tuple[int, Any, dict[str, Any]]:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if token:
            headers["Authorization"] = f"Token {token}"
        request = urllib.request.Request(
            self.base + path,
            data=json.dumps(body).encode() if body is not None else None,
            headers=headers,
            method=method,
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
                return response.status, response.headers, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as answer:
            return answer.code, answer.headers, json.loads(answer.read() or b"{}")


def _log_in(browser: Browser, username: str, password: str) -> tuple[int, Any, str]:
    return browser.post_form("/accounts/login/", {"username": username, "password": password})


def test_log_in_brute_force_is_locked_out_and_the_token_endpoint_throttled(
    live_platform: LivePlatform,
) -> None:
    User.objects.create_user(username="victim", password=PASSWORD)
    User.objects.create_user(username="scripted", password=PASSWORD)
    attacker = Browser(live_platform)

    # The web log-in: four failures show the form again, the fifth locks the name out.
    answers = [_log_in(attacker, "victim", f"guess{n}") for n in range(LIMIT)]
    assert [status for status, _h, _b in answers] == [200] * (LIMIT - 1) + [429]
    status, headers, body = answers[-1]
    assert 800 <= int(headers["Retry-After"]) <= 900
    assert "Too many failed log-ins with this user name from your address" in body
    status, _headers, _body = _log_in(attacker, "victim", PASSWORD)
    assert status == 429  # the right password too, without being checked
    assert "sessionid" not in {cookie.name for cookie in attacker.jar}

    # The token endpoint: the same lockout, in the API's error shape.
    answers_api = [
        attacker.api("POST", "/api/auth/token/", {"username": "scripted", "password": f"g{n}"})
        for n in range(LIMIT)
    ]
    assert [status for status, _h, _b in answers_api] == [400] * (LIMIT - 1) + [429]
    status, headers, body_api = answers_api[-1]
    assert body_api["error"]["code"] == "locked_out"
    assert headers["Retry-After"] == str(body_api["error"]["retry_after"])
    status, _h, body_api = attacker.api(
        "POST", "/api/auth/token/", {"username": "scripted", "password": PASSWORD}
    )
    assert status == 429 and body_api["error"]["code"] == "locked_out"

    # Spraying other names: the address may POST only TOKEN_RATE a minute (6 used above).
    sprayed = [
        attacker.api("POST", "/api/auth/token/", {"username": f"name{n}", "password": "x"})
        for n in range(TOKEN_RATE - LIMIT - 1)
    ]
    assert {status for status, _h, _b in sprayed} == {400}
    status, headers, body_api = attacker.api(
        "POST", "/api/auth/token/", {"username": "one-more", "password": "x"}
    )
    assert status == 429 and body_api["error"]["code"] == "rate_limited"
    assert 1 <= int(headers["Retry-After"]) <= 60


def test_an_old_api_token_fails_after_a_password_change(live_platform: LivePlatform) -> None:
    User.objects.create_user(username="rotator", password=PASSWORD)
    browser = Browser(live_platform)
    status, _h, body = browser.api(
        "POST", "/api/auth/token/", {"username": "rotator", "password": PASSWORD}
    )
    assert status == 200
    old = body["token"]
    assert browser.api("GET", "/api/me/", token=old)[0] == 200

    assert _log_in(browser, "rotator", PASSWORD)[0] == 302
    changed = browser.post_form(
        "/accounts/password/",
        {"old_password": PASSWORD, "new_password1": NEW_PASSWORD, "new_password2": NEW_PASSWORD},
    )
    assert changed[0] == 302, changed[2][:500]

    status, _h, body = browser.api("GET", "/api/me/", token=old)
    assert status in (401, 403) and body == {"detail": "Invalid token."}
    status, _h, body = browser.api(
        "POST", "/api/auth/token/", {"username": "rotator", "password": NEW_PASSWORD}
    )
    assert status == 200 and body["token"] != old
    assert browser.api("GET", "/api/me/", token=body["token"])[0] == 200


async def _socket_opens(url: str, cookie: dict[str, str], origin: str | None) -> bool:
    headers = {"Cookie": cookie_header(cookie)}
    if origin is not None:
        headers["Origin"] = origin
    try:
        async with websockets.connect(
            url, additional_headers=headers, open_timeout=TIMEOUT, ping_interval=None
        ) as socket:
            json.loads(await asyncio.wait_for(socket.recv(), TIMEOUT))  # the lobby's snapshot
            return True
    except InvalidStatus as refused:
        assert refused.response.status_code == 403
        return False


REFUSED_ORIGINS = [
    "http://localhost:31337",  # another program on the player's machine
    "https://127.0.0.1",  # another scheme (and port)
    "http://127.0.0.1",  # the host without the platform's port
    "http://evil.example",
    "null",
    None,  # no Origin at all
]


def test_a_websocket_from_another_origin_is_refused(live_platform: LivePlatform) -> None:
    cookie = session_cookie_for(User.objects.create_user(username="socketeer", password=PASSWORD))
    url = live_platform.ws_url("ws/lobby/")

    assert asyncio.run(_socket_opens(url, cookie, live_platform.url))  # the platform's own
    for origin in REFUSED_ORIGINS:
        assert not asyncio.run(_socket_opens(url, cookie, origin)), origin
    assert live_platform.web.output().count("WebSocket refused: origin") == len(REFUSED_ORIGINS)

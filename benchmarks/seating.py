"""Seating bot players at tables of the running platform, as a browser would.

Players sign up through the sign-up page (or log in when the name exists), or are made by
``manage.py load_test_players`` in the platform's environment (no password to hash: hundreds
of players in seconds, load-test machines only). They meet at a private room through the
lobby's socket: the first opens it, the others join it by its code. The load, soak and
sockets scripts seat their players with this module.
"""

from __future__ import annotations

import asyncio
import contextlib
import html
import http.cookiejar
import json
import re
import subprocess
import sys
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import websockets
from websockets.exceptions import ConnectionClosed

from benchmarks.table_client import cookie_header

ROOT = Path(__file__).resolve().parent.parent
PASSWORD = "load-Test-pw-7391"


# -- HTTP: accounts and rules ------------------------------------------------------------------


class Http:
    """One player's browser session (cookies) against the site."""

    def __init__(self, base: str) -> None:
        self.base = base.rstrip("/")
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))

    def cookie(self, name: str) -> str | None:
        return next((c.value for c in self.jar if c.name == name), None)

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=60) as response:
            return str(response.read().decode())

    def post_form(self, path: str, fields: dict[str, str]) -> tuple[str, str]:
        """POST the page's form with its CSRF token; returns (final URL, body)."""
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        if token is None:
            raise RuntimeError(f"no CSRF token on {path}")
        data = urllib.parse.urlencode({"csrfmiddlewaretoken": token.group(1), **fields}).encode()
        request = urllib.request.Request(
            self.base + path, data=data, headers={"Referer": self.base + path}
        )
        with self.opener.open(request, timeout=60) as response:
            return response.geturl(), response.read().decode()


def log_in(base: str, username: str) -> dict[str, str]:
    """Sign ``username`` up (or log in when it exists); returns the session cookie."""
    client = Http(base)
    client.post_form(
        "/accounts/signup/",
        {"username": username, "email": "", "password1": PASSWORD, "password2": PASSWORD},
    )
    if client.cookie("sessionid") is None:  # the name is taken: log in
        client.post_form("/accounts/login/", {"username": username, "password": PASSWORD})
    session = client.cookie("sessionid")
    if session is None:
        raise RuntimeError(f"could not sign up or log in {username!r}")
    return {"sessionid": session}


def find_rules(base: str, cookie: dict[str, str], name: str) -> int:
    """The id of the rule configuration called ``name``, read from the lobby's create form
    (each option names its configuration in ``data-name``; its label adds the variant)."""
    client = Http(base)
    client.opener.addheaders = [("Cookie", cookie_header(cookie))]
    page = client.get("/lobby/")
    for value, attrs in re.findall(r'<option value="(\d+)"([^>]*)>', page):
        found = re.search(r'data-name="([^"]*)"', attrs)
        if found and html.unescape(found.group(1)) == name:
            return int(value)
    raise SystemExit(
        f"No rule configuration {name!r}: run `python manage.py load_test_rules` against the "
        "platform's database first (or pass --rules ID)."
    )


class Sessions:
    """The players' session cookies, signed up or logged in once and reused by every step.

    Through the sign-up page (``form``), or, with ``command_env`` (the platform's environment),
    by ``manage.py load_test_players`` on this machine: no password to hash, so hundreds of
    players take seconds instead of minutes (load-test machines only)."""

    def __init__(
        self,
        base: str,
        prefix: str,
        workers: int = 4,
        command_env: dict[str, str] | None = None,
    ) -> None:
        self.base, self.prefix = base, prefix
        self.cookies: dict[str, dict[str, str]] = {}
        self.pool = ThreadPoolExecutor(workers)
        self.command_env = command_env

    async def get(self, count: int) -> list[tuple[str, dict[str, str]]]:
        names = [f"{self.prefix}_{i:04d}" for i in range(count)]
        missing = [n for n in names if n not in self.cookies]
        if missing and self.command_env is not None:
            self.cookies.update(await asyncio.to_thread(self._from_command, count))
        elif missing:
            loop = asyncio.get_running_loop()
            cookies = await asyncio.gather(
                *(loop.run_in_executor(self.pool, log_in, self.base, n) for n in missing)
            )
            self.cookies.update(zip(missing, cookies, strict=True))
        return [(n, self.cookies[n]) for n in names]

    def _from_command(self, count: int) -> dict[str, dict[str, str]]:
        assert self.command_env is not None
        run = subprocess.run(
            [
                sys.executable,
                "manage.py",
                "load_test_players",
                "--prefix",
                self.prefix,
                "--count",
                str(count),
                "--load-test-machine",
            ],
            cwd=ROOT,
            env=self.command_env,
            capture_output=True,
            text=True,
            check=False,
        )
        if run.returncode != 0:
            raise RuntimeError(f"load_test_players failed: {run.stderr[-2000:]}")
        players = [json.loads(line) for line in run.stdout.splitlines() if line.startswith("{")]
        return {p["name"]: p["cookie"] for p in players}


def bases(url: str) -> tuple[str, str]:
    """(Origin, WebSocket base URL) of a platform URL."""
    parsed = urllib.parse.urlsplit(url)
    scheme = "wss" if parsed.scheme == "https" else "ws"
    return f"{parsed.scheme}://{parsed.netloc}", f"{scheme}://{parsed.netloc}"


# -- the lobby: meeting at tables --------------------------------------------------------------


class Lobby:
    """One player's lobby socket, for a request or two."""

    def __init__(self, ws_base: str, origin: str, cookie: dict[str, str]) -> None:
        self.url = f"{ws_base}/ws/lobby/"
        self.headers = {"Cookie": cookie_header(cookie), "Origin": origin}
        self.ids = 0

    async def request(self, ws: Any, message: dict[str, Any]) -> dict[str, Any]:
        self.ids += 1
        await ws.send(json.dumps({**message, "id": self.ids}))
        while True:
            frame = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if frame.get("id") == self.ids and frame["type"] in ("ok", "error"):
                return dict(frame)

    async def act(self, message: dict[str, Any]) -> dict[str, Any]:
        """Leave any seat held from an earlier run, then send ``message``; returns the ok."""
        async with websockets.connect(
            self.url, additional_headers=self.headers, open_timeout=30, ping_interval=None
        ) as ws:
            snapshot = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if snapshot.get("seat"):
                await self.request(ws, {"type": "room.leave"})
            reply = await self.request(ws, message)
            if reply["type"] != "ok":
                raise RuntimeError(f"lobby refused {message['type']}: {reply['error']}")
            return reply


async def open_table(
    ws_base: str, origin: str, players: list[tuple[str, dict[str, str]]], rules: int, seats: int
) -> int:
    """A private room opened by the first player and joined by code by the others."""
    owner = players[0]
    created = await Lobby(ws_base, origin, owner[1]).act(
        {
            "type": "room.create",
            "name": f"load {owner[0]}",
            "base_score": 1,
            "seats": seats,
            "private": True,
            "rules": rules,
        }
    )
    room, code = created["room"]["id"], created["room"]["code"]
    for _name, cookie in players[1:]:
        await Lobby(ws_base, origin, cookie).act({"type": "room.join_by_code", "code": code})
    return int(room)


async def close_table(
    ws_base: str, origin: str, owner: tuple[str, dict[str, str]], room: int
) -> None:
    """Close a room whose players have all left, as its owner: a player may own only a few open
    rooms (``LOBBY_MAX_OPEN_ROOMS``), and the ramp's owners open one per step. A refusal (the
    room closed already, or someone still seated) is no harm to the figures, which are taken."""
    with contextlib.suppress(RuntimeError, OSError, TimeoutError, ConnectionClosed):
        await Lobby(ws_base, origin, owner[1]).act({"type": "room.close", "room": room})

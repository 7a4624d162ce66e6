"""The WebSockets' Origin allow-list (shisanshui.origins): scheme, host and port must match.

The attack it closes: channels' AllowedHostsOriginValidator compared the host only, so a page
at http://localhost:31337 (another program on the player's machine) or https://127.0.0.1 could
open a socket with the player's cookies.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from channels.generic.websocket import AsyncWebsocketConsumer
from channels.testing import WebsocketCommunicator
from django.core.exceptions import ImproperlyConfigured

from shisanshui.origins import (
    Origin,
    OriginAllowList,
    WebsocketOriginValidator,
    origin_parse,
)

ROOT = Path(__file__).resolve().parents[2]
SITE = "http://127.0.0.1:8000"


class Accepting(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        await self.accept()


def _validator(*allowed: str) -> WebsocketOriginValidator:
    return WebsocketOriginValidator(Accepting.as_asgi(), allowed=list(allowed))


async def _connects(app: WebsocketOriginValidator, *origins: str) -> bool:
    headers = [(b"origin", origin.encode("latin1")) for origin in origins]
    communicator = WebsocketCommunicator(app, "/ws/lobby/", headers=headers)
    connected, _ = await communicator.connect()
    if connected:
        await communicator.disconnect()
    return connected


@pytest.mark.parametrize(
    ("text", "parsed"),
    [
        ("http://127.0.0.1:8000", Origin("http", "127.0.0.1", 8000)),
        ("HTTP://LocalHost:8000", Origin("http", "localhost", 8000)),
        ("https://play.example.com", Origin("https", "play.example.com", 443)),
        ("http://play.example.com:80", Origin("http", "play.example.com", 80)),
        ("http://[::1]:8000", Origin("http", "::1", 8000)),
        ("null", None),
        ("", None),
        ("127.0.0.1:8000", None),
        ("ws://127.0.0.1:8000", None),
        ("http://127.0.0.1:8000/lobby/", None),
        ("http://user:pw@127.0.0.1:8000", None),
        ("http://127.0.0.1:99999", None),
    ],
)
def test_an_origin_is_exactly_scheme_host_and_port(text: str, parsed: Origin | None) -> None:
    assert origin_parse(text) == parsed


@pytest.mark.parametrize("entry", ["*", "localhost", ".example.com", "http://x.example/path"])
def test_a_setting_that_is_not_an_origin_is_refused_at_start(entry: str) -> None:
    with pytest.raises(ImproperlyConfigured, match="WEBSOCKET_ALLOWED_ORIGINS"):
        OriginAllowList.from_setting([SITE, entry])


@pytest.mark.asyncio
async def test_only_the_exact_origin_connects() -> None:
    app = _validator(SITE)

    assert await _connects(app, SITE)
    assert await _connects(app, "HTTP://127.0.0.1:8000")  # the same origin, written otherwise
    # The attack: same host, another port, or another scheme.
    assert not await _connects(app, "http://localhost:31337")
    assert not await _connects(app, "http://127.0.0.1:31337")
    assert not await _connects(app, "https://127.0.0.1")
    assert not await _connects(app, "https://127.0.0.1:8000")
    assert not await _connects(app, "http://127.0.0.1")
    assert not await _connects(app, "http://127.0.0.1.evil.example:8000")
    assert not await _connects(app, "null")


@pytest.mark.asyncio
async def test_a_connection_without_one_origin_is_refused() -> None:
    app = _validator(SITE)

    assert not await _connects(app)
    assert not await _connects(app, SITE, "http://evil.example")


@pytest.mark.asyncio
async def test_a_wildcard_entry_allows_subdomains_with_its_scheme_and_port() -> None:
    app = _validator("https://*.example.com")

    assert await _connects(app, "https://play.example.com")
    assert await _connects(app, "https://eu.play.example.com")
    assert not await _connects(app, "https://example.com")
    assert not await _connects(app, "http://play.example.com")
    assert not await _connects(app, "https://play.example.com:8443")
    assert not await _connects(app, "https://evilexample.com")


def test_the_project_stack_uses_the_setting(settings) -> None:
    from shisanshui.asgi import application

    validator = application.application_mapping["websocket"]
    assert isinstance(validator, WebsocketOriginValidator)
    assert validator.allowed == OriginAllowList.from_setting(settings.WEBSOCKET_ALLOWED_ORIGINS)
    assert settings.WEBSOCKET_ALLOWED_ORIGINS == ["http://testserver"]


def _settings_value(module: str, expression: str, **env: str) -> str:
    clean = {
        key: value
        for key, value in os.environ.items()
        if key not in {"WEBSOCKET_ALLOWED_ORIGINS", "CSRF_TRUSTED_ORIGINS", "ALLOWED_HOSTS"}
        and not key.startswith("DJANGO_")
    }
    done = subprocess.run(
        [sys.executable, "-c", f"import {module} as s; print({expression})"],
        cwd=ROOT,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def test_local_settings_allow_the_loopback_origins_of_port_8000() -> None:
    value = _settings_value("shisanshui.settings.local", "','.join(s.WEBSOCKET_ALLOWED_ORIGINS)")

    assert value.split(",") == [
        "http://127.0.0.1:8000",
        "http://localhost:8000",
        "http://[::1]:8000",
    ]


def test_production_settings_allow_the_csrf_trusted_origins() -> None:
    value = _settings_value(
        "shisanshui.settings.production",
        "','.join(s.WEBSOCKET_ALLOWED_ORIGINS)",
        DJANGO_SECRET_KEY="k" * 50,
        DJANGO_ALLOWED_HOSTS="play.example.com",
        DATABASE_URL="postgres://u@db.internal:5432/s",
        REDIS_URL="redis://redis.internal:6379/0",
    )

    assert value == "https://play.example.com"


def test_make_run_gives_daphne_the_origins_of_its_host_and_port() -> None:
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import run  # scripts/run.py
    finally:
        sys.path.pop(0)

    assert run.websocket_origins("127.0.0.1", 8123).split(",") == [
        "http://127.0.0.1:8123",
        "http://localhost:8123",
        "http://[::1]:8123",
    ]
    assert run.websocket_origins("192.168.1.20", 8000) == "http://192.168.1.20:8000"
    assert run.websocket_origins("::1", 8000).startswith("http://[::1]:8000,")

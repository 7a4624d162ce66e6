"""Which pages may open the WebSockets: an allow-list of exact origins.

Channels' AllowedHostsOriginValidator compares the Origin's host only, so a page served by
another program on the same host (http://localhost:31337) or over another scheme passed.
Here an origin is accepted only if its scheme, host and port are those of an entry of
WEBSOCKET_ALLOWED_ORIGINS; an entry may be ``scheme://*.example.com[:port]`` for every
subdomain, as in CSRF_TRUSTED_ORIGINS. A connection without an Origin (or with ``null``) is
refused: browsers always send one, and other clients can set it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from channels.security.websocket import WebsocketDenier
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

logger = logging.getLogger("shisanshui.origins")

DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True, slots=True)
class Origin:
    """An origin in canonical form: lower-case scheme and host, explicit port."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def origin_parse(text: str) -> Origin | None:
    """The origin ``scheme://host[:port]``, or None when ``text`` is not exactly one (a path,
    credentials, a query or another scheme than http/https)."""
    try:
        parts = urlsplit(text.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.username or parts.password or parts.path or parts.query or parts.fragment:
        return None
    return Origin(scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme])


@dataclass(frozen=True, slots=True)
class OriginAllowList:
    """Exact origins, and subdomain patterns (an entry whose host starts with ``*.``)."""

    exact: frozenset[Origin]
    subdomains: frozenset[Origin]  # host = the parent domain, without "*."

    @classmethod
    def from_setting(cls, entries: Iterable[str]) -> OriginAllowList:
        """Raises ImproperlyConfigured for an entry that is not ``scheme://host[:port]``."""
        exact, subdomains = set(), set()
        for entry in entries:
            wildcard = "://*." in entry
            origin = origin_parse(entry.replace("://*.", "://", 1) if wildcard else entry)
            if origin is None:
                raise ImproperlyConfigured(
                    f"WEBSOCKET_ALLOWED_ORIGINS: {entry!r} is not an origin such as "
                    "https://play.example.com or http://127.0.0.1:8000."
                )
            (subdomains if wildcard else exact).add(origin)
        return cls(frozenset(exact), frozenset(subdomains))

    def allows(self, origin: Origin | None) -> bool:
        if origin is None:
            return False
        if origin in self.exact:
            return True
        return any(
            origin.scheme == pattern.scheme
            and origin.port == pattern.port
            and origin.host.endswith("." + pattern.host)
            for pattern in self.subdomains
        )


def _origin_header(scope: dict[str, Any]) -> str | None:
    values = [value for name, value in scope.get("headers", []) if name == b"origin"]
    if len(values) != 1:
        return None
    try:
        return bytes(values[0]).decode("ascii")
    except UnicodeDecodeError:
        return None


class WebsocketOriginValidator:
    """ASGI middleware: a WebSocket whose Origin is not allowed is refused at the handshake
    (HTTP 403) before any consumer, session or database is touched."""

    def __init__(self, application: Any, allowed: Iterable[str] | None = None) -> None:
        self.application = application
        self.allowed = OriginAllowList.from_setting(
            settings.WEBSOCKET_ALLOWED_ORIGINS if allowed is None else allowed
        )

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> Any:
        if scope["type"] != "websocket":
            raise ValueError("WebsocketOriginValidator only guards WebSocket connections.")
        header = _origin_header(scope)
        origin = origin_parse(header) if header is not None else None
        if self.allowed.allows(origin):
            return await self.application(scope, receive, send)
        logger.warning(
            "WebSocket refused: origin %r is not allowed (%s)",
            header,
            scope.get("path", ""),
            extra={"origin": header, "path": scope.get("path", "")},
        )
        return await WebsocketDenier()(scope, receive, send)

"""The base of the platform's WebSocket consumers, and what they share: the player's language
and the socket the client has just closed.

Channels' ``AsyncConsumer.dispatch`` runs ``close_old_connections`` on the synchronous thread
before every message it hands to a consumer — one thread hop per frame and per group message.
Our consumers never touch the database on the event loop: every query runs inside
``database_sync_to_async`` (or the table's service threads), which close stale connections
around each call already. So the hop is pure overhead, paid 30-odd times per table round
(docs/load-and-faults.md, "Capacity"), and :class:`Consumer` skips it.
"""

from __future__ import annotations

from typing import Any

from channels.consumer import get_handler_name
from channels.generic.websocket import AsyncWebsocketConsumer
from django.conf import settings
from django.utils import translation
from django.utils.translation.trans_real import parse_accept_lang_header

# A frame sent just as the client closes the socket: daphne raises this (autobahn's) before the
# consumer gets the disconnect message. Sending is then pointless, but the consumer must live
# on, or its disconnect() never runs (the player would stay "connected" at the table).
try:
    from autobahn.exception import Disconnected as SocketClosed
except ImportError:  # another ASGI server

    class SocketClosed(Exception):  # type: ignore[no-redef]
        """Never raised."""


def scope_language(scope: dict[str, Any]) -> str:
    """The language of a WebSocket's player: the language cookie, else Accept-Language."""
    candidates = [scope.get("cookies", {}).get(settings.LANGUAGE_COOKIE_NAME, "")]
    for name, value in scope.get("headers", []):
        if name == b"accept-language":
            candidates += [lang for lang, _q in parse_accept_lang_header(value.decode("latin-1"))]
    for candidate in candidates:
        if not candidate or candidate == "*":
            continue
        try:
            return translation.get_supported_language_variant(candidate)
        except LookupError:
            continue
    return settings.LANGUAGE_CODE


class Consumer(AsyncWebsocketConsumer):
    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

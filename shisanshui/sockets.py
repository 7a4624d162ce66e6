"""The base of the platform's WebSocket consumers.

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


class Consumer(AsyncWebsocketConsumer):
    async def dispatch(self, message: dict[str, Any]) -> None:
        handler = getattr(self, get_handler_name(message), None)
        if handler is None:
            raise ValueError(f"No handler for message type {message['type']}")
        await handler(message)

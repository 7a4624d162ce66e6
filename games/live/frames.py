"""The table socket's frames: a client's frame parsed and checked at the edge (JSON text of at
most MAX_MESSAGE_BYTES, a string ``type``, an ``id`` kept only if it is short), each action's
fields checked and mapped to the service that applies it, and the ``events`` frame encoded once
for every connection of a process that passes the same group message."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from games.live import services as table_services
from games.table.errors import TableError
from shisanshui import fastjson
from shisanshui.errors import MalformedMessage, MessageTooLarge
from shisanshui.ratelimit import RateLimited

MAX_MESSAGE_BYTES = 8192
MAX_ID_CHARS = 64


class BadField(TableError):
    """A field of a client message has the wrong shape."""

    def __init__(self, field: str, expected: str) -> None:
        super().__init__("bad_field", f"{field} must be {expected}", field=field)


def parse_message(text_data: str | None) -> dict[str, Any]:
    """The frame as a JSON object with a string `type`, or a ClientError saying why not."""
    if text_data is None:
        raise MalformedMessage(detail="binary frames are not accepted")
    if len(text_data.encode()) > MAX_MESSAGE_BYTES:
        raise MessageTooLarge(max=MAX_MESSAGE_BYTES)
    try:
        message = json.loads(text_data)
    except ValueError:
        raise MalformedMessage(detail="not JSON") from None
    if not isinstance(message, dict):
        raise MalformedMessage(detail="not a JSON object")
    if not isinstance(message.get("type"), str):
        raise MalformedMessage(detail="no text type")
    return message


def frame_id(message: dict[str, Any]) -> str | int | None:
    value = message.get("id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS):
        return value
    return None


def card_list(message: dict[str, Any], field: str) -> list[str]:
    value = message.get(field)
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise BadField(field, 'a list of cards such as "AS"')
    return value


def _flag(message: dict[str, Any], field: str) -> bool:
    value = message.get(field)
    if not isinstance(value, bool):
        raise BadField(field, "true or false")
    return value


Service = Callable[..., Any]


def _ready(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    return table_services.table_ready, {}


def _choose_special(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    return table_services.table_choose_special, {"play_special": _flag(message, "play_special")}


def _submit(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    fields: dict[str, Any] = {row: card_list(message, row) for row in ("front", "middle", "back")}
    if message.get("unused") is not None:
        fields["unused"] = card_list(message, "unused")
    return table_services.table_submit, fields


def _draft(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    draft = message.get("draft")
    if not isinstance(draft, dict):
        raise BadField("draft", "a JSON object")
    return table_services.table_save_draft, {"draft": draft}


def _leave(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    return table_services.table_leave, {}


def _chat(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    kind, value = message.get("kind"), message.get("value")
    if not isinstance(kind, str):
        raise BadField("kind", '"phrase", "reaction" or "text"')
    if not isinstance(value, str):
        raise BadField("value", "a string")
    return table_services.table_chat, {"kind": kind, "value": value}


ACTIONS: dict[str, Callable[[dict[str, Any]], tuple[Service, dict[str, Any]]]] = {
    "ready": _ready,
    "choose_special": _choose_special,
    "submit": _submit,
    "draft": _draft,
    "leave": _leave,
    "chat": _chat,
}


# The last group message's events and their frame: a process's sockets at one table get the
# same decoded message one after another (shisanshui.channel_layer), and each would encode
# the same frame again.
_last_frame: tuple[list[dict[str, Any]], str] | None = None


def events_frame(shared: list[dict[str, Any]], events: list[dict[str, Any]]) -> str:
    """The ``events`` frame of ``events``, the part of a group message's ``shared`` events a
    connection has not passed yet: encoded once for every connection that passes them all."""
    global _last_frame
    if len(events) != len(shared):
        return fastjson.dumps({"type": "events", "events": events})
    if _last_frame is not None and _last_frame[0] is shared:
        return _last_frame[1]
    text = fastjson.dumps({"type": "events", "events": shared})
    _last_frame = (shared, text)  # holding the list: its id is not reused meanwhile
    return text


def rate_limited_error(limited: RateLimited) -> dict[str, Any]:
    """The error body of a refusal by a rate limit."""
    seconds = limited.retry_after
    return {
        "code": "rate_limited",
        "message": f"Too many requests: try again in {seconds} second{'s' if seconds > 1 else ''}.",
        "retry_after": seconds,
    }

"""The lobby's WebSocket, ws/lobby/: live room list, and the lobby's actions for the page.

A logged-in player gets a snapshot of one page of the open rooms (the page and filters of the
socket URL's query string, as the lobby page's), then every room's change as it happens and
the seat banner's `seat.round`; the client may ask for another page (`snapshot`), `ping`, and
send the lobby's actions (`ACTIONS`), each answered `ok` or `error`, every refusal in the
language of the player's language cookie or browser. Frames and per-user budgets are limited
(`MAX_MESSAGE_BYTES`, `settings.RATE_LIMITS`). The protocol and what a client does with the
events: docs/protocol.md, "The lobby's socket".

The consumer holds no rules: it parses, calls a service through database_sync_to_async and
sends; the services send the events, after commit.
"""

import contextlib
import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from channels.db import database_sync_to_async
from django.http import QueryDict
from django.utils import translation
from django.utils.translation import gettext as _
from rest_framework import serializers

from accounts.models import User
from games.variants import VARIANTS
from lobby.errors import UnknownVariant
from lobby.matchmaking import room_quick_join
from lobby.selectors import room_page, room_rows, room_view, seat_in_round, seat_view
from lobby.serializers import (
    JoinByCodeInput,
    QuickJoinInput,
    RoomCreateInput,
    RoomPageInput,
    RoomRefInput,
)
from lobby.services import room_close, room_create, room_join, room_join_by_code, room_leave
from lobby.signals import lobby_user_group
from lobby.store import LOBBY_GROUP
from shisanshui import fastjson
from shisanshui.errors import (
    ClientError,
    MalformedMessage,
    MessageTooLarge,
    RateLimitedError,
    UnknownMessageType,
)
from shisanshui.ratelimit import arate_limit_hit
from shisanshui.sockets import Consumer, SocketClosed, scope_language

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 4096
CLOSE_FLOOD = 4429
# The lobby socket's rate limits (settings.RATE_LIMITS), per user.
MESSAGES = "lobby.message"
FLOOD = "lobby.flood"
CONNECTIONS = "lobby.connect"


def parse_message(text_data: str | None, bytes_data: bytes | None) -> dict[str, Any]:
    """The frame as a JSON object with a string `type`, or a MalformedMessage."""
    if text_data is None:
        raise MalformedMessage(detail=_("binary frames are not accepted"))
    if len(text_data.encode()) > MAX_MESSAGE_BYTES:
        raise MessageTooLarge(max=MAX_MESSAGE_BYTES)
    try:
        message = json.loads(text_data)
    except ValueError:
        raise MalformedMessage(detail=_("not JSON")) from None
    if not isinstance(message, dict):
        raise MalformedMessage(detail=_("not a JSON object"))
    if not isinstance(message.get("type"), str):
        raise MalformedMessage(detail=_("no text type"))
    return message


def _validated(serializer_class: type[serializers.Serializer], data: dict[str, Any]) -> Any:
    payload = serializer_class(data=data)
    if not payload.is_valid():
        detail = "; ".join(
            f"{field}: {' '.join(str(e) for e in errors)}"
            for field, errors in payload.errors.items()
        )
        raise MalformedMessage(detail=detail)
    return payload.validated_data


def _seat_reply(user: User) -> dict[str, Any]:
    seat = seat_view(user=user)
    return {"room": seat["room"] if seat else None, "seat": seat}


# The actions, each a call of a service in a worker thread.


@database_sync_to_async
def _create(user: User, message: dict[str, Any]) -> dict[str, Any]:
    room_create(owner=user, **_validated(RoomCreateInput, message))
    return _seat_reply(user)


@database_sync_to_async
def _join(user: User, message: dict[str, Any]) -> dict[str, Any]:
    data = _validated(RoomRefInput, message)
    room_join(user=user, room_id=data["room"], code=data.get("code", ""))
    return _seat_reply(user)


@database_sync_to_async
def _join_by_code(user: User, message: dict[str, Any]) -> dict[str, Any]:
    room_join_by_code(user=user, code=_validated(JoinByCodeInput, message)["code"])
    return _seat_reply(user)


@database_sync_to_async
def _quick_join(user: User, message: dict[str, Any]) -> dict[str, Any]:
    room_quick_join(user=user, **_validated(QuickJoinInput, message))
    return _seat_reply(user)


@database_sync_to_async
def _leave(user: User, message: dict[str, Any]) -> dict[str, Any]:
    room = room_leave(user=user)  # during a round the seat stays taken until it settles
    return {"room": room_view(room_id=room.pk, user=user), "seat": seat_view(user=user)}


@database_sync_to_async
def _close(user: User, message: dict[str, Any]) -> dict[str, Any]:
    room = room_close(user=user, room_id=_validated(RoomRefInput, message)["room"])
    return {"room": room_view(room_id=room.pk, user=user), "seat": seat_view(user=user)}


def _page_wanted(data: Any, *, strict: bool) -> dict[str, Any]:
    """The page and filters asked for; unless `strict`, a bad value is ignored (query string).
    An unknown variant is refused `unknown_variant` (strict), else ignored."""
    wanted = _page_fields(data, strict=strict)
    variant = wanted["variant"] or None
    if variant is not None and variant not in VARIANTS:
        if strict:
            raise UnknownVariant()
        variant = None
    wanted["variant"] = variant
    return wanted


def _page_fields(data: Any, *, strict: bool) -> dict[str, Any]:
    """`_page_wanted`'s fields, their types checked."""
    payload = RoomPageInput(data=data)
    if payload.is_valid():
        return dict(payload.validated_data)
    if strict:
        raise MalformedMessage(
            detail="; ".join(
                f"{field}: {' '.join(str(e) for e in errors)}"
                for field, errors in payload.errors.items()
            )
        )
    valid = {k: v for k, v in data.items() if k not in payload.errors}
    return _page_fields(valid, strict=True)


def _query_wanted(scope: dict[str, Any]) -> dict[str, Any]:
    """The page and filters of the socket URL's query string (empty values dropped)."""
    query = QueryDict(scope.get("query_string", b"").decode("latin-1"))
    fields = ("page", "base_score", "seats", "free", "variant")
    return _page_wanted({k: query[k] for k in fields if query.get(k)}, strict=False)


@database_sync_to_async
def _snapshot(user: User, wanted: dict[str, Any]) -> dict[str, Any]:
    page = room_page(
        page=wanted["page"],
        base_score=wanted["base_score"],
        seats=wanted["seats"],
        has_free_seat=True if wanted["free"] else None,
        listed_for=user,
        variant=wanted["variant"],
    )
    seat = seat_view(user=user)
    return {
        "type": "snapshot",
        "rooms": room_rows(rooms=page.rooms),
        "seat": seat,
        "in_round": seat is not None and seat_in_round(user=user, room_id=seat["room"]["id"]),
        "page": page.number,
        "pages": page.pages,
        "total": page.total,
        "page_size": page.size,
        "filters": {k: wanted[k] for k in ("base_score", "seats", "free", "variant")},
    }


Action = Callable[[User, dict[str, Any]], Awaitable[dict[str, Any]]]
ACTIONS: dict[str, Action] = {
    "room.create": _create,
    "room.join": _join,
    "room.join_by_code": _join_by_code,
    "room.quick_join": _quick_join,
    "room.leave": _leave,
    "room.close": _close,
}


def _request_id(message: dict[str, Any]) -> str | int | None:
    """The client's `id` for a request, echoed in the answer (a short string or an integer)."""
    value = message.get("id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and len(value) <= 64):
        return value
    return None


class LobbyConsumer(Consumer):
    """One logged-in player's lobby connection; refuses anyone else at the handshake."""

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close()  # before accept: the handshake is refused (HTTP 403)
            return
        self.user: User = user
        self.language = scope_language(self.scope)
        self.in_group = False
        limited = await arate_limit_hit(CONNECTIONS, user.pk)
        if limited is not None:
            # Accepted only to say why and when to come back; nothing is read or joined.
            await self.accept()
            with translation.override(self.language):
                await self.send_error(None, RateLimitedError(retry_after=limited.retry_after))
            await self.close(code=CLOSE_FLOOD)
            return
        # Join the group before reading the snapshot, so that no change falls in between
        # (one that lands in both is harmless: rows carry versions and clients upsert).
        await self.channel_layer.group_add(LOBBY_GROUP, self.channel_name)
        await self.channel_layer.group_add(lobby_user_group(user.pk), self.channel_name)
        self.in_group = True
        await self.accept()
        with translation.override(self.language):  # the rows' labels, as every answer's
            await self.send_json(await _snapshot(self.user, _query_wanted(self.scope)))

    async def disconnect(self, code: int) -> None:
        if getattr(self, "in_group", False):
            await self.channel_layer.group_discard(LOBBY_GROUP, self.channel_name)
            await self.channel_layer.group_discard(
                lobby_user_group(self.user.pk), self.channel_name
            )

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer one frame; every refusal, whatever raised it, is answered here."""
        request_id = None
        with translation.override(self.language):
            limited = await arate_limit_hit(MESSAGES, self.user.pk)
            if limited is not None and await arate_limit_hit(FLOOD, self.user.pk) is not None:
                await self.close(code=CLOSE_FLOOD)
                return
            try:
                message = parse_message(text_data, bytes_data)
                request_id = _request_id(message)
                if limited is not None:  # the frame does nothing
                    raise RateLimitedError(retry_after=limited.retry_after)
                await self.dispatch_message(message, request_id)
            except ClientError as error:
                # Over budget, even a malformed frame is answered `rate_limited`.
                refusal = error if limited is None else RateLimitedError(limited.retry_after)
                await self.send_error(request_id, refusal)
            except Exception:
                logger.exception("Lobby message failed")
                await self.send_json(
                    {
                        "type": "error",
                        "id": request_id,
                        "error": {"code": "server_error", "message": _("Something went wrong.")},
                    }
                )

    async def send_error(self, request_id: str | int | None, error: ClientError) -> None:
        body = {"code": error.code, "message": error.message, **error.details()}
        await self.send_json({"type": "error", "id": request_id, "error": body})

    async def dispatch_message(self, message: dict[str, Any], request_id: str | int | None) -> None:
        kind = message["type"]
        if kind == "ping":
            await self.send_json({"type": "pong", "id": request_id})
        elif kind == "snapshot":
            fields = {k: v for k, v in message.items() if k not in ("type", "id")}
            await self.send_json(await _snapshot(self.user, _page_wanted(fields, strict=True)))
        elif kind in ACTIONS:
            body = {k: v for k, v in message.items() if k not in ("type", "id")}
            result = await ACTIONS[kind](self.user, body)
            await self.send_json({"type": "ok", "id": request_id, "action": kind, **result})
        else:
            raise UnknownMessageType(type=json.dumps(kind[:40], ensure_ascii=False))

    async def lobby_event(self, event: dict[str, Any]) -> None:
        """A room changed (sent by the services to the lobby group): pass its row on."""
        await self.send_json({"type": event["event"], "room": event["room"]})

    async def lobby_seat_round(self, event: dict[str, Any]) -> None:
        """The player's round started or ended (lobby.signals): the page's seat banner."""
        await self.send_json({"type": "seat.round", "in_round": bool(event["in_round"])})

    async def send_json(self, content: dict[str, Any]) -> None:
        with contextlib.suppress(SocketClosed):  # the client has just gone (shisanshui.sockets)
            # Compact: no spaces after separators (a page of 50 rooms is ~10 % smaller).
            await self.send(text_data=fastjson.dumps(content))

"""The table's WebSocket, ws/table/<room_id>/: one seated player's live table.

The protocol is described in docs/protocol.md. In short: JSON text frames of at most
MAX_MESSAGE_BYTES; the client sends {"type": ..., "id": ...} (hello, ping, ready,
choose_special, submit, draft, leave, chat), an action is answered {"type": "ok", "id": ...} or
{"type": "error", "id": ..., "error": {"code", "message", ...}}, and the table's events arrive
as {"type": "events", "events": [{version, type, payload}, ...]}: only those the player may
see. Private events are addressed to a player, not a seat, and the services send a player
with a private event in a batch its own message of that batch, on its own channel group
(``table_notify.table_player_group``), so another player's cards never reach this connection,
nor this process through Redis. The batch's public events go once to the table's public group,
which every connection to the table listens to; a player that got its own message of the batch
skips that one (``except``).

The consumer holds no rules and no ORM: it parses, calls a service of games.live.services
(or a read of games.live.reads) on a worker thread and sends; the services send the events
to the player's group after commit. A retried action (same `id` and type) is applied once: its
reply is kept for ACTION_REPLY_SECONDS and answered again — kept beside the user's frame budget
and looked up in the same Redis round trip that spends the frame
(``shisanshui.ratelimit.arate_limit_hit_and_read``), not on the service thread.

The table's commands run on a pool of SERVICE_THREADS threads (each keeps its own database
connection), not on the single thread that database_sync_to_async shares by default: an
action mostly waits for PostgreSQL, and on one thread every connection's action would wait
behind all the others (docs/load-and-faults.md). The services' row locks keep one table's
commands in order. The rest of a socket's work — finding its seat, the welcome's snapshot, the
reconnect and disconnect, the engine's suggestions — runs on SIDE_THREADS, so that a storm of
connections never queues the commands of the tables already playing.

Every group message names the versions it covers (``first`` … ``last``, even when none of its
events is for this player), so each consumer knows every version it has passed: when a batch
starts past the next version (a batch published late by another process, or lost while Redis
restarted), the consumer reads what this player missed from the table's log before passing on
the batch, and drops events it already sent. Its client then never misses an event, even
though clients ignore versions they have passed.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from channels.db import DatabaseSyncToAsync
from django.conf import settings
from django.utils import translation

from accounts.models import User
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import services as table_services
from games.table.errors import TableError
from shisanshui import fastjson, publish
from shisanshui.errors import ClientError, MalformedMessage, MessageTooLarge, UnknownMessageType
from shisanshui.ratelimit import (
    RateLimited,
    akeep,
    arate_limit_block,
    arate_limit_check,
    arate_limit_hit,
    arate_limit_hit_and_read,
)
from shisanshui.sockets import Consumer, SocketClosed, scope_language

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 8192
# Per-user budgets of the table's sockets (settings.RATE_LIMITS, shisanshui.ratelimit), shared
# by all the user's sockets and every web process: frames (over it: close 4429 and the
# cool-down, during which the user's new table sockets are refused), drafts (over it:
# `rate_limited`, the draft is not saved) and connections per user and table (over it: an
# error frame, then close 4429). A refused connection never reaches the table: no
# reconnected / disconnected events for the other seats.
MESSAGES = "table.message"
DRAFTS = "table.draft"
SUGGESTS = "table.suggest"
CHATS = "table.chat"
CONNECTIONS = "table.connect"
COOLDOWN = "table.cooldown"
ACTION_REPLY_SECONDS = 600
MAX_ID_CHARS = 64

SERVICE_THREADS = ThreadPoolExecutor(
    max_workers=settings.TABLE_SERVICE_THREADS, thread_name_prefix="table"
)
T = TypeVar("T")


SIDE_THREADS = ThreadPoolExecutor(
    max_workers=settings.TABLE_SIDE_THREADS, thread_name_prefix="table-side"
)


def off_thread(func: Callable[..., T]) -> Callable[..., Any]:
    """``func`` made awaitable on the service threads (connections cleaned up around it)."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=SERVICE_THREADS)


def on_side(func: Callable[..., T]) -> Callable[..., Any]:
    """``func`` made awaitable on the side threads (anything but the table's commands)."""
    return DatabaseSyncToAsync(func, thread_sensitive=False, executor=SIDE_THREADS)


CLOSE_LEFT = 4000  # the player is no longer at this table
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_SEATED = 4403
CLOSE_FLOOD = 4429


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


def _request_id(message: dict[str, Any]) -> str | int | None:
    value = message.get("id")
    if isinstance(value, bool):
        return None
    if isinstance(value, int) or (isinstance(value, str) and 0 < len(value) <= MAX_ID_CHARS):
        return value
    return None


def _cards(message: dict[str, Any], field: str) -> list[str]:
    value = message.get(field)
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise BadField(field, 'a list of cards such as "AS"')
    return value


def _flag(message: dict[str, Any], field: str) -> bool:
    value = message.get(field)
    if not isinstance(value, bool):
        raise BadField(field, "true or false")
    return value


# The actions: each validates its fields, then runs a service in a worker thread.

Service = Callable[..., Any]


def _ready(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    return table_services.table_ready, {}


def _choose_special(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    return table_services.table_choose_special, {"play_special": _flag(message, "play_special")}


def _submit(message: dict[str, Any]) -> tuple[Service, dict[str, Any]]:
    fields: dict[str, Any] = {row: _cards(message, row) for row in ("front", "middle", "back")}
    if message.get("unused") is not None:
        fields["unused"] = _cards(message, "unused")
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


@off_thread
def _act(service: Service, **kwargs: Any) -> publish.Outbox:
    """Apply an action on a service thread; the messages it committed come back for the event
    loop to publish (``shisanshui.publish.outbox``): the table's events and any lobby banner
    alike, and the work to do once they are out (a dealt hand's suggestions)."""
    with publish.outbox() as box:
        service(**kwargs)
    return box


# The last group message's events and their frame: a process's sockets at one table get the
# same decoded message one after another (shisanshui.channel_layer), and each would encode
# the same frame again.
_last_frame: tuple[list[dict[str, Any]], str] | None = None


def _events_frame(shared: list[dict[str, Any]], events: list[dict[str, Any]]) -> str:
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


def _rate_limited(limited: RateLimited) -> dict[str, Any]:
    """The error body of a refusal by a rate limit."""
    seconds = limited.retry_after
    return {
        "code": "rate_limited",
        "message": f"Too many requests: try again in {seconds} second{'s' if seconds > 1 else ''}.",
        "retry_after": seconds,
    }


class TableConsumer(Consumer):
    """A seated player's connection to the table of one room."""

    seat: table_reads.TableSeat | None = None
    # A spectator's connection (not seated at this table): public events only, no actions.
    watch: table_reads.TableWatch | None = None
    # The last table version this connection has passed on (events or a welcome); None until
    # the client's hello.
    version: int | None = None
    # Closed for going over the user's frame budget.
    flooded: bool = False
    # The channel-layer groups listened to: the table's public group, and a player's own.
    groups: tuple[str, ...] = ()

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=CLOSE_UNAUTHENTICATED)
            return
        self.user: User = user
        self.language = scope_language(self.scope)
        room_id = int(self.scope["url_route"]["kwargs"]["room_id"])
        limited = await arate_limit_check(COOLDOWN, user.pk) or await arate_limit_hit(
            CONNECTIONS, f"{user.pk}:{room_id}"
        )
        if limited is not None:  # accepted only to say when to come back
            await self.accept()
            await self.send_error(None, _rate_limited(limited))
            await self.close(code=CLOSE_FLOOD)
            return
        self.seat = await on_side(table_reads.table_seat_for)(user=user, room_id=room_id)
        if self.seat is None:
            # Not seated here: a spectator, where the room allows it (issue 18).
            self.watch = await on_side(table_reads.table_watch_for)(user=user, room_id=room_id)
            if self.watch is None:
                await self.close(code=CLOSE_NOT_SEATED)
                return
            await self._join(table_notify.table_public_group(self.watch.table_id))
            await on_side(table_services.table_watchers_change)(
                table_id=self.watch.table_id, delta=1
            )
            await self.accept()
            return
        self.connection = uuid.uuid4().hex
        await self._join(
            table_notify.table_player_group(self.seat.table_id, self.seat.player),
            table_notify.table_public_group(self.seat.table_id),
        )
        await self.accept()
        # This socket becomes the player's current one (so the late close of an older one
        # does not mark the player away), and a disconnected player is reconnected.
        await self._quietly(table_services.table_reconnect, connection=self.connection)

    async def _join(self, *groups: str) -> None:
        """Listen to ``groups``: the table's public group, and a player's own."""
        self.groups = groups
        for name in self.groups:
            await self.channel_layer.group_add(name, self.channel_name)

    async def _leave_groups(self) -> None:
        for name in self.groups:
            await self.channel_layer.group_discard(name, self.channel_name)

    async def disconnect(self, code: int) -> None:
        if self.watch is not None:
            await self._leave_groups()
            await on_side(table_services.table_watchers_change)(
                table_id=self.watch.table_id, delta=-1
            )
            self.watch = None
            return
        if self.seat is None:
            return
        await self._leave_groups()
        await self._quietly(table_services.table_disconnect, connection=self.connection)

    async def _quietly(self, service: Service, **kwargs: Any) -> None:
        """Tell the table about the connection; a refusal (already so, left) is no news."""
        assert self.seat is not None
        with contextlib.suppress(TableError):
            await on_side(service)(user=self.user, room=self.seat.room, **kwargs)

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        """Answer one frame; every refusal, whatever raised it, is answered here."""
        if self.flooded:  # closed for flooding: the frames still queued are ignored
            return
        request_id = None
        with translation.override(self.language):
            try:
                message: dict[str, Any] | None = parse_message(text_data)
            except ClientError as error:  # answered once the frame is counted
                message, unreadable = None, error
            else:
                unreadable = None
            # Every frame counts against the user's budget; an action's frame also looks up
            # the reply of an action already applied under its id, in the same round trip.
            kept = None if message is None else self._action_key(message)
            if kept is None:
                flooding, stored = await arate_limit_hit(MESSAGES, self.user.pk), None
            else:
                flooding, stored = await arate_limit_hit_and_read(MESSAGES, self.user.pk, kept=kept)
            if flooding is not None:
                self.flooded = True
                await arate_limit_block(COOLDOWN, self.user.pk)
                await self.close(code=CLOSE_FLOOD)
                return
            try:
                if message is None:
                    assert unreadable is not None
                    raise unreadable
                request_id = _request_id(message)
                budget = {"draft": DRAFTS, "suggest": SUGGESTS, "chat": CHATS}.get(message["type"])
                if budget is not None and self.seat is not None:
                    limited = await arate_limit_hit(budget, self.user.pk)
                    if limited is not None:
                        raise TableError(**_rate_limited(limited))
                await self.dispatch_message(
                    message,
                    request_id,
                    kept=kept,
                    stored=None if stored is None else fastjson.loads(stored),
                )
            except ClientError as error:
                await self.send_error(request_id, {"code": error.code, "message": error.message})
            except TableError as error:
                await self.send_error(request_id, error.to_dict())
            except Exception:
                logger.exception("Table message failed")
                error_body = {"code": "server_error", "message": "Something went wrong."}
                await self.send_error(request_id, error_body)

    def _action_key(self, message: dict[str, Any]) -> str | None:
        """Where the reply of ``message`` is kept, for an action of a seated player with an id
        (the type is part of it: an id reused for another action is another action)."""
        kind, request_id = message["type"], _request_id(message)
        if self.seat is None or self.watch is not None or kind not in ACTIONS:
            return None
        if request_id is None:
            return None
        return f"table-action:{self.seat.table_id}:{self.user.pk}:{kind}:{json.dumps(request_id)}"

    async def dispatch_message(
        self,
        message: dict[str, Any],
        request_id: str | int | None,
        *,
        kept: str | None = None,
        stored: dict[str, Any] | None = None,
    ) -> None:
        """Answer a parsed frame. ``kept``: where an action's reply is kept (``_action_key``);
        ``stored``: the reply found there, for an action applied already under its id."""
        kind = message["type"]
        seat = self.seat
        if self.watch is not None:
            await self.spectate(kind, message, request_id)
            return
        if seat is None:  # the player left: nothing more to do here
            raise TableError("not_at_table", "you do not sit at this table")
        if "position" in message and message["position"] != seat.position:
            raise TableError("not_your_seat", "you may only act for your own seat")
        if kind == "ping":
            await self.send_json({"type": "pong", "id": request_id})
        elif kind == "hello":
            since = message.get("since")
            if since is not None and (isinstance(since, bool) or not isinstance(since, int)):
                raise BadField("since", "a version (an integer) or null")
            await self.welcome(request_id, since)
        elif kind == "suggest":
            cards = _cards(message, "cards")
            found = await on_side(table_reads.table_suggest)(
                user=self.user, room=seat.room, cards=cards
            )
            await self.send_json(
                {"type": "suggestions", "id": request_id, "cards": cards, "suggestions": found}
            )
        elif kind in ACTIONS:
            await self.act(kind, message, request_id, kept=kept, stored=stored)
        else:
            raise UnknownMessageType(type=json.dumps(kind[:40], ensure_ascii=False))

    async def spectate(
        self, kind: str, message: dict[str, Any], request_id: str | int | None
    ) -> None:
        """A spectator may say hello (its welcome is a spectator's snapshot) and ping; any
        action is refused (``spectator``)."""
        assert self.watch is not None
        if kind == "ping":
            await self.send_json({"type": "pong", "id": request_id})
        elif kind == "hello":
            await self.welcome_spectator(request_id)
        elif kind in ACTIONS or kind == "suggest":
            raise TableError("spectator", "spectators watch: take a seat to play")
        else:
            raise UnknownMessageType(type=json.dumps(kind[:40], ensure_ascii=False))

    async def welcome_spectator(self, request_id: str | int | None) -> None:
        """The public snapshot (``views.snapshot_for`` with no seat): every version is passed."""
        assert self.watch is not None
        view = await on_side(table_reads.table_resync)(
            table_id=self.watch.table_id, player="", since=None
        )
        self.version = int(view["version"])
        await self.send_json({"type": "welcome", "id": request_id, "position": None, **view})

    async def welcome(
        self, request_id: str | int | None, since: int | None, *, repair: bool = False
    ) -> list[dict[str, Any]]:
        """What the client missed since ``since``: events, or a snapshot, in a ``welcome``
        (answering ``hello``). When ``repair`` (versions skipped by the group's messages), the
        missed events come as an ordinary ``events`` frame; a ``welcome`` without an id only
        when the log no longer reaches back (a snapshot). Returns the events sent."""
        assert self.seat is not None
        view = await on_side(table_reads.table_resync)(
            table_id=self.seat.table_id, player=self.seat.player, since=since
        )
        self.version = int(view["version"])
        events: list[dict[str, Any]] = list(view.get("events", []))
        # The suggestions for a hand dealt before ``since`` (they may not have reached the
        # client, which got the hand without them): after the events, as they come live.
        found = view.pop("suggestions", None)
        if repair and "events" in view:
            if events:
                await self.send_json({"type": "events", "events": events})
            if found is not None:
                await self.send_suggestions(found)
            return events
        await self.send_json(
            {"type": "welcome", "id": request_id, "position": self.seat.position, **view}
        )
        if found is not None:
            await self.send_suggestions(found)
        if "snapshot" in view and view["snapshot"].get("you") is None:
            # The table let the player go in the meantime (a spectator's snapshot): the events
            # saying so may be behind the snapshot's version, so say it with the close.
            await self._left()
        return events

    async def _left(self) -> None:
        """The player is no longer at this table: stop listening and close with 4000."""
        if self.seat is None:
            return
        await self._leave_groups()
        self.seat = None
        await self.close(code=CLOSE_LEFT)

    async def act(
        self,
        kind: str,
        message: dict[str, Any],
        request_id: str | int | None,
        *,
        kept: str | None = None,
        stored: dict[str, Any] | None = None,
    ) -> None:
        """Apply an action once per client id (its reply kept under ``kept``); a retry gets the
        ``stored`` reply again."""
        assert self.seat is not None
        if request_id is None:
            raise BadField("id", f"a string of 1 to {MAX_ID_CHARS} characters or an integer")
        service, fields = ACTIONS[kind](message)
        if stored is not None:  # applied already under this id: the same answer
            await self.send_json(stored)
            return
        reply = {"type": "ok", "id": request_id, "action": kind}
        box = await _act(service, user=self.user, room=self.seat.room, **fields)
        # The action's messages go out and its reply is kept side by side (two connections).
        keeping = [] if kept is None else [akeep(kept, fastjson.dumps(reply), ACTION_REPLY_SECONDS)]
        await asyncio.gather(publish.apublish(box), *keeping)
        await self.send_json(reply)
        # Then what waited for them: the suggestions of the hands this action dealt, in a task
        # of their own — this socket goes on passing its events (its player's own deal among
        # them, which comes back through the channel layer) while they are worked out.
        publish.spawn_later(box, executor=SIDE_THREADS)

    async def table_events(self, message: dict[str, Any]) -> None:
        """This player's events from the services (its group): pass them on in order. Nothing
        before the client's hello is answered: the welcome brings what it needs (docs/protocol.md,
        "Nothing is sent until the client speaks")."""
        if self.watch is not None:
            await self.spectator_events(message)
            return
        if self.seat is None or self.version is None:
            return
        if self.seat.player in message.get("except", ()):
            return  # the player's own message of this batch holds these events and its own
        first, last = int(message["first"]), int(message["last"])
        events: list[dict[str, Any]] = list(message["events"])
        repaired: list[dict[str, Any]] = []
        if first > self.version + 1:
            # Versions in between never reached this connection: read them from the log (the
            # batch is committed, so it comes too) before going on.
            repaired = await self.welcome(None, self.version, repair=True)
            if self.seat is None:  # the repair found the player gone, and said so
                return
        shared = message["events"]
        events = [e for e in shared if e["version"] > self.version]
        self.version = max(self.version, last)
        if events:
            await self.send_frame(_events_frame(shared, events))
        sent = [*repaired, *events]
        player = self.seat.player
        if any(e["type"] == "left" and e["payload"].get("player") == player for e in sent):
            await self._left()

    async def table_suggestions(self, message: dict[str, Any]) -> None:
        """The engine's suggestions for this player's dealt hand, a moment after the hand
        (which came with ``"suggestions": null``): a ``hand_suggestions`` frame."""
        if self.seat is None or self.version is None:
            return  # nothing before the hello: the welcome brings them
        await self.send_suggestions(message)

    async def send_suggestions(self, found: dict[str, Any]) -> None:
        await self.send_json(
            {
                "type": "hand_suggestions",
                "cards": found["cards"],
                "suggestions": found["suggestions"],
            }
        )

    async def spectator_events(self, message: dict[str, Any]) -> None:
        """The table's public events, in order; a gap (a batch lost or late) is repaired with
        a new snapshot, a ``welcome`` without an id."""
        if self.version is None:
            return  # nothing before the hello
        first, last = int(message["first"]), int(message["last"])
        if first > self.version + 1:
            await self.welcome_spectator(None)
            return
        shared = message["events"]
        events = [e for e in shared if e["version"] > self.version]
        self.version = max(self.version, last)
        if events:
            await self.send_frame(_events_frame(shared, events))

    async def send_error(self, request_id: str | int | None, error: dict[str, Any]) -> None:
        await self.send_json({"type": "error", "id": request_id, "error": error})

    async def send_json(self, content: dict[str, Any]) -> None:
        await self.send_frame(fastjson.dumps(content))

    async def send_frame(self, text: str) -> None:
        # The client may have just closed the socket; the consumer must live on to run
        # disconnect(), which marks the player disconnected (hosted) at the table.
        with contextlib.suppress(SocketClosed):
            await self.send(text_data=text)

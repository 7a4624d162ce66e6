"""The table's WebSocket, ws/table/<room_id>/: one seated player's (or a spectator's) live table.

The protocol is docs/protocol.md. The consumer holds no rules and no ORM: it parses a frame
(:mod:`games.live.frames`), calls a command of :mod:`games.live.services` or a read of
:mod:`games.live.reads` on a worker thread (:mod:`games.live.threads`) and sends; the services
publish the events to the player's and the table's groups after commit, so another player's
cards never reach this connection. A retried action (same ``id`` and type) is applied once: its
reply is kept for ACTION_REPLY_SECONDS beside the user's frame budget and read in the same
Redis round trip that spends the frame (``shisanshui.ratelimit.arate_limit_hit_and_read``).
Every group message names the versions it covers (``first`` … ``last``): when a batch starts
past the next version (published late by another process, or lost while Redis restarted),
the consumer reads what this player missed from the table's log first and drops events it
already sent, so its client never misses an event.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import uuid
from typing import Any

from django.utils import translation
from django.utils.translation import gettext

from accounts.models import User
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import sent_away
from games.live import services as table_services
from games.live.frames import (
    ACTIONS,
    MAX_ID_CHARS,
    BadField,
    Service,
    card_list,
    events_frame,
    frame_id,
    parse_message,
    rate_limited_error,
)
from games.live.threads import SIDE_THREADS, off_thread, on_side
from games.table.errors import TableError
from shisanshui import fastjson, publish
from shisanshui.errors import ClientError, UnknownMessageType
from shisanshui.ratelimit import (
    akeep,
    arate_limit_block,
    arate_limit_check,
    arate_limit_hit,
    arate_limit_hit_and_read,
)
from shisanshui.sockets import Consumer, SocketClosed, scope_language

logger = logging.getLogger(__name__)

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


CLOSE_LEFT = 4000  # the player is no longer at this table
CLOSE_UNAUTHENTICATED = 4401
CLOSE_NOT_SEATED = 4403
CLOSE_FLOOD = 4429


# The actions: each validates its fields, then runs a service in a worker thread.


@off_thread
def _act(service: Service, **kwargs: Any) -> publish.Outbox:
    """Apply an action on a service thread; the messages it committed come back for the event
    loop to publish (``shisanshui.publish.outbox``): the table's events and any lobby banner
    alike, and the work to do once they are out (a dealt hand's suggestions)."""
    with publish.outbox() as box:
        service(**kwargs)
    return box


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
            await self.send_error(None, rate_limited_error(limited))
            await self.close(code=CLOSE_FLOOD)
            return
        self.seat = await on_side(table_reads.table_seat_for)(user=user, room_id=room_id)
        if self.seat is None:
            # Not seated here: a spectator, where the room allows it.
            self.watch = await on_side(table_reads.table_watch_for)(user=user, room_id=room_id)
            if self.watch is None:
                await self._refuse_not_seated(user_id=user.pk, room_id=room_id)
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

    async def _refuse_not_seated(self, *, user_id: int, room_id: int) -> None:
        """No seat here, and nothing to watch: accepted only to say so (a handshake refused
        outright reaches a browser as a dropped connection, tried again for ever) — with the
        reason the table sent this player away from this room, when it did — then closed
        (4403). The reason is the player's own note (``games.live.sent_away``), left in place
        for the lobby to show."""
        note = await on_side(sent_away.peek)(user_id=user_id)
        with translation.override(self.language):
            message = gettext("You are not seated at this table.")
        error: dict[str, Any] = {"code": "not_seated", "message": message}
        if note is not None and note["room"] == room_id:
            error["reason"] = note["reason"]
        await self.accept()
        await self.send_error(None, error)
        await self.close(code=CLOSE_NOT_SEATED)

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
                request_id = frame_id(message)
                budget = {"draft": DRAFTS, "suggest": SUGGESTS, "chat": CHATS}.get(message["type"])
                if budget is not None and self.seat is not None:
                    limited = await arate_limit_hit(budget, self.user.pk)
                    if limited is not None:
                        raise TableError(**rate_limited_error(limited))
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
        kind, request_id = message["type"], frame_id(message)
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
            cards = card_list(message, "cards")
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
        """The public snapshot (``views.snapshot_for`` with no seat): every version is passed.
        A watcher the table sent away from this room while it was not there to hear it (a
        player's page coming back) is told why: ``sent_away``, its own note's reason."""
        assert self.watch is not None
        view = await on_side(table_reads.table_resync)(
            table_id=self.watch.table_id, player="", since=None
        )
        self.version = int(view["version"])
        welcome = {"type": "welcome", "id": request_id, "position": None, **view}
        note = await on_side(sent_away.peek)(user_id=self.user.pk)
        if note is not None and note["room"] == self.watch.room.pk:
            welcome["sent_away"] = note["reason"]
        await self.send_json(welcome)

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
            await self.send_frame(events_frame(shared, events))
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
            await self.send_frame(events_frame(shared, events))

    async def send_error(self, request_id: str | int | None, error: dict[str, Any]) -> None:
        await self.send_json({"type": "error", "id": request_id, "error": error})

    async def send_json(self, content: dict[str, Any]) -> None:
        await self.send_frame(fastjson.dumps(content))

    async def send_frame(self, text: str) -> None:
        # The client may have just closed the socket; the consumer must live on to run
        # disconnect(), which marks the player disconnected (hosted) at the table.
        with contextlib.suppress(SocketClosed):
            await self.send(text_data=text)

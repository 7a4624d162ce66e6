"""Table chat over the table's socket: every seat hears a message, the per-user
budget holds, a room can turn free text off, bad input changes nothing, and support reads a
round's chat in its audit page."""

from __future__ import annotations

from typing import Any

import pytest
from channels.db import database_sync_to_async
from django.test import Client

from games.history import audit
from games.live import services as table_services
from games.models import Round
from lobby.services import room_create, room_join
from tests.games.live.test_consumer_limits import (  # noqa: F401  (clock: the autouse fixture)
    clock,
    limits,
    open_socket,
    table_marks,
)
from tests.games.live.test_consumers import make_room
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.usefixtures("transactional_db")


@pytest.mark.asyncio
async def test_every_seat_hears_a_message_and_bad_input_changes_nothing(settings: Any) -> None:
    limits(settings, table_chat="100/minute")
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await open_socket(alice, room), await open_socket(bob, room)
    for socket in (a, b):
        await socket.request({"type": "hello", "id": "h", "since": None})

    for n, (kind, value) in enumerate(
        [("phrase", "nice_hand"), ("reaction", "thumbs_up"), ("text", "<b>gg</b>")]
    ):
        reply = await a.request({"type": "chat", "id": f"c{n}", "kind": kind, "value": value})
        assert reply["type"] == "ok", reply
        heard = await b.event("chat")
        assert heard["payload"] == {"position": 0, "kind": kind, "value": value}
        await a.event("chat")  # the sender hears it too

    marks = await table_marks(room)
    for bad, code in [
        ({"kind": "phrase", "value": "nope"}, "bad_chat"),
        ({"kind": "text", "value": "x" * 500}, "bad_chat"),
        ({"kind": "text"}, "bad_field"),
        ({"kind": 7, "value": "hi"}, "bad_field"),
        ({"kind": "text", "value": ["hi"]}, "bad_field"),
    ]:
        reply = await a.request({"type": "chat", "id": f"bad-{code}-{len(str(bad))}", **bad})
        assert reply["type"] == "error" and reply["error"]["code"] == code, (bad, reply)
    assert await table_marks(room) == marks
    for socket in (a, b):
        await socket.communicator.disconnect()


@pytest.mark.asyncio
async def test_chat_has_a_per_user_budget(settings: Any) -> None:
    limits(settings, table_chat="2/minute")
    room, (alice, bob) = await make_room(["alice", "bob"])
    a, b = await open_socket(alice, room), await open_socket(bob, room)
    for socket in (a, b):
        await socket.request({"type": "hello", "id": "h", "since": None})
    message = {"type": "chat", "kind": "phrase", "value": "hurry"}
    assert (await a.request({**message, "id": 1}))["type"] == "ok"
    assert (await a.request({**message, "id": 2}))["type"] == "ok"
    marks = await table_marks(room)
    reply = await a.request({**message, "id": 3})
    assert reply["type"] == "error" and reply["error"]["code"] == "rate_limited"
    assert await table_marks(room) == marks
    assert (await b.request({**message, "id": 1}))["type"] == "ok"  # per user
    for socket in (a, b):
        await socket.communicator.disconnect()


@pytest.mark.asyncio
async def test_a_room_can_turn_free_text_off(settings: Any) -> None:
    limits(settings, table_chat="100/minute")

    def setup() -> Any:
        alice, bob = make_player("alice"), make_player("bob")
        room = room_create(owner=alice, name="Quiet", base_score=10, seats=2, chat_text=False)
        room_join(user=bob, room_id=room.pk)
        return room, alice

    room, alice = await database_sync_to_async(setup)()
    a = await open_socket(alice, room)
    welcome = await a.request({"type": "hello", "id": "h", "since": None})
    assert welcome["snapshot"]["chat_text"] is False
    reply = await a.request({"type": "chat", "id": 1, "kind": "text", "value": "hi"})
    assert reply["type"] == "error" and reply["error"]["code"] == "chat_text_off"
    reply = await a.request({"type": "chat", "id": 2, "kind": "phrase", "value": "hello"})
    assert reply["type"] == "ok"
    await a.communicator.disconnect()


def test_support_reads_a_rounds_chat_in_its_audit(
    transactional_db: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round

    chats: list[tuple[str, str, str]] = []
    original = table_services.table_submit

    def chatty_submit(*, user: Any, room: Any, **fields: Any) -> Any:
        # Each player says something while the hands are being played, then submits.
        kind, value = ("text", f"<i>{user.username}</i>") if not chats else ("phrase", "hurry")
        table_services.table_chat(user=user, room=room, kind=kind, value=value)
        chats.append((user.username, kind, value))
        return original(user=user, room=room, **fields)

    monkeypatch.setattr(table_services, "table_submit", chatty_submit)
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    lines = audit.round_chat(round_=round_)
    assert [(line["kind"], line["text"]) for line in lines][:2] == [
        ("text", f"<i>{chats[0][0]}</i>"),
        ("phrase", "快点吧 / Hurry up"),
    ]
    staff = make_player("support")
    staff.is_staff = staff.is_superuser = True
    staff.save()
    client = Client()
    client.force_login(staff)
    page = client.get(f"/admin/games/round/{round_.pk}/change/").content.decode()
    assert 'id="chat"' in page and "快点吧 / Hurry up" in page
    assert f"&lt;i&gt;{chats[0][0]}&lt;/i&gt;" in page  # escaped, never markup
    assert Round.objects.filter(pk=round_.pk, settled_at__isnull=False).exists()

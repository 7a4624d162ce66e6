"""The variant decks on the lobby's socket: each room's variant in the snapshot and
the live events, the snapshot's variant filter, rooms held to their rules' seats, quick-join by
variant; through the whole ASGI stack and the configured channel layer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from channels.db import database_sync_to_async

from accounts.models import User
from games.models import RuleConfiguration
from games.rules.config import RuleConfig
from lobby.models import Room, Seat
from lobby.services import room_create
from tests.lobby import test_consumer_limits
from tests.lobby.conftest import lobby_counts
from tests.lobby.test_consumer_limits import Open
from tests.lobby.test_consumers import TIMEOUT, connect

pytestmark = [pytest.mark.asyncio, pytest.mark.usefixtures("transactional_db")]


lobby = test_consumer_limits.lobby  # the fixture: lobby(user, path=...)


@database_sync_to_async
def configuration(name: str, **deck: int) -> RuleConfiguration:
    existing = RuleConfiguration.objects.filter(name=name).first()
    return existing or RuleConfiguration.from_engine(RuleConfig(**deck), name=name)


@database_sync_to_async
def open_room(owner: User, **fields: Any) -> Room:
    return room_create(owner=owner, **{"name": "Table", "base_score": 100, "seats": 4, **fields})


async def test_rows_carry_their_variant_in_the_snapshot_and_the_events(
    alice: User, bob: User, lobby: Open
) -> None:
    jokers = await configuration("Jokers", jokers=2)
    classic = await open_room(bob)
    socket, snapshot = await lobby(alice)

    created = await open_room(alice, rules=jokers)
    event = await socket.next("room.created")

    assert snapshot["rooms"][0]["id"] == classic.pk
    assert snapshot["rooms"][0]["variant"]["tags"] == ["classic"]
    assert event["room"]["id"] == created.pk
    assert event["room"]["variant"]["tags"] == ["laizi"]
    assert event["room"]["variant"]["labels"] == {"zh": "癞子", "en": "Jokers"}


async def test_the_first_snapshots_labels_are_in_the_players_language(
    alice: User, bob: User
) -> None:
    await open_room(bob)
    communicator = await connect(alice, language="zh-hans")
    connected, _ = await communicator.connect(timeout=TIMEOUT)
    assert connected
    try:
        snapshot = json.loads(await communicator.receive_from(timeout=TIMEOUT))
    finally:
        await communicator.disconnect()

    assert snapshot["rooms"][0]["variant"]["label"] == "经典"


async def test_the_snapshot_filters_by_variant(alice: User, bob: User, lobby: Open) -> None:
    extra = await configuration("Extra", extra_suits=1)
    classic = await open_room(bob)
    mine = await open_room(alice, rules=extra, seats=5)
    socket, _ = await lobby(alice)

    await socket.send({"type": "snapshot", "id": 1, "variant": "duoyise"})
    extra_only = await socket.next("snapshot")
    await socket.send({"type": "snapshot", "id": 2, "variant": "classic", "seats": 4})
    classic_only = await socket.next("snapshot")
    await socket.send({"type": "snapshot", "id": 3, "variant": ""})
    every = await socket.next("snapshot")

    assert [r["id"] for r in extra_only["rooms"]] == [mine.pk]
    assert extra_only["filters"]["variant"] == "duoyise" and extra_only["total"] == 1
    assert [r["id"] for r in classic_only["rooms"]] == [classic.pk]
    assert every["filters"]["variant"] is None and every["total"] == 2


@pytest.mark.parametrize(
    ("variant", "code"),
    [
        ("bogus", "unknown_variant"),
        ("Classic", "unknown_variant"),
        (5, "unknown_variant"),  # read as the text "5"
        (["laizi"], "malformed_message"),
        ({"slug": "laizi"}, "malformed_message"),
        ("x" * 100, "malformed_message"),
    ],
)
async def test_a_bad_variant_filter_is_an_error_not_an_empty_list(
    alice: User, lobby: Open, variant: Any, code: str
) -> None:
    socket, _ = await lobby(alice)

    await socket.send({"type": "snapshot", "id": "v", "variant": variant})
    error = await socket.next("error")

    assert error["id"] == "v" and error["error"]["code"] == code
    await socket.nothing_more()


async def test_the_socket_urls_variant_is_applied_and_a_bad_one_ignored(
    alice: User, bob: User, lobby: Open
) -> None:
    jokers = await configuration("Jokers", jokers=2)
    await open_room(bob)
    room = await open_room(alice, rules=jokers)

    _socket, chosen = await lobby(alice, "/ws/lobby/?variant=laizi")
    _socket, lenient = await lobby(alice, "/ws/lobby/?variant=nope&seats=4")

    assert [r["id"] for r in chosen["rooms"]] == [room.pk]
    assert chosen["filters"]["variant"] == "laizi"
    assert lenient["filters"] == {"base_score": None, "seats": 4, "free": False, "variant": None}
    assert lenient["total"] == 2


async def test_room_create_is_held_to_its_rules_seats(alice: User, lobby: Open) -> None:
    extra = await configuration("Extra", extra_suits=1)
    socket, _ = await lobby(alice)
    before = await database_sync_to_async(lobby_counts)()

    for n, payload in enumerate(
        [
            {"base_score": 100, "seats": 5},  # the default rules seat 4
            {"base_score": 100, "seats": 6, "rules": extra.pk},
            {"base_score": 100, "seats": 7, "rules": extra.pk},
            {"base_score": 100, "seats": "five", "rules": extra.pk},
        ]
    ):
        await socket.send({"type": "room.create", "id": n, **payload})
    codes = [(await socket.next("error", lambda m, n=n: m["id"] == n))["error"] for n in range(4)]

    assert [c["code"] for c in codes] == [
        "too_many_seats",
        "too_many_seats",
        "invalid_seat_count",
        "malformed_message",
    ]
    assert "4" in codes[0]["message"] and "5" in codes[1]["message"]
    assert await database_sync_to_async(lobby_counts)() == before

    await socket.send(
        {"type": "room.create", "id": "ok", "base_score": 100, "seats": 5, "rules": extra.pk}
    )
    done = await socket.next("ok")

    assert done["seat"]["room"]["seats"] == 5
    assert done["seat"]["room"]["variant"]["tags"] == ["duoyise"]


async def test_quick_join_by_variant_on_the_socket(alice: User, bob: User, lobby: Open) -> None:
    await configuration("Extra", extra_suits=1)
    await database_sync_to_async(RuleConfiguration.objects.filter(jokers=2).delete)()
    socket, _ = await lobby(alice)
    other, _ = await lobby(bob)

    await socket.send(
        {"type": "room.quick_join", "id": 1, "base_score": 100, "seats": 4, "variant": "laizi"}
    )
    refused = await socket.next("error")
    await socket.send(
        {"type": "room.quick_join", "id": 2, "base_score": 100, "seats": 5, "variant": "duoyise"}
    )
    opened = await socket.next("ok")
    await other.send(
        {"type": "room.quick_join", "id": 3, "base_score": 100, "seats": 5, "variant": "duoyise"}
    )
    joined = await other.next("ok")
    await other.send({"type": "room.quick_join", "id": 4, "seats": 5, "variant": "weird"})

    assert refused["error"]["code"] == "no_variant_rules"  # no configuration has jokers
    assert opened["seat"]["room"]["variant"]["tags"] == ["duoyise"]
    assert joined["seat"]["room"]["id"] == opened["seat"]["room"]["id"]
    assert (await other.next("error"))["error"]["code"] == "malformed_message"  # no base score
    await other.send(
        {"type": "room.quick_join", "id": 5, "base_score": 100, "seats": 5, "variant": "weird"}
    )
    assert (await other.next("error"))["error"]["code"] == "unknown_variant"
    assert await database_sync_to_async(Seat.objects.count)() == 2

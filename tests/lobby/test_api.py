"""The lobby's HTTP API, with session and token authentication, and every refusal's shape."""

from typing import Any

import pytest
import yaml
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from accounts.selectors import wallet_balance
from games.models import RuleConfiguration
from lobby.models import Room, RoomStatus, Seat
from lobby.selectors import room_get, room_row
from lobby.services import room_close, room_create, room_join, room_leave
from tests.lobby.conftest import MakePlayer, lobby_counts

ROOMS = "/api/lobby/rooms/"


def open_room(owner: User, **fields: Any) -> Room:
    return room_create(owner=owner, **{"name": "Table", "base_score": 100, "seats": 4, **fields})


@pytest.fixture
def api(alice: User) -> APIClient:
    """Alice's client, logged in with her session."""
    client = APIClient()
    client.force_login(alice)
    return client


@pytest.fixture
def token_api(bob: User) -> APIClient:
    """Bob's client, authenticated by an API token only."""
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")
    return client


def refused(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.content
    body = response.json()
    assert set(body) == {"error"}
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]
    return body["error"]


# Authentication.


@pytest.mark.parametrize(
    ("method", "path"),
    [
        ("get", ROOMS),
        ("post", ROOMS),
        ("get", "/api/lobby/rooms/1/"),
        ("post", "/api/lobby/rooms/1/join/"),
        ("post", "/api/lobby/rooms/join-by-code/"),
        ("post", "/api/lobby/quick-join/"),
        ("post", "/api/lobby/leave/"),
        ("post", "/api/lobby/rooms/1/close/"),
        ("get", "/api/lobby/me/"),
    ],
)
def test_every_endpoint_needs_a_user(rules: RuleConfiguration, method: str, path: str) -> None:
    response = getattr(APIClient(), method)(path, {}, format="json")

    refused(response, 403, "not_authenticated")


def test_a_bad_token_is_refused(rules: RuleConfiguration) -> None:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-key")

    refused(client.get(ROOMS), 403, "authentication_failed")


def test_a_session_post_without_the_csrf_token_is_refused(alice: User) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.force_login(alice)

    response = client.post(ROOMS, {"name": "T", "base_score": 100, "seats": 4}, format="json")

    refused(response, 403, "permission_denied")
    assert lobby_counts() == (0, 0)


def test_a_token_client_needs_no_csrf_token(bob: User) -> None:
    client = APIClient(enforce_csrf_checks=True)
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=bob).key}")

    response = client.post(ROOMS, {"name": "T", "base_score": 100, "seats": 4}, format="json")

    assert response.status_code == 201


# Listing.


def test_the_list_is_paginated_rows_with_codes_for_their_owners_only(
    api: APIClient, alice: User, bob: User
) -> None:
    public = open_room(bob, name="Public")
    private = open_room(alice, name="Private", private=True)

    body = api.get(ROOMS).json()

    assert body["count"] == 2 and body["next"] is None
    assert [r["name"] for r in body["results"]] == ["Public", "Private"]
    assert body["results"][0] == {**room_row(room=room_get(room_id=public.pk)), "code": None}
    assert body["results"][1]["code"] == private.code


def test_a_stranger_does_not_see_a_private_rooms_code(
    token_api: APIClient, alice: User, carol: User
) -> None:
    private = open_room(carol, private=True)

    row = token_api.get(ROOMS).json()["results"][0]

    assert row["private"] is True and row["code"] is None
    assert private.code not in str(token_api.get(f"{ROOMS}{private.pk}/").content)


def test_the_list_filters(api: APIClient, make_player: MakePlayer) -> None:
    open_room(make_player(), name="A", base_score=100, seats=2)
    full = open_room(make_player(), name="B", base_score=100, seats=2)
    room_join(user=make_player(), room_id=full.pk)
    open_room(make_player(), name="C", base_score=50, seats=4)

    def names(query: str) -> list[str]:
        return [r["name"] for r in api.get(f"{ROOMS}?{query}").json()["results"]]

    assert names("base_score=100") == ["A", "B"]
    assert names("seats=4") == ["C"]
    assert names("base_score=100&free=true") == ["A"]
    assert names("free=false") == ["B"]


def test_a_bad_filter_is_refused(api: APIClient) -> None:
    error = refused(api.get(f"{ROOMS}?base_score=lots"), 400, "invalid")

    assert "base_score" in error["fields"]


def test_one_room_and_an_unknown_room(api: APIClient, alice: User) -> None:
    room = open_room(alice)

    assert api.get(f"{ROOMS}{room.pk}/").json()["name"] == "Table"
    refused(api.get(f"{ROOMS}999999/"), 404, "not_found")


# Creating.


def test_create_answers_the_room_with_its_code_and_seats_the_creator(
    api: APIClient, alice: User
) -> None:
    response = api.post(
        ROOMS, {"name": "Mine", "base_score": 200, "seats": 3, "private": True}, format="json"
    )

    assert response.status_code == 201
    body = response.json()
    room = Room.objects.get()
    assert body["id"] == room.pk and body["code"] == room.code and len(room.code) == 6
    assert body["players"] == [
        {"position": 0, "username": "alice", "name": "alice", "nickname": None}
    ]
    assert body["entry_minimum"] == 108 * 200 * 3
    assert Seat.objects.get().user == alice


def test_create_with_other_rules(api: APIClient) -> None:
    other = RuleConfiguration.from_engine(
        RuleConfiguration.objects.get(is_default=True).engine_config(), name="Other"
    )

    response = api.post(
        ROOMS, {"name": "T", "base_score": 100, "seats": 4, "rules": other.pk}, format="json"
    )

    assert response.json()["rules"] == {
        "id": other.pk,
        "name": "Other",
        "names": None,  # a typed name, shown as entered
    }


@pytest.mark.parametrize(
    ("payload", "status", "code"),
    [
        ({"name": "", "base_score": 100, "seats": 4}, 400, "invalid"),
        ({"name": "   ", "base_score": 100, "seats": 4}, 400, "invalid_room_name"),
        ({"name": "x" * 41, "base_score": 100, "seats": 4}, 400, "invalid_room_name"),
        ({"name": "T", "base_score": 100, "seats": 7}, 400, "invalid_seat_count"),
        ({"name": "T", "base_score": 100, "seats": 5}, 400, "too_many_seats"),
        ({"name": "T", "base_score": 100, "seats": "four"}, 400, "invalid"),
        ({"name": "T", "base_score": 0, "seats": 4}, 400, "invalid_base_score"),
        ({"name": "T", "base_score": 10**7, "seats": 4}, 400, "invalid_base_score"),
        ({"name": "T", "base_score": 100}, 400, "invalid"),
        ({"name": "T", "base_score": 100, "seats": 4, "rules": 999999}, 400, "invalid"),
        ({"name": "T", "base_score": 1000, "seats": 4}, 403, "insufficient_coins"),
    ],
)
def test_create_refusals(api: APIClient, payload: dict[str, Any], status: int, code: str) -> None:
    refused(api.post(ROOMS, payload, format="json"), status, code)

    assert lobby_counts() == (0, 0)


def test_create_while_seated_is_a_conflict(api: APIClient, alice: User) -> None:
    open_room(alice)

    refused(
        api.post(ROOMS, {"name": "T", "base_score": 100, "seats": 4}, format="json"),
        409,
        "already_seated",
    )

    assert lobby_counts() == (1, 1)


def test_messages_follow_the_request_language(api: APIClient) -> None:
    response = api.post(
        ROOMS,
        {"name": "T", "base_score": 100, "seats": 7},
        format="json",
        HTTP_ACCEPT_LANGUAGE="zh-hans",
    )

    assert refused(response, 400, "invalid_seat_count")["message"] == (
        "房间的座位数只能是 2 到 6，不能是 7。"
    )


# Joining, quick-joining, leaving, closing.


def test_join_answers_the_seat(token_api: APIClient, alice: User, bob: User) -> None:
    room = open_room(alice, private=True)

    response = token_api.post(f"{ROOMS}{room.pk}/join/", {"code": room.code}, format="json")

    assert response.status_code == 200
    body = response.json()
    assert body["position"] == 1
    assert body["room"]["seats_taken"] == 2 and body["room"]["code"] == room.code
    assert Seat.objects.get(user=bob).room == room


def test_join_by_code(token_api: APIClient, alice: User) -> None:
    room = open_room(alice, private=True)

    response = token_api.post(f"{ROOMS}join-by-code/", {"code": room.code.lower()}, format="json")

    assert response.status_code == 200 and response.json()["room"]["id"] == room.pk


@pytest.mark.parametrize(
    ("case", "status", "code"),
    [
        ("unknown", 404, "room_not_found"),
        ("closed", 409, "room_closed"),
        ("full", 409, "room_full"),
        ("wrong code", 403, "wrong_room_code"),
        ("seated", 409, "already_seated"),
        ("poor", 403, "insufficient_coins"),
    ],
)
def test_join_refusals(
    token_api: APIClient,
    bob: User,
    make_player: MakePlayer,
    case: str,
    status: int,
    code: str,
) -> None:
    owner = make_player()
    room = open_room(owner, seats=2, private=case == "wrong code", base_score=100)
    room_id = room.pk
    if case == "unknown":
        room_id = 999_999
    elif case == "closed":
        room_leave(user=owner)
        room_close(user=owner, room_id=room.pk)
    elif case == "full":
        room_join(user=make_player(), room_id=room.pk)
    elif case == "seated":
        open_room(bob)
    elif case == "poor":
        dear = room_create(owner=make_player(coins=200_000), name="Dear", base_score=400, seats=2)
        room_id = dear.pk  # needs 129,600 coins; Bob has 100,000
    before = lobby_counts()
    balance = wallet_balance(user=bob)

    response = token_api.post(f"{ROOMS}{room_id}/join/", {"code": "NOPE22"}, format="json")

    refused(response, status, code)
    assert lobby_counts() == before
    assert wallet_balance(user=bob) == balance


def test_join_by_an_unknown_code(token_api: APIClient) -> None:
    refused(
        token_api.post(f"{ROOMS}join-by-code/", {"code": "ZZZZZZ"}, format="json"),
        404,
        "room_not_found",
    )
    refused(token_api.post(f"{ROOMS}join-by-code/", {}, format="json"), 400, "invalid")


def test_quick_join_opens_then_fills_a_table(api: APIClient, token_api: APIClient) -> None:
    first = api.post("/api/lobby/quick-join/", {"base_score": 100, "seats": 2}, format="json")
    second = token_api.post(
        "/api/lobby/quick-join/", {"base_score": 100, "seats": 2}, format="json"
    )

    assert first.status_code == second.status_code == 200
    assert first.json()["room"]["id"] == second.json()["room"]["id"]
    assert second.json()["position"] == 1


@pytest.mark.parametrize(
    ("payload", "code"),
    [
        ({"base_score": 100, "seats": 1}, "invalid_seat_count"),
        ({"base_score": -1, "seats": 4}, "invalid_base_score"),
        ({"seats": 4}, "invalid"),
    ],
)
def test_quick_join_refusals(api: APIClient, payload: dict[str, Any], code: str) -> None:
    refused(api.post("/api/lobby/quick-join/", payload, format="json"), 400, code)

    assert lobby_counts() == (0, 0)


def test_leave_and_me(api: APIClient, alice: User) -> None:
    room = open_room(alice)
    assert api.get("/api/lobby/me/").json()["seat"]["room"]["id"] == room.pk

    response = api.post("/api/lobby/leave/")

    assert response.status_code == 200 and response.json()["seats_taken"] == 0
    assert api.get("/api/lobby/me/").json() == {"seat": None}
    refused(api.post("/api/lobby/leave/"), 409, "not_seated")


def test_close(api: APIClient, alice: User, bob: User, token_api: APIClient) -> None:
    room = open_room(alice)
    refused(api.post(f"{ROOMS}{room.pk}/close/"), 409, "room_not_empty")
    room_leave(user=alice)
    refused(token_api.post(f"{ROOMS}{room.pk}/close/"), 403, "not_room_owner")
    refused(api.post(f"{ROOMS}999999/close/"), 404, "room_not_found")
    room.refresh_from_db()
    assert room.status == RoomStatus.OPEN

    response = api.post(f"{ROOMS}{room.pk}/close/")

    assert response.status_code == 200 and response.json()["status"] == "closed"
    refused(api.post(f"{ROOMS}{room.pk}/close/"), 409, "room_closed")


def test_a_wrong_method_has_the_error_shape(api: APIClient) -> None:
    refused(api.delete(ROOMS), 405, "method_not_allowed")


# The OpenAPI schema.


def test_the_schema_describes_the_lobby_with_bodies_and_errors(client: Client, alice: User) -> None:
    client.force_login(alice)

    schema = yaml.safe_load(client.get("/api/schema/").content)

    paths = schema["paths"]
    for path in [
        "/api/lobby/rooms/",
        "/api/lobby/rooms/{room_id}/",
        "/api/lobby/rooms/{room_id}/join/",
        "/api/lobby/rooms/join-by-code/",
        "/api/lobby/quick-join/",
        "/api/lobby/leave/",
        "/api/lobby/rooms/{room_id}/close/",
        "/api/lobby/me/",
    ]:
        assert path in paths, path
    create = paths["/api/lobby/rooms/"]["post"]
    body_ref = create["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    assert body_ref.endswith("/RoomCreateInput")
    assert create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/Room"
    )
    join = paths["/api/lobby/rooms/{room_id}/join/"]["post"]
    assert set(join["responses"]) == {"200", "400", "403", "404", "409"}
    assert join["responses"]["409"]["content"]["application/json"]["schema"]["$ref"].endswith(
        "/LobbyError"
    )
    listing = paths["/api/lobby/rooms/"]["get"]
    assert {p["name"] for p in listing["parameters"]} >= {"base_score", "seats", "free"}
    room = schema["components"]["schemas"]["Room"]["properties"]
    assert {"seats_taken", "entry_minimum", "private", "code", "version"} <= set(room)

"""The accounts API: /api/me/, /api/wallet/, /api/wallet/entries/ and /api/auth/token/."""

import pytest
import yaml
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User
from accounts.services import wallet_transfer
from tests.accounts.conftest import MakePlayer

pytestmark = pytest.mark.django_db

ENDPOINTS = ["/api/me/", "/api/wallet/", "/api/wallet/entries/"]


@pytest.mark.parametrize("url", ENDPOINTS)
def test_the_endpoints_need_authentication(url: str) -> None:
    response = APIClient().get(url)

    assert response.status_code in (401, 403)


def test_me_with_the_session_of_a_browser(client: Client, make_player: MakePlayer) -> None:
    player = make_player(username="ada")
    client.force_login(player)

    response = client.get("/api/me/")

    assert response.status_code == 200
    assert response.json() == {
        "id": player.pk,
        "username": "ada",
        "email": "",
        "date_joined": response.json()["date_joined"],
        "is_staff": False,
        "is_guest": False,
    }


def test_a_script_obtains_a_token_and_uses_it(make_player: MakePlayer) -> None:
    player = make_player(1234, username="bot")
    player.set_password("a-password-55")
    player.save()
    api = APIClient()

    refused = api.post("/api/auth/token/", {"username": "bot", "password": "wrong"})
    assert refused.status_code == 400
    response = api.post(
        "/api/auth/token/", {"username": "bot", "password": "a-password-55"}, format="json"
    )
    assert response.status_code == 200
    key = response.json()["token"]
    assert key == Token.objects.get(user=player).key

    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    assert api.get("/api/me/").json()["username"] == "bot"
    assert api.get("/api/wallet/").json() == {
        "account_id": player.wallet.pk,
        "balance": 1234,
    }
    api.credentials(HTTP_AUTHORIZATION="Token not-a-key")
    assert api.get("/api/me/").status_code in (401, 403)


def test_wallet_of_a_user_without_one_is_empty(client: Client) -> None:
    client.force_login(User.objects.create_user(username="staffer", password="x"))

    assert client.get("/api/wallet/").json() == {"account_id": None, "balance": 0}
    assert client.get("/api/wallet/entries/").json()["count"] == 0


def test_wallet_entries_are_the_users_own_newest_first_and_paginated(
    make_player: MakePlayer, django_assert_max_num_queries
) -> None:
    player, other = make_player(1000), make_player(1000)
    for number in range(1, 26):
        wallet_transfer(
            source=player,
            destination=other,
            amount=number,
            idempotency_key=f"t:{number}",
            reference=f"round:{number}",
        )
    api = APIClient()
    api.force_authenticate(player)

    with django_assert_max_num_queries(3):
        first = api.get("/api/wallet/entries/").json()
    second = api.get(first["next"]).json()

    assert first["count"] == 26 and len(first["results"]) == 20
    newest = first["results"][0]
    assert {key: newest[key] for key in ("kind", "reference", "amount", "balance_after")} == {
        "kind": "settlement",
        "reference": "round:25",
        "amount": -25,
        "balance_after": 1000 - sum(range(1, 26)),
    }
    assert set(newest) == {
        "id",
        "transaction_id",
        "created_at",
        "kind",
        "reference",
        "reason",
        "amount",
        "balance_after",
    }
    assert [entry["amount"] for entry in second["results"]] == [-5, -4, -3, -2, -1, 1000]
    assert second["next"] is None
    # The other player's entries are not among them.
    ids = [entry["id"] for entry in first["results"] + second["results"]]
    assert len(ids) == 26 and all(entry["amount"] < 0 for entry in first["results"])


def test_the_endpoints_are_in_the_openapi_schema(client: Client, make_player: MakePlayer) -> None:
    client.force_login(make_player())

    schema = yaml.safe_load(client.get("/api/schema/").content)

    for path in ["/api/auth/token/", *ENDPOINTS]:
        assert path in schema["paths"], path
    assert "get" in schema["paths"]["/api/wallet/entries/"]
    entries = schema["paths"]["/api/wallet/entries/"]["get"]["responses"]["200"]
    assert entries["content"]["application/json"]["schema"]["$ref"].endswith(
        "PaginatedWalletEntryList"
    )
    assert "post" in schema["paths"]["/api/auth/token/"]

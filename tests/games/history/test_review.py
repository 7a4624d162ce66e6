"""The review of one's own hand in a settled round: the REST API
(``/api/games/rounds/<id>/review/`` and the table's ``/api/games/rooms/<room>/rounds/<n>/review/``)
over a rigged round of the default rules — checked against the engine recomputed here — and who
may read it, when, and how often."""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

import pytest
from django.test import Client
from rest_framework.authtoken.models import Token
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import User
from games.models import Round
from games.rules.arrange import arrange, expected_water_of
from games.rules.cards import format_cards, parse_cards
from games.rules.config import RuleConfig
from games.rules.scoring import Arranged, Declared, Seat, score_round
from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round, positions
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def review(client: Client, round_: Round, **extra: Any) -> Any:
    return client.get(f"/api/games/rounds/{round_.pk}/review/", **extra)


def seats_of(round_: Round) -> tuple[list[Seat], RuleConfig]:
    """The round's seats rebuilt here from the rigged hands (not through the code under test)."""
    config = RuleConfig.from_dict(round_.config)
    at = positions(round_)
    seats: list[Seat] = []
    for name, hand in sorted(GUNS_AND_SPECIAL.items(), key=lambda kv: at[kv[0]]):
        player = str(round_.players.get(position=at[name]).user_id)
        if hand.special:
            seats.append(Seat(player, Declared("six_pairs", parse_cards(hand.dealt()))))
        else:
            rows = (parse_cards(r.split()) for r in (hand.front, hand.middle, hand.back))
            seats.append(Seat(player, Arranged(*rows)))
    return seats, config


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch) -> tuple[Round, dict[str, User]]:
    return play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)


def test_a_players_arrangement_is_set_beside_the_engines_best(played: Any) -> None:
    round_, users = played
    seats, config = seats_of(round_)
    index = positions(round_)["bob"]
    bob = seats[index]
    assert isinstance(bob.hand, Arranged)

    response = review(logged_in(users["bob"]), round_)

    assert response.status_code == 200
    data = response.json()
    assert data["round_id"] == round_.pk and data["opponents"] == 3
    assert data["played"]["front"] == format_cards(bob.hand.front)
    assert data["played"]["water"] == score_round(seats, config).water[index]
    assert data["played"]["water"] == next(
        p["water"] for p in round_.result["players"] if p["id"] == str(users["bob"].pk)
    )
    assert data["played"]["expected_water"] == round(
        expected_water_of(bob.hand, config, opponents=3), 2
    )
    best = arrange(bob.hand.cards, config, limit=1, opponents=3).best
    assert [data["best"][r] for r in ("front", "middle", "back")] == [
        format_cards(best.front),
        format_cards(best.middle),
        format_cards(best.back),
    ]
    assert data["best"]["expected_water"] == round(best.expected_water, 2)
    swapped = list(seats)
    swapped[index] = replace(bob, hand=best.arranged())
    assert data["best"]["water"] == score_round(swapped, config).water[index]
    assert data["water_gain"] == data["best"]["water"] - data["played"]["water"]
    assert data["expected_gain"] >= 0  # the best is the model's maximum
    assert data["played_best"] is False  # bob's 4C 5C 6C front is no one's best
    assert sorted(data["dealt"]) == sorted(format_cards(bob.hand.cards))


def test_a_declared_special_is_reviewed_against_arranging_the_same_cards(played: Any) -> None:
    round_, users = played
    data = review(logged_in(users["carol"]), round_).json()

    assert data["played"]["special"] == "six_pairs"
    assert data["played"]["expected_water"] == 4 * 3  # 六对半: 4 water from each of 3
    assert "front" not in data["played"] and len(data["played"]["cards"]) == 13
    assert data["best"]["special"] is None and len(data["best"]["back"]) == 5
    carol = next(p for p in round_.result["players"] if p["id"] == str(users["carol"].pk))
    assert data["played"]["water"] == carol["water"]


def test_the_table_asks_by_room_and_round_number(played: Any) -> None:
    round_, users = played
    client = logged_in(users["alice"])
    by_id = review(client, round_).json()
    room_id = round_.table.room_id

    by_number = client.get(f"/api/games/rooms/{room_id}/rounds/{round_.number}/review/")

    assert by_number.status_code == 200 and by_number.json() == by_id
    assert by_id["room_id"] == room_id and by_id["round_no"] == round_.number
    missing = client.get(f"/api/games/rooms/{room_id}/rounds/{round_.number + 1}/review/")
    assert missing.status_code == 404


def test_only_the_rounds_own_players_may_read_a_review(played: Any) -> None:
    round_, users = played
    outsider = make_player("outsider")

    refused = review(logged_in(outsider), round_)
    unknown = review(logged_in(users["alice"]), Round(pk=round_.pk + 1000))

    # The same answer for "not yours" and "no such round": nothing is revealed.
    assert refused.status_code == unknown.status_code == 404
    assert refused.json() == unknown.json()
    assert refused.json()["error"]["code"] == "not_found"
    assert "cards" not in json.dumps(refused.json())
    assert review(Client(), round_).status_code == 403  # anonymous


def test_a_script_reads_its_review_with_a_token(played: Any) -> None:
    round_, users = played
    token = Token.objects.create(user=users["dave"]).key

    response = review(Client(), round_, HTTP_AUTHORIZATION=f"Token {token}")

    assert response.status_code == 200
    assert response.json()["player"] == str(users["dave"].pk)


def test_no_review_before_the_settlement(monkeypatch: pytest.MonkeyPatch) -> None:
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL, settle=False)

    response = review(logged_in(users["alice"]), round_, HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert response.status_code == 409
    error = response.json()["error"]
    assert error["code"] == "round_in_play" and "结算" in error["message"]


def test_reviews_are_rate_limited(played: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    round_, users = played
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "round_review", "2/min")
    client = logged_in(users["bob"])

    codes = [review(client, round_).status_code for _ in range(3)]

    assert codes == [200, 200, 429]
    assert review(logged_in(users["alice"]), round_).status_code == 200  # per user


def test_the_review_is_in_the_openapi_schema() -> None:
    client = logged_in(make_player("schema-reader"))
    schema = client.get("/api/schema/?format=json").json()

    paths = schema["paths"]
    assert "/api/games/rounds/{round_id}/review/" in paths
    assert "/api/games/rooms/{room_id}/rounds/{number}/review/" in paths
    responses = paths["/api/games/rounds/{round_id}/review/"]["get"]["responses"]
    assert {"200", "404", "409", "429"} <= set(responses)

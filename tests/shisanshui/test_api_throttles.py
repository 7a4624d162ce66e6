"""REST framework's throttles on the whole API: per user, per address when anonymous, in the
default cache, and a 429 in the API's error shape with the time to wait (shisanshui.api)."""

from __future__ import annotations

import json

import pytest
from django.conf import settings
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

from accounts.models import User

pytestmark = pytest.mark.django_db


@pytest.fixture
def rates(monkeypatch: pytest.MonkeyPatch):
    """rates(user="3/min"): smaller rates for this test (the throttles read them when made)."""

    def set_rates(**given: str) -> None:
        for scope, rate in given.items():
            monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, scope, rate)

    return set_rates


def _logged_in(username: str) -> Client:
    client = Client()
    client.force_login(User.objects.create_user(username=username, password="x-pass-123-y"))
    return client


def _assert_rate_limited(response, *, within: int = 60) -> dict:
    assert response.status_code == 429
    body = json.loads(response.content)
    assert set(body) == {"error"}
    error = body["error"]
    assert error["code"] == "rate_limited"
    assert 1 <= error["retry_after"] <= within
    assert response["Retry-After"] == str(error["retry_after"])
    return error


def test_every_endpoint_is_throttled_by_default() -> None:
    framework = settings.REST_FRAMEWORK
    assert framework["DEFAULT_THROTTLE_CLASSES"] == [
        "rest_framework.throttling.AnonRateThrottle",
        "rest_framework.throttling.UserRateThrottle",
    ]
    rates = framework["DEFAULT_THROTTLE_RATES"]
    assert rates["anon"] == "60/min" and rates["user"] == "600/min"
    assert rates["auth_token"] == "10/min" and rates["login"] == "20/min"
    assert framework["NUM_PROXIES"] == 0
    assert framework["EXCEPTION_HANDLER"] == "shisanshui.api.api_exception_handler"


def test_a_user_over_the_rate_gets_a_429_in_the_apis_shape(rates) -> None:
    rates(user="3/min")
    ada, bob = _logged_in("ada"), _logged_in("bob")

    assert [ada.get("/api/me/").status_code for _ in range(3)] == [200, 200, 200]
    error = _assert_rate_limited(ada.get("/api/me/", HTTP_ACCEPT_LANGUAGE="en"))

    assert error["message"].startswith("Too many requests: try again in ")
    # Per user: another one is not affected, even from the same address.
    assert bob.get("/api/me/").status_code == 200
    # Every endpoint of the user counts towards the same budget.
    _assert_rate_limited(ada.get("/api/wallet/"))


def test_the_message_is_in_the_requests_language(rates) -> None:
    rates(user="1/min")
    client = _logged_in("ming")
    client.get("/api/me/")

    error = _assert_rate_limited(client.get("/api/me/", HTTP_ACCEPT_LANGUAGE="zh-hans"))

    assert "请求过于频繁" in error["message"]


def test_the_lobby_api_answers_the_same_shape(rates) -> None:
    rates(user="2/min")
    client = _logged_in("lobbyist")

    assert client.get("/api/lobby/rooms/").status_code == 200
    assert client.get("/api/lobby/me/").status_code == 200
    _assert_rate_limited(client.get("/api/lobby/rooms/"))


def test_anonymous_requests_count_per_address_and_a_forged_forwarded_for_changes_nothing(
    rates,
) -> None:
    rates(anon="2/min")
    client = Client()

    answers = [
        client.get(
            "/api/schema/",
            HTTP_ACCEPT="application/json",
            REMOTE_ADDR="203.0.113.5",
            HTTP_X_FORWARDED_FOR=f"10.0.0.{n}",
        )
        for n in range(3)
    ]

    assert [a.status_code for a in answers[:2]] == [200, 200]
    _assert_rate_limited(answers[2])
    assert client.get("/api/schema/", REMOTE_ADDR="203.0.113.6").status_code == 200

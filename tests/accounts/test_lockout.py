"""The log-in lockout (django-axes, accounts.lockout) and the per-address log-in rates.

Failures count per user name + address: the LOGIN_FAILURE_LIMIT-th (5) locks the pair out for
LOGIN_LOCKOUT_MINUTES (15) whatever the password, on the web log-in, the admin's and
POST /api/auth/token/; other addresses and other names are not affected. Each address may also
POST only so many log-ins a minute (the "login" and "auth_token" rates).
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from axes.models import AccessAttempt
from django.test import Client
from django.urls import reverse
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User

pytestmark = pytest.mark.django_db

PASSWORD = "the-right-one-2024"
ATTACKER = "203.0.113.7"
ELSEWHERE = "198.51.100.9"
LIMIT = 5
COOL_OFF = 15 * 60


@pytest.fixture
def victim() -> User:
    return User.objects.create_user(username="victim", password=PASSWORD)


def _web_login(
    client: Client, password: str, *, username: str = "victim", address: str = ATTACKER, **extra
):
    return client.post(
        reverse("accounts:login"),
        {"username": username, "password": password},
        REMOTE_ADDR=address,
        **extra,
    )


def _token(api: APIClient, password: str, *, username: str = "victim", address: str = ATTACKER):
    return api.post(
        "/api/auth/token/",
        {"username": username, "password": password},
        format="json",
        REMOTE_ADDR=address,
    )


def _logged_in(client: Client) -> bool:
    return "_auth_user_id" in client.session


def test_the_defaults_are_five_failures_and_fifteen_minutes(settings) -> None:
    assert settings.AXES_FAILURE_LIMIT == LIMIT
    assert settings.AXES_COOLOFF_TIME.total_seconds() == COOL_OFF
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]
    assert settings.AUTHENTICATION_BACKENDS[0] == "axes.backends.AxesStandaloneBackend"


def test_the_fifth_wrong_password_locks_the_name_at_that_address(
    client: Client, victim: User
) -> None:
    for _ in range(LIMIT - 1):
        response = _web_login(client, "guess")
        assert response.status_code == 200  # the form again, with its error
        assert "Please enter a correct username and password" in response.content.decode()

    locked = _web_login(client, "guess", HTTP_ACCEPT_LANGUAGE="en")

    assert locked.status_code == 429
    assert COOL_OFF - 5 <= int(locked["Retry-After"]) <= COOL_OFF
    body = locked.content.decode()
    assert 'data-testid="too-many-attempts"' in body
    assert "Too many failed log-ins with this user name from your address" in body
    assert "Try again in 15 minutes." in body
    # Even the right password is refused now, without being checked.
    assert _web_login(client, PASSWORD).status_code == 429
    assert not _logged_in(client)


def test_a_lockout_holds_only_for_that_name_and_address(client: Client, victim: User) -> None:
    User.objects.create_user(username="other", password=PASSWORD)
    for _ in range(LIMIT):
        _web_login(client, "guess")

    # The player, from their own address, is not locked out by the attacker.
    assert _web_login(Client(), PASSWORD, address=ELSEWHERE).status_code == 302
    # Another name from the attacker's address is not locked either.
    assert _web_login(Client(), PASSWORD, username="other").status_code == 302


def test_the_lockout_ends_after_the_cool_off(client: Client, victim: User) -> None:
    for _ in range(LIMIT):
        _web_login(client, "guess")
    assert _web_login(client, PASSWORD).status_code == 429

    # The refused attempt was not recorded: the cool-off runs from the last failure.
    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(seconds=COOL_OFF - 60))
    retry = _web_login(client, PASSWORD)
    assert retry.status_code == 429 and 55 <= int(retry["Retry-After"]) <= 60

    AccessAttempt.objects.update(attempt_time=timezone.now() - timedelta(seconds=COOL_OFF + 1))
    assert _web_login(client, PASSWORD).status_code == 302
    assert _logged_in(client)


def test_a_success_clears_the_failures(client: Client, victim: User) -> None:
    for _ in range(LIMIT - 1):
        _web_login(client, "guess")
    assert _web_login(client, PASSWORD).status_code == 302
    client.logout()

    for _ in range(LIMIT - 1):
        assert _web_login(client, "guess").status_code == 200
    assert _web_login(client, PASSWORD).status_code == 302


def test_an_unknown_name_is_locked_out_the_same_way(client: Client) -> None:
    responses = [_web_login(client, "guess", username="nobody") for _ in range(LIMIT)]

    assert [r.status_code for r in responses] == [200] * (LIMIT - 1) + [429]


def test_the_lockout_page_is_in_chinese_for_a_chinese_browser(client: Client, victim: User) -> None:
    for _ in range(LIMIT - 1):
        _web_login(client, "guess")

    locked = _web_login(client, "guess", HTTP_ACCEPT_LANGUAGE="zh-hans")

    assert locked.status_code == 429
    body = locked.content.decode()
    assert "登录暂时被拒绝" in body
    assert "15 分钟后再试" in body


def test_the_admin_log_in_locks_out_too(client: Client) -> None:
    User.objects.create_superuser(username="boss", password=PASSWORD)
    url = reverse("admin:login")

    def attempt(password: str):
        return client.post(
            url, {"username": "boss", "password": password, "next": "/admin/"}, REMOTE_ADDR=ATTACKER
        )

    assert [attempt("guess").status_code for _ in range(LIMIT)] == [200] * (LIMIT - 1) + [429]
    assert attempt(PASSWORD).status_code == 429
    assert client.get("/admin/").status_code == 302  # still not logged in


def test_the_token_endpoint_locks_out_with_the_apis_error(victim: User) -> None:
    api = APIClient()
    for _ in range(LIMIT - 1):
        refused = _token(api, "guess")
        assert refused.status_code == 400

    locked = _token(api, "guess")

    assert locked.status_code == 429
    error = locked.json()["error"]
    assert error["code"] == "locked_out"
    assert "Too many failed log-ins" in error["message"]
    assert COOL_OFF - 5 <= error["retry_after"] <= COOL_OFF
    assert locked["Retry-After"] == str(error["retry_after"])
    right = _token(api, PASSWORD)
    assert right.status_code == 429 and right.json()["error"]["code"] == "locked_out"
    assert not Token.objects.filter(user=victim).exists()
    # The same pair is locked on the web log-in too: the failures are the same count.
    assert _web_login(Client(), PASSWORD).status_code == 429
    # From elsewhere the player still gets a token.
    assert _token(APIClient(), PASSWORD, address=ELSEWHERE).status_code == 200


def test_the_web_log_in_rate_per_address(client: Client, settings) -> None:
    rate = int(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["login"].split("/")[0])

    answers = [_web_login(client, "guess", username=f"name{n}").status_code for n in range(rate)]
    refused = _web_login(client, "guess", username="one-more", HTTP_ACCEPT_LANGUAGE="en")

    assert answers == [200] * rate  # every name tried fewer times than the lockout
    assert refused.status_code == 429
    assert "Too many log-in attempts from your address" in refused.content.decode()
    assert 1 <= int(refused["Retry-After"]) <= 60
    # Nothing was checked nor recorded for the refused one; another address is not limited.
    assert not AccessAttempt.objects.filter(username="one-more").exists()
    assert _web_login(client, "guess", address=ELSEWHERE).status_code == 200
    # Reading the form is not limited.
    assert client.get(reverse("accounts:login"), REMOTE_ADDR=ATTACKER).status_code == 200


def test_the_token_endpoint_rate_per_address(settings) -> None:
    rate = int(settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["auth_token"].split("/")[0])
    api = APIClient()

    answers = [_token(api, "guess", username=f"name{n}").status_code for n in range(rate)]
    refused = _token(api, "guess", username="one-more")

    assert answers == [400] * rate
    assert refused.status_code == 429
    error = refused.json()["error"]
    assert error["code"] == "rate_limited" and 1 <= error["retry_after"] <= 60
    assert refused["Retry-After"] == str(error["retry_after"])
    assert not AccessAttempt.objects.filter(username="one-more").exists()

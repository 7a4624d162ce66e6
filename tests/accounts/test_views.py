"""The account pages: sign-up, log-in, log-out, password change and the profile."""

import re

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import Transaction, User
from accounts.services import wallet_transfer
from accounts.views import ENTRIES_PER_PAGE
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import balance_of

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-9"


def _sign_up(client: Client, username: str = "newbie", **fields: str) -> object:
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD, **fields}
    return client.post(reverse("accounts:signup"), data)


# Sign-up.


def test_the_sign_up_page_renders_and_announces_the_grant(client: Client, settings) -> None:
    settings.SIGNUP_GRANT = 100_000

    response = client.get("/accounts/signup/", HTTP_ACCEPT_LANGUAGE="en")

    assert response.status_code == 200
    body = response.content.decode()
    assert "<h1>Sign up</h1>" in body
    assert "100,000 coins" in body
    assert 'name="password2"' in body and "csrfmiddlewaretoken" in body


def test_signing_up_grants_the_coins_logs_in_and_shows_the_profile(
    client: Client, settings
) -> None:
    settings.SIGNUP_GRANT = 100_000

    response = _sign_up(client, email="newbie@example.com")

    assert response.status_code == 302 and response["Location"] == reverse("accounts:profile")
    user = User.objects.get(username="newbie")
    assert user.email == "newbie@example.com"
    assert balance_of(user) == 100_000
    profile = client.get(response["Location"])
    assert profile.wsgi_request.user == user
    body = profile.content.decode()
    assert "Welcome, newbie! Your wallet holds 100,000 coins." in body
    assert 'data-balance="100000"' in body
    assert "Grant" in body


def test_a_rejected_sign_up_creates_nothing(client: Client) -> None:
    User.objects.create_user(username="taken", password="x")

    for data in (
        {"username": "taken", "password1": PASSWORD, "password2": PASSWORD},
        {"username": "fresh", "password1": PASSWORD, "password2": PASSWORD + "x"},
        {"username": "fresh", "password1": "123", "password2": "123"},
    ):
        response = client.post(reverse("accounts:signup"), data)
        assert response.status_code == 200
        assert "errorlist" in response.content.decode()

    assert list(User.objects.values_list("username", flat=True)) == ["taken"]
    assert not Transaction.objects.exists()


def test_a_logged_in_user_is_sent_from_sign_up_to_the_profile(
    client: Client, make_player: MakePlayer
) -> None:
    client.force_login(make_player())

    response = client.get(reverse("accounts:signup"))

    assert response.status_code == 302 and response["Location"] == reverse("accounts:profile")


def test_the_sign_up_page_speaks_chinese(client: Client) -> None:
    response = client.get("/accounts/signup/", HTTP_ACCEPT_LANGUAGE="zh-Hans")

    body = response.content.decode()
    assert "<h1>注册</h1>" in body
    assert "创建账户" in body


# Log-in and log-out.


def test_log_in_and_log_out(client: Client, make_player: MakePlayer) -> None:
    player = make_player(username="ada")
    player.set_password(PASSWORD)
    player.save()

    page = client.get(reverse("accounts:login"))
    assert page.status_code == 200 and "<h1>Log in</h1>" in page.content.decode()

    wrong = client.post(reverse("accounts:login"), {"username": "ada", "password": "nope"})
    assert wrong.status_code == 200 and "errors" in wrong.content.decode()

    response = client.post(reverse("accounts:login"), {"username": "ada", "password": PASSWORD})
    assert response.status_code == 302 and response["Location"] == reverse("accounts:profile")
    home = client.get("/")
    assert "ada" in home.content.decode() and "Log out" in home.content.decode()

    response = client.post(reverse("accounts:logout"))
    assert response.status_code == 302 and response["Location"] == reverse("home")
    assert client.get(reverse("accounts:profile")).status_code == 302


def test_the_profile_requires_logging_in(client: Client) -> None:
    response = client.get(reverse("accounts:profile"))

    assert response.status_code == 302
    assert response["Location"].startswith(reverse("accounts:login") + "?next=")


# Password change.


def test_changing_the_password(client: Client, make_player: MakePlayer) -> None:
    player = make_player(username="ada")
    player.set_password(PASSWORD)
    player.save()
    client.force_login(player)

    page = client.get(reverse("accounts:password_change"))
    assert page.status_code == 200 and 'name="old_password"' in page.content.decode()

    wrong = client.post(
        reverse("accounts:password_change"),
        {
            "old_password": "nope",
            "new_password1": "x-new-pass-77",
            "new_password2": "x-new-pass-77",
        },
    )
    assert wrong.status_code == 200

    response = client.post(
        reverse("accounts:password_change"),
        {
            "old_password": PASSWORD,
            "new_password1": "x-new-pass-77",
            "new_password2": "x-new-pass-77",
        },
    )
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_change_done")
    assert client.get(response["Location"]).status_code == 200
    player.refresh_from_db()
    assert player.check_password("x-new-pass-77")
    # Still logged in: the session hash was updated.
    assert client.get(reverse("accounts:profile")).status_code == 200


# The profile.


def _amounts_on(page: str) -> list[str]:
    return re.findall(r'<td class="number (?:credit|debit)">([^<]+)</td>', page)


def test_the_profile_shows_the_balance_and_the_history_newest_first_paginated(
    client: Client, make_player: MakePlayer, django_assert_max_num_queries
) -> None:
    player, other = make_player(1000), make_player(1000)
    for number in range(1, ENTRIES_PER_PAGE + 6):
        wallet_transfer(
            source=player,
            destination=other,
            amount=number,
            idempotency_key=f"t:{number}",
            reference=f"round:{number}",
        )
    client.force_login(player)

    # 8 for the page and its history, 5 for the claims: the economy settings, today's bonus,
    # today's reliefs, the balance and the unsettled rounds (the player holds less than the
    # relief threshold).
    with django_assert_max_num_queries(13):
        first = client.get(reverse("accounts:profile")).content.decode()
    second = client.get(reverse("accounts:profile") + "?page=2").content.decode()

    spent = sum(range(1, ENTRIES_PER_PAGE + 6))
    assert f'data-balance="{1000 - spent}"' in first
    # 25 transfers and the grant: 20 newest on page 1, 6 on page 2, the grant last.
    assert _amounts_on(first)[:2] == ["-25", "-24"]
    assert len(_amounts_on(first)) == ENTRIES_PER_PAGE
    assert _amounts_on(second) == ["-5", "-4", "-3", "-2", "-1", "+1,000"]
    assert "Page 1 of 2" in first and 'rel="next"' in first
    assert "Round #25" in first and "Round #25" not in second  # reference "round:25"


def test_the_profile_of_a_user_without_a_wallet(client: Client) -> None:
    client.force_login(User.objects.create_user(username="staffer", password="x"))

    body = client.get(reverse("accounts:profile")).content.decode()

    assert 'data-balance="0"' in body
    assert "No coins have moved yet." in body


def test_the_profile_speaks_chinese(client: Client, make_player: MakePlayer) -> None:
    client.force_login(make_player(1000))

    body = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="zh-Hans").content
    text = body.decode()

    assert "余额" in text and "记录" in text and "赠送" in text


# The table settings (RULES.md §6: how a new hand opens).


def test_6_the_profile_turns_the_default_layout_off_and_on(
    client: Client, make_player: MakePlayer
) -> None:
    player = make_player()
    assert player.default_layout is True  # the site's default
    client.force_login(player)
    page = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="en").content.decode()
    assert re.search(r'value="suggested"[^>]*checked', page)
    assert "Table settings" in page

    response = client.post(reverse("accounts:save_settings"), {"opening": "sorted"})
    assert response.status_code == 302 and response["Location"] == reverse("accounts:profile")
    player.refresh_from_db()
    assert player.default_layout is False
    page = client.get(reverse("accounts:profile")).content.decode()
    assert re.search(r'value="sorted"[^>]*checked', page)

    client.post(reverse("accounts:save_settings"), {"opening": "suggested"})
    player.refresh_from_db()
    assert player.default_layout is True


def test_6_a_bad_table_setting_is_refused_and_changes_nothing(
    client: Client, make_player: MakePlayer
) -> None:
    player = make_player()
    client.force_login(player)
    for data in ({"opening": "upside-down"}, {}, {"opening": ["sorted", "x" * 5000]}):
        response = client.post(reverse("accounts:save_settings"), data, HTTP_ACCEPT_LANGUAGE="en")
        assert response.status_code == 400
        assert "Select a valid choice" in response.content.decode() or (
            "This field is required" in response.content.decode()
        )
        player.refresh_from_db()
        assert player.default_layout is True
    zh = client.post(
        reverse("accounts:save_settings"), {"opening": "?"}, HTTP_ACCEPT_LANGUAGE="zh-hans"
    )
    assert zh.status_code == 400 and "选择一个有效的选项" in zh.content.decode()

    assert client.get(reverse("accounts:save_settings")).status_code == 405
    anonymous = Client().post(reverse("accounts:save_settings"), {"opening": "sorted"})
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    csrf = Client(enforce_csrf_checks=True)
    csrf.force_login(player)
    assert csrf.post(reverse("accounts:save_settings"), {"opening": "sorted"}).status_code == 403
    player.refresh_from_db()
    assert player.default_layout is True


def test_6_the_table_settings_are_rate_limited_per_user(
    client: Client, make_player: MakePlayer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from rest_framework.throttling import SimpleRateThrottle

    rates = {**SimpleRateThrottle.THROTTLE_RATES, "profile_settings": "2/min"}
    monkeypatch.setattr(SimpleRateThrottle, "THROTTLE_RATES", rates)
    player = make_player()
    client.force_login(player)
    for opening in ("sorted", "suggested"):
        assert (
            client.post(reverse("accounts:save_settings"), {"opening": opening}).status_code == 302
        )

    response = client.post(
        reverse("accounts:save_settings"), {"opening": "sorted"}, HTTP_ACCEPT_LANGUAGE="en"
    )

    assert response.status_code == 429 and int(response["Retry-After"]) >= 1
    assert "Too many requests: try again in" in response.content.decode()
    player.refresh_from_db()
    assert player.default_layout is True  # the third was not saved


def test_6_the_table_settings_speak_chinese(client: Client, make_player: MakePlayer) -> None:
    player = make_player()
    client.force_login(player)
    page = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "牌桌设置" in page and "按最佳推荐摆好三墩" in page and "按点数排好，三墩留空" in page
    response = client.post(
        reverse("accounts:save_settings"),
        {"opening": "sorted"},
        HTTP_ACCEPT_LANGUAGE="zh-hans",
        follow=True,
    )
    assert "牌桌设置已保存。" in response.content.decode()

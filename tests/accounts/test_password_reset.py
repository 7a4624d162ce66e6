""" "Forgot your password?" (accounts.views.PasswordResetRequestView): the player asks for a link
and chooses a new password through it. Attack-minded: the page tells nobody which addresses are
known, sends nothing to a bot, and cannot flood a mailbox nor be hammered from one address."""

import re
from typing import Any

import pytest
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.models import User

pytestmark = pytest.mark.django_db

OLD = "old-password-Alpha-1"
NEW = "new-password-Bravo-2"
URL = "/accounts/password/reset/"


def ask(client: Client, email: str, address: str = "192.0.2.10") -> Any:
    return client.post(URL, {"email": email}, REMOTE_ADDR=address)


@pytest.fixture
def player() -> User:
    return User.objects.create_user(username="forgetful", password=OLD, email="me@example.com")


def test_the_log_in_page_links_to_it_and_it_renders(client: Client) -> None:
    assert URL in client.get(reverse("accounts:login")).content.decode()
    page = client.get(URL)
    assert page.status_code == 200 and 'name="email"' in page.content.decode()


def test_a_player_gets_a_link_and_sets_a_new_password(client: Client, player: User) -> None:
    response = ask(client, "ME@example.com")
    assert response.status_code == 302
    assert response["Location"] == reverse("accounts:password_reset_done")
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["me@example.com"]
    link = re.search(r"https?://[^/\s]+(/accounts/reset/\S+/)", mail.outbox[0].body)
    assert link is not None
    form = client.get(link.group(1), follow=True)
    done = client.post(form.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302
    assert User.objects.get(pk=player.pk).check_password(NEW)


def test_an_unknown_address_gets_the_same_answer_and_no_mail(client: Client, player: User) -> None:
    known = ask(client, "me@example.com", address="192.0.2.11")
    unknown = ask(client, "nobody@example.com", address="192.0.2.12")
    assert (unknown.status_code, unknown["Location"]) == (known.status_code, known["Location"])
    assert [m.to for m in mail.outbox] == [["me@example.com"]]


def test_no_link_for_a_bot_or_an_account_without_a_password(client: Client) -> None:
    User.objects.create_user(username="bot-y", email="shared@example.com", is_bot=True)
    User.objects.create_user(username="load-1", email="shared@example.com")  # unusable
    assert ask(client, "shared@example.com").status_code == 302
    assert mail.outbox == []


def test_one_address_is_refused_past_its_budget_and_nothing_is_sent(
    client: Client, player: User, settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "accounts.password_reset_request": "2/minute"}
    answers = [ask(client, "x@example.com", address="192.0.2.20").status_code for _ in range(2)]
    refused = ask(client, "me@example.com", address="192.0.2.20")
    assert answers == [302, 302] and refused.status_code == 429
    assert int(refused["Retry-After"]) >= 1
    assert mail.outbox == []  # the refused request named a real address: nothing sent
    assert ask(client, "me@example.com", address="192.0.2.21").status_code == 302


def test_a_mailbox_cannot_be_flooded_from_many_addresses(
    client: Client, player: User, settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "accounts.password_reset_mailbox": "2/hour"}
    answers = [ask(client, "me@example.com", address=f"192.0.2.{30 + i}") for i in range(4)]
    assert [a.status_code for a in answers] == [302] * 4  # the same answer every time
    assert len(mail.outbox) == 2


def test_the_pages_and_the_mail_speak_chinese(client: Client, player: User) -> None:
    page = client.get(URL, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "忘记密码？" in page and "Forgot" not in page
    client.post(URL, {"email": "me@example.com"}, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "设置新密码" in mail.outbox[0].subject and "您好" in mail.outbox[0].body

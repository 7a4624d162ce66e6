"""Nobody sets another account's password in the admin, superusers included: support sends a
password reset link, and the player chooses the new password through it (accounts.admin,
accounts.views.PasswordResetConfirmView). Attack-minded: a superuser or a support insider
trying to get a player's password, and a client hammering the reset pages."""

import re
from typing import Any

import pytest
from django.contrib.admin.models import LogEntry
from django.contrib.auth.models import Group
from django.core import mail
from django.test import Client
from django.urls import reverse

from accounts.groups import SUPPORT
from accounts.models import User

pytestmark = pytest.mark.django_db

OLD = "old-password-Alpha-1"
NEW = "new-password-Bravo-2"
ACTION = "send_password_reset_link"


@pytest.fixture
def player() -> User:
    return User.objects.create_user(username="victim", password=OLD, email="victim@example.com")


@pytest.fixture
def root() -> User:
    return User.objects.create_superuser(username="root", password="root-pass-xyz-9")


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def password_is(username: str, password: str) -> bool:
    return User.objects.get(username=username).check_password(password)


def password_of(user: User) -> str:
    return str(User.objects.values_list("password", flat=True).get(pk=user.pk))


def run_action(client: Client, *users: User) -> Any:
    return client.post(
        reverse("admin:accounts_user_changelist"),
        {"action": ACTION, "_selected_action": [u.pk for u in users]},
        follow=True,
    )


def test_a_superuser_cannot_open_nor_post_a_players_password_form(root: User, player: User) -> None:
    client = logged_in(root)
    url = reverse("admin:auth_user_password_change", args=[player.pk])
    before = password_of(player)

    assert client.get(url).status_code == 403
    for data in (
        {"password1": NEW, "password2": NEW, "usable_password": "true"},
        {"usable_password": "false"},  # making it unusable is setting it too
    ):
        assert client.post(url, data).status_code == 403
    assert password_of(player) == before
    assert password_is("victim", OLD)


def test_the_change_form_offers_no_password_link_and_ignores_a_posted_hash(
    root: User, player: User
) -> None:
    client = logged_in(root)
    url = reverse("admin:accounts_user_change", args=[player.pk])
    page = client.get(url).content.decode()
    assert 'data-testid="password-self-only"' in page
    assert "../password/" not in page
    before = password_of(player)
    form = {
        "username": player.username,
        "email": player.email,
        "password": "pbkdf2_sha256$1$salt$forged",
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    client.post(url, form)
    assert password_of(player) == before  # the hash field is read-only


def test_a_staff_member_still_sets_their_own_password(root: User) -> None:
    client = logged_in(root)
    url = reverse("admin:auth_user_password_change", args=[root.pk])
    assert client.get(url).status_code == 200
    response = client.post(url, {"password1": NEW, "password2": NEW, "usable_password": "true"})
    assert response.status_code == 302
    assert password_is("root", NEW)
    own = client.get(reverse("admin:accounts_user_change", args=[root.pk])).content.decode()
    assert "../password/" in own  # one's own change page keeps the link


def test_the_add_form_still_sets_a_new_accounts_first_password(root: User) -> None:
    client = logged_in(root)
    response = client.post(
        reverse("admin:accounts_user_add"),
        {"username": "newcomer", "password1": NEW, "password2": NEW, "usable_password": "true"},
    )
    assert response.status_code == 302, response.content.decode()[:600]
    assert password_is("newcomer", NEW)


def test_support_sends_a_reset_link_and_the_player_chooses_the_password(
    player: User, settings: Any
) -> None:
    helpdesk = User.objects.create_user(username="helpdesk", password="x", is_staff=True)
    helpdesk.groups.add(Group.objects.get(name=SUPPORT))
    before = password_of(player)

    response = run_action(logged_in(helpdesk), player)

    assert response.status_code == 200
    assert "Sent a password reset link to 1 account." in response.content.decode()
    assert password_of(player) == before  # nothing changes until the player uses the link
    assert len(mail.outbox) == 1 and mail.outbox[0].to == ["victim@example.com"]
    assert LogEntry.objects.filter(object_id=str(player.pk), user=helpdesk).exists()
    link = re.search(r"https?://[^/\s]+(/accounts/reset/\S+/)", mail.outbox[0].body)
    assert link is not None, mail.outbox[0].body

    browser = Client()
    form_page = browser.get(link.group(1), follow=True)
    assert form_page.status_code == 200 and 'name="new_password1"' in form_page.content.decode()
    done = browser.post(
        form_page.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW}
    )
    assert done.status_code == 302 and done["Location"] == reverse(
        "accounts:password_reset_complete"
    )
    assert password_is("victim", NEW)
    # The link works once.
    again = Client().get(link.group(1), follow=True)
    assert 'data-testid="reset-link-invalid"' in again.content.decode()


def test_no_link_for_a_bot_a_deactivated_account_or_one_without_an_address(root: User) -> None:
    bot = User.objects.create_user(username="bot-x", email="bot@example.com", is_bot=True)
    gone = User.objects.create_user(username="gone", email="gone@example.com", is_active=False)
    silent = User.objects.create_user(username="silent", password=OLD)

    page = run_action(logged_in(root), bot, gone, silent).content.decode()

    assert mail.outbox == []
    assert page.count("No link sent") == 3


def test_staff_without_the_permission_cannot_send_a_link(player: User) -> None:
    viewer = User.objects.create_user(username="viewer", password="x", is_staff=True)
    viewer.user_permissions.add(
        *Group.objects.get(name=SUPPORT).permissions.exclude(codename="send_password_reset")
    )
    response = run_action(logged_in(viewer), player)
    assert response.status_code == 200
    assert mail.outbox == []


def test_the_links_a_staff_member_sends_are_rate_limited(
    root: User, player: User, settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.password_reset": "2/minute"}
    client = logged_in(root)
    run_action(client, player)
    run_action(client, player)
    page = run_action(client, player).content.decode()
    assert "Too many reset links: none sent." in page
    assert len(mail.outbox) == 2


def test_the_reset_pages_are_rate_limited_per_address(settings: Any, player: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "accounts.password_reset": "3/minute"}
    client = Client()
    url = reverse("accounts:password_reset_confirm", args=["MQ", "not-a-token"])
    answers = [client.get(url, REMOTE_ADDR="198.51.100.7").status_code for _ in range(4)]
    assert answers == [200, 200, 200, 429]
    refused = client.get(url, REMOTE_ADDR="198.51.100.7")
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert client.get(url, REMOTE_ADDR="198.51.100.8").status_code == 200  # another address
    # A forged token shows the invalid-link page and changes nothing.
    page = client.get(url, REMOTE_ADDR="198.51.100.9").content.decode()
    assert 'data-testid="reset-link-invalid"' in page
    assert password_is("victim", OLD)


def test_a_changed_address_is_told_at_the_old_one(
    root: User, player: User, django_capture_on_commit_callbacks: Any
) -> None:
    client = logged_in(root)
    url = reverse("admin:accounts_user_change", args=[player.pk])
    form = {
        "username": player.username,
        "email": "thief@example.com",
        "is_active": "on",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
    }
    with django_capture_on_commit_callbacks(execute=True):
        with_commit = client.post(url, form)
    assert with_commit.status_code == 302, with_commit.content.decode()[:800]
    player.refresh_from_db()
    assert player.email == "thief@example.com"
    told = [m for m in mail.outbox if m.to == ["victim@example.com"]]
    assert len(told) == 1 and "thief@example.com" in told[0].body


def test_a_mail_server_down_is_reported_and_logs_no_link(
    root: User, player: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from django.core.mail.backends.locmem import EmailBackend

    def refuse(self: Any, messages: Any) -> int:
        raise ConnectionRefusedError("mail server down")

    monkeypatch.setattr(EmailBackend, "send_messages", refuse)
    page = run_action(logged_in(root), player).content.decode()
    assert "No link sent: mail server down" in page
    assert not LogEntry.objects.filter(object_id=str(player.pk)).exists()

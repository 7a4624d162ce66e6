"""A changed password deletes the user's API tokens, whichever way it changed (accounts.signals);
a hash upgrade at log-in, or any other save of the user, keeps them."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth import authenticate
from django.contrib.auth.hashers import make_password
from django.db import transaction
from django.test import Client, RequestFactory
from django.urls import reverse
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts.models import User

pytestmark = pytest.mark.django_db

OLD = "old-password-Alpha-1"
NEW = "new-password-Bravo-2"


@pytest.fixture
def player() -> User:
    return User.objects.create_user(username="scripter", password=OLD)


def _token_of(user: User) -> str:
    key = APIClient().post(
        "/api/auth/token/", {"username": user.username, "password": OLD}, format="json"
    )
    assert key.status_code == 200
    return str(key.json()["token"])


def _works(key: str) -> bool:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api.get("/api/me/").status_code == 200


def _by_the_change_page(user: User) -> None:
    client = Client()
    client.force_login(user)
    response = client.post(
        reverse("accounts:password_change"),
        {"old_password": OLD, "new_password1": NEW, "new_password2": NEW},
    )
    assert response.status_code == 302, response.content.decode()[:500]


def _by_the_admin(user: User) -> None:
    # The admin's password form sets only one's own password (test_admin_passwords.py).
    User.objects.filter(pk=user.pk).update(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(User.objects.get(pk=user.pk))
    response = client.post(
        reverse("admin:auth_user_password_change", args=[user.pk]),
        {"password1": NEW, "password2": NEW, "usable_password": "true"},
    )
    assert response.status_code == 302, response.content.decode()[:800]


def _by_set_password(user: User) -> None:
    user.set_password(NEW)
    user.save()


def _by_set_password_saving_only_it(user: User) -> None:
    user = User.objects.get(pk=user.pk)
    user.set_password(NEW)
    user.save(update_fields=["password"])


def _by_assigning_a_hash(user: User) -> None:
    user.password = make_password(NEW)
    user.save()


def _by_making_it_unusable(user: User) -> None:
    user.set_unusable_password()
    user.save()


PATHS: dict[str, Callable[[User], None]] = {
    "password change page": _by_the_change_page,
    "admin password form": _by_the_admin,
    "set_password and save": _by_set_password,
    "set_password and save(update_fields)": _by_set_password_saving_only_it,
    "a hash assigned directly": _by_assigning_a_hash,
    "set_unusable_password": _by_making_it_unusable,
}


@pytest.mark.parametrize("change", PATHS.values(), ids=PATHS.keys())
def test_a_changed_password_deletes_the_api_tokens(
    player: User, change: Callable[[User], None]
) -> None:
    key = _token_of(player)
    assert _works(key)

    change(player)

    assert not Token.objects.filter(user=player).exists()
    assert not _works(key)


def test_the_new_password_gets_a_new_token(player: User) -> None:
    old_key = _token_of(player)
    _by_set_password(player)

    fresh = APIClient().post(
        "/api/auth/token/", {"username": "scripter", "password": NEW}, format="json"
    )

    assert fresh.status_code == 200
    assert fresh.json()["token"] != old_key and _works(fresh.json()["token"])


def test_other_saves_of_the_user_keep_the_token(player: User) -> None:
    key = _token_of(player)
    player.email = "scripter@example.com"
    player.save()
    player.refresh_from_db()
    player.first_name = "Ada"
    player.save(update_fields=["first_name"])
    Client().force_login(player)  # last_login

    assert _works(key)


def test_a_hash_upgrade_at_log_in_keeps_the_token(player: User, settings) -> None:
    key = _token_of(player)
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.MD5PasswordHasher",
        "django.contrib.auth.hashers.PBKDF2SHA1PasswordHasher",
    ]
    # Stored with an older hasher, as after a change of PASSWORD_HASHERS.
    User.objects.filter(pk=player.pk).update(password=make_password(OLD, hasher="pbkdf2_sha1"))

    request = RequestFactory().post("/accounts/login/")
    assert authenticate(request, username="scripter", password=OLD) is not None

    assert User.objects.get(pk=player.pk).password.startswith("md5$")  # upgraded
    assert _works(key)


def test_the_tokens_stay_if_the_password_change_rolls_back(player: User) -> None:
    key = _token_of(player)

    with pytest.raises(RuntimeError), transaction.atomic():
        _by_set_password(player)
        raise RuntimeError("something else failed")

    assert _works(key)
    assert User.objects.get(pk=player.pk).check_password(OLD)

"""Look-alike names in the admin: adding a user, or renaming one, to a name that looks like
another account's (accounts.names, `User.name_key`) is refused with sign-up's message, and so
is a name holding an invisible character; a look-alike of the account's own name is fine."""

from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from accounts.services import user_signup

pytestmark = pytest.mark.django_db

PASSWORD = "correct-horse-battery-9"
LOOKS_LIKE = "This name looks like the name of an existing player. Please choose another."
INVISIBLE = "A user name cannot hold invisible characters."


@pytest.fixture
def root() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser(username="root", password=PASSWORD))
    return client


def add(client: Client, username: str) -> Any:
    return client.post(
        reverse("admin:accounts_user_add"),
        {
            "username": username,
            "password1": PASSWORD,
            "password2": PASSWORD,
            "usable_password": "true",
        },
    )


def rename(client: Client, user: User, username: str, **changes: object) -> Any:
    """POST the user's change form as the page would, with `username` and `changes`."""
    form: dict[str, object] = {
        "username": username,
        "first_name": user.first_name,
        "last_name": user.last_name,
        "email": user.email,
        "is_active": "on",
        "date_joined_0": user.date_joined.strftime("%Y-%m-%d"),
        "date_joined_1": user.date_joined.strftime("%H:%M:%S"),
        **changes,
    }
    return client.post(reverse("admin:accounts_user_change", args=[user.pk]), form)


def test_adding_a_look_alike_of_an_existing_name_is_refused(root: Client) -> None:
    alice = user_signup(username="alice", password=PASSWORD)
    before = User.objects.count()

    for name in ("\u0430lice", "AIice", "a1ice"):  # Cyrillic а, capital I, digit one
        response = add(root, name)
        assert response.status_code == 200, name  # the form again
        assert LOOKS_LIKE in response.content.decode(), name
    response = add(root, "bob\u3164")
    assert response.status_code == 200 and INVISIBLE in response.content.decode()

    assert User.objects.count() == before
    assert User.objects.filter(name_key=alice.name_key).count() == 1
    assert add(root, "alicia").status_code == 302  # a different name passes


def test_renaming_to_a_look_alike_of_another_account_is_refused(root: Client) -> None:
    user_signup(username="alice", password=PASSWORD)
    mallory = user_signup(username="mallory", password=PASSWORD)
    key = mallory.name_key

    for name in ("\u0430lice", "ALICE", "m\u0430llory\u200b"):
        response = rename(root, mallory, name)
        assert response.status_code == 200, name
        assert LOOKS_LIKE in response.content.decode() or INVISIBLE in response.content.decode()
        mallory.refresh_from_db()
        assert mallory.username == "mallory" and mallory.name_key == key

    # Staff and bots are guarded too.
    User.objects.create_user(username="support", is_staff=True)
    assert LOOKS_LIKE in rename(root, mallory, "supp\u043ert").content.decode()
    mallory.refresh_from_db()
    assert mallory.username == "mallory"


def test_a_look_alike_of_the_accounts_own_name_is_fine(root: Client) -> None:
    bob = user_signup(username="bob", password=PASSWORD)

    assert rename(root, bob, "Bob").status_code == 302
    bob.refresh_from_db()
    assert bob.username == "Bob" and bob.name_key == "bob"
    assert rename(root, bob, "B0b").status_code == 302  # zero for o: still bob's own key
    bob.refresh_from_db()
    assert bob.username == "B0b"


def test_an_existing_look_alike_pair_can_still_be_edited_without_a_rename(root: Client) -> None:
    # Made before the rule (around the form): each keeps its name; other fields still save.
    User.objects.create_user(username="carol", password=PASSWORD)
    twin = User.objects.create_user(username="c\u0430rol", password=PASSWORD)

    assert rename(root, twin, twin.username, email="twin@example.com").status_code == 302
    twin.refresh_from_db()
    assert twin.email == "twin@example.com" and twin.username == "c\u0430rol"

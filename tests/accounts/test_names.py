"""Look-alike user names (accounts.names, the UTS #39 skeleton): sign-up refuses a name that a
reader could take for an existing one, and a name that hides invisible characters."""

import threading

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse

from accounts.errors import SignupRefused
from accounts.models import SignupQuota, Transaction, User
from accounts.names import CONFUSABLES, has_invisible, name_key, prototypes, skeleton
from accounts.services import user_signup

PASSWORD = "correct-horse-battery-9"


def sign_up(client: Client, username: str) -> object:
    data = {"username": username, "password1": PASSWORD, "password2": PASSWORD}
    return client.post(reverse("accounts:signup"), data, REMOTE_ADDR="203.0.113.9")


# The skeleton itself (no database).


def test_the_vendored_table_is_unicodes_with_its_licence() -> None:
    head = CONFUSABLES.read_text(encoding="utf-8-sig")[:400]
    assert "Unicode Security Mechanisms for UTS #39" in head and "Version: 13.0.0" in head
    assert (CONFUSABLES.parent / "LICENSE-UNICODE.txt").read_text().startswith("UNICODE, INC.")
    table = prototypes()
    assert len(table) > 6000
    assert table["\u0430"] == "a"  # CYRILLIC SMALL LETTER A
    assert table["\u0131"] == "i"  # LATIN SMALL LETTER DOTLESS I


@pytest.mark.parametrize(
    ("one", "other"),
    [
        ("\u0430lice", "alice"),  # Cyrillic а
        ("alice", "ALICE"),
        ("AIice", "alice"),  # capital I for l
        ("a1ice", "alice"),  # digit one for l
        ("paypal", "p\u0430yp\u0430l"),
        ("rnary", "mary"),  # r n for m
        ("b\u043eb", "bob"),  # Cyrillic о
        ("\uff41lice", "alice"),  # fullwidth a
        ("zoe\u0301", "zo\u00e9"),  # decomposed and precomposed é
        ("TIGER", "t\u0131ger"),  # capital I, dotless ı
    ],
)
def test_look_alikes_share_a_key(one: str, other: str) -> None:
    assert one != other
    assert name_key(one) == name_key(other)


@pytest.mark.parametrize(("one", "other"), [("alice", "alicia"), ("bob", "rob"), ("李雷", "李霄")])
def test_different_names_keep_different_keys(one: str, other: str) -> None:
    assert name_key(one) != name_key(other)


def test_invisible_characters_are_dropped_by_the_skeleton_and_spotted() -> None:
    for invisible in ("\u3164", "\u115f", "\u200b", "\u00ad", "\ufe0f"):
        assert skeleton(f"al{invisible}ice") == "alice"
        assert has_invisible(f"al{invisible}ice")
    assert not has_invisible("alice_李雷-9")


# Sign-up.


@pytest.mark.django_db
def test_the_sign_up_page_refuses_a_look_alike_name_and_creates_nothing(client: Client) -> None:
    user_signup(username="alice", password=PASSWORD)
    users, transactions = User.objects.count(), Transaction.objects.count()

    response = sign_up(client, "\u0430lice")

    assert response.status_code == 200  # the form again, with the reason under the name
    assert "looks like the name of an existing player" in response.content.decode()
    assert User.objects.count() == users and Transaction.objects.count() == transactions
    assert not SignupQuota.objects.filter(count__gt=0).exists()  # no sign-up counted
    assert sign_up(Client(), "alicia").status_code == 302  # a different name passes


@pytest.mark.django_db
def test_the_sign_up_page_refuses_an_invisible_name(client: Client) -> None:
    for name in ("\u3164", "bob\u3164", "\u3164\u3164"):
        response = sign_up(client, name)
        assert response.status_code == 200
        assert not User.objects.filter(username=name).exists(), name


@pytest.mark.django_db
def test_the_service_refuses_look_alikes_of_staff_and_bots_too() -> None:
    User.objects.create_user(username="support", password=PASSWORD, is_staff=True)
    User.objects.create_user(username="bot-tiger", is_bot=True)
    for name, code in (
        ("supp\u043ert", "name_taken"),
        ("B0T-TIGER", "name_taken"),
        ("x\u200by", "name_invisible"),
    ):
        with pytest.raises(SignupRefused) as refused:
            user_signup(username=name, password=PASSWORD)
        assert refused.value.code == code
        assert not User.objects.filter(username=name).exists()


@pytest.mark.django_db
def test_existing_look_alike_pairs_keep_their_names_and_the_key_follows_a_rename() -> None:
    # Accounts made before the rule (here: around the service) are left as they are.
    first = User.objects.create_user(username="carol", password=PASSWORD)
    second = User.objects.create_user(username="c\u0430rol", password=PASSWORD)
    assert first.name_key == second.name_key == "carol"
    second.username = "karol"
    second.save(update_fields=["username"])
    second.refresh_from_db()
    assert second.name_key == "karol"
    user_signup(username="c\u0430r0l-new", password=PASSWORD)  # different: a suffix


@pytest.mark.django_db(transaction=True)
def test_two_look_alike_sign_ups_at_once_give_one_account() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("the key lock is PostgreSQL's")
    barrier = threading.Barrier(2)
    outcomes: list[str] = []

    def attempt(name: str) -> None:
        barrier.wait()
        try:
            user_signup(username=name, password=PASSWORD)
            outcomes.append("created")
        except SignupRefused as refused:
            outcomes.append(refused.code)
        finally:
            connection.close()

    threads = [threading.Thread(target=attempt, args=(n,)) for n in ("dave", "d\u0430ve")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(outcomes) == ["created", "name_taken"]
    assert User.objects.filter(name_key=name_key("dave")).count() == 1

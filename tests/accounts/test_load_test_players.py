"""`manage.py load_test_players`: load-test players with sessions, without password hashing."""

from __future__ import annotations

import io
import json

import pytest
from django.contrib.sessions.models import Session
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import override_settings

from accounts.models import User
from accounts.selectors import ledger_audit, wallet_balance

pytestmark = pytest.mark.django_db


def run(*args: str) -> list[dict[str, object]]:
    out = io.StringIO()
    call_command("load_test_players", *args, stdout=out)
    return [json.loads(line) for line in out.getvalue().splitlines()]


@override_settings(SIGNUP_GRANT=5000)
def test_players_are_signed_up_once_with_a_session_each_and_no_password() -> None:
    first = run("--prefix", "lt", "--count", "3", "--load-test-machine")

    assert [p["name"] for p in first] == ["lt_0000", "lt_0001", "lt_0002"]
    users = User.objects.filter(username__startswith="lt_")
    assert users.count() == 3
    for user in users:
        assert not user.has_usable_password()  # nobody logs in with it through the page
        assert wallet_balance(user=user) == 5000  # the sign-up grant, through the ledger
    sessions = {s.session_key: s.get_decoded() for s in Session.objects.all()}
    for player in first:
        cookie = player["cookie"]
        assert isinstance(cookie, dict)
        data = sessions[cookie["sessionid"]]
        assert data["_auth_user_id"] == str(User.objects.get(username=player["name"]).pk)

    again = run("--prefix", "lt", "--count", "4", "--load-test-machine")
    assert len(again) == 4 and User.objects.filter(username__startswith="lt_").count() == 4
    assert ledger_audit().ok


@override_settings(DEBUG=False)
def test_it_refuses_without_saying_this_is_a_load_test_machine() -> None:
    with pytest.raises(CommandError, match="load-test machines only"):
        run("--prefix", "lt", "--count", "1")
    assert not User.objects.exists()


@pytest.mark.parametrize(
    "args",
    [
        ["--prefix", "lt", "--count", "0"],
        ["--prefix", "lt", "--count", "5001"],
        ["--prefix", "bad-prefix!", "--count", "1"],
        ["--prefix", "x" * 41, "--count", "1"],
    ],
)
def test_bad_arguments_are_refused_and_create_nothing(args: list[str]) -> None:
    with pytest.raises(CommandError):
        run(*args, "--load-test-machine")
    assert not User.objects.exists()

"""A staff action on a player's account during a round marks the round in the audit
(games.live.staff_marks, listening to accounts.signals.staff_account_action).

A superuser changes the e-mail address of a player in a round in play, deactivates another and
sends a third a password reset link: each round the player is in gets a mark naming the staff
member and what was done; the round admin shows it on the round's page, in its flags column and
under the "staff" flag filter. Settled rounds and players in no round get nothing, and a staff
member's change of their own account marks nothing.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse

from accounts.models import User
from games.history import audit
from games.live.staff_marks import rounds_mark_staff_action
from games.models import Round, RoundStaffAction
from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)


def change_form(user: User, **changes: Any) -> dict[str, str]:
    form = {
        "username": user.username,
        "email": user.email,
        "is_active": "on" if user.is_active else "",
        "date_joined_0": "2026-01-01",
        "date_joined_1": "00:00:00",
        **changes,
    }
    return {k: v for k, v in form.items() if v != ""}


@pytest.fixture
def in_play(monkeypatch: pytest.MonkeyPatch) -> tuple[Round, dict[str, User]]:
    return play_rigged_round(monkeypatch, GUNS_AND_SPECIAL, settle=False)


@pytest.fixture
def root() -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser(username="root", password="root-pass-9"))
    return client


def test_staff_actions_during_a_round_mark_it(
    in_play: tuple[Round, dict[str, User]], root: Client
) -> None:
    round_, users = in_play
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    User.objects.filter(pk=carol.pk).update(email="carol@example.com")
    bystander = make_player("erin")
    assert round_.settled_at is None

    url = reverse("admin:accounts_user_change", args=[alice.pk])
    changed = root.post(url, change_form(alice, email="thief@example.com"))
    assert changed.status_code == 302
    url = reverse("admin:accounts_user_change", args=[bob.pk])
    assert root.post(url, change_form(bob, is_active="")).status_code == 302
    root.post(
        reverse("admin:accounts_user_changelist"),
        {"action": "send_password_reset_link", "_selected_action": [carol.pk]},
    )
    url = reverse("admin:accounts_user_change", args=[bystander.pk])
    assert root.post(url, change_form(bystander, email="x@example.com")).status_code == 302
    url = reverse("admin:accounts_user_change", args=[users["dave"].pk])
    assert root.post(url, change_form(users["dave"], first_name="Dave")).status_code == 302

    marks = {
        m.player.username: (m.staff.username if m.staff else None, m.actions)
        for m in RoundStaffAction.objects.filter(round=round_).select_related("player", "staff")
    }
    assert marks == {
        "alice": ("root", ["email"]),
        "bob": ("root", ["is_active"]),
        "carol": ("root", ["reset_link"]),
    }  # not erin (in no round), not dave (a change of nothing the audit watches)

    page = root.get(reverse("admin:games_round_change", args=[round_.pk])).content.decode()
    staff = re.search(r'(?s)<div class="module" id="staff-actions">(.*?)</div>', page)
    assert staff is not None
    assert staff.group(1).count('data-testid="staff-action"') == 3
    assert "e-mail address changed" in staff.group(1) and "password reset link sent" in page
    listed = root.get(reverse("admin:games_round_changelist") + "?flag=staff").content.decode()
    assert f'href="/admin/games/round/{round_.pk}/change/' in listed
    assert [r.pk for r in audit.rounds_filter(flag=audit.FLAG_STAFF)] == [round_.pk]
    assert audit.rounds_with_flags([round_])[0][1] == [audit.FLAG_STAFF]


def test_a_settled_round_gets_no_mark_and_unmarked_rounds_no_flag(
    monkeypatch: pytest.MonkeyPatch, root: Client
) -> None:
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    alice = users["alice"]
    url = reverse("admin:accounts_user_change", args=[alice.pk])
    assert root.post(url, change_form(alice, email="new@example.com")).status_code == 302
    assert not RoundStaffAction.objects.exists()
    assert list(audit.rounds_filter(flag=audit.FLAG_STAFF)) == []
    assert audit.FLAG_STAFF not in audit.rounds_with_flags([round_])[0][1]


def test_a_staff_member_changing_their_own_account_marks_nothing(
    in_play: tuple[Round, dict[str, User]],
) -> None:
    _round, users = in_play
    alice = users["alice"]
    User.objects.filter(pk=alice.pk).update(is_staff=True, is_superuser=True)
    client = Client()
    client.force_login(User.objects.get(pk=alice.pk))
    url = reverse("admin:accounts_user_change", args=[alice.pk])
    form = change_form(User.objects.get(pk=alice.pk), email="me@example.com")
    form.update(is_staff="on", is_superuser="on")
    assert client.post(url, form).status_code == 302
    assert not RoundStaffAction.objects.exists()


def test_the_mark_is_written_for_every_unsettled_round_of_the_player(
    in_play: tuple[Round, dict[str, User]],
) -> None:
    round_, users = in_play
    staff = User.objects.create_user(username="helper", is_staff=True)
    marks = rounds_mark_staff_action(user=users["dave"], staff=staff, actions=["password"])
    assert [(m.round_id, m.actions) for m in marks] == [(round_.pk, ["password"])]
    assert RoundStaffAction.objects.get().actions_display() == "password changed"

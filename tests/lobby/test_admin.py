"""The rooms admin: a rules administrator views rooms and rounds, and moves rooms with no
round in play to another rule configuration (refused with a clear message otherwise)."""

from __future__ import annotations

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import Group
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.groups import RULES_ADMIN, SUPPORT
from accounts.models import User
from games.models import Round, RuleConfiguration, Table
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.setup.selectors import rule_configuration_default
from lobby.models import Room, RoomStatus

pytestmark = pytest.mark.django_db

CHANGELIST = "admin:lobby_room_changelist"


def staff(group: str, name: str) -> Client:
    user = User.objects.create_user(username=name, password="not-used-1", is_staff=True)
    user.groups.add(Group.objects.get(name=group))
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner() -> User:
    return User.objects.create_user(username="owner", password="not-used-1")


def room(rules: RuleConfiguration, owner: User, *, seats: int = 4, name: str = "Four") -> Room:
    return Room.objects.create(
        name=name, rules=rules, base_score=100, seats=seats, owner=owner, entry_minimum=1
    )


def move(client: Client, rooms: list[Room], rules: RuleConfiguration, reason: str = "Club"):
    return client.post(
        reverse(CHANGELIST),
        {
            "action": "move_rules",
            "_selected_action": [r.pk for r in rooms],
            "apply": "1",
            "rules": rules.pk,
            "reason": reason,
        },
        follow=True,
    )


def page_messages(response) -> str:
    return " ".join(str(m) for m in response.context["messages"])


def test_a_rules_admin_views_rooms_and_rounds_and_cannot_change_rounds(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    a_room = room(rule_configuration_default(), owner)
    assert client.get(reverse(CHANGELIST)).status_code == 200
    assert client.get(reverse("admin:lobby_room_change", args=[a_room.pk])).status_code == 200
    assert client.get(reverse("admin:games_round_changelist")).status_code == 200
    user = User.objects.get(username="rules")
    assert user.has_perm("games.view_round") and not user.has_perm("games.change_round")
    assert not user.has_perm("lobby.change_room")


def test_moving_a_room_records_who_when_why(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    a_room = room(default, owner)

    response = move(client, [a_room], other, reason="Deck change next week")

    assert "now plays “Other 其他”" in page_messages(response)
    a_room.refresh_from_db()
    assert a_room.rules == other
    entry = LogEntry.objects.get(object_id=str(a_room.pk), action_flag=CHANGE)
    assert entry.user.username == "rules"
    assert "Deck change next week" in entry.change_message
    assert default.name in entry.change_message and "Other 其他" in entry.change_message
    history = client.get(reverse("admin:lobby_room_history", args=[a_room.pk]))
    assert "Deck change next week" in history.content.decode()


def test_a_room_with_a_round_in_play_is_not_moved(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    a_room = room(default, owner)
    table = Table.objects.create(room=a_room, state={}, phase="waiting")
    Round.objects.create(
        table=table, number=1, config={}, commitment="0" * 64, started_at=timezone.now()
    )

    response = move(client, [a_room], other)

    assert "A round is in play" in page_messages(response)
    a_room.refresh_from_db()
    assert a_room.rules == default
    assert not LogEntry.objects.filter(object_id=str(a_room.pk)).exists()


def test_a_table_mid_round_is_not_moved(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    a_room = room(default, owner)
    Table.objects.create(room=a_room, state={}, phase="arranging")

    response = move(client, [a_room], other)

    assert "A round is in play" in page_messages(response)
    assert Room.objects.get(pk=a_room.pk).rules == default


def test_a_room_the_new_deck_does_not_seat_is_not_moved(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    six = RuleConfiguration.from_engine(
        RuleConfig(extra_suits=2, home_run_min_players=6), name="Six 六人"
    )
    a_room = room(six, owner, seats=6, name="Six seats")
    classic = rule_configuration_default()

    response = move(client, [a_room], classic)

    assert "seat at most 4 players, not 6" in page_messages(response)
    assert Room.objects.get(pk=a_room.pk).rules == six


def test_the_move_needs_a_reason_and_a_configuration(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    a_room = room(rule_configuration_default(), owner)
    response = move(client, [a_room], rule_configuration_default(), reason="")
    assert response.status_code == 200
    assert "This field is required" in response.content.decode()
    assert not LogEntry.objects.filter(object_id=str(a_room.pk)).exists()


def test_a_closed_room_is_not_moved(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    a_room = room(default, owner)
    Room.objects.filter(pk=a_room.pk).update(status=RoomStatus.CLOSED, closed_at=timezone.now())
    response = move(client, [a_room], other)
    assert "This room is closed" in page_messages(response)
    assert Room.objects.get(pk=a_room.pk).rules == default


def test_support_cannot_move_rooms(owner: User) -> None:
    client = staff(SUPPORT, "support")
    default = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    a_room = room(default, owner)
    move(client, [a_room], other)
    assert Room.objects.get(pk=a_room.pk).rules == default


def test_moves_are_rate_limited(owner: User, settings) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "admin.room_move": "1/minute"}
    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other 其他")
    a_room = room(default, owner)
    move(client, [a_room], other)
    response = move(client, [a_room], default)
    assert "Too many moves" in page_messages(response)
    assert Room.objects.get(pk=a_room.pk).rules == other


def test_the_configuration_page_lists_its_open_rooms(owner: User) -> None:
    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    room(default, owner, name="Evening table")
    page = client.get(reverse("admin:games_ruleconfiguration_change", args=[default.pk]))
    html = page.content.decode()
    assert "Evening table" in html
    assert "An open table keeps the rules it was created with" in html


def test_an_open_table_s_phase_is_in_words_in_both_languages(owner: User) -> None:
    from games.live.store import table_for_room

    client = staff(RULES_ADMIN, "rules")
    default = rule_configuration_default()
    table_for_room(room=room(default, owner, name="Evening table"))
    url = reverse("admin:games_ruleconfiguration_change", args=[default.pk])
    assert "open (waiting for players)" in client.get(url).content.decode()
    chinese = client.get(url, headers={"accept-language": "zh-hans"}).content.decode()
    assert "已开（等待玩家）" in chinese and "（waiting）" not in chinese

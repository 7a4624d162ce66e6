# ruff: noqa: F811  (the fixtures imported from test_table_services are used as arguments)
"""The settlement audit (games.history.audit and the round admin), the hand history and the replay.

A real round is played through the table services (as in test_table_services), then verified,
tampered with directly in SQL, looked at by `support`, `rules_admin` and the players.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import timedelta

import pytest
from django.db import connection
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.ledger import account_system_get_or_create, ledger_post
from accounts.models import Account, AccountKind, TransactionKind, User
from games.history import audit
from games.models import Round, RoundPlayer, RuleConfiguration, TableEvent
from games.rules.config import DEFAULT_CONFIG
from games.table.events import ALL, Event
from games.table.perspective import events_for
from lobby.models import Room
from tests.games.live.test_table_services import (  # noqa: F401  (fixtures)
    World,
    players,
    room,
    settle,
    start_round,
    submit_best,
    to_arranging,
    world,
)

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def played(world: World, room: Room, players: tuple[User, User]) -> Round:
    """One settled round between alice and bob."""
    alice, bob = players
    start_round(room, players)
    to_arranging(world, room, players)
    submit_best(room, alice)
    submit_best(room, bob)
    settle(world, room)
    round_ = Round.objects.get(table__room=room)
    assert round_.settled_at is not None
    return round_


def _sql(statement: str, params: list[object]) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


# -- verification --------------------------------------------------------------------------------


def test_a_played_round_verifies(played: Round, players: tuple[User, User]) -> None:
    report = audit.round_verify(round_=played)
    assert report.ok, report.mismatches
    assert report.commitment_ok is True
    assert played.balances == {str(u.pk): 100_000 for u in players}
    assert {c.user_id: c.ledger_net for c in report.players} == {
        rp.user_id: rp.delta for rp in played.players.all()
    }


def test_verify_catches_a_player_row_tampered_in_sql(played: Round) -> None:
    row = played.players.order_by("position").first()
    assert row is not None
    _sql("UPDATE games_roundplayer SET delta = delta + 1 WHERE id = %s", [row.pk])
    report = audit.round_verify(round_=played)
    assert not report.ok
    assert any(f"stored delta {row.delta + 1}" in line for line in report.mismatches)


def test_verify_catches_a_result_tampered_in_sql(played: Round) -> None:
    result = played.result
    assert result is not None
    result["players"][0]["delta"] += 7
    import json

    _sql("UPDATE games_round SET result = %s::jsonb WHERE id = %s", [json.dumps(result), played.pk])
    played.refresh_from_db()
    report = audit.round_verify(round_=played)
    assert any("result delta" in line for line in report.mismatches)


def test_verify_catches_a_tampered_deck_and_an_extra_ledger_posting(
    played: Round, players: tuple[User, User]
) -> None:
    alice, _bob = players
    wallet = Account.objects.get(user=alice, kind=AccountKind.WALLET)
    mint = account_system_get_or_create(kind=AccountKind.MINT)
    ledger_post(
        kind=TransactionKind.ADMIN_ADJUSTMENT,
        entries={wallet: 5, mint: -5},
        idempotency_key="tamper",
        reference=f"round:{played.pk}",
        reason="test",
    )
    salt = played.salt[:-1] + ("0" if played.salt[-1] != "0" else "1")
    _sql("UPDATE games_round SET salt = %s WHERE id = %s", [salt, played.pk])
    played.refresh_from_db()
    report = audit.round_verify(round_=played)
    assert report.commitment_ok is False
    assert any("do not match the commitment" in line for line in report.mismatches)
    assert any(f"{alice.username}" in line and "ledger moved" in line for line in report.mismatches)


def test_bulk_verify_over_a_date_range_reports_the_mismatch(played: Round) -> None:
    today = timezone.now().date()
    reports = audit.rounds_verify(date_from=today - timedelta(days=1), date_to=today)
    assert [r.round_id for r in reports] == [played.pk] and reports[0].ok
    _sql("UPDATE games_roundplayer SET water = water + 3 WHERE round_id = %s", [played.pk])
    reports = audit.rounds_verify(date_from=today - timedelta(days=1), date_to=today)
    assert not reports[0].ok
    assert audit.rounds_verify(date_from=today + timedelta(days=1), date_to=today) == []


def test_round_filters(played: Round, players: tuple[User, User], room: Room) -> None:
    alice, _bob = players
    biggest = max(abs(p.delta) for p in played.players.all())
    assert list(audit.rounds_filter(player=alice.username)) == [played]
    assert list(audit.rounds_filter(player="nobody")) == []
    assert list(audit.rounds_filter(room_id=room.pk)) == [played]
    assert list(audit.rounds_filter(amount_min=biggest)) == [played]
    assert list(audit.rounds_filter(amount_min=biggest + 1)) == []
    assert list(audit.rounds_filter(amount_max=biggest - 1)) == []
    assert list(audit.rounds_filter(flag=audit.FLAG_ESCAPE)) == []
    assert list(audit.rounds_filter(flag=audit.FLAG_CUT)) == []
    RoundPlayer.objects.filter(round=played, position=0).update(auto="timeout")
    assert list(audit.rounds_filter(flag=audit.FLAG_AUTO)) == [played]


# -- the admin, as support and as rules_admin ----------------------------------------------------


def test_support_audits_rounds_in_the_admin(played: Round, support: User) -> None:
    client = logged_in(support)
    changelist = reverse("admin:games_round_changelist")
    assert client.get(changelist).status_code == 200
    for query in ("?flag=escape", "?amount=0-99", "?player=alice", "?table__room__id__exact=1"):
        assert client.get(changelist + query).status_code == 200
    dated = {
        "settled_at__gte": "2000-01-01T00:00:00+00:00",
        "settled_at__lt": "2999-01-01T00:00:00+00:00",
    }
    response = client.get(changelist, dated)
    assert response.status_code == 200
    assert played in list(response.context["cl"].queryset)
    html = client.get(changelist + "?player=alice").content.decode()
    assert f"/admin/games/round/{played.pk}/change/" in html

    detail = client.get(reverse("admin:games_round_change", args=[played.pk])).content.decode()
    for row in played.players.all():
        assert row.cards in detail
    assert played.commitment in detail and "MATCH" in detail and "MISMATCH" not in detail
    assert f"round:{played.pk}:settlement" in detail

    response = client.post(changelist, {"action": "verify_selected", "_selected_action": played.pk})
    assert response.status_code == 200 and "MATCH" in response.content.decode()

    response = client.post(
        changelist, {"action": "export_rounds_csv", "_selected_action": played.pk}
    )
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert rows[0][0] == "round_id" and len(rows) == 3
    assert {r[6] for r in rows[1:]} == {"alice", "bob"}

    response = client.post(
        changelist, {"action": "export_ledger_csv", "_selected_action": played.pk}
    )
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode("utf-8-sig"))))
    assert rows[0][0] == "entry_id" and len(rows) == 3

    today = timezone.now().date()
    bulk = reverse("admin:games_round_bulk_verify")
    assert client.get(bulk).status_code == 200
    html = client.get(bulk, {"date_from": str(today - timedelta(days=1)), "date_to": str(today)})
    assert "1 round verified, 0 with mismatches" in html.content.decode()


def test_support_can_change_nothing(played: Round, support: User) -> None:
    client = logged_in(support)
    before = list(RoundPlayer.objects.order_by("pk").values())
    change = reverse("admin:games_round_change", args=[played.pk])
    assert client.post(change, {"number": 99}).status_code == 403
    assert client.get(reverse("admin:games_round_add")).status_code == 403
    assert client.post(reverse("admin:games_round_add"), {"number": 1}).status_code == 403
    delete = reverse("admin:games_round_delete", args=[played.pk])
    assert client.post(delete, {"post": "yes"}).status_code == 403
    changelist = reverse("admin:games_round_changelist")
    response = client.post(
        changelist, {"action": "delete_selected", "_selected_action": played.pk, "post": "yes"}
    )
    assert Round.objects.filter(pk=played.pk).exists()
    assert response.status_code in (200, 302)
    config = RuleConfiguration.objects.first()
    assert config is not None
    url = reverse("admin:games_ruleconfiguration_change", args=[config.pk])
    assert client.post(url, {"name": "hacked"}).status_code == 403
    assert list(RoundPlayer.objects.order_by("pk").values()) == before
    played.refresh_from_db()
    assert played.number == 1 and audit.round_verify(round_=played).ok


def test_rules_admin_and_superuser_on_the_round_audit(played: Round, rules_admin: User) -> None:
    client = logged_in(rules_admin)
    # Rules administrators see where the rules are used: the rounds, to look at only.
    assert client.get(reverse("admin:games_round_changelist")).status_code == 200
    change = reverse("admin:games_round_change", args=[played.pk])
    assert client.get(change).status_code == 200
    assert client.post(change, {}).status_code == 403
    root = User.objects.create_superuser("root", password="not-used-1")
    client = logged_in(root)
    assert client.get(reverse("admin:games_round_changelist")).status_code == 200
    assert client.get(reverse("admin:games_round_change", args=[played.pk])).status_code == 200


def test_the_rule_history_compares_two_versions(rules_admin: User, support: User) -> None:
    from tests.games.setup.test_admin import form_data

    config = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Club")
    old_water = config.gun_water
    client = logged_in(rules_admin)
    url = reverse("admin:games_ruleconfiguration_change", args=[config.pk])
    response = client.post(
        url, form_data(config, gun_water=old_water + 2, specials={"six_pairs": {"water": 5}})
    )
    assert response.status_code == 302, response.content.decode()[:2000]
    new, old = config.history.order_by("-history_date", "-history_id")[:2]
    history = client.get(reverse("admin:games_ruleconfiguration_history", args=[config.pk]))
    compare = reverse("admin:games_ruleconfiguration_history_compare", args=[config.pk])
    assert compare in history.content.decode()
    for viewer in (client, logged_in(support)):
        response = viewer.get(compare, {"old": old.history_id, "new": new.history_id})
        html = response.content.decode()
        assert response.status_code == 200
        assert 'data-field="gun_water"' in html
        assert f"<td>{old_water}</td><td>{old_water + 2}</td>" in html
        assert rules_admin.username in html
        assert "six_pairs" in html or "六对半" in html
    assert client.get(compare, {"old": "x", "new": new.history_id}).status_code == 404


# -- players: hand history and replay ------------------------------------------------------------


def _stored(round_: Round) -> list[Event]:
    return [
        Event(e.version, e.type, e.payload, ALL if e.recipient is None else e.recipient)
        for e in TableEvent.objects.filter(table=round_.table).order_by("version")
    ]


def test_the_hand_history_shows_only_the_players_rounds(
    played: Round, players: tuple[User, User]
) -> None:
    alice, _bob = players
    html = logged_in(alice).get(reverse("games:history")).content.decode()
    row = played.players.get(user=alice)
    assert f'data-round="{played.pk}"' in html and f"{row.delta:+d}" in html
    carol = User.objects.create_user("carol", password="not-used-1")
    html = logged_in(carol).get(reverse("games:history")).content.decode()
    assert f'data-round="{played.pk}"' not in html
    assert Client().get(reverse("games:history")).status_code == 302


def test_the_replay_reproduces_the_seats_events_and_hides_other_hands(
    played: Round, players: tuple[User, User], support: User
) -> None:
    url = reverse("games:round_replay", args=[played.pk])
    stored = _stored(played)
    start = next(e.version for e in stored if e.type == "round_start")
    end = next(e.version for e in stored if e.type == "settled")
    for user in players:
        other = played.players.exclude(user=user).get()
        steps = audit.round_replay(round_=played, player=str(user.pk))
        expected = [e for e in events_for(stored, str(user.pk)) if start <= e.version <= end]
        assert steps == expected
        # Before the first reveal, nothing of the other seat's hand is in its events.
        reveal = next(e.version for e in steps if e.type.startswith("reveal"))
        first_card = other.cards.split()[0]
        early = [e for e in steps if e.version < reveal and e.type != "deal"]
        assert all(f'"{first_card}"' not in json.dumps(e.payload) for e in early)
        assert not any(e.type == "hand" and e.audience != str(user.pk) for e in steps)
        # The page draws the settled round (tests/games/history/test_replay.py): the seat it was
        # played from, every hand (the settlement revealed the deck).
        response = logged_in(user).get(url)
        assert response.status_code == 200
        position = played.players.get(user=user).position
        assert response.context["replay"]["viewer"] == position
        assert "replay.js" in response.content.decode()
    carol = User.objects.create_user("carol", password="not-used-1")
    assert logged_in(carol).get(url).status_code == 404
    response = logged_in(support).get(url)
    assert response.status_code == 200
    assert len(audit.round_replay(round_=played, player=None, everything=True)) == end - start + 1
    assert response.context["replay"]["viewer"] is None

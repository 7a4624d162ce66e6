# ruff: noqa: F811  (the fixtures imported from test_table_services are used as arguments)
"""Nobody sees a hand before the settlement, staff included.

A round is dealt and left in the arranging phase (alice has submitted her arrangement, bob has
saved a draft). As `support`, `rules_admin` and a superuser every round page, list filter,
search, export, verification, the object history and the replay is fetched, and no card of
either hand may appear in any response. Then the round is settled and the same pages show the
hands again: settled rounds stay fully auditable.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

import pytest
from django.contrib import admin
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from accounts.models import User
from games.history import audit
from games.history.selectors import (
    ROUND_PLAYER_SECRET_FIELDS,
    round_players_hidden_until_settled,
    rounds_hidden_until_settled,
)
from games.live import services as table_services
from games.models import Round, RoundPlayer, Table, TableEvent
from lobby.models import Room
from tests.games.history.test_audit import logged_in
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

CARD = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA][SHCD])(?![A-Za-z0-9])")
IN_PLAY_EN = "in play — cards hidden until settlement"
IN_PLAY_ZH = "对局进行中，结算前不显示手牌"


@dataclass
class Play:
    round: Round
    room: Room
    hands: dict[str, str]  # username -> the 13 cards as stored ("AS KD ...")
    players: tuple[User, User]

    @property
    def cards(self) -> set[str]:
        return {card for hand in self.hands.values() for card in hand.split()}


def hands_of(round_: Round) -> dict[str, str]:
    """Straight from the table, around every selector: what must stay hidden."""
    return dict(RoundPlayer.objects.filter(round=round_).values_list("user__username", "cards"))


def leaked(text: str, play: Play) -> set[str]:
    """The cards of the round's hands that ``text`` shows as card tokens."""
    return set(CARD.findall(text)) & play.cards


def body(response: Any) -> str:
    """The response's text (a streamed CSV is read once and kept)."""
    if not hasattr(response, "text_"):
        if getattr(response, "streaming", False):
            response.text_ = b"".join(response.streaming_content).decode("utf-8-sig")
        else:
            response.text_ = response.content.decode()
    return str(response.text_)


@pytest.fixture
def in_play(world: World, room: Room, players: tuple[User, User]) -> Play:
    """A round being arranged: alice's arrangement is in, bob has saved a draft."""
    alice, bob = players
    start_round(room, players)
    to_arranging(world, room, players)
    submit_best(room, alice)
    round_ = Round.objects.get(table__room=room)
    hands = hands_of(round_)
    draft = {"front": hands[bob.username].split()[:3]}
    table_services.table_save_draft(user=bob, room=room, draft=draft)
    assert round_.settled_at is None and len(hands[alice.username].split()) == 13
    return Play(round_, room, hands, players)


def settle_play(world: World, play: Play) -> None:
    _alice, bob = play.players
    submit_best(play.room, bob)
    settle(world, play.room)
    play.round.refresh_from_db()
    assert play.round.settled_at is not None


def superuser() -> User:
    return User.objects.create_superuser("root", password="not-used-1")


def _post_action(client: Client, action: str, round_: Round) -> Any:
    return client.post(
        reverse("admin:games_round_changelist"),
        {"action": action, "_selected_action": round_.pk},
    )


def admin_responses(client: Client, play: Play) -> dict[str, Any]:
    """Every round page of the admin for ``play``'s round, by a name for the messages."""
    round_ = play.round
    alice, _bob = play.players
    changelist = reverse("admin:games_round_changelist")
    now = timezone.now()
    today = now.date()
    queries: dict[str, dict[str, Any]] = {
        "list": {},
        "status in play": {"status": "in_play"},
        "status settled": {"status": "settled"},
        "player": {"player": alice.username},
        "room": {"table__room__id__exact": play.room.pk},
        "no settlement date": {"settled_at__isnull": "True"},
        "settled lately": {
            "settled_at__gte": (now - timedelta(days=7)).isoformat(),
            "settled_at__lt": (now + timedelta(days=1)).isoformat(),
        },
        "amount low": {"amount": "0-99"},
        "amount high": {"amount": "10000-"},
        "flag escape": {"flag": "escape"},
        "flag cut": {"flag": "cut"},
        "flag auto": {"flag": "auto"},
        "search player": {"q": alice.username},
        "search room": {"q": play.room.name},
        "search commitment": {"q": round_.commitment},
        "hierarchy": {"settled_at__year": today.year},
    }
    out = {name: client.get(changelist, query) for name, query in queries.items()}
    out["change"] = client.get(reverse("admin:games_round_change", args=[round_.pk]))
    out["object history"] = client.get(reverse("admin:games_round_history", args=[round_.pk]))
    out["verify"] = _post_action(client, "verify_selected", round_)
    out["export rounds"] = _post_action(client, "export_rounds_csv", round_)
    out["export ledger"] = _post_action(client, "export_ledger_csv", round_)
    bulk = reverse("admin:games_round_bulk_verify")
    out["verify by date"] = client.get(
        bulk, {"date_from": str(today - timedelta(days=1)), "date_to": str(today)}
    )
    out["replay"] = client.get(reverse("games:round_replay", args=[round_.pk]))
    return out


def assert_nothing_leaks(responses: dict[str, Any], play: Play) -> None:
    for name, response in responses.items():
        assert response.status_code < 500, name
        assert not leaked(body(response), play), f"{name} shows cards of a round in play"
        assert play.hands[play.players[0].username] not in body(response), name


# -- staff: support and a superuser see no hand of a round in play ------------------------------


@pytest.mark.parametrize("who", ["support", "superuser"])
def test_staff_see_no_hand_before_the_settlement_and_every_hand_after(
    who: str, in_play: Play, world: World, request: pytest.FixtureRequest
) -> None:
    staff = superuser() if who == "superuser" else request.getfixturevalue("support")
    client = logged_in(staff)
    responses = admin_responses(client, in_play)
    assert_nothing_leaks(responses, in_play)

    listed = {n for n, r in responses.items() if "cl" in (r.context or {})}
    for name in ("list", "status in play", "player", "room", "search commitment"):
        assert in_play.round in list(responses[name].context["cl"].result_list), name
        assert IN_PLAY_EN in body(responses[name]), name
    for name in ("status settled", "amount low", "flag escape", "flag cut", "flag auto"):
        assert in_play.round not in list(responses[name].context["cl"].result_list), name
    assert {"list", "flag auto"} <= listed

    change = body(responses["change"])
    assert responses["change"].status_code == 200
    assert IN_PLAY_EN in change and in_play.round.commitment in change
    assert all(u.username in change for u in in_play.players)
    assert "MATCH" not in change and "Replay this round" not in change
    verify = body(responses["verify"])
    assert "NOT VERIFIED" in verify and "0 rounds verified" in verify
    assert "1 round is still in play and was not verified" in verify
    rows = list(csv.reader(io.StringIO(body(responses["export rounds"]))))
    # status, cards and arrangement: columns 17-19 (later columns are appended after them)
    assert rows[0][17:20] == ["status", "cards", "arrangement"] and len(rows) == 3
    assert {r[17] for r in rows[1:]} == {"in_play"} and {r[18] for r in rows[1:]} == {""}
    assert {r[rows[0].index("balance_before")] for r in rows[1:]} == {""}
    assert {r[8] for r in rows[1:]} == {""}  # special
    assert responses["replay"].status_code == 403
    assert "its replay opens once it is settled" in body(responses["replay"])

    settle_play(world, in_play)
    responses = admin_responses(client, in_play)
    change = body(responses["change"])
    for hand in in_play.hands.values():
        assert hand in change
    assert "MATCH" in change and "MISMATCH" not in change and IN_PLAY_EN not in change
    rows = list(csv.reader(io.StringIO(body(responses["export rounds"]))))
    assert {r[6]: r[18] for r in rows[1:]} == in_play.hands
    assert all(r[19].count("|") == 2 for r in rows[1:])
    assert responses["replay"].status_code == 200
    replay = body(responses["replay"])
    assert all(card in leaked(replay, in_play) for card in in_play.cards)
    assert "1 round verified, 0 with mismatches" in body(responses["verify by date"])
    assert "1 round verified, 0 with mismatches" in body(responses["verify"])


def test_rules_admin_views_rounds_and_sees_no_hand_in_play(
    in_play: Play, rules_admin: User
) -> None:
    client = logged_in(rules_admin)
    responses = admin_responses(client, in_play)
    assert_nothing_leaks(responses, in_play)
    assert responses["list"].status_code == 200
    assert responses["change"].status_code == 200
    assert responses["replay"].status_code == 403  # opens once the round is settled


def test_url_lookups_on_hands_the_deck_or_the_table_state_are_refused(
    in_play: Play, support: User
) -> None:
    client = logged_in(support)
    changelist = reverse("admin:games_round_changelist")
    card = in_play.hands[in_play.players[0].username].split()[0]
    for query in (
        f"?players__cards__contains={card}",
        "?players__arrangement__isnull=False",
        "?players__special=six_pairs",
        f"?deck__contains={card}",
        "?salt__startswith=a",
        "?result__isnull=False",
        "?table__state__has_key=seats",
        "?table__room__table__state__has_key=seats",
        "?table__events__payload__has_key=hand",
        f"?shown_if_settled_cards__contains={card}",
    ):
        response = client.get(changelist + query)
        assert response.status_code == 400, query
        assert not leaked(body(response), in_play), query


def test_the_zh_hans_pages_say_the_round_is_in_play(in_play: Play, support: User) -> None:
    client = logged_in(support)
    headers = {"HTTP_ACCEPT_LANGUAGE": "zh-hans"}
    for url in (
        reverse("admin:games_round_changelist"),
        reverse("admin:games_round_change", args=[in_play.round.pk]),
    ):
        html = client.get(url, **headers).content.decode()
        assert IN_PLAY_ZH in html and not leaked(html, in_play)


# -- players: history and replay ----------------------------------------------------------------


def test_a_player_is_refused_the_replay_of_a_round_in_play(in_play: Play, world: World) -> None:
    alice, bob = in_play.players
    url = reverse("games:round_replay", args=[in_play.round.pk])
    for user in (alice, bob):
        client = logged_in(user)
        response = client.get(url)
        html = body(response)
        assert response.status_code == 403
        assert "Your hand is at the table" in html and IN_PLAY_EN in html
        assert not leaked(html, in_play)
        history = body(client.get(reverse("games:history")))
        assert f'data-round="{in_play.round.pk}"' in history and IN_PLAY_EN in history
        assert not leaked(history, in_play)
        assert url not in history
    carol = User.objects.create_user("carol", password="not-used-1")
    assert logged_in(carol).get(url).status_code == 404

    settle_play(world, in_play)
    response = logged_in(alice).get(url)
    assert response.status_code == 200
    assert in_play.hands[alice.username].split()[0] in body(response)


# -- the selectors: the database never sends a hand of a round in play ------------------------


def test_the_selectors_blank_the_secrets_of_a_round_in_play_in_the_sql(
    in_play: Play, world: World
) -> None:
    alice, _bob = in_play.players
    # Even written early (as a bug might), the secrets of a round in play come out blank.
    RoundPlayer.objects.filter(round=in_play.round).update(
        special="six_pairs", auto="timeout", arrangement={"front": ["AS"]}
    )
    with CaptureQueriesContext(connection) as queries:
        round_ = rounds_hidden_until_settled().get(pk=in_play.round.pk)
        rows = list(round_.players.all())
        for row in rows:
            assert [getattr(row, f) for f in ROUND_PLAYER_SECRET_FIELDS] == ["", "", None, ""]
        assert (round_.deck, round_.salt, round_.result, round_.balances) == ("", "", None, None)
    assert len(queries) == 2  # the rounds and their players: no lazy load of a secret column
    text = repr([vars(r) for r in rows]) + repr(vars(round_))
    assert not leaked(text, in_play)
    mine = round_players_hidden_until_settled(
        round_players=RoundPlayer.objects.filter(user=alice)
    ).get()
    assert mine.cards == "" and mine.arrangement is None
    assert list(audit.rounds_filter(flag=audit.FLAG_AUTO)) == []
    assert list(audit.rounds_filter(amount_min=0)) == []
    assert list(audit.rounds_filter(player=alice.username)) == [in_play.round]
    assert list(audit.player_rounds(user=alice))[0].cards == ""
    assert audit.round_events(round_=in_play.round).count() == 0
    with pytest.raises(audit.RoundInPlay):
        audit.round_replay(round_=in_play.round, player=str(alice.pk), everything=True)

    RoundPlayer.objects.filter(round=in_play.round).update(special="", auto="", arrangement=None)
    settle_play(world, in_play)
    round_ = rounds_hidden_until_settled().get(pk=in_play.round.pk)
    assert {p.user.username: p.cards for p in round_.players.all()} == in_play.hands
    assert round_.deck and round_.result is not None
    assert list(audit.player_rounds(user=alice))[0].cards == in_play.hands[alice.username]


def test_verifying_a_round_in_play_computes_nothing(in_play: Play) -> None:
    with CaptureQueriesContext(connection) as queries:
        report = audit.round_verify(round_=in_play.round)
    assert len(queries) == 0
    assert report.in_play and not report.ok and report.players == []
    assert report.commitment_ok is None and report.mismatches == []


# -- guards: no other way in for staff ----------------------------------------------------------


def test_no_admin_shows_the_table_state_events_or_round_players() -> None:
    """The live table's state and its event log hold every hand: no admin page, inline or
    API serializer may show them; round players are shown through the round admin only."""
    secret = {Table, TableEvent, RoundPlayer}
    for model, model_admin in admin.site._registry.items():
        assert model not in secret, f"{model.__name__} has an admin: it would show live hands"
        for inline in getattr(model_admin, "inlines", ()):
            assert inline.model not in secret, f"{model_admin} has an inline of {inline.model}"
    round_admin = admin.site._registry[Round]
    assert not getattr(round_admin, "inlines", ())

    from rest_framework import serializers

    import shisanshui.urls  # noqa: F401  (imports every API and its serializers)

    def subclasses(cls: type) -> list[type]:
        return [c for sub in cls.__subclasses__() for c in (sub, *subclasses(sub))]

    for serializer in subclasses(serializers.ModelSerializer):
        model = getattr(getattr(serializer, "Meta", None), "model", None)
        assert model not in {*secret, Round}, f"{serializer} serializes {model}"

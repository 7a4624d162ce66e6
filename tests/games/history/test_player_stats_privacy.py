"""Who the standings and statistics show (games.history.standings.listed_players): players only.

A player probing names must not learn which exist: a name nobody has and a name that hides its
statistics (staff, a superuser, a bot, a deactivated account) get the same status and body after
the same queries, from the API and the page alike.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext

from accounts.models import User
from games.history.standings import compute_standings, listed_player
from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def answer(client: Client, url: str) -> tuple[int, bytes, int]:
    """Status, body and the number of SQL queries of one GET."""
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url)
    return response.status_code, response.content, len(queries)


@pytest.fixture
def played(monkeypatch: pytest.MonkeyPatch, settings: Any) -> dict[str, User]:
    """A settled round of alice, bob, carol and dave; then bob joins the staff, carol becomes a
    superuser and dave's account is deactivated; the standings are computed."""
    settings.STANDINGS_MIN_ROUNDS = {"week": 1, "all": 1}
    _round, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    User.objects.filter(pk=users["bob"].pk).update(is_staff=True)
    User.objects.filter(pk=users["carol"].pk).update(is_superuser=True)
    User.objects.filter(pk=users["dave"].pk).update(is_active=False)
    compute_standings()
    return users


def test_the_standings_list_players_only(played: dict[str, User]) -> None:
    client = logged_in(make_player("eve"))
    for period in ("week", "all"):
        rows = client.get(f"/api/games/standings/?period={period}&by=coins").json()["rows"]
        assert [row["player"] for row in rows] == ["alice"]
    html = client.get("/games/standings/?period=all").content.decode()
    assert html.count('data-testid="standing-row"') == 1
    assert "alice" in html and "bob" not in html and "carol" not in html


def test_a_hidden_name_is_answered_as_a_missing_one(played: dict[str, User]) -> None:
    from games.live import bots

    bot = bots.bot_create()
    client = logged_in(make_player("eve"))
    hidden = ["bob", "carol", "dave", bot.username]
    for prefix, suffix in (("/api/games/players/", "/stats/"), ("/games/players/", "/")):
        client.get(f"{prefix}alice{suffix}")  # the session and the rate counters warmed up
        missing = answer(client, f"{prefix}nobody-here{suffix}")
        assert missing[0] == 404
        for name in hidden:
            assert answer(client, f"{prefix}{name}{suffix}") == missing, name
        status, body, _queries = answer(client, f"{prefix}alice{suffix}")
        assert status == 200 and b"alice" in body
    api = client.get("/api/games/players/bob/stats/").json()
    assert api == {"error": {"code": "not_found", "message": "No such player."}}


def test_the_hidden_names_are_not_answerable_by_any_spelling(played: dict[str, User]) -> None:
    assert listed_player("alice") is not None
    for name in ("bob", "carol", "dave", "BOB", "bob ", "", "%", "b_b"):
        assert listed_player(name) is None

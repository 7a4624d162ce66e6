# ruff: noqa: F811  (the `world` fixture imported from test_bots is used as an argument)
"""A series (房卡): a private room opened for N rounds, its table stops after the
last one, and its final scoreboard — per round and in total, guns, home runs, best hands —
is read at its share link (a page, an image and the API), by anyone who has the link.

Transactional (``on_commit`` fires); the bots' tasks are run by hand (``drive_bots``)."""

from __future__ import annotations

from typing import Any

import pytest
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

from accounts.selectors import ledger_audit
from games.history.series import series_scoreboard
from games.live import services as table_services
from games.models import Round, RuleConfiguration
from games.table.errors import TableError
from games.table.state import Phase
from lobby.errors import InvalidSeries
from lobby.models import Room, Seat
from lobby.services import room_create
from tests.games.live.test_bots import (
    World,
    drive_bots,
    timeout,
    world,  # noqa: F401  (the fixture: clock, recorded tasks)
)
from tests.games.live.test_duplicate import play
from tests.games.table_helpers import fast_rules, make_player, state_of, total_coins

pytestmark = pytest.mark.django_db(transaction=True)


def rules() -> RuleConfiguration:
    return RuleConfiguration.objects.filter(name="Fast (tests)").first() or fast_rules()


def series_room(owner: Any, rounds: int = 2) -> Room:
    return room_create(
        owner=owner,
        name="Friday series",
        base_score=10,
        seats=2,
        rules=rules(),
        private=True,
        bots=1,
        series_rounds=rounds,
    )


def play_round(world: World, room: Room, person: Any) -> None:
    table_services.table_ready(user=person, room=room)
    drive_bots(room)
    timeout(world, room)  # the deal is over
    drive_bots(room)
    play(room, person)
    drive_bots(room)
    state = state_of(room)
    if state.phase is Phase.COMPARING:
        timeout(world, room)


def test_a_series_stops_after_its_last_round_and_its_scoreboard_adds_up(world: World) -> None:
    alice = make_player("alice")
    coins = total_coins()
    room = series_room(alice)
    assert room.series_token and len(room.series_token) >= 16
    assert state_of(room).last_round == 2
    for _ in range(2):
        play_round(world, room, alice)
    state = state_of(room)
    assert state.round_no == 2 and state.phase is Phase.SETTLED and state.match_over
    assert [s.player for s in state.seats] == [str(alice.pk)]  # its bot left
    with pytest.raises(TableError) as refused:
        table_services.table_ready(user=alice, room=room)
    assert refused.value.code == "match_over"

    board = series_scoreboard(Room.objects.get(pk=room.pk))
    assert board["finished"] is True and board["rounds_played"] == 2
    rounds = list(Round.objects.filter(table__room=room).order_by("number"))
    for entry in board["players"]:
        rows = [r.players.get(user_id=entry["user_id"]) for r in rounds]
        assert entry["rounds"] == [{"water": r.water, "coins": r.delta} for r in rows]
        assert entry["water"] == sum(r.water for r in rows)
        assert entry["coins"] == sum(r.delta for r in rows)
        guns = sum(
            1
            for r in rounds
            for p in r.result["pairs"]
            if p["gun"] and p["shooter"] == str(entry["user_id"])
        )
        assert entry["guns"] == guns
        assert entry["best"]["water"] == max(r.water for r in rows)
    assert sum(e["coins"] for e in board["players"]) == 0
    assert [e["rank"] for e in board["players"]] == [1, 2]
    assert total_coins() == coins and ledger_audit().ok


def test_the_share_link_shows_the_scoreboard_to_anyone_and_nothing_else(world: World) -> None:
    alice = make_player("alice")
    room = series_room(alice)
    play_round(world, room, alice)
    visitor = Client()  # not signed in: the link is the key
    page = visitor.get(f"/games/series/{room.series_token}/")
    assert page.status_code == 200
    html = page.content.decode()
    assert "Scoreboard so far" in html and 'data-testid="series-row"' in html
    assert room.code not in html  # the room's code is not the link's business
    image = visitor.get(f"/games/series/{room.series_token}/scoreboard.svg")
    assert image.status_code == 200 and image["Content-Type"].startswith("image/svg+xml")
    assert image.content.decode().lstrip().startswith("<svg")
    api = visitor.get(f"/api/games/series/{room.series_token}/")
    assert api.status_code == 200 and api.json()["rounds_played"] == 1
    assert api.json()["finished"] is False
    for bad in ("nope", "x" * 30, room.series_token[:-1]):
        assert visitor.get(f"/games/series/{bad}/").status_code == 404
        assert visitor.get(f"/api/games/series/{bad}/").status_code == 404
    # The seated player's table page links to it.
    client = Client()
    client.force_login(alice)
    table = client.get(f"/games/table/{room.pk}/").content.decode()
    assert f"/games/series/{room.series_token}/" in table and 'data-testid="series-chip"' in table


def test_a_players_name_cannot_inject_markup_into_the_image(world: World) -> None:
    alice = make_player("alice")
    room = series_room(alice)
    play_round(world, room, alice)
    bot = Seat.objects.filter(room=room, user__is_bot=True).first()
    if bot is None:  # the bot left already? it stays until the last round
        pytest.skip("no bot")
    bot.user.first_name = bot.user.last_name = '<script>alert("x")</script>&'
    bot.user.save()
    svg = Client().get(f"/games/series/{room.series_token}/scoreboard.svg").content.decode()
    assert "<script>" not in svg and "&lt;script&gt;" in svg


@pytest.mark.parametrize(
    ("options", "ok"),
    [
        ({"private": True, "series_rounds": 1}, False),
        ({"private": True, "series_rounds": 33}, False),
        ({"private": True, "series_rounds": True}, False),
        ({"private": True, "series_rounds": "8"}, False),
        ({"private": False, "series_rounds": 8}, False),
        ({"private": True, "series_rounds": 8}, True),
        ({"private": True, "series_rounds": None}, True),
    ],
)
def test_only_a_private_room_of_2_to_32_rounds_is_a_series(
    world: World, options: dict[str, Any], ok: bool
) -> None:
    alice = make_player("alice")
    if ok:
        room = room_create(owner=alice, base_score=10, seats=2, rules=rules(), **options)
        assert room.series_rounds == options["series_rounds"]
        assert (room.series_token is None) == (options["series_rounds"] is None)
    else:
        with pytest.raises(InvalidSeries):
            room_create(owner=alice, base_score=10, seats=2, rules=rules(), **options)
        assert not Room.objects.exists()


def test_the_scoreboard_is_rate_limited(
    world: World, settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "games.series_page": "2/minute"}
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "series_scoreboard", "2/min")
    room = series_room(make_player("alice"))
    visitor = Client()
    pages = [visitor.get(f"/games/series/{room.series_token}/").status_code for _ in range(3)]
    assert pages == [200, 200, 429]
    apis = [visitor.get(f"/api/games/series/{room.series_token}/").status_code for _ in range(3)]
    assert apis == [200, 200, 429]


def test_the_lobby_form_opens_a_series(world: World) -> None:
    alice = make_player("alice")
    client = Client()
    client.force_login(alice)
    form = {"base_score": 10, "seats": 2, "rules": rules().pk, "private": "on", "series_rounds": 4}
    response = client.post("/lobby/create/", {**form, "chat_text": "on", "spectators": "on"})
    assert response.status_code == 302
    room = Room.objects.get()
    assert room.series_rounds == 4 and room.is_private

# ruff: noqa: F811  (the world fixture imported from test_bots is used as an argument)
"""Bots' nicknames (games.live.bots.BOT_NICKNAMES): a Chinese and English pair per bot, shown in the
reader's language wherever players are named, never two alike at one table (name or initial,
which the table draws as the seat's avatar), and never the ``bot-<hex>`` username."""

from __future__ import annotations

import json
import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation

from accounts.models import User
from games.history.matches import match_results
from games.live import bots
from lobby.models import Room, Seat
from lobby.selectors import room_get, room_row
from tests.games.live.test_bots import World, bot_room, bots_in, world  # noqa: F401  (fixture)
from tests.games.live.test_duplicate import open_match
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)


def initials(user: User) -> set[str]:
    return {user.first_name[:1], user.last_name[:1]}


def logged_in(user: User, language: str) -> Client:
    client = Client(headers={"accept-language": language})
    client.force_login(user)
    return client


def test_every_nickname_has_its_own_initials_in_both_languages() -> None:
    zh = [z[:1] for z, _en in bots.BOT_NICKNAMES]
    en = [e[:1] for _zh, e in bots.BOT_NICKNAMES]
    assert len(set(zh)) == len(zh) and len(set(en)) == len(en)
    assert len(bots.BOT_NICKNAMES) > 6  # more than the seats of any table
    assert all(z and e and not z.isascii() and e.isascii() for z, e in bots.BOT_NICKNAMES)


def test_bots_at_one_table_never_share_a_name_or_an_initial(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every new bot is created with the same nickname: seating them must tell them apart.
    real_choice = bots.random.choice

    def first(seq: list[tuple[str, str]]) -> tuple[str, str]:
        return seq[0] if seq is bots.BOT_NICKNAMES else real_choice(seq)

    monkeypatch.setattr(bots.random, "choice", first)
    room = bot_room(make_player("alice"))

    seated = bots_in(room)
    assert len(seated) == 3
    names = [(b.first_name, b.last_name) for b in seated]
    assert all(name in bots.BOT_NICKNAMES for name in names)
    assert len(set(names)) == 3
    for i, a in enumerate(seated):
        for b in seated[i + 1 :]:
            assert not initials(a) & initials(b), (a.first_name, b.first_name)


def test_a_bot_keeps_a_free_nickname_and_an_old_style_bot_gets_one(world: World) -> None:
    dragon = bots.bot_create()
    dragon.first_name, dragon.last_name = "金龙", "Dragon"
    dragon.save()
    old = bots.bot_create()
    old.first_name, old.last_name = "机器人 Bot 3", ""  # named before nicknames
    old.save()

    room = bot_room(make_player("alice"), seats=3)

    seated = {b.pk: b for b in bots_in(room)}
    assert set(seated) == {dragon.pk, old.pk}
    assert (seated[dragon.pk].first_name, seated[dragon.pk].last_name) == ("金龙", "Dragon")
    renamed = seated[old.pk]
    assert (renamed.first_name, renamed.last_name) in bots.BOT_NICKNAMES
    assert not initials(renamed) & {"金", "D"}


def test_display_name_is_the_nickname_in_the_active_language() -> None:
    bot = User(username="bot-ee37f740", is_bot=True, first_name="金龙", last_name="Dragon")
    person = User(username="alice", first_name="Alice", last_name="Liddell")
    half = User(username="bot-00000000", is_bot=True, first_name="机器人 Bot 3")
    with translation.override("zh-hans"):
        assert bot.display_name() == "金龙"
        assert person.display_name() == "alice"
    with translation.override("en"):
        assert bot.display_name() == "Dragon"
        assert half.display_name() == "机器人 Bot 3"  # no English name yet
    assert User(username="bot-1", is_bot=True).display_name() == "bot-1"


def _room_with_bots(world: World) -> tuple[User, Room, list[User]]:
    alice = make_player("alice")
    room = bot_room(alice)
    return alice, room, sorted(bots_in(room), key=lambda b: b.pk)


def test_the_rooms_row_names_bots_by_nickname(world: World) -> None:
    _alice, room, seated = _room_with_bots(world)
    fresh = room_get(room_id=room.pk)
    assert fresh is not None
    with translation.override("zh-hans"):
        players = {p["username"]: p for p in room_row(room=fresh)["players"]}
    assert players["alice"]["name"] == "alice" and players["alice"]["nickname"] is None
    for bot in seated:
        assert players[bot.username]["name"] == bot.first_name
        assert players[bot.username]["nickname"] == {"zh": bot.first_name, "en": bot.last_name}


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_table_page_and_the_lobby_show_nicknames(world: World, language: str) -> None:
    alice, room, seated = _room_with_bots(world)
    client = logged_in(alice, language)
    chinese = language == "zh-hans"

    page = client.get(reverse("games:table", args=[room.pk])).content.decode()
    config = json.loads(
        re.search(
            r'<script id="table-config" type="application/json">(.*?)</script>', page, re.S
        ).group(1)  # type: ignore[union-attr]
    )
    expected = {b.first_name if chinese else b.last_name for b in seated} | {"alice"}
    assert set(config["names"].values()) == expected
    assert not any(name.startswith("bot-") for name in config["names"].values())

    lobby = client.get(reverse("lobby:index")).content.decode()
    cell = re.search(r'data-field="players">(.*?)</span>', lobby, re.S)  # the names only
    assert cell is not None and "bot-" not in cell.group(1)
    for bot in seated:
        assert (bot.first_name if chinese else bot.last_name) in cell.group(1)

    api = client.get(reverse("api-lobby-room", args=[room.pk])).json()
    names = {p["username"]: p["name"] for p in api["players"]}
    for bot in seated:
        assert names[bot.username] == (bot.first_name if chinese else bot.last_name)


def test_no_two_bots_of_a_duplicate_match_share_a_name(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every new bot is created "Ace", and idle bots named alike wait to be reused: seating a
    # match of 4 tables of 4 (15 bots) must still tell every bot of the match apart.
    real_choice = bots.random.choice

    def first(seq: list[tuple[str, str]]) -> tuple[str, str]:
        return seq[0] if seq is bots.BOT_NICKNAMES else real_choice(seq)

    monkeypatch.setattr(bots.random, "choice", first)
    for _ in range(3):
        bots.bot_create()  # idle "Ace"s
    match = open_match(make_player("alice"), tables=4, seats=4)

    at = Seat.objects.filter(room__match=match).values("user")
    seated = list(User.objects.filter(is_bot=True, pk__in=at))
    assert len(seated) == 15
    names = [(b.first_name, b.last_name) for b in seated]
    assert len(set(names)) == 15, names
    assert all(name in bots.BOT_NICKNAMES for name in names)
    results = match_results(match)
    assert results["name"] == "Duplicate"


def test_a_new_bot_never_takes_a_name_that_looks_like_a_players(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A player signed up as the first name the bot would draw (and a look-alike of the second).
    User.objects.create_user(username="bot-0a1b2c3d")
    User.objects.create_user(username="BOT-0A1B2C3E")
    drawn = iter(["0a1b2c3d", "0a1b2c3e", "0a1b2c3f"])
    monkeypatch.setattr(bots.secrets, "token_hex", lambda _n: next(drawn))

    assert bots.bot_create().username == "bot-0a1b2c3f"

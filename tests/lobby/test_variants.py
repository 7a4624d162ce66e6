"""Rooms of the variant decks (RULES.md §12): seats up to what a configuration's deck
seats, the variant badge of each room, the variant filter, and quick-join / Play now by variant.

Through the services, the lobby page and its forms, and the HTTP API (the socket:
test_variants_socket.py).
"""

import re
from typing import Any

import pytest
from django.test import Client
from django.utils import translation
from rest_framework.test import APIClient

from accounts.models import User
from games.labels import data_names
from games.live import store as table_store
from games.models import RuleConfiguration
from games.rules.config import RuleConfig
from games.rules.presets import preset_config
from games.variants import VARIANT_HELP, VARIANTS
from lobby import errors
from lobby.matchmaking import QUICK_PLAY_SEATS, room_quick_join, room_quick_play
from lobby.models import SEAT_COUNTS, Room, RoomStatus, Seat
from lobby.selectors import room_list, variant_rules, variants_offered
from lobby.services import room_create, room_join, room_leave
from tests.lobby.conftest import MakePlayer, lobby_counts, wait_over

LOBBY = "/lobby/"
ROOMS = "/api/lobby/rooms/"
QUICK_JOIN = "/api/lobby/quick-join/"

# The configurations games' migrations 0012 and 0021 make (made again here after a flush).
PRESET_NAMES = {
    "fuzhou": "福州 Fuzhou",
    "regional": "地区 Regional",
    "shuangguai": "双怪冲三 Double monster",
    "general": "通用 General table",
    "original": "原版 Original",
    "duoyise": "多一色 Extra suit",
    "laizi": "癞子 Jokers",
    "duosanzhang": "多三张 Spare cards",
}
TWO_SUITS = "多两色 Two extra suits"
UNKNOWN = (
    "There is no such variant; choose one of classic, fuzhou, regional, shuangguai, general, "
    "original, duoyise, duoerse, laizi, duosanzhang."
)


def configuration(name: str, config: RuleConfig) -> RuleConfiguration:
    existing = RuleConfiguration.objects.filter(name=name).first()
    return existing or RuleConfiguration.from_engine(config, name=name)


@pytest.fixture
def decks(rules: RuleConfiguration) -> dict[str, RuleConfiguration]:
    """One configuration per variant, keyed by its slug (duoerse: made here, as a test of
    RuleConfiguration.from_engine(RuleConfig(extra_suits=2)))."""
    made = {slug: configuration(name, preset_config(slug)) for slug, name in PRESET_NAMES.items()}
    made["duoerse"] = configuration(TWO_SUITS, RuleConfig(extra_suits=2))
    made["classic"] = rules
    return made


def open_room(owner: User, **fields: Any) -> Room:
    return room_create(owner=owner, **{"name": "Table", "base_score": 100, "seats": 4, **fields})


def refused(response: Any, status: int, code: str | None) -> dict[str, Any]:
    """The error of a refused API request (its code checked unless None)."""
    assert response.status_code == status, response.content
    body = response.json()
    assert code is None or body["error"]["code"] == code
    return body["error"]


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def rows_of(body: str) -> list[str]:
    tbody = body.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr data-room="(\d+)"', tbody)


# Seats: at most what the configuration's deck seats.


MAX_SEATS = {
    "classic": 4,
    "fuzhou": 4,
    "regional": 4,
    "shuangguai": 4,
    "general": 4,
    "original": 4,
    "duoyise": 5,
    "duoerse": 6,
    "laizi": 4,
    "duosanzhang": 4,
}


def test_each_configurations_deck_seats_what_the_rules_say(
    decks: dict[str, RuleConfiguration],
) -> None:
    assert {slug: rules.engine_config().max_seats for slug, rules in decks.items()} == MAX_SEATS
    assert max(SEAT_COUNTS) == 6


@pytest.mark.parametrize("slug", list(MAX_SEATS))
def test_a_room_has_up_to_its_decks_seats_and_no_more(
    decks: dict[str, RuleConfiguration], make_player: MakePlayer, slug: str
) -> None:
    rules, most = decks[slug], MAX_SEATS[slug]

    room = open_room(make_player(), rules=rules, seats=most)

    assert room.seats == most
    assert table_store.table_for_room(room=room).state["capacity"] == most
    if most + 1 > max(SEAT_COUNTS):
        return
    before = lobby_counts()
    with pytest.raises(errors.TooManySeats) as refusal:
        open_room(make_player(), rules=rules, seats=most + 1)
    assert lobby_counts() == before
    with translation.override("en"):
        assert refusal.value.message == (
            f"The rules “{rules.name}” seat at most {most} players, not {most + 1}."
        )
    with translation.override("zh-hans"):
        assert refusal.value.message == (
            f"规则“{rules.name}”最多只能坐 {most} 人，不能开 {most + 1} 个座位。"
        )


def test_six_players_sit_at_a_table_of_two_extra_suits(
    decks: dict[str, RuleConfiguration], make_player: MakePlayer
) -> None:
    room = open_room(make_player(), rules=decks["duoerse"], seats=6)
    for _ in range(5):
        room_join(user=make_player(), room_id=room.pk)

    assert sorted(Seat.objects.filter(room=room).values_list("position", flat=True)) == list(
        range(6)
    )
    state = table_store.table_for_room(room=room).state
    assert sorted(s["position"] for s in state["seats"]) == list(range(6))
    with pytest.raises(errors.RoomFull):
        room_join(user=make_player(), room_id=room.pk)


def test_five_bots_fill_a_table_of_six(
    decks: dict[str, RuleConfiguration], make_player: MakePlayer
) -> None:
    room = open_room(make_player(), rules=decks["duoerse"], seats=6, bots=5)

    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 5


@pytest.mark.parametrize(
    ("seats", "error"),
    [
        (7, errors.InvalidSeatCount),
        (1, errors.InvalidSeatCount),
        (0, errors.InvalidSeatCount),
        (-5, errors.InvalidSeatCount),
        (10**9, errors.InvalidSeatCount),
        ("5", errors.InvalidSeatCount),
        (5.0, errors.InvalidSeatCount),
        (True, errors.InvalidSeatCount),
        (None, errors.InvalidSeatCount),
    ],
)
def test_bad_seat_counts_are_refused_whatever_the_rules(
    decks: dict[str, RuleConfiguration], alice: User, seats: Any, error: type[Exception]
) -> None:
    before = lobby_counts()

    with pytest.raises(error):
        open_room(alice, rules=decks["duoerse"], seats=seats)

    assert lobby_counts() == before


def test_the_form_refuses_five_seats_on_the_classic_rules_and_opens_them_on_an_extra_suit(
    client: Client, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    client.force_login(alice)
    classic, extra = decks["classic"], decks["duoyise"]

    response = client.post(
        "/lobby/create/",
        {"rules": classic.pk, "base_score": 100, "seats": 5},
        follow=True,
        HTTP_ACCEPT_LANGUAGE="en",
    )

    assert messages_of(response) == [f"The rules “{classic.name}” seat at most 4 players, not 5."]
    assert not Room.objects.exists()

    response = client.post(
        "/lobby/create/", {"rules": extra.pk, "base_score": 100, "seats": 5}, follow=True
    )

    room = Room.objects.get()
    assert (room.rules, room.seats) == (extra, 5)
    assert response.redirect_chain[-1][0] == f"/games/table/{room.pk}/"


@pytest.mark.parametrize("seats", ["7", "six", "", "5.5", "-1"])
def test_the_form_refuses_bad_seats(client: Client, alice: User, seats: str) -> None:
    client.force_login(alice)

    response = client.post("/lobby/create/", {"base_score": 100, "seats": seats}, follow=True)

    assert len(messages_of(response)) == 1
    assert not Room.objects.exists()


def test_the_api_holds_a_room_to_its_rules_seats(
    client: Client, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    api = APIClient()
    api.force_login(alice)

    error = refused(
        api.post(ROOMS, {"base_score": 100, "seats": 5}, format="json", HTTP_ACCEPT_LANGUAGE="en"),
        400,
        "too_many_seats",
    )
    assert "at most 4 players" in error["message"]
    refused(
        api.post(ROOMS, {"base_score": 100, "seats": 6, "rules": decks["duoyise"].pk}),
        400,
        "too_many_seats",
    )
    refused(
        api.post(ROOMS, {"base_score": 100, "seats": 7}, format="json"), 400, "invalid_seat_count"
    )
    refused(api.post(ROOMS, {"base_score": 100, "seats": [6]}, format="json"), 400, "invalid")
    assert not Room.objects.exists()

    # A number as a string is a number to the API (as every integer it reads).
    response = api.post(
        ROOMS, {"base_score": 100, "seats": "6", "rules": decks["duoerse"].pk}, format="json"
    )

    assert response.status_code == 201, response.content
    assert response.json()["seats"] == 6
    assert response.json()["variant"]["tags"] == ["duoerse"]


def test_the_create_form_shows_each_configuration_with_its_badge_and_seats(
    client: Client, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    client.force_login(alice)

    body = client.get(LOBBY, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    select = re.search(r'<select name="rules"[^>]*>(.*?)</select>', body, re.S)
    assert select is not None
    options = {
        int(value): (attrs, label.strip())
        for attrs, value, label in re.findall(
            r'<option([^>]*?value="(\d+)"[^>]*)>(.*?)</option>', select.group(1), re.S
        )
    }
    for slug, rules in decks.items():
        attrs, label = options[rules.pk]
        assert f'data-max-seats="{MAX_SEATS[slug]}"' in attrs
        assert f'data-variant="{slug}"' in attrs
        assert f'data-name="{rules.name}"' in attrs  # how scripts find a configuration
        badge, name = VARIANTS[slug][1], data_names(rules.name)["en"]
        if name == badge:  # a preset's configuration, named after its badge: not twice
            assert label == f"{name} · up to {MAX_SEATS[slug]} seats"
        else:
            assert label == f"{name} · {badge} · up to {MAX_SEATS[slug]} seats"
    seats = re.search(r'<select name="seats"[^>]*>(.*?)</select>', body, re.S)
    assert seats is not None
    assert re.findall(r'value="(\d)"', seats.group(1)) == ["2", "3", "4", "5", "6"]
    assert "lobby/create.js" in body


# The badge of each room: page, API (the socket's: test_variants_socket.py).


def test_the_room_list_shows_each_rooms_variant(
    client: Client, decks: dict[str, RuleConfiguration], make_player: MakePlayer
) -> None:
    jokers = open_room(make_player(), rules=decks["laizi"])
    classic = open_room(make_player())
    client.force_login(make_player())

    english = client.get(LOBBY, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = client.get(LOBBY, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    def badge(body: str, room: Room) -> str:
        row = re.search(rf'<tr data-room="{room.pk}".*?</tr>', body, re.S)
        assert row is not None
        found = re.search(r'<span class="([^"]*)" data-field="variant"[^>]*>([^<]*)</span>', row[0])
        assert found is not None
        return f"{found[1]}: {found[2]}"

    assert badge(english, jokers) == "variant-badge: Jokers"
    assert badge(chinese, jokers) == "variant-badge: 癞子"
    assert badge(english, classic) == "variant-badge classic: Classic"  # shown, subtly
    assert badge(chinese, classic) == "variant-badge classic: 经典"


def test_the_api_row_has_the_variant(
    decks: dict[str, RuleConfiguration], alice: User, make_player: MakePlayer
) -> None:
    both = configuration("多一色癞子 Both", RuleConfig(extra_suits=1, jokers=2))
    room = open_room(make_player(), rules=both, seats=5)
    api = APIClient()
    api.force_login(alice)

    english = api.get(f"{ROOMS}{room.pk}/", HTTP_ACCEPT_LANGUAGE="en").json()
    chinese = api.get(f"{ROOMS}{room.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans").json()

    assert english["variant"] == {
        "tags": ["duoyise", "laizi"],
        "label": "Extra suit · Jokers",
        "labels": {"zh": "多一色·癞子", "en": "Extra suit · Jokers"},
    }
    assert chinese["variant"]["label"] == "多一色·癞子"
    assert (
        api.get(ROOMS, HTTP_ACCEPT_LANGUAGE="en").json()["results"][0]["variant"]
        == (english["variant"])
    )
    schema = api.get("/api/schema/").content.decode()
    assert "RoomVariant" in schema


# The variant filter: page, API, selector (the socket's: test_variants_socket.py).


@pytest.fixture
def one_of_each(
    decks: dict[str, RuleConfiguration], make_player: MakePlayer
) -> dict[str, list[int]]:
    """A room of each variant, plus one of an extra suit with jokers; slug -> the ids of the
    rooms carrying that tag, newest first."""
    made: dict[str, list[int]] = {slug: [] for slug in VARIANTS}
    for slug in VARIANTS:
        made[slug].append(open_room(make_player(), rules=decks[slug]).pk)
    both = configuration("多一色癞子 Both", RuleConfig(extra_suits=1, jokers=2))
    room = open_room(make_player(), rules=both)
    made["duoyise"].append(room.pk)
    made["laizi"].append(room.pk)
    return {slug: sorted(ids, reverse=True) for slug, ids in made.items()}


@pytest.mark.parametrize("slug", list(VARIANTS))
def test_the_filter_keeps_the_rooms_of_a_variant(
    client: Client, alice: User, one_of_each: dict[str, list[int]], slug: str
) -> None:
    api = APIClient()
    api.force_login(alice)
    client.force_login(alice)
    expected = one_of_each[slug]

    assert sorted(room_list(variant=slug).values_list("pk", flat=True), reverse=True) == expected
    assert [int(i) for i in rows_of(client.get(f"{LOBBY}?variant={slug}").content.decode())] == (
        expected
    )
    listed = api.get(f"{ROOMS}?variant={slug}").json()["results"]
    assert sorted((r["id"] for r in listed), reverse=True) == expected
    assert all(slug in r["variant"]["tags"] for r in listed)


@pytest.mark.parametrize("bad", ["bogus", "LAIZI", "laizi ", "0", "classic,laizi", "x" * 200])
def test_an_unknown_variant_is_refused_not_an_empty_list(
    client: Client, alice: User, one_of_each: dict[str, list[int]], bad: str
) -> None:
    api = APIClient()
    api.force_login(alice)
    client.force_login(alice)

    error = refused(api.get(ROOMS, {"variant": bad}, HTTP_ACCEPT_LANGUAGE="en"), 400, None)
    page = client.get(LOBBY, {"variant": bad}, HTTP_ACCEPT_LANGUAGE="en")

    assert error["code"] in ("unknown_variant", "invalid")  # too long: the shape's refusal
    assert page.status_code == 400
    assert UNKNOWN in page.content.decode()
    assert len(rows_of(page.content.decode())) == len(VARIANTS) + 1  # unfiltered by variant
    with pytest.raises(errors.UnknownVariant):
        room_list(variant=bad)


def test_the_api_names_an_unknown_variant_clearly(alice: User) -> None:
    api = APIClient()
    api.force_login(alice)

    error = refused(api.get(ROOMS, {"variant": "bogus"}, HTTP_ACCEPT_LANGUAGE="zh-hans"), 400, None)

    assert error == {
        "code": "unknown_variant",
        "message": (
            "没有这种玩法；可选的有：classic, fuzhou, regional, shuangguai, general, original, "
            "duoyise, duoerse, laizi, duosanzhang。"
        ),
    }


def test_an_empty_variant_is_no_filter(
    client: Client, alice: User, one_of_each: dict[str, list[int]]
) -> None:
    api = APIClient()
    api.force_login(alice)

    assert len(api.get(ROOMS, {"variant": ""}).json()["results"]) == len(VARIANTS) + 1


# Quick-join and Play now, by variant.


def test_which_configuration_a_variant_opens_rooms_with(
    decks: dict[str, RuleConfiguration],
) -> None:
    first = RuleConfiguration.from_engine(preset_config("laizi"), name="A jokers first by name")

    assert variant_rules(variant="classic") == decks["classic"]  # the default
    assert variant_rules(variant="duoyise") == decks["duoyise"]
    assert variant_rules(variant="laizi") == first  # the first by name
    RuleConfiguration.objects.filter(pk=decks["classic"].pk).update(jokers=2)
    assert variant_rules(variant="laizi") == decks["classic"]  # the default, of that variant now
    RuleConfiguration.objects.filter(extra_suits=2).delete()
    assert variant_rules(variant="duoerse") is None
    assert "duoerse" not in variants_offered()


def test_play_now_with_a_variant_opens_a_full_room_of_it(
    decks: dict[str, RuleConfiguration], alice: User, bob: User, carol: User
) -> None:
    first = room_quick_play(user=alice, variant="duoyise")
    second = room_quick_play(user=bob, variant="duoyise")
    other = room_quick_play(user=carol)  # no variant: the default rules

    room = first.seat.room
    assert first.opened and second.opened and second.seat.room != room
    assert (room.rules, room.seats) == (decks["duoyise"], QUICK_PLAY_SEATS)
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == QUICK_PLAY_SEATS - 1
    assert second.seat.room.rules == decks["duoyise"]
    assert other.opened and other.seat.room.rules == decks["classic"]


def test_play_now_caps_its_seats_at_the_decks(
    rules: RuleConfiguration, alice: User, bob: User
) -> None:
    three = configuration("Three seats", RuleConfig(spare_cards=3))  # 52 cards, 16 each
    RuleConfiguration.objects.exclude(pk__in=[three.pk, rules.pk]).filter(spare_cards=3).delete()

    played = room_quick_play(user=alice, variant="duosanzhang")

    room = played.seat.room
    assert (room.rules, room.seats) == (three, 3)
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 2  # every other seat


@pytest.mark.parametrize("bad", ["bogus", "Laizi", 5, ["laizi"], {"x": 1}, True])
def test_play_now_refuses_a_bad_variant_and_spends_nothing(
    settings: Any, decks: dict[str, RuleConfiguration], alice: User, bad: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "1/minute"}
    before = lobby_counts()

    with pytest.raises(errors.UnknownVariant):
        room_quick_play(user=alice, variant=bad)
    with pytest.raises(errors.UnknownVariant):
        room_quick_join(user=alice, base_score=100, seats=4, variant=bad)

    assert lobby_counts() == before
    assert room_quick_play(user=alice).seated_now  # the rate is untouched


def test_play_now_of_a_variant_no_configuration_offers_is_refused(
    settings: Any, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "1/minute"}
    RuleConfiguration.objects.filter(extra_suits=2).delete()
    before = lobby_counts()

    with pytest.raises(errors.NoVariantRules) as refusal:
        room_quick_play(user=alice, variant="duoerse")

    assert refusal.value.code == "no_variant_rules" and refusal.value.status == 409
    with translation.override("en"):
        assert refusal.value.message == (
            "No rule configuration offers the variant duoerse; ask an administrator."
        )
    assert lobby_counts() == before
    assert room_quick_play(user=alice).seated_now  # nothing was spent


def test_the_play_now_page_offers_the_variants_with_their_help(
    client: Client, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    client.force_login(alice)

    for path in (LOBBY, "/lobby/play/"):
        with translation.override("en"):
            body = client.get(path, HTTP_ACCEPT_LANGUAGE="en").content.decode()
            helps = {slug: str(VARIANT_HELP[slug]) for slug in VARIANTS}
        for slug in VARIANTS:
            assert f'name="variant" value="{slug}"' in body, (path, slug)
            assert helps[slug] in body
    RuleConfiguration.objects.filter(extra_suits=2).delete()
    body = client.get("/lobby/play/").content.decode()
    assert 'value="duoerse"' not in body  # no configuration offers it
    chinese = client.get("/lobby/play/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert "65 张牌：多一副方块，最多 5 人" in chinese and ">多一色</button>" in chinese


def test_the_play_now_form_seats_the_player_at_a_room_of_the_variant(
    client: Client, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    client.force_login(alice)

    client.post("/lobby/play/", {"variant": "duosanzhang"})  # waits for players, then
    wait_over()
    response = client.post("/lobby/play/wait/")

    room = Room.objects.get()
    assert response.status_code == 302 and response["Location"] == f"/games/table/{room.pk}/"
    assert room.rules == decks["duosanzhang"]


def test_the_play_now_form_refuses_a_bad_variant(
    client: Client, decks: dict[str, RuleConfiguration], alice: User
) -> None:
    client.force_login(alice)

    response = client.post(
        "/lobby/play/", {"variant": "<script>"}, follow=True, HTTP_ACCEPT_LANGUAGE="en"
    )

    assert messages_of(response) == [UNKNOWN]
    assert not Room.objects.exists()


def test_quick_join_with_a_variant(
    decks: dict[str, RuleConfiguration], alice: User, bob: User, carol: User
) -> None:
    seat = room_quick_join(user=alice, base_score=100, seats=5, variant="duoyise")
    joined = room_quick_join(user=bob, base_score=100, seats=5, variant="duoyise")

    assert (seat.room.rules, seat.room.seats) == (decks["duoyise"], 5)
    assert joined.room == seat.room
    with pytest.raises(errors.TooManySeats):
        room_quick_join(user=carol, base_score=100, seats=5)  # the default rules seat 4
    with pytest.raises(errors.TooManySeats):
        room_quick_join(user=carol, base_score=100, seats=6, variant="duoyise")
    classic = room_quick_join(user=carol, base_score=100, seats=4, variant="classic")
    assert classic.room.rules == decks["classic"] and classic.room != seat.room


def test_quick_join_by_the_api_and_the_form_with_a_variant(
    client: Client, decks: dict[str, RuleConfiguration], alice: User, bob: User, carol: User
) -> None:
    api = APIClient()
    api.force_login(alice)

    refused(
        api.post(QUICK_JOIN, {"base_score": 100, "seats": 4, "variant": "nope"}),
        400,
        "unknown_variant",
    )
    refused(
        api.post(QUICK_JOIN, {"base_score": 100, "seats": 4, "variant": ["laizi"]}, format="json"),
        400,
        "invalid",
    )
    refused(api.post(QUICK_JOIN, {"base_score": 100, "seats": 5}), 400, "too_many_seats")
    assert not Room.objects.exists()
    response = api.post(
        QUICK_JOIN, {"base_score": 100, "seats": 4, "variant": "laizi"}, format="json"
    )
    assert response.status_code == 200, response.content
    room = Room.objects.get()
    assert response.json()["room"]["variant"]["tags"] == ["laizi"]

    client.force_login(bob)
    response = client.post(
        "/lobby/quick-join/", {"base_score": 100, "seats": 4, "variant": "laizi"}, follow=True
    )
    assert Seat.objects.get(user=bob).room == room
    client.force_login(carol)
    response = client.post(
        "/lobby/quick-join/",
        {"base_score": 100, "seats": 4, "variant": "bogus"},
        follow=True,
        HTTP_ACCEPT_LANGUAGE="en",
    )
    assert messages_of(response) == [f"Variant: {UNKNOWN}"]
    assert not Seat.objects.filter(user=carol).exists()


def test_a_room_closed_or_left_keeps_its_variant(
    decks: dict[str, RuleConfiguration], alice: User
) -> None:
    room = open_room(alice, rules=decks["duoyise"], seats=5)
    room_leave(user=alice)
    room.refresh_from_db()

    assert room.status == RoomStatus.OPEN
    assert list(room_list(variant="duoyise")) == [room]

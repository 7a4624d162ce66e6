"""The lobby page's Play now, seat banner, ?left= message and room list; /lobby/play/; and
the sign-up's ?next=, which brings a new player from the front page to a table."""

import re
from typing import Any

import pytest
from django.test import Client

from accounts.models import User
from games.live import services as table_services
from lobby.matchmaking import room_quick_play
from lobby.models import PlayWait, Room, Seat
from lobby.services import room_create, room_join, room_leave
from tests.lobby.conftest import MakePlayer, lobby_counts, wait_over

LOBBY = "/lobby/"
PLAY = "/lobby/play/"
WAIT = "/lobby/play/wait/"
CANCEL = "/lobby/play/cancel/"


@pytest.fixture
def page(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def messages_of(response: Any) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def banner_of(body: str) -> str:
    """The seat banner's section (hidden or not)."""
    match = re.search(r'<section class="seat-banner".*?</section>', body, re.S)
    assert match is not None
    return match.group(0)


def rows_of(body: str) -> list[str]:
    tbody = body.split("<tbody>", 1)[1].split("</tbody>", 1)[0]
    return re.findall(r'<tr data-room="(\d+)"', tbody)


# Play now on the lobby page, and its endpoint.


def test_play_now_is_the_lobby_pages_first_action(page: Client) -> None:
    body = page.get(LOBBY, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    play = body.index('action="/lobby/play/"')
    assert play < body.index('id="lobby-rooms"') < body.index('action="/lobby/create/"')
    assert "Play now against bots" in body
    assert "Base score 100 · entry minimum 32,400 coins" in body
    assert 'name="with_bots"' not in body  # no box to tick any more
    # Creating a room: the name is optional (a placeholder shows the default), bots labelled.
    create = body[body.index('action="/lobby/create/"') :]
    name = re.search(r'<input type="text" name="name"[^>]*>', create).group(0)
    assert "required" not in name and 'placeholder="alice&#x27;s table"' in name  # English page
    assert '<option value="0" selected>No bots: wait for people</option>' in create
    assert "3 bots" in create


def test_play_now_posts_seat_the_player_and_go_to_the_table(page: Client, alice: User) -> None:
    response = page.post(PLAY)

    assert response.status_code == 302 and response["Location"] == PLAY  # waits for players
    assert PlayWait.objects.filter(user=alice).exists() and not Seat.objects.exists()
    wait_over()
    response = page.post(WAIT)

    seat = Seat.objects.get(user=alice)
    assert response.status_code == 302
    assert response["Location"] == f"/games/table/{seat.room_id}/"
    assert Seat.objects.filter(room=seat.room, user__is_bot=True).count() == 3  # a full table
    assert not PlayWait.objects.exists()


def test_repeated_play_now_posts_send_the_player_back_to_the_same_table(
    page: Client, alice: User
) -> None:
    page.post(PLAY)
    wait_over()
    first = page.post(WAIT)
    counts = lobby_counts()

    for _click in range(4):
        again = page.post(PLAY, follow=True)
        assert again.redirect_chain[0] == (first["Location"], 302)

    assert lobby_counts() == counts
    assert any("You are already seated at table" in m for m in messages_of(again))


def test_a_player_seated_elsewhere_is_sent_back_there(page: Client, alice: User, bob: User) -> None:
    room = room_create(owner=bob, name="Bob's", base_score=100, seats=4)
    room_join(user=alice, room_id=room.pk)

    response = page.post(PLAY)

    assert response["Location"] == f"/games/table/{room.pk}/"
    assert Room.objects.count() == 1


def test_play_now_refused_says_why_and_changes_nothing(
    client: Client, make_player: MakePlayer
) -> None:
    client.force_login(make_player(coins=100))

    response = client.post(PLAY, follow=True, HTTP_ACCEPT_LANGUAGE="en")

    assert response.redirect_chain == [(LOBBY, 302)]
    assert messages_of(response) == [
        "This room needs at least 324 coins to sit down; you have 100."
    ]
    assert lobby_counts() == (0, 0)
    assert "You need at least 324 coins to play." in response.content.decode()


def test_play_now_over_its_rate_limit_is_refused(settings: Any, page: Client, alice: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "1/minute"}
    page.post(PLAY)
    page.post(CANCEL, follow=True)
    counts = lobby_counts()

    response = page.post(PLAY, follow=True, HTTP_ACCEPT_LANGUAGE="en")

    assert response.redirect_chain == [(LOBBY, 302)]
    assert messages_of(response)[0].startswith("Too many requests: try again in")
    assert lobby_counts() == counts and not PlayWait.objects.exists()


def test_play_now_needs_the_csrf_token(alice: User) -> None:
    client = Client(enforce_csrf_checks=True)
    client.force_login(alice)

    assert client.post(PLAY).status_code == 403
    assert lobby_counts() == (0, 0)


def test_play_now_needs_a_login(client: Client, rules: Any) -> None:
    assert client.post(PLAY)["Location"] == "/accounts/login/?next=/lobby/play/"
    assert client.get(PLAY)["Location"] == "/accounts/login/?next=/lobby/play/"
    assert lobby_counts() == (0, 0)


def test_the_play_page_seats_nobody_by_itself(page: Client) -> None:
    response = page.get(PLAY, HTTP_ACCEPT_LANGUAGE="en")

    body = response.content.decode()
    assert response.status_code == 200
    assert lobby_counts() == (0, 0)  # a GET writes nothing
    assert 'action="/lobby/play/" data-autoplay' in body and "/static/lobby/play.js" in body
    assert "Play now against bots" in body
    assert page.put(PLAY).status_code == 405


def test_the_play_page_sends_a_seated_player_to_their_table(page: Client, alice: User) -> None:
    seat = room_quick_play(user=alice).seat

    assert page.get(PLAY)["Location"] == f"/games/table/{seat.room_id}/"


# The seat banner.


def test_no_banner_while_seated_nowhere(page: Client) -> None:
    body = page.get(LOBBY).content.decode()

    assert 'data-testid="seat-banner"' in body and " hidden>" in banner_of(body).split("\n")[0]


def test_the_banner_between_rounds_links_back_to_the_table(page: Client, alice: User) -> None:
    seat = room_quick_play(user=alice).seat

    body = page.get(LOBBY, HTTP_ACCEPT_LANGUAGE="en").content.decode()

    banner = banner_of(body)
    assert "hidden" not in banner.split("\n")[0] and 'data-in-round="false"' in banner
    assert "You are seated at table “Quick · Bots”" in banner  # the name in English only
    assert f'href="/games/table/{seat.room_id}/"' in banner and "return" in banner
    assert 'id="play-now" aria-labelledby="play-now-title" hidden' in body


def test_the_banner_during_a_round_says_so_in_both_languages(
    page: Client, alice: User, bob: User
) -> None:
    room = room_create(owner=bob, name="Duel", base_score=100, seats=2)
    room_join(user=alice, room_id=room.pk)
    table_services.table_ready(user=alice, room=room)
    table_services.table_ready(user=bob, room=room)

    english = banner_of(page.get(LOBBY, HTTP_ACCEPT_LANGUAGE="en").content.decode())
    chinese = banner_of(page.get(LOBBY, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode())

    assert 'data-in-round="true"' in english
    assert "You are in a round at table “Duel”" in english
    assert "你正在“Duel”这桌打一局" in chinese and "返回" in chinese


# Why the table sent the player back: ?left=.


@pytest.mark.parametrize(
    ("reason", "english", "chinese"),
    [
        ("ready_timeout", "You did not press Ready in time", "你没有及时按“准备”"),
        ("escaped", "You left during a round", "逃跑罚金"),
        ("left", "You left the table.", "你已离开牌桌。"),
        ("kicked", "You were removed from the table.", "你已被移出牌桌。"),
        ("insufficient_coins", "entry minimum", "入座门槛"),
    ],
)
def test_the_left_reason_is_said_in_both_languages(
    page: Client, reason: str, english: str, chinese: str
) -> None:
    en = page.get(f"{LOBBY}?left={reason}", HTTP_ACCEPT_LANGUAGE="en").content.decode()
    zh = page.get(f"{LOBBY}?left={reason}", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert 'data-testid="left-message"' in en and english in en
    assert 'data-testid="left-message"' in zh and chinese in zh


@pytest.mark.parametrize(
    "query", ["left=", "left=nonsense", "left=%3Cscript%3Ealert(1)%3C/script%3E", "left=LEFT"]
)
def test_an_unknown_left_reason_is_ignored_never_echoed(page: Client, query: str) -> None:
    response = page.get(f"{LOBBY}?{query}")

    body = response.content.decode()
    lobby = body[body.index("data-lobby") :]  # the page's own content (not the language form)
    assert response.status_code == 200
    assert 'data-testid="left-message"' not in body
    assert "nonsense" not in lobby and "script>alert" not in lobby and "LEFT" not in lobby


def test_the_left_reason_keeps_the_filters_working(page: Client, alice: User) -> None:
    body = page.get(f"{LOBBY}?left=ready_timeout&seats=2&page=1").content.decode()

    assert 'data-testid="left-message"' in body
    assert '<option value="2" selected>2</option>' in body


# The room list: rooms with somebody to play with.


def test_the_list_hides_rooms_nobody_sits_in_except_the_players_own(
    page: Client, alice: User, bob: User, carol: User
) -> None:
    busy = room_create(owner=bob, name="Busy", base_score=100, seats=4)
    carols = room_create(owner=carol, name="Carol's", base_score=100, seats=4)
    room_leave(user=carol)
    alices = room_create(owner=alice, name="Alice's", base_score=100, seats=4)
    room_leave(user=alice)

    body = page.get(LOBBY).content.decode()

    assert rows_of(body) == [str(alices.pk), str(busy.pk)]
    assert str(carols.pk) not in rows_of(body)
    assert "2 open rooms" in body


def test_creating_without_a_name_names_the_room_after_its_owner(page: Client, alice: User) -> None:
    response = page.post(
        "/lobby/create/", {"name": "", "base_score": 100, "seats": 4, "bots": "3"}, follow=True
    )

    room = Room.objects.get()
    assert room.name == "alice 的桌 Table"
    assert messages_of(response) == ["You opened “alice's table”."]  # stored "alice 的桌 Table"
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == 3


# Sign-up and log-in keep ?next=, so the front page's Play now lands at /lobby/play/.


def test_signing_up_goes_on_to_next(client: Client, rules: Any) -> None:
    form = client.get("/accounts/signup/?next=/lobby/play/").content.decode()
    assert '<input type="hidden" name="next" value="/lobby/play/">' in form
    assert 'href="/accounts/login/?next=/lobby/play/"' in form

    response = client.post(
        "/accounts/signup/",
        {
            "username": "newbie",
            "password1": "Correct-horse-42",
            "password2": "Correct-horse-42",
            "next": "/lobby/play/",
        },
    )

    assert response.status_code == 302 and response["Location"] == "/lobby/play/"


@pytest.mark.parametrize(
    "target", ["https://evil.example/", "//evil.example/play/", "javascript:alert(1)"]
)
def test_signing_up_never_goes_to_another_site(client: Client, rules: Any, target: str) -> None:
    form = client.get(f"/accounts/signup/?next={target}").content.decode()
    assert '<input type="hidden" name="next"' not in form

    response = client.post(
        "/accounts/signup/",
        {
            "username": "newbie",
            "password1": "Correct-horse-42",
            "password2": "Correct-horse-42",
            "next": target,
        },
    )

    assert response["Location"] == "/accounts/profile/"


def test_the_log_in_page_offers_sign_up_with_the_same_next(client: Client, rules: Any) -> None:
    body = client.get("/accounts/login/?next=/lobby/play/").content.decode()

    assert 'href="/accounts/signup/?next=/lobby/play/"' in body

"""Guests in the lobby: the front page's Play now makes a visitor a guest seated with bots in
one POST (rate-limited per address, within the address's sign-ups and the guest mint
ceiling); a guest sits only at its Play now table — no room opened, joined or shared, no
duplicate match — and no person sits at a guest's table; the header names the guest with a
call to sign up, which keeps the same account; an idle guest's seat is freed when it is
removed."""

from datetime import timedelta
from typing import Any

import pytest
from django.test import Client
from django.utils import timezone

from accounts.models import Entry, MintDay, MintKind, SignupQuota, Transaction, User
from accounts.selectors import ledger_audit, wallet_balance
from accounts.services import (
    GUEST_NAME_PREFIX,
    economy_settings_get_or_create,
    guest_create,
    guests_idle_remove,
)
from games.live.matches import match_create
from games.models import RuleConfiguration
from lobby.errors import GuestNotAllowed, GuestTable
from lobby.matchmaking import room_quick_join, room_quick_play
from lobby.models import Room, RoomStatus, Seat
from lobby.services import room_create, room_join, room_join_by_code, seat_release
from tests.lobby.conftest import MakePlayer

pytestmark = pytest.mark.django_db

ADDRESS = "198.51.100.20"
PLAY = "/lobby/play/guest/"
PASSWORD = "Correct-horse-42"


def _economy(**values: Any) -> None:
    stored = economy_settings_get_or_create()
    for name, value in values.items():
        setattr(stored, name, value)
    stored.save()


def _guest(rules: RuleConfiguration, address: str = ADDRESS) -> User:
    return guest_create(address=address)


# The restrictions, at the services (the forms, the API and the sockets call these).


def test_a_guest_plays_now_at_a_full_table_of_bots(rules: RuleConfiguration) -> None:
    guest = _guest(rules)

    played = room_quick_play(user=guest)

    room = played.seat.room
    assert not room.is_private and room.owner == guest
    assert Seat.objects.filter(room=room, user__is_bot=True).count() == room.seats - 1
    assert room.entry_minimum <= 2_000


def test_a_guest_opens_no_room_but_its_play_now_table(rules: RuleConfiguration) -> None:
    guest = _guest(rules)
    rooms = Room.objects.count()

    for terms in (
        {"seats": 4},  # people may join
        {"seats": 4, "bots": 2},  # one seat left for a person
        {"seats": 4, "bots": 3, "private": True},
        {"seats": 2, "private": True, "series_rounds": 4},
    ):
        with pytest.raises(GuestNotAllowed):
            room_create(owner=guest, base_score=1, **terms)
    with pytest.raises(GuestNotAllowed):
        match_create(owner=guest, base_score=1, seats=2, tables=2, deals=2, bots=True)
    with pytest.raises(GuestNotAllowed):
        room_quick_join(user=guest, base_score=1, seats=4)

    assert Room.objects.count() == rooms
    assert not Seat.objects.filter(user=guest).exists()


def test_a_guest_joins_no_room_public_or_private(
    rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    host = make_player()
    public = room_create(owner=host, base_score=1, seats=4)
    private = room_create(owner=make_player(), base_score=1, seats=4, private=True)
    guest = _guest(rules)

    with pytest.raises(GuestNotAllowed):
        room_join(user=guest, room_id=public.pk)
    with pytest.raises(GuestNotAllowed):
        room_join(user=guest, room_id=private.pk, code=private.code or "")
    with pytest.raises(GuestNotAllowed):
        room_join_by_code(user=guest, code=private.code or "")

    assert not Seat.objects.filter(user=guest).exists()
    assert guest.is_guest


def test_no_person_sits_at_a_guests_table(
    rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    guest = _guest(rules)
    room = room_quick_play(user=guest).seat.room
    bot = Seat.objects.filter(room=room, user__is_bot=True).order_by("position").last()
    assert bot is not None
    seat_release(room=room, user_id=bot.user_id)  # a seat free at a guest's table
    person = make_player()

    with pytest.raises(GuestTable):
        room_join(user=person, room_id=room.pk)
    seat = room_quick_join(user=person, base_score=room.base_score, seats=room.seats)

    assert seat.room_id != room.pk  # quick-join passed the guest's table by
    assert not Seat.objects.filter(room=room, user=person).exists()


# The front page's Play now.


def test_one_post_from_the_front_page_makes_a_guest_and_seats_it_with_bots(
    client: Client, rules: RuleConfiguration
) -> None:
    home = client.get("/").content.decode()
    assert f'action="{PLAY}"' in home and 'data-testid="home-play-now"' in home

    response = client.post(PLAY, REMOTE_ADDR=ADDRESS)

    guest = User.objects.get(is_guest=True)
    seat = Seat.objects.select_related("room").get(user=guest)
    assert response.status_code == 302
    assert response["Location"] == f"/games/table/{seat.room_id}/"
    assert Seat.objects.filter(room=seat.room, user__is_bot=True).count() == 3
    assert int(client.session["_auth_user_id"]) == guest.pk
    # The header: the guest's name and the call to sign up; no log-out (no password).
    page = client.get("/lobby/").content.decode()
    assert f"Guest: {guest.username}" in page
    assert 'data-testid="guest-signup"' in page and "Sign up to keep your coins" in page
    assert 'data-testid="guest-notice"' in page
    assert "Log out" not in page
    assert client.get("/api/me/").json()["is_guest"] is True
    # Pressed again: back to the same table, no second guest.
    again = client.post(PLAY, REMOTE_ADDR=ADDRESS)
    assert again["Location"] == f"/games/table/{seat.room_id}/"
    assert User.objects.filter(is_guest=True).count() == 1


def test_the_header_speaks_chinese_to_a_guest(client: Client, rules: RuleConfiguration) -> None:
    client.post(PLAY, REMOTE_ADDR=ADDRESS)

    page = client.get("/lobby/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "游客" in page and "注册" in page
    assert "Sign up to keep your coins" not in page


def test_guest_creation_is_rate_limited_per_address(
    rules: RuleConfiguration, settings: Any
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "accounts.guest_create": "2/minute"}
    _economy(signups_per_address_per_day=0)
    for _n in range(2):
        assert Client().post(PLAY, REMOTE_ADDR=ADDRESS).status_code == 302
    users = User.objects.count()

    refused = Client().post(PLAY, REMOTE_ADDR=ADDRESS)

    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert "Too many" in refused.content.decode() or "try again" in refused.content.decode()
    assert User.objects.count() == users
    # Another address has its own budget.
    assert Client().post(PLAY, REMOTE_ADDR="198.51.100.99").status_code == 302


def test_past_the_addresss_sign_ups_the_front_page_says_so_and_creates_nothing(
    rules: RuleConfiguration,
) -> None:
    _economy(signups_per_address_per_day=1)
    assert Client().post(PLAY, REMOTE_ADDR=ADDRESS).status_code == 302
    users, transactions = User.objects.count(), Transaction.objects.count()

    refused = Client().post(PLAY, REMOTE_ADDR=ADDRESS)

    assert refused.status_code == 429
    assert "network address" in refused.content.decode()
    assert User.objects.count() == users and Transaction.objects.count() == transactions
    assert SignupQuota.objects.get(address=ADDRESS).count == 1


def test_the_guest_mint_ceiling_stops_guests_from_many_addresses(
    rules: RuleConfiguration,
) -> None:
    _economy(guest_grant=2_000, mint_ceiling_guest=6_000, signups_per_address_per_day=0)
    answers = [Client().post(PLAY, REMOTE_ADDR=f"203.0.113.{n}").status_code for n in range(1, 6)]

    assert answers == [302, 302, 302, 429, 429]
    assert User.objects.filter(is_guest=True).count() == 3
    granted = Entry.objects.filter(
        transaction__idempotency_key__startswith="guest-grant:", amount__gt=0
    ).values_list("amount", flat=True)
    assert sum(granted) == 6_000
    assert MintDay.objects.get(kind=MintKind.GUEST).minted == 6_000


def test_a_guest_cannot_claim_or_open_rooms_through_the_pages(
    client: Client, rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    client.post(PLAY, REMOTE_ADDR=ADDRESS)
    guest = User.objects.get(is_guest=True)
    client.post("/lobby/leave/")
    private = room_create(owner=make_player(), base_score=1, seats=4, private=True)
    transactions = Transaction.objects.count()

    bonus = client.post("/accounts/profile/daily-bonus/", follow=True).content.decode()
    client.post("/accounts/profile/relief/")
    created = client.post(
        "/lobby/create/", {"base_score": 1, "seats": 4, "private": "on"}, follow=True
    ).content.decode()
    joined = client.post("/lobby/join/", {"code": private.code}, follow=True).content.decode()

    assert "Guests do not receive the daily bonus" in bonus
    assert "Guests play Play now tables with bots only" in created
    assert "Guests play Play now tables with bots only" in joined
    assert Transaction.objects.count() == transactions
    assert not Seat.objects.filter(user=guest).exists()
    assert not Room.objects.filter(owner=guest, status=RoomStatus.OPEN).exists()


# Signing up keeps the account.


def test_a_guest_signs_up_on_the_same_account_and_stays_logged_in(
    client: Client, rules: RuleConfiguration, settings: Any
) -> None:
    settings.SIGNUP_GRANT = 10_000
    _economy(guest_grant=2_000)
    client.post(PLAY, REMOTE_ADDR=ADDRESS)
    guest = User.objects.get(is_guest=True)
    form = client.get("/accounts/signup/").content.decode()
    assert f'value="{guest.username}"' in form
    assert "your 2,000 coins" in form and "adds 8,000 coins" in form

    response = client.post(
        "/accounts/signup/",
        {"username": guest.username, "password1": PASSWORD, "password2": PASSWORD},
        REMOTE_ADDR=ADDRESS,
    )

    assert response.status_code == 302 and response["Location"] == "/accounts/profile/"
    user = User.objects.get(pk=guest.pk)
    assert not user.is_guest and user.username.startswith(GUEST_NAME_PREFIX)
    assert wallet_balance(user=user) == 10_000
    assert client.get("/accounts/profile/").status_code == 200  # still logged in
    assert User.objects.count() == User.objects.filter(is_bot=True).count() + 1
    assert Seat.objects.filter(user=user).exists()  # still at the table
    # Signed up now: the sign-up page sends it to its profile.
    assert client.get("/accounts/signup/")["Location"] == "/accounts/profile/"


def test_a_guest_sign_up_with_bad_input_changes_nothing(
    client: Client, rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    make_player(username="taken")
    client.post(PLAY, REMOTE_ADDR=ADDRESS)
    guest = User.objects.get(is_guest=True)

    for data in (
        {"username": "taken", "password1": PASSWORD, "password2": PASSWORD},
        {"username": "fine", "password1": PASSWORD, "password2": "other-Pass-99"},
        {"username": "fine", "password1": "123", "password2": "123"},
        {"username": "bad name!", "password1": PASSWORD, "password2": PASSWORD},
    ):
        assert client.post("/accounts/signup/", data).status_code == 200

    guest.refresh_from_db()
    assert guest.is_guest and not guest.has_usable_password()
    assert guest.username.startswith(GUEST_NAME_PREFIX)


# An idle guest's seat.


def test_an_idle_guest_seated_at_its_table_is_stood_up_and_removed(
    rules: RuleConfiguration, settings: Any
) -> None:
    settings.GUEST_IDLE_DAYS = 7
    guest = _guest(rules)
    room_quick_play(user=guest)

    assert guests_idle_remove(now=timezone.now() + timedelta(days=8)) == 1

    assert not Seat.objects.filter(user=guest).exists()
    assert wallet_balance(user=guest) == 0
    assert ledger_audit().ok


def test_the_api_refuses_a_guest_and_says_why_in_chinese(
    rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    public = room_create(owner=make_player(), base_score=1, seats=4)
    private = room_create(owner=make_player(), base_score=1, seats=4, private=True)
    guest = _guest(rules)
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(guest)
    transactions = Transaction.objects.count()

    answers = [
        client.post(path, data, content_type="application/json")
        for path, data in (
            (f"/api/lobby/rooms/{public.pk}/join/", {}),
            ("/api/lobby/rooms/join-by-code/", {"code": private.code}),
            ("/api/lobby/rooms/", {"base_score": 1, "seats": 4, "private": True}),
            ("/api/lobby/quick-join/", {"base_score": 1, "seats": 4}),
        )
    ]
    bonus = client.post("/api/wallet/daily-bonus/", {}, content_type="application/json")

    for answer in answers:
        assert answer.status_code == 403, answer.content
        assert answer.json()["error"]["code"] == "guest_not_allowed"
        assert "游客" in answer.json()["error"]["message"]
    assert bonus.status_code >= 400 and "游客" in bonus.content.decode()
    assert Transaction.objects.count() == transactions
    assert not Seat.objects.filter(user=guest).exists()

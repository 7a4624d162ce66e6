"""Invite links (lobby.invites, lobby.invite_views): a private room's, a series' or a duplicate
match's share link seats whoever opens it in one tap; a guessed, mutated, revoked or expired
link is refused with a clear answer and changes nothing; every way in is rate-limited."""

from __future__ import annotations

import re
import secrets
from typing import Any

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from accounts.collusion import transfers_freeze
from accounts.models import User
from games.live.matches import match_create
from games.models import MatchStatus
from lobby.errors import (
    AlreadySeated,
    InviteExpired,
    InviteNotFound,
    NotInviteOwner,
    RoomFull,
    TransfersFrozen,
)
from lobby.invites import (
    MAC_LENGTH,
    invite_accept,
    invite_regenerate,
    invite_share,
    invite_target,
    invite_token,
)
from lobby.models import Invite, Room, RoomStatus, Seat
from lobby.services import room_close, room_create, room_leave
from tests.lobby.conftest import MakePlayer, lobby_counts, room_state

pytestmark = pytest.mark.django_db


def _private(owner: User, seats: int = 3, base_score: int = 10, **extra: Any) -> Room:
    return room_create(
        owner=owner, name="Friends", base_score=base_score, seats=seats, private=True, **extra
    )


def _token(room: Room) -> str:
    return invite_token(Invite.objects.get(room=room))


def _url(token: str) -> str:
    return reverse("lobby:invite", args=[token])


def _seats() -> list[tuple[int, int, int]]:
    return sorted(Seat.objects.values_list("room_id", "user_id", "position"))


# The link and its token.


def test_a_private_room_opens_with_a_link_and_a_public_room_without(alice: User) -> None:
    private = _private(alice)
    token = _token(private)
    assert re.fullmatch(rf"r{private.pk}\.[A-Za-z0-9_-]{{{MAC_LENGTH}}}", token)
    assert private.code is not None and private.code not in token  # the code is never in it
    # The mac is 256 bits of HMAC over a 256-bit random salt; only the salt is stored.
    invite = Invite.objects.get(room=private)
    assert len(invite.salt) >= 43 and token.split(".")[1] not in invite.salt
    leave_and_open = room_leave(user=alice)
    public = room_create(owner=alice, name="Open", base_score=10, seats=2)
    assert leave_and_open.pk == private.pk and not Invite.objects.filter(room=public).exists()


def test_the_owner_alone_sees_the_link(alice: User, bob: User) -> None:
    room = _private(alice)
    shown = invite_share(user=alice, room_id=room.pk)
    assert shown is not None and shown["path"] == _url(_token(room))
    assert invite_share(user=bob, room_id=room.pk) is None
    public = room_create(owner=bob, name="Open", base_score=10, seats=2)
    assert invite_share(user=bob, room_id=public.pk) is None


def test_a_link_seats_the_invitee_in_one_step(alice: User, bob: User) -> None:
    room = _private(alice)
    seat = invite_accept(user=bob, token=_token(room))
    assert (seat.room_id, seat.user_id, seat.position) == (room.pk, bob.pk, 1)
    # Opening it again is the same seat, not an error.
    assert invite_accept(user=bob, token=_token(room)).pk == seat.pk


def test_guessed_and_mutated_tokens_are_not_found_and_change_nothing(
    alice: User, bob: User
) -> None:
    room = _private(alice)
    token = _token(room)
    kind_id, mac = token.split(".")
    flipped = mac[:-1] + ("A" if mac[-1] != "A" else "B")
    guesses = [
        "",
        "x",
        token + "A",
        token[:-1],
        f"{kind_id}.{flipped}",
        f"{kind_id}.{secrets.token_urlsafe(32)[:MAC_LENGTH]}",
        f"r{room.pk + 1}.{mac}",  # the right mac for another room
        f"m{room.pk}.{mac}",  # ... for a match of that id
        f"r0{room.pk}.{mac}",
        room.code,
        f"{kind_id}.{mac}\n",
    ]
    before, state = lobby_counts(), room_state(room)
    for guess in guesses:
        with pytest.raises(InviteNotFound):
            invite_accept(user=bob, token=guess)
    assert lobby_counts() == before and room_state(room) == state


def test_a_revoked_link_stops_working_and_the_new_one_works(
    alice: User, bob: User, carol: User
) -> None:
    room = _private(alice)
    old = _token(room)
    with pytest.raises(NotInviteOwner):
        invite_regenerate(user=bob, room_id=room.pk)
    assert _token(room) == old  # a stranger changed nothing
    invite_regenerate(user=alice, room_id=room.pk)
    new = _token(room)
    assert new != old
    before = lobby_counts()
    with pytest.raises(InviteNotFound):
        invite_accept(user=bob, token=old)
    assert lobby_counts() == before
    assert invite_accept(user=carol, token=new).room_id == room.pk


def test_a_closed_rooms_link_has_expired(alice: User, bob: User) -> None:
    room = _private(alice)
    token = _token(room)
    room_leave(user=alice)
    room_close(user=alice, room_id=room.pk)
    with pytest.raises(InviteExpired):
        invite_accept(user=bob, token=token)
    with pytest.raises(InviteExpired):
        invite_regenerate(user=alice, room_id=room.pk)
    assert invite_share(user=alice, room_id=room.pk) is None
    assert not Seat.objects.filter(user=bob).exists()


def test_a_full_room_refuses(alice: User, bob: User, carol: User) -> None:
    room = _private(alice, seats=2)
    token = _token(room)
    invite_accept(user=bob, token=token)
    before = _seats()
    with pytest.raises(RoomFull):
        invite_accept(user=carol, token=token)
    assert _seats() == before


def test_a_frozen_account_takes_no_seat(alice: User, bob: User) -> None:
    room = _private(alice)
    staff = User.objects.create_superuser("support1", password="not-used-1")
    transfers_freeze(user=bob, staff=staff, note="Dumping to a friend.")
    state = room_state(room)
    with pytest.raises(TransfersFrozen):
        invite_accept(user=bob, token=_token(room))
    assert room_state(room) == state


def test_a_player_seated_elsewhere_is_refused(alice: User, bob: User) -> None:
    room = _private(alice)
    elsewhere = room_create(owner=bob, name="Bob's", base_score=10, seats=2)
    with pytest.raises(AlreadySeated):
        invite_accept(user=bob, token=_token(room))
    assert Seat.objects.get(user=bob).room_id == elsewhere.pk


def test_a_series_room_has_a_link(alice: User, bob: User) -> None:
    room = _private(alice, series_rounds=4)
    assert invite_accept(user=bob, token=_token(room)).room_id == room.pk


def test_a_match_link_seats_at_the_first_table_with_a_free_seat(
    make_player: MakePlayer, alice: User
) -> None:
    match = match_create(owner=alice, base_score=10, seats=2, tables=2, deals=2)
    token = invite_token(Invite.objects.get(match=match))
    assert token.startswith(f"m{match.pk}.")
    first, second = match.rooms.order_by("match_table")
    assert invite_accept(user=make_player(), token=token).room_id == first.pk
    assert invite_accept(user=make_player(), token=token).room_id == second.pk
    assert invite_accept(user=make_player(), token=token).room_id == second.pk
    before = _seats()
    with pytest.raises(RoomFull):
        invite_accept(user=make_player(), token=token)
    assert _seats() == before
    match.status, match.finished_at = MatchStatus.ABANDONED, timezone.now()
    match.save(update_fields=["status", "finished_at"])
    with pytest.raises(InviteExpired):
        invite_accept(user=make_player(), token=token)


def test_the_target_is_read_without_writing(alice: User) -> None:
    room = _private(alice)
    target = invite_target(_token(room))
    assert target.room == room and target.open and target.room_ids() == [room.pk]


# The page.


def test_the_page_shows_one_button_and_the_post_seats(alice: User, bob: User) -> None:
    room = _private(alice)
    client = Client()
    client.force_login(bob)
    url = _url(_token(room))
    page = client.get(url)
    assert page.status_code == 200
    assert b'data-testid="invite-accept"' in page.content
    assert not Seat.objects.filter(user=bob).exists()  # GET changes nothing
    answer = client.post(url)
    assert answer.status_code == 302
    assert answer["Location"] == reverse("games:table", args=[room.pk])
    assert Seat.objects.get(user=bob).room_id == room.pk
    # Seated already: the link leads to the table.
    assert client.get(url)["Location"] == reverse("games:table", args=[room.pk])


def test_a_visitor_is_sent_to_sign_up_or_log_in_and_back(alice: User) -> None:
    room = _private(alice)
    url = _url(_token(room))
    page = Client().get(url)
    assert page.status_code == 200
    text = page.content.decode()
    assert 'data-testid="invite-without-account"' in text
    assert f"{reverse('accounts:signup')}?next=/lobby/invite/" in text
    assert f"{reverse('accounts:login')}?next=/lobby/invite/" in text
    before = lobby_counts()
    posted = Client().post(url)
    assert posted.status_code == 302 and posted["Location"].startswith(reverse("accounts:login"))
    assert lobby_counts() == before


def test_bad_and_expired_links_get_a_clear_page(alice: User, bob: User) -> None:
    room = _private(alice)
    client = Client()
    client.force_login(bob)
    for token in ["nonsense", f"r{room.pk}.{'A' * MAC_LENGTH}"]:
        page = client.get(_url(token))
        assert page.status_code == 404
        assert b'data-code="invite_not_found"' in page.content
        assert client.post(_url(token)).status_code == 404
    token = _token(room)
    room_leave(user=alice)
    room_close(user=alice, room_id=room.pk)
    page = client.get(_url(token))
    assert page.status_code == 409 and b'data-code="invite_expired"' in page.content
    assert not Seat.objects.filter(user=bob).exists()


def test_refusals_on_the_page_say_why(alice: User, bob: User) -> None:
    room = _private(alice)
    room_create(owner=bob, name="Bob's", base_score=10, seats=2)
    client = Client()
    client.force_login(bob)
    answer = client.post(_url(_token(room)))
    assert answer.status_code == 409 and b'data-code="already_seated"' in answer.content


def test_guessing_is_limited_per_address(settings: Any, alice: User, bob: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.invite_address": "5/minute"}
    room = _private(alice)
    client = Client()
    client.force_login(bob)
    address = {"REMOTE_ADDR": "198.51.100.7"}
    answers = [
        client.get(_url(f"r{room.pk}.{secrets.token_urlsafe(32)[:MAC_LENGTH]}"), **address)
        for _ in range(5)
    ]
    assert [a.status_code for a in answers] == [404] * 5
    # Over the budget even the right link waits, and says for how long.
    refused = client.post(_url(_token(room)), **address)
    assert refused.status_code == 429 and int(refused["Retry-After"]) >= 1
    assert b'data-code="rate_limited"' in refused.content
    assert not Seat.objects.filter(user=bob).exists()
    # Another address has its own budget.
    assert client.post(_url(_token(room)), REMOTE_ADDR="198.51.100.8").status_code == 302


def test_seatings_are_limited_per_user(settings: Any, alice: User, bob: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.invite_user": "2/minute"}
    room = _private(alice)
    client = Client()
    client.force_login(bob)
    addresses = iter(f"198.51.100.{n}" for n in range(1, 10))
    assert client.post(_url("bad"), REMOTE_ADDR=next(addresses)).status_code == 404
    assert client.post(_url("bad"), REMOTE_ADDR=next(addresses)).status_code == 404
    refused = client.post(_url(_token(room)), REMOTE_ADDR=next(addresses))
    assert refused.status_code == 429
    assert not Seat.objects.filter(user=bob).exists()


def test_new_links_are_limited_per_user(settings: Any, alice: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.invite_regenerate": "2/minute"}
    room = _private(alice)
    client = Client()
    client.force_login(alice)
    post = {"kind": "r", "id": str(room.pk), "back": reverse("games:table", args=[room.pk])}
    tokens = {_token(room)}
    for _ in range(2):
        answer = client.post(reverse("lobby:invite_regenerate"), post)
        assert answer.status_code == 302 and answer["Location"] == post["back"]
        tokens.add(_token(room))
    assert len(tokens) == 3
    assert client.post(reverse("lobby:invite_regenerate"), post).status_code == 429
    assert _token(room) in tokens and len(tokens) == 3


def test_a_new_link_refuses_bad_input_and_strangers(alice: User, bob: User) -> None:
    room = _private(alice)
    token = _token(room)
    client = Client()
    client.force_login(bob)
    for post in [
        {"kind": "r", "id": str(room.pk), "back": "https://evil.example/"},
        {"kind": "x", "id": str(room.pk)},
        {"kind": "r", "id": "-1"},
        {"kind": "r", "id": "9" * 40},
        {},
    ]:
        answer = client.post(reverse("lobby:invite_regenerate"), post)
        assert answer.status_code == 302
        assert answer["Location"] == reverse("lobby:index")  # never off the site
    assert _token(room) == token


def test_the_owners_pages_show_the_link_and_its_qr_code(alice: User, bob: User) -> None:
    room = _private(alice, series_rounds=4)
    client = Client()
    client.force_login(alice)
    table = client.get(reverse("games:table", args=[room.pk])).content.decode()
    assert 'data-testid="invite-link"' in table and _token(room) in table
    assert "<svg" in table and 'class="invite-qr-code"' in table
    series = client.get(reverse("games:series", args=[room.series_token])).content.decode()
    assert _token(room) in series
    # The invitee's pages show no link.
    invite_accept(user=bob, token=_token(room))
    other = Client()
    other.force_login(bob)
    assert _token(room) not in other.get(reverse("games:table", args=[room.pk])).content.decode()


def test_the_match_page_shows_its_owner_the_link(alice: User, bob: User) -> None:
    match = match_create(owner=alice, base_score=10, seats=2, tables=2, deals=2)
    token = invite_token(Invite.objects.get(match=match))
    client = Client()
    client.force_login(alice)
    assert token in client.get(reverse("games:match", args=[match.pk])).content.decode()
    other = Client()
    other.force_login(bob)
    assert token not in other.get(reverse("games:match", args=[match.pk])).content.decode()


def test_a_room_opened_before_links_gets_one_from_its_owner(alice: User, bob: User) -> None:
    room = _private(alice)
    Invite.objects.filter(room=room).delete()
    assert invite_share(user=alice, room_id=room.pk) == {
        "path": "",
        "kind": "r",
        "target_id": room.pk,
    }
    invite = invite_regenerate(user=alice, room_id=room.pk)
    assert invite_accept(user=bob, token=invite_token(invite)).room_id == room.pk
    assert Room.objects.get(pk=room.pk).status == RoomStatus.OPEN


def test_the_pages_speak_chinese(alice: User, bob: User) -> None:
    room = _private(alice)
    owner = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    owner.force_login(alice)
    table = owner.get(reverse("games:table", args=[room.pk])).content.decode()
    assert "邀请好友来这张牌桌" in table and "复制链接" in table
    invitee = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    invitee.force_login(bob)
    page = invitee.get(_url(_token(room))).content.decode()
    assert "邀请你加入私人牌桌" in page and "3 个座位中有 2 个空位" in page and "入座" in page
    visitor = Client(HTTP_ACCEPT_LANGUAGE="zh-hans").get(_url(_token(room))).content.decode()
    assert "注册并入座" in visitor
    refused = invitee.get(_url("nonsense")).content.decode()
    assert "这个邀请链接无效" in refused


# A visitor without an account takes the seat as a guest, in one tap.


def _economy(**values: Any) -> None:
    from accounts.services import economy_settings_get_or_create

    stored = economy_settings_get_or_create()
    for name, value in values.items():
        setattr(stored, name, value)
    stored.save()


def test_a_visitor_sits_down_as_a_guest_in_one_tap(alice: User, bob: User) -> None:
    from accounts.selectors import wallet_balance

    room = _private(alice, base_score=1)
    url = _url(_token(room))
    visitor = Client()
    page = visitor.get(url).content.decode()
    assert 'data-testid="invite-guest"' in page and 'name="as_guest"' in page

    answer = visitor.post(url, {"as_guest": "1"})

    assert answer.status_code == 302
    assert answer["Location"] == reverse("games:table", args=[room.pk])
    guest = User.objects.get(is_guest=True)
    assert Seat.objects.get(user=guest).room_id == room.pk
    assert wallet_balance(user=guest) > 0
    assert visitor.get(reverse("games:table", args=[room.pk])).status_code == 200  # logged in
    # A person joins the private room where the invited guest sits, by the link or the code.
    client = Client()
    client.force_login(bob)
    assert client.post(url)["Location"] == reverse("games:table", args=[room.pk])
    assert Seat.objects.filter(room=room).count() == 3


def test_a_guest_enters_a_private_room_only_through_its_link(alice: User) -> None:
    from accounts.services import guest_create
    from lobby.errors import GuestNotAllowed
    from lobby.services import room_join, room_join_by_code

    room = _private(alice, base_score=1)
    guest = guest_create(address="198.51.100.9")
    with pytest.raises(GuestNotAllowed):
        room_join_by_code(user=guest, code=room.code or "")
    with pytest.raises(GuestNotAllowed):
        room_join(user=guest, room_id=room.pk, code=room.code or "")
    assert invite_accept(user=guest, token=_token(room)).room_id == room.pk


def test_no_guest_is_made_for_a_seat_it_could_not_take(alice: User, carol: User) -> None:
    room = _private(alice, seats=2, base_score=1)
    url = _url(_token(room))
    # A guest's coins below the entry minimum: the page says so and offers no guest button.
    _economy(guest_grant=10)
    page = Client().get(url).content.decode()
    assert 'data-testid="invite-guest-short"' in page and 'name="as_guest"' not in page
    refused = Client().post(url, {"as_guest": "1"})
    assert refused.status_code == 409 and b'data-code="guest_cannot_cover"' in refused.content
    _economy(guest_grant=2_000)
    # A bad link, a full room: refused before any guest is made.
    assert Client().post(_url("r1." + "A" * MAC_LENGTH), {"as_guest": "1"}).status_code == 404
    invite_accept(user=carol, token=_token(room))
    full = Client().post(url, {"as_guest": "1"})
    assert full.status_code == 409 and b'data-code="room_full"' in full.content
    assert not User.objects.filter(is_guest=True).exists()


def test_guests_by_link_count_against_the_address_s_sign_ups(alice: User) -> None:
    room = _private(alice, seats=4, base_score=1)
    url = _url(_token(room))
    _economy(signups_per_address_per_day=1)
    assert Client().post(url, {"as_guest": "1"}).status_code == 302
    again = Client().post(url, {"as_guest": "1"})
    assert again.status_code == 429 and b'data-code="signup_limit"' in again.content
    assert User.objects.filter(is_guest=True).count() == 1

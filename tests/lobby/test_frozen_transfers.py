"""A player whose transfers support froze pending a collusion review takes no seat (room
join, a new room, a series, Play now, quick join, a duplicate match), claims no grant, is
refused its next Ready, and is sent back to the room list after the round it is playing —
each refusal with a clear reason and nothing written."""

from __future__ import annotations

import pytest
from django.test import Client
from django.urls import reverse

from accounts.collusion import transfers_freeze, transfers_unfreeze
from accounts.errors import ClaimRefused
from accounts.models import Transaction, User
from accounts.services import wallet_daily_bonus_claim, wallet_relief_claim
from games.live import sent_away
from games.live import services as table_services
from games.live.matches import match_create
from games.table.errors import TableError
from lobby.errors import TransfersFrozen
from lobby.matchmaking import room_quick_join, room_quick_play
from lobby.models import Room, Seat
from lobby.services import room_create, room_join
from tests.accounts.test_collusion import Clock, clock, play_round  # noqa: F401 - the fixture
from tests.games.table_helpers import fast_rules, make_player, state_of

pytestmark = pytest.mark.django_db


def _staff() -> User:
    return User.objects.create_superuser("support1", password="not-used-1")


def _frozen(name: str) -> User:
    user = make_player(name)
    transfers_freeze(user=user, staff=_staff(), note="Dumping to a friend.")
    return user


def test_a_frozen_player_takes_no_seat_anywhere() -> None:
    owner, frozen = make_player("owner"), _frozen("frozen")
    room = room_create(owner=owner, name="Open", base_score=10, seats=4)
    private = room_create(
        owner=make_player("owner2"), name="Friends", base_score=10, seats=2, private=True
    )
    rooms = Room.objects.count()

    attempts = [
        lambda: room_join(user=frozen, room_id=room.pk),
        lambda: room_join(user=frozen, room_id=private.pk, code=private.code or ""),
        lambda: room_create(owner=frozen, name="Mine", base_score=10, seats=2),
        lambda: room_create(
            owner=frozen, name="Series", base_score=10, seats=2, private=True, series_rounds=4
        ),
        lambda: room_quick_play(user=frozen),
        lambda: room_quick_join(user=frozen, base_score=10, seats=4),
        lambda: room_quick_join(user=frozen, base_score=10, seats=4, with_bots=True),
        lambda: match_create(owner=frozen, base_score=10, seats=2, tables=2, deals=2),
    ]
    for attempt in attempts:
        with pytest.raises(TransfersFrozen) as refused:
            attempt()
        assert refused.value.code == "transfers_frozen" and refused.value.status == 403
        assert "frozen pending a review" in str(refused.value.message)
    assert not Seat.objects.filter(user=frozen).exists()
    assert Room.objects.count() == rooms


def test_the_lobby_api_says_why(settings) -> None:  # type: ignore[no-untyped-def]
    owner, frozen = make_player("apiowner"), _frozen("apifrozen")
    room = room_create(owner=owner, name="Open", base_score=10, seats=4)
    client = Client(HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(frozen)

    answer = client.post(f"/api/lobby/rooms/{room.pk}/join/", {}, content_type="application/json")

    assert answer.status_code == 403, answer.content
    assert answer.json()["error"]["code"] == "transfers_frozen"
    assert "冻结" in answer.json()["error"]["message"]


def test_a_frozen_player_claims_no_grant_until_unfrozen() -> None:
    frozen = _frozen("poor")
    grants = Transaction.objects.count()

    for claim in (wallet_daily_bonus_claim, wallet_relief_claim):
        with pytest.raises(ClaimRefused) as refused:
            claim(user=frozen)
        assert refused.value.code == "transfers_frozen"
    assert Transaction.objects.count() == grants

    transfers_unfreeze(user=frozen, staff=User.objects.get(username="support1"), note="Cleared.")
    wallet_daily_bonus_claim(user=frozen)
    assert Transaction.objects.count() == grants + 1


@pytest.mark.django_db(transaction=True)
def test_a_seated_player_frozen_mid_round_plays_it_out_then_is_sent_away(
    clock: Clock,  # noqa: F811 - the fixture
) -> None:
    a, b = make_player("seated_a"), make_player("seated_b")
    room = room_create(owner=a, name="Pair", base_score=10, seats=2, rules=fast_rules())
    room_join(user=b, room_id=room.pk)
    play_round(room, [a, b], clock)
    real_ready = table_services.table_ready

    def ready_then_freeze(*, user: User, room: Room) -> object:
        # The second Ready deals the round; support freezes `a` at once.
        done = real_ready(user=user, room=room)
        if user == b:
            transfers_freeze(user=a, staff=_staff(), note="Review.")
        return done

    table_services.table_ready = ready_then_freeze  # type: ignore[assignment]
    try:
        play_round(room, [a, b], clock)  # the round in play is played out
    finally:
        table_services.table_ready = real_ready  # type: ignore[assignment]

    assert state_of(room).seat_of(str(a.pk)) is None
    assert not Seat.objects.filter(user=a).exists()
    assert state_of(room).seat_of(str(b.pk)) is not None
    note = sent_away.peek(user_id=a.pk)
    assert note is not None and note["reason"] == "transfers_frozen"
    lobby = Client(HTTP_ACCEPT_LANGUAGE="en")
    lobby.force_login(a)
    assert "transfers are frozen" in lobby.get(reverse("lobby:index")).content.decode()


@pytest.mark.django_db(transaction=True)
def test_a_seated_frozen_player_is_refused_its_next_ready(clock: Clock) -> None:  # noqa: F811
    a, b = make_player("ready_a"), make_player("ready_b")
    room = room_create(owner=a, name="Pair", base_score=10, seats=2, rules=fast_rules())
    room_join(user=b, room_id=room.pk)
    transfers_freeze(user=a, staff=_staff(), note="Review.")

    with pytest.raises(TableError) as refused:
        table_services.table_ready(user=a, room=room)

    assert refused.value.code == "transfers_frozen"
    seat = state_of(room).seat_of(str(a.pk))
    assert seat is not None and not seat.ready

"""Play now (`room_quick_play`), the rooms its bots leave empty (`seats_release`), the lobby's
list of rooms worth joining, and the seat banner's "in a round" (selectors and signals)."""

from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum

from accounts.models import Account, User
from accounts.selectors import ledger_audit
from games.live import services as table_services
from games.live import store as table_store
from games.models import Table
from games.rules.config import DEFAULT_CONFIG
from games.table.state import Phase, SeatState, TableState
from lobby import errors
from lobby.checks import default_room_name
from lobby.matchmaking import QUICK_PLAY_ROOM_NAME, QUICK_PLAY_SEATS, room_quick_play
from lobby.models import Room, RoomStatus, Seat
from lobby.selectors import room_list, room_page, seat_in_round
from lobby.services import room_close, room_create, room_join, room_leave
from lobby.signals import round_changes
from shisanshui.errors import RateLimitedError
from tests.lobby.conftest import MakePlayer, lobby_counts
from tests.lobby.test_services import RecordingLayer, race

requires_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="races need PostgreSQL's locks"
)


def bots_of(room: Room) -> int:
    return Seat.objects.filter(room=room, user__is_bot=True).count()


def people_of(room: Room) -> list[int]:
    return sorted(Seat.objects.filter(room=room, user__is_bot=False).values_list("user", flat=True))


def total_coins() -> int:
    return Account.objects.aggregate(total=Sum("balance"))["total"] or 0


@pytest.fixture
def layer(monkeypatch: pytest.MonkeyPatch) -> RecordingLayer:
    recording = RecordingLayer()
    monkeypatch.setattr("shisanshui.publish.get_channel_layer", lambda: recording)
    return recording


# Play now: where it seats the player.


def test_play_now_opens_a_full_table_the_player_and_bots(alice: User) -> None:
    played = room_quick_play(user=alice)

    room = played.seat.room
    assert played.seated_now and played.opened
    assert played.seat.user == alice and played.seat.position == 0
    assert room.name == QUICK_PLAY_ROOM_NAME and not room.is_private
    assert room.seats == QUICK_PLAY_SEATS == 4 and room.base_score == 100
    assert room.rules.is_default and room.owner == alice
    assert bots_of(room) == 3 and people_of(room) == [alice.pk]
    assert Seat.objects.filter(room=room).count() == room.seats  # no seat free
    state = table_store.state_of(Table.objects.get(room=room))
    assert len(state.seats) == 4
    me = state.seat_of(str(alice.pk))
    assert me is not None and me.ready_deadline is None  # nobody waits on the player


def test_every_play_now_opens_its_own_full_room(alice: User, bob: User, carol: User) -> None:
    rooms = [room_quick_play(user=p).seat.room for p in (alice, bob, carol)]

    assert len({r.pk for r in rooms}) == 3 and Room.objects.count() == 3
    for room, person in zip(rooms, (alice, bob, carol), strict=True):
        assert people_of(room) == [person.pk] and bots_of(room) == 3


def test_play_now_never_sits_the_player_beside_another_person(
    make_player: MakePlayer, alice: User
) -> None:
    owner = make_player()
    # A room with bots, a person and free seats: the person opened it for friends.
    theirs = room_create(owner=owner, name="Bots and a seat", base_score=100, seats=4, bots=1)

    played = room_quick_play(user=alice)

    assert played.opened and played.seat.room != theirs
    assert people_of(theirs) == [owner.pk]


def test_a_player_already_seated_is_sent_back_and_nothing_is_written_or_spent(
    settings: Any, alice: User, bob: User
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "1/minute"}
    room = room_create(owner=bob, name="Bob's", base_score=100, seats=4)
    room_join(user=alice, room_id=room.pk)
    before = lobby_counts()

    for _click in range(5):  # repeated clicks
        again = room_quick_play(user=alice)
        assert not again.seated_now and not again.opened
        assert again.seat.room == room and again.seat.position == 1

    assert lobby_counts() == before
    room_leave(user=alice)
    assert room_quick_play(user=alice).seated_now  # the budget was not spent meanwhile


def test_repeated_clicks_seat_once_and_open_one_room(alice: User) -> None:
    results = [room_quick_play(user=alice) for _ in range(3)]

    assert [r.seated_now for r in results] == [True, False, False]
    assert len({r.seat.pk for r in results}) == 1
    assert Room.objects.count() == 1 and Seat.objects.filter(user=alice).count() == 1


def test_play_now_takes_the_highest_base_score_the_player_can_afford(
    make_player: MakePlayer,
) -> None:
    # Entry minimums at the default rules: 32,400 at 100, 3,240 at 10, 324 at 1.
    assert room_quick_play(user=make_player(coins=32_400)).seat.room.base_score == 100
    assert room_quick_play(user=make_player(coins=32_399)).seat.room.base_score == 10
    assert room_quick_play(user=make_player(coins=500)).seat.room.base_score == 1


def test_play_now_without_the_smallest_entry_minimum_is_refused(
    make_player: MakePlayer,
) -> None:
    poor = make_player(coins=323)
    before = lobby_counts()

    with pytest.raises(errors.InsufficientCoins) as refused:
        room_quick_play(user=poor)

    assert "324" in refused.value.message and "323" in refused.value.message
    assert lobby_counts() == before


def test_play_now_is_rate_limited_and_a_refusal_writes_nothing(
    settings: Any, alice: User, bob: User
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "2/minute"}
    for _round_trip in range(2):  # play, leave: a loop that would otherwise open rooms forever
        room_quick_play(user=alice)
        room_leave(user=alice)
    before = lobby_counts()

    with pytest.raises(RateLimitedError) as refused:
        room_quick_play(user=alice)

    assert refused.value.code == "rate_limited" and 1 <= refused.value.retry_after <= 60
    assert lobby_counts() == before
    assert room_quick_play(user=bob).seated_now  # another player's budget is untouched


def test_the_rooms_play_now_opens_count_against_the_room_creation_limit(
    settings: Any, alice: User
) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.room_create": "1/minute"}
    room_quick_play(user=alice)
    room_leave(user=alice)

    with pytest.raises(RateLimitedError):
        room_quick_play(user=alice)
    assert not Seat.objects.filter(user=alice).exists()


@requires_postgresql
def test_one_player_clicking_play_now_twice_at_once_gets_one_seat(
    transactional_db: None, make_player: MakePlayer
) -> None:
    alice = make_player()

    results = race(lambda: room_quick_play(user=alice), lambda: room_quick_play(user=alice))

    assert all(not isinstance(r, Exception) for r in results), results
    assert sorted(r.seated_now for r in results) == [False, True]
    assert results[0].seat.pk == results[1].seat.pk
    assert Room.objects.count() == 1 and Seat.objects.filter(user=alice).count() == 1


@requires_postgresql
def test_players_pressing_play_now_together_get_a_full_room_each(
    transactional_db: None, make_player: MakePlayer
) -> None:
    players = [make_player() for _ in range(3)]

    results = race(*[lambda p=p: room_quick_play(user=p) for p in players])

    assert all(not isinstance(r, Exception) for r in results), results
    assert all(r.opened for r in results) and Room.objects.count() == 3
    for result in results:
        room = result.seat.room
        assert Seat.objects.filter(room=room).count() == room.seats == 4
        assert people_of(room) == [result.seat.user_id]
    assert ledger_audit().ok and total_coins() == 0


# Rooms its bots leave empty close at once.


def test_a_room_its_bots_leave_empty_closes_at_once(
    alice: User, layer: RecordingLayer, django_capture_on_commit_callbacks: Any
) -> None:
    room = room_quick_play(user=alice).seat.room

    with django_capture_on_commit_callbacks(execute=True):
        room_leave(user=alice)  # between rounds: the bots leave with her

    room.refresh_from_db()
    assert room.status == RoomStatus.CLOSED and room.closed_at is not None
    assert not Seat.objects.filter(room=room).exists()
    events = [(m["event"], m["room"]["seats_taken"]) for _g, m in layer.sent]
    assert events[-1] == ("room.closed", 0)  # after each seat freed, in one commit
    assert [e for e, _n in events].count("room.closed") == 1
    assert room not in room_list()
    assert ledger_audit().ok and total_coins() == 0


def test_a_bot_room_stays_open_while_a_person_is_left(alice: User, bob: User) -> None:
    room = room_create(owner=alice, name="Bots", base_score=100, seats=4, bots=2)
    room_join(user=bob, room_id=room.pk)

    room_leave(user=alice)

    room.refresh_from_db()
    assert room.status == RoomStatus.OPEN and people_of(room) == [bob.pk] and bots_of(room) == 2
    room_leave(user=bob)
    room.refresh_from_db()
    assert room.status == RoomStatus.CLOSED


def test_an_empty_room_of_people_stays_open_for_its_owner(alice: User, bob: User) -> None:
    room = room_create(owner=alice, name="Friends", base_score=100, seats=4)
    room_join(user=bob, room_id=room.pk)
    room_leave(user=bob)
    room_leave(user=alice)

    room.refresh_from_db()
    assert room.status == RoomStatus.OPEN  # closed by its owner, or when idle (room_close_idle)
    room_close(user=alice, room_id=room.pk)


def test_a_ready_timeout_that_sends_the_last_person_away_closes_the_bot_room(
    alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = room_create(owner=alice, name="Bots", base_score=10, seats=3, bots=2)
    table = Table.objects.get(room=room)
    # Alone with bots the person has no Ready clock; away, it has one.
    assert TableState.from_dict(table.state).seat(0).ready_deadline is None  # type: ignore[union-attr]
    table_services.table_disconnect(user=alice, room=room)
    for _timer in range(3):  # the bots' Ready deadline, then the person's
        state = TableState.from_dict(Table.objects.get(pk=table.pk).state)
        if state.deadline is None:
            break
        monkeypatch.setattr(table_store, "clock", lambda at=state.deadline: at)
        table_services.table_timeout(
            table_id=table.pk, version=state.version, phase=state.phase.value
        )

    room.refresh_from_db()
    assert room.status == RoomStatus.CLOSED
    assert not Seat.objects.filter(room=room).exists()


@requires_postgresql
@pytest.mark.parametrize("attempt", range(3))
def test_a_player_joining_as_the_last_person_leaves_either_sits_or_is_refused(
    transactional_db: None, make_player: MakePlayer, attempt: int
) -> None:
    alice, bob = make_player(), make_player()
    room = room_create(owner=alice, name="Bots", base_score=100, seats=4, bots=2)

    results = race(lambda: room_leave(user=alice), lambda: room_join(user=bob, room_id=room.pk))

    room.refresh_from_db()
    joined = results[1]
    if isinstance(joined, Seat):  # bob sat down first: the room lives on with him and the bots
        assert room.status == RoomStatus.OPEN and people_of(room) == [bob.pk]
        assert bots_of(room) == 2
    else:  # alice left first: the room closed, and bob was refused with a reason
        assert isinstance(joined, errors.RoomClosed), results
        assert room.status == RoomStatus.CLOSED and not Seat.objects.filter(room=room).exists()
    assert ledger_audit().ok and total_coins() == 0


# The list, and the name of a room opened without one.


def test_the_lobby_lists_rooms_where_a_person_sits_and_the_players_own(
    alice: User, bob: User, carol: User
) -> None:
    with_people = room_create(owner=alice, name="Busy", base_score=100, seats=4)
    bobs_empty = room_create(owner=bob, name="Empty", base_score=100, seats=4)
    room_leave(user=bob)

    assert list(room_list(listed_for=carol)) == [with_people]
    assert list(room_list(listed_for=bob)) == [with_people, bobs_empty]
    assert room_page(listed_for=carol).total == 1
    assert len(room_list()) == 2  # the API's list is unchanged


def test_a_rooms_row_counts_its_people(alice: User, bob: User) -> None:
    room = room_create(owner=alice, name="Mixed", base_score=100, seats=4, bots=2)
    room_join(user=bob, room_id=room.pk)

    row = room_list().get(pk=room.pk)

    assert row.people == 2 and row.seats_taken == 4


def test_a_room_opened_without_a_name_is_named_after_its_owner(
    make_player: MakePlayer, alice: User
) -> None:
    room = room_create(owner=alice, base_score=100, seats=4)
    assert room.name == "alice 的桌 Table" == default_room_name(owner=alice)

    long_name = make_player(username="x" * 150)
    assert len(default_room_name(owner=long_name)) <= 40
    assert room_create(owner=long_name, base_score=1, seats=2).name.startswith("xxx")
    with pytest.raises(errors.InvalidRoomName):  # a blank name given is still refused
        room_create(owner=make_player(), name="  ", base_score=100, seats=4)


# The seat banner: in a round, or between rounds.


def test_seat_in_round_is_true_from_the_deal_to_the_settlement(alice: User, bob: User) -> None:
    room = room_create(owner=alice, name="Two", base_score=100, seats=2)
    room_join(user=bob, room_id=room.pk)
    assert not seat_in_round(user=alice, room_id=room.pk)

    table_services.table_ready(user=alice, room=room)
    assert not seat_in_round(user=alice, room_id=room.pk)
    table_services.table_ready(user=bob, room=room)

    assert seat_in_round(user=alice, room_id=room.pk)
    assert seat_in_round(user=bob, room_id=room.pk)
    assert not seat_in_round(user=alice, room_id=987_654)


def _state(phase: Phase, *, in_round: bool) -> TableState:
    return TableState(
        capacity=4,
        config=DEFAULT_CONFIG,
        phase=phase,
        seats=(
            SeatState("7", 0, in_round=in_round),
            SeatState("8", 1, in_round=in_round, bot=True),
        ),
    )


def test_a_round_starting_or_settling_is_told_to_the_people_only() -> None:
    waiting = _state(Phase.WAITING, in_round=False)
    dealing = _state(Phase.DEALING, in_round=True)
    arranging = _state(Phase.ARRANGING, in_round=True)
    settled = _state(Phase.SETTLED, in_round=True)

    assert round_changes(waiting, dealing) == {7: True}
    assert round_changes(dealing, arranging) == {}  # still in the round
    assert round_changes(arranging, settled) == {7: False}
    assert round_changes(settled, settled) == {}

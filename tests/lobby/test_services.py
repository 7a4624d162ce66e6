"""The lobby's services: what each does, what each refuses (changing nothing), the events they
send after commit, the database's own guarantees, and races on PostgreSQL."""

import json
import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import IntegrityError, connection, connections, transaction
from django.utils import translation

from accounts.models import ECONOMY_BOUNDS, User
from accounts.selectors import wallet_balance
from accounts.services import economy_settings_get_or_create
from games.live.matches import InvalidMatchTables
from games.models import RuleConfiguration
from games.rules.config import RuleConfig
from lobby import errors
from lobby.matchmaking import QUICK_JOIN_ROOM_NAME, room_quick_join
from lobby.models import CODE_ALPHABET, MAX_BASE_SCORE, Room, RoomStatus, Seat
from lobby.services import room_close, room_create, room_join, room_join_by_code, room_leave
from shisanshui.errors import ClientError, MalformedMessage, RateLimitedError
from tests.lobby.conftest import MakePlayer, lobby_counts, room_state

requires_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="races need PostgreSQL's row locks"
)


def seat_of(user: User) -> tuple[int, int] | None:
    seat = Seat.objects.filter(user=user).first()
    return (seat.room_id, seat.position) if seat else None


def open_room(owner: User, **fields: Any) -> Room:
    values = {"name": "Table", "base_score": 100, "seats": 4, **fields}
    return room_create(owner=owner, **values)


# Creating a room.


def test_create_opens_a_room_and_seats_its_creator(alice: User, rules: RuleConfiguration) -> None:
    room = room_create(owner=alice, name="  Friday night  ", base_score=100, seats=3)

    room.refresh_from_db()
    assert room.name == "Friday night"
    assert (room.rules, room.base_score, room.seats) == (rules, 100, 3)
    assert room.status == RoomStatus.OPEN and room.closed_at is None
    assert room.owner == alice
    assert not room.is_private and room.code is None
    assert seat_of(alice) == (room.pk, 0)
    assert wallet_balance(user=alice) == 100_000  # sitting down costs nothing


def test_7_4_entry_minimum_is_max_special_water_times_base_score_times_3(alice: User) -> None:
    assert open_room(alice, base_score=100).entry_minimum == 108 * 100 * 3 == 32_400


def test_7_4_entry_minimum_uses_the_rooms_base_score_not_the_configurations(
    alice: User, rules: RuleConfiguration
) -> None:
    rules.base_score = 500
    rules.save()

    assert open_room(alice, base_score=10).entry_minimum == 108 * 10 * 3


def test_7_4_entry_minimum_follows_the_rooms_configuration(alice: User) -> None:
    config = RuleConfig.from_dict({"specials": {"supreme_dragon": {"enabled": False}}})
    custom = RuleConfiguration.from_engine(config, name="No supreme dragon")

    room = open_room(alice, rules=custom, base_score=100)

    assert room.rules == custom
    assert room.entry_minimum == 36 * 100 * 3  # the dragon is now the highest enabled special


def test_a_private_room_gets_a_six_character_code_without_ambiguous_letters(alice: User) -> None:
    room = open_room(alice, private=True)

    assert room.is_private
    assert len(room.code) == 6
    assert set(room.code) <= set(CODE_ALPHABET)
    assert not set(room.code) & set("01ILO")


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"name": ""}, errors.InvalidRoomName),
        ({"name": "   "}, errors.InvalidRoomName),
        ({"name": "x" * 41}, errors.InvalidRoomName),
        ({"name": "tab\there"}, errors.InvalidRoomName),
        ({"seats": 1}, errors.InvalidSeatCount),
        ({"seats": 7}, errors.InvalidSeatCount),
        ({"seats": 5}, errors.TooManySeats),  # the default rules' deck seats 4
        ({"seats": True}, errors.InvalidSeatCount),
        ({"seats": "4"}, errors.InvalidSeatCount),
        ({"base_score": 0}, errors.InvalidBaseScore),
        ({"base_score": -100}, errors.InvalidBaseScore),
        ({"base_score": MAX_BASE_SCORE + 1}, errors.InvalidBaseScore),
        ({"base_score": 2.5}, errors.InvalidBaseScore),
    ],
)
def test_create_refuses_bad_input_and_writes_nothing(
    alice: User, fields: dict[str, Any], error: type[errors.LobbyError]
) -> None:
    before = lobby_counts()

    with pytest.raises(error):
        open_room(alice, **fields)

    assert lobby_counts() == before


def test_the_largest_base_score_is_accepted(make_player: MakePlayer) -> None:
    # More than a day's sign-up grants by default: this test raises the ceiling to its bound.
    economy = economy_settings_get_or_create()
    economy.mint_ceiling_signup = ECONOMY_BOUNDS["mint_ceiling_signup"]
    economy.save()
    rich = make_player(coins=108 * MAX_BASE_SCORE * 3)

    assert open_room(rich, base_score=MAX_BASE_SCORE).base_score == MAX_BASE_SCORE


def test_create_while_seated_is_refused(alice: User) -> None:
    first = open_room(alice, name="First")
    before = lobby_counts()

    with pytest.raises(errors.AlreadySeated, match="First"):
        open_room(alice, name="Second")

    assert lobby_counts() == before
    assert seat_of(alice) == (first.pk, 0)


def test_create_without_the_entry_minimum_says_what_is_needed(make_player: MakePlayer) -> None:
    poor = make_player(coins=1_000)
    before = lobby_counts()

    with pytest.raises(errors.InsufficientCoins) as caught:
        open_room(poor, base_score=100)

    assert caught.value.message == (
        "This room needs at least 32,400 coins to sit down; you have 1,000."
    )
    with translation.override("zh-hans"):
        assert "32,400" in caught.value.message and "1,000" in caught.value.message
        assert "金币" in caught.value.message
    assert lobby_counts() == before


def test_create_without_a_default_configuration_is_refused(
    alice: User, rules: RuleConfiguration
) -> None:
    rules.is_default = False
    rules.save()

    with pytest.raises(errors.NoDefaultRules):
        open_room(alice)

    assert lobby_counts() == (0, 0)


def test_create_with_an_unusable_configuration_is_refused(alice: User) -> None:
    broken = RuleConfiguration.objects.create(name="No special hands stored")

    with pytest.raises(errors.InvalidRules):
        open_room(alice, rules=broken)

    assert lobby_counts() == (0, 0)


# Joining.


def test_join_takes_the_lowest_free_seat_and_bumps_the_version(
    alice: User, bob: User, carol: User
) -> None:
    room = open_room(alice)
    version = room.version

    assert room_join(user=bob, room_id=room.pk).position == 1
    room_leave(user=bob)
    room_join(user=carol, room_id=room.pk)

    assert seat_of(carol) == (room.pk, 1)
    room.refresh_from_db()
    assert room.version == version + 3


def test_a_private_room_is_joined_with_its_code_in_any_case(alice: User, bob: User) -> None:
    room = open_room(alice, private=True)

    room_join(user=bob, room_id=room.pk, code=f"  {room.code.lower()} ")

    assert seat_of(bob) == (room.pk, 1)


def test_join_by_code_finds_the_open_private_room(alice: User, bob: User) -> None:
    room = open_room(alice, private=True)

    seat = room_join_by_code(user=bob, code=room.code.lower())

    assert (seat.room_id, seat.position) == (room.pk, 1)


def test_join_by_code_ignores_a_public_room(alice: User, bob: User) -> None:
    open_room(alice)

    with pytest.raises(errors.RoomNotFound):
        room_join_by_code(user=bob, code="")


def refused_join(
    user: User, room: Room | None, error: type[errors.LobbyError], join: Callable[[], Any]
) -> errors.LobbyError:
    """Run a join that must be refused with `error`, and check it changed nothing."""
    before = lobby_counts()
    state = room_state(room) if room else None
    balance = wallet_balance(user=user)

    with pytest.raises(error) as caught:
        join()

    assert lobby_counts() == before
    if room:
        assert room_state(room) == state
    assert wallet_balance(user=user) == balance
    return caught.value


def test_join_an_unknown_room_is_refused(bob: User) -> None:
    refused_join(bob, None, errors.RoomNotFound, lambda: room_join(user=bob, room_id=999_999))


def test_join_a_closed_room_is_refused(alice: User, bob: User) -> None:
    room = open_room(alice)
    room_leave(user=alice)
    room_close(user=alice, room_id=room.pk)

    refused_join(bob, room, errors.RoomClosed, lambda: room_join(user=bob, room_id=room.pk))


def test_join_a_full_room_is_refused(alice: User, bob: User, carol: User) -> None:
    room = open_room(alice, seats=2)
    room_join(user=bob, room_id=room.pk)

    refused_join(carol, room, errors.RoomFull, lambda: room_join(user=carol, room_id=room.pk))


@pytest.mark.parametrize("code", ["", "WRONG1", "ABC"])
def test_join_a_private_room_with_a_wrong_code_is_refused(
    alice: User, bob: User, code: str
) -> None:
    room = open_room(alice, private=True)

    refused_join(
        bob, room, errors.WrongRoomCode, lambda: room_join(user=bob, room_id=room.pk, code=code)
    )


def test_join_by_an_unknown_code_is_refused(alice: User, bob: User) -> None:
    room = open_room(alice, private=True)
    wrong = "".join("A" if c != "A" else "B" for c in room.code)

    refused_join(bob, room, errors.RoomNotFound, lambda: room_join_by_code(user=bob, code=wrong))


def test_join_a_second_room_while_seated_is_refused(alice: User, bob: User) -> None:
    mine = open_room(bob, name="Bob's")
    room = open_room(alice)

    error = refused_join(
        bob, room, errors.AlreadySeated, lambda: room_join(user=bob, room_id=room.pk)
    )

    assert "Bob's" in error.message
    assert seat_of(bob) == (mine.pk, 0)


def test_join_the_room_one_sits_in_is_refused(alice: User) -> None:
    room = open_room(alice)

    refused_join(alice, room, errors.AlreadySeated, lambda: room_join(user=alice, room_id=room.pk))


def test_join_without_the_entry_minimum_is_refused(alice: User, make_player: MakePlayer) -> None:
    room = open_room(alice, base_score=100)
    poor = make_player(coins=32_399)

    error = refused_join(
        poor, room, errors.InsufficientCoins, lambda: room_join(user=poor, room_id=room.pk)
    )

    assert "32,400" in error.message and "32,399" in error.message


def test_exactly_the_entry_minimum_is_enough(alice: User, make_player: MakePlayer) -> None:
    room = open_room(alice, base_score=100)
    just_enough = make_player(coins=32_400)

    room_join(user=just_enough, room_id=room.pk)

    assert seat_of(just_enough) == (room.pk, 1)


# Quick-join.


def test_quick_join_opens_a_public_room_with_the_default_rules_when_none_fits(
    alice: User, rules: RuleConfiguration
) -> None:
    seat = room_quick_join(user=alice, base_score=50, seats=3)

    room = seat.room
    assert (room.rules, room.base_score, room.seats, room.is_private) == (rules, 50, 3, False)
    assert room.owner == alice and room.name == QUICK_JOIN_ROOM_NAME
    assert seat.position == 0


def test_quick_join_fills_the_first_fitting_room(
    alice: User, bob: User, carol: User, make_player: MakePlayer
) -> None:
    first = room_quick_join(user=alice, base_score=100, seats=2).room
    assert room_quick_join(user=bob, base_score=100, seats=2).room == first

    second = room_quick_join(user=carol, base_score=100, seats=2).room  # the first is full
    dave = make_player()

    assert second != first
    assert room_quick_join(user=dave, base_score=100, seats=2).room == second


def test_quick_join_passes_over_rooms_that_do_not_fit(
    alice: User, bob: User, make_player: MakePlayer
) -> None:
    other_rules = RuleConfiguration.from_engine(RuleConfig(), name="Other")
    owners = [make_player() for _ in range(4)]
    unfit = [
        open_room(owners[0], base_score=100, seats=4, private=True),
        open_room(owners[1], base_score=100, seats=4, rules=other_rules),
        open_room(owners[2], base_score=200, seats=4),
        open_room(owners[3], base_score=100, seats=3),
    ]
    closed = open_room(alice, base_score=100, seats=4)
    room_leave(user=alice)
    room_close(user=alice, room_id=closed.pk)

    room = room_quick_join(user=bob, base_score=100, seats=4).room

    assert room not in [*unfit, closed]
    assert Room.objects.count() == 6


def test_quick_join_passes_over_a_room_the_player_cannot_afford(
    alice: User, make_player: MakePlayer, rules: RuleConfiguration
) -> None:
    expensive = open_room(alice, base_score=100, seats=4)
    # The default rules change: new tables at base 100 need less than the existing one.
    rules.special_hands.filter(special="supreme_dragon").update(enabled=False)
    player = make_player(coins=20_000)

    room = room_quick_join(user=player, base_score=100, seats=4).room

    assert room != expensive
    assert room.entry_minimum == 36 * 100 * 3


def test_quick_join_without_the_entry_minimum_is_refused(make_player: MakePlayer) -> None:
    poor = make_player(coins=100)

    refused_join(
        poor,
        None,
        errors.InsufficientCoins,
        lambda: room_quick_join(user=poor, base_score=100, seats=4),
    )


@pytest.mark.parametrize(
    ("base_score", "seats", "error"),
    [
        (0, 4, errors.InvalidBaseScore),
        (100, 7, errors.InvalidSeatCount),
        (100, 5, errors.TooManySeats),
    ],
)
def test_quick_join_refuses_bad_input(
    alice: User, base_score: int, seats: int, error: type[errors.LobbyError]
) -> None:
    refused_join(
        alice, None, error, lambda: room_quick_join(user=alice, base_score=base_score, seats=seats)
    )


def test_quick_join_while_seated_is_refused(alice: User) -> None:
    room = open_room(alice)

    refused_join(
        alice,
        room,
        errors.AlreadySeated,
        lambda: room_quick_join(user=alice, base_score=100, seats=4),
    )


# Leaving.


def test_leave_frees_the_seat_and_keeps_the_room_open(alice: User, bob: User) -> None:
    room = open_room(alice)
    room_join(user=bob, room_id=room.pk)

    assert room_leave(user=bob) == room

    assert seat_of(bob) is None
    room.refresh_from_db()
    assert room.status == RoomStatus.OPEN and room.owner == alice


def test_the_last_player_leaving_leaves_the_room_open_with_its_owner(alice: User) -> None:
    room = open_room(alice)

    room_leave(user=alice)

    room.refresh_from_db()
    assert room.status == RoomStatus.OPEN
    assert room.owner == alice
    assert not Seat.objects.filter(room=room).exists()


def test_ownership_passes_to_the_player_seated_longest(
    alice: User, bob: User, carol: User, make_player: MakePlayer
) -> None:
    room = open_room(alice)
    room_join(user=bob, room_id=room.pk)  # seat 1
    room_join(user=carol, room_id=room.pk)  # seat 2
    room_leave(user=bob)
    dave = make_player()
    room_join(user=dave, room_id=room.pk)  # seat 1 again, but seated after carol

    room_leave(user=alice)

    room.refresh_from_db()
    assert room.owner == carol


def test_leave_when_not_seated_is_refused(alice: User) -> None:
    refused_join(alice, None, errors.NotSeated, lambda: room_leave(user=alice))


# Closing.


def test_the_owner_closes_an_empty_room(alice: User) -> None:
    room = open_room(alice, private=True)
    room_leave(user=alice)

    room_close(user=alice, room_id=room.pk)

    room.refresh_from_db()
    assert room.status == RoomStatus.CLOSED
    assert room.closed_at is not None


def test_a_closed_rooms_code_is_free_again(alice: User) -> None:
    room = open_room(alice, private=True)
    room_leave(user=alice)
    room_close(user=alice, room_id=room.pk)

    again = Room.objects.create(
        name="Reuse",
        rules=room.rules,
        base_score=100,
        seats=4,
        owner=alice,
        is_private=True,
        code=room.code,
        entry_minimum=0,
    )

    assert again.code == room.code


@pytest.mark.parametrize(
    ("who", "seated", "error"),
    [
        ("owner", True, errors.RoomNotEmpty),
        ("other", False, errors.NotRoomOwner),
    ],
)
def test_close_is_refused_to_others_and_while_someone_sits(
    alice: User, bob: User, who: str, seated: bool, error: type[errors.LobbyError]
) -> None:
    room = open_room(alice)
    if not seated:
        room_leave(user=alice)
    user = alice if who == "owner" else bob
    state = room_state(room)

    with pytest.raises(error):
        room_close(user=user, room_id=room.pk)

    assert room_state(room) == state


def test_closing_twice_or_an_unknown_room_is_refused(alice: User) -> None:
    room = open_room(alice)
    room_leave(user=alice)
    room_close(user=alice, room_id=room.pk)

    with pytest.raises(errors.RoomClosed):
        room_close(user=alice, room_id=room.pk)
    with pytest.raises(errors.RoomNotFound):
        room_close(user=alice, room_id=999_999)


# Messages.


def refusal_classes(base: type[ClientError] = ClientError) -> list[type[ClientError]]:
    """Every refusal a client can be given: the leaves under ClientError (the lobby's, the
    duplicate match's, the sockets' and the rate limit's)."""
    below = base.__subclasses__()
    return [leaf for cls in below for leaf in refusal_classes(cls)] if below else [base]


def test_every_error_has_a_code_a_status_and_a_message_in_both_languages() -> None:
    classes = refusal_classes()
    assert {errors.RoomFull, InvalidMatchTables, MalformedMessage, RateLimitedError} <= set(classes)
    params = {
        "max": 40,
        "seats": 5,
        "base_score": 0,
        "needed": "1",
        "balance": "0",
        "room": "R",
        "type": "x",
        "detail": "d",
        "bots": 9,
        "minutes": 5,
        "rules": "R",
        "variant": "laizi",
        "level": "godlike",
        "levels": "easy, normal, strong, expert",
        "tables": 5,
        "rounds": 40,
        "deals": 99,
    }

    def make(cls: type[ClientError]) -> ClientError:
        if cls is RateLimitedError:
            return cls(retry_after=7)
        if cls is errors.UnknownVariant:
            return cls()
        return cls(**params)

    assert len(classes) >= 15
    assert len({cls.code for cls in classes}) == len(classes)
    for cls in classes:
        assert cls.status in (400, 403, 404, 409, 429)
        with translation.override("en"):  # whatever an earlier test left active
            english = make(cls).message
        with translation.override("zh-hans"):
            chinese = make(cls).message
        assert english != chinese, cls
        assert any("\u4e00" <= ch <= "\u9fff" for ch in chinese), cls


# Events, sent once the transaction commits.


class RecordingLayer:
    def __init__(self) -> None:
        self.sent: list[tuple[str, dict[str, Any]]] = []

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        if not group.startswith("table."):  # the lobby's messages, not the table's
            self.sent.append((group, message))


@pytest.fixture
def layer(monkeypatch: pytest.MonkeyPatch) -> RecordingLayer:
    recording = RecordingLayer()
    monkeypatch.setattr("shisanshui.publish.get_channel_layer", lambda: recording)
    return recording


def events(layer: RecordingLayer) -> list[tuple[str, int, int]]:
    return [(m["event"], m["room"]["id"], m["room"]["seats_taken"]) for _g, m in layer.sent]


def test_each_change_sends_one_event_with_the_rooms_row_after_commit(
    alice: User, bob: User, layer: RecordingLayer, django_capture_on_commit_callbacks: Any
) -> None:
    with django_capture_on_commit_callbacks(execute=True):
        room = open_room(alice, private=True)
        assert layer.sent == []  # nothing before the commit
    with django_capture_on_commit_callbacks(execute=True):
        room_join(user=bob, room_id=room.pk, code=room.code)
    with django_capture_on_commit_callbacks(execute=True):
        room_leave(user=bob)
        room_leave(user=alice)
    with django_capture_on_commit_callbacks(execute=True):
        room_close(user=alice, room_id=room.pk)

    assert events(layer) == [
        ("room.created", room.pk, 1),
        ("room.updated", room.pk, 2),
        ("room.updated", room.pk, 1),
        ("room.updated", room.pk, 0),
        ("room.closed", room.pk, 0),
    ]
    assert {group for group, _m in layer.sent} == {"lobby"}
    versions = [m["room"]["version"] for _g, m in layer.sent]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    for _group, message in layer.sent:
        assert message["type"] == "lobby.event"
        assert message["room"]["private"] is True
        assert "code" not in message["room"]
        assert room.code not in repr(message)


def test_a_freed_seat_sends_the_row_a_fresh_read_gives(
    alice: User,
    bob: User,
    carol: User,
    layer: RecordingLayer,
    django_capture_on_commit_callbacks: Any,
) -> None:
    """The seats freed for the table (`seats_release`, in the table's command) and a seat
    the table never had (`seat_release`) build the lobby's row from what they read under the
    room's lock: it is the row a read after the commit gives, ownership passed and the
    bot, the table's watchers and the room's version included."""
    from games.models import Table
    from lobby.selectors import room_get, room_row
    from lobby.services import seat_release, seats_release

    room = open_room(alice, bots=1)
    room_join(user=bob, room_id=room.pk)
    room_join(user=carol, room_id=room.pk)
    if not Table.objects.filter(room=room).update(watchers=3):  # a bot's room has its table
        Table.objects.create(room=room, state={"unread": True}, watchers=3)
    layer.sent.clear()

    def fresh_row() -> dict[str, Any]:
        fresh = room_get(room_id=room.pk)
        assert fresh is not None
        return json_row(room_row(room=fresh))

    rows = []
    with django_capture_on_commit_callbacks(execute=True), transaction.atomic():
        assert seats_release(room_id=room.pk, user_ids=[alice.pk, carol.pk]) is None
    rows.append(fresh_row())
    with django_capture_on_commit_callbacks(execute=True):
        seat_release(room=room, user_id=bob.pk)
    rows.append(fresh_row())

    assert [json_row(m["room"]) for _g, m in layer.sent] == rows
    first, second = rows
    assert first["owner"] == "bob" and first["seats_taken"] == 2 and first["people"] == 1
    assert first["watchers"] == 3
    assert second["owner"] == "bob" and second["seats_taken"] == 1 and second["people"] == 0
    assert second["version"] == first["version"] + 1


def json_row(row: Any) -> Any:
    return json.loads(json.dumps(row))


def test_a_refused_request_sends_nothing(
    alice: User,
    bob: User,
    carol: User,
    layer: RecordingLayer,
    django_capture_on_commit_callbacks: Any,
) -> None:
    room = open_room(alice, seats=2)
    room_join(user=bob, room_id=room.pk)

    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        with pytest.raises(errors.RoomFull):
            room_join(user=carol, room_id=room.pk)
        with pytest.raises(errors.RoomNotEmpty):
            room_close(user=alice, room_id=room.pk)

    assert callbacks == []


def test_a_failing_channel_layer_does_not_undo_the_change(
    alice: User, monkeypatch: pytest.MonkeyPatch, django_capture_on_commit_callbacks: Any
) -> None:
    class Broken:
        async def group_send(self, group: str, message: dict[str, Any]) -> None:
            raise ConnectionError("redis is down")

    monkeypatch.setattr("shisanshui.publish.get_channel_layer", lambda: Broken())

    with django_capture_on_commit_callbacks(execute=True):
        room = open_room(alice)

    assert Room.objects.filter(pk=room.pk).exists()


# What the database itself refuses, going around the services.


def raw_room(owner: User, rules: RuleConfiguration, **fields: Any) -> Room:
    values = {
        "name": "Raw",
        "rules": rules,
        "base_score": 100,
        "seats": 4,
        "owner": owner,
        "entry_minimum": 0,
        **fields,
    }
    return Room.objects.create(**values)


@pytest.mark.parametrize(
    "fields",
    [
        {"seats": 7},
        {"seats": 1},
        {"base_score": 0},
        {"base_score": MAX_BASE_SCORE + 1},
        {"entry_minimum": -1},
        {"is_private": True},
        {"code": "ABCDEF"},
        {"status": RoomStatus.CLOSED},
    ],
)
def test_the_database_refuses_an_inconsistent_room(
    alice: User, rules: RuleConfiguration, fields: dict[str, Any]
) -> None:
    with pytest.raises(IntegrityError), transaction.atomic():
        raw_room(alice, rules, **fields)


def test_the_database_keeps_codes_unique_among_open_rooms(
    alice: User, bob: User, rules: RuleConfiguration
) -> None:
    raw_room(alice, rules, is_private=True, code="ABCDEF")

    with pytest.raises(IntegrityError), transaction.atomic():
        raw_room(bob, rules, is_private=True, code="ABCDEF")


def test_the_database_seats_a_player_once_and_a_position_once(
    alice: User, bob: User, rules: RuleConfiguration
) -> None:
    room = raw_room(alice, rules)
    other = raw_room(alice, rules)
    Seat.objects.create(room=room, user=alice, position=0)

    with pytest.raises(IntegrityError, match="one_table_per_player"), transaction.atomic():
        Seat.objects.create(room=other, user=alice, position=0)
    with pytest.raises(IntegrityError, match="position_taken_once"), transaction.atomic():
        Seat.objects.create(room=room, user=bob, position=0)
    with pytest.raises(IntegrityError), transaction.atomic():
        Seat.objects.create(room=room, user=bob, position=6)


# Races, on PostgreSQL: each thread has its own database connection.


def race(*calls: Callable[[], Any]) -> list[Any]:
    """Run the calls at the same moment in threads; each result or the exception raised."""
    barrier = threading.Barrier(len(calls))
    results: list[Any] = [None] * len(calls)

    def run(index: int, call: Callable[[], Any]) -> None:
        try:
            barrier.wait()
            results[index] = call()
        except Exception as error:  # the outcome under test
            results[index] = error
        finally:
            connections.close_all()

    threads = [threading.Thread(target=run, args=(i, c)) for i, c in enumerate(calls)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return results


@requires_postgresql
@pytest.mark.parametrize("attempt", range(3))
def test_two_players_racing_for_the_last_seat_one_gets_it(
    transactional_db: None, make_player: MakePlayer, attempt: int
) -> None:
    owner, bob, carol = make_player(), make_player(), make_player()
    room = open_room(owner, seats=2)

    results = race(
        lambda: room_join(user=bob, room_id=room.pk), lambda: room_join(user=carol, room_id=room.pk)
    )

    assert sorted(type(r).__name__ for r in results) == ["RoomFull", "Seat"]
    assert Seat.objects.filter(room=room).count() == 2


@requires_postgresql
def test_one_player_racing_into_two_rooms_gets_one_seat(
    transactional_db: None, make_player: MakePlayer
) -> None:
    owner1, owner2, bob = make_player(), make_player(), make_player()
    first, second = open_room(owner1), open_room(owner2)

    results = race(
        lambda: room_join(user=bob, room_id=first.pk),
        lambda: room_join(user=bob, room_id=second.pk),
    )

    assert sorted(type(r).__name__ for r in results) == ["AlreadySeated", "Seat"]
    assert Seat.objects.filter(user=bob).count() == 1


@requires_postgresql
def test_players_quick_joining_together_sit_at_the_same_new_table(
    transactional_db: None, make_player: MakePlayer
) -> None:
    players = [make_player() for _ in range(3)]

    results = race(*[lambda p=p: room_quick_join(user=p, base_score=100, seats=4) for p in players])

    assert all(isinstance(r, Seat) for r in results), results
    assert len({r.room_id for r in results}) == 1
    assert sorted(r.position for r in results) == [0, 1, 2]
    assert Room.objects.count() == 1

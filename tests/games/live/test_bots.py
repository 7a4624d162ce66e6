"""Bot players (games.live.bots): seated and funded through the lobby and the ledger, playing
through
the table's own services.

Transactional tests, so that ``on_commit`` fires: bot tasks are recorded, never run, and no
deadline poller runs; the tests call :func:`games.live.bots.bot_act` themselves, as the task
would. The clock is ``table_store.clock`` (an hour in the past, moved by hand) and the
shuffle is seeded.
``BOT_DELAY_SCALE`` is 0 unless a test checks the delays.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth import authenticate
from django.db.models import Sum
from django.test import RequestFactory
from django.utils import timezone

from accounts.models import (
    Account,
    AccountKind,
    MintDay,
    MintKind,
    Transaction,
    TransactionKind,
    User,
)
from accounts.selectors import ledger_audit, wallet_balance
from games.live import bots, tasks
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import services as table_services
from games.live import store as table_store
from games.models import Round, RoundPlayer, RuleConfiguration, Table
from games.rules.advice import special_advice
from games.rules.cards import parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.table import machine
from games.table.state import Phase, SeatState, TableState
from lobby.errors import InvalidBotCount, LobbyError
from lobby.matchmaking import room_quick_join
from lobby.models import Room, Seat
from lobby.services import bots_fill, room_create, room_join, room_leave
from tests.games.table_helpers import (
    FAST_RULES,
    fast_rules,
    make_player,
    settlements_of,
    state_of,
    table_id,
)

pytestmark = pytest.mark.django_db(transaction=True)

SEED = 11


@dataclass
class World:
    clock: float
    bot_tasks: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[World]:
    settings.BOT_DELAY_SCALE = 0
    w = World(clock=time.time() - 3600)
    monkeypatch.setattr(table_store, "clock", lambda: w.clock)
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, message: None)
    monkeypatch.setattr(tasks.bot_act, "apply_async", lambda **kw: w.bot_tasks.append(kw))
    rng = random.Random(SEED)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)
    yield w


def total_coins() -> int:
    return Account.objects.aggregate(total=Sum("balance"))["total"] or 0


def bots_in(room: Room) -> list[User]:
    return list(
        User.objects.filter(is_bot=True, pk__in=Seat.objects.filter(room=room).values("user"))
    )


def bot_players(room: Room) -> set[str]:
    state = state_of(room)
    return {s.player for s in state.seats if s.bot}


def drive_bots(room: Room) -> int:
    """Let every bot do what it has to do, as its task would, until none has anything left;
    returns how many actions they took."""
    acted = 0
    for _ in range(20):
        state = state_of(room)
        ids = bot_players(room)
        pending = [p for p in sorted(ids) if bots.bot_action(state, player=p)]
        if not pending:
            return acted
        for player in pending:
            result = bots.bot_act(
                table_id=table_id(room), user_id=int(player), version=state_of(room).version
            )
            acted += result is not None
    raise AssertionError("the bots never ran out of things to do")


def timeout(world: World, room: Room) -> None:
    """Move the clock to the table's deadline and let its timeout act."""
    state = state_of(room)
    assert state.deadline is not None
    world.clock = state.deadline
    table_services.table_timeout(
        table_id=table_id(room), version=state.version, phase=state.phase.value
    )


def submit_best(room: Room, user: User) -> None:
    from games.rules.arrange import best_arrangement
    from games.rules.cards import format_cards

    state = state_of(room)
    seat = state.seat_of(str(user.pk))
    assert seat is not None and seat.hand is not None
    if seat.choosing:
        table_services.table_choose_special(user=user, room=room, play_special=False)
    best = best_arrangement(seat.hand, state.config)
    table_services.table_submit(
        user=user,
        room=room,
        front=format_cards(best.front),
        middle=format_cards(best.middle),
        back=format_cards(best.back),
    )


def bot_room(human: User, *, seats: int = 4, count: int | None = None) -> Room:
    return room_create(
        owner=human,
        name="Bots",
        base_score=10,
        seats=seats,
        rules=RuleConfiguration.objects.filter(name="Fast (tests)").first() or fast_rules(),
        bots=seats - 1 if count is None else count,
    )


def grants() -> list[Transaction]:
    return list(Transaction.objects.filter(kind=TransactionKind.GRANT).order_by("pk"))


def fundings() -> list[Transaction]:
    """The house's payments to bots."""
    return list(Transaction.objects.filter(kind=TransactionKind.BOT_FUNDING).order_by("pk"))


def house_balance() -> int:
    return int(
        Account.objects.filter(kind=AccountKind.HOUSE).values_list("balance", flat=True).first()
        or 0
    )


# Seating and funding.


def test_bots_take_the_seats_at_the_table_funded_from_the_house(world: World) -> None:
    alice = make_player("alice")
    signup_grants = len(grants())

    room = bot_room(alice)

    seated = bots_in(room)
    assert len(seated) == 3
    assert Seat.objects.filter(room=room).count() == 4
    state = state_of(room)
    assert {s.player for s in state.seats} == {str(u.pk) for u in [alice, *seated]}
    assert all(s.connected for s in state.seats)
    assert len(grants()) == signup_grants  # the mint pays no bot
    new_grants = fundings()
    assert len(new_grants) == 3
    for bot in seated:
        assert bot.username.startswith("bot-")
        assert (bot.first_name, bot.last_name) in bots.BOT_NICKNAMES
        assert not bot.has_usable_password()
        # django-axes (the first backend) needs the request of the log-in attempt.
        attempt = RequestFactory().post("/accounts/login/")
        assert authenticate(attempt, username=bot.username, password="") is None
        assert wallet_balance(user=bot) == room.entry_minimum
    for posted in new_grants:
        assert posted.reason and posted.reference == f"room:{room.pk}"
        assert sorted(posted.entries.values_list("account__kind", "amount")) == [
            ("house", -room.entry_minimum),
            ("wallet", room.entry_minimum),
        ]
    # The house held nothing: the mint topped it up by exactly what the bots needed, counted
    # against today's bot-funding ceiling.
    topups = Transaction.objects.filter(kind=TransactionKind.HOUSE_FUNDING)
    assert topups.count() == 3 and house_balance() == 0
    assert MintDay.objects.get(kind=MintKind.BOT_FUNDING).minted == 3 * room.entry_minimum
    assert ledger_audit().ok
    assert total_coins() == 0
    assert room.owner_id == alice.pk
    assert world.bot_tasks == []  # nobody pressed Ready: the bots have nothing to do


def test_idle_bots_are_reused_and_funded_only_when_short(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    first = bot_room(alice, seats=3)
    first_bots = {u.pk for u in bots_in(first)}
    room_leave(user=alice)
    assert bots_in(first) == []
    grants_before = len(fundings())

    second = bot_room(bob, seats=3)

    assert {u.pk for u in bots_in(second)} == first_bots
    assert User.objects.filter(is_bot=True).count() == 2
    assert len(fundings()) == grants_before  # they still hold the entry minimum
    assert ledger_audit().ok and total_coins() == 0


def test_bots_never_sit_without_a_person(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=3, count=0)
    room_leave(user=alice)

    assert bots_fill(room=room, count=2) == []
    assert Seat.objects.filter(room=room).count() == 0
    assert not User.objects.filter(is_bot=True).exists()


@pytest.mark.parametrize("value", [4, 5, -1, "2", 1.0, True, None])
def test_a_bad_bot_count_is_refused_and_changes_nothing(world: World, value: Any) -> None:
    alice = make_player("alice")
    counts = (Room.objects.count(), Seat.objects.count(), Transaction.objects.count())

    with pytest.raises(InvalidBotCount) as refused:
        room_create(owner=alice, name="Bad", base_score=10, seats=4, bots=value)

    assert refused.value.code == "invalid_bot_count" and refused.value.status == 400
    assert "0" in refused.value.message and "3" in refused.value.message
    assert (Room.objects.count(), Seat.objects.count(), Transaction.objects.count()) == counts
    assert not User.objects.filter(is_bot=True).exists()


def test_quick_join_with_bots_opens_a_table_full_of_bots(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    fast_rules()  # the default rules exist
    waiting = room_quick_join(user=bob, base_score=10, seats=3).room

    seat = room_quick_join(user=alice, base_score=10, seats=3, with_bots=True)

    assert seat.room_id != waiting.pk and seat.position == 0
    assert len(bots_in(seat.room)) == 2 and Seat.objects.filter(room=seat.room).count() == 3
    assert bots_in(waiting) == []
    assert not seat.room.is_private and seat.room.owner_id == alice.pk


def test_quick_join_refuses_a_non_boolean_with_bots(world: World) -> None:
    alice = make_player("alice")
    fast_rules()
    with pytest.raises(LobbyError):
        room_quick_join(user=alice, base_score=10, seats=3, with_bots="yes")  # type: ignore[arg-type]
    assert not Seat.objects.exists()


# Playing.


def test_bots_press_ready_only_once_every_person_has(world: World, settings: Any) -> None:
    settings.BOT_DELAY_SCALE = 1.0
    alice = make_player("alice")
    room = bot_room(alice, seats=3)

    assert drive_bots(room) == 0
    assert state_of(room).phase is Phase.WAITING

    table_services.table_ready(user=alice, room=room)

    assert len(world.bot_tasks) == 2
    state = state_of(room)
    for task in world.bot_tasks:
        table, user_id, version = task["args"]
        assert (table, version) == (table_id(room), state.version)
        assert User.objects.get(pk=user_id).is_bot
        assert 1.0 <= task["countdown"] <= 3.0
    assert drive_bots(room) == 2
    assert state_of(room).phase is Phase.DEALING


def test_one_person_and_three_bots_play_a_round_that_settles_once(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice)
    seated = bots_in(room)
    before = {u.pk: wallet_balance(user=u) for u in [alice, *seated]}

    table_services.table_ready(user=alice, room=room)
    drive_bots(room)
    assert state_of(room).phase is Phase.DEALING
    timeout(world, room)  # the deal is over
    assert state_of(room).phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING)
    drive_bots(room)
    submit_best(room, alice)
    drive_bots(room)
    assert state_of(room).phase is Phase.COMPARING
    timeout(world, room)  # the comparison is over

    rounds = list(Round.objects.filter(table__room=room))
    assert len(rounds) == 1 and rounds[0].settled_at is not None
    round_ = rounds[0]
    assert all(row.auto == "" for row in RoundPlayer.objects.filter(round=round_))
    net = {int(p["id"]): p["delta"] + p["penalty"] for p in round_.result["players"]}
    assert sum(net.values()) == 0
    assert len(settlements_of(round_.pk)) == (1 if any(net.values()) else 0)
    room.refresh_from_db()
    for user_id, balance in before.items():
        user = User.objects.get(pk=user_id)
        assert wallet_balance(user=user) == balance + net[user_id]
    assert ledger_audit().ok and total_coins() == 0
    state = state_of(room)
    assert state.phase is Phase.SETTLED and len(state.seats) == 4
    # Settled: the bots wait for the person again.
    assert drive_bots(room) == 0
    # A bot left short of the entry minimum is funded again before it presses Ready, as when it
    # sat down (a person would be sent back to the room list:
    # tests/games/live/test_entry_minimum.py).
    table_services.table_ready(user=alice, room=room)
    assert drive_bots(room) == 3
    for bot in seated:
        assert wallet_balance(user=bot) == room.entry_minimum
    assert ledger_audit().ok and total_coins() == 0


def test_bot_tasks_are_scheduled_well_before_the_deadlines(world: World, settings: Any) -> None:
    settings.BOT_DELAY_SCALE = 1.0
    alice = make_player("alice")
    room = bot_room(alice)
    table_services.table_ready(user=alice, room=room)
    drive_bots(room)
    world.bot_tasks.clear()

    timeout(world, room)

    state = state_of(room)
    assert state.arrange_deadline is not None
    assert len(world.bot_tasks) == 3
    for task in world.bot_tasks:
        countdown = task["countdown"]
        assert 0 < countdown <= (state.arrange_deadline - world.clock) / 2
        seat = state.seat_of(str(task["args"][1]))
        assert seat is not None
        if seat.choosing:
            assert countdown <= 2.0
        elif state.arrange_deadline - world.clock >= 16:
            assert 3.0 <= countdown <= 8.0


def test_duplicate_late_and_foreign_bot_tasks_do_nothing(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=2)
    (bot,) = bots_in(room)
    tid = table_id(room)
    table_services.table_ready(user=alice, room=room)
    ready_version = state_of(room).version
    assert bots.bot_act(table_id=tid, user_id=bot.pk, version=ready_version) is not None
    assert bots.bot_act(table_id=tid, user_id=bot.pk, version=ready_version) is None  # twice
    timeout(world, room)
    state = state_of(room)
    assert state.phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING)

    # Late: scheduled before the round started, it must not play the new round's hand.
    assert bots.bot_act(table_id=tid, user_id=bot.pk, version=ready_version) is None
    # Not a bot, no such table, a version from the future: nothing.
    assert bots.bot_act(table_id=tid, user_id=alice.pk, version=state.version) is None
    assert bots.bot_act(table_id=tid + 999, user_id=bot.pk, version=state.version) is None
    assert bots.bot_act(table_id=tid, user_id=bot.pk, version=state.version + 5) is None
    assert state_of(room).version == state.version

    assert drive_bots(room) >= 1
    done = state_of(room)
    assert bots.bot_act(table_id=tid, user_id=bot.pk, version=done.version) is None
    assert state_of(room).version == done.version


# Leaving.


def test_bots_leave_with_the_last_person_and_free_the_room(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice)

    room_leave(user=alice)

    assert Seat.objects.filter(room=room).count() == 0
    assert state_of(room).seats == ()
    room.refresh_from_db()
    assert room.owner_id == alice.pk  # never handed to a bot
    assert room.status == "closed"  # a room its bots left empty closes at once
    assert not Round.objects.exists()


def test_bots_wait_for_every_person_at_the_table(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    room = bot_room(alice, seats=4, count=2)
    room_join(user=bob, room_id=room.pk)

    table_services.table_ready(user=alice, room=room)
    assert drive_bots(room) == 0  # Bob has not pressed Ready
    table_services.table_ready(user=bob, room=room)
    assert drive_bots(room) == 2

    assert state_of(room).phase is Phase.DEALING
    assert len(state_of(room).round_seats) == 4


def test_bots_alone_never_start_a_round_even_when_they_pressed_ready(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=3)
    for bot in bots_in(room):  # as if a bot had pressed Ready before its person
        table_services.table_ready(user=bot, room=room)
    assert state_of(room).phase is Phase.WAITING

    room_leave(user=alice)  # the table would start a round of the two ready bots

    assert not Round.objects.exists()
    assert Seat.objects.filter(room=room).count() == 0
    assert state_of(room).seats == () and state_of(room).phase is Phase.WAITING


def test_bots_left_alone_leave_so_no_round_starts_among_them() -> None:
    config = RuleConfig.from_dict(FAST_RULES, base=DEFAULT_CONFIG)
    before = TableState(
        capacity=4,
        config=config,
        seats=(
            SeatState("1", 0, ready=True, bot=True),
            SeatState("2", 1, ready=True, bot=True),
            SeatState("3", 2, ready=True, bot=True),
            SeatState("9", 3, ready=False, ready_deadline=50.0),
        ),
    )

    # The last person leaves while every bot is ready: without the rule, a round would start.
    fixed = machine.leave(before, position=3, now=10.0)

    assert fixed.state.seats == () and fixed.state.phase is Phase.WAITING
    assert [e.type for e in fixed.events].count("left") == 4
    assert "round_start" not in [e.type for e in fixed.events]


def test_a_person_alone_with_bots_is_waited_for_until_it_drops(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice)

    timeout(world, room)  # the bots' Ready deadline: the table presses Ready for them
    state = state_of(room)
    assert state.seat_of(str(alice.pk)) is not None and state.deadline is None  # no clock
    table_services.table_disconnect(user=alice, room=room)  # away: a Ready clock after all
    timeout(world, room)  # Alice never pressed Ready

    assert Seat.objects.filter(room=room).count() == 0
    assert state_of(room).seats == ()
    assert not Round.objects.exists()


def test_a_ready_pressed_just_before_the_deadline_starts_the_round_with_the_bots(
    world: World,
) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=3)
    table_services.table_ready(user=alice, room=room)  # the bots' tasks have not run yet

    timeout(world, room)

    state = state_of(room)
    assert state.phase is Phase.DEALING and len(state.round_seats) == 3
    assert len(bots_in(room)) == 2


def test_a_slow_person_goes_back_to_the_room_list_but_the_bots_stay(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    room = bot_room(alice, seats=4, count=2)
    room_join(user=bob, room_id=room.pk)
    table_services.table_ready(user=alice, room=room)  # Bob never presses Ready

    timeout(world, room)

    state = state_of(room)
    assert state.seat_of(str(bob.pk)) is None
    assert state.phase is Phase.DEALING and len(state.round_seats) == 3
    assert len(bots_in(room)) == 2


def test_when_the_last_person_escapes_the_bots_finish_the_round_then_leave(
    world: World,
) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=3)
    seated = bots_in(room)
    table_services.table_ready(user=alice, room=room)
    drive_bots(room)
    timeout(world, room)

    room_leave(user=alice)  # an escape: her hand is played for her
    drive_bots(room)
    assert state_of(room).phase is Phase.COMPARING
    timeout(world, room)

    round_ = Round.objects.get(table__room=room)
    assert round_.settled_at is not None
    rows = {row.user_id: row for row in RoundPlayer.objects.filter(round=round_)}
    assert rows[alice.pk].escaped and rows[alice.pk].penalty > 0
    assert all(not rows[b.pk].escaped and rows[b.pk].auto == "" for b in seated)
    assert Seat.objects.filter(room=room).count() == 0
    assert state_of(room).seats == ()
    assert ledger_audit().ok and total_coins() == 0


# Details.


def test_the_sweeper_nudges_a_bot_whose_task_was_lost(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=2)
    table_services.table_ready(user=alice, room=room)
    assert state_of(room).phase is Phase.WAITING  # the bot's task is "lost"
    Table.objects.filter(room=room).update(updated_at=timezone.now() - timedelta(minutes=1))

    tasks.sweep_deadlines()

    assert state_of(room).phase is Phase.DEALING


def _special_state(hand: str, special: str, config: RuleConfig) -> TableState:
    seat = SeatState(
        "1", 0, in_round=True, hand=parse_cards(hand.split(), count=13), special=special
    )
    return TableState(capacity=4, config=config, phase=Phase.SPECIAL_CHOICE, seats=(seat,))


def test_a_bot_plays_its_special_unless_arranging_is_expected_to_win_more() -> None:
    dragon = "AS KH QD JC TS 9H 8D 7C 6S 5H 4D 3C 2S"
    assert bots.plays_special(_special_state(dragon, "dragon", DEFAULT_CONFIG), player="1")

    pairs = "AS AH KS KH QS QH JS JH TS TH 9S 9H 2C"
    worthless = RuleConfig.from_dict({"specials": {"six_pairs": {"water": 0}}}, base=DEFAULT_CONFIG)
    assert not bots.plays_special(_special_state(pairs, "six_pairs", worthless), player="1")


def test_a_bot_follows_the_advice_a_person_is_shown_for_this_rounds_opponents() -> None:
    pairs = "AS AH KS KH QS QH JS JH TS TH 9S 9H 2C"
    hand = parse_cards(pairs.split(), count=13)
    answers = set()
    for water in (0, 10, 20, 25, 30):  # six high pairs arrange well: 17.6 water vs 1 opponent
        config = RuleConfig.from_dict(
            {"specials": {"six_pairs": {"water": water}}}, base=DEFAULT_CONFIG
        )
        for players in (2, 3, 4):
            seats = tuple(
                SeatState(str(p + 1), p, in_round=True, hand=hand if p == 0 else None)
                for p in range(players)
            )
            seats = (replace(seats[0], special="six_pairs"), *seats[1:])
            state = TableState(capacity=4, config=config, phase=Phase.SPECIAL_CHOICE, seats=seats)
            advice = special_advice(hand, config, "six_pairs", players - 1)
            answers.add(bots.plays_special(state, player="1"))
            assert bots.plays_special(state, player="1") is (advice.recommend == "special")
    assert answers == {True, False}  # both answers were given


def test_bot_delays_follow_the_scale_and_the_deadline(settings: Any) -> None:
    state = TableState(
        capacity=2,
        config=RuleConfig.from_dict(FAST_RULES, base=DEFAULT_CONFIG),
        phase=Phase.ARRANGING,
        deadline=1000.0,
        arrange_deadline=1000.0,
        seats=(SeatState("1", 0, ready_deadline=2000.0),),
    )
    settings.BOT_DELAY_SCALE = 1.0
    assert 3.0 <= bots.bot_delay(state, player="1", action=bots.ARRANGE, now=900.0) <= 8.0
    assert bots.bot_delay(state, player="1", action=bots.ARRANGE, now=996.0) <= 2.0
    assert 1.0 <= bots.bot_delay(state, player="1", action=bots.READY, now=900.0) <= 3.0
    settings.BOT_DELAY_SCALE = 0
    assert bots.bot_delay(state, player="1", action=bots.ARRANGE, now=900.0) == 0


@pytest.mark.parametrize("level", ["easy", "normal", "strong"])
def test_bots_play_at_their_rooms_level(world: World, level: str) -> None:
    from games.rules.levels import level_play

    alice = make_player("alice")
    room = room_create(owner=alice, name="Levels", base_score=100, seats=3, bots=2, bot_level=level)
    table_services.table_ready(user=alice, room=room)
    drive_bots(room)
    timeout(world, room)  # the deal is over
    dealt = {s.player: s.hand for s in state_of(room).seats if s.bot}
    drive_bots(room)

    state = state_of(room)
    for player, hand in dealt.items():
        seat = state.seat_of(player)
        assert seat is not None and hand is not None
        if seat.special_choice is True:
            continue  # declared its special
        expected = level_play(hand, state.config, level, opponents=2).arranged
        assert seat.arrangement == expected, level


def test_a_bot_works_out_its_arrangement_before_it_locks_the_table(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An expert thinks for up to a second: it must not hold the table's lock meanwhile. Its
    play is computed outside any transaction and submitted under the lock; a plan made for
    other cards is not submitted: the play is worked out again under the lock."""
    from django.db import connection

    from games.rules.levels import level_play

    alice = make_player("alice")
    room = room_create(owner=alice, name="Think", base_score=100, seats=3, bots=2)
    table_services.table_ready(user=alice, room=room)
    drive_bots(room)
    timeout(world, room)  # the deal is over
    for seat in state_of(room).seats:
        if seat.bot and seat.choosing:
            table_services.table_choose_special(
                user=User.objects.get(pk=int(seat.player)), room=room, play_special=False
            )
    state = state_of(room)
    first, second = [s for s in state.seats if s.bot]
    thinking: list[bool] = []
    real = bots.bot_play

    def watched(*args: Any, **kwargs: Any) -> Any:
        thinking.append(connection.in_atomic_block)
        return real(*args, **kwargs)

    monkeypatch.setattr(bots, "bot_play", watched)
    assert bots.bot_act(table_id=table_id(room), user_id=int(first.player), version=state.version)
    assert thinking == [False]  # once, outside any transaction (so outside the lock)
    assert state_of(room).seat_of(first.player).arrangement is not None

    thinking.clear()
    assert second.hand is not None
    stale = (state.round_no, first.hand, real(state, player=first.player))  # not its cards
    state = state_of(room)
    assert bots._act(
        table_id=table_id(room), user_id=int(second.player), version=state.version, plan=stale
    )
    assert thinking == [True]  # worked out again, under the lock
    expected = level_play(second.hand, state.config, "strong", opponents=2).arranged
    assert state_of(room).seat_of(second.player).arrangement == expected

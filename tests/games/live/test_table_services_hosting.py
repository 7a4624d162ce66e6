"""A reconnect that forgives, through the database (RULES.md §9, §7.5): a hosted hand waits
for its grace on the table row's own deadline (what the workers' pollers read), plays its
saved draft, and a player back by the settlement, or whose hand was in, pays no penalty.

Transactional tests, so that ``on_commit`` fires. The clock is ``table_store.clock``, an hour
in the past; the deadlines are acted on by a :class:`~games.live.timers.DeadlinePoller` on
that clock, as the workers do; the shuffle is seeded.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest

from accounts.models import Transaction, TransactionKind, User
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import services as table_services
from games.live import store as table_store
from games.live import tasks
from games.live import timers as live_timers
from games.models import Round, RoundPlayer, Table
from games.rules.config import DEFAULT_CONFIG
from games.table.state import Phase, TableState
from lobby.models import Room, Seat
from lobby.services import room_create
from tests.games.live.test_bots import drive_bots
from tests.games.table_helpers import (
    default_rules,
    make_player,
    open_table,
    press_ready,
    state_of,
    submit_best,
    table_id,
    total_coins,
)

pytestmark = pytest.mark.django_db(transaction=True)

SEED = 5
GRACE = DEFAULT_CONFIG.reconnect_grace_seconds


@dataclass
class World:
    clock: float

    def poll(self) -> None:
        """One look of a worker's deadline poller at this clock."""
        live_timers.DeadlinePoller(interval=1.0, clock=lambda: self.clock).poll_once()

    def until(self, deadline: float | None) -> None:
        """Move the clock to ``deadline`` and let the poller act on it."""
        assert deadline is not None
        self.clock = deadline
        self.poll()


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[World]:
    settings.BOT_DELAY_SCALE = 0
    w = World(clock=time.time() - 3600)
    monkeypatch.setattr(table_store, "clock", lambda: w.clock)
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, message: None)
    monkeypatch.setattr(tasks.bot_act, "apply_async", lambda **kw: None)
    rng = random.Random(SEED)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)
    yield w


@pytest.fixture
def players(world: World) -> list[User]:
    return [make_player(name) for name in ("ann", "ben", "cat")]


@pytest.fixture
def room(players: list[User]) -> Room:
    return open_table(players, rules=default_rules(), base_score=10)


def row_deadline(room: Room) -> float | None:
    """The table row's indexed deadline, the one the pollers look for."""
    stored = Table.objects.get(room=room).deadline
    return None if stored is None else stored.timestamp()


def seat_of(room: Room, user: User) -> Any:
    seat = state_of(room).seat_of(str(user.pk))
    assert seat is not None
    return seat


def to_arranging(world: World, room: Room, people: list[User]) -> TableState:
    """The deal's end, No for every person's special hand, the bots' answers."""
    world.until(state_of(room).deadline)
    for user in people:
        if seat_of(room, user).choosing:
            table_services.table_choose_special(user=user, room=room, play_special=False)
    drive_bots(room)
    state = state_of(room)
    assert state.phase is Phase.ARRANGING and state.arrange_deadline is not None
    return state


def save_a_draft(room: Room, user: User) -> dict[str, Any]:
    """Rows laid out and saved as the table page does: the last of the player's suggestions,
    complete and foul-free, not the table's best."""
    you = table_reads.table_resync(table_id=table_id(room), player=str(user.pk), since=None)
    offered = you["snapshot"]["you"]["suggestions"]
    assert len(offered) > 1
    rows = {row: offered[-1][row] for row in ("front", "middle", "back")}
    table_services.table_save_draft(user=user, room=room, draft={"hand": [], **rows})
    return rows


def penalties() -> list[Transaction]:
    return list(Transaction.objects.filter(kind=TransactionKind.ESCAPE_PENALTY))


def test_9_a_dropped_connection_with_time_left_plays_the_draft_and_costs_nothing(
    world: World,
) -> None:
    """Cards placed, the socket lost with 27 s on the clock, the bots finish: the hand waits
    for the grace, its draft is played, the player is back during the comparison and is
    settled like anyone."""
    person = make_player("dana")
    room = room_create(
        owner=person, name="Hosting", base_score=10, seats=3, rules=default_rules(), bots=2
    )
    coins = total_coins()
    table_services.table_ready(user=person, room=room)
    drive_bots(room)
    state = to_arranging(world, room, [person])
    draft = save_a_draft(room, person)

    world.clock = state.arrange_deadline - 27
    gone = world.clock
    table_services.table_disconnect(user=person, room=room)
    drive_bots(room)
    state = state_of(room)
    assert all(s.done for s in state.seats if s.bot)
    assert state.phase is Phase.ARRANGING and seat_of(room, person).arrangement is None
    # The row's deadline is the grace: the pollers act on it, not on the arrange deadline.
    assert state.deadline == gone + GRACE
    assert row_deadline(room) == pytest.approx(gone + GRACE, abs=1e-5)
    world.until(gone + GRACE - 0.5)  # not yet
    assert state_of(room).phase is Phase.ARRANGING

    world.until(gone + GRACE)
    seat = seat_of(room, person)
    assert seat.auto == "hosted"
    assert seat.arrangement is not None
    assert {
        r: [str(c) for c in cards] for r, cards in zip(draft, seat.arrangement.rows(), strict=True)
    } == draft
    assert state_of(room).phase is Phase.COMPARING

    world.clock += 0.5
    table_services.table_reconnect(user=person, room=room)
    world.until(state_of(room).deadline)

    assert state_of(room).phase is Phase.SETTLED
    row = RoundPlayer.objects.get(round=Round.objects.get(), user=person)
    assert row.auto == "hosted" and not row.escaped and row.penalty == 0
    assert row.arrangement == draft
    assert penalties() == [] and total_coins() == coins
    # Still seated, with Ready offered; alone with bots, no clock to fear.
    assert seat_of(room, person).ready_deadline is None and not seat_of(room, person).ready


def test_9_back_before_grace_cancels_hosting(world: World, room: Room, players: list[User]) -> None:
    ann, ben, cat = players
    press_ready(players, room)
    state = to_arranging(world, room, players)
    arrange_deadline = state.arrange_deadline
    world.clock = arrange_deadline - 20
    table_services.table_disconnect(user=ann, room=room)
    submit_best(room, ben)
    submit_best(room, cat)
    grace = world.clock + GRACE
    assert row_deadline(room) == pytest.approx(grace, abs=1e-5)

    world.clock = grace - 1
    table_services.table_reconnect(user=ann, room=room)
    assert row_deadline(room) == pytest.approx(arrange_deadline, abs=1e-5)
    world.until(grace)  # the grace's deadline is gone from the row: nothing happens
    seat = seat_of(room, ann)
    assert seat.connected and not seat.hosted and seat.arrangement is None
    you = table_reads.table_resync(table_id=table_id(room), player=str(ann.pk), since=None)
    view = you["snapshot"]
    assert view["phase"] == "arranging" and view["deadline"] == arrange_deadline
    assert view["you"]["remaining"] == pytest.approx(arrange_deadline - grace)
    submit_best(room, ann)
    assert seat_of(room, ann).auto is None
    assert state_of(room).phase is Phase.COMPARING


def test_9_grace_never_past_the_deadline(world: World, room: Room, players: list[User]) -> None:
    ann, ben, cat = players
    press_ready(players, room)
    state = to_arranging(world, room, players)
    world.clock = state.arrange_deadline - 4
    table_services.table_disconnect(user=ann, room=room)
    submit_best(room, ben)
    submit_best(room, cat)
    timers = live_timers.table_deadlines_before(until=state.arrange_deadline, limit=10)
    assert [(t[2], t[3]) for t in timers] == [("arranging", state.arrange_deadline)]
    world.until(state.arrange_deadline)
    assert seat_of(room, ann).auto == "hosted"
    assert state_of(room).phase is Phase.COMPARING


def test_7_5_hand_in_then_disconnect_is_not_an_escape(
    world: World, room: Room, players: list[User]
) -> None:
    ann, ben, cat = players
    coins = total_coins()
    press_ready(players, room)
    to_arranging(world, room, players)
    submit_best(room, ann)
    table_services.table_disconnect(user=ann, room=room)
    submit_best(room, ben)
    submit_best(room, cat)
    assert state_of(room).phase is Phase.COMPARING  # nothing waits for a hand already in
    world.until(state_of(room).deadline)

    row = RoundPlayer.objects.get(round=Round.objects.get(), user=ann)
    assert not row.escaped and row.penalty == 0 and row.auto == ""
    assert penalties() == [] and total_coins() == coins
    assert seat_of(room, ann).ready_deadline is not None  # gone at the Ready deadline if not back


def test_7_5_leave_after_submit_no_penalty(world: World, room: Room, players: list[User]) -> None:
    ann, ben, cat = players
    press_ready(players, room)
    to_arranging(world, room, players)
    submit_best(room, ann)
    table_services.table_leave(user=ann, room=room)
    assert Seat.objects.filter(user=ann).exists()  # the seat is kept until the settlement
    submit_best(room, ben)
    submit_best(room, cat)
    world.until(state_of(room).deadline)

    row = RoundPlayer.objects.get(round=Round.objects.get(), user=ann)
    assert not row.escaped and row.penalty == 0
    assert penalties() == []
    assert state_of(room).seat_of(str(ann.pk)) is None
    assert not Seat.objects.filter(user=ann).exists()


def test_7_5_a_hosted_hand_not_back_by_settlement_is_an_escape(
    world: World, room: Room, players: list[User]
) -> None:
    ann, ben, cat = players
    press_ready(players, room)
    to_arranging(world, room, players)
    draft = save_a_draft(room, ann)
    table_services.table_disconnect(user=ann, room=room)
    submit_best(room, ben)
    submit_best(room, cat)
    world.until(state_of(room).deadline)  # the grace
    world.until(state_of(room).deadline)  # the comparison

    row = RoundPlayer.objects.get(round=Round.objects.get(), user=ann)
    assert row.arrangement == draft and row.auto == "hosted"
    assert row.escaped and row.penalty == 5 * 10
    assert [t.idempotency_key for t in penalties()] == [f"round:{row.round_id}:penalty:{ann.pk}"]

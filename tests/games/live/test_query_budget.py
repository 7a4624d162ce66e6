"""Query budgets of the table's hot path (like Zulip's): every command of a round, counted, and
the phases of no duration (no deal or reveal pacing) ended in the command that began them.

A budget that grows fails here first; lower it when the path gets cheaper. BEGIN and COMMIT
(or SAVEPOINT pairs) are counted too: they are round trips like any other.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from accounts.models import Transaction, TransactionKind
from accounts.selectors import ledger_audit
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import services as table_services
from games.live import store as table_store
from games.live import timers as live_timers
from games.models import Round, Table, TableEvent
from games.rules.arrange import best_arrangement
from games.rules.cards import format_cards
from games.table.state import Phase
from lobby.services import room_create, room_join
from tests.games.table_helpers import fast_rules, make_player, state_of

pytestmark = pytest.mark.django_db(transaction=True)

# Queries of one command, BEGIN and COMMIT included.
# BEGIN, one lock of the room, the table and the wallet, one UPDATE of the table with the INSERT
# of its events, COMMIT
READY = 4
LAST_READY = 5  # … and the deal: one INSERT of the round with its players
SUBMIT = 4  # BEGIN, one lock of the room and the table, UPDATE table and INSERT events, COMMIT
# … and compare and settle at once: the wallets locked, the round locked, one settlement
# posting in the command's own transaction (its accounts locked, the transaction and its
# entries; the round's lock makes its key new), the round saved and its players' rows updated
# (one executemany: one pipelined trip). The balances after (who must leave) follow from the
# locked wallets, and the entry minimum was read with the locks.
LAST_SUBMIT = 11


@pytest.fixture
def quiet_table(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing published, and the same hands every run."""
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, messages: None)
    rng = random.Random(11)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)


def deadlines(until: float) -> list[tuple[int, int, str, float]]:
    """The table deadlines the timers' poll would find before ``until``."""
    return live_timers.table_deadlines_before(until=until, limit=10)


def best_rows(room: Any, user: Any) -> dict[str, list[str]]:
    seat = state_of(room).seat_of(str(user.pk))
    assert seat is not None and seat.hand is not None
    best = best_arrangement(seat.hand, state_of(room).config)
    return {
        "front": format_cards(best.front),
        "middle": format_cards(best.middle),
        "back": format_cards(best.back),
    }


def counted(action: Any) -> int:
    with CaptureQueriesContext(connection) as queries:
        action()
    return len(queries.captured_queries)


def four_seated(prefix: str, rules_name: str) -> tuple[Any, list[Any]]:
    """A room of 4 seated players (its owner first) with unpaced fast rules."""
    rules = fast_rules(name=rules_name, deal_interval_ms=0, reveal_interval_ms=0)
    users = [make_player(f"{prefix}{i}") for i in range(4)]
    room = room_create(owner=users[0], name="T", base_score=1, seats=4, rules=rules)
    for user in users[1:]:
        room_join(user=user, room_id=room.pk)
    return room, users


def test_a_round_without_pacing_keeps_to_its_query_budget(quiet_table: None) -> None:
    room, users = four_seated("p", "No pacing")

    ready = [counted(lambda u=u: table_services.table_ready(user=u, room=room)) for u in users]
    assert ready == [READY, READY, READY, LAST_READY]
    # The deal lasts no time: the last Ready dealt and began the play, whose deadline is the
    # row's (no dealing deadline was ever saved).
    playing = state_of(room)
    assert playing.phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING)
    assert playing.deadline is not None
    assert [row[2:] for row in deadlines(playing.deadline)] == [
        (playing.phase.value, playing.deadline)
    ]

    decline_specials(room, users)
    rows = {u.pk: best_rows(room, u) for u in users}  # read before counting
    submits = [
        counted(lambda u=u: table_services.table_submit(user=u, room=room, **rows[u.pk]))
        for u in users
    ]
    assert submits == [SUBMIT, SUBMIT, SUBMIT, LAST_SUBMIT]

    # The comparison lasts no time either: the last submission settled the round, once.
    state = state_of(room)
    assert state.phase is Phase.SETTLED
    assert Table.objects.get().phase == "settled"
    round_ = Round.objects.get()
    assert round_.settled_at is not None and round_.result is not None
    assert Transaction.objects.filter(kind=TransactionKind.SETTLEMENT).count() <= 1
    assert ledger_audit().ok


def test_a_paced_round_waits_for_its_deal_and_its_comparison(
    quiet_table: None,
) -> None:
    room, _users = two_ready_players("q", deal_interval_ms=100, reveal_interval_ms=100)

    state = state_of(room)
    assert state.phase is Phase.DEALING
    assert state.deadline is not None
    assert deadlines(state.deadline) == [
        (state_of_table_id(room), state.version, "dealing", state.deadline)
    ]


def state_of_table_id(room: Any) -> int:
    return table_store.table_for_room(room=room).pk


def two_ready_players(prefix: str, **pacing: int) -> tuple[Any, list[Any]]:
    """A 2-seat room whose players have both pressed Ready (rules: the fast ones + ``pacing``)."""
    rules = fast_rules(name=f"Rules {prefix}", **pacing)
    users = [make_player(f"{prefix}{i}") for i in range(2)]
    room = room_create(owner=users[0], name="T", base_score=1, seats=2, rules=rules)
    room_join(user=users[1], room_id=room.pk)
    for user in users:
        table_services.table_ready(user=user, room=room)
    return room, users


def decline_specials(room: Any, users: list[Any]) -> None:
    """Answer No for every special hand dealt: each is arranged instead."""
    for user in users:
        seat = state_of(room).seat_of(str(user.pk))
        assert seat is not None
        if seat.choosing:
            table_services.table_choose_special(user=user, room=room, play_special=False)


def test_a_stale_timer_costs_one_query_and_takes_no_lock(quiet_table: None) -> None:
    room, users = two_ready_players("s", deal_interval_ms=0, reveal_interval_ms=0)
    decline_specials(room, users)
    playing = state_of(room)
    assert playing.deadline is not None
    (early,) = deadlines(playing.deadline)
    assert early[2] == playing.phase.value
    # Before the deadline the phase's timeout is early: checked under the locks.
    with CaptureQueriesContext(connection) as queries:
        table_services.table_timeout(
            table_id=early[0], version=early[1], phase=early[2], deadline=early[3]
        )
    assert len(queries.captured_queries) > 1
    assert any("FOR UPDATE" in q["sql"] for q in queries.captured_queries)

    for user in users:
        table_services.table_submit(user=user, room=room, **best_rows(room, user))
    settled = state_of(room)
    assert settled.phase is Phase.SETTLED
    # The players were quicker: the arranging timer, and one of an old version, are stale.
    for table_id, version, phase, deadline in (early, (early[0], early[1], early[2], None)):
        with CaptureQueriesContext(connection) as queries:
            found = table_services.table_timeout(
                table_id=table_id, version=version, phase=phase, deadline=deadline
            )
        assert found is None
        assert len(queries.captured_queries) == 1
        assert "FOR UPDATE" not in queries.captured_queries[0]["sql"]
    assert state_of(room).version == settled.version


@pytest.mark.parametrize("phase", ["arranging", "settled"])
@pytest.mark.parametrize("version", [4, 5, 6])
@pytest.mark.parametrize("deadline", [None, 100.0, 101.0])
@pytest.mark.parametrize("stored_deadline", [None, 100.0])
def test_a_timer_is_surely_stale_only_when_the_locked_check_would_say_so(
    phase: str, version: int, deadline: float | None, stored_deadline: float | None
) -> None:
    """``_surely_stale`` (no lock) against the rule the locked path applies
    (``machine.verify_timeout`` after the deadline's own timer takes the stored version)."""
    stored_phase, stored_version = "arranging", 5
    held_version = (
        stored_version
        if deadline is not None and phase == stored_phase and deadline == stored_deadline
        else version
    )
    locked_stale = (
        phase != stored_phase or held_version != stored_version or stored_deadline is None
    )
    quick = table_services.surely_stale(
        phase=phase,
        version=version,
        deadline=deadline,
        stored=(stored_phase, stored_version, stored_deadline),
    )
    assert quick == locked_stale
    # Anything unexpected in the row: not decided without the locks.
    assert not table_services.surely_stale(
        phase=phase, version=version, deadline=deadline, stored=(None, None, None)
    )


# A player leaving between rounds: BEGIN, one lock of the room and the table, the table's UPDATE
# and events, then the lobby's seat in the same transaction (lobby.services.seats_release):
# the room read with its rules, owner and table (locked with the table already), its seats
# read with their players, one DELETE, the room's row saved, COMMIT; the row the lobby is sent
# is made of those. (17 or 18 before the lobby freed the seats of a command in one go; 10
# while the lobby's row was read again after the release.)
LEAVE = 8


def test_leaving_between_rounds_keeps_to_its_query_budget(quiet_table: None) -> None:
    room, users = four_seated("l", "Leave")

    leaves = [counted(lambda u=u: table_services.table_leave(user=u, room=room)) for u in users]

    assert leaves == [LEAVE] * 4
    room.refresh_from_db()
    assert not room.taken_seats.exists() and room.empty_since is not None
    assert room.owner_id == users[-1].pk  # passed on to the person seated longest each time


def test_a_socket_finds_its_seat_in_one_query(quiet_table: None) -> None:
    rules = fast_rules(name="Seat", deal_interval_ms=0, reveal_interval_ms=0)
    users = [make_player(f"s{i}") for i in range(3)]
    room = room_create(owner=users[0], name="T", base_score=1, seats=4, rules=rules)
    room_join(user=users[1], room_id=room.pk)
    other = room_create(owner=users[2], name="U", base_score=1, seats=4, rules=rules)
    table_services.table_ready(user=users[0], room=room)  # the table exists from here on

    with CaptureQueriesContext(connection) as queries:
        seat = table_reads.table_seat_for(user=users[1], room_id=room.pk)
    assert len(queries.captured_queries) == 1
    assert seat is not None
    assert (seat.room.pk, seat.position, seat.player) == (room.pk, 1, str(users[1].pk))
    assert seat.table_id == table_store.table_for_room(room=room).pk
    # Not seated there (seated elsewhere, or the room does not exist): no seat.
    assert table_reads.table_seat_for(user=users[2], room_id=room.pk) is None
    assert table_reads.table_seat_for(user=users[0], room_id=other.pk) is None
    assert table_reads.table_seat_for(user=users[0], room_id=other.pk + 1000) is None


def test_a_round_logs_every_event_once_in_order_with_its_audience(quiet_table: None) -> None:
    """The events of each command are inserted by the command's one statement (as one JSON
    text, however many): public ones with no audience, each hand to its own player's seat."""
    room, users = four_seated("e", "Logged")
    for user in users:
        table_services.table_ready(user=user, room=room)
    decline_specials(room, users)
    rows = {u.pk: best_rows(room, u) for u in users}
    for user in users:
        table_services.table_submit(user=user, room=room, **rows[user.pk])
    table = Table.objects.get()
    assert state_of(room).phase is Phase.SETTLED

    logged = list(
        TableEvent.objects.filter(table=table)
        .order_by("version")
        .values_list("version", "type", "audience", "recipient", "payload")
    )
    versions = [row[0] for row in logged]
    assert versions == list(range(versions[0], table.version + 1))
    positions = {str(s.player): s.position for s in state_of(room).seats if s.player}
    dealt = {p.user_id: p.cards for p in Round.objects.get().players.all()}
    hands = [row for row in logged if row[1] == "hand"]
    assert sorted(row[3] for row in hands) == sorted(str(u.pk) for u in users)
    for _version, _type, audience, recipient, payload in hands:
        assert audience == positions[recipient] == payload["position"]
        assert " ".join(payload["cards"]) == dealt[int(recipient)]
        assert len(payload["offsets_ms"]) == 13  # a nested list kept whole
        assert "suggestions" not in payload  # added when sent (views.delivered), never logged
    public = [row for row in logged if row[3] is None]
    assert public and all(row[2] is None for row in public)
    assert {"ready", "deal", "submitted", "settled"} <= {row[1] for row in public}

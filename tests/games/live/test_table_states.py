"""The table states a process holds (``games.live.store.TableStates``): a command's lock, a
socket's seat lookup and its resync read the table's state only when this process does not
hold that version already, and never take a version that was rolled back, or that another
process moved past, for the committed one."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Any

import pytest
from django.db import transaction

from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import services as table_services
from games.live import store as table_store
from games.models import Table
from games.table.state import Phase, TableState
from lobby.services import room_create, room_join
from tests.games.table_helpers import fast_rules, make_player, state_of

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Nothing published, the same hands every run, and every ``TableState.from_dict`` call
    counted (its table's version)."""
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, messages: None)
    rng = random.Random(5)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)
    calls: list[int] = []
    original = TableState.from_dict.__func__  # type: ignore[attr-defined]

    def counted(cls: type[TableState], data: Any) -> TableState:
        calls.append(int(data["version"]))
        return original(cls, data)

    monkeypatch.setattr(TableState, "from_dict", classmethod(counted))
    yield calls


def two_players(prefix: str) -> tuple[Any, list[Any]]:
    rules = fast_rules(name=f"States {prefix}", deal_interval_ms=0, reveal_interval_ms=0)
    users = [make_player(f"{prefix}{i}") for i in range(2)]
    room = room_create(owner=users[0], name="T", base_score=1, seats=4, rules=rules)
    room_join(user=users[1], room_id=room.pk)
    return room, users


def stored(room: Any) -> TableState:
    """The table's committed state, from its row (not through the services)."""
    data = Table.objects.filter(room=room).values_list("state", flat=True).get()
    return TableState.from_dict(data)


def test_a_command_reads_the_state_only_when_the_process_does_not_hold_its_version(
    parses: list[int],
) -> None:
    room, (a, b) = two_players("held")
    table_services.table_ready(user=a, room=room)  # committed: this process holds it now
    parses.clear()
    transition = table_services.table_ready(user=b, room=room)  # deals
    assert parses == []  # the lock read no state: the held version was the row's
    assert transition.state == stored(room)
    assert transition.state.phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING)
    parses.clear()
    seat = table_reads.table_seat_for(user=a, room_id=room.pk)
    view = table_reads.table_resync(table_id=seat.table_id, player=str(a.pk), since=None)
    assert parses == []
    assert seat is not None and seat.position == 0 and seat.connected
    assert view["version"] == transition.state.version


def test_a_rolled_back_command_is_never_held(parses: list[int]) -> None:
    room, (a, b) = two_players("undo")
    table_services.table_ready(user=a, room=room)
    committed = stored(room)
    with pytest.raises(RuntimeError), transaction.atomic():
        undone = table_services.table_ready(user=b, room=room)  # deals, then rolled back
        assert undone.state.version > committed.version
        raise RuntimeError("rolled back")
    assert stored(room) == committed
    parses.clear()
    # The next command starts from the committed state, not from the round rolled back.
    transition = table_services.table_ready(user=b, room=room)
    assert parses == []  # the committed version is still the one held
    assert transition.state == stored(room)
    assert transition.state.version == undone.state.version  # the same version, committed now
    assert transition.state.salt != undone.state.salt  # … of another deal


def test_a_version_another_process_committed_is_read_from_the_row(
    parses: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    room, (a, b) = two_players("other")
    table_services.table_ready(user=a, room=room)
    held = table_store.STATES.of_room(room.pk)
    assert held is not None and held.state == stored(room)
    # Another process (which holds states of its own) deals the round meanwhile.
    with monkeypatch.context() as other:
        other.setattr(table_store, "STATES", table_store.TableStates())
        table_services.table_ready(user=b, room=room)
    assert table_store.STATES.of_room(room.pk) is held  # this process did not see it
    version = Table.objects.filter(room=room).values_list("version", flat=True).get()
    assert version > held.version
    parses.clear()
    seat = table_reads.table_seat_for(user=b, room_id=room.pk)
    assert seat is not None and seat.table_id == held.table_id
    assert parses == [version]  # read from the row, and held from now on
    parses.clear()
    transition = table_services.table_leave(user=a, room=room)  # an escape, mid-round
    assert parses == []
    assert transition.state == stored(room)
    assert transition.state.seat_of(str(a.pk)).left  # type: ignore[union-attr]


def test_a_state_read_inside_a_transaction_is_held_only_once_it_commits(
    parses: list[int],
) -> None:
    room, (a, b) = two_players("inside")
    table_services.table_ready(user=a, room=room)
    table_store.forget_table_states()
    with transaction.atomic():
        table_services.table_ready(user=b, room=room)
        # Seen inside the transaction that wrote it: not committed yet, so not held.
        assert table_store.STATES.of_room(room.pk) is None
        seat = table_reads.table_seat_for(user=a, room_id=room.pk)
        assert seat is not None
        assert table_store.STATES.of_room(room.pk) is None
    held = table_store.STATES.of_room(room.pk)
    assert held is not None and held.state == stored(room) == state_of(room)


def test_the_newest_version_is_kept_and_the_oldest_table_goes_first() -> None:
    states = table_store.TableStates(size=2)
    old, new = TableState(capacity=4, version=3), TableState(capacity=4, version=4)
    states.remember(1, 10, new)
    states.remember(1, 10, old)  # a late commit callback of an older version
    assert states.get(10) is not None and states.get(10).state is new  # type: ignore[union-attr]
    states.remember(2, 20, old)
    states.remember(3, 30, old)
    assert states.get(10) is None and states.of_room(1) is None
    assert states.of_room(2) is not None and states.of_room(3) is not None

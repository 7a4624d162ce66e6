"""the room's entry minimum holds at every Ready, not only at sit-down.

Losses are capped by a player's balance and wins are not (RULES.md §7.4), so a player below
the minimum who could press Ready would play a freeroll. Built on the fixtures of
``test_table_services`` (transactional, on-commit events recorded).
"""

from __future__ import annotations

import pytest

from accounts.models import User
from accounts.selectors import wallet_balance
from accounts.services import wallet_admin_adjust
from games.live import services as table_services
from games.models import TableEvent
from games.table.errors import TableError
from games.table.state import Phase
from lobby.models import Room, Seat
from tests.games.live import test_table_services as ts

world = ts.world
players = ts.players
room = ts.room

pytestmark = pytest.mark.django_db(transaction=True)


def set_balance(user: User, amount: int, staff: User) -> None:
    """Debit or credit the wallet (against the mint, through the ledger) to ``amount``."""
    change = amount - wallet_balance(user=user)
    if change:
        wallet_admin_adjust(
            user=user,
            amount=change,
            reason="test: set the balance",
            created_by=staff,
            idempotency_key=f"test-balance:{user.pk}:{amount}:{wallet_balance(user=user)}",
        )


@pytest.fixture
def staff() -> User:
    return User.objects.create_user("staff", password="not-used-1", is_staff=True)


def test_ready_is_refused_below_the_entry_minimum_and_changes_nothing(
    world: ts.World, room: Room, players: tuple[User, User], staff: User
) -> None:
    alice, bob = players
    room.refresh_from_db()
    minimum = room.entry_minimum
    assert minimum > 0
    set_balance(alice, minimum - 1, staff)
    version, logged, sent = ts.state_of(room).version, TableEvent.objects.count(), len(world.sent)

    with pytest.raises(TableError) as refused:
        table_services.table_ready(user=alice, room=room)
    error = refused.value.to_dict()
    assert error["code"] == "insufficient_coins"
    assert error["minimum"] == minimum and error["balance"] == minimum - 1
    assert f"{minimum:,}" in error["message"]
    assert (ts.state_of(room).version, TableEvent.objects.count()) == (version, logged)
    assert len(world.sent) == sent

    # Exactly the minimum is enough.
    set_balance(alice, minimum, staff)
    table_services.table_ready(user=alice, room=room)
    seat = ts.state_of(room).seat_of(str(alice.pk))
    assert seat is not None and seat.ready
    table_services.table_ready(user=bob, room=room)
    assert ts.state_of(room).phase is Phase.DEALING


def test_a_player_below_the_minimum_after_a_settlement_goes_back_to_the_room_list(
    world: ts.World, room: Room, players: tuple[User, User], staff: User
) -> None:
    room.refresh_from_db()
    minimum = room.entry_minimum
    for user in players:
        set_balance(user, minimum, staff)
    ts.start_round(room, players)
    ts.to_arranging(world, room, players)
    for user in players:
        ts.submit_best(room, user)
    ts.settle(world, room)

    balances = {user: wallet_balance(user=user) for user in players}
    losers = [user for user, balance in balances.items() if balance < minimum]
    winners = [user for user, balance in balances.items() if balance >= minimum]
    assert losers and winners, balances  # the seeded deal has a winner and a loser
    state = ts.state_of(room)
    for user in losers:
        assert state.seat_of(str(user.pk)) is None
        assert not Seat.objects.filter(room=room, user=user).exists()
        (left,) = [
            e
            for e in TableEvent.objects.filter(type="left").order_by("version")
            if e.payload["player"] == str(user.pk)
        ]
        assert left.payload["reason"] == "insufficient_coins"
        assert left.payload["minimum"] == minimum
        assert left.payload["balance"] == balances[user]
        assert left.recipient is None  # public: the other seats see why the seat emptied
    for user in winners:
        assert state.seat_of(str(user.pk)) is not None
    assert ts.total_coins() == 0  # the ledger balances: nothing minted, nothing lost

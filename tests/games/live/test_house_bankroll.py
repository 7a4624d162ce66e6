# ruff: noqa: F811 (the `world` fixture of test_bots is imported and requested by name)
"""Bots play from the house's bankroll (games.live.bots.bot_fund, accounts.services
wallet_house_level), which the mint tops up only within the daily bot-funding ceiling; and the
optional table fee (games.live.settle), which the round audit recomputes to the coin."""

from __future__ import annotations

from typing import Any

import pytest

from accounts.economy import economy_settings
from accounts.mint import mint_alerts, utc_day
from accounts.models import Transaction, TransactionKind
from accounts.selectors import ledger_audit, wallet_balance
from accounts.services import economy_settings_get_or_create, wallet_admin_adjust
from games.history.audit import round_verify
from games.live import bots
from games.models import Round
from games.table.state import Phase
from lobby.errors import BotsUnavailable
from lobby.matchmaking import room_quick_play
from lobby.models import Room, Seat
from tests.games.live.test_bots import (  # noqa: F401 (the fixture)
    World,
    bot_room,
    bots_in,
    drive_bots,
    house_balance,
    submit_best,
    timeout,
    total_coins,
    world,
)
from tests.games.table_helpers import make_player, state_of

pytestmark = pytest.mark.django_db(transaction=True)


def _set(**values: Any) -> None:
    economy = economy_settings_get_or_create()
    for name, value in values.items():
        setattr(economy, name, value)
    economy.save()


def play_round(world: World, room: Room) -> Round:
    human = next(s.user for s in Seat.objects.filter(room=room, user__is_bot=False))
    from games.live import services as table_services

    table_services.table_ready(user=human, room=room)
    drive_bots(room)
    timeout(world, room)  # the deal is over
    drive_bots(room)
    submit_best(room, human)
    drive_bots(room)
    assert state_of(room).phase is Phase.COMPARING
    timeout(world, room)
    return Round.objects.filter(table__room=room).order_by("-number").first()  # type: ignore[return-value]


def test_bot_winnings_above_the_minimum_go_back_to_the_house(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=3)
    bot = bots_in(room)[0]
    admin = make_player("admin")
    wallet_admin_adjust(
        user=bot, amount=900, reason="test: a bot's winnings", created_by=admin, idempotency_key="w"
    )
    house_before = house_balance()

    assert bots.bot_fund(bot=bot, room=room) == 0

    assert wallet_balance(user=bot) == room.entry_minimum
    assert house_balance() == house_before + 900
    sweep = Transaction.objects.get(kind=TransactionKind.BOT_SWEEP)
    assert sweep.reference == f"room:{room.pk}"
    assert ledger_audit().ok and total_coins() == 0


def test_a_round_against_bots_settles_and_the_bots_are_levelled_again(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice)
    round_ = play_round(world, room)
    assert round_verify(round_=round_).ok

    from games.live import services as table_services

    table_services.table_ready(user=alice, room=room)
    drive_bots(room)
    # Every bot holds exactly the entry minimum again: losses refunded by the house, winnings
    # swept back to it.
    for bot in bots_in(room):
        assert wallet_balance(user=bot) == room.entry_minimum
    assert ledger_audit().ok and total_coins() == 0


def test_past_the_bot_funding_ceiling_no_bot_is_seated_and_nothing_is_written(
    world: World,
) -> None:
    alice = make_player("alice")
    _set(mint_ceiling_bot_funding=0)
    rooms, transactions = Room.objects.count(), Transaction.objects.count()

    with pytest.raises(BotsUnavailable) as refused:
        bot_room(alice)
    assert "bankroll for bots is used up" in refused.value.message
    with pytest.raises(BotsUnavailable):
        room_quick_play(user=alice)

    assert (Room.objects.count(), Transaction.objects.count()) == (rooms, transactions)
    assert Seat.objects.filter(user=alice).count() == 0
    assert mint_alerts([utc_day()]) == {(utc_day(), "bot_funding"): 2}
    assert economy_settings().mint_ceiling_bot_funding == 0


def test_a_bot_the_house_cannot_fund_before_ready_stands_up(world: World) -> None:
    alice = make_player("alice")
    room = bot_room(alice, seats=3)
    bot = bots_in(room)[0]
    admin = make_player("admin")
    wallet_admin_adjust(
        user=bot,
        amount=-wallet_balance(user=bot),
        reason="test: the bot lost everything",
        created_by=admin,
        idempotency_key="lost",
    )
    _set(mint_ceiling_bot_funding=0)
    from games.live import services as table_services

    table_services.table_ready(user=alice, room=room)
    drive_bots(room)

    assert str(bot.pk) not in {s.player for s in state_of(room).seats}
    assert not Seat.objects.filter(user=bot).exists()
    assert ledger_audit().ok and total_coins() == 0


@pytest.mark.parametrize("percent", [0, 5])
def test_the_table_fee_goes_to_the_house_and_the_audit_recomputes_it(
    world: World, percent: int
) -> None:
    _set(table_fee_percent=percent)
    alice = make_player("alice")
    room = bot_room(alice)
    house_before = house_balance()

    round_ = play_round(world, room)

    winners = {int(p["id"]): p["delta"] for p in round_.result["players"] if p["delta"] > 0}
    fees = {uid: delta * percent // 100 for uid, delta in winners.items()}
    fee_posting = Transaction.objects.filter(idempotency_key=f"round:{round_.pk}:fee").first()
    if percent and any(fees.values()):
        assert fee_posting is not None and fee_posting.kind == TransactionKind.TABLE_FEE
        assert round_.result["fee_percent"] == percent
        for p in round_.result["players"]:
            assert p["fee"] == fees.get(int(p["id"]), 0)
        penalties = sum(p["penalty"] for p in round_.result["players"])
        assert house_balance() == house_before + sum(fees.values()) + penalties
    else:
        assert fee_posting is None and "fee_percent" not in round_.result
    report = round_verify(round_=round_)
    assert report.ok, report.mismatches
    for check in report.players:
        assert check.ledger_net == (check.expected_delta or 0) - fees.get(check.user_id, 0)
    assert ledger_audit().ok and total_coins() == 0


def test_the_audit_finds_a_fee_that_does_not_match(world: World) -> None:
    _set(table_fee_percent=10)
    alice = make_player("alice")
    room = bot_room(alice)
    round_ = play_round(world, room)
    if "fee_percent" not in round_.result:
        pytest.skip("nobody won enough for a fee in this seeded round")
    Round.objects.filter(pk=round_.pk).update(result={**round_.result, "fee_percent": 0})
    round_.refresh_from_db()

    report = round_verify(round_=round_)

    assert not report.ok and any("ledger moved" in m for m in report.mismatches)

"""Settling a round of a locked table: the ledger postings, the round's breakdown, and sending
away those who can no longer cover a round.

One posting of kind ``settlement`` (idempotency key ``round:<pk>:settlement``) moves every
player's net result; escape penalties go to the house (``round:<pk>:penalty:<user>``), and so
does the table fee when the economy settings set one (``table_fee_percent``): that share of
each winner's winnings, rounded down, in one posting ``round:<pk>:fee``, recorded in the
round's stored result (``fee_percent``, each player's ``fee``) for the audit. The
players' wallets are locked after the room and the table, in ascending id, and the house
account after them (inside ``ledger_post``), the lock order of every service.
"""

from __future__ import annotations

from typing import NamedTuple

from django.db import connection
from django.db.models import Exists, OuterRef

from accounts.ledger import account_system_get_or_create, ledger_post
from accounts.models import (
    DEFAULT_TABLE_FEE_PERCENT,
    Account,
    AccountKind,
    EconomySettings,
    TransactionKind,
    User,
)
from games.live.store import ENTRY_MINIMUM, aware, for_update
from games.models import Round, RoundPlayer, Table
from games.rules.cards import format_cards
from games.table import machine
from games.table.events import Event, Transition
from games.table.state import Json, TableState, arranged_json
from lobby.models import Room
from shisanshui import fastjson

_ROUND = Round._meta.db_table
_ECONOMY = EconomySettings._meta.db_table


class Settlement(NamedTuple):
    """What a settlement did: the players' balances after it, by user id, the round's
    result as stored (with the table fee when there was one; None: settled before) and the
    round's id."""

    balances: dict[int, int]
    result: Json | None
    round_id: int | None = None  # the round settled now (None: settled before)


def settle_round(
    *,
    table: Table,
    compared: TableState,
    state: TableState,
    now: float,
    wallets: dict[int, Account] | None = None,
) -> Settlement:
    """Move the coins of a settled round once, and store its breakdown and revealed deck.
    ``wallets``: the players' wallets as locked for the comparison (read again if not given).
    Returns the players' balances after the settlement, by user id, and the stored result,
    which differs from the machine's by the table fee (neither if it was settled before)."""
    # The round locked, and the table fee read with it (no query of its own on the hot path).
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, settled_at, COALESCE((SELECT table_fee_percent FROM {_ECONOMY} "
            f"WHERE id = %s), %s) FROM {_ROUND} WHERE table_id = %s AND number = %s"
            f"{for_update() and f'{for_update()} OF {_ROUND}'}",
            [
                EconomySettings.SINGLETON_ID,
                DEFAULT_TABLE_FEE_PERCENT,
                table.pk,
                state.round_no,
            ],
        )
        row = cursor.fetchone()
    if row is None:
        raise Round.DoesNotExist(f"no round {state.round_no} at table {table.pk}")
    round_id, settled_at, fee_percent = row
    if settled_at is not None:
        return Settlement({}, None)
    result = state.result
    assert result is not None and state.deck is not None and state.salt is not None
    players: list[Json] = result["players"]
    ids = [int(p["id"]) for p in players]
    if wallets is None or not set(ids) <= set(wallets):
        wallets = wallets_of(ids, lock=False)
    # The balances the machine settled with (the wallets are locked by table_timeout), kept
    # so that an audit can recompute the cannot-cover cuts.
    balances = {str(user_id): account.balance for user_id, account in wallets.items()}
    net = {wallets[int(p["id"])]: p["delta"] + p["penalty"] for p in players}
    entries = {account: amount for account, amount in net.items() if amount}
    posted = None
    if entries:  # the round's lock and settled_at make the key new: fresh_in_caller
        posted = ledger_post(
            kind=TransactionKind.SETTLEMENT,
            entries=entries,
            idempotency_key=f"round:{round_id}:settlement",
            reference=f"round:{round_id}",
            fresh_in_caller=True,
        )
    house = None
    for p in players:
        if p["penalty"] > 0:
            house = house or account_system_get_or_create(kind=AccountKind.HOUSE)
            ledger_post(
                kind=TransactionKind.ESCAPE_PENALTY,
                entries={wallets[int(p["id"])]: -p["penalty"], house: p["penalty"]},
                idempotency_key=f"round:{round_id}:penalty:{p['id']}",
                reference=f"round:{round_id}",
                fresh_in_caller=True,
            )
    fees = table_fees(players, percent=fee_percent)
    if fees:
        house = house or account_system_get_or_create(kind=AccountKind.HOUSE)
        total = sum(fees.values())
        ledger_post(
            kind=TransactionKind.TABLE_FEE,
            entries={**{wallets[uid]: -fee for uid, fee in fees.items()}, house: total},
            idempotency_key=f"round:{round_id}:fee",
            reference=f"round:{round_id}",
            fresh_in_caller=True,
        )
        result = fee_result(result, fees, percent=fee_percent)
    # The round's revealed deck, result and balances, and each player's row by position, by
    # hand (the ORM's save and bulk_update cost more CPU than the whole settlement).
    seats = {s.position: s for s in compared.round_seats}
    rows = []
    for p in players:
        seat = seats[p["position"]]
        arrangement = None if seat.arrangement is None else arranged_json(seat.arrangement)
        rows.append(
            (
                p["special"] or "",
                " ".join(format_cards(seat.unused)),
                None if arrangement is None else fastjson.dumps(arrangement),
                seat.auto or "",
                p["escaped"],
                p["water"],
                p["delta"],
                p["penalty"],
                round_id,
                p["position"],
            )
        )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_ROUND} SET deck = %s, salt = %s, result = %s, balances = %s, "
            "settled_at = %s, transaction_id = %s WHERE id = %s",
            [
                " ".join(format_cards(state.deck)),
                state.salt,
                fastjson.dumps(result),
                fastjson.dumps(balances),
                connection.ops.adapt_datetimefield_value(aware(now)),
                None if posted is None else posted.pk,
                round_id,
            ],
        )
        cursor.executemany(
            f"UPDATE {RoundPlayer._meta.db_table} SET special = %s, unused = %s, arrangement = %s, "
            "auto = %s, escaped = %s, water = %s, delta = %s, penalty = %s "
            "WHERE round_id = %s AND position = %s",
            rows,
        )
    # Each wallet moved by the player's delta in all (a penalty is in the delta: the
    # settlement leaves it to the wallet, and the penalty's posting takes it to the house),
    # less the table fee.
    balances_after = {
        int(p["id"]): wallets[int(p["id"])].balance + p["delta"] - fees.get(int(p["id"]), 0)
        for p in players
    }
    return Settlement(balances_after, result, round_id)


def table_fees(players: list[Json], *, percent: int) -> dict[int, int]:
    """The table fee of each winner (a positive delta), by user id: ``percent`` of the
    winnings, rounded down (the remainder stays with the winner); none when 0."""
    if percent <= 0:
        return {}
    fees = {int(p["id"]): p["delta"] * percent // 100 for p in players if p["delta"] > 0}
    return {uid: fee for uid, fee in fees.items() if fee > 0}


def fee_result(result: Json, fees: dict[int, int], *, percent: int) -> Json:
    """The round's result as stored, with the fee: ``fee_percent`` and each player's ``fee``
    (a copy; ``games.live.services`` puts it in the table's state and ``settled`` event)."""
    return {
        **result,
        "fee_percent": percent,
        "players": [{**p, "fee": fees.get(int(p["id"]), 0)} for p in result["players"]],
    }


FROZEN = "owner_frozen"  # wallets_of's annotation


def send_away_the_broke(
    *,
    table: Table,
    state: TableState,
    now: float,
    balances: dict[int, int],
    wallets: dict[int, Account] | None = None,
) -> Transition:
    """After a settlement, every person left with fewer coins than the room's entry minimum
    goes back to the room list (a ``left`` event with reason ``insufficient_coins``, the
    minimum and the balance), so that nobody plays on without covering their losses; and every
    person whose transfers support froze pending review (reason ``transfers_frozen``). Bots are
    funded by the house before they press Ready (``games.live.bots``). The wallets were locked for
    the settlement; ``balances`` are the round's players' after it (the others are read), and
    ``wallets`` (if given) say whose transfers are frozen (``wallets_of`` reads it with them)."""
    minimum = getattr(table, ENTRY_MINIMUM, None)
    if minimum is None:
        minimum = (
            Room.objects.filter(pk=table.room_id).values_list("entry_minimum", flat=True).get()
        )
    people = [s for s in state.seats if not s.bot]
    frozen_of = {u: a.owner_frozen for u, a in (wallets or {}).items() if hasattr(a, FROZEN)}
    others = [int(s.player) for s in people if int(s.player) not in balances]
    if others:
        found = wallets_of(others, lock=False)
        balances = {**balances, **{u: a.balance for u, a in found.items()}}
        frozen_of.update({u: a.owner_frozen for u, a in found.items()})
    unknown = [int(s.player) for s in people if int(s.player) not in frozen_of]
    if unknown:
        frozen_now = set(
            User.objects.filter(pk__in=unknown, transfers_frozen_at__isnull=False).values_list(
                "pk", flat=True
            )
        )
        frozen_of.update({u: u in frozen_now for u in unknown})
    frozen = {u for u, is_frozen in frozen_of.items() if is_frozen}
    events: list[Event] = []
    for seat in people:
        if int(seat.player) in frozen:
            sent = machine.dismiss(
                state, position=seat.position, reason="transfers_frozen", now=now
            )
            state, events = sent.state, events + list(sent.events)
            continue
        balance = balances[int(seat.player)]
        if balance >= minimum:
            continue
        sent = machine.dismiss(
            state,
            position=seat.position,
            reason="insufficient_coins",
            now=now,
            minimum=minimum,
            balance=balance,
        )
        state, events = sent.state, events + list(sent.events)
    return Transition(state, tuple(events))


# -- wallets ---------------------------------------------------------------------------------


def round_wallets(state: TableState) -> dict[int, Account]:
    """The round's players' wallets by user id, locked (ascending id) for the settlement."""
    return wallets_of([int(s.player) for s in state.round_seats], lock=True)


def balances_of(wallets: dict[int, Account]) -> dict[str, int]:
    """The balances the machine settles with, by player."""
    return {str(uid): a.balance for uid, a in wallets.items()}


def locked_balance(user_id: int) -> int:
    """The player's wallet balance, the wallet locked (created if missing)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT balance FROM {Account._meta.db_table} WHERE user_id = %s AND kind = %s"
            f"{for_update()}",
            [user_id, AccountKind.WALLET.value],
        )
        row = cursor.fetchone()
    if row is None:  # rare: a wallet was never made
        return wallets_of([user_id], lock=True)[user_id].balance
    return int(row[0])


def wallets_of(user_ids: list[int], *, lock: bool) -> dict[int, Account]:
    """The players' wallets by user id, created if missing, locked in ascending id if asked;
    each with ``owner_frozen``: whether its owner's transfers are frozen."""
    query = (
        Account.objects.filter(user_id__in=user_ids, kind=AccountKind.WALLET)
        .annotate(
            # Whether support froze the owner's transfers: read with the wallet, no extra query.
            owner_frozen=Exists(
                User.objects.filter(pk=OuterRef("user_id"), transfers_frozen_at__isnull=False)
            )
        )
        .order_by("pk")
    )
    if lock:
        query = query.select_for_update()
    found = {a.user_id: a for a in query}
    if len(found) < len(set(user_ids)):  # rare: a wallet was never made
        for user_id in sorted(set(user_ids) - set(found)):
            Account.objects.get_or_create(user_id=user_id, defaults={"kind": AccountKind.WALLET})
        found = {a.user_id: a for a in query.all()}
    return found

"""The soak's checks, read from the platform's database through Django once the run is over.

One PASS or FAIL line each, with its figures: every requested round played and settled;
exactly one settlement per round, moving what the stored result says; coins conserved; no
negative balance, now or after any entry; every client's view of each result equal to the
stored one, and a view from every player present at a settlement; the protocol kept (no
``events`` frame before a connection's ``welcome``, a player let go is told so);
``ledger_audit`` clean. Also the wallets' balances before the run and the rooms' codes.
Django is imported inside the functions: the module loads before Django is set up.
"""

from __future__ import annotations

import io
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from benchmarks.soak_faults import digest
from benchmarks.soak_play import Run, Table


@dataclass
class StoredRound:
    pk: int
    room: int
    number: int
    settled_at: Any
    result: Any
    tx: int | None


@dataclass
class Check:
    name: str
    ok: bool
    figures: str

    def line(self) -> str:
        return f"{'PASS' if self.ok else 'FAIL'} {self.name}: {self.figures}"


def chunks(items: list[Any], size: int = 1000) -> Iterator[list[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def balances_of(names: Iterable[str]) -> dict[str, int]:
    from accounts.models import Account, AccountKind  # noqa: PLC0415

    rows = Account.objects.filter(kind=AccountKind.WALLET, user__username__in=list(names))
    return dict(rows.values_list("user__username", "balance"))


def room_codes(rooms: list[int]) -> dict[int, str]:
    from lobby.models import Room  # noqa: PLC0415

    return dict(Room.objects.filter(pk__in=rooms).values_list("pk", "code"))


def away_at_settlements(rooms: list[int]) -> set[tuple[int, int, int]]:
    """(room, round, position) of the players who were disconnected when their round settled,
    from the tables' event logs. Such a player with its hand in is settled without escaping
    (docs/protocol.md, "Leaving a round") and may be let go at the Ready deadline before it is
    back: it need not have seen the settlement."""
    from games.models import TableEvent  # noqa: PLC0415

    away: set[tuple[int, int, int]] = set()
    connected: dict[tuple[int, int], bool] = {}
    events = (
        TableEvent.objects.filter(
            table__room_id__in=rooms,
            type__in=("seated", "disconnected", "reconnected", "left", "settled"),
        )
        .order_by("table_id", "version")
        .values_list("table__room_id", "type", "payload")
        .iterator(chunk_size=2000)
    )
    for room, kind, payload in events:
        if kind == "settled":
            away.update(
                (room, payload["round_no"], position)
                for (at, position), here in connected.items()
                if at == room and not here
            )
        elif kind == "left":
            connected.pop((room, payload["position"]), None)
        else:
            connected[(room, payload["position"])] = kind != "disconnected"
    return away


def run_checks(
    run: Run, tables: list[Table], start_balances: dict[str, int], rounds_requested: int
) -> tuple[list[Check], list[str]]:
    """The checks, and figures read from the database (auto-played seats, escapes …)."""
    from django.core.management import CommandError, call_command  # noqa: PLC0415
    from django.db.models import Sum  # noqa: PLC0415

    from accounts.models import Account, AccountKind, Entry, Transaction  # noqa: PLC0415
    from accounts.models import TransactionKind as Kind  # noqa: PLC0415
    from games.models import Round, RoundPlayer  # noqa: PLC0415

    checks: list[Check] = []
    figures: list[str] = []
    rows = (
        Round.objects.filter(table__room_id__in=[t.room for t in tables])
        .values_list("pk", "table__room_id", "number", "settled_at", "result", "transaction")
        .iterator(chunk_size=500)
    )
    rounds = [StoredRound(*row) for row in rows]
    settled = [r for r in rounds if r.settled_at is not None and r.result is not None]
    unsettled = len(rounds) - len(settled)

    # Rounds: all given out and settled, every seat finished.
    checks.append(
        Check(
            "rounds",
            len(settled) == rounds_requested and not unsettled and not run.failures,
            f"{len(settled)} settled of {rounds_requested} requested, {unsettled} unsettled; "
            f"{len(run.failures)} client failures"
            + (f" (first: {run.failures[0]})" if run.failures else ""),
        )
    )

    # The ledger's transactions of these rounds.
    txs: dict[int, tuple[str, str, str]] = {}  # pk -> (kind, idempotency key, reference)
    for part in chunks([f"round:{r.pk}" for r in rounds]):
        for pk, kind, key, ref in Transaction.objects.filter(reference__in=part).values_list(
            "pk", "kind", "idempotency_key", "reference"
        ):
            txs[pk] = (kind, key, ref)
    entries: dict[int, dict[int | None, int]] = defaultdict(dict)  # tx -> {user id: amount}
    house_in = 0
    for part in chunks(list(txs)):
        for tx, user, account_kind, amount in Entry.objects.filter(
            transaction_id__in=part
        ).values_list("transaction_id", "account__user_id", "account__kind", "amount"):
            entries[tx][user] = amount  # the house's user is None
            if account_kind == AccountKind.HOUSE:
                house_in += amount
    by_ref: dict[str, list[int]] = defaultdict(list)
    for pk, (_kind, _key, ref) in txs.items():
        by_ref[ref].append(pk)

    # Exactly one settlement per round, moving what the stored result says.
    problems: Counter[str] = Counter()
    deltas: Counter[int] = Counter()  # user id -> coins won in these rounds
    penalties = zero_sum_broken = 0
    for r in settled:
        players = r.result["players"]
        net = {int(p["id"]): p["delta"] + p["penalty"] for p in players}
        net = {user: amount for user, amount in net.items() if amount}
        for p in players:
            deltas[int(p["id"])] += p["delta"]
            penalties += p["penalty"]
        if sum(p["delta"] + p["penalty"] for p in players) != 0:
            zero_sum_broken += 1
        mine = by_ref[f"round:{r.pk}"]
        settlements = [t for t in mine if txs[t][0] == Kind.SETTLEMENT]
        if net:
            if len(settlements) != 1:
                problems[f"{len(settlements)} settlements"] += 1
            elif txs[settlements[0]][1] != f"round:{r.pk}:settlement" or settlements[0] != r.tx:
                problems["settlement not the round's"] += 1
            elif entries[settlements[0]] != net:
                problems["settlement differs from the result"] += 1
        elif settlements or r.tx is not None:
            problems["a settlement of a round without coins"] += 1
        expected = {
            f"round:{r.pk}:penalty:{p['id']}": {int(p["id"]): -p["penalty"], None: p["penalty"]}
            for p in players
            if p["penalty"] > 0
        }
        paid = {txs[t][1]: entries[t] for t in mine if txs[t][0] == Kind.ESCAPE_PENALTY}
        if paid != expected:
            problems["penalties differ from the result"] += 1
        if len(mine) != len(settlements) + len(paid):
            problems["other transactions"] += 1
    checks.append(
        Check(
            "one_settlement_per_round",
            not problems and not unsettled,
            f"{len(settled)} rounds, "
            f"{sum(1 for t in txs.values() if t[0] == Kind.SETTLEMENT)} settlement and "
            f"{sum(1 for t in txs.values() if t[0] == Kind.ESCAPE_PENALTY)} penalty "
            f"transactions; {unsettled} unsettled; problems: {dict(problems) or 'none'}",
        )
    )

    # Coins conserved: the ledger as a whole, and this run's players and house.
    total = Account.objects.aggregate(total=Sum("balance"))["total"] or 0
    entry_total = Entry.objects.aggregate(total=Sum("amount"))["total"] or 0
    minted = -(Account.objects.filter(kind=AccountKind.MINT).aggregate(s=Sum("balance"))["s"] or 0)
    end_balances = balances_of(start_balances)
    ids = dict(
        Account.objects.filter(user__username__in=list(start_balances)).values_list(
            "user__username", "user_id"
        )
    )
    wrong_players = [
        name
        for name, start in start_balances.items()
        if end_balances.get(name, 0) - start != deltas.get(ids.get(name, -1), 0)
    ]
    moved = sum(end_balances.values()) - sum(start_balances.values())
    checks.append(
        Check(
            "coins_conserved",
            total == 0
            and entry_total == 0
            and not wrong_players
            and not zero_sum_broken
            and house_in == penalties
            and moved == sum(deltas.values()),
            f"all accounts sum to {total} (minted {minted:,}); players {moved:+,} = results "
            f"{sum(deltas.values()):+,}; house {house_in:+,} = penalties {penalties:+,}; "
            f"{len(wrong_players)} of {len(start_balances)} wallets off"
            + (f" ({', '.join(wrong_players[:5])})" if wrong_players else "")
            + f"; {zero_sum_broken} rounds not zero-sum",
        )
    )

    # No negative balance, now or after any entry.
    negative_now = Account.objects.exclude(kind=AccountKind.MINT).filter(balance__lt=0).count()
    negative_ever = Entry.objects.filter(
        account__kind=AccountKind.WALLET, balance_after__lt=0
    ).count()
    lowest = min(end_balances.values(), default=0)
    checks.append(
        Check(
            "no_negative_balance",
            negative_now == 0 and negative_ever == 0,
            f"{negative_now} accounts below 0 now, {negative_ever} wallet entries ever left "
            f"one below 0; lowest soak wallet {lowest:,}",
        )
    )

    # Every client's view equals the stored result; every player there at the end saw it.
    stored = {(r.room, r.number): digest(r.result) for r in settled}
    seen: set[tuple[int, int, int]] = set()
    wrong = unknown = 0
    for view in run.views:
        expected = stored.get((view.room, view.round_no))
        if expected is None:
            unknown += 1
        elif expected != view.sha256:
            wrong += 1
        seen.add((view.room, view.round_no, view.position))
    away = away_at_settlements([t.room for t in tables])
    missing = [
        (r.room, r.number, p["position"])
        for r in settled
        for p in r.result["players"]
        if not p["escaped"]
        and (r.room, r.number, p["position"]) not in seen
        and (r.room, r.number, p["position"]) not in away
        and (r.room, r.number, p["position"]) not in run.reloaded_over
    ]
    checks.append(
        Check(
            "client_views",
            wrong == 0 and unknown == 0 and not missing,
            f"{len(run.views)} views of {len(stored)} results: {wrong} differ, {unknown} of "
            f"no stored round; {len(missing)} players present at a settlement saw none "
            f"({len(run.reloaded_over)} reloaded over theirs)"
            + (f" (first: room {missing[0][0]} round {missing[0][1]})" if missing else ""),
        )
    )

    # The protocol as the clients saw it.
    early, unannounced = run.notes["events_before_welcome"], run.notes["left_unannounced"]
    errors: Counter[str] = Counter()
    for client in run.clients:
        errors.update(client.stats.errors)
    checks.append(
        Check(
            "protocol",
            early == 0 and unannounced == 0 and not errors["server_error"],
            f"{early} events frames before the welcome of their connection; {unannounced} "
            f"players let go without a `left` event or close 4000; {errors['server_error']} "
            f"server errors; error frames {dict(errors) or 0}",
        )
    )

    # ledger_audit.
    out = io.StringIO()
    try:
        call_command("ledger_audit", stdout=out)
        audit_ok, said = True, out.getvalue().strip().splitlines()
    except CommandError as error:
        audit_ok, said = False, [*out.getvalue().strip().splitlines(), str(error)]
    checks.append(Check("ledger_audit", audit_ok, " ".join(said)))

    # What the database says the faults did.
    players = RoundPlayer.objects.filter(round_id__in=[r.pk for r in settled])
    autos = Counter(players.exclude(auto="").values_list("auto", flat=True))
    escaped = players.filter(escaped=True).count()
    specials = players.exclude(special="").count()
    sizes = Counter(len(r.result["players"]) for r in settled)
    figures.append(
        f"stored: auto-played seats {dict(autos)}, escaped {escaped}, specials played "
        f"{specials}, rounds by players {dict(sorted(sizes.items()))}"
    )
    return checks, figures

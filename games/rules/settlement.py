"""From water to coins (RULES.md §7.4–7.5): cannot-cover clearing and escape penalties.

Integers throughout. Coins only move between the players of the round and the house, so the
players' deltas plus the penalties always sum to zero, and no balance ever goes below zero.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Transfer:
    """Coins moved from one seat to another; ``kind`` is ``settlement`` or ``cover`` (§7.5)."""

    src: int
    dst: int
    coins: int
    kind: str = "settlement"


@dataclass(frozen=True, slots=True)
class Cut:
    """A payment reduced by the cannot-cover rule: owed ``owed``, paid ``paid``."""

    src: int
    dst: int
    owed: int
    paid: int


@dataclass(frozen=True, slots=True)
class Settlement:
    deltas: tuple[int, ...]  # per seat, penalties included
    penalties: tuple[int, ...]  # per seat, paid to the house
    transfers: tuple[Transfer, ...]
    cuts: tuple[Cut, ...]
    rounds: int  # clearing steps taken


def share(available: int, debts: Sequence[int]) -> list[int]:
    """Split ``available`` among creditors in proportion to ``debts`` (RULES.md §7.4).

    Creditors are taken from the largest debt down (equal debts in seat order); each gets
    ``floor(Y * X_i / sum X)`` and the last one gets what is left, but never more than its debt:
    the excess goes back one coin each in turn, from the largest debt down, never past a debt
    (amended §7.4, §11 example 4). So the shares add up to ``available`` whenever it is at most
    the total owed, and no creditor ever gets more than it is owed.
    """
    out = [0] * len(debts)
    total = sum(debts)
    order = sorted((i for i, x in enumerate(debts) if x > 0), key=lambda i: (-debts[i], i))
    if not order or available <= 0:
        return out
    available = min(available, total)
    given = 0
    for i in order[:-1]:
        out[i] = available * debts[i] // total
        given += out[i]
    last = order[-1]
    out[last] = available - given
    if out[last] > debts[last]:
        excess = out[last] - debts[last]
        out[last] = debts[last]
        _round_robin(out, debts, order, excess)
    return out


def _round_robin(paid: list[int], debts: Sequence[int], order: Sequence[int], coins: int) -> int:
    """Give ``coins`` one at a time to ``order`` in turn, again and again, never past a debt.

    Done in whole turns at once (each turn gives every creditor still owed one coin), so it
    costs a few steps whatever the amount. Returns the coins left when every debt is paid.
    """
    active = [i for i in order if paid[i] < debts[i]]
    while coins > 0 and active:
        turns = min(coins // len(active), min(debts[i] - paid[i] for i in active))
        if turns == 0:
            for i in active[:coins]:
                paid[i] += 1
            return 0
        for i in active:
            paid[i] += turns
        coins -= turns * len(active)
        active = [i for i in active if paid[i] < debts[i]]
    return coins


def clear(
    owed: Sequence[Sequence[int]], balances: Sequence[int | None]
) -> tuple[list[list[int]], int]:
    """Proportional clearing (RULES.md §7.4 steps 1–4). ``owed[i][j]``: coins i owes j.

    ``None`` balance means "enough to pay anything". Returns the payments and the step count.
    """
    n = len(owed)
    pay = [list(row) for row in owed]
    steps = 0
    while True:
        steps += 1
        new = [row[:] for row in pay]
        for i in range(n):
            total_owed = sum(owed[i])
            if total_owed == 0:
                continue
            bal = balances[i]
            available = None if bal is None else bal + sum(pay[k][i] for k in range(n))
            if available is None or available >= total_owed:
                computed = list(owed[i])
            else:
                computed = share(available, owed[i])
            new[i] = [min(p, c) for p, c in zip(pay[i], computed, strict=True)]
        if new == pay:
            _pay_leftovers(owed, balances, pay)
            return pay, steps
        pay = new


def _pay_leftovers(
    owed: Sequence[Sequence[int]], balances: Sequence[int | None], pay: list[list[int]]
) -> None:
    """Step 4: a cut player still holding coins pays them to its creditors not yet paid in
    full, round robin, largest unpaid amount first (equal amounts in seat order); repeated
    over all players, in seat order, until nothing changes. A cut player ends with 0 coins."""
    n = len(owed)
    changed = True
    while changed:
        changed = False
        for i in range(n):
            bal = balances[i]
            if bal is None or sum(pay[i]) >= sum(owed[i]):
                continue
            left = bal + sum(pay[k][i] for k in range(n)) - sum(pay[i])
            if left <= 0:
                continue
            unpaid = [owed[i][j] - pay[i][j] for j in range(n)]
            order = sorted((j for j in range(n) if unpaid[j] > 0), key=lambda j: (-unpaid[j], j))
            rest = _round_robin(pay[i], owed[i], order, left)
            changed = changed or rest != left


def settle(
    pair_coins: Sequence[Sequence[int]],
    balances: Sequence[int | None],
    escaped: Sequence[bool],
    *,
    penalty: int,
    escape_covers_losses: bool,
) -> Settlement:
    """Settle a round. ``pair_coins[i][j]``: coins i wins from j by the rules (antisymmetric).

    ``penalty`` is the escape penalty in coins (multiplier × base score).
    """
    n = len(pair_coins)
    owed = [[max(0, -pair_coins[i][j]) for j in range(n)] for i in range(n)]
    pay, steps = clear(owed, balances)
    deltas = [sum(pay[k][i] for k in range(n)) - sum(pay[i]) for i in range(n)]
    transfers = [Transfer(i, j, pay[i][j]) for i in range(n) for j in range(n) if pay[i][j] > 0]
    cuts = [
        Cut(i, j, owed[i][j], pay[i][j])
        for i in range(n)
        for j in range(n)
        if pay[i][j] < owed[i][j]
    ]

    def left(i: int) -> int | None:
        bal = balances[i]
        return None if bal is None else bal + deltas[i]

    def take(i: int, amount: int) -> int:
        room = left(i)
        return amount if room is None else max(0, min(amount, room))

    if escape_covers_losses:
        # The escapers pay the other losers' losses (RULES.md §7.5, [S1]), in seat order.
        for loser in range(n):
            if escaped[loser]:
                continue
            for esc in (i for i in range(n) if escaped[i]):
                if deltas[loser] >= 0:
                    break
                moved = take(esc, -deltas[loser])
                if moved:
                    deltas[esc] -= moved
                    deltas[loser] += moved
                    transfers.append(Transfer(esc, loser, moved, "cover"))
    penalties = [take(i, penalty) if escaped[i] else 0 for i in range(n)]
    deltas = [d - p for d, p in zip(deltas, penalties, strict=True)]
    return Settlement(tuple(deltas), tuple(penalties), tuple(transfers), tuple(cuts), steps)

"""Checks shared by the live tests that play rounds with real clients (faults, cluster)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from accounts.models import Transaction, TransactionKind
from benchmarks.table_client import TableClient
from games.models import Round


async def wait_for(what: str, check: Callable[[], bool], seconds: float = 30) -> None:
    """Poll ``check`` on the running loop until it holds; fail after ``seconds``."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + seconds
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {seconds} s waiting for {what}")
        await asyncio.sleep(0.05)


def assert_round_settled_once(round_: Round, clients: list[TableClient]) -> None:
    """The round settled by exactly one ledger transaction, and every client saw the stored
    result, whose coin movements are the ledger's."""
    assert round_.settled_at is not None
    settlements = list(
        Transaction.objects.filter(
            kind=TransactionKind.SETTLEMENT, reference=f"round:{round_.pk}"
        ).prefetch_related("entries__account")
    )
    ledger: dict[int, int] = {}
    if settlements:
        assert [t.idempotency_key for t in settlements] == [f"round:{round_.pk}:settlement"]
        ledger = {e.account.user_id: e.amount for e in settlements[0].entries.all()}
    for client in clients:
        result: dict[str, Any] = client.results[round_.number]
        assert result == round_.result
        seen = {int(p["id"]): p["delta"] + p["penalty"] for p in result["players"]}
        assert {user: amount for user, amount in seen.items() if amount} == ledger

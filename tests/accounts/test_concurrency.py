"""Several processes moving coins among the same few wallets at once, on PostgreSQL.

Four processes (spawned, each with its own Django and database connection to the test
database) post 50 random transfers each among four hot wallets, plus the same ten
"shared" requests, which all of them post under the same idempotency keys. Afterwards the
ledger reconciles, no wallet is negative, each shared key was posted exactly once, and no
deadlock or serialization error escaped: a worker that hits one fails the test.
"""

import multiprocessing

import pytest
from django.db import connection, connections

from accounts.models import Account, Transaction, TransactionKind
from accounts.selectors import ledger_audit
from tests.accounts.concurrency_worker import (
    HOT_WALLETS,
    SHARED_KEYS,
    TRANSFERS_PER_WORKER,
    transfer_worker,
)
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import requires_postgresql

WORKERS = 4
STARTING_COINS = 2_000
# Generous: the whole run takes a few seconds; a worker that died would otherwise hang it.
TIMEOUT_SECONDS = 120


@requires_postgresql
@pytest.mark.django_db(transaction=True)
def test_concurrent_transfers_between_hot_wallets_reconcile(
    transactional_db: None, make_player: MakePlayer
) -> None:
    players = [make_player(STARTING_COINS) for _ in range(HOT_WALLETS)]
    user_ids = [player.pk for player in players]
    database_name = connection.settings_dict["NAME"]
    connections.close_all()

    context = multiprocessing.get_context("spawn")
    start, queue = context.Barrier(WORKERS), context.Queue()
    processes = [
        context.Process(
            target=transfer_worker, args=(database_name, worker, user_ids, start, queue)
        )
        for worker in range(WORKERS)
    ]
    for process in processes:
        process.start()
    try:
        results = [queue.get(timeout=TIMEOUT_SECONDS) for _ in processes]
    finally:
        for process in processes:
            process.join(timeout=10)
            if process.is_alive():
                process.kill()

    errors = [result["error"] for result in results if "error" in result]
    assert not errors, "a worker failed:\n" + "\n".join(errors)
    audit = ledger_audit()
    assert audit.ok, audit
    wallets = Account.objects.filter(user__in=players)
    assert all(wallet.balance >= 0 for wallet in wallets)
    assert sum(wallet.balance for wallet in wallets) == HOT_WALLETS * STARTING_COINS

    # Every request was either posted or refused for lack of coins; nothing else escaped.
    for result in results:
        assert len(result["posted"]) + result["refused"] == TRANSFERS_PER_WORKER + SHARED_KEYS

    # Each worker's own keys were posted by it alone; a shared key, once, for all who got it.
    own = {key: pk for result in results for key, pk in result["posted"].items() if "worker" in key}
    settlements = Transaction.objects.filter(kind=TransactionKind.SETTLEMENT)
    assert set(
        settlements.filter(idempotency_key__startswith="worker:").values_list("pk", flat=True)
    ) == set(own.values())
    for index in range(SHARED_KEYS):
        key = f"shared:{index}"
        ids = {result["posted"][key] for result in results if key in result["posted"]}
        assert len(ids) <= 1
        assert settlements.filter(idempotency_key=key).count() == len(ids)
    assert sum(result["refused"] for result in results) < WORKERS * TRANSFERS_PER_WORKER

"""The body of the concurrency test's worker processes (tests/accounts/test_concurrency.py).

A module of its own that imports nothing from Django at the top: a spawned process imports it
to find `transfer_worker` before Django is set up.
"""

import os
import random
import traceback
from multiprocessing.queues import Queue
from multiprocessing.synchronize import Barrier
from typing import Any

TRANSFERS_PER_WORKER = 50
HOT_WALLETS = 4
SHARED_KEYS = 10


def shared_request(index: int, user_ids: list[int]) -> dict[str, Any]:
    """The same request in every worker: one transaction, however many ask for it."""
    return {
        "source_id": user_ids[index % HOT_WALLETS],
        "destination_id": user_ids[(index + 1) % HOT_WALLETS],
        "amount": 1 + index,
        "idempotency_key": f"shared:{index}",
    }


def transfer_worker(
    database_name: str, worker: int, user_ids: list[int], start: Barrier, results: Queue
) -> None:
    """Set Django up on the test database, wait for the others, post; report on `results`.

    Puts {"worker", "posted": {key: transaction id}, "refused": count} on the queue, or
    {"worker", "error": traceback} if anything but InsufficientFunds was raised.
    """
    try:
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shisanshui.settings.test")
        from django.conf import settings

        settings.DATABASES["default"]["NAME"] = database_name
        import django

        django.setup()
        from accounts.errors import InsufficientFunds
        from accounts.models import User
        from accounts.services import wallet_transfer

        users = {user.pk: user for user in User.objects.filter(pk__in=user_ids)}
        rng = random.Random(worker)
        requests = [
            {
                "source_id": source,
                "destination_id": destination,
                "amount": rng.randint(1, 600),
                "idempotency_key": f"worker:{worker}:{number}",
            }
            for number in range(TRANSFERS_PER_WORKER)
            for source, destination in [rng.sample(user_ids, 2)]
        ]
        requests += [shared_request(index, user_ids) for index in range(SHARED_KEYS)]
        rng.shuffle(requests)

        posted: dict[str, int] = {}
        refused = 0
        start.wait(timeout=60)
        for request in requests:
            try:
                transaction = wallet_transfer(
                    source=users[request["source_id"]],
                    destination=users[request["destination_id"]],
                    amount=request["amount"],
                    idempotency_key=request["idempotency_key"],
                )
            except InsufficientFunds:
                refused += 1
            else:
                posted[request["idempotency_key"]] = transaction.pk
        results.put({"worker": worker, "posted": posted, "refused": refused})
    except BaseException:
        results.put({"worker": worker, "error": traceback.format_exc()})

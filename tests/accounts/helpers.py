"""Helpers shared by the accounts tests."""

import pytest
from django.db import connection

from accounts.models import Account, AccountKind, Entry, Transaction, User

requires_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql",
    reason="needs PostgreSQL (its triggers, row locks or processes); make test provides it",
)


def balance_of(user: User) -> int:
    return Account.objects.get(user=user).balance


def system_balance(kind: AccountKind) -> int:
    account = Account.objects.filter(kind=kind).first()
    return account.balance if account else 0


def ledger_counts() -> tuple[int, int, int]:
    """(accounts, transactions, entries): what must not change when a request is refused."""
    return Account.objects.count(), Transaction.objects.count(), Entry.objects.count()


def fire_deferred_checks() -> None:
    """Run the DEFERRABLE constraint triggers now instead of at a commit the test never makes."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
            cursor.execute("SET CONSTRAINTS ALL DEFERRED")

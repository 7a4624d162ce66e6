"""The database refuses what would break the ledger, even from SQL written around the ORM.

Each statement runs in a savepoint (transaction.atomic) so the test can go on after the
database refuses it; the DEFERRABLE checks are fired with SET CONSTRAINTS ALL IMMEDIATE,
as a COMMIT would.
"""

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import DatabaseError, IntegrityError, connection, transaction

from accounts.ledger import account_system_get_or_create
from accounts.models import Account, AccountKind, Entry, Transaction
from accounts.selectors import ledger_audit
from accounts.services import wallet_get_or_create, wallet_transfer
from tests.accounts.conftest import MakePlayer
from tests.accounts.helpers import balance_of, ledger_counts, requires_postgresql

pytestmark = pytest.mark.django_db


def _sql(statement: str, params: list[object] | tuple[object, ...] = ()) -> None:
    with connection.cursor() as cursor:
        cursor.execute(statement, params)


def _refused_by_the_database(*statements: str, params: tuple[object, ...] = ()) -> str:
    """Run the statements, then the deferred checks; returns the database's error message."""
    counts = ledger_counts()
    with pytest.raises(DatabaseError) as raised, transaction.atomic():
        for statement in statements:
            _sql(statement, params)
        if connection.vendor == "postgresql":
            _sql("SET CONSTRAINTS ALL IMMEDIATE")
    assert ledger_counts() == counts
    return str(raised.value)


@pytest.fixture
def posted(make_player: MakePlayer) -> Transaction:
    a, b = make_player(1000), make_player(1000)
    return wallet_transfer(source=a, destination=b, amount=100, idempotency_key="t:1")


def _insert_transaction(key: str) -> int:
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO accounts_transaction"
            " (kind, reference, reason, idempotency_key, content_hash, created_at)"
            " VALUES ('settlement', '', '', %s, '', CURRENT_TIMESTAMP) RETURNING id",
            [key],
        )
        return int(cursor.fetchone()[0])


def _insert_entry(transaction_id: int, account: Account, amount: int) -> None:
    balance_after = Account.objects.get(pk=account.pk).balance + amount
    _sql(
        "INSERT INTO accounts_entry (transaction_id, account_id, amount, balance_after)"
        " VALUES (%s, %s, %s, %s)",
        [transaction_id, account.pk, amount, balance_after],
    )


# Append-only, on both databases.


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE accounts_entry SET amount = amount * 2",
        "UPDATE accounts_entry SET balance_after = 0",
        "DELETE FROM accounts_entry",
        "UPDATE accounts_transaction SET reason = 'edited'",
        "UPDATE accounts_transaction SET kind = 'grant'",
        "DELETE FROM accounts_transaction",
    ],
)
def test_entries_and_transactions_can_be_neither_updated_nor_deleted(
    posted: Transaction, statement: str
) -> None:
    message = _refused_by_the_database(statement)

    assert "append-only" in message
    assert sorted(posted.entries.values_list("amount", flat=True)) == [-100, 100]


def test_the_orm_cannot_edit_or_delete_ledger_rows_either(posted: Transaction) -> None:
    entry = posted.entries.first()
    assert entry is not None
    entry.amount = 1
    for attempt in (entry.save, entry.delete, posted.delete, Entry.objects.all().delete):
        with pytest.raises(DatabaseError), transaction.atomic():
            attempt()


def test_an_account_starts_at_zero(db: None) -> None:
    message = _refused_by_the_database(
        "INSERT INTO accounts_account (kind, balance, created_at)"
        " VALUES ('house', 1000000, CURRENT_TIMESTAMP)"
    )

    assert "starts at 0" in message


def test_an_entry_must_state_the_balance_it_leaves(posted: Transaction) -> None:
    wallet_id = posted.entries.first().account_id  # type: ignore[union-attr]

    message = _refused_by_the_database(
        "INSERT INTO accounts_entry (transaction_id, account_id, amount, balance_after)"
        f" VALUES ({posted.pk}, {wallet_id}, 5, 1)"
    )

    assert "balance_after" in message


# PostgreSQL: balanced, complete transactions; balances moved only by entries.


@requires_postgresql
def test_an_unbalanced_transaction_is_refused_at_commit(make_player: MakePlayer) -> None:
    wallet = wallet_get_or_create(user=make_player(1000))
    house = account_system_get_or_create(kind=AccountKind.HOUSE)
    counts = ledger_counts()

    with pytest.raises(IntegrityError, match="sum to 5, not 0"), transaction.atomic():
        transaction_id = _insert_transaction("raw:unbalanced")
        _insert_entry(transaction_id, wallet, -5)
        _insert_entry(transaction_id, house, 10)
        _sql("SET CONSTRAINTS ALL IMMEDIATE")

    assert ledger_counts() == counts


@requires_postgresql
def test_a_balanced_transaction_written_in_raw_sql_is_accepted(make_player: MakePlayer) -> None:
    player = make_player(1000)
    wallet = wallet_get_or_create(user=player)
    house = account_system_get_or_create(kind=AccountKind.HOUSE)

    with transaction.atomic():
        transaction_id = _insert_transaction("raw:balanced")
        _insert_entry(transaction_id, wallet, -5)
        _insert_entry(transaction_id, house, 5)
        _sql("SET CONSTRAINTS ALL IMMEDIATE")

    assert balance_of(player) == 995
    assert ledger_audit().ok


@requires_postgresql
def test_a_transaction_without_entries_is_refused_at_commit(db: None) -> None:
    with pytest.raises(IntegrityError, match="has no entries"), transaction.atomic():
        _insert_transaction("raw:empty")
        _sql("SET CONSTRAINTS ALL IMMEDIATE")


@requires_postgresql
def test_entries_cannot_be_added_to_an_earlier_transaction(
    posted: Transaction, make_player: MakePlayer
) -> None:
    third = wallet_get_or_create(user=make_player(1000))
    house = account_system_get_or_create(kind=AccountKind.HOUSE)

    with pytest.raises(IntegrityError, match="after it was posted"), transaction.atomic():
        # Balanced on its own, but slipped into a transaction posted earlier.
        _insert_entry(posted.pk, third, -7)
        _insert_entry(posted.pk, house, 7)
        _sql("SET CONSTRAINTS ALL IMMEDIATE")


@requires_postgresql
def test_a_wallet_cannot_be_driven_below_zero(make_player: MakePlayer) -> None:
    player = make_player(100)
    wallet = wallet_get_or_create(user=player)
    house = account_system_get_or_create(kind=AccountKind.HOUSE)

    with pytest.raises(IntegrityError, match="account_wallet_not_negative"), transaction.atomic():
        transaction_id = _insert_transaction("raw:overdraft")
        _insert_entry(transaction_id, house, 101)
        _insert_entry(transaction_id, wallet, -101)

    assert balance_of(player) == 100


@requires_postgresql
def test_the_mint_and_the_house_may_go_negative(db: None) -> None:
    mint = account_system_get_or_create(kind=AccountKind.MINT)
    house = account_system_get_or_create(kind=AccountKind.HOUSE)

    with transaction.atomic():
        transaction_id = _insert_transaction("raw:system")
        _insert_entry(transaction_id, mint, 50)
        _insert_entry(transaction_id, house, -50)
        _sql("SET CONSTRAINTS ALL IMMEDIATE")

    assert Account.objects.get(pk=house.pk).balance < 0


@requires_postgresql
@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE accounts_account SET balance = balance + 1000000",
        "UPDATE accounts_account SET balance = 0",
    ],
)
def test_a_balance_changes_only_by_entries(posted: Transaction, statement: str) -> None:
    balances = dict(Account.objects.values_list("pk", "balance"))

    assert "changes only by ledger entries" in _refused_by_the_database(statement)
    assert dict(Account.objects.values_list("pk", "balance")) == balances


@requires_postgresql
def test_a_wallet_cannot_change_hands(posted: Transaction, make_player: MakePlayer) -> None:
    thief = make_player(0)
    wallet_id = posted.entries.first().account_id  # type: ignore[union-attr]

    message = _refused_by_the_database(
        f"UPDATE accounts_account SET user_id = {thief.pk} WHERE id = {wallet_id}"
    )
    assert "cannot change" in message
    assert "cannot change" in _refused_by_the_database(
        f"UPDATE accounts_account SET kind = 'house' WHERE id = {wallet_id}"
    )


@requires_postgresql
def test_an_account_with_entries_cannot_be_deleted(posted: Transaction) -> None:
    wallet_id = posted.entries.first().account_id  # type: ignore[union-attr]

    _refused_by_the_database(f"DELETE FROM accounts_account WHERE id = {wallet_id}")


@requires_postgresql
def test_the_audit_finds_a_ledger_tampered_with_behind_the_triggers(posted: Transaction) -> None:
    call_command("ledger_audit", stdout=io.StringIO())
    wallet_id = posted.entries.first().account_id  # type: ignore[union-attr]

    with transaction.atomic():
        # Only someone able to disable triggers can do this; the audit still notices.
        _sql("SET CONSTRAINTS ALL IMMEDIATE")
        _sql("ALTER TABLE accounts_account DISABLE TRIGGER accounts_account_guard")
        _sql(f"UPDATE accounts_account SET balance = balance + 7 WHERE id = {wallet_id}")
        audit = ledger_audit()
        with pytest.raises(CommandError, match="cached balance differs"):
            call_command("ledger_audit", stdout=io.StringIO())
        transaction.set_rollback(True)

    assert not audit.ok
    assert audit.total_balance == 7 and audit.mismatched_accounts == [wallet_id]


@pytest.mark.skipif(connection.vendor != "sqlite", reason="the SQLite triggers")
def test_on_sqlite_entries_still_move_the_cached_balance(make_player: MakePlayer) -> None:
    a, b = make_player(1000), make_player(1000)

    wallet_transfer(source=a, destination=b, amount=1, idempotency_key="t")

    assert (balance_of(a), balance_of(b)) == (999, 1001)
    assert ledger_audit().ok

"""A transactional test's flush, with the rows ``post_migrate`` makes restored, not rebuilt.

After every transactional test Django truncates every table, then sends ``post_migrate``, whose
receivers rebuild the content types, the permissions and the staff groups from nothing: about
eighty queries a test, and new files for every table and index. The rows they make are the
same after every flush (the tables are empty when they run), so on PostgreSQL the first flush
of a test database runs as Django's, then copies every table it left non-empty into a table of
its own (not a model's, so no flush touches it); every later flush empties every table and
copies those rows back, ids included (:func:`_empty_and_restore`). Sequences are never reset
(Django's flush does not reset them either), so a row a test inserts never takes a restored id.
Tests that set ``available_apps`` or a serialized rollback keep Django's own flush, and so do
the ``live`` and ``browser`` tests (:data:`enabled` is off for them): their platform's processes
may still be writing when the test ends, and Django's TRUNCATE waits for them where row-by-row
deletes could deadlock with them.
"""

from __future__ import annotations

from django.contrib.contenttypes.models import ContentType
from django.core.management import call_command
from django.db import connections, transaction
from django.test import TransactionTestCase

SNAPSHOT_PREFIX = "test_after_flush_"

# database alias -> the tables post_migrate fills, in the order they were found
_snapshots: dict[str, list[str]] = {}
_django_teardown = TransactionTestCase._fixture_teardown
# Set per test by tests/django_isolation.py: False for a test that starts processes.
enabled = True


def _flush(db_name: str, *, post_migrate: bool) -> None:
    call_command(
        "flush",
        verbosity=0,
        interactive=False,
        database=db_name,
        reset_sequences=False,
        allow_cascade=False,
        inhibit_post_migrate=not post_migrate,
    )


def _take_snapshot(db_name: str) -> list[str]:
    connection = connections[db_name]
    quote = connection.ops.quote_name
    tables = []
    with connection.cursor() as cursor:
        for table in connection.introspection.django_table_names(include_views=False):
            cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {quote(table)})")
            if cursor.fetchone()[0]:
                snapshot = quote(SNAPSHOT_PREFIX + table)
                cursor.execute(f"DROP TABLE IF EXISTS {snapshot}")
                cursor.execute(f"CREATE TABLE {snapshot} AS SELECT * FROM {quote(table)}")
                tables.append(table)
    return tables


def _empty_and_restore(db_name: str, tables: list[str]) -> None:
    """Every model's table emptied, then the snapshot's rows copied back, in one transaction.

    DELETE rather than Django's TRUNCATE: the tables of a test hold a few rows, and TRUNCATE
    gives every table and index a new file, which costs the database more than the rows. With
    ``session_replication_role = replica`` no trigger runs — neither the ledger's guard against
    deleting its rows (the flush removes every row, as TRUNCATE does) nor the foreign keys'
    checks (every row goes, then only rows that were consistent come back)."""
    connection = connections[db_name]
    quote = connection.ops.quote_name
    everything = connection.introspection.django_table_names(only_existing=True)
    statements = ["SET LOCAL session_replication_role = replica"]
    statements += [f"DELETE FROM {quote(table)}" for table in everything]
    statements += [
        f"INSERT INTO {quote(table)} SELECT * FROM {quote(SNAPSHOT_PREFIX + table)}"
        for table in tables
    ]
    with transaction.atomic(using=db_name), connection.cursor() as cursor:
        cursor.execute("; ".join(statements))
    ContentType.objects.clear_cache()


def _fixture_teardown(self: TransactionTestCase) -> None:
    if not enabled or self.available_apps is not None or self.serialized_rollback:
        _django_teardown(self)
        return
    for db_name in self._databases_names(include_mirrors=False):
        if connections[db_name].vendor != "postgresql":
            _flush(db_name, post_migrate=True)
        elif (tables := _snapshots.get(db_name)) is None:
            _flush(db_name, post_migrate=True)
            _snapshots[db_name] = _take_snapshot(db_name)
        else:
            _empty_and_restore(db_name, tables)


def install() -> None:
    """Use the fast flush for every transactional test of this process."""
    TransactionTestCase._fixture_teardown = _fixture_teardown  # type: ignore[method-assign]

"""What every Django test starts from: its own rate-limit counters, empty throttle counters, no
table state held, the default language.

A plugin of its own, which tests/conftest.py registers only when pytest-django runs: the pure
tests (tests/games/rules, tests/games/table) then run without Django, with
`pytest -p no:django` (`make test-pure`).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(autouse=True)
def rate_limits(settings: Any) -> Iterator[None]:
    """Every test counts its rate limits (shisanshui.ratelimit) under a key prefix of its own,
    so no other test, nor another run sharing the Redis server, spends its budgets; the
    counters are forgotten afterwards."""
    from shisanshui.ratelimit import rate_limit_reset

    settings.RATE_LIMIT_KEY_PREFIX = f"test-{uuid.uuid4().hex}"
    yield
    rate_limit_reset()


@pytest.fixture(autouse=True)
def api_throttles() -> Iterator[None]:
    """REST framework's throttles (and the log-in forms' per-address rate) count in the default
    cache, one LocMemCache per test process: each test starts with empty counters."""
    from django.core.cache import cache

    cache.clear()
    yield


@pytest.fixture(autouse=True)
def table_states() -> Iterator[None]:
    """The table states a process holds (``games.live.store.TableStates``) are sound because a
    table id is never used twice; a test database flushed between tests (SQLite) gives its
    ids out again, so each test starts holding none."""
    from games.live import store as table_store

    table_store.forget_table_states()
    yield
    table_store.forget_table_states()


@pytest.fixture(autouse=True)
def default_language() -> Iterator[None]:
    """Each test starts in the default language: a test client's request activates the
    language it asked for (``LocaleMiddleware``) in the test's thread and leaves it there, so
    a test after one that asked for zh-hans would otherwise read Chinese messages."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True, scope="session")
def fast_flush() -> None:
    """Transactional tests flush with the rows of ``post_migrate`` restored, not rebuilt
    (tests/fast_flush.py)."""
    from tests import fast_flush

    fast_flush.install()


@pytest.fixture(autouse=True)
def fast_flush_unless_live(request: pytest.FixtureRequest) -> None:
    """The fast flush only for tests that start no process and drive no browser: a live
    platform may still write while its test's flush runs, which only Django's TRUNCATE waits
    for safely."""
    from tests import fast_flush

    marked = request.node.get_closest_marker
    fast_flush.enabled = marked("live") is None and marked("browser") is None


@pytest.fixture(autouse=True, scope="session")
def database_dropped_at_once(django_db_setup: None, django_db_blocker: Any) -> Iterator[None]:
    """At the end of the run, the test database's other sessions (the connections of the table
    socket's worker threads) are ended first: PostgreSQL would wait 5 s for them before
    refusing to drop the database."""
    yield
    from django.db import connections

    with django_db_blocker.unblock():
        for alias in connections:
            connection = connections[alias]
            if connection.vendor != "postgresql":
                continue
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                    " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )


# The ledger reconciles after every test that used the database: one query, run before the
# test's database is rolled back or flushed.
LEDGER_CHECK_SQL = """
SELECT
  (SELECT COUNT(*) FROM (
     SELECT transaction_id FROM accounts_entry GROUP BY transaction_id HAVING SUM(amount) <> 0
   ) AS unbalanced),
  (SELECT COUNT(*) FROM accounts_account AS a
    WHERE a.balance <> COALESCE(
      (SELECT SUM(e.amount) FROM accounts_entry AS e WHERE e.account_id = a.id), 0)),
  (SELECT COALESCE(SUM(balance), 0) FROM accounts_account),
  (SELECT COUNT(*) FROM accounts_account WHERE kind = 'wallet' AND balance < 0)
"""


def _uses_database(request: pytest.FixtureRequest) -> bool:
    names = set(request.fixturenames)
    return request.node.get_closest_marker("django_db") is not None or bool(
        names & {"_django_db_helper", "db", "transactional_db"}
    )


@pytest.fixture(autouse=True)
def ledger_reconciles(request: pytest.FixtureRequest) -> Iterator[None]:
    """Fail a test that leaves the ledger unreconciled — a transaction whose entries do not
    sum to zero, a cached balance that is not the sum of its entries, balances that do not sum
    to zero (a coin created or destroyed), a negative wallet: what `manage.py ledger_audit`
    checks, in one query. Skipped for tests without the database, for those marked
    `ledger_broken_on_purpose` (they corrupt it to test a check), and when the test left its
    connection unusable (a transaction it broke on purpose)."""
    if (
        not _uses_database(request)
        or request.node.get_closest_marker("ledger_broken_on_purpose") is not None
    ):
        yield
        return
    request.getfixturevalue("_django_db_helper")  # torn down after this check
    yield
    from django.db import DatabaseError, connection

    if connection.connection is None or connection.needs_rollback:
        return
    try:
        with connection.cursor() as cursor:
            cursor.execute(LEDGER_CHECK_SQL)
            unbalanced, mismatched, total, negative = cursor.fetchone()
    except DatabaseError:
        return
    problems = []
    if unbalanced:
        problems.append(f"{unbalanced} unbalanced transactions")
    if mismatched:
        problems.append(f"{mismatched} cached balances differ from their entries")
    if total:
        problems.append(f"the balances sum to {total}, not 0")
    if negative:
        problems.append(f"{negative} negative wallets")
    if problems:
        pytest.fail("The ledger does not reconcile after the test: " + "; ".join(problems))

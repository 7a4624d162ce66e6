"""The load script's autovacuum stand-in (benchmarks.vacuum): autovacuum's rule, and the
vacuums it runs on a real PostgreSQL."""

from __future__ import annotations

import uuid

import pytest
from django.db import connection

from benchmarks.vacuum import AutovacuumStandIn, TableStats, _number, due
from tests.live_server import database_url_of

DEFAULTS = {
    "autovacuum_vacuum_threshold": "50",
    "autovacuum_vacuum_scale_factor": "0.2",
    "autovacuum_vacuum_insert_threshold": "1000",
    "autovacuum_vacuum_insert_scale_factor": "0.2",
}


def test_a_table_is_due_once_its_dead_rows_pass_the_threshold() -> None:
    # 100 rows: the limit is 50 + 0.2 * 100 = 70 dead rows.
    assert due([TableStats("t", 100, 70, 0)], DEFAULTS) == []
    assert due([TableStats("t", 100, 71, 0)], DEFAULTS) == ["t"]
    # Never vacuumed nor analysed (reltuples -1): the threshold alone.
    assert due([TableStats("new", -1, 51, 0)], DEFAULTS) == ["new"]


def test_a_table_is_due_once_its_inserts_pass_the_insert_threshold() -> None:
    # 10,000 rows: 1000 + 0.2 * 10,000 = 3,000 rows inserted since the last vacuum.
    assert due([TableStats("log", 10_000, 0, 3_000)], DEFAULTS) == []
    assert due([TableStats("log", 10_000, 0, 3_001)], DEFAULTS) == ["log"]
    # An insert threshold of -1 turns the insert rule off, as in PostgreSQL.
    off = {**DEFAULTS, "autovacuum_vacuum_insert_threshold": "-1"}
    assert due([TableStats("log", 10_000, 0, 10**9)], off) == []


def test_a_tables_own_parameters_win_over_the_servers() -> None:
    hot = TableStats("hot", 100, 200, 0, ("autovacuum_vacuum_threshold=500",))
    assert due([hot], DEFAULTS) == []
    eager = TableStats(
        "hot", 1_000, 11, 0, ("autovacuum_vacuum_scale_factor=0", "autovacuum_vacuum_threshold=10")
    )
    assert due([eager], DEFAULTS) == ["hot"]
    left_alone = TableStats("t", 100, 10**6, 0, ("autovacuum_enabled=false",))
    assert due([left_alone], DEFAULTS) == []


@pytest.mark.parametrize(
    ("text", "seconds"), [("1min", 60.0), ("15s", 15.0), ("200ms", 0.2), ("0.2", 0.2), ("50", 50)]
)
def test_settings_are_read_as_postgresql_shows_them(text: str, seconds: float) -> None:
    assert _number(text) == pytest.approx(seconds)


@pytest.mark.django_db(transaction=True)
def test_the_stand_in_vacuums_a_table_with_dead_rows_and_then_leaves_it() -> None:
    if connection.vendor != "postgresql":
        pytest.skip("vacuum is PostgreSQL's")
    import psycopg

    url = database_url_of(connection.settings_dict)
    table = f"vacuum_probe_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(url, autocommit=True) as db:
        db.execute(f"CREATE TABLE {table} (id int primary key, n int)")
        try:
            db.execute(f"INSERT INTO {table} SELECT i, 0 FROM generate_series(1, 100) i")
            for _ in range(3):
                db.execute(f"UPDATE {table} SET n = n + 1")  # 300 dead row versions
            db.execute("SELECT pg_stat_force_next_flush()")
            db.execute("SELECT pg_sleep(0)")  # a transaction's end flushes the counters
            stand_in = AutovacuumStandIn(url)
            try:
                assert f"public.{table}" in stand_in.run_once()
                assert stand_in.vacuums >= 1
                dead = db.execute(
                    "SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = %s", [table]
                ).fetchone()
                assert dead is not None and dead[0] == 0
                assert f"public.{table}" not in stand_in.run_once()
            finally:
                stand_in.stop()
        finally:
            db.execute(f"DROP TABLE {table}")

"""A stand-in for PostgreSQL's autovacuum, for load runs against a server that has it off.

The table commands update one row per table many times a minute (``games_table``: its state,
version and deadline), and every update leaves a dead row version behind. PostgreSQL's
autovacuum daemon, on by default and in every production deployment
(docs/run-and-deploy.md), reclaims them in the background; without it the tables and their
indexes grow for as long as the platform runs, and every command reads more pages. So when
the platform's server has autovacuum off (as a server kept for test suites may), the load
script runs :class:`AutovacuumStandIn`, which VACUUMs by autovacuum's own rule (:func:`due`),
as an autovacuum worker would. Its backend serves the platform's database, so its CPU counts
in the PostgreSQL figures like the platform's own backends. It does not ANALYZE (the
commands' statements look rows up by key).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

SETTINGS = (
    "autovacuum",
    "autovacuum_naptime",
    "autovacuum_vacuum_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_insert_scale_factor",
)

# One row per table of the database: its name, what autovacuum's rule reads, and its
# storage parameters (pg_class.reloptions, "name=value" strings, or None).
TABLES_SQL = """
SELECT quote_ident(s.schemaname) || '.' || quote_ident(s.relname), c.reltuples,
       s.n_dead_tup, s.n_ins_since_vacuum, c.reloptions
FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
ORDER BY s.relname
"""


@dataclass(frozen=True)
class TableStats:
    name: str
    reltuples: float
    dead: int
    inserted: int
    options: tuple[str, ...] = ()


def _number(text: str) -> float:
    """A setting's value as PostgreSQL shows it: ``60s``, ``1min``, ``0.2``, ``50``."""
    units = {"ms": 0.001, "s": 1.0, "min": 60.0, "h": 3600.0}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].replace(".", "", 1).isdigit():
            return float(text[: -len(unit)]) * units[unit]
    return float(text)


def due(tables: Iterable[TableStats], settings: Mapping[str, str]) -> list[str]:
    """The tables autovacuum would vacuum now, by its rule (PostgreSQL's documentation,
    "The Autovacuum Daemon"): dead rows over the vacuum threshold, or rows inserted since the
    last vacuum over the insert threshold; a table's own parameters win over the server's,
    and a table with ``autovacuum_enabled=false`` is left alone."""
    names = []
    for table in tables:
        params = {k: settings[k] for k in SETTINGS if k in settings}
        for option in table.options:
            key, _, value = option.partition("=")
            params[key] = value
        if params.get("autovacuum_enabled", "true").lower() in ("false", "off", "0"):
            continue
        tuples = max(table.reltuples, 0.0)  # -1: never vacuumed or analysed
        dead_limit = (
            float(params["autovacuum_vacuum_threshold"])
            + float(params["autovacuum_vacuum_scale_factor"]) * tuples
        )
        insert_threshold = float(params["autovacuum_vacuum_insert_threshold"])
        insert_limit = (
            insert_threshold + float(params["autovacuum_vacuum_insert_scale_factor"]) * tuples
        )
        if table.dead > dead_limit or (insert_threshold >= 0 and table.inserted > insert_limit):
            names.append(table.name)
    return names


class AutovacuumStandIn:
    """Vacuums the database of ``database_url`` by autovacuum's rule every ``naptime``
    seconds (the server's ``autovacuum_naptime`` by default), on a thread, until :meth:`stop`:
    the tables that are due, one statement at a time."""

    def __init__(self, database_url: str, naptime: float | None = None) -> None:
        import psycopg

        self.connection = psycopg.connect(database_url, autocommit=True)
        self.settings = {
            name: str(self.connection.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
            for name in SETTINGS
        }
        self.naptime = naptime or _number(self.settings["autovacuum_naptime"])
        self.vacuums = 0
        self.seconds = 0.0
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, name="autovacuum", daemon=True)

    @staticmethod
    def needed(database_url: str) -> bool:
        """Whether the server of ``database_url`` runs with autovacuum off."""
        import psycopg

        with psycopg.connect(database_url, autocommit=True) as connection:
            row: Any = connection.execute("SHOW autovacuum").fetchone()
        return str(row[0]).lower() in ("off", "false", "0")

    def start(self) -> AutovacuumStandIn:
        self._thread.start()
        return self

    def run_once(self) -> list[str]:
        """Vacuum the tables that are due now; their names."""
        with self._lock:
            rows = self.connection.execute(TABLES_SQL).fetchall()
            tables = [
                TableStats(name, float(tuples), int(dead), int(inserted), tuple(options or ()))
                for name, tuples, dead, inserted, options in rows
            ]
            names = due(tables, self.settings)
            for name in names:
                started = time.monotonic()
                self.connection.execute(f"VACUUM {name}")
                self.seconds += time.monotonic() - started
                self.vacuums += 1
            return names

    def _run(self) -> None:
        while not self._stop.wait(self.naptime):
            try:
                self.run_once()
            except Exception as exc:  # noqa: BLE001 - a load run outlives a failed vacuum
                print(f"autovacuum stand-in: {exc}", flush=True)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=60)
        self.connection.close()

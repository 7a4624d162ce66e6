"""Where a live table is kept: its row, its locks, the states this process holds, its clock.

A command locks the room's row, then the table's (``SELECT … FOR UPDATE``), the order the
lobby's services take them in too; the players' wallets come after (``games.live.settle``).
The pure :class:`~games.table.state.TableState` is rebuilt from the row only when this
process does not hold that version already (:class:`TableStates`). :func:`save` writes the
new state with its version, phase and deadline and appends the events to the
:class:`~games.models.TableEvent` log.

The hot path's statements are written by hand: locking the room and the table, saving the
table and appending its events run on every command, and the ORM's query building cost more
CPU than the queries themselves (docs/load-and-faults.md, "Design choices that hold"). They
are plain statements every backend runs (FOR UPDATE only where the database has it).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from accounts.models import Account, AccountKind, User
from games.models import Table, TableEvent
from games.table.events import Event
from games.table.state import TableState
from lobby.models import Room
from shisanshui import fastjson

_TABLE = Table._meta.db_table
_EVENT = TableEvent._meta.db_table
_ROOM = Room._meta.db_table
_ACCOUNT = Account._meta.db_table
_USER = User._meta.db_table


def clock() -> float:
    """Epoch seconds: the time of every command, timeout and snapshot of a live table (tests
    replace it to move the tables' clock)."""
    return time.time()


def aware(epoch: float | None) -> datetime | None:
    """``epoch`` as an aware datetime (None stays None)."""
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC)


def for_update() -> str:
    """The row-lock clause of a hand-written SELECT, where the database has one."""
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


# -- creation ----------------------------------------------------------------------------------


def table_initial_state(*, room: Room) -> TableState:
    """An empty table for ``room``: its seats, its rules at its own base score."""
    config = replace(room.rules.engine_config(), base_score=room.base_score)
    state = TableState(
        capacity=room.seats,
        config=config,
        chat_text=room.chat_text,
        last_round=room.series_rounds,  # a series (房卡) ends after its last round
    )
    if room.match_id is not None:  # a duplicate match's table plays its deals in lockstep
        assert room.match is not None
        return replace(state, lockstep=True, last_round=room.match.deals)
    return state


def table_for_room(*, room: Room) -> Table:
    """The room's table, created empty on first use (the rules are read only then)."""
    table = Table.objects.filter(room=room).first()
    if table is None:
        table, _created = Table.objects.get_or_create(
            room=room, defaults={"state": table_initial_state(room=room).to_dict()}
        )
    return table


# -- the states this process holds -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class KnownState:
    """The committed state of a table at one version."""

    table_id: int
    version: int
    state: TableState


class TableStates:
    """The parsed state of the last committed version of each table this process has seen:
    a command's lock (and a socket's resync) reads the table's state only when its version is
    not the one held here, and rebuilding a :class:`TableState` from its JSON (the rule
    configuration, every hand) costs more than the rest of the read.

    Sound because a version is committed once: every saved state has a new version (the
    events'), a state is held only from its transaction's commit on (a version rolled back is
    never taken for the one another transaction commits), and a state read under the table's
    lock, or outside any transaction, is a committed one. States are frozen values, shared
    freely between the service threads. At most ``size`` tables are held (a state is a few
    hundred small objects, which the collector's full passes walk), the oldest going first."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._by_table: dict[int, KnownState] = {}
        self._table_of_room: dict[int, int] = {}  # a room's table never changes
        self._lock = threading.Lock()

    def get(self, table_id: int) -> KnownState | None:
        return self._by_table.get(table_id)

    def of_room(self, room_id: int) -> KnownState | None:
        table_id = self._table_of_room.get(room_id)
        return None if table_id is None else self._by_table.get(table_id)

    def remember(self, room_id: int, table_id: int, state: TableState) -> None:
        """Hold ``state`` (committed) unless a later version of the table is held already."""
        with self._lock:
            held = self._by_table.pop(table_id, None)  # re-inserted last: the order is age
            if held is not None and held.version > state.version:
                self._by_table[table_id] = held
                return
            self._by_table[table_id] = KnownState(table_id, state.version, state)
            self._table_of_room[room_id] = table_id
            while len(self._by_table) > self.size:
                del self._by_table[next(iter(self._by_table))]
            if len(self._table_of_room) > 2 * self.size:
                self._table_of_room.clear()  # only a hint: the next lock of each finds it

    def clear(self) -> None:
        with self._lock:
            self._by_table.clear()
            self._table_of_room.clear()


# This process's states (read through the module, so that a test may give it another).
STATES = TableStates()


def forget_table_states() -> None:
    """Hold no table state (a test's database gives table ids out again)."""
    STATES.clear()


def held_params(known: KnownState | None) -> list[object]:
    """The parameters of a ``CASE WHEN id = %s AND version = %s THEN NULL ELSE state END``
    that leaves out the state ``known`` holds."""
    return [None, None] if known is None else [known.table_id, known.version]


def held_or_parsed(
    known: KnownState | None, *, room_id: int, table_id: int, version: int, text: Any
) -> TableState:
    """The state of a table row read with the ``CASE`` of :func:`held_params` against
    ``known``: the held one when the query left the state out; otherwise parsed, and held
    from its transaction's commit on (at once outside a transaction: a transaction may have
    written the version it read)."""
    if text is None:
        assert known is not None and (known.table_id, known.version) == (table_id, version)
        return known.state
    data = fastjson.loads(text) if isinstance(text, str | bytes) else text
    state = TableState.from_dict(data)
    transaction.on_commit(lambda: STATES.remember(room_id, table_id, state), robust=True)
    return state


def committed(table_id: int) -> tuple[Table, TableState]:
    """The table (not locked) and its committed state, read only when this process does not
    hold that version already. Raises Table.DoesNotExist."""
    known = STATES.get(table_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT room_id, version, CASE WHEN id = %s AND version = %s THEN NULL "
            f"ELSE state END FROM {_TABLE} WHERE id = %s",
            [*held_params(known), table_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise Table.DoesNotExist(f"no table {table_id}")
    room_id, version, text = row
    table = Table(id=table_id, room_id=room_id, version=version)
    state = held_or_parsed(known, room_id=room_id, table_id=table_id, version=version, text=text)
    return table, state


# -- locks -------------------------------------------------------------------------------------

# The parsed state of a locked table, kept on the Table object by ``locked_rows``.
PARSED_STATE = "parsed_state"
# The room's entry minimum (fixed when the room opened), read with the locks and kept on the
# table object for the settlement's "who must leave" (``games.live.settle``).
ENTRY_MINIMUM = "room_entry_minimum"
# Whether the wallet's owner has its transfers frozen (read with the wallet by locked_rows).
WALLET_FROZEN = "wallet_owner_frozen"

# (No deadline: the state holds it, and a timestamptz costs a Python-level parse per read.)
# The state only when this process does not hold that version of it already (``STATES``).
_TABLE_COLUMNS = (
    "t.id, CASE WHEN t.id = %s AND t.version = %s THEN NULL ELSE t.state END, t.version, "
    "t.phase, t.watchers, r.entry_minimum"
)


def locked(*, room: Room) -> Table:
    """The room's table, locked after its room (the lock order of the lobby's services)."""
    table, _balance = locked_rows(room=room, wallet_of=None)
    return table


def locked_rows(*, room: Room, wallet_of: int | None) -> tuple[Table, int | None]:
    """One statement locks the room, its table and (``wallet_of``) that user's wallet, whose
    balance it returns (None when it found no wallet); whether that user's transfers are
    frozen comes in the same statement (the table's ``WALLET_FROZEN``). PostgreSQL locks a
    join's rows in the order of its FROM list (the room, the table, the wallet), the order
    every service takes them in, so merging the locks into one round trip adds no deadlock."""
    known = STATES.of_room(room.pk)
    wallet_join, wallet_column = "", ""
    params = held_params(known)
    if wallet_of is not None:
        wallet_join = f" JOIN {_ACCOUNT} a ON a.user_id = %s AND a.kind = %s"
        wallet_column = (
            ", a.balance, EXISTS (SELECT 1 FROM "
            f"{_USER} u WHERE u.id = a.user_id AND u.transfers_frozen_at IS NOT NULL)"
        )
        params += [wallet_of, AccountKind.WALLET.value]
    params.append(room.pk)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_TABLE_COLUMNS}{wallet_column} FROM {_ROOM} r "
            f"JOIN {_TABLE} t ON t.room_id = r.id{wallet_join} WHERE r.id = %s{for_update()}",
            params,
        )
        row = cursor.fetchone()
    if row is None:  # no such room, its table not made yet, or no wallet: one step at a time
        return _locked_stepwise(room=room), None
    pk, state, version, phase, watchers, minimum, *wallet = row
    table = Table(id=pk, room_id=room.pk, version=version, phase=phase, watchers=watchers)
    setattr(table, ENTRY_MINIMUM, minimum)
    if wallet:
        setattr(table, WALLET_FROZEN, bool(wallet[1]))
    parsed = held_or_parsed(known, room_id=room.pk, table_id=pk, version=version, text=state)
    setattr(table, PARSED_STATE, parsed)
    return table, (int(wallet[0]) if wallet else None)


def _locked_stepwise(*, room: Room) -> Table:
    """``locked`` when the one statement found nothing: the room locked (or DoesNotExist),
    then its table, created on first use."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {_ROOM} WHERE id = %s{for_update()}", [room.pk])
        if cursor.fetchone() is None:
            raise Room.DoesNotExist(f"no room {room.pk}")
    return Table.objects.select_for_update().get(pk=table_for_room(room=room).pk)


def tables_locked(*, room_ids: list[int]) -> list[Table]:
    """The rooms' tables (a duplicate match's), locked in the lock order: every room
    (ascending id), then their tables (by room). Tables not created yet are created first."""
    ordered = sorted(room_ids)
    list(Room.objects.select_for_update().filter(pk__in=ordered).order_by("pk").values("pk"))
    for room in Room.objects.filter(pk__in=ordered).exclude(table__isnull=False):
        table_for_room(room=room)
    return list(Table.objects.select_for_update().filter(room_id__in=ordered).order_by("room_id"))


def state_of(table: Table) -> TableState:
    """The locked ``table``'s state: the one ``locked_rows`` read or already held."""
    parsed = getattr(table, PARSED_STATE, None)
    if parsed is None:  # a table locked another way (``tables_locked``, the timers)
        parsed = TableState.from_dict(table.state)
        setattr(table, PARSED_STATE, parsed)
    return parsed


# -- saving a transition -----------------------------------------------------------------------


def save(table: Table, state: TableState, events: list[Event], positions: dict[str, int]) -> None:
    """Store ``state`` in the locked ``table`` and append ``events`` to its log (``positions``:
    each player's seat, by player); on commit, this process holds the new version."""
    ops = connection.ops
    now = timezone.now()
    table.state = state.to_dict()
    setattr(table, PARSED_STATE, state)
    room_id, table_id = table.room_id, table.pk
    transaction.on_commit(lambda: STATES.remember(room_id, table_id, state), robust=True)
    table.version = state.version
    table.phase = state.phase.value
    table.deadline = aware(state.deadline)
    update = (
        f"UPDATE {_TABLE} SET state = %s, version = %s, phase = %s, deadline = %s, "
        "updated_at = %s WHERE id = %s"
    )
    update_params = [
        fastjson.dumps(table.state),
        table.version,
        table.phase,
        ops.adapt_datetimefield_value(table.deadline),
        ops.adapt_datetimefield_value(now),
        table.pk,
    ]
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            # One statement, one round trip. The events go as one JSON text, so the statement
            # is the same for any number of them: psycopg converts a statement's text once (it
            # did again every time for a settlement's events: more than 50 parameters), and one
            # string is the cheapest parameter to send (a list is quoted in Python).
            cursor.execute(
                f"WITH saved AS ({update}) INSERT INTO {_EVENT} (table_id, version, type, "
                "audience, recipient, payload, created_at) "
                "SELECT %s, e.version, e.type, e.audience, e.recipient, e.payload, %s "
                "FROM jsonb_to_recordset(%s::jsonb) AS e (version integer, type varchar, "
                "audience smallint, recipient varchar, payload jsonb)",
                [
                    *update_params,
                    table.pk,
                    ops.adapt_datetimefield_value(now),
                    fastjson.dumps(
                        [
                            {
                                "version": e.version,
                                "type": e.type,
                                "audience": positions.get(e.audience) if e.private else None,
                                "recipient": e.audience if e.private else None,
                                "payload": e.payload,
                            }
                            for e in events
                        ]
                    ),
                ],
            )
        else:
            rows = [
                (
                    table.pk,
                    e.version,
                    e.type,
                    positions.get(e.audience) if e.private else None,
                    e.audience if e.private else None,
                    fastjson.dumps(e.payload),
                    ops.adapt_datetimefield_value(now),
                )
                for e in events
            ]
            values = ", ".join(["(%s, %s, %s, %s, %s, %s, %s)"] * len(rows))
            cursor.execute(update, update_params)
            cursor.execute(
                f"INSERT INTO {_EVENT} (table_id, version, type, audience, recipient, payload, "
                f"created_at) VALUES {values}",
                [value for row in rows for value in row],
            )

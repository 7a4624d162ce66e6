"""Services of the live table: every player command and every timeout, one transaction each.

Check → lock → write → notify (STYLE.md):

1. lock the room's :class:`~games.models.Table` row (``SELECT … FOR UPDATE``), rebuild the
   pure :class:`~games.table.state.TableState` (or take the one this process holds for the
   row's version: ``_States``, below) and apply a command of
   :mod:`games.table.machine` with ``now`` — a refusal raises
   :class:`~games.table.errors.TableError` (code, message, details) and nothing is written;
2. when the command started a round (``state.awaiting_deal``), deal in the same transaction:
   a deck shuffled by ``secrets.SystemRandom``, a fresh salt and a random starting seat; the
   :class:`~games.models.Round` stores the rules snapshot and the deck's commitment (the deck
   and salt themselves only at settlement, when the ``settled`` event reveals them);
3. save the state with its version, phase and deadline, and append the events to the
   :class:`~games.models.TableEvent` log;
4. when the round settled: one ledger posting of kind ``settlement`` (idempotency key
   ``round:<pk>:settlement``) moves every player's net result, escape penalties go to the
   house (``round:<pk>:penalty:<user>``), and the round's breakdown is stored;
5. on commit only: send each player at the table, on the player's own channel group
   (``table.<pk>.player.<id>``, type ``table.events``), the events that player may see, with
   the range of versions the batch covers — another player's private events (cards, drafts,
   arrangements) never travel to a connection, nor through Redis to a process, that is not
   that player's. The new deadline needs nothing more: the saved row is the timer
   (:mod:`games.live.timers` polls the tables' deadlines).

Locks are taken in one order: the room row, the table row, then the players' wallets
(ascending id), then the house account inside ``ledger_post`` (the lobby's services lock the
room before they sit at or leave its table, so room → table holds everywhere). A timeout
only asks: :func:`table_timeout` re-checks phase and deadline under the lock, so a duplicate,
late, stale or early one does nothing.

Players are identified in the machine by ``str(user.pk)`` and sit at the position of their
lobby seat (:class:`lobby.models.Seat`): the lobby decides who may sit where. When the table
lets a player go (a ``left`` event: left between rounds, Ready timeout, or removed at
settlement after an escape), the lobby seat is freed in the same transaction
(:data:`players_left`, below).

This module knows nothing of bots, of Celery or of the lobby's services; they listen:

- :data:`players_left` is sent inside the transaction when the table lets players go
  (:mod:`lobby.signals` frees their lobby seats in the same transaction);
- :data:`transition_committed` is sent on commit after every transition with events
  (:mod:`games.live.tasks` gives every bot with something new to do its task: bots are ordinary
  clients of these services).

A phase that lasts no time (no deal or reveal pacing) ends in the same transaction as the
command that began it, with no timer: the last Ready deals and begins the play, the last
submission compares and settles.

The hot path is cheap on purpose (``tests/games/test_query_budget.py`` counts its queries):
two row locks, the wallet read only where coins matter, one UPDATE and one INSERT of events.
"""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from django.core.cache import cache
from django.db import connection, transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.dispatch import Signal
from django.utils import timezone

from accounts.ledger import account_system_get_or_create, ledger_post
from accounts.models import Account, AccountKind, TransactionKind, User
from games.models import DuplicateMatch, Round, RoundPlayer, Table, TableEvent
from games.rules.cards import Card, Deck, format_cards, parse_cards
from games.rules.errors import RulesError
from games.table import machine
from games.table.deck import seeded_deck, seeded_salt, seeded_start_seat
from games.table.errors import StaleTimeout, TableError
from games.table.events import Event, Transition
from games.table.perspective import (
    delivered,
    hand_suggestions,
    missed_events,
    resync_suggestions,
    snapshot_for,
)
from games.table.state import Json, Phase, TableState, arranged_json
from games.table.suggest import kept_suggestions
from lobby.models import Room, RoomStatus, Seat
from shisanshui import fastjson
from shisanshui.publish import Message, publish, publish_later

logger = logging.getLogger(__name__)

Command = Callable[[TableState, float], Transition]

# Inside the command's transaction: the table let these players go (``room_id``, ``user_ids``).
players_left = Signal()
# On commit, after the players' messages: ``table_id``, ``before``, ``after`` (states), ``now``.
transition_committed = Signal()


def _now() -> float:
    """Epoch seconds; tests replace it to move the clock."""
    return time.time()


def _aware(epoch: float | None) -> datetime | None:
    return None if epoch is None else datetime.fromtimestamp(epoch, tz=UTC)


def table_player_group(table_id: int, player: str) -> str:
    """The channel-layer group of one player's connections to a table: its events only."""
    return f"table.{table_id}.player.{player}"


def table_public_group(table_id: int) -> str:
    """The channel-layer group of every connection to a table, seated or watching: the public
    events of each batch (``_messages``), never a private one."""
    return f"table.{table_id}.public"


# -- reads and creation ------------------------------------------------------------------------


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
class _Known:
    table_id: int
    version: int
    state: TableState


class _States:
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
        self._by_table: dict[int, _Known] = {}
        self._table_of_room: dict[int, int] = {}  # a room's table never changes
        self._lock = threading.Lock()

    def get(self, table_id: int) -> _Known | None:
        return self._by_table.get(table_id)

    def of_room(self, room_id: int) -> _Known | None:
        table_id = self._table_of_room.get(room_id)
        return None if table_id is None else self._by_table.get(table_id)

    def remember(self, room_id: int, table_id: int, state: TableState) -> None:
        """Hold ``state`` (committed) unless a later version of the table is held already."""
        with self._lock:
            held = self._by_table.pop(table_id, None)  # re-inserted last: the order is age
            if held is not None and held.version > state.version:
                self._by_table[table_id] = held
                return
            self._by_table[table_id] = _Known(table_id, state.version, state)
            self._table_of_room[room_id] = table_id
            while len(self._by_table) > self.size:
                del self._by_table[next(iter(self._by_table))]
            if len(self._table_of_room) > 2 * self.size:
                self._table_of_room.clear()  # only a hint: the next lock of each finds it

    def clear(self) -> None:
        with self._lock:
            self._by_table.clear()
            self._table_of_room.clear()


_STATES = _States()


def forget_table_states() -> None:
    """Hold no table state (a test's database gives table ids out again)."""
    _STATES.clear()


# The parsed state of a locked table, kept on the Table object by ``_locked_rows``.
PARSED_STATE = "parsed_state"


# The hot path's own SQL: locking the room and the table, saving the table and appending its
# events run on every command, and the ORM's query building cost more CPU than the queries
# themselves (docs/load-and-faults.md, "Capacity"). Plain statements that every backend runs
# (FOR UPDATE only where the database has it), the values adapted by the backend.
_TABLE = Table._meta.db_table
_EVENT = TableEvent._meta.db_table
_ROOM = Room._meta.db_table
_ACCOUNT = Account._meta.db_table
_SEAT = Seat._meta.db_table
_ROUND = Round._meta.db_table
_ROUND_PLAYER = RoundPlayer._meta.db_table


def _for_update() -> str:
    return " FOR UPDATE" if connection.features.has_select_for_update else ""


# (No deadline: the state holds it, and a timestamptz costs a Python-level parse per read.)
# The state only when this process does not hold that version of it already (``_STATES``).
_TABLE_COLUMNS = (
    "t.id, CASE WHEN t.id = %s AND t.version = %s THEN NULL ELSE t.state END, t.version, "
    "t.phase, t.watchers, r.entry_minimum"
)
# The room's entry minimum (fixed when the room opened), read with the locks and kept on the
# table object for the settlement's "who must leave" (``_send_away_the_broke``).
ENTRY_MINIMUM = "room_entry_minimum"


def _locked(*, room: Room) -> Table:
    """The room's table, locked after its room (the lock order of the lobby's services)."""
    table, _balance = _locked_rows(room=room, wallet_of=None)
    return table


def _locked_with_balance(*, room: Room, user_id: int) -> tuple[Table, int]:
    """The room's table and the player's wallet balance, locked in the services' order: the
    room, the table, then the wallet (created if missing)."""
    table, balance = _locked_rows(room=room, wallet_of=user_id)
    if balance is None:  # rare: a wallet was never made
        balance = _locked_balance(user_id)
    return table, balance


def _locked_rows(*, room: Room, wallet_of: int | None) -> tuple[Table, int | None]:
    """One statement locks the room, its table and (``wallet_of``) a wallet. PostgreSQL locks
    a join's rows in the order of its FROM list (the room, the table, the wallet), the order
    every service takes them in, so merging the locks into one round trip adds no deadlock."""
    known = _STATES.of_room(room.pk)
    wallet_join, wallet_column = "", ""
    params = _held_params(known)
    if wallet_of is not None:
        wallet_join = f" JOIN {_ACCOUNT} a ON a.user_id = %s AND a.kind = %s"
        wallet_column = ", a.balance"
        params += [wallet_of, AccountKind.WALLET.value]
    params.append(room.pk)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT {_TABLE_COLUMNS}{wallet_column} FROM {_ROOM} r "
            f"JOIN {_TABLE} t ON t.room_id = r.id{wallet_join} WHERE r.id = %s{_for_update()}",
            params,
        )
        row = cursor.fetchone()
    if row is None:  # no such room, its table not made yet, or no wallet: one step at a time
        return _locked_stepwise(room=room), None
    pk, state, version, phase, watchers, minimum, *balance = row
    table = Table(id=pk, room_id=room.pk, version=version, phase=phase, watchers=watchers)
    setattr(table, ENTRY_MINIMUM, minimum)
    parsed = _held_or_parsed(known, room_id=room.pk, table_id=pk, version=version, text=state)
    setattr(table, PARSED_STATE, parsed)
    return table, (int(balance[0]) if balance else None)


def _held_or_parsed(
    known: _Known | None, *, room_id: int, table_id: int, version: int, text: Any
) -> TableState:
    """The state of a table row read with ``CASE … THEN NULL ELSE state END`` against
    ``known``: the held one when the query left the state out; otherwise parsed, and held
    from its transaction's commit on (at once outside a transaction: a transaction may have
    written the version it read)."""
    if text is None:
        assert known is not None and (known.table_id, known.version) == (table_id, version)
        return known.state
    data = fastjson.loads(text) if isinstance(text, str | bytes) else text
    state = TableState.from_dict(data)
    transaction.on_commit(lambda: _STATES.remember(room_id, table_id, state), robust=True)
    return state


def _held_params(known: _Known | None) -> list[object]:
    """The parameters of the ``CASE`` that leaves out a held state."""
    return [None, None] if known is None else [known.table_id, known.version]


def _state_of(table: Table) -> TableState:
    """The locked ``table``'s state: the one ``_locked_rows`` read or already held."""
    parsed = getattr(table, PARSED_STATE, None)
    if parsed is None:  # a table locked another way (``tables_locked``, the timers)
        parsed = TableState.from_dict(table.state)
        setattr(table, PARSED_STATE, parsed)
    return parsed


def _locked_stepwise(*, room: Room) -> Table:
    """``_locked`` when the one statement found nothing: the room locked (or DoesNotExist),
    then its table, created on first use."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT id FROM {_ROOM} WHERE id = %s{_for_update()}", [room.pk])
        if cursor.fetchone() is None:
            raise Room.DoesNotExist(f"no room {room.pk}")
    return Table.objects.select_for_update().get(pk=table_for_room(room=room).pk)


def _save(table: Table, state: TableState, events: list[Event], positions: dict[str, int]) -> None:
    """Store ``state`` in the locked ``table`` and append ``events`` to its log; on commit,
    this process holds the new version (``_STATES``)."""
    ops = connection.ops
    now = timezone.now()
    table.state = state.to_dict()
    setattr(table, PARSED_STATE, state)
    room_id, table_id = table.room_id, table.pk
    transaction.on_commit(lambda: _STATES.remember(room_id, table_id, state), robust=True)
    table.version = state.version
    table.phase = state.phase.value
    table.deadline = _aware(state.deadline)
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


def _position(*, state: TableState, user: User) -> int:
    seat = state.seat_of(str(user.pk))
    if seat is None:
        raise TableError("not_at_table", "you do not sit at this table")
    return seat.position


# Any card of any deck (RULES.md §12) reads; the machine checks they are the seat's own.
_ANY_DECK = Deck(extra_suits=2, jokers=2)


def _cards(value: object, what: str) -> tuple[Card, ...]:
    try:
        return parse_cards(value, what=what, deck=_ANY_DECK)
    except RulesError as exc:
        raise TableError("bad_cards", str(exc), row=what) from None


# -- the common path ---------------------------------------------------------------------------


def _run(
    *,
    table: Table,
    command: Command,
    now: float,
    before: TableState | None = None,
    wallets: dict[int, Account] | None = None,
) -> Transition:
    """Apply ``command`` to the locked ``table`` (whose state is ``before`` when the caller
    has read it already): deal if a round starts, end the phases that last no time, save, log,
    settle, and on commit notify and schedule. Returns the whole transition (deal included).
    ``wallets``: the round's players' wallets when the caller has locked them to settle."""
    if before is None:
        before = _state_of(table)
    transition = command(before, now)
    if not transition.events:
        return transition
    state, events = transition.state, list(transition.events)
    compared = before  # the state the round is settled from (every seat's arrangement)
    while True:
        if state.awaiting_deal:
            step = _deal(table=table, state=state, now=now)
        elif _ends_now(state, now):
            compared = state
            balances = None
            if state.phase is Phase.COMPARING:
                wallets = _round_wallets(state)
                balances = _balances_of(wallets)
            step = machine.timeout(
                state, now=now, version=state.version, phase=state.phase, balances=balances
            )
        else:
            break
        state, events = step.state, events + list(step.events)
    if any(e.type == "settled" for e in events):
        settled = _settle(table=table, compared=compared, state=state, now=now, wallets=wallets)
        after = _send_away_the_broke(table=table, state=state, now=now, balances=settled)
        state, events = after.state, events + list(after.events)
    transition = Transition(state, tuple(events))

    positions = {s.player: s.position for s in (*before.seats, *state.seats)}
    _save(table, state, events, positions)
    left = [int(e.payload["player"]) for e in events if e.type == "left"]
    if left:
        players_left.send(sender=Table, room_id=table.room_id, user_ids=left)

    table_id, watched = table.pk, table.watchers > 0

    def notify() -> None:
        # After the commit, the table's lock released. The events go out at once; a person's
        # dealt hand goes without its suggestions, which follow once the deal is out
        # (views.delivered, live): the engine's few milliseconds a hand are not the deal's.
        sent = [delivered(e, state, live=True) for e in events]
        _send(table_id, _messages(events=sent, players=positions, spectators=watched))
        waiting = [
            e
            for e, out in zip(events, sent, strict=True)
            if out.type == "hand" and out.payload.get("suggestions", ()) is None
        ]
        if waiting:
            publish_later(lambda: _suggestion_messages(table_id, waiting, state))

    transaction.on_commit(notify, robust=True)
    transaction.on_commit(
        lambda: transition_committed.send(
            sender=Table, table_id=table_id, before=before, after=state, now=now
        ),
        robust=True,
    )
    return transition


def _suggestion_messages(table_id: int, hands: list[Event], state: TableState) -> list[Message]:
    """The ``table.suggestions`` message of each hand sent live without them, to its player's
    group. A hand whose suggestions fail gets none (logged), so that its client stops waiting
    and the other hands' still go out."""
    out: list[Message] = []
    for event in hands:
        try:
            found = hand_suggestions(event, state)
        except Exception:
            logger.exception("could not work out the suggestions of a hand (sent none)")
            found = {"cards": event.payload["cards"], "suggestions": []}
        if found is not None:
            group = table_player_group(table_id, event.audience)
            out.append((group, {"type": "table.suggestions", **found}))
    return out


def _delivered(event: Event, state: TableState) -> Event:
    """``views.delivered`` (a reconnect's missed events); a hand whose suggestions fail is
    still sent (with none), so that the round goes on and the failure is logged rather than
    the whole batch lost."""
    try:
        return delivered(event, state)
    except Exception:
        logger.exception("could not work out the suggestions of a hand (sent with none)")
        return replace(event, payload={**event.payload, "suggestions": []})


# Phases that may last no time at all (no deal pacing, no reveal pacing).
_INSTANT_PHASES = frozenset({Phase.DEALING, Phase.COMPARING})


def _ends_now(state: TableState, now: float) -> bool:
    """Whether the state's phase is already over (a phase of no duration)."""
    return state.phase in _INSTANT_PHASES and state.deadline is not None and state.deadline <= now


def _round_wallets(state: TableState) -> dict[int, Account]:
    """The round's players' wallets by user id, locked (ascending id) for the settlement."""
    return _wallets([int(s.player) for s in state.round_seats], lock=True)


def _balances_of(wallets: dict[int, Account]) -> dict[str, int]:
    """The balances the machine settles with, by player."""
    return {str(uid): a.balance for uid, a in wallets.items()}


def _deal(*, table: Table, state: TableState, now: float) -> Transition:
    """Shuffle, pick the starting seat, deal, and record the round with its commitment.

    A duplicate match's table deals the match's deal of this number instead, derived from the
    match's secret seed (``games.table.deck.seeded_deck``): every table of the match gets the
    same deck, salt and starting seat."""
    positions = [s.position for s in state.round_seats]
    if state.lockstep:
        seed = (
            DuplicateMatch.objects.filter(rooms__pk=table.room_id)
            .values_list("seed", flat=True)
            .get()
        )
        deck = list(seeded_deck(state.config.deck.cards, seed, state.round_no))
        salt = seeded_salt(seed, state.round_no)
        start_seat = seeded_start_seat(positions, seed, state.round_no)
    else:
        rng = secrets.SystemRandom()
        deck = list(state.config.deck.cards)
        rng.shuffle(deck)
        salt = secrets.token_hex(16)
        start_seat = rng.choice(positions)
    dealt = machine.deal(state, deck=deck, salt=salt, start_seat=start_seat, now=now)
    new = dealt.state
    assert new.commitment is not None
    _record_round(table=table, state=new, now=now)
    return dealt


def _record_round(*, table: Table, state: TableState, now: float) -> None:
    """The dealt round and its players' rows: on PostgreSQL one statement (the ORM's two
    inserts cost more CPU than the rest of the deal's writes), elsewhere through the ORM."""
    assert state.commitment is not None
    players = [
        (int(s.player), s.position, " ".join(format_cards(s.hand or ()))) for s in state.round_seats
    ]
    if connection.vendor != "postgresql":
        round_ = Round.objects.create(
            table=table,
            number=state.round_no,
            config=state.config.to_dict(),
            commitment=state.commitment,
            started_at=_aware(now),
        )
        RoundPlayer.objects.bulk_create(
            RoundPlayer(round=round_, user_id=user_id, position=position, cards=cards)
            for user_id, position, cards in players
        )
        return
    values = ", ".join(["(%s, %s, %s)"] * len(players))
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH dealt AS (INSERT INTO {_ROUND} (table_id, number, config, commitment, deck, "
            "salt, started_at) VALUES (%s, %s, %s, %s, '', '', %s) RETURNING id) "
            f"INSERT INTO {_ROUND_PLAYER} (round_id, user_id, position, cards, unused, special, "
            "auto, escaped, water, delta, penalty) "
            "SELECT dealt.id, p.user_id, p.position, p.cards, '', '', '', false, 0, 0, 0 "
            f"FROM dealt, (VALUES {values}) AS p (user_id, position, cards)",
            [
                table.pk,
                state.round_no,
                fastjson.dumps(state.config.to_dict()),
                state.commitment,
                connection.ops.adapt_datetimefield_value(_aware(now)),
                *(value for player in players for value in player),
            ],
        )


def _settle(
    *,
    table: Table,
    compared: TableState,
    state: TableState,
    now: float,
    wallets: dict[int, Account] | None = None,
) -> dict[int, int]:
    """Move the coins of a settled round once, and store its breakdown and revealed deck.
    ``wallets``: the players' wallets as locked for the comparison (read again if not given).
    Returns the players' balances after the settlement, by user id (none if it was settled
    before)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT id, settled_at FROM {_ROUND} WHERE table_id = %s AND number = %s"
            f"{_for_update()}",
            [table.pk, state.round_no],
        )
        row = cursor.fetchone()
    if row is None:
        raise Round.DoesNotExist(f"no round {state.round_no} at table {table.pk}")
    round_id, settled_at = row
    if settled_at is not None:
        return {}
    result = state.result
    assert result is not None and state.deck is not None and state.salt is not None
    players: list[Json] = result["players"]
    ids = [int(p["id"]) for p in players]
    if wallets is None or not set(ids) <= set(wallets):
        wallets = _wallets(ids, lock=False)
    # The balances the machine settled with (the wallets are locked by table_timeout), kept
    # so that an audit can recompute the cannot-cover cuts.
    balances = {str(user_id): account.balance for user_id, account in wallets.items()}
    net = {wallets[int(p["id"])]: p["delta"] + p["penalty"] for p in players}
    entries = {account: amount for account, amount in net.items() if amount}
    posted = None
    if entries:  # the round's lock and settled_at make the key new: fresh_in_caller
        posted = ledger_post(
            kind=TransactionKind.SETTLEMENT,
            entries=entries,
            idempotency_key=f"round:{round_id}:settlement",
            reference=f"round:{round_id}",
            fresh_in_caller=True,
        )
    house = None
    for p in players:
        if p["penalty"] > 0:
            house = house or account_system_get_or_create(kind=AccountKind.HOUSE)
            ledger_post(
                kind=TransactionKind.ESCAPE_PENALTY,
                entries={wallets[int(p["id"])]: -p["penalty"], house: p["penalty"]},
                idempotency_key=f"round:{round_id}:penalty:{p['id']}",
                reference=f"round:{round_id}",
                fresh_in_caller=True,
            )
    # The round's revealed deck, result and balances, and each player's row by position (the
    # ORM's save and bulk_update cost more CPU than the whole settlement: see _save).
    seats = {s.position: s for s in compared.round_seats}
    rows = []
    for p in players:
        seat = seats[p["position"]]
        arrangement = None if seat.arrangement is None else arranged_json(seat.arrangement)
        rows.append(
            (
                p["special"] or "",
                " ".join(format_cards(seat.unused)),
                None if arrangement is None else fastjson.dumps(arrangement),
                seat.auto or "",
                p["escaped"],
                p["water"],
                p["delta"],
                p["penalty"],
                round_id,
                p["position"],
            )
        )
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE {_ROUND} SET deck = %s, salt = %s, result = %s, balances = %s, "
            "settled_at = %s, transaction_id = %s WHERE id = %s",
            [
                " ".join(format_cards(state.deck)),
                state.salt,
                fastjson.dumps(result),
                fastjson.dumps(balances),
                connection.ops.adapt_datetimefield_value(_aware(now)),
                None if posted is None else posted.pk,
                round_id,
            ],
        )
        cursor.executemany(
            f"UPDATE {RoundPlayer._meta.db_table} SET special = %s, unused = %s, arrangement = %s, "
            "auto = %s, escaped = %s, water = %s, delta = %s, penalty = %s "
            "WHERE round_id = %s AND position = %s",
            rows,
        )
    # Each wallet moved by the player's delta in all (a penalty is in the delta: the
    # settlement leaves it to the wallet, and the penalty's posting takes it to the house).
    return {int(p["id"]): wallets[int(p["id"])].balance + p["delta"] for p in players}


def _send_away_the_broke(
    *, table: Table, state: TableState, now: float, balances: dict[int, int]
) -> Transition:
    """After a settlement, every person left with fewer coins than the room's entry minimum
    goes back to the room list (a ``left`` event with reason ``insufficient_coins``, the
    minimum and the balance), so that nobody plays on without covering their losses. Bots are
    funded by the house before they press Ready (``games.live.bots``). The wallets were locked for
    the settlement; ``balances`` are the round's players' after it (the others are read)."""
    minimum = getattr(table, ENTRY_MINIMUM, None)
    if minimum is None:
        minimum = (
            Room.objects.filter(pk=table.room_id).values_list("entry_minimum", flat=True).get()
        )
    people = [s for s in state.seats if not s.bot]
    others = [int(s.player) for s in people if int(s.player) not in balances]
    if others:
        balances = {**balances, **{u: a.balance for u, a in _wallets(others, lock=False).items()}}
    events: list[Event] = []
    for seat in people:
        balance = balances[int(seat.player)]
        if balance >= minimum:
            continue
        sent = machine.dismiss(
            state,
            position=seat.position,
            reason="insufficient_coins",
            now=now,
            minimum=minimum,
            balance=balance,
        )
        state, events = sent.state, events + list(sent.events)
    return Transition(state, tuple(events))


def _locked_balance(user_id: int) -> int:
    """The player's wallet balance, the wallet locked (created if missing)."""
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT balance FROM {Account._meta.db_table} WHERE user_id = %s AND kind = %s"
            f"{_for_update()}",
            [user_id, AccountKind.WALLET.value],
        )
        row = cursor.fetchone()
    if row is None:  # rare: a wallet was never made
        return _wallets([user_id], lock=True)[user_id].balance
    return int(row[0])


def _wallets(user_ids: list[int], *, lock: bool) -> dict[int, Account]:
    """The players' wallets by user id, created if missing, locked in ascending id if asked."""
    query = Account.objects.filter(user_id__in=user_ids, kind=AccountKind.WALLET).order_by("pk")
    if lock:
        query = query.select_for_update()
    found = {a.user_id: a for a in query}
    if len(found) < len(set(user_ids)):  # rare: a wallet was never made
        for user_id in sorted(set(user_ids) - set(found)):
            Account.objects.get_or_create(user_id=user_id, defaults={"kind": AccountKind.WALLET})
        found = {a.user_id: a for a in query.all()}
    return found


# -- notification (after commit) ---------------------------------------------------------------


# The key of the message for everyone at the table in ``_messages``: the batch's public events,
# for the spectators and for every player with no private event in the batch.
EVERYONE = "*"


def _messages(
    *, events: list[Event], players: Iterable[str], spectators: bool = False
) -> dict[str, Json]:
    """Each message of a batch of events, by whom it is for.

    A player with a private event in the batch (its hand, its own arrangement) gets its own
    message: every event it may see. Everyone else — the other players, and the spectators —
    gets one message of the public events (key EVERYONE), published once to the table's public
    group; it names the players who got their own (``except``), whose connections skip it. So
    a Ready is one publish and a submission two (the submitter's own, and everyone's), instead
    of one per player. The message for everyone is left out when every player has its own and
    nobody watches (``spectators``: the table's watcher count).

    ``first`` and ``last`` are the versions the whole batch covers, so that a connection knows
    it has seen every version up to ``last`` even when the batch holds nothing for it.
    """
    first, last = events[0].version, events[-1].version
    addressed = {e.audience for e in events if e.private}
    players = list(dict.fromkeys(players))
    own = [p for p in players if p in addressed]
    messages: dict[str, Json] = {
        player: {
            "type": "table.events",
            "first": first,
            "last": last,
            "events": [e.message() for e in events if e.visible_to(player)],
        }
        for player in own
    }
    if spectators or len(own) < len(players):
        messages[EVERYONE] = {
            "type": "table.events",
            "first": first,
            "last": last,
            "events": [e.message() for e in events if not e.private],
            "except": own,
        }
    return messages


def _send(table_id: int, messages: dict[str, Json]) -> None:
    """Publish each player's own message to its group and the message for everyone to the
    table's public group (kept in the thread's outbox, if any: shisanshui.publish)."""
    publish(
        [
            (
                table_public_group(table_id)
                if key == EVERYONE
                else table_player_group(table_id, key),
                m,
            )
            for key, m in messages.items()
        ]
    )


# -- the services ------------------------------------------------------------------------------


@transaction.atomic
def table_sit(*, user: User, room: Room) -> Transition:
    """Sit at the room's table, at the position of the player's seat in the room."""
    position = Seat.objects.filter(room=room, user=user).values_list("position", flat=True).first()
    if position is None:
        raise TableError("not_in_room", "take a seat in the room first")
    table = _locked(room=room)
    return _run(
        table=table,
        command=lambda s, now: machine.sit(
            s, player=str(user.pk), position=position, now=now, bot=user.is_bot
        ),
        now=_now(),
    )


def _seat_service(*, user: User, room: Room, command: Callable[..., Transition]) -> Transition:
    """Run a command that takes only the user's seat position."""
    table = _locked(room=room)
    state = _state_of(table)
    position = _position(state=state, user=user)
    return _run(
        table=table,
        command=lambda s, now: command(s, position=position, now=now),
        now=_now(),
        before=state,
    )


@transaction.atomic
def table_ready(*, user: User, room: Room) -> Transition:
    """Press Ready; the last Ready of at least two players starts and deals the round.

    Refused (``insufficient_coins``, with the minimum and the balance) when the player's wallet,
    read under its lock, holds less than the room's entry minimum: losses are capped by the
    balance and wins are not, so nobody may play a round without covering it (RULES.md §7.4).
    """
    table, balance = _locked_with_balance(room=room, user_id=user.pk)
    state = _state_of(table)
    position = _position(state=state, user=user)
    minimum = room.entry_minimum  # fixed when the room opened
    if balance < minimum:
        raise TableError(
            "insufficient_coins",
            f"you need at least {minimum:,} coins to play at this table; you have {balance:,}",
            minimum=minimum,
            balance=balance,
        )
    return _run(
        table=table,
        command=lambda s, now: machine.ready(s, position=position, now=now),
        now=_now(),
        before=state,
    )


@transaction.atomic
def table_leave(*, user: User, room: Room) -> Transition:
    """Leave the table; during a round the player escapes and pays the penalty at settlement."""
    return _seat_service(user=user, room=room, command=machine.leave)


# A player's current socket at a table (``connection``: an id the consumer makes up), so that
# the close of an older socket — a reload, a network change — processed after the new one
# opened does not mark a connected player away. Read and written under the table's lock.
CONNECTION_SECONDS = 24 * 3600


def _connection_key(table: Table, user: User) -> str:
    return f"table-connection:{table.pk}:{user.pk}"


@transaction.atomic
def table_disconnect(*, user: User, room: Room, connection: str | None = None) -> Transition:
    """The player's connection dropped: hosted (托管) until back or the round ends. Refused
    (``not_current_connection``) when ``connection`` is not the player's current socket."""
    table = _locked(room=room)
    if connection is not None:
        current = cache.get(_connection_key(table, user))
        if current is not None and current != connection:
            raise TableError("not_current_connection", "a newer connection of this player is open")
    state = _state_of(table)
    position = _position(state=state, user=user)
    return _run(
        table=table,
        command=lambda s, now: machine.disconnect(s, position=position, now=now),
        now=_now(),
        before=state,
    )


@transaction.atomic
def table_reconnect(*, user: User, room: Room, connection: str | None = None) -> Transition:
    """The player is back; hosting ends. ``connection`` becomes its current socket (even when
    the seat is still marked connected, which is then refused with ``already_connected``)."""
    table = _locked(room=room)
    if connection is not None:
        cache.set(_connection_key(table, user), connection, CONNECTION_SECONDS)
    state = _state_of(table)
    position = _position(state=state, user=user)
    return _run(
        table=table,
        command=lambda s, now: machine.reconnect(s, position=position, now=now),
        now=_now(),
        before=state,
    )


@transaction.atomic
def table_choose_special(*, user: User, room: Room, play_special: bool) -> Transition:
    """Answer whether to play the special hand (RULES.md §5.1)."""
    table = _locked(room=room)
    state = _state_of(table)
    position = _position(state=state, user=user)
    return _run(
        table=table,
        command=lambda s, now: machine.choose_special(
            s, position=position, play_special=play_special, now=now
        ),
        now=_now(),
        before=state,
    )


@transaction.atomic
def table_submit(
    *,
    user: User,
    room: Room,
    front: list[str],
    middle: list[str],
    back: list[str],
    unused: list[str] | None = None,
) -> Transition:
    """Submit an arrangement given as card strings (``"AS"``); with spare cards optionally
    the 3 set aside. A foul, a wrong card or a wrong count raises TableError and changes
    nothing."""
    rows = _cards(front, "front"), _cards(middle, "middle"), _cards(back, "back")
    aside = None if unused is None else _cards(unused, "unused")
    table = _locked(room=room)
    state = _state_of(table)
    position = _position(state=state, user=user)
    return _run(
        table=table,
        command=lambda s, now: machine.submit(
            s,
            position=position,
            front=rows[0],
            middle=rows[1],
            back=rows[2],
            unused=aside,
            now=now,
        ),
        now=_now(),
        before=state,
    )


def table_suggest(*, user: User, room: Room, cards: list[str]) -> list[Json]:
    """The suggestions for the 13 cards the player keeps of its 16 (RULES.md §12.4, the
    ``suggest`` message). Reads the table without locking it and changes nothing; a request
    that cannot be answered raises TableError."""
    kept = _cards(cards, "cards")
    state = TableState.from_dict(
        Table.objects.filter(room=room).values_list("state", flat=True).get()
    )
    position = _position(state=state, user=user)
    return kept_suggestions(state, position=position, cards=kept)


@transaction.atomic
def table_chat(*, user: User, room: Room, kind: str, value: object) -> Transition:
    """A chat message from the player's seat (``games.table.chat``); refused (``bad_chat``,
    ``chat_text_off``) with nothing written."""
    return _seat_service(
        user=user,
        room=room,
        command=lambda s, position, now: machine.chat(
            s, position=position, kind=kind, value=value, now=now
        ),
    )


@transaction.atomic
def table_save_draft(*, user: User, room: Room, draft: Json) -> Transition:
    """Keep the player's partial arrangement (a small JSON object) for a reconnect."""
    table = _locked(room=room)
    state = _state_of(table)
    position = _position(state=state, user=user)
    return _run(
        table=table,
        command=lambda s, now: machine.save_draft(s, position=position, draft=draft, now=now),
        now=_now(),
        before=state,
    )


def table_timeout(
    *, table_id: int, version: int, phase: str, deadline: float | None = None
) -> Transition | None:
    """Act on a deadline if it is still the table's.

    A phase deadline's timer gives ``deadline``: it holds while the table is in ``phase`` with
    that deadline, whatever commands came in between. Without ``deadline`` the timer holds
    only at ``version``. Stale (the table moved on), duplicate or missing tables: nothing
    happens. Early: nothing happens now (the poller, :mod:`games.live.timers`, asks again once the
    stored deadline has passed).
    At the end of the comparison the players' wallets are locked (ascending id) and their
    balances settle the round.
    """
    found = (
        Table.objects.filter(pk=table_id)
        .values_list("room_id", "phase", "version", "state__deadline")
        .first()
    )
    if found is None:
        return None
    room_id, stored_phase, stored_version, stored_deadline = found
    if _surely_stale(
        phase=phase,
        version=version,
        deadline=deadline,
        stored=(stored_phase, stored_version, stored_deadline),
    ):
        # Read committed, without a lock, and so known for good: a table's version only grows,
        # and a phase's deadline is set once when it begins. Most timers end here (the players
        # were quicker): one query, no transaction, no lock, no state parsed.
        return None
    return _timeout_locked(
        table_id=table_id, room_id=room_id, version=version, phase=phase, deadline=deadline
    )


@transaction.atomic
def _timeout_locked(
    *, table_id: int, room_id: int, version: int, phase: str, deadline: float | None
) -> Transition:
    """The rest of :func:`table_timeout`, under the room's and the table's locks."""
    Room.objects.select_for_update().filter(pk=room_id).values_list("pk", flat=True).get()
    table = Table.objects.select_for_update().get(pk=table_id)
    state = _state_of(table)
    if deadline is not None and phase == state.phase and deadline == state.deadline:
        version = state.version
    now = _now()
    balances = wallets = None
    if state.phase is Phase.COMPARING and phase == state.phase and version == state.version:
        wallets = _round_wallets(state)
        balances = _balances_of(wallets)
    try:
        machine.verify_timeout(state, now=now, version=version, phase=phase, balances=balances)
    except StaleTimeout:
        return Transition(state)
    return _run(
        table=table,
        command=lambda s, at: machine.timeout(
            s, now=at, version=s.version, phase=phase, balances=balances
        ),
        now=now,
        wallets=wallets,
    )


def _surely_stale(
    *, phase: str, version: int, deadline: float | None, stored: tuple[object, object, object]
) -> bool:
    """Whether a timer is stale for the table's committed (phase, version, deadline), by the
    rule of ``machine.verify_timeout``: it holds only in its phase, at its version, or with
    ``deadline`` at that phase's stored deadline. Any doubt (an unexpected value): False, and
    the timer is checked under the locks."""
    stored_phase, stored_version, stored_deadline = stored
    if not isinstance(stored_version, int) or not isinstance(stored_phase, str):
        return False
    if stored_deadline is None:
        return True
    if phase != stored_phase:
        return True
    same_deadline = deadline is not None and deadline == stored_deadline
    return not same_deadline and version != stored_version


def table_events_since(*, table: Table, version: int) -> list[Event]:
    """The logged events after ``version``, oldest first (for ``views.missed_events``)."""
    return [e.as_event() for e in table.events.filter(version__gt=version).order_by("version")]


# -- reads for the table's WebSocket -----------------------------------------------------------

# Beyond this many missed events a reconnecting client gets a snapshot instead.
MAX_MISSED_EVENTS = 500


@dataclass(frozen=True, slots=True)
class TableSeat:
    """Where a player sits: the room, its table and the player's position there."""

    room: Room
    table_id: int
    position: int
    connected: bool
    player: str


def table_seat_for(*, user: User, room_id: int) -> TableSeat | None:
    """The player's seat at the table of room ``room_id``, or None when not seated there. One
    query for a player seated at a table (every socket's connect asks), which reads the
    table's state only when this process does not hold its version (``_STATES``); two or three
    otherwise."""
    known = _STATES.of_room(room_id)
    found = list(
        Room.objects.raw(
            f"SELECT r.*, t.id AS table_pk, t.version AS table_version, "
            f"CASE WHEN t.id = %s AND t.version = %s THEN NULL ELSE t.state END AS table_state "
            f"FROM {_ROOM} r JOIN {_TABLE} t ON t.room_id = r.id "
            f"JOIN {_SEAT} s ON s.room_id = r.id AND s.user_id = %s WHERE r.id = %s",
            [*_held_params(known), user.pk, room_id],
        )
    )
    if found:
        room = found[0]
        table_id = room.table_pk
        state = _held_or_parsed(
            known,
            room_id=room_id,
            table_id=table_id,
            version=room.table_version,
            text=room.table_state,
        )
    else:  # not seated, or seated at a room whose table does not exist yet
        room = Room.objects.filter(pk=room_id).first()
        if room is None or not Seat.objects.filter(room=room, user=user).exists():
            return None
        table = table_for_room(room=room)
        table_id, state = table.pk, TableState.from_dict(table.state)
    seat = state.seat_of(str(user.pk))
    if seat is None:
        return None
    return TableSeat(room, table_id, seat.position, seat.connected, seat.player)


@dataclass(frozen=True)
class TableWatch:
    """A table a spectator watches: the room and its table."""

    room: Room
    table_id: int


def table_watch_for(*, user: User, room_id: int) -> TableWatch | None:
    """The table of room ``room_id`` if ``user`` may watch it: an open public room that allows
    spectators (issue 18). A player watches a table it does not sit at."""
    room = Room.objects.filter(
        pk=room_id, status=RoomStatus.OPEN, is_private=False, allow_spectators=True
    ).first()
    if room is None:
        return None
    return TableWatch(room, table_for_room(room=room).pk)


def table_watchers_change(*, table_id: int, delta: int) -> None:
    """A spectator's socket opened (+1) or closed (-1); never below zero."""
    Table.objects.filter(pk=table_id).update(watchers=Greatest(F("watchers") + delta, 0))


def _committed(table_id: int) -> tuple[Table, TableState]:
    """The table (not locked) and its committed state, read only when this process does not
    hold that version already (``_STATES``). Raises Table.DoesNotExist."""
    known = _STATES.get(table_id)
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT room_id, version, CASE WHEN id = %s AND version = %s THEN NULL "
            f"ELSE state END FROM {_TABLE} WHERE id = %s",
            [*_held_params(known), table_id],
        )
        row = cursor.fetchone()
    if row is None:
        raise Table.DoesNotExist(f"no table {table_id}")
    room_id, version, text = row
    table = Table(id=table_id, room_id=room_id, version=version)
    state = _held_or_parsed(known, room_id=room_id, table_id=table_id, version=version, text=text)
    return table, state


def table_resync(*, table_id: int, player: str, since: int | None) -> Json:
    """What ``player``'s client, which last saw version ``since``, needs: ``{"events": [...]}``
    — the events it missed that the player may see — or ``{"snapshot": ...}``
    (``views.snapshot_for``) when ``since`` is None, unknown to the log, too far behind, or
    from before the player sat down (nothing before that is ever replayed). A player no longer
    at the table gets a spectator's snapshot."""
    table, state = _committed(table_id)
    seat = state.seat_of(player)
    position = None if seat is None else seat.position
    if seat is not None and since is not None and 0 <= state.version - since <= MAX_MISSED_EVENTS:
        # From ``since`` itself, so that the log is not empty when nothing was missed.
        log = table_events_since(table=table, version=since - 1)
        missed = missed_events(log, since, player, seated_at=seat.since)
        if missed is not None:
            view: Json = {
                "version": state.version,
                "events": [_delivered(e, state).message() for e in missed],
            }
            try:
                found = resync_suggestions(state, player, missed)
            except Exception:
                logger.exception("could not work out the suggestions of a hand (sent none)")
                found = None
            if found is not None:  # the hand came before: its suggestions may not have
                view["suggestions"] = found
            return view
    return {"version": state.version, "snapshot": snapshot_for(state, position, now=_now())}


# -- several tables at once (a duplicate match, games.live.duplicate)  -----------------------------


def tables_locked(*, room_ids: list[int]) -> list[Table]:
    """The rooms' tables, locked in the lock order: every room (ascending id), then their
    tables (by room). Tables not created yet are created first."""
    ordered = sorted(room_ids)
    list(Room.objects.select_for_update().filter(pk__in=ordered).order_by("pk").values("pk"))
    for room in Room.objects.filter(pk__in=ordered).exclude(table__isnull=False):
        table_for_room(room=room)
    return list(Table.objects.select_for_update().filter(room_id__in=ordered).order_by("room_id"))


def table_command(*, table: Table, command: Command) -> Transition:
    """Apply ``command`` to a table the caller has locked (:func:`tables_locked`), like any
    player's command: deal, save, log, settle, notify on commit."""
    return _run(table=table, command=command, now=_now())

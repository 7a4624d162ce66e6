"""The commands of the live table: every player's command and every timeout, one transaction each.

Check → lock → write → notify (STYLE.md): lock the room's and the table's rows
(``games.live.store``), apply a command of :mod:`games.table.machine` — a refusal raises
:class:`~games.table.errors.TableError` and nothing is written — deal if it started a round
(``games.live.deal``), end the phases that last no time, settle if the round settled
(``games.live.settle``), save the state and its events, and on commit send them
(``games.live.notify``). The saved deadline is the timer (``games.live.timers`` polls it);
a timeout only asks: :func:`table_timeout` re-checks phase and deadline under the lock.

This module knows nothing of bots, of Celery or of the lobby's services; they listen:
:data:`players_left` is sent inside the transaction when the table lets players go (the
lobby frees their seats in it), :data:`transition_committed` on commit after every
transition with events (``games.live.tasks`` gives the bots their tasks).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from typing import Protocol

from django.core.cache import cache
from django.db import transaction
from django.db.models import F
from django.db.models.functions import Greatest
from django.dispatch import Signal

from accounts.collusion import transfers_frozen
from accounts.models import Account, User
from games.history import tasks as history_tasks
from games.live import sent_away, store
from games.live.deal import deal_round
from games.live.notify import notify_on_commit
from games.live.reads import parsed_cards, seat_position
from games.live.settle import (
    balances_of,
    locked_balance,
    round_wallets,
    send_away_the_broke,
    settle_round,
)
from games.models import Table
from games.table import machine
from games.table.errors import StaleTimeout, TableError
from games.table.events import Event, Transition
from games.table.state import Json, Phase, TableState
from lobby.models import Room, Seat

Command = Callable[[TableState, float], Transition]


class SeatCommand(Protocol):
    """A command of :mod:`games.table.machine` given the player's position."""

    def __call__(self, state: TableState, /, *, position: int, now: float) -> Transition: ...


# Inside the command's transaction: the table let these players go (``room_id``, ``user_ids``).
players_left = Signal()
# On commit, after the players' messages: ``table_id``, ``before``, ``after`` (states), ``now``.
transition_committed = Signal()

# A player's current socket at a table (``connection``: an id the consumer makes up), so that
# the close of an older socket — a reload, a network change — processed after the new one
# opened does not mark a connected player away. Read and written under the table's lock.
CONNECTION_SECONDS = 24 * 3600


def _connection_key(table: Table, user: User) -> str:
    return f"table-connection:{table.pk}:{user.pk}"


# -- the players' commands ---------------------------------------------------------------------


@transaction.atomic
def table_sit(*, user: User, room: Room) -> Transition:
    """Sit at the room's table, at the position of the player's seat in the room."""
    position = Seat.objects.filter(room=room, user=user).values_list("position", flat=True).first()
    if position is None:
        raise TableError("not_in_room", "take a seat in the room first")
    table = store.locked(room=room)
    user_id = user.pk
    transaction.on_commit(lambda: sent_away.forget(user_id=user_id), robust=True)
    return _apply_command(
        table=table,
        command=lambda s, now: machine.sit(
            s, player=str(user.pk), position=position, now=now, bot=user.is_bot
        ),
        now=store.clock(),
    )


@transaction.atomic
def table_ready(*, user: User, room: Room) -> Transition:
    """Press Ready; the last Ready of at least two players starts and deals the round.

    Refused (``insufficient_coins``, with the minimum and the balance) when the player's wallet,
    read under its lock, holds less than the room's entry minimum: losses are capped by the
    balance and wins are not, so nobody may play a round without covering it (RULES.md §7.4).
    Refused (``transfers_frozen``) when support froze the player's transfers pending review.
    """
    # The room, the table, then the wallet: the lock order.
    table, found = store.locked_rows(room=room, wallet_of=user.pk)
    balance = locked_balance(user.pk) if found is None else found  # None: read one step at a time
    minimum = room.entry_minimum  # fixed when the room opened

    frozen = getattr(table, store.WALLET_FROZEN, None)
    if frozen is None:  # read one step at a time
        frozen = transfers_frozen(user)

    def ready(state: TableState, *, position: int, now: float) -> Transition:
        # Refused only once the player is known to sit here (``not_at_table`` comes first).
        if frozen:
            raise TableError(
                "transfers_frozen",
                "your account's transfers are frozen pending a review by support",
            )
        if balance < minimum:
            raise TableError(
                "insufficient_coins",
                f"you need at least {minimum:,} coins to play at this table; you have {balance:,}",
                minimum=minimum,
                balance=balance,
            )
        return machine.ready(state, position=position, now=now)

    return _at_seat(table=table, user=user, command=ready)


@transaction.atomic
def table_leave(*, user: User, room: Room) -> Transition:
    """Leave the table; during a round the player escapes and pays the penalty at settlement."""
    return _at_seat(table=store.locked(room=room), user=user, command=machine.leave)


@transaction.atomic
def table_disconnect(*, user: User, room: Room, connection: str | None = None) -> Transition:
    """The player's connection dropped: hosted (托管) until back or the round ends. Refused
    (``not_current_connection``) when ``connection`` is not the player's current socket."""
    table = store.locked(room=room)
    if connection is not None:
        current = cache.get(_connection_key(table, user))
        if current is not None and current != connection:
            raise TableError("not_current_connection", "a newer connection of this player is open")
    return _at_seat(table=table, user=user, command=machine.disconnect)


@transaction.atomic
def table_reconnect(*, user: User, room: Room, connection: str | None = None) -> Transition:
    """The player is back; hosting ends. ``connection`` becomes its current socket (even when
    the seat is still marked connected, which is then refused with ``already_connected``)."""
    table = store.locked(room=room)
    if connection is not None:
        cache.set(_connection_key(table, user), connection, CONNECTION_SECONDS)
    return _at_seat(table=table, user=user, command=machine.reconnect)


@transaction.atomic
def table_choose_special(*, user: User, room: Room, play_special: bool) -> Transition:
    """Answer whether to play the special hand (RULES.md §5.1)."""
    command = partial(machine.choose_special, play_special=play_special)
    return _at_seat(table=store.locked(room=room), user=user, command=command)


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
    command = partial(
        machine.submit,
        front=parsed_cards(front, "front"),
        middle=parsed_cards(middle, "middle"),
        back=parsed_cards(back, "back"),
        unused=None if unused is None else parsed_cards(unused, "unused"),
    )
    return _at_seat(table=store.locked(room=room), user=user, command=command)


@transaction.atomic
def table_chat(*, user: User, room: Room, kind: str, value: object) -> Transition:
    """A chat message from the player's seat (``games.table.chat``); refused (``bad_chat``,
    ``chat_text_off``) with nothing written."""
    command = partial(machine.chat, kind=kind, value=value)
    return _at_seat(table=store.locked(room=room), user=user, command=command)


@transaction.atomic
def table_save_draft(*, user: User, room: Room, draft: Json) -> Transition:
    """Keep the player's partial arrangement (a small JSON object) for a reconnect."""
    command = partial(machine.save_draft, draft=draft)
    return _at_seat(table=store.locked(room=room), user=user, command=command)


def table_watchers_change(*, table_id: int, delta: int) -> None:
    """A spectator's socket opened (+1) or closed (-1); never below zero."""
    Table.objects.filter(pk=table_id).update(watchers=Greatest(F("watchers") + delta, 0))


def _at_seat(*, table: Table, user: User, command: SeatCommand) -> Transition:
    """Apply ``command`` at the user's seat of the locked ``table``; refused with
    ``not_at_table`` when the user does not sit there."""
    state = store.state_of(table)
    position = seat_position(state=state, user=user)
    return _apply_command(
        table=table,
        command=lambda s, now: command(s, position=position, now=now),
        now=store.clock(),
        before=state,
    )


# -- timeouts and several tables at once -------------------------------------------------------


def table_timeout(
    *, table_id: int, version: int, phase: str, deadline: float | None = None
) -> Transition | None:
    """Act on a deadline if it is still the table's.

    A phase deadline's timer gives ``deadline``: it holds while the table is in ``phase`` with
    that deadline, whatever commands came in between. Without ``deadline`` the timer holds
    only at ``version``. Stale (the table moved on), duplicate or missing tables: nothing
    happens. Early: nothing happens now (the poller, :mod:`games.live.timers`, asks again once
    the stored deadline has passed).
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
    if surely_stale(
        phase=phase,
        version=version,
        deadline=deadline,
        stored=(stored_phase, stored_version, stored_deadline),
    ):
        # Read committed, without a lock: a table's version only grows, and a deadline that is
        # no longer the row's is dropped (the arranging's moves to a hosted hand's grace and
        # back; the pollers read the row's own). Most timers end here (the players were
        # quicker): one query, no transaction, no lock, no state parsed.
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
    state = store.state_of(table)
    if deadline is not None and phase == state.phase and deadline == state.deadline:
        version = state.version
    now = store.clock()
    balances = wallets = None
    if state.phase is Phase.COMPARING and phase == state.phase and version == state.version:
        wallets = round_wallets(state)
        balances = balances_of(wallets)
    try:
        machine.verify_timeout(state, now=now, version=version, phase=phase, balances=balances)
    except StaleTimeout:
        return Transition(state)
    return _apply_command(
        table=table,
        command=lambda s, at: machine.timeout(
            s, now=at, version=s.version, phase=phase, balances=balances
        ),
        now=now,
        wallets=wallets,
    )


def surely_stale(
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


def table_command(*, table: Table, command: Command) -> Transition:
    """Apply ``command`` to a table the caller has locked (``store.tables_locked``: a
    duplicate match's tables), like any player's command: deal, save, log, settle, notify on
    commit."""
    return _apply_command(table=table, command=command, now=store.clock())


# -- what every command goes through -----------------------------------------------------------

# Phases that may last no time at all (no deal pacing, no reveal pacing).
_INSTANT_PHASES = frozenset({Phase.DEALING, Phase.COMPARING})


def _rate_on_commit(round_id: int) -> None:
    """Queue the skill rating's update from the round settled now once it is committed
    (games.history.rating; the beat's catch-up rates a round whose task was lost)."""
    transaction.on_commit(partial(history_tasks.rating_update.delay, round_id), robust=True)


def _with_result(
    state: TableState, events: list[Event], result: Json
) -> tuple[TableState, list[Event]]:
    """The state and events with the round's result as settled (the table fee in it), in place
    of the machine's: the page shows what the wallets moved. Same versions, new events."""
    return replace(state, result=result), [
        replace(e, payload={**e.payload, "result": result}) if e.type == "settled" else e
        for e in events
    ]


def _ends_now(state: TableState, now: float) -> bool:
    """Whether the state's phase is already over (a phase of no duration)."""
    return state.phase in _INSTANT_PHASES and state.deadline is not None and state.deadline <= now


def _apply_command(
    *,
    table: Table,
    command: Command,
    now: float,
    before: TableState | None = None,
    wallets: dict[int, Account] | None = None,
) -> Transition:
    """Apply ``command`` to the locked ``table`` (whose state is ``before`` when the caller
    has read it already) and carry its transition through: deal if a round starts, end the
    phases that last no time (the last Ready deals and begins the play, the last submission
    compares and settles), settle, save, log, and on commit notify. Returns the whole
    transition (deal included). ``wallets``: the round's players' wallets when the caller has
    locked them to settle."""
    if before is None:
        before = store.state_of(table)
    transition = command(before, now)
    if not transition.events:
        return transition
    state, events = transition.state, list(transition.events)
    compared = before  # the state the round is settled from (every seat's arrangement)
    while True:
        if state.awaiting_deal:
            step = deal_round(table=table, state=state, now=now)
        elif _ends_now(state, now):
            compared = state
            balances = None
            if state.phase is Phase.COMPARING:
                wallets = round_wallets(state)
                balances = balances_of(wallets)
            step = machine.timeout(
                state, now=now, version=state.version, phase=state.phase, balances=balances
            )
        else:
            break
        state, events = step.state, events + list(step.events)
    if any(e.type == "settled" for e in events):
        settled = settle_round(
            table=table, compared=compared, state=state, now=now, wallets=wallets
        )
        if settled.result is not None and settled.result is not state.result:
            state, events = _with_result(state, events, settled.result)
        if settled.round_id is not None:
            _rate_on_commit(settled.round_id)
        after = send_away_the_broke(
            table=table, state=state, now=now, balances=settled.balances, wallets=wallets
        )
        state, events = after.state, events + list(after.events)
    transition = Transition(state, tuple(events))

    positions = {s.player: s.position for s in (*before.seats, *state.seats)}
    store.save(table, state, events, positions)
    left = [int(e.payload["player"]) for e in events if e.type == "left"]
    if left:
        players_left.send(sender=Table, room_id=table.room_id, user_ids=left)
        # Told to a player who was not there to hear it when it comes back.
        reasons = sent_away.reasons_sent_away(before, events)
        sent_away.record_on_commit(room_id=table.room_id, reasons=reasons)

    table_id = table.pk
    notify_on_commit(
        table_id=table_id, events=events, state=state, players=positions, watched=table.watchers > 0
    )
    transaction.on_commit(
        lambda: transition_committed.send(
            sender=Table, table_id=table_id, before=before, after=state, now=now
        ),
        robust=True,
    )
    return transition

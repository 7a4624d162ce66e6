"""Bot players: real users with wallets, seated and played by the platform.

A bot (``User.is_bot``) has an unusable password, so it never logs in; it sits through the
lobby's own service (:func:`lobby.services.room_join`, which also sits it at the table) and
acts through the table's own services (``table_ready``, ``table_choose_special``,
``table_submit``), exactly as a person does. Settlement treats it like anyone else.

Decided here:

- **Pool.** :func:`bots_fill` reuses idle bots (seated nowhere, oldest first) before creating
  new ones (username ``bot-<8 hex>``, display name ``机器人 Bot <n>`` in ``first_name``).
- **Funding.** At seating time a bot holding less than the room's entry minimum gets the
  difference from the mint, as one ``grant`` through ``ledger_post`` (``wallet_grant``) whose
  idempotency key names the bot, the room and the wallet's last entry, so a retry posts nothing
  twice. No coin is created any other way.
- **Ready.** A bot presses Ready only when at least one person sits at the table and every
  person there has pressed Ready: the people decide when a round starts, and a table of bots
  alone never plays. When the last person goes (leaves, or is removed by the Ready timeout),
  the bots leave in the same transaction (:func:`lonely_bots_leave`, called by the table's
  services), which frees the room. During a round they finish it (leaving would be an escape)
  and leave when it settles.
- **Special hands.** A bot plays its special unless the best arrangement's expected water
  (``games.rules.arrange``, against three opponents) is higher than the special's water
  against three; then it answers No and arranges.
- **Arranging.** It submits the engine's best arrangement (``best_arrangement``), the one the
  table's own auto-arrange would submit.
- **Timing.** After each table command commits, every bot that has just been given something
  to do gets a ``games.tasks.bot_act`` task with a human-like random countdown
  (:data:`DELAYS`, times ``settings.BOT_DELAY_SCALE``), never more than half the time left
  before the relevant deadline. The task only asks: :func:`bot_act` re-checks under the
  table's lock that the bot still has something to do and that no round started or settled
  since the task was scheduled, so a duplicate or late task does nothing. The deadline's own
  timeout plays for a bot whose task was lost, and the sweeper nudges bots whose table has
  been idle for longer than any delay (:func:`bots_nudge`). Bots are always connected.
"""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Callable, Iterable
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from accounts.models import Entry, User
from accounts.services import wallet_get_or_create, wallet_grant
from games import table_services
from games.models import Table, TableEvent
from games.rules.arrange import arrange, best_arrangement
from games.rules.cards import format_cards
from games.table import machine
from games.table.events import Event, Transition
from games.table.state import LOBBY_PHASES, PLAY_PHASES, TableState
from lobby.models import Room, Seat

logger = logging.getLogger(__name__)

READY = "ready"
SPECIAL = "special"
ARRANGE = "arrange"

# Seconds a bot waits before each action (uniformly random), before BOT_DELAY_SCALE.
DELAYS: dict[str, tuple[float, float]] = {
    READY: (1.0, 3.0),
    SPECIAL: (1.0, 2.0),
    ARRANGE: (3.0, 8.0),
}
# The special is compared with the best arrangement against this many opponents (the engine's
# reference: a full table).
OPPONENTS = 3
BOT_NAME = "机器人 Bot {number}"
# The sweeper nudges a bot whose table has not moved for this long (times the delay scale, plus
# a margin): longer than any delay, so it only catches lost tasks.
NUDGE_MARGIN_SECONDS = 5.0
NUDGE_BATCH = 50

Command = Callable[[TableState, float], Transition]


# -- what a bot has to do (pure) ---------------------------------------------------------------


def people_at(state: TableState, bots: set[str]) -> list[str]:
    """The players at the table who are people and have not left it."""
    return [s.player for s in state.seats if s.player not in bots and not s.left]


def bot_action(state: TableState, *, player: str, bots: set[str]) -> str | None:
    """What the bot ``player`` has to do in ``state``: READY, SPECIAL, ARRANGE or None."""
    seat = state.seat_of(player)
    if seat is None or seat.left:
        return None
    if state.phase in LOBBY_PHASES:
        people = [s for s in state.seats if s.player not in bots]
        if not seat.ready and people and all(s.ready for s in people):
            return READY
        return None
    if state.phase not in PLAY_PHASES:
        return None
    if not seat.in_round or seat.hand is None or seat.escaped or seat.done:
        return None
    return SPECIAL if seat.choosing else ARRANGE


def bots_ready_at_deadline(state: TableState, *, bots: set[str], now: float) -> Transition:
    """At a Ready deadline, the bots not yet ready press Ready first: they only wait for the
    people, so they never hold up a table nor go back to the room list with a slow person
    (their own task may not have run yet). Stops once a round is to start."""
    events: list[Event] = []
    for position in [s.position for s in state.seats if s.player in bots]:
        seat = state.seat(position)
        if state.phase not in LOBBY_PHASES or state.awaiting_deal:
            break
        if seat is None or seat.left or seat.ready:
            continue
        step = machine.ready(state, position=position, now=now)
        state, events = step.state, events + list(step.events)
    return Transition(state, tuple(events))


def bot_delay(state: TableState, *, player: str, action: str, now: float) -> float:
    """A human-like countdown for ``action``, at most half the time left before its deadline."""
    low, high = DELAYS[action]
    delay = random.uniform(low, high) * float(settings.BOT_DELAY_SCALE)
    seat = state.seat_of(player)
    if action == READY:
        deadline = seat.ready_deadline if seat is not None else None
    elif action == SPECIAL:
        deadline = state.deadline
    else:
        deadline = state.arrange_deadline
    if deadline is not None:
        delay = min(delay, max(0.0, (deadline - now) / 2))
    return max(0.0, delay)


def plays_special(state: TableState, *, player: str) -> bool:
    """Whether the bot plays its special: unless the best arrangement is expected to win more."""
    seat = state.seat_of(player)
    assert seat is not None and seat.hand is not None and seat.special is not None
    config = state.config
    special_water = config.special(seat.special).water * OPPONENTS
    best = arrange(seat.hand, config, limit=1, opponents=OPPONENTS).best
    return special_water >= best.expected_water


def _leave_all(state: TableState, *, bots: set[str], now: float) -> Transition:
    """Every bot leaves (between rounds), those that pressed Ready first: while a bot that has
    not pressed Ready is still seated, the remaining seats are never all ready, so no round
    can start on the way."""
    seats = sorted(
        (s for s in state.seats if s.player in bots), key=lambda s: (not s.ready, s.position)
    )
    events = []
    for seat in seats:
        step = machine.leave(state, position=seat.position, now=now)
        state, events = step.state, events + list(step.events)
    return Transition(state, tuple(events))


def lonely_bots_leave(
    *, before: TableState, transition: Transition, command: Command, bots: set[str], now: float
) -> Transition:
    """``transition`` (``command`` applied to ``before``), corrected so that bots never stay
    at a table without people between rounds, and never start a round among themselves.

    If the command would start a round of bots alone, the bots leave first and the command is
    applied after them. If it leaves bots alone between rounds, they leave after it. During a
    round they stay and finish it.
    """
    state = transition.state
    if not bots or people_at(state, bots):
        return transition
    if not any(s.player in bots for s in state.seats):
        return transition
    if state.awaiting_deal and before.phase in LOBBY_PHASES:
        gone = _leave_all(before, bots=bots, now=now)
        rest = command(gone.state, now)
        return Transition(rest.state, gone.events + rest.events)
    if state.phase in LOBBY_PHASES:
        gone = _leave_all(state, bots=bots, now=now)
        return Transition(gone.state, transition.events + gone.events)
    return transition


def bot_tasks(
    *, before: TableState, after: TableState, bots: set[str], now: float
) -> list[tuple[int, float]]:
    """(bot user id, countdown) for every bot that has just been given something to do."""
    due = []
    for seat in after.seats:
        if seat.player not in bots:
            continue
        action = bot_action(after, player=seat.player, bots=bots)
        if action is None or action == bot_action(before, player=seat.player, bots=bots):
            continue
        due.append((int(seat.player), bot_delay(after, player=seat.player, action=action, now=now)))
    return due


# -- hooks of the table's services -------------------------------------------------------------


def bot_ids(players: Iterable[str]) -> set[str]:
    """Which of these table player ids are bots."""
    ids = {int(p) for p in players}
    if not ids:
        return set()
    return {
        str(pk) for pk in User.objects.filter(pk__in=ids, is_bot=True).values_list("pk", flat=True)
    }


def schedule(table_id: int, version: int, due: list[tuple[int, float]]) -> None:
    """Send the bots' tasks (called on commit)."""
    from games.tasks import bot_act as task

    for user_id, countdown in due:
        task.apply_async(args=(table_id, user_id, version), countdown=countdown)


# -- services ----------------------------------------------------------------------------------


def _idle_bots(count: int) -> list[User]:
    """Up to ``count`` bots seated nowhere, locked (skipping any another transaction holds)."""
    seated = Seat.objects.values("user_id")
    return list(
        User.objects.filter(is_bot=True)
        .exclude(pk__in=seated)
        .order_by("pk")
        .select_for_update(skip_locked=True)[:count]
    )


def bot_create() -> User:
    """A new bot with an empty wallet and an unusable password."""
    number = User.objects.filter(is_bot=True).count() + 1
    bot = User.objects.create_user(
        username=f"bot-{secrets.token_hex(4)}",
        password=None,
        first_name=BOT_NAME.format(number=number),
        is_bot=True,
    )
    wallet_get_or_create(user=bot)
    return bot


def bot_fund(*, bot: User, room: Room) -> int:
    """Grant the bot what it lacks of the room's entry minimum, from the mint; returns the
    coins granted (0 when it has enough)."""
    wallet = wallet_get_or_create(user=bot)
    wallet.refresh_from_db(fields=["balance"])
    missing = room.entry_minimum - wallet.balance
    if missing <= 0:
        return 0
    last = Entry.objects.filter(account=wallet).order_by("-pk").values_list("pk", flat=True).first()
    wallet_grant(
        user=bot,
        amount=missing,
        idempotency_key=f"bot-grant:user:{bot.pk}:room:{room.pk}:after-entry:{last or 0}",
        reference=f"room:{room.pk}",
        reason="Bot funding: the room's entry minimum",
    )
    return missing


@transaction.atomic
def bots_fill(*, room: Room, count: int) -> list[User]:
    """Seat ``count`` bots in the room's free seats (and at its table), funding each from the
    mint up to the entry minimum; returns them. Only where a person sits (else nothing
    happens). The caller has checked ``count``; joining refuses (LobbyError) a full or closed
    room, and nothing is written then."""
    from lobby.services import room_join

    if count <= 0:
        return []
    # The room first: the lock order of every lobby and table service.
    Room.objects.select_for_update().filter(pk=room.pk).values_list("pk", flat=True).get()
    if not Seat.objects.filter(room=room, user__is_bot=False).exists():
        return []  # bots never sit without a person (they would leave at once)
    bots = _idle_bots(count)
    while len(bots) < count:
        bots.append(bot_create())
    for bot in bots:
        bot_fund(bot=bot, room=room)
        room_join(user=bot, room_id=room.pk, code=room.code or "")
    return bots


@transaction.atomic
def bot_act(*, table_id: int, user_id: int, version: int) -> Transition | None:
    """Let the bot do what it has to do at the table, if it still has something to do.

    ``version`` is the table's version when the task was scheduled: if a round started or
    settled since, the task is stale and nothing happens; so does a duplicate (the bot has
    done it already) or a task for someone who is not a bot. Returns the transition, or None.
    """
    room_id = Table.objects.filter(pk=table_id).values_list("room_id", flat=True).first()
    if room_id is None:
        return None
    room = Room.objects.select_for_update().get(pk=room_id)
    table = Table.objects.select_for_update().get(pk=table_id)
    state = TableState.from_dict(table.state)
    bot = User.objects.filter(pk=user_id, is_bot=True).first()
    if bot is None or version > state.version:
        return None
    if TableEvent.objects.filter(
        table=table, version__gt=version, type__in=("round_start", "settled")
    ).exists():
        return None
    player = str(user_id)
    action = bot_action(state, player=player, bots=bot_ids(s.player for s in state.seats))
    if action == READY:
        return table_services.table_ready(user=bot, room=room)
    if action == SPECIAL:
        return table_services.table_choose_special(
            user=bot, room=room, play_special=plays_special(state, player=player)
        )
    if action == ARRANGE:
        seat = state.seat_of(player)
        assert seat is not None and seat.hand is not None
        best = best_arrangement(seat.hand, state.config)
        return table_services.table_submit(
            user=bot,
            room=room,
            front=format_cards(best.front),
            middle=format_cards(best.middle),
            back=format_cards(best.back),
        )
    return None


def bots_nudge() -> int:
    """Let bots act at tables that have not moved for longer than any bot delay (their task
    was lost); returns how many bots acted. For the sweeper."""
    idle = NUDGE_MARGIN_SECONDS + max(high for _low, high in DELAYS.values()) * float(
        settings.BOT_DELAY_SCALE
    )
    cutoff = timezone.now() - timedelta(seconds=idle)
    phases = [p.value for p in (*LOBBY_PHASES, *PLAY_PHASES)]
    tables = list(
        Table.objects.filter(
            updated_at__lte=cutoff,
            phase__in=phases,
            room__in=Seat.objects.filter(user__is_bot=True).values("room_id"),
        )
        .order_by("updated_at")
        .values_list("pk", "version", "state")[:NUDGE_BATCH]
    )
    acted = 0
    for table_id, version, data in tables:
        state = TableState.from_dict(data)
        bots = bot_ids(s.player for s in state.seats)
        for player in sorted(bots):
            if bot_action(state, player=player, bots=bots) is None:
                continue
            try:
                if bot_act(table_id=table_id, user_id=int(player), version=version) is not None:
                    acted += 1
            except Exception:
                logger.exception("nudging bot %s at table %s failed", player, table_id)
    return acted

"""Bot players: real users with wallets, seated and played by the platform.

A bot (``User.is_bot``, an unusable password, so it never logs in) sits through the lobby's own
service (``lobby.services.bots_fill`` → ``room_join``, a house seat: ``SeatState.bot``) and
acts through the table's own services, exactly as a person does: it is an ordinary client of
the table, and settlement treats it like anyone else. The table's services know nothing of
bots: on commit of every transition ``games.live.tasks`` asks :func:`bot_tasks` which bots have
something new to do and gives each a ``bot_act`` task with a human-like countdown
(:data:`DELAYS` × ``settings.BOT_DELAY_SCALE``, at most half the time left). The task only asks:
:func:`bot_act` re-checks under the table's lock, so a duplicate or late task does nothing; the
deadline's own timeout plays for a bot whose task was lost, and :func:`bots_nudge` wakes bots at
tables idle for longer than any delay. Idle bots are reused before new ones are made
(:func:`bots_idle`); a bot's nickname is unique at its table, initials included
(:func:`bots_name`); a bot short of the entry minimum is funded by :func:`bot_fund`.
"""

from __future__ import annotations

import logging
import random
import secrets
from datetime import timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from accounts.errors import MintBudgetExhausted
from accounts.models import BOT_FUNDING_REASON, Entry, User
from accounts.services import username_refusal, wallet_get_or_create, wallet_house_level
from games.live import services as table_services
from games.models import Table, TableEvent
from games.rules.cards import Card, format_cards
from games.rules.levels import DEFAULT_LEVEL, Play, level_play, level_plays_special
from games.table.events import Transition
from games.table.state import LOBBY_PHASES, PLAY_PHASES, TableState
from lobby.errors import BotsUnavailable
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
# (Chinese, English) nicknames: every Chinese first character and every English initial
# differs from the others' (see "Names" above).
BOT_NICKNAMES: tuple[tuple[str, str], ...] = (
    ("王牌", "Ace"),
    ("月兔", "Bunny"),
    ("白鹤", "Crane"),
    ("金龙", "Dragon"),
    ("飞鹰", "Eagle"),
    ("雪狐", "Fox"),
    ("海鸥", "Gull"),
    ("骏马", "Horse"),
    ("常春藤", "Ivy"),
    ("翡翠", "Jade"),
    ("风筝", "Kite"),
    ("福星", "Lucky"),
    ("流星", "Meteor"),
    ("新星", "Nova"),
    ("猫头鹰", "Owl"),
    ("熊猫", "Panda"),
    ("麒麟", "Qilin"),
    ("石头", "Rocky"),
    ("麻雀", "Sparrow"),
    ("猛虎", "Tiger"),
    ("独角兽", "Unicorn"),
    ("青蛇", "Viper"),
    ("银狼", "Wolf"),
    ("悠悠", "Yoyo"),
    ("斑马", "Zebra"),
)
# The sweeper nudges a bot whose table has not moved for this long (times the delay scale, plus
# a margin): longer than any delay, so it only catches lost tasks.
NUDGE_MARGIN_SECONDS = 5.0
NUDGE_BATCH = 50


# -- what a bot has to do (pure) ---------------------------------------------------------------


def bot_action(state: TableState, *, player: str) -> str | None:
    """What the bot ``player`` has to do in ``state``: READY, SPECIAL, ARRANGE or None.

    A bot presses Ready only when at least one person sits at the table and every person there
    has: the people decide when a round starts, and a table of bots alone never plays (the
    table itself sends the bots away when the last person goes, ``flow.house_leaves_alone``).
    During a round a bot finishes it: leaving would be an escape."""
    seat = state.seat_of(player)
    if seat is None or seat.left or not seat.bot:
        return None
    if state.phase in LOBBY_PHASES:
        people = [s for s in state.seats if not s.bot]
        # At a duplicate match's table of bots only (the field), the bots are ready at once.
        if seat.ready or state.match_over or not (people or state.lockstep):
            return None
        return READY if all(s.ready for s in people) else None
    if state.phase not in PLAY_PHASES:
        return None
    if not seat.in_round or seat.hand is None or seat.escaped or seat.done:
        return None
    return SPECIAL if seat.choosing else ARRANGE


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


def plays_special(state: TableState, *, player: str, level: str = DEFAULT_LEVEL) -> bool:
    """Whether the bot plays its special: the advice the table shows a person
    (``games.rules.advice``), against this round's opponents; an easy bot always does."""
    seat = state.seat_of(player)
    assert seat is not None and seat.hand is not None and seat.special is not None
    opponents = max(1, len(state.round_seats) - 1)
    return level_plays_special(seat.hand, state.config, seat.special, level, opponents=opponents)


def bot_tasks(*, before: TableState, after: TableState, now: float) -> list[tuple[int, float]]:
    """(bot user id, countdown) for every bot that has just been given something to do."""
    due = []
    for seat in after.seats:
        if not seat.bot:
            continue
        action = bot_action(after, player=seat.player)
        if action is None or action == bot_action(before, player=seat.player):
            continue
        due.append((int(seat.player), bot_delay(after, player=seat.player, action=action, now=now)))
    return due


# -- services ----------------------------------------------------------------------------------


def bots_idle(count: int) -> list[User]:
    """Up to ``count`` bots seated nowhere, locked (skipping any another transaction holds)."""
    seated = Seat.objects.values("user_id")
    return list(
        User.objects.filter(is_bot=True)
        .exclude(pk__in=seated)
        .order_by("pk")
        .select_for_update(skip_locked=True)[:count]
    )


def _bot_username() -> str:
    """A random `bot-<8 hex digits>` that looks like no existing name (a player may have
    signed up as one; sign-up's rule, `username_refusal`)."""
    while True:
        username = f"bot-{secrets.token_hex(4)}"
        if username_refusal(username=username) is None:
            return username


def bot_create() -> User:
    """A new bot with an empty wallet, an unusable password and a random nickname."""
    zh, en = random.choice(BOT_NICKNAMES)
    bot = User.objects.create_user(
        username=_bot_username(),
        password=None,
        first_name=zh,
        last_name=en,
        is_bot=True,
    )
    wallet_get_or_create(user=bot)
    return bot


def _initials(zh: str, en: str) -> set[str]:
    return {zh[:1], en[:1].upper()} - {""}


def bot_nickname_free(*, taken: list[tuple[str, str]]) -> tuple[str, str]:
    """A nickname of :data:`BOT_NICKNAMES` sharing no initial with ``taken`` (the names of
    the others at a table), at random; any nickname when all are taken (never at one table:
    there are more nicknames than seats)."""
    used = set().union(*(_initials(zh, en) for zh, en in taken))
    free = [pair for pair in BOT_NICKNAMES if not _initials(*pair) & used]
    return random.choice(free or list(BOT_NICKNAMES))


def bots_name(*, bots: list[User], room: Room) -> None:
    """Give the bots about to sit in ``room`` nicknames that no bot there shares, name or
    initial (so that neither their names nor their avatars are alike), nor any bot at another
    table of the room's duplicate match (whose results name every table's players side by
    side; a match seats at most 4 × 6 − 1 bots, fewer than the nicknames): a bot keeps its own
    when it is free, else gets a free one (saved). Call in the transaction that seats them."""
    where = Q(room=room) if room.match_id is None else Q(room__match_id=room.match_id)
    seated = Seat.objects.filter(where, user__is_bot=True).exclude(user__in=[b.pk for b in bots])
    taken = list(seated.values_list("user__first_name", "user__last_name"))
    for bot in bots:
        own = (bot.first_name, bot.last_name)
        used = set().union(*(_initials(zh, en) for zh, en in taken))
        if own not in BOT_NICKNAMES or _initials(*own) & used:
            bot.first_name, bot.last_name = bot_nickname_free(taken=taken)
            bot.save(update_fields=["first_name", "last_name"])
        taken.append((bot.first_name, bot.last_name))


def bot_fund(*, bot: User, room: Room) -> int:
    """Level the bot's wallet to the room's entry minimum against the house's bankroll, at
    seating time and before each Ready; returns the coins the house paid it (0 when it had
    enough). What it won above the minimum goes back to the house; what it lacks comes from
    the house, which the mint tops up only within today's bot-funding ceiling
    (`accounts.services.wallet_house_level`). Past it, BotsUnavailable is raised and nothing
    moves. The postings' keys name the bot, the room and the wallet's last entry, so a retry
    posts nothing twice; no coin reaches a bot any other way."""
    wallet = wallet_get_or_create(user=bot)
    last = Entry.objects.filter(account=wallet).order_by("-pk").values_list("pk", flat=True).first()
    try:
        moved = wallet_house_level(
            user=bot,
            target=room.entry_minimum,
            key=f"bot:user:{bot.pk}:room:{room.pk}:after-entry:{last or 0}",
            reference=f"room:{room.pk}",
            reason=BOT_FUNDING_REASON,
        )
    except MintBudgetExhausted as refused:
        raise BotsUnavailable() from refused
    return moved.funded


def bot_act(*, table_id: int, user_id: int, version: int) -> Transition | None:
    """Let the bot do what it has to do at the table, if it still has something to do.

    ``version`` is the table's version when the task was scheduled: if a round started or
    settled since, the task is stale and nothing happens; so does a duplicate (the bot has
    done it already) or a task for someone who is not a bot. Returns the transition, or None.

    An arrangement is worked out before the table is locked, from the table read without its
    lock (an expert thinks for up to a second, and nobody else's command should wait for
    that): a hand does not change during its round, so the play is submitted under the lock
    if the bot still has to arrange those very cards in that round (else it is worked out
    again there).
    """
    plan = _plan(table_id=table_id, user_id=user_id)
    return _act(table_id=table_id, user_id=user_id, version=version, plan=plan)


# A play worked out ahead: (round number, the cards it is for, the play).
Plan = tuple[int, tuple[Card, ...], Play]


def _plan(*, table_id: int, user_id: int) -> Plan | None:
    row = Table.objects.filter(pk=table_id).values_list("state", "room__bot_level").first()
    if row is None:
        return None
    state = TableState.from_dict(row[0])
    player = str(user_id)
    seat = state.seat_of(player)
    if seat is None or seat.hand is None or bot_action(state, player=player) != ARRANGE:
        return None
    return state.round_no, seat.hand, bot_play(state, player=player, level=row[1])


@transaction.atomic
def _act(*, table_id: int, user_id: int, version: int, plan: Plan | None) -> Transition | None:
    room_id = Table.objects.filter(pk=table_id).values_list("room_id", flat=True).first()
    if room_id is None:
        return None
    room = Room.objects.select_for_update().get(pk=room_id)
    table = Table.objects.select_for_update().get(pk=table_id)
    state = TableState.from_dict(table.state)
    if version > state.version:
        return None
    bot = User.objects.filter(pk=user_id, is_bot=True).first()
    if bot is None:
        return None
    if TableEvent.objects.filter(
        table=table, version__gt=version, type__in=("round_start", "settled")
    ).exists():
        return None
    player = str(user_id)
    action = bot_action(state, player=player)
    if action == READY:
        try:
            bot_fund(bot=bot, room=room)  # the settlement may have left it short, or rich
        except BotsUnavailable:
            # The house cannot fund it today: the bot stands up instead of playing unfunded.
            logger.warning("bot %s leaves room %s: the bot bankroll is used up", bot.pk, room.pk)
            return table_services.table_leave(user=bot, room=room)
        return table_services.table_ready(user=bot, room=room)
    if action == SPECIAL:
        return table_services.table_choose_special(
            user=bot,
            room=room,
            play_special=plays_special(state, player=player, level=room.bot_level),
        )
    if action == ARRANGE:
        seat = state.seat_of(player)
        assert seat is not None
        if plan is not None and plan[:2] == (state.round_no, seat.hand):
            play = plan[2]
        else:
            play = bot_play(state, player=player, level=room.bot_level)
        return table_services.table_submit(
            user=bot,
            room=room,
            front=format_cards(play.arranged.front),
            middle=format_cards(play.arranged.middle),
            back=format_cards(play.arranged.back),
            unused=format_cards(play.unused) if state.config.spare_cards else None,
        )
    return None


def bot_play(state: TableState, *, player: str, level: str = DEFAULT_LEVEL) -> Play:
    """What a bot of the room's ``level`` submits for its hand (games.rules.levels), against
    this round's opponents: ``strong`` (the default) the engine's best arrangement (what the
    table's own auto-arrange submits), ``easy`` and ``normal`` simple heuristics, ``expert`` a
    rollout over the best arrangements (about a second of thought, within its delay)."""
    seat = state.seat_of(player)
    assert seat is not None and seat.hand is not None
    opponents = max(1, len(state.round_seats) - 1)
    return level_play(seat.hand, state.config, level, opponents=opponents)


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
        for player in sorted(s.player for s in state.seats if s.bot):
            if bot_action(state, player=player) is None:
                continue
            try:
                if bot_act(table_id=table_id, user_id=int(player), version=version) is not None:
                    acted += 1
            except Exception:
                logger.exception("nudging bot %s at table %s failed", player, table_id)
    return acted

"""Play now with a short wait for people of the player's level (技术匹配).

Pressing Play now (`play_now`) seats the player at once with the people of a similar rating
(`lobby.skill.match_gap`) who pressed it within the last PLAY_NOW_WAIT_SECONDS for the same
rules, the rest of the table taken by bots of the level closest to their mean rating. With
nobody close enough, the player waits in a pool (a `PlayWait` row) until a deadline. No
request blocks for those seconds: the page asks (`play_wait_check`, polled) and a Celery task
set for the deadline asks too; the first to ask after the deadline seats the player, with
whoever waiting is close enough by then (the gap widens with the wait), else with bots. A timer
only asks: the check re-reads everything under the locks, so a late or repeated one does
nothing twice.

Locks: the player's own Play now lock first (`lobby.matchmaking`: one player's presses, checks
and cancels one at a time), then the pool's lock of the rules (an advisory lock per rule
configuration), which everything that reads or removes waiting rows of those rules holds: two
players pressing at once are seen one after the other, so the second finds the first waiting
and both end at one table. Seats are then taken as every lobby service takes them (room, then
table); a player sits at one table at most (a unique constraint), so a waiting player who sat
down elsewhere meanwhile is simply left out.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.dispatch import Signal
from django.utils import timezone

from accounts.models import User
from lobby import skill
from lobby.checks import (
    check_not_frozen,
    checked_optional_variant,
    engine_config,
    rules_of,
)
from lobby.matchmaking import (
    QUICK_PLAY_ROOM_NAME,
    QUICK_PLAY_SEATS,
    QUICK_PLAY_USER_LOCK_SPACE,
    advisory_lock,
    quick_play_spend,
    room_quick_play,
)
from lobby.models import PlayWait, Room, Seat
from lobby.selectors import seat_for_user
from lobby.services import bots_fill, room_create, room_join
from shisanshui.errors import ClientError

# The advisory lock space of the waiting pool, one lock per rule configuration (any int4).
_PLAY_POOL_LOCK_SPACE = 0x5357
# How long after its deadline a wait nobody closed may still be matched: past that its player
# has most likely left the page (and no worker closed it), and a stranger would wait on them.
STALE_AFTER_SECONDS = 2.0
# The deadline task runs this long after the deadline, so that it finds the wait due.
_TASK_MARGIN_SECONDS = 0.25

# Sent on commit when a player enters the wait, with ``user_id`` and ``countdown`` (seconds to
# just past its deadline); `lobby.tasks` schedules the deadline's task on it (connected in
# `lobby.apps.LobbyConfig.ready`), so the waiting knows nothing of Celery.
play_wait_started = Signal()


@dataclass(frozen=True)
class PlayNow:
    """Where Play now left the player: `seat` (seated, `seated_now` if just now), or `wait`
    (in the pool until its deadline), or neither: not waiting (cancelled, or `refused` at the
    deadline with the reason)."""

    seat: Seat | None = None
    seated_now: bool = False
    wait: PlayWait | None = None
    refused: ClientError | None = None

    def seconds_left(self, now: datetime | None = None) -> float:
        """Seconds until the wait's deadline (0 when not waiting or past it)."""
        if self.wait is None:
            return 0.0
        left = (self.wait.deadline - (now or timezone.now())).total_seconds()
        return max(0.0, left)


@transaction.atomic
def play_now(*, user: User, variant: str | None = None) -> PlayNow:
    """Play now: seat the player with the people waiting for the same rules whose ratings are
    close enough, best match first (up to the table's seats; bots of their level take the
    rest), or put the player in the pool until PLAY_NOW_WAIT_SECONDS from now. With
    PLAY_NOW_WAIT_SECONDS 0, and for a guest, `room_quick_play` at once (bots only).

    A player seated already is sent back to that seat; a player waiting already keeps that one
    wait (`play_wait_check`): never two rows, never two seats. Refused like `room_quick_play`:
    `transfers_frozen`, `rate_limited` ("lobby.quick_play", spent only when the player enters
    the pool or sits down), `insufficient_coins`, `no_variant_rules`; and like `room_create`
    when the table is opened (`too_many_rooms`, "lobby.room_create").
    """
    variant = checked_optional_variant(variant)
    if settings.PLAY_NOW_WAIT_SECONDS <= 0 or user.is_guest:
        # A guest never waits for people: its coins only meet bots' (docs/security.md).
        played = room_quick_play(user=user, variant=variant)
        return PlayNow(seat=played.seat, seated_now=played.seated_now)
    advisory_lock(QUICK_PLAY_USER_LOCK_SPACE, user.pk)
    seated = seat_for_user(user=user)
    if seated is not None:
        return PlayNow(seat=seated)
    if PlayWait.objects.filter(user=user).exists():
        return _check_locked(user=user)
    check_not_frozen(user=user)
    rules = rules_of(variant)
    engine_config(rules)  # usable rules, before the rate is spent
    base_score = quick_play_spend(user=user, rules=rules)
    family = skill.skill_family(rules)
    rating, deviation = skill.skill_of(user.pk, family)
    now = timezone.now()
    wait = PlayWait(
        user=user,
        rules=rules,
        base_score=base_score,
        family=family,
        rating=rating,
        deviation=deviation,
        created_at=now,
        deadline=now + timedelta(seconds=settings.PLAY_NOW_WAIT_SECONDS),
    )
    advisory_lock(_PLAY_POOL_LOCK_SPACE, rules.pk)
    partners = _partners(wait=wait, now=now)
    if partners:
        return PlayNow(seat=_seat_together(wait=wait, partners=partners), seated_now=True)
    wait.save()
    transaction.on_commit(lambda: _schedule_close(user_id=user.pk), robust=True)
    return PlayNow(wait=wait)


@transaction.atomic
def play_wait_check(*, user: User) -> PlayNow:
    """Where the player's Play now stands (polled by the page, and asked by the deadline's
    task): seated, still waiting, or not waiting. At or past the deadline the wait ends here,
    under the locks: the player sits with whoever waiting is close enough now, else with bots;
    a refusal then (say the player's coins went below the entry minimum) ends the wait with
    that reason. Asking again, or late, changes nothing more."""
    advisory_lock(QUICK_PLAY_USER_LOCK_SPACE, user.pk)
    return _check_locked(user=user)


@transaction.atomic
def play_wait_cancel(*, user: User) -> PlayNow:
    """Leave the pool; returns where the player is then (seated, if people sat the player down
    just before: too late to cancel; else not waiting). Cancelling with no wait changes
    nothing."""
    advisory_lock(QUICK_PLAY_USER_LOCK_SPACE, user.pk)
    wait = PlayWait.objects.filter(user=user).first()
    if wait is not None:
        advisory_lock(_PLAY_POOL_LOCK_SPACE, wait.rules_id)
        PlayWait.objects.filter(user=user).delete()
    return PlayNow(seat=seat_for_user(user=user))


def _check_locked(*, user: User) -> PlayNow:
    """`play_wait_check` under the player's lock."""
    now = timezone.now()
    wait = PlayWait.objects.filter(user=user).first()
    if wait is not None and wait.deadline > now:
        seated = seat_for_user(user=user)
        return PlayNow(seat=seated) if seated is not None else PlayNow(wait=wait)
    if wait is not None:
        advisory_lock(_PLAY_POOL_LOCK_SPACE, wait.rules_id)
        wait = PlayWait.objects.filter(pk=wait.pk).select_related("user", "rules").first()
    seated = seat_for_user(user=user)  # read under the pool's lock: a match committed is seen
    if seated is not None or wait is None:
        if wait is not None:
            wait.delete()  # it sat down elsewhere meanwhile
        return PlayNow(seat=seated)
    stale = wait.deadline < now - timedelta(seconds=STALE_AFTER_SECONDS)
    partners = [] if stale else _partners(wait=wait, now=now)  # a stale wait's player may be gone
    try:
        with transaction.atomic():
            seat = _seat_together(wait=wait, partners=partners)
    except ClientError as error:
        PlayWait.objects.filter(pk=wait.pk).delete()
        return PlayNow(refused=error)
    return PlayNow(seat=seat, seated_now=True)


def _partners(*, wait: PlayWait, now: datetime) -> list[PlayWait]:
    """The people waiting who sit down with the player of `wait` (the caller holds the pool's
    lock of its rules): for the same rules, not seated anywhere, not stale; best match first
    (smallest rating gap, then longest waiting), each within the gap allowed with everyone
    chosen before; as many as fill the table's other seats."""
    others = (
        PlayWait.objects.filter(
            rules_id=wait.rules_id,
            deadline__gte=now - timedelta(seconds=STALE_AFTER_SECONDS),
        )
        .exclude(user_id=wait.user_id)
        .exclude(user_id__in=Seat.objects.values("user_id"))
        .select_related("user")
    )
    candidates = sorted(others, key=lambda o: (abs(o.rating - wait.rating), o.created_at, o.pk))
    chosen: list[PlayWait] = []
    room = _table_seats(wait) - 1
    for other in candidates:
        if len(chosen) >= room:
            break
        if all(_close(one, other, now=now) for one in (wait, *chosen)):
            chosen.append(other)
    return chosen


def _close(one: PlayWait, other: PlayWait, *, now: datetime) -> bool:
    """Whether the ratings of the two are close enough to seat them together now."""
    waited = max((now - one.created_at).total_seconds(), (now - other.created_at).total_seconds())
    gap = skill.match_gap(deviations=(one.deviation, other.deviation), waited=waited)
    return abs(one.rating - other.rating) <= gap


def _table_seats(wait: PlayWait) -> int:
    return min(QUICK_PLAY_SEATS, engine_config(wait.rules).max_seats)


def _seat_together(*, wait: PlayWait, partners: list[PlayWait]) -> Seat:
    """Open Play now's room for the player of `wait` (its owner) at the highest base score all
    of them could afford, seat the partners there, and bots of the level closest to the mean
    rating of the people who sat down in the other seats. Their waits end. A partner who can no
    longer sit (seated elsewhere, frozen, short of coins) is left out, and that wait ends too."""
    seats = _table_seats(wait)
    room = room_create(
        owner=wait.user,
        name=QUICK_PLAY_ROOM_NAME,
        base_score=min([wait.base_score, *(p.base_score for p in partners)]),
        seats=seats,
        rules=wait.rules,
        bot_level=skill.bot_level_for([wait.rating, *(p.rating for p in partners)]),
    )
    PlayWait.objects.filter(pk__in=[w.pk for w in (wait, *partners) if w.pk is not None]).delete()
    ratings = [wait.rating]
    for partner in partners:
        try:
            with transaction.atomic():
                room_join(user=partner.user, room_id=room.pk)
        except ClientError:
            continue
        ratings.append(partner.rating)
    level = skill.bot_level_for(ratings)
    if level != room.bot_level:  # a partner could not sit after all
        room.bot_level = level
        Room.objects.filter(pk=room.pk).update(bot_level=level)
    bots_fill(room=room, count=seats - len(ratings))
    return Seat.objects.select_related("room").get(room=room, user=wait.user)


def _schedule_close(*, user_id: int) -> None:
    """Ask again just after the deadline, for a page that stopped asking: `play_wait_started`
    (its receiver, `lobby.tasks.play_wait_close_schedule`, queues `play_wait_close`)."""
    play_wait_started.send(
        sender=PlayWait,
        user_id=user_id,
        countdown=settings.PLAY_NOW_WAIT_SECONDS + _TASK_MARGIN_SECONDS,
    )

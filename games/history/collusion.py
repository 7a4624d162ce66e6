"""The collusion report: pairs of players one of whom loses to the other on purpose.

Chip dumping — one account losing to a friend on purpose to funnel coins (often the sign-up
grants of throw-away accounts) — leaves two traces. The play: the dumper arranges its hand far
worse than even a weak honest player would (:mod:`games.rules.dumping` signs each arrangement
against every split of the same cards), and the water it gives away goes to its friend. The
coins: what it loses flows to the same account.

The scan (:func:`collusion_scan`, hourly from Celery beat: games.history.tasks, and on demand
from the admin's "Scan now") reads the settled rounds of the last `collusion_days` days:

1. It judges the play of each newly settled round once (:func:`play_quality_fill`): every
   person's arrangement gets a `RoundPlayer.quality` (`PlayQuality.to_json`), the round
   `play_checked`. Bots are never anybody's accomplice, so their seats get none, but they are
   part of the round the others are judged in; a round of fewer than two people needs none.
2. For each ordered pair of people (loser L, winner W) who shared rounds, in settled order,
   each round is a `PairRound`: L's sign, the water L's choice gave W, the net coins L -> W
   (:func:`round_payments`). :func:`games.rules.dumping.pair_verdict` weighs them, against a
   threshold lowered when L's account is new (joined less than :data:`NEW_ACCOUNT_DAYS` before
   the pair's first evidence round) or the two signed up from one address.
3. A flagged pair, or one over the economy settings' volume thresholds (:func:`pair_flows`,
   :func:`suspicious_pairs`: the rule before the play was read, kept so that nothing it flags
   goes unflagged), gets an `accounts.models.CollusionFlag` with its evidence (the rounds, the
   water given away in each, the coins) and its reasons. Connected groups of open flags
   (:func:`games.rules.dumping.rings`) are stored as the flags' `ring`, so a ring feeding
   one account through several others — at bots' tables too — is read as one.

Series and duplicate matches are ordinary rounds here: every settled round two people played
counts as a shared round, whatever the table.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from accounts.collusion import collusion_flag_write
from accounts.economy import economy_settings
from accounts.models import CollusionFlag, CollusionReason, CollusionStatus, EconomySettings, User
from games.history.audit import round_seats
from games.models import Round, RoundPlayer
from games.rules.config import RuleConfig
from games.rules.dumping import (
    PairRound,
    PairVerdict,
    Sign,
    pair_verdict,
    play_quality,
    rings,
    threshold_for,
)
from games.rules.errors import RulesError

logger = logging.getLogger(__name__)

NEW_ACCOUNT_DAYS = 7  # an account younger than this at the pair's first evidence round is new
CHUNK = 200  # rounds judged per transaction
COIN_FLOW_SHARE = 50  # percent of the loser's losses in the shared rounds gone to the winner


@dataclass(frozen=True)
class PairFlow:
    """What one pair's shared rounds moved, seen from the side that lost (`loser`).

    - `flow` (loser -> winner) = coins loser paid winner - coins winner paid loser, net;
    - `losses` = every coin the loser paid to anyone in those shared rounds;
    - `share` = flow / losses.
    """

    loser_id: int
    winner_id: int
    shared_rounds: int
    flow: int
    losses: int
    first_round_at: datetime
    last_round_at: datetime

    @property
    def share_percent(self) -> Decimal:
        if self.losses <= 0:
            return Decimal(0)
        return (Decimal(100) * self.flow / self.losses).quantize(
            Decimal("0.1"), rounding=ROUND_HALF_UP
        )


def round_payments(result: Mapping[str, Any]) -> dict[tuple[int, int], int]:
    """{(payer, payee): coins} of one settled round's stored result, by user id.

    The stored result is `Round.result` (`games.rules.api.result_json`): its `transfers` are
    the actual payments between two players after the cannot-cover clearing (`settlement`),
    plus what an escaper paid to cover another loser (`cover`). Escape penalties go to the
    house and belong to no pair. A result without transfers is attributed instead: each
    loser's loss (negative `delta`, its penalty excluded) is split among that round's winners
    in proportion to their gains, the remainder of the integer split to the largest winner, so
    the attributed coins add up to the loss exactly.
    """
    payments: dict[tuple[int, int], int] = defaultdict(int)
    if "transfers" in result:
        for t in result["transfers"]:
            if t["coins"] > 0 and t["from"] != t["to"]:
                payments[(int(t["from"]), int(t["to"]))] += int(t["coins"])
        return dict(payments)
    players = result.get("players", [])
    # A player's delta includes the penalty they paid to the house; the penalty is no payment
    # to another player.
    net = {int(p["id"]): int(p["delta"]) + int(p.get("penalty", 0)) for p in players}
    winners = sorted(
        ((uid, gain) for uid, gain in net.items() if gain > 0), key=lambda w: (-w[1], w[0])
    )
    gains = sum(gain for _uid, gain in winners)
    if not gains:
        return {}
    for loser, delta in net.items():
        if delta >= 0:
            continue
        loss = -delta
        given = 0
        for uid, gain in winners[1:]:
            part = loss * gain // gains
            if part:
                payments[(loser, uid)] += part
            given += part
        payments[(loser, winners[0][0])] += loss - given
    return dict(payments)


@dataclass
class PairTotal:
    """An ordered pair's shared rounds (a, b): how many, the net coins a -> b (negative when
    they went the other way), everything a paid anyone in them, the first and last."""

    shared: int
    flow: int
    losses: int
    first: datetime
    last: datetime


def _pair_totals(
    rounds: Iterable[tuple[datetime, Mapping[str, Any], Iterable[int]]],
) -> dict[tuple[int, int], PairTotal]:
    totals: dict[tuple[int, int], PairTotal] = {}
    for settled_at, result, player_ids in rounds:
        players = sorted(set(player_ids))
        payments = round_payments(result)
        paid_out: dict[int, int] = defaultdict(int)
        for (payer, _payee), amount in payments.items():
            paid_out[payer] += amount
        for a in players:
            for b in players:
                if a == b:
                    continue
                net = payments.get((a, b), 0) - payments.get((b, a), 0)
                total = totals.get((a, b))
                if total is None:
                    totals[(a, b)] = PairTotal(1, net, paid_out[a], settled_at, settled_at)
                    continue
                total.shared += 1
                total.flow += net
                total.losses += paid_out[a]
                total.first = min(total.first, settled_at)
                total.last = max(total.last, settled_at)
    return totals


def pair_flows(
    rounds: Iterable[tuple[datetime, Mapping[str, Any], Iterable[int]]],
) -> list[PairFlow]:
    """Each pair's flow over `rounds` ((settled_at, result, player ids) of settled rounds),
    one PairFlow per pair whose net flow is positive, from the losing side. Only the given
    players form pairs (no bot is anybody's accomplice: :func:`settled_rounds` leaves them
    out), but what a player paid to anyone, bots included, counts among their losses."""
    return [
        PairFlow(
            loser_id=loser,
            winner_id=winner,
            shared_rounds=t.shared,
            flow=t.flow,
            losses=t.losses,
            first_round_at=t.first,
            last_round_at=t.last,
        )
        for (loser, winner), t in _pair_totals(rounds).items()
        if t.flow > 0
    ]


def play_quality_fill(*, since: datetime, chunk: int = CHUNK) -> int:
    """Judge the play of the rounds settled since ``since`` that the scan has not read yet
    (`Round.play_checked`), ``chunk`` rounds per transaction; the number of rounds read.

    Every person of a round with at least two people gets `RoundPlayer.quality`; a round whose
    stored hands the engine cannot read (none should be) is logged and marked read without.
    Incremental: a round is read once, so each hour only the rounds settled since are."""
    bots = set(User.objects.filter(is_bot=True).values_list("pk", flat=True))
    done = 0
    while True:
        with transaction.atomic():
            batch = list(
                Round.objects.select_for_update(skip_locked=True)
                .filter(settled_at__gte=since, play_checked=False, result__isnull=False)
                .order_by("settled_at", "pk")
                .only("pk", "config")[:chunk]
            )
            if not batch:
                return done
            rows: dict[int, list[RoundPlayer]] = defaultdict(list)
            for row in RoundPlayer.objects.filter(round__in=batch).order_by("round_id", "position"):
                rows[row.round_id].append(row)
            judged: list[RoundPlayer] = []
            for round_ in batch:
                judged += _judged(round_, rows[round_.pk], bots)
            RoundPlayer.objects.bulk_update(judged, ["quality"])
            Round.objects.filter(pk__in=[r.pk for r in batch]).update(play_checked=True)
            done += len(batch)


def _judged(round_: Round, rows: list[RoundPlayer], bots: set[int]) -> list[RoundPlayer]:
    people = [r for r in rows if r.user_id not in bots]
    if len(people) < 2:
        return []
    try:
        config = RuleConfig.from_dict(round_.config)
        seats = round_seats(rows, config)
        for row in people:
            row.quality = play_quality(seats, str(row.user_id), config).to_json()
    except (RulesError, ValueError, KeyError, TypeError):
        logger.exception("collusion: round %s cannot be judged", round_.pk)
        return []
    return people


@dataclass(frozen=True)
class SharedRound:
    """A settled round of at least two people, as the scan reads it: its people (user ids)
    and their judged play (`RoundPlayer.quality`, by user id; missing when not judged)."""

    round_id: int
    settled_at: datetime
    room: str
    result: Mapping[str, Any]
    people: list[int]
    quality: dict[int, Mapping[str, Any]]


def settled_rounds(*, since: datetime) -> Iterator[SharedRound]:
    """The rounds of at least two people settled since ``since``, in settled order."""
    bots = set(User.objects.filter(is_bot=True).values_list("pk", flat=True))
    rounds = (
        Round.objects.filter(settled_at__gte=since, result__isnull=False)
        .order_by("settled_at", "pk")
        .values_list("pk", "settled_at", "result", "table__room__name")
    )
    chunk: list[tuple[int, datetime, Mapping[str, Any], str]] = []

    def flush() -> Iterator[SharedRound]:
        people: dict[int, list[int]] = defaultdict(list)
        quality: dict[int, dict[int, Mapping[str, Any]]] = defaultdict(dict)
        for round_id, user_id, judged in RoundPlayer.objects.filter(
            round_id__in=[pk for pk, *_rest in chunk]
        ).values_list("round_id", "user_id", "quality"):
            if user_id not in bots:
                people[round_id].append(user_id)
                if judged is not None:
                    quality[round_id][user_id] = judged
        for pk, settled_at, result, room in chunk:
            if len(people[pk]) >= 2:
                yield SharedRound(pk, settled_at, room, result, people[pk], quality[pk])

    for row in rounds.iterator(chunk_size=500):
        chunk.append(row)
        if len(chunk) == 500:
            yield from flush()
            chunk = []
    if chunk:
        yield from flush()


@dataclass
class PairPlay:
    """What one ordered pair's shared rounds say: the PairRounds in settled order and each
    evidence row a reviewer reads (by round id)."""

    rounds: list[PairRound] = field(default_factory=list)
    rows: dict[int, dict[str, Any]] = field(default_factory=dict)


def pair_plays(rounds: Iterable[SharedRound]) -> dict[tuple[int, int], PairPlay]:
    """{(loser, winner): PairPlay} for every ordered pair of people who shared a round."""
    plays: dict[tuple[int, int], PairPlay] = defaultdict(PairPlay)
    for shared in rounds:
        payments = round_payments(shared.result)
        for loser in shared.people:
            judged = shared.quality.get(loser) or {}
            given_to = judged.get("given") or {}
            for winner in shared.people:
                if winner == loser:
                    continue
                given = int(given_to.get(str(winner), 0))
                coins = payments.get((loser, winner), 0) - payments.get((winner, loser), 0)
                sign = Sign(judged.get("sign", Sign.NONE))
                play = plays[(loser, winner)]
                play.rounds.append(PairRound(shared.round_id, sign, given, coins))
                play.rows[shared.round_id] = {
                    "round": shared.round_id,
                    "settled_at": shared.settled_at.isoformat(),
                    "room": shared.room,
                    "sign": sign.value,
                    "better_share": judged.get("better_share", 0.0),
                    "regret": judged.get("regret", 0.0),
                    "given": given,
                    "coins": coins,
                }
    return dict(plays)


@dataclass(frozen=True)
class PairJudgement:
    verdict: PairVerdict
    new_account: bool
    shared_address: bool


def pair_judge(
    play: PairPlay, *, joined: datetime, shared_address: bool, settled: Mapping[int, datetime]
) -> PairJudgement:
    """The pair's verdict, held to its threshold: lowered for a shared sign-up address, and
    for a loser's account younger than NEW_ACCOUNT_DAYS at the first round of the evidence
    (the evidence found at the lower threshold decides whether the account was new then)."""
    verdict = pair_verdict(
        play.rounds, threshold=threshold_for(new_account=True, shared_address=shared_address)
    )
    new = bool(verdict.evidence) and joined > settled[verdict.evidence[0].round_id] - timedelta(
        days=NEW_ACCOUNT_DAYS
    )
    if not new:
        verdict = pair_verdict(play.rounds, threshold=threshold_for(shared_address=shared_address))
    return PairJudgement(verdict, new, shared_address)


def suspicious_pairs(flows: Iterable[PairFlow], *, economy: EconomySettings) -> list[PairFlow]:
    """The flows over the economy settings' thresholds, largest flow first: shared rounds >=
    `collusion_min_rounds`, share >= `collusion_min_share_percent` and flow >=
    `collusion_min_flow`. At an honest two-seat table the payments go both ways and the net
    share stays small; at an honest table of four a player's losses are spread over three
    others."""
    found = [
        f
        for f in flows
        if f.shared_rounds >= economy.collusion_min_rounds
        and f.flow >= economy.collusion_min_flow
        and f.losses > 0
        and f.flow * 100 >= economy.collusion_min_share_percent * f.losses
    ]
    return sorted(found, key=lambda f: (-f.flow, f.loser_id, f.winner_id))


@dataclass(frozen=True)
class ScanResult:
    pairs_examined: int
    flagged: int
    created: int
    judged: int = 0


def collusion_scan(*, now: datetime | None = None) -> ScanResult:
    """Judge the newly settled rounds' play, then examine every pair of the last
    `collusion_days` days; create or update a CollusionFlag for each pair flagged by its play
    or by the volume thresholds (`accounts.collusion.collusion_flag_write`; status and note
    untouched), then name the rings of open flags. Safe to run twice or concurrently: a round
    is judged under its row lock, a flag is one row per (loser, winner) under its unique
    constraint."""
    now = now or timezone.now()
    economy = economy_settings()
    since = now - timedelta(days=economy.collusion_days)
    judged = play_quality_fill(since=since)
    shared = list(settled_rounds(since=since))
    flows = pair_flows((r.settled_at, r.result, r.people) for r in shared)
    by_volume = {(f.loser_id, f.winner_id) for f in suspicious_pairs(flows, economy=economy)}
    plays = pair_plays(shared)
    totals = _pair_totals((r.settled_at, r.result, r.people) for r in shared)
    settled = {r.round_id: r.settled_at for r in shared}
    people = {u for r in shared for u in r.people}
    accounts = {
        pk: (joined, address)
        for pk, joined, address in User.objects.filter(pk__in=people).values_list(
            "pk", "date_joined", "signup_address"
        )
    }
    found = created = 0
    for (loser, winner), play in sorted(plays.items()):
        joined, address = accounts[loser]
        judgement = pair_judge(
            play,
            joined=joined,
            shared_address=bool(address) and address == accounts[winner][1],
            settled=settled,
        )
        verdict = judgement.verdict
        volume = (loser, winner) in by_volume
        if not (verdict.flagged or volume):
            continue
        total = totals[(loser, winner)]
        share = PairFlow(
            loser, winner, total.shared, total.flow, total.losses, total.first, total.last
        )
        reasons = []
        if verdict.flagged:
            reasons.append(CollusionReason.DELIBERATE_PLAY)
            if judgement.new_account:
                reasons.append(CollusionReason.NEW_ACCOUNT)
            if judgement.shared_address:
                reasons.append(CollusionReason.SHARED_ADDRESS)
        if total.flow > 0 and total.flow * 100 >= COIN_FLOW_SHARE * total.losses:
            reasons.append(CollusionReason.COIN_FLOW)
        if volume:
            reasons.append(CollusionReason.VOLUME)
        found += 1
        created += int(
            collusion_flag_write(
                loser_id=loser,
                winner_id=winner,
                shared_rounds=total.shared,
                flow=total.flow,
                losses=total.losses,
                share_percent=share.share_percent,
                first_round_at=total.first,
                last_round_at=total.last,
                now=now,
                score=verdict.score,
                threshold=verdict.threshold,
                water_given=verdict.water_given,
                evidence=[play.rows[r.round_id] for r in verdict.evidence],
                reasons=[str(r) for r in reasons],
            )
        )
    rings_name()
    if found:
        logger.warning("accounts: collusion scan flagged %s pair(s), %s new", found, created)
    return ScanResult(pairs_examined=len(flows), flagged=found, created=created, judged=judged)


def rings_name() -> int:
    """Name each open flag's ring (the smallest user id of its connected group of open
    flags: `games.rules.dumping.rings`); a flag no longer open has none. The number of rings
    of more than one pair."""
    open_flags = list(
        CollusionFlag.objects.filter(status=CollusionStatus.OPEN).values_list(
            "pk", "loser_id", "winner_id", "ring"
        )
    )
    groups = rings((loser, winner) for _pk, loser, winner, _ring in open_flags)
    name = {user: min(group) for group in groups for user in group}
    for pk, loser, _winner, ring in open_flags:
        if ring != name[loser]:
            CollusionFlag.objects.filter(pk=pk).update(ring=name[loser])
    CollusionFlag.objects.exclude(status=CollusionStatus.OPEN).exclude(ring=None).update(ring=None)
    sizes: dict[int, int] = defaultdict(int)
    for _pk, loser, _winner, _ring in open_flags:
        sizes[name[loser]] += 1
    return sum(1 for n in sizes.values() if n > 1)


def collusion_scan_flagged() -> int:
    """The scan now (the admin's "Scan now" without a worker): the pairs flagged."""
    return collusion_scan().flagged

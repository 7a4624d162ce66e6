"""The collusion report: pairs of players whose shared rounds move coins one way.

Chip dumping — one account losing to a friend on purpose, round after round, to funnel coins
(often the sign-up grants of throw-away accounts) — leaves a trace no honest table does: two
players who keep meeting, and nearly everything one of them loses goes to the other.

Over the settled rounds of the last `collusion_days` days (economy settings) in which both
played, each pair's net flow of coins (:func:`round_payments`, :func:`pair_flows`) is set
against everything the losing side lost in those rounds (:class:`PairFlow`); a pair over the
economy settings' thresholds is flagged (:func:`suspicious_pairs`). :func:`collusion_scan`
runs hourly (games.history.tasks, Celery beat) and records one
`accounts.models.CollusionFlag` per pair, which support reviews in the admin.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from django.utils import timezone

from accounts.collusion import collusion_flag_write
from accounts.economy import economy_settings
from accounts.models import EconomySettings, User
from games.models import Round, RoundPlayer

logger = logging.getLogger(__name__)


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


def pair_flows(
    rounds: Iterable[tuple[datetime, Mapping[str, Any], Iterable[int]]],
) -> list[PairFlow]:
    """Each pair's flow over `rounds` ((settled_at, result, player ids) of settled rounds),
    one PairFlow per pair whose net flow is positive, from the losing side. Only the given
    players form pairs (no bot is anybody's accomplice: :func:`settled_rounds` leaves them
    out), but what a player paid to anyone, bots included, counts among their losses."""
    shared: dict[tuple[int, int], int] = defaultdict(int)
    first: dict[tuple[int, int], datetime] = {}
    last: dict[tuple[int, int], datetime] = {}
    paid: dict[tuple[int, int], int] = defaultdict(int)  # (payer, payee) -> coins
    # (player, other) -> coins `player` paid to anyone in the rounds shared with `other`
    losses: dict[tuple[int, int], int] = defaultdict(int)
    for settled_at, result, player_ids in rounds:
        players = sorted(set(player_ids))
        payments = round_payments(result)
        paid_out: dict[int, int] = defaultdict(int)
        for (payer, payee), amount in payments.items():
            paid[(payer, payee)] += amount
            paid_out[payer] += amount
        for i, a in enumerate(players):
            for b in players[i + 1 :]:
                pair = (a, b)
                shared[pair] += 1
                first[pair] = min(first.get(pair, settled_at), settled_at)
                last[pair] = max(last.get(pair, settled_at), settled_at)
                losses[(a, b)] += paid_out[a]
                losses[(b, a)] += paid_out[b]
    flows = []
    for (a, b), count in shared.items():
        net = paid[(a, b)] - paid[(b, a)]
        if net == 0:
            continue
        loser, winner = (a, b) if net > 0 else (b, a)
        flows.append(
            PairFlow(
                loser_id=loser,
                winner_id=winner,
                shared_rounds=count,
                flow=abs(net),
                losses=losses[(loser, winner)],
                first_round_at=first[(a, b)],
                last_round_at=last[(a, b)],
            )
        )
    return flows


def settled_rounds(*, since: datetime) -> Iterator[tuple[datetime, Mapping[str, Any], list[int]]]:
    """(settled_at, result, user ids of its human players) of the rounds settled since."""
    bots = set(User.objects.filter(is_bot=True).values_list("pk", flat=True))
    rounds = (
        Round.objects.filter(settled_at__gte=since, result__isnull=False)
        .order_by("pk")
        .values_list("pk", "settled_at", "result")
    )
    chunk: list[tuple[int, datetime, Mapping[str, Any]]] = []

    def flush() -> Iterator[tuple[datetime, Mapping[str, Any], list[int]]]:
        players: dict[int, list[int]] = defaultdict(list)
        for round_id, user_id in RoundPlayer.objects.filter(
            round_id__in=[pk for pk, _at, _result in chunk]
        ).values_list("round_id", "user_id"):
            if user_id not in bots:
                players[round_id].append(user_id)
        for pk, settled_at, result in chunk:
            humans = players[pk]
            if len(humans) >= 2:
                yield settled_at, result, humans

    for row in rounds.iterator(chunk_size=500):
        chunk.append(row)
        if len(chunk) == 500:
            yield from flush()
            chunk = []
    if chunk:
        yield from flush()


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


def collusion_scan(*, now: datetime | None = None) -> ScanResult:
    """Examine the rounds of the last `collusion_days` days; create or update a CollusionFlag
    for each suspicious pair (`accounts.collusion.collusion_flag_write`; status and note
    untouched). Safe to run twice or concurrently: a flag is one row per (loser, winner),
    written under its unique constraint."""
    now = now or timezone.now()
    economy = economy_settings()
    since = now - timedelta(days=economy.collusion_days)
    flows = pair_flows(settled_rounds(since=since))
    found = suspicious_pairs(flows, economy=economy)
    created = 0
    for pair in found:
        created += int(
            collusion_flag_write(
                loser_id=pair.loser_id,
                winner_id=pair.winner_id,
                shared_rounds=pair.shared_rounds,
                flow=pair.flow,
                losses=pair.losses,
                share_percent=pair.share_percent,
                first_round_at=pair.first_round_at,
                last_round_at=pair.last_round_at,
                now=now,
            )
        )
    if found:
        logger.warning("accounts: collusion scan flagged %s pair(s), %s new", len(found), created)
    return ScanResult(pairs_examined=len(flows), flagged=len(found), created=created)

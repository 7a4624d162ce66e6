"""Deliberate losses: how far one arrangement gives water away, and whether a pair's shared
rounds show one player losing to the other on purpose (chip dumping).

An honest player loses water by arranging badly; how badly depends on skill, and the weakest
honest play is a random foul-free arrangement. A dumper's losses look different in one of two
ways, both measured against every foul-free split of the same 13 cards (:func:`rank_of`, the
model of :mod:`games.rules.expected_water` for the round's number of opponents and deck: copies,
five of a kind and jokers are valued as the variant rules play them, RULES.md §12; with spare
cards the 13 played, :func:`play_quality`):

- **worst**: the arrangement is among the worst 1 % of the splits, or no split ranks lower
  and at most 3 % tie with it (splits the model values alike are ranked by their rows'
  strength, :func:`games.rules.arrange.split_order`). A random player does that about one
  round in a hundred; an honest player who tries, almost never;
- **careful loss**: it gives away at least :data:`CAREFUL_REGRET_PER_OPPONENT` water per
  opponent against the best, yet it is the best split of its hand types (front, middle, back
  category). Careful arranging of a losing shape is the mark of choosing the shape to lose:
  a weak player who picks a poor shape also arranges it poorly, a good one picks a good shape;
- **weak**: among the worst 10 % (not the above): what a random player does one round in ten.

Each round a player takes part in gets one :class:`Sign` (:func:`play_quality`, which also
says how much water each opponent gained from the choice: the pair's water with the played
arrangement minus with the best, the other hands unchanged). For a pair (loser, winner) the
signs of the loser's shared rounds are weighed by a likelihood-ratio test (:func:`pair_verdict`):
the rounds are taken as a mixture of honest play, at the rates of the weakest honest play
(:data:`HONEST_RATE`), and dumping (:data:`DUMPER_RATE`) in an unknown share, and the statistic
is how much better the best-fitting share explains them than no dumping at all — so a player who
dumps one round in five among honest ones is found too, later. A round in which the winner
gained nothing from the loser's choice is left out; the pair is flagged when the statistic
reaches the threshold (:func:`threshold_for`, lower for a new account or a shared sign-up
address) and coins went, net, to the winner. There is no minimum number of rounds: a player who
plays the worst arrangement three times running against the same account is flagged after the
third.

Pure and deterministic. ``python -m benchmarks.collusion_detection`` measures recall per kind
of dumper and the false flags among simulated honest players of every level.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum

from .arrange import rank_of
from .config import RuleConfig
from .errors import RulesError
from .scoring import Arranged, RoundResult, Seat, score_round


class Sign(StrEnum):
    """What one arrangement says about its player's intent (module docstring)."""

    WORST = "worst"
    CAREFUL_LOSS = "careful_loss"
    WEAK = "weak"
    NONE = "none"


WORST_SHARE = 0.99  # at least this share of the splits is worth more: among the worst 1 %
# The lowest split is the worst when at most this share of the splits ties with it (moving a
# card for another of its rank between rows that are no flush ties); a larger tie, which a
# random split lands in as often, says nothing of intent.
WORST_TIE_SHARE = 0.03
WEAK_SHARE = 0.90
CAREFUL_REGRET_PER_OPPONENT = 2.5  # expected water given away, per opponent
SHAPE_TOLERANCE = 0.05  # within this much of the best split of its category triple

# How often each sign comes, at most, from the weakest honest play (a random foul-free split;
# honest players of every bot level show the signs of dumping less often:
# benchmarks.collusion_detection prints the measured rates), and how often from a dumper.
HONEST_RATE = {Sign.WORST: 0.011, Sign.CAREFUL_LOSS: 0.06, Sign.WEAK: 0.10, Sign.NONE: 0.829}
DUMPER_RATE = {Sign.WORST: 0.50, Sign.CAREFUL_LOSS: 0.40, Sign.WEAK: 0.05, Sign.NONE: 0.05}

THRESHOLD = 7.0  # the evidence at which a pair is flagged
NEW_ACCOUNT_WEIGHT = 0.5  # the loser's account is new: less evidence needed
SHARED_ADDRESS_WEIGHT = 1.0  # the two signed up from the same address


@dataclass(frozen=True, slots=True)
class PlayQuality:
    """One player's arrangement in one round, against every split of the same cards.

    ``given``: the water each opponent (by seat id) gained because the player did not play
    the best arrangement (the pair's water with the best minus with the played, the other
    hands unchanged; 0 when the best would have done no better against that opponent)."""

    sign: Sign
    better_share: float
    regret: float  # expected water given away against the best (the model, all opponents)
    shape_regret: float  # ... against the best split of the same hand types
    given: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, object]:
        return {
            "sign": self.sign.value,
            "better_share": round(self.better_share, 4),
            "regret": round(self.regret, 2),
            "shape_regret": round(self.shape_regret, 2),
            "given": dict(self.given),
        }


NOT_ARRANGED = PlayQuality(Sign.NONE, 0.0, 0.0, 0.0)


def sign_of(
    *,
    better_share: float,
    regret: float,
    shape_regret: float,
    opponents: int,
    row_water: int = 1,
    lowest_tied: float | None = None,
) -> Sign:
    """The sign of an arrangement from where it ranks (module docstring). ``lowest_tied``: no
    split of the cards ranks lower, and this share of them ties with it (None: some split
    ranks lower); the lowest is the worst while that share is small
    (:data:`WORST_TIE_SHARE`), even when more than 1 % of the splits share it. The regret that
    makes a careful loss grows with the row water (RULES.md §7.1), as every row's stake does."""
    if better_share >= WORST_SHARE or (lowest_tied is not None and lowest_tied <= WORST_TIE_SHARE):
        return Sign.WORST
    careful = CAREFUL_REGRET_PER_OPPONENT * opponents * row_water
    if regret >= careful and shape_regret <= SHAPE_TOLERANCE * row_water:
        return Sign.CAREFUL_LOSS
    if better_share >= WEAK_SHARE:
        return Sign.WEAK
    return Sign.NONE


def play_quality(seats: Sequence[Seat], player: str, config: RuleConfig) -> PlayQuality:
    """The quality of ``player``'s arrangement in a round played by ``seats`` (as scored).

    A declared special, or a seat that escaped, says nothing of intent (:data:`NOT_ARRANGED`).
    The arrangement is ranked among the splits of its own 13 cards, on every deck, with the
    deck's row evaluation (:func:`rank_of`), and the water it gave away is measured against
    the best of those splits. With spare cards (RULES.md §12.4) the 13 played are judged and
    which 3 were set aside is not: simple honest rules for the choice (the easy and normal
    bots keep the 13 highest cards) fall as far short of the engine's best 13 of 16 as a
    deliberate choice does, so counting it would sign honest players (measured: a careful
    loss in half the normal bot's rounds, against a sixth when the 13 are judged alone)."""
    seats = tuple(seats)
    index = next((i for i, s in enumerate(seats) if s.id == player), None)
    if index is None:
        raise RulesError(f"player {player} did not play this round")
    seat = seats[index]
    opponents = len(seats) - 1
    if opponents < 1:
        raise RulesError("a round has at least two players")
    if not isinstance(seat.hand, Arranged) or seat.escaped:
        return NOT_ARRANGED
    rank = rank_of(seat.hand, config, opponents=opponents)
    regret = max(0.0, rank.best - rank.value)
    shape_regret = max(0.0, rank.shape_best - rank.value)
    sign = sign_of(
        better_share=rank.better_share,
        regret=regret,
        shape_regret=shape_regret,
        opponents=opponents,
        row_water=config.row_water,
        lowest_tied=1.0 - rank.better_share if rank.lowest else None,
    )
    given: dict[str, int] = {}
    if sign is not Sign.NONE:
        free = [replace(s, balance=None, escaped=False) for s in seats]
        played = _pair_water(score_round(free, config), index)
        free[index] = replace(free[index], hand=rank.best_arranged)
        better = _pair_water(score_round(free, config), index)
        given = {
            seats[other].id: max(0, better[other] - played[other])
            for other in range(len(seats))
            if other != index
        }
    return PlayQuality(sign, rank.better_share, regret, shape_regret, given)


def _pair_water(result: RoundResult, index: int) -> dict[int, int]:
    """{other seat: the water seat ``index`` won from it} of a scored round."""
    out: dict[int, int] = defaultdict(int)
    for pair in result.pairs:
        if pair.a == index:
            out[pair.b] += pair.water
        elif pair.b == index:
            out[pair.a] -= pair.water
    return out


@dataclass(frozen=True, slots=True)
class PairRound:
    """One round the pair shared, from the loser's side: the loser's sign, the water the
    winner gained from the loser's choice, and the coins that went, net, loser -> winner."""

    round_id: int
    sign: Sign
    given: int
    coins: int


@dataclass(frozen=True, slots=True)
class PairVerdict:
    """The evidence against a pair: the test's statistic (``score``), the threshold it was held
    to, the share of the loser's shared rounds that look dumped (``dumped_share``, the share
    that fits the signs best), and the rounds that carry the evidence (a sign of dumping that
    gave the winner water), in the order played."""

    score: float
    threshold: float
    dumped_share: float
    rounds: int
    evidence: tuple[PairRound, ...]
    coins: int  # net coins loser -> winner over all the shared rounds weighed

    @property
    def flagged(self) -> bool:
        return self.score >= self.threshold and self.coins > 0

    @property
    def water_given(self) -> int:
        return sum(r.given for r in self.evidence)


def effective_sign(r: PairRound) -> Sign | None:
    """The sign a round weighs with against this pair: a sign of dumping that gave the winner
    nothing is no evidence against the pair (None: the round is left out)."""
    if r.sign in (Sign.WORST, Sign.CAREFUL_LOSS) and r.given <= 0:
        return None
    return r.sign


# The dumped shares the test tries (the statistic is its best fit among them).
_SHARES = tuple(i / 50 for i in range(1, 51))
_RATIO = {s: DUMPER_RATE[s] / HONEST_RATE[s] for s in Sign}


def evidence_score(counts: dict[Sign, int]) -> tuple[float, float]:
    """The generalised likelihood-ratio statistic of a pair's signs and the dumped share that
    fits best: the rounds are a mixture of honest play (weakest honest rates) and dumping
    (dumper rates) in an unknown share q; the statistic is the log-likelihood of the best q
    against q = 0. Under honest play its expected value is at most 0 for every q."""
    best, share = 0.0, 0.0
    for q in _SHARES:
        total = sum(n * math.log(1 - q + q * _RATIO[s]) for s, n in counts.items() if n)
        if total > best:
            best, share = total, q
    return best, share


def pair_verdict(rounds: Iterable[PairRound], *, threshold: float = THRESHOLD) -> PairVerdict:
    """Weigh a pair's shared rounds (the loser's signs, :func:`evidence_score`)."""
    counts: dict[Sign, int] = defaultdict(int)
    evidence: list[PairRound] = []
    weighed = coins = 0
    for r in rounds:
        sign = effective_sign(r)
        if sign is None:
            continue
        counts[sign] += 1
        weighed += 1
        coins += r.coins
        if sign in (Sign.WORST, Sign.CAREFUL_LOSS):
            evidence.append(r)
    score, share = evidence_score(counts)
    return PairVerdict(round(score, 3), threshold, share, weighed, tuple(evidence), coins)


def first_flag(rounds: Sequence[PairRound], *, threshold: float = THRESHOLD) -> int | None:
    """The index of the round after which the pair is first flagged (None: never), as an
    hourly scan that ran after every round would find it."""
    counts: dict[Sign, int] = defaultdict(int)
    coins = 0
    for i, r in enumerate(rounds):
        sign = effective_sign(r)
        if sign is None:
            continue
        counts[sign] += 1
        coins += r.coins
        if coins > 0 and sign is not Sign.NONE and evidence_score(counts)[0] >= threshold:
            return i
    return None


def threshold_for(*, new_account: bool = False, shared_address: bool = False) -> float:
    """The evidence needed to flag a pair: less when the loser's account is new or when the
    two accounts signed up from the same address (the marks of throw-away accounts)."""
    return (
        THRESHOLD
        - (NEW_ACCOUNT_WEIGHT if new_account else 0.0)
        - (SHARED_ADDRESS_WEIGHT if shared_address else 0.0)
    )


def rings(pairs: Iterable[tuple[int, int]]) -> list[frozenset[int]]:
    """The accounts linked by flagged pairs (loser, winner), as connected groups, largest
    first: a ring feeding one account through several others is one group."""
    parent: dict[int, int] = {}

    def root(a: int) -> int:
        parent.setdefault(a, a)
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a, b in pairs:
        ra, rb = root(a), root(b)
        if ra != rb:
            parent[max(ra, rb)] = min(ra, rb)
    groups: dict[int, set[int]] = defaultdict(set)
    for a in parent:
        groups[root(a)].add(a)
    return sorted((frozenset(g) for g in groups.values()), key=lambda g: (-len(g), min(g)))

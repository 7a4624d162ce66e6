"""Does the collusion detector (games.rules.dumping) catch dumpers and leave honest players alone?

    python -m benchmarks.collusion_detection [--weeks N] [--dumpers N] [--rounds R] [--workers W]

Simulated populations play real deals under the default rules; every human seat's arrangement
is signed by ``play_quality`` exactly as the hourly scan signs a stored round, and every pair of
humans is weighed by ``pair_verdict`` / ``first_flag`` with the coins of the pair's water at base
score 100.

**Honest player-weeks.** Tables of 2 to 4 people (every seat not taken by a person is a bot)
play ``--rounds`` rounds together, a week of an ordinary player's play: quick-join tables of
strangers and private tables of friends. Each person plays at one of the bot levels (easy,
normal, strong, expert — the expert with ``--expert-samples`` deals per decision to keep the
run short) or as the deliberately weak "random but legal" player (a uniformly random
foul-free split). Levels are drawn so that friends' tables often put a random player beside a
strong one, the honest case that looks most like dumping (one-way losses, all week).
Friends share a sign-up address half the time and a fifth of the accounts are new, and the
detector is given those marks (lower thresholds), so the count of honest flags is a bound.
A person is a false positive when any pair with them as the loser is flagged.

**Dumpers**, each kind played ``--dumpers`` times against a partner who plays the engine's best,
without the new-account or shared-address marks (the hardest case for the detector):

- ``worst``: the worst foul-free arrangement, every round, at a private two-seat table;
- ``subtle``: the second-worst suggestion (the best split of the second-worst hand types);
- ``sub_threshold``: the worst arrangement one round in two, honest in between (the loss share
  stays low), at most 19 rounds;
- ``diluted``: the worst arrangement with an easy bot in the third seat;
- ``ring``: three accounts A -> B -> C: A dumps to B at their table, B to C at theirs (both
  dumpers count; the ring is found whole when both pairs are flagged and join);
- ``week``: 2 rounds of dumping a day among 8 honest ones with the same partner, 7 days.

A dumper is caught when its pair is flagged within 10 rounds of its dumping (counting only the
rounds it dumped). Precision is flags on dumpers / all flags. The deals come from a fixed seed;
the figures are the same on every run for the same arguments.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from multiprocessing import Pool

import numpy as np

from benchmarks.host_probes import host_speed_ms
from games.rules.arrange import Hand, worst_arrangement
from games.rules.cards import ALL_CARDS, Card
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.dumping import (
    PairRound,
    Sign,
    first_flag,
    pair_verdict,
    play_quality,
    rings,
    threshold_for,
)
from games.rules.expected_water import water_model
from games.rules.levels import level_play
from games.rules.scoring import Arranged, Seat, score_round

SEED = 20261207
BASE = 100
CONFIG = DEFAULT_CONFIG
HONEST_LEVELS = ("random", "easy", "normal", "strong", "expert")
DUMPER_KINDS = ("worst", "subtle", "sub_threshold", "diluted", "ring", "week")
WITHIN = 10  # dumping rounds within which a dumper must be caught


def _arranged(hand: Hand, split: int) -> Arranged:
    f, m, b = hand.split_cards(split)
    return Arranged(*(tuple(ALL_CARDS[i] for i in row) for row in (f, m, b)))


def play(
    cards: tuple[Card, ...],
    policy: str,
    opponents: int,
    rng: random.Random,
    samples: int,
    config: RuleConfig = CONFIG,
) -> Arranged:
    """The arrangement ``policy`` plays with 13 ``cards`` at a table of ``opponents`` + 1,
    under ``config`` (its deck's row evaluation: copies, five of a kind, jokers)."""
    if policy in ("easy", "normal", "expert"):
        return level_play(cards, config, policy, opponents=opponents, samples=samples).arranged
    hand = Hand([c.index for c in cards], config.a2345, not config.deck.is_classic)
    splits = np.flatnonzero(hand.valid)
    if policy == "random":
        return _arranged(hand, int(splits[rng.randrange(len(splits))]))
    values, triples = water_model(config, opponents).split_values(hand, *hand.rows_of(splits))
    if policy == "strong":
        return _arranged(hand, int(splits[int(np.argmax(values))]))
    if policy == "worst":
        return worst_arrangement(cards, config, opponents=opponents)
    if policy == "subtle":
        best: dict[int, int] = {}
        for i, t in enumerate(triples.tolist()):
            if t not in best or values[i] > values[best[t]]:
                best[t] = i
        ranked = sorted(best.values(), key=lambda i: -values[i])
        pick = ranked[-2] if len(ranked) > 1 else ranked[-1]
        return _arranged(hand, int(splits[pick]))
    raise ValueError(policy)


@dataclass
class TableSpec:
    """A table: its people (name, policy per round or one policy), bots' levels, rounds."""

    key: str
    people: list[str]
    policies: dict[str, list[str]]  # person -> policy of each round
    bots: list[str]
    rounds: int
    seed: int


@dataclass
class TableLog:
    key: str
    # (loser, winner) -> [PairRound ...] in order; and which rounds the loser dumped in
    pairs: dict[tuple[str, str], list[PairRound]] = field(default_factory=dict)
    dumped: dict[tuple[str, str], list[bool]] = field(default_factory=dict)
    signs: dict[str, dict[str, int]] = field(default_factory=dict)  # policy -> sign counts


def run_table(spec: TableSpec, samples: int = 4) -> TableLog:
    rng = random.Random(f"{SEED}:{spec.seed}")
    seats = [*spec.people, *(f"bot{i}" for i in range(len(spec.bots)))]
    policies = {**{f"bot{i}": [lvl] * spec.rounds for i, lvl in enumerate(spec.bots)}}
    policies.update(spec.policies)
    opponents = len(seats) - 1
    log = TableLog(spec.key)
    pairs: dict[tuple[str, str], list[PairRound]] = defaultdict(list)
    dumped: dict[tuple[str, str], list[bool]] = defaultdict(list)
    signs: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    deck = list(CONFIG.deck.cards)
    for n in range(spec.rounds):
        rng.shuffle(deck)
        table = [
            Seat(
                who,
                play(tuple(deck[13 * i : 13 * (i + 1)]), policies[who][n], opponents, rng, samples),
            )
            for i, who in enumerate(seats)
        ]
        result = score_round(table, CONFIG)
        water: dict[tuple[int, int], int] = {}
        for pair in result.pairs:
            water[(pair.a, pair.b)] = pair.water
            water[(pair.b, pair.a)] = -pair.water
        for i, loser in enumerate(spec.people):
            quality = play_quality(table, loser, CONFIG)
            signs[policies[loser][n]][quality.sign.value] += 1
            for j, winner in enumerate(spec.people):
                if i == j:
                    continue
                coins = water[(j, i)] * BASE  # what the loser paid the winner, net
                pairs[(loser, winner)].append(
                    PairRound(n, quality.sign, quality.given.get(winner, 0), coins)
                )
                dumped[(loser, winner)].append(policies[loser][n] in ("worst", "subtle"))
    log.pairs, log.dumped = dict(pairs), dict(dumped)
    log.signs = {k: dict(v) for k, v in signs.items()}
    return log


def honest_tables(
    weeks: int, rounds: int, seed: int
) -> tuple[list[TableSpec], dict[str, tuple[bool, bool]]]:
    """Tables whose people add up to ``weeks`` player-weeks; and each person's marks
    (new account, shares an address with the table)."""
    rng = random.Random(f"{SEED}:honest:{seed}")
    specs: list[TableSpec] = []
    marks: dict[str, tuple[bool, bool]] = {}
    people = 0
    t = 0
    while people < weeks:
        size = rng.choice((2, 3, 4))
        humans = min(rng.randint(2, size), weeks - people) if weeks - people >= 2 else 2
        friends = rng.random() < 0.5
        names = [f"h{t}.{k}" for k in range(humans)]
        levels = [rng.choice(HONEST_LEVELS) for _ in names]
        if friends and rng.random() < 0.5:
            levels[0], levels[1] = "random", rng.choice(("strong", "expert"))
        shared = friends and rng.random() < 0.5
        for who in names:
            marks[who] = (rng.random() < 0.2, shared)
        specs.append(
            TableSpec(
                key=f"honest{t}",
                people=names,
                policies={who: [lvl] * rounds for who, lvl in zip(names, levels, strict=True)},
                bots=[rng.choice(("easy", "normal", "strong")) for _ in range(size - humans)],
                rounds=rounds,
                seed=1_000_000 + t,
            )
        )
        people += humans
        t += 1
    return specs, marks


def dumper_tables(kind: str, count: int) -> list[TableSpec]:
    specs = []
    for k in range(count):
        seed = (DUMPER_KINDS.index(kind) + 1) * 100_000 + k
        if kind in ("worst", "subtle"):
            specs.append(
                TableSpec(
                    f"{kind}{k}", ["L", "W"], {"L": [kind] * 14, "W": ["strong"] * 14}, [], 14, seed
                )
            )
        elif kind == "sub_threshold":
            specs.append(
                TableSpec(
                    f"{kind}{k}",
                    ["L", "W"],
                    {"L": ["worst", "strong"] * 10, "W": ["strong"] * 20},
                    [],
                    19,
                    seed,
                )
            )
        elif kind == "diluted":
            specs.append(
                TableSpec(
                    f"{kind}{k}",
                    ["L", "W"],
                    {"L": ["worst"] * 14, "W": ["strong"] * 14},
                    ["easy"],
                    14,
                    seed,
                )
            )
        elif kind == "ring":
            specs.append(
                TableSpec(
                    f"{kind}{k}.ab",
                    ["A", "B"],
                    {"A": ["worst"] * 14, "B": ["strong"] * 14},
                    [],
                    14,
                    seed,
                )
            )
            specs.append(
                TableSpec(
                    f"{kind}{k}.bc",
                    ["B", "C"],
                    {"B": ["subtle"] * 14, "C": ["strong"] * 14},
                    [],
                    14,
                    seed + 50_000,
                )
            )
        elif kind == "week":
            day = ["strong"] * 4 + ["worst"] + ["strong"] * 4 + ["worst"]
            specs.append(
                TableSpec(
                    f"{kind}{k}", ["L", "W"], {"L": day * 7, "W": ["strong"] * 70}, [], 70, seed
                )
            )
    return specs


def caught_within(rounds: Sequence[PairRound], dumped: Sequence[bool], threshold: float) -> bool:
    at = first_flag(rounds, threshold=threshold)
    return at is not None and sum(dumped[: at + 1]) <= WITHIN


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m benchmarks.collusion_detection", description=__doc__.split("\n")[0]
    )
    parser.add_argument(
        "--weeks", type=int, default=1000, help="honest player-weeks (default 1000)"
    )
    parser.add_argument("--dumpers", type=int, default=60, help="dumpers of each kind (default 60)")
    parser.add_argument(
        "--rounds", type=int, default=30, help="rounds in an honest week (default 30)"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--expert-samples", type=int, default=2)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    honest, marks = honest_tables(args.weeks, args.rounds, 0)
    dumpers = {kind: dumper_tables(kind, args.dumpers) for kind in DUMPER_KINDS}
    specs = honest + [s for kind in DUMPER_KINDS for s in dumpers[kind]]
    with Pool(args.workers) as pool:
        logs = {
            log.key: log
            for log in pool.starmap(
                run_table, [(s, args.expert_samples) for s in specs], chunksize=4
            )
        }

    signs: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    for log in logs.values():
        for policy, counts in log.signs.items():
            for sign, n in counts.items():
                signs[policy][sign] += n
    print(
        f"collusion detection benchmark: {args.weeks} honest player-weeks of {args.rounds} rounds, "
        f"{args.dumpers} dumpers per kind, seed {SEED}"
    )
    print("\nsigns per policy (share of rounds):")
    print(f"  {'policy':<10}{'rounds':>8}" + "".join(f"{s.value:>14}" for s in Sign))
    for policy in (*HONEST_LEVELS, "worst", "subtle"):
        counts = signs.get(policy, {})
        total = sum(counts.values())
        if total:
            print(
                f"  {policy:<10}{total:>8}"
                + "".join(f"{counts.get(s.value, 0) / total:>14.3f}" for s in Sign)
            )

    true_flags = 0
    print(
        f"\n{'dumper kind':<15}{'dumpers':>8}{'caught':>8}{'recall':>8}"
        f"   (flagged within {WITHIN} rounds of dumping)"
    )
    for kind in DUMPER_KINDS:
        caught = total = 0
        whole = 0
        for spec in dumpers[kind]:
            log = logs[spec.key]
            if kind == "ring":
                continue
            total += 1
            ok = caught_within(log.pairs[("L", "W")], log.dumped[("L", "W")], threshold_for())
            caught += ok
        if kind == "ring":
            for k in range(args.dumpers):
                ab, bc = logs[f"ring{k}.ab"], logs[f"ring{k}.bc"]
                a_ok = caught_within(ab.pairs[("A", "B")], ab.dumped[("A", "B")], threshold_for())
                b_ok = caught_within(bc.pairs[("B", "C")], bc.dumped[("B", "C")], threshold_for())
                caught += a_ok + b_ok
                total += 2
                flagged = [p for ok, p in ((a_ok, ("A", "B")), (b_ok, ("B", "C"))) if ok]
                whole += any(len(g) == 3 for g in rings(flagged))
        true_flags += caught
        extra = f"   ring found whole: {whole}/{args.dumpers}" if kind == "ring" else ""
        print(f"{kind:<15}{total:>8}{caught:>8}{caught / total:>8.3f}{extra}")

    flagged_people = set()
    for spec in honest:
        log = logs[spec.key]
        for (loser, _winner), rounds in log.pairs.items():
            new, shared = marks[loser]
            if (
                first_flag(rounds, threshold=threshold_for(new_account=new, shared_address=shared))
                is not None
            ):
                flagged_people.add(loser)
    false_flags = len(flagged_people)
    scores = sorted(
        (pair_verdict(rounds).score for spec in honest for rounds in logs[spec.key].pairs.values()),
        reverse=True,
    )
    print(
        f"\nhonest pairs' evidence: highest {scores[:5]} (threshold {threshold_for()}, "
        f"{threshold_for(new_account=True, shared_address=True)} with both marks)"
    )
    precision = true_flags / (true_flags + false_flags) if true_flags + false_flags else 1.0
    print(f"\nhonest player-weeks: {len(marks)}, flagged: {false_flags}; precision {precision:.4f}")
    levels = defaultdict(int)
    for spec in honest:
        for who in spec.people:
            if who in flagged_people:
                levels[spec.policies[who][0]] += 1
    if levels:
        print(
            "  flagged honest players by level: "
            + ", ".join(f"{k} {v}" for k, v in sorted(levels.items()))
        )
    print(
        f"\n{time.perf_counter() - start:.1f} s with {args.workers} workers "
        f"(host speed {host_speed_ms():.0f} ms: benchmarks.host_probes)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

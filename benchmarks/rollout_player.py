"""The rollout player's decision for one hand, and its cross-fitted gain over the engine.

The player knows only its 13 cards. A sample deals the unseen cards at random to the N−1
opponents (13 each), and every opponent plays the engine's ``best``; the opponents' row keys are
computed once per sample and reused for every candidate. 2·S samples are drawn; the candidate
with the highest total on half A is scored against the engine's ``best`` on half B, and vice
versa. The hand's gain is the mean of the two held-out differences, free of the bias of picking
and scoring on the same samples.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from benchmarks.rollout_candidates import HAND, Candidates, candidates, engine_best
from benchmarks.rollout_water import table_water
from games.rules.cards import ALL_CARDS
from games.rules.config import RuleConfig
from games.rules.vectorized import IntArray, eval_cards3, eval_cards5


def draw_samples(
    card_indices: Sequence[int],
    config: RuleConfig,
    seats: int,
    count: int,
    rng: np.random.Generator,
) -> IntArray:
    """(count, seats-1, 13) opponents' hands: the unseen cards dealt at random, per sample."""
    held = set(card_indices)
    unseen = np.array([c.index for c in config.deck.cards if c.index not in held], dtype=np.int64)
    need = (seats - 1) * HAND
    out = np.empty((count, seats - 1, HAND), dtype=np.int64)
    for t in range(count):
        out[t] = rng.permutation(unseen)[:need].reshape(seats - 1, HAND)
    return out


def opponents_keys(hands: IntArray, config: RuleConfig) -> IntArray:
    """(T, M, 3) row keys of the engine's best for every opponent hand of every sample."""
    t, m, _ = hands.shape
    fronts, fives = [], []
    for hand in hands.reshape(t * m, HAND).tolist():
        best = engine_best([ALL_CARDS[i] for i in hand], config, m)
        fronts.append([c.index for c in best.front])
        fives += [[c.index for c in best.middle], [c.index for c in best.back]]
    k3 = eval_cards3(np.array(fronts, dtype=np.int64))
    k5 = eval_cards5(np.array(fives, dtype=np.int64), config.a2345)[0].reshape(-1, 2)
    return np.column_stack((k3, k5)).reshape(t, m, 3)


def halves(samples: int) -> tuple[IntArray, IntArray]:
    """Sample indices of half A and half B (of 2·samples)."""
    return np.arange(samples), np.arange(samples, 2 * samples)


def pick(water: IntArray) -> int:
    """The candidate with the highest total water; the first (row 0, the engine's best) wins
    exact ties."""
    return int(np.argmax(water.sum(axis=0)))


def cross_fit(water: IntArray) -> tuple[float, int, int]:
    """(gain, pick on A, pick on B) from (2S, C) water, row 0 being the engine's best: the pick
    of each half is scored on the other against the engine's best, and the two held-out
    differences are averaged."""
    a, b = halves(len(water) // 2)
    pick_a, pick_b = pick(water[a]), pick(water[b])
    gain_b = float((water[b, pick_a] - water[b, 0]).mean())
    gain_a = float((water[a, pick_b] - water[a, 0]).mean())
    return (gain_a + gain_b) / 2, pick_a, pick_b


@dataclass(frozen=True)
class HandResult:
    gain: float  # cross-fitted held-out gain of the rollout pick over the engine's best
    in_sample: float  # the full pick's gain on the samples it was picked on (biased upwards)
    pick: int  # the pick over all 2·S samples (0: the engine's best)
    half_picks: tuple[int, int]
    candidates: Candidates


def rollout_hand(
    card_indices: Sequence[int],
    config: RuleConfig,
    seats: int,
    samples: int,
    rng: np.random.Generator,
) -> HandResult:
    """The rollout player's decision for one hand and its cross-fitted gain."""
    cand = candidates(card_indices, config, seats - 1)
    hands = draw_samples(card_indices, config, seats, 2 * samples, rng)
    opp = opponents_keys(hands, config)
    water = table_water(cand.keys, opp, config)
    gain, pick_a, pick_b = cross_fit(water)
    full = pick(water)
    in_sample = float((water[:, full] - water[:, 0]).mean())
    return HandResult(gain, in_sample, full, (pick_a, pick_b), cand)

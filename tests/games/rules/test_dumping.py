"""Deliberate losses (games.rules.dumping): the sign of an arrangement and a pair's evidence."""

from __future__ import annotations

import random

import numpy as np
import pytest

from games.rules.arrange import Hand, arrange, rank_of
from games.rules.cards import ALL_CARDS, Card
from games.rules.config import DEFAULT_CONFIG
from games.rules.dumping import (
    SIGN_WEIGHT,
    THRESHOLD,
    PairRound,
    Sign,
    pair_verdict,
    play_quality,
    rings,
    threshold_for,
)
from games.rules.expected_water import water_model
from games.rules.scoring import Arranged, Seat

CONFIG = DEFAULT_CONFIG


def deal(seed: int, players: int) -> list[tuple[Card, ...]]:
    cards = list(CONFIG.deck.cards)
    random.Random(seed).shuffle(cards)
    return [tuple(cards[13 * i : 13 * (i + 1)]) for i in range(players)]


def worst(cards: tuple[Card, ...], opponents: int) -> Arranged:
    hand = Hand([c.index for c in cards], CONFIG.a2345)
    splits = np.flatnonzero(hand.valid)
    values, _ = water_model(CONFIG, opponents).split_values(hand, *hand.rows_of(splits))
    f, m, b = hand.split_cards(int(splits[int(np.argmin(values))]))
    return Arranged(*(tuple(ALL_CARDS[i] for i in row) for row in (f, m, b)))


@pytest.mark.parametrize("seed", range(6))
def test_the_worst_arrangement_is_signed_worst_and_gives_water_to_the_opponent(seed: int) -> None:
    mine, theirs = deal(seed, 2)
    seats = [
        Seat("1", worst(mine, 1)),
        Seat("2", arrange(theirs, CONFIG, limit=1, opponents=1).best.arranged()),
    ]
    quality = play_quality(seats, "1", CONFIG)
    assert quality.sign is Sign.WORST
    assert quality.better_share >= 0.99
    assert quality.regret > 0
    assert set(quality.given) == {"2"} and quality.given["2"] >= 0


@pytest.mark.parametrize("seed", range(6))
def test_the_best_arrangement_is_no_sign_and_gives_nothing(seed: int) -> None:
    hands = deal(seed, 3)
    seats = [
        Seat(str(i), arrange(h, CONFIG, limit=1, opponents=2).best.arranged())
        for i, h in enumerate(hands)
    ]
    quality = play_quality(seats, "0", CONFIG)
    assert quality.sign is Sign.NONE and quality.regret == 0 and quality.given == {}
    assert rank_of(seats[0].hand, CONFIG, opponents=2).better_share == 0


def test_a_run_of_worst_rounds_to_the_same_account_is_flagged_after_three() -> None:
    rounds = [PairRound(i, Sign.WORST, 6, 200) for i in range(10)]
    assert 2 * SIGN_WEIGHT[Sign.WORST] < THRESHOLD <= 3 * SIGN_WEIGHT[Sign.WORST]
    verdict = pair_verdict(rounds)
    assert verdict.flagged
    assert [r.round_id for r in verdict.evidence] == [0, 1, 2]
    assert verdict.water_given == 18 and verdict.coins == 600


def test_honest_rounds_between_signs_restart_the_evidence() -> None:
    # a random player's worst 1 % comes now and then, between honest-looking rounds
    pattern = [Sign.WORST, Sign.WEAK, Sign.NONE, Sign.NONE, Sign.CAREFUL_LOSS, Sign.NONE] * 10
    verdict = pair_verdict(PairRound(i, s, 3, 100) for i, s in enumerate(pattern))
    assert not verdict.flagged and verdict.score < THRESHOLD


def test_a_sign_that_gave_the_winner_nothing_is_no_evidence_against_the_pair() -> None:
    verdict = pair_verdict(PairRound(i, Sign.WORST, 0, 100) for i in range(20))
    assert verdict.score == 0 and not verdict.flagged


def test_coins_must_have_flowed_to_the_winner() -> None:
    verdict = pair_verdict(PairRound(i, Sign.WORST, 4, -50) for i in range(5))
    assert verdict.score >= THRESHOLD and not verdict.flagged


def test_new_accounts_and_shared_addresses_need_less_evidence() -> None:
    assert (
        threshold_for(new_account=True, shared_address=True)
        < threshold_for(new_account=True)
        < threshold_for()
    )


def test_rings_join_pairs_that_share_an_account() -> None:
    assert rings([(1, 2), (3, 2), (4, 5), (2, 6)]) == [frozenset({1, 2, 3, 6}), frozenset({4, 5})]

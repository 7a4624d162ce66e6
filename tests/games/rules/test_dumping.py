"""Deliberate losses (games.rules.dumping): the sign of an arrangement and a pair's evidence."""

from __future__ import annotations

import random

import pytest

from benchmarks.collusion_detection import play
from games.rules.arrange import arrange, rank_of
from games.rules.cards import Card
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.dumping import (
    NOT_ARRANGED,
    THRESHOLD,
    PairRound,
    Sign,
    first_flag,
    pair_verdict,
    play_quality,
    rings,
    threshold_for,
)
from games.rules.errors import RulesError
from games.rules.scoring import Arranged, Seat

CONFIG = DEFAULT_CONFIG


def deal(seed: int, players: int) -> list[tuple[Card, ...]]:
    cards = list(CONFIG.deck.cards)
    random.Random(seed).shuffle(cards)
    return [tuple(cards[13 * i : 13 * (i + 1)]) for i in range(players)]


def worst(cards: tuple[Card, ...], opponents: int, config: RuleConfig = CONFIG) -> Arranged:
    """The foul-free split of the lowest expected water: the worst-arrangement dumper's."""
    return play(cards, "worst", opponents, random.Random(0), 1, config)


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


def test_the_worst_arrangement_twice_running_to_the_same_account_is_flagged() -> None:
    rounds = [PairRound(i, Sign.WORST, 6, 200) for i in range(10)]
    assert first_flag(rounds) == 1
    assert not pair_verdict(rounds[:1]).flagged
    verdict = pair_verdict(rounds)
    assert verdict.flagged and verdict.dumped_share == 1.0
    assert verdict.water_given == 60 and verdict.coins == 2000 and len(verdict.evidence) == 10


def test_the_weakest_honest_play_is_no_evidence() -> None:
    # A random player's signs at their honest rates, over a long week.
    pattern = [Sign.WORST] + [Sign.CAREFUL_LOSS] * 4 + [Sign.WEAK] * 9 + [Sign.NONE] * 86
    verdict = pair_verdict(PairRound(i, s, 3, 100) for i, s in enumerate(pattern))
    assert verdict.score < 1 and not verdict.flagged


def test_dumping_one_round_in_five_among_honest_ones_is_found() -> None:
    pattern = ([Sign.NONE] * 4 + [Sign.WORST]) * 6
    rounds = [PairRound(i, s, 3, 100) for i, s in enumerate(pattern)]
    at = first_flag(rounds)
    assert at is not None and sum(r.sign is Sign.WORST for r in rounds[: at + 1]) <= 6
    assert 0.1 <= pair_verdict(rounds).dumped_share <= 0.3


def test_a_sign_that_gave_the_winner_nothing_is_no_evidence_against_the_pair() -> None:
    verdict = pair_verdict(PairRound(i, Sign.WORST, 0, 100) for i in range(20))
    assert verdict.score == 0 and not verdict.flagged and verdict.rounds == 0


def test_coins_must_have_flowed_to_the_winner() -> None:
    rounds = [PairRound(i, Sign.WORST, 4, -50) for i in range(5)]
    verdict = pair_verdict(rounds)
    assert verdict.score >= THRESHOLD and not verdict.flagged
    assert first_flag(rounds) is None


def test_new_accounts_and_shared_addresses_need_less_evidence() -> None:
    assert (
        threshold_for(new_account=True, shared_address=True)
        < threshold_for(new_account=True)
        < threshold_for()
    )


def test_rings_join_pairs_that_share_an_account() -> None:
    assert rings([(1, 2), (3, 2), (4, 5), (2, 6)]) == [frozenset({1, 2, 3, 6}), frozenset({4, 5})]


def test_the_best_split_of_losing_hand_types_is_a_careful_loss() -> None:
    signs = []
    for seed in range(12):
        mine, theirs = deal(100 + seed, 2)
        seats = [
            Seat("1", play(mine, "subtle", 1, random.Random(seed), 1)),
            Seat("2", arrange(theirs, CONFIG, limit=1, opponents=1).best.arranged()),
        ]
        signs.append(play_quality(seats, "1", CONFIG).sign)
    assert signs.count(Sign.CAREFUL_LOSS) >= 9  # most: a few such splits lose little


def test_a_declared_special_or_an_escape_says_nothing() -> None:
    mine, theirs = deal(7, 2)
    other = Seat("2", arrange(theirs, CONFIG, limit=1, opponents=1).best.arranged())
    escaped = Seat("1", worst(mine, 1), escaped=True)
    assert play_quality([escaped, other], "1", CONFIG) == NOT_ARRANGED
    with pytest.raises(RulesError):
        play_quality([escaped, other], "9", CONFIG)


def test_7_1_a_careful_loss_is_measured_in_rows_of_row_water() -> None:
    from games.rules.dumping import sign_of

    loss = {"better_share": 0.3, "regret": 6.0, "shape_regret": 0.0, "opponents": 2}
    assert sign_of(**loss) is Sign.CAREFUL_LOSS  # type: ignore[arg-type]
    assert sign_of(**loss, row_water=2) is Sign.NONE  # type: ignore[arg-type]
    assert sign_of(**{**loss, "regret": 12.0}, row_water=2) is Sign.CAREFUL_LOSS  # type: ignore[arg-type]

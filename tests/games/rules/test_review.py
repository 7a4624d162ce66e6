"""RULES.md §6 and §7: the review of a hand after the round — the played arrangement and the
engine's best of the same cards, valued by the model and against the round's real hands."""

from __future__ import annotations

import random

import pytest

from games.rules.arrange import arrange, expected_water_of
from games.rules.cards import parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.errors import FoulError, RulesError
from games.rules.review import review_hand
from games.rules.scoring import Arranged, Seat, score_round


def best_seats(config: RuleConfig, players: int, seed: int) -> list[Seat]:
    deck = list(config.deck.cards)
    random.Random(seed).shuffle(deck)
    size = config.hand_size
    seats = []
    for p in range(players):
        top = arrange(deck[size * p : size * (p + 1)], config, limit=1, opponents=players - 1).best
        seats.append(Seat(str(p), top.arranged(), unused=top.unused))
    return seats


@pytest.mark.parametrize("players", [2, 3, 4])
def test_6_whoever_played_the_best_has_nothing_to_gain(players: int) -> None:
    seats = best_seats(DEFAULT_CONFIG, players, seed=players)
    for seat in seats:
        review = review_hand(seats, seat.id, DEFAULT_CONFIG)
        assert review.played_best and review.opponents == players - 1
        assert review.played.water == review.best.water
        assert review.played.expected_water == review.best.expected_water
        assert review.to_json()["water_gain"] == 0 and review.to_json()["expected_gain"] == 0


def test_7_a_weaker_arrangement_is_valued_and_rescored_against_the_same_hands() -> None:
    seats = best_seats(DEFAULT_CONFIG, 4, seed=7)
    mine = seats[0].hand
    assert isinstance(mine, Arranged)
    # Another foul-free arrangement of the same cards: the lowest-valued suggestion.
    other = arrange(mine.cards, DEFAULT_CONFIG, limit=10).suggestions[-1].arranged()
    seats[0] = Seat("0", other)

    review = review_hand(seats, "0", DEFAULT_CONFIG)

    assert not review.played_best
    assert review.played.expected_water == expected_water_of(other, DEFAULT_CONFIG)
    assert review.best.expected_water > review.played.expected_water
    assert review.played.water == score_round(seats, DEFAULT_CONFIG).water[0]
    best_round = [Seat("0", review.best.hand), *seats[1:]]
    assert review.best.water == score_round(best_round, DEFAULT_CONFIG).water[0]


def test_12_4_with_spare_cards_the_best_chooses_its_13_of_all_16() -> None:
    config = RuleConfig.from_dict({"extra_suits": 1, "spare_cards": 3}, base=DEFAULT_CONFIG)
    seats = best_seats(config, 3, seed=11)
    review = review_hand(seats, "1", config)
    assert review.played_best and len(review.best.unused) == 3
    assert set(review.best.hand.cards) | set(review.best.unused) == set(
        seats[1].hand.cards + seats[1].unused
    )


def test_a_foul_has_no_expected_water_and_a_stranger_no_review() -> None:
    foul = Arranged(
        parse_cards(["AS", "AH", "AD"]),
        parse_cards(["2C", "3D", "5H", "7S", "9C"]),
        parse_cards(["KS", "QS", "JS", "4D", "6H"]),
    )
    with pytest.raises(FoulError):
        expected_water_of(foul, DEFAULT_CONFIG)
    with pytest.raises(RulesError, match="did not play"):
        review_hand(best_seats(DEFAULT_CONFIG, 2, seed=1), "9", DEFAULT_CONFIG)

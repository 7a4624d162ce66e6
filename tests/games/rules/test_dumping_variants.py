"""Deliberate losses on the variant decks (RULES.md §12 with games.rules.dumping): an
arrangement is ranked among its own 13 cards' splits with the deck's row evaluation (copies,
five of a kind, jokers), so on every deck the worst split is signed WORST and the engine's
best NONE; with spare cards (§12.4) the 13 played are judged among their own splits."""

from __future__ import annotations

import random

import pytest

from benchmarks.collusion_detection import play
from games.rules.arrange import arrange, rank_of, worst_arrangement
from games.rules.cards import Card, parse_cards, sort_key
from games.rules.config import RuleConfig
from games.rules.dumping import WORST_TIE_SHARE, Sign, play_quality, sign_of
from games.rules.hands import Category, evaluate
from games.rules.presets import preset_config
from games.rules.scoring import Arranged, Seat

EXTRA_SUIT = preset_config("duoyise")  # 65 cards, five of a kind
TWO_EXTRA_SUITS = RuleConfig.from_dict({"extra_suits": 2})  # 78 cards
JOKERS = preset_config("laizi")  # 54 cards, two jokers
JOKERS_EXTRA_SUIT = RuleConfig.from_dict({"extra_suits": 1, "jokers": 2})  # 67 cards
SPARE = preset_config("duosanzhang")  # 65 cards, 16 dealt, 13 played
DECKS = {
    "extra_suit": EXTRA_SUIT,
    "two_extra_suits": TWO_EXTRA_SUITS,
    "jokers": JOKERS,
    "jokers_extra_suit": JOKERS_EXTRA_SUIT,
}


def deal(config: RuleConfig, seed: int, players: int) -> list[tuple[Card, ...]]:
    cards = list(config.deck.cards)
    random.Random(seed).shuffle(cards)
    size = config.hand_size
    return [tuple(cards[size * i : size * (i + 1)]) for i in range(players)]


def seat_best(name: str, cards: tuple[Card, ...], config: RuleConfig, opponents: int) -> Seat:
    top = arrange(cards, config, limit=1, opponents=opponents).best
    return Seat(name, top.arranged(), unused=top.unused)


@pytest.mark.parametrize("deck", DECKS)
@pytest.mark.parametrize("seed", range(3))
def test_12_the_worst_split_is_signed_worst_and_gives_the_friend_water(
    deck: str, seed: int
) -> None:
    config = DECKS[deck]
    mine, friend, other = deal(config, seed, 3)
    seats = [
        Seat("dumper", worst_arrangement(mine, config, opponents=2)),
        seat_best("friend", friend, config, 2),
        seat_best("other", other, config, 2),
    ]
    quality = play_quality(seats, "dumper", config)
    assert quality.sign is Sign.WORST
    assert quality.regret > 0
    assert set(quality.given) == {"friend", "other"}
    assert min(quality.given.values()) >= 0


@pytest.mark.parametrize("deck", DECKS)
@pytest.mark.parametrize("seed", range(3))
def test_12_the_engines_best_is_no_sign_and_is_rank_ofs_own_best(deck: str, seed: int) -> None:
    config = DECKS[deck]
    hands = deal(config, 10 + seed, 3)
    seats = [seat_best(str(i), h, config, 2) for i, h in enumerate(hands)]
    quality = play_quality(seats, "0", config)
    assert quality.sign is Sign.NONE and quality.regret == 0 and quality.given == {}
    rank = rank_of(seats[0].hand, config, opponents=2)  # type: ignore[arg-type]
    assert rank.better_share == 0 and rank.best_arranged == seats[0].hand


FIVE_SEVENS = "7C 7D 7H 7S 7D2"


@pytest.mark.parametrize(
    ("config", "hand"),
    [
        (EXTRA_SUIT, f"{FIVE_SEVENS} AS KH QC 9D 5S 4H 3C 2D"),
        (EXTRA_SUIT, f"{FIVE_SEVENS} AS AH KC KD 5S 4H 3C 2D"),
        (JOKERS, "RJ BJ AS KS 9S 5S 8H 8C 4D 3C 2D JH TC"),
        (JOKERS_EXTRA_SUIT, "RJ BJ 7C 7D 7D2 QS QH 9S 5S 4H 3C 2D KD"),
    ],
)
def test_12_3_five_of_a_kind_and_jokers_are_ranked_as_the_variant_rules_play_them(
    config: RuleConfig, hand: str
) -> None:
    """A hand holding five of a kind or jokers is ranked by the variant evaluation: its best
    split (rank_of's own) plays the five of a kind, its worst breaks it up. The classic
    evaluation (five of a kind unknown, a joker a rank-0 card) takes another split for the
    worst; the benchmark's worst player chooses with the deck's."""
    mine = parse_cards(hand.split(), deck=config.deck)
    rest = [c for c in config.deck.cards if c not in mine]
    friend = tuple(random.Random(3).sample(rest, 13))
    low = worst_arrangement(mine, config, opponents=1)
    assert play(mine, "worst", 1, random.Random(0), 1, config) == low
    best_rows = rank_of(low, config, opponents=1).best_arranged.rows()
    low_rows = [evaluate(row, config.a2345).category for row in low.rows()]
    assert Category.FIVE_OF_A_KIND not in low_rows
    if FIVE_SEVENS in hand:
        assert evaluate(best_rows[2], config.a2345).category is Category.FIVE_OF_A_KIND
    seats = [Seat("dumper", low), seat_best("friend", friend, config, 1)]
    assert play_quality(seats, "dumper", config).sign is Sign.WORST
    top = seat_best("dumper", mine, config, 1)
    assert play_quality([top, seats[1]], "dumper", config).sign is Sign.NONE


@pytest.mark.parametrize(
    ("config", "hand"),
    [
        (EXTRA_SUIT, "5H 9D 6H KD 6S 6C KC 3S QC 9S 6D 9H QD"),
        (EXTRA_SUIT, "TC 3D2 9D 6S 3H 6D 7H 2H 3S 9C 2S 3D 6C"),
        (SPARE, "AH AD KD QC QD 9S 9H 9D KC 6S 6H 6C 6D"),
    ],
)
def test_12_a_worst_split_many_splits_tie_with_is_still_the_worst(
    config: RuleConfig, hand: str
) -> None:
    """Moving a card for another of its rank (a copy for its original) between rows that are
    no flush changes nothing: here more than 1 % of the splits rank with the hand's worst."""
    cards = tuple(parse_cards(hand.split(), deck=config.deck))
    low = worst_arrangement(cards, config, opponents=1)
    rank = rank_of(low, config, opponents=1)
    assert rank.better_share < 0.99 and rank.lowest
    assert 0.01 < 1.0 - rank.better_share <= WORST_TIE_SHARE
    rest = [c for c in config.deck.cards if c not in cards]
    friend = tuple(random.Random(5).sample(rest, config.hand_size))
    seats = [Seat("dumper", low), seat_best("friend", friend, config, 1)]
    assert play_quality(seats, "dumper", config).sign is Sign.WORST


def test_a_lowest_value_most_splits_share_says_nothing() -> None:
    """When the model values a large share of the splits alike (rows that win nothing against
    the rows opponents play), a random split lands on the lowest value often: no sign."""
    lowest = {"better_share": 0.9, "regret": 1.0, "shape_regret": 1.0, "opponents": 3}
    assert sign_of(**lowest, lowest_tied=0.1) is Sign.WEAK  # type: ignore[arg-type]
    assert sign_of(**lowest, lowest_tied=WORST_TIE_SHARE) is Sign.WORST  # type: ignore[arg-type]
    assert sign_of(**lowest) is Sign.WEAK  # type: ignore[arg-type]


# -- spare cards (RULES.md §12.4) ----------------------------------------------------------


def kept(split: Arranged) -> tuple[Card, ...]:
    return split.front + split.middle + split.back


@pytest.mark.parametrize("seed", range(3))
def test_12_4_the_worst_split_of_the_13_played_is_signed_worst(seed: int) -> None:
    mine, friend, other = deal(SPARE, seed, 3)
    top = arrange(mine, SPARE, limit=1, opponents=2).best
    seats = [
        Seat(
            "dumper", worst_arrangement(kept(top.arranged()), SPARE, opponents=2), unused=top.unused
        ),
        seat_best("friend", friend, SPARE, 2),
        seat_best("other", other, SPARE, 2),
    ]
    quality = play_quality(seats, "dumper", SPARE)
    assert quality.sign is Sign.WORST and quality.regret > 0
    assert set(quality.given) == {"friend", "other"} and min(quality.given.values()) >= 0

    honest = play_quality([seat_best("dumper", mine, SPARE, 2), *seats[1:]], "dumper", SPARE)
    assert honest.sign is Sign.NONE and honest.regret == 0 and honest.given == {}


def test_12_4_which_three_are_set_aside_is_not_judged() -> None:
    """Keeping three aces aside and arranging the other 13 as well as they go is judged as the
    13 played: the best of their splits, no sign. Simple honest rules for the choice (keep the
    13 highest) fall as far short of the engine's best 13 of 16, so the choice is no evidence
    (games.rules.dumping.play_quality)."""
    hand = "AS AH AD AD2 KC QD 9S 8H 7C 6D 5S 4H 3C 2D JH TC"
    mine = parse_cards(hand.split(" "), deck=SPARE.deck)
    rest = [c for c in SPARE.deck.cards if c not in mine]
    random.Random(1).shuffle(rest)
    friend, other = tuple(rest[:16]), tuple(rest[16:32])
    high_first = sorted(mine, key=sort_key)
    aside, kept13 = tuple(high_first[:3]), tuple(high_first[3:])
    assert {str(c) for c in aside} == {"AS", "AH", "AD"}
    played = rank_of(worst_arrangement(kept13, SPARE, opponents=2), SPARE, opponents=2)
    seats = [
        Seat("dumper", played.best_arranged, unused=aside),
        seat_best("friend", friend, SPARE, 2),
        seat_best("other", other, SPARE, 2),
    ]
    quality = play_quality(seats, "dumper", SPARE)
    assert quality.sign is Sign.NONE and quality.regret == 0 and quality.better_share == 0

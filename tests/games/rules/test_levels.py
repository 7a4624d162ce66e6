"""Bot levels (games.rules.levels): how a bot of each level arranges and whether it
declares a special — every arrangement legal (RULES.md §4, §6; §12.4 with spare cards)."""

from __future__ import annotations

import random

import pytest

from games.rules.advice import special_advice
from games.rules.arrange import Policy, arrange
from games.rules.cards import ALL_CARDS, parse_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.hands import check_foul, evaluate
from games.rules.levels import LEVELS, level_play, level_plays_special

# The example: the engine plays A K Q / 9 9 / a club flush; a rollout prefers
# Q Q / A A / 9 9 6 6 (+3.9 water per deal for that hand).
EXAMPLE = parse_cards(
    ["AC", "QH", "6H", "6C", "KH", "AS", "JS", "9D", "2D", "8C", "9H", "4C", "QC"]
)
SPARE = RuleConfig.from_dict({"extra_suits": 1, "spare_cards": 3}, base=DEFAULT_CONFIG)


def legal(play: object, cards: tuple, config: RuleConfig) -> None:
    arranged = play.arranged  # type: ignore[attr-defined]
    rows = [evaluate(list(r), config.a2345) for r in arranged.rows()]
    check_foul(*rows)  # raises on a foul
    assert sorted(c.index for c in arranged.cards + play.unused) == sorted(  # type: ignore[attr-defined]
        c.index for c in cards
    )
    assert len(play.unused) == config.spare_cards  # type: ignore[attr-defined]


@pytest.mark.parametrize("level", LEVELS)
@pytest.mark.parametrize("config", [DEFAULT_CONFIG, SPARE], ids=["classic", "spare"])
def test_6_every_level_plays_a_legal_arrangement_of_its_cards(
    level: str, config: RuleConfig
) -> None:
    deck = list(config.deck.cards)
    rng = random.Random(17)
    for _ in range(2):
        rng.shuffle(deck)
        cards = tuple(deck[: config.hand_size])
        legal(level_play(cards, config, level, samples=8), cards, config)


def test_the_levels_play_their_policies() -> None:
    for level, policy in (("easy", "strongest_back"), ("normal", "strength_sum")):
        order = Policy(policy).choose([c.index for c in EXAMPLE])
        chosen = [ALL_CARDS[i] for i in order]
        assert level_play(EXAMPLE, DEFAULT_CONFIG, level).arranged.cards == tuple(chosen)
    best = arrange(EXAMPLE, DEFAULT_CONFIG, limit=1).best.arranged()
    assert level_play(EXAMPLE, DEFAULT_CONFIG, "strong").arranged == best


def test_the_expert_finds_the_rollouts_pick_and_always_the_same() -> None:
    first = level_play(EXAMPLE, DEFAULT_CONFIG, "expert")
    again = level_play(EXAMPLE, DEFAULT_CONFIG, "expert")
    assert first == again  # seeded by its cards
    assert sum(c.rank == 12 for c in first.arranged.front) == 2  # Q Q in front
    assert sum(c.rank == 14 for c in first.arranged.middle) == 2  # A A in the middle
    # One of the model's own suggestions, never something else.
    suggested = {s.arranged() for s in arrange(EXAMPLE, DEFAULT_CONFIG).suggestions}
    assert first.arranged in suggested


def test_5_1_an_easy_bot_always_declares_the_others_follow_the_advice() -> None:
    pairs = parse_cards(
        ["AS", "AH", "KS", "KH", "QS", "QH", "JS", "JH", "TS", "TH", "9S", "9H", "2C"]
    )
    advice = special_advice(pairs, DEFAULT_CONFIG, "six_pairs", 3)
    assert advice.recommend == "arrange"  # six high pairs arrange well
    assert level_plays_special(pairs, DEFAULT_CONFIG, "six_pairs", "easy")
    for level in ("normal", "strong", "expert"):
        assert not level_plays_special(pairs, DEFAULT_CONFIG, "six_pairs", level)


def test_an_unknown_level_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown bot level"):
        level_play(EXAMPLE, DEFAULT_CONFIG, "godlike")
    with pytest.raises(ValueError, match="unknown bot level"):
        level_plays_special(EXAMPLE, DEFAULT_CONFIG, "dragon", "")

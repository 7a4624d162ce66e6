"""RULES.md §12 in the special-hand simulation: each variant deck is dealt to a full table of
its seats, 13 or 16 cards each, and a hand's mask is every special it makes."""

import numpy as np
import pytest

from games.rules import stats
from games.rules.cards import ALL_CARDS
from games.rules.config import RuleConfig
from games.rules.errors import ConfigError
from games.rules.presets import preset_config
from games.rules.specials import qualifying_specials
from games.rules.stats import (
    CLASSIC_SHAPE,
    DealShape,
    cache_filename,
    deal_cards,
    hand_mask,
    load_deals,
    load_or_simulate,
    save_deals,
    simulate_deals,
    special_mask,
)


@pytest.mark.parametrize(
    ("shape", "cards", "players", "hand"),
    [
        (DealShape(), 52, 4, 13),
        (DealShape(extra_suits=1), 65, 5, 13),
        (DealShape(extra_suits=2), 78, 6, 13),
        (DealShape(jokers=2), 54, 4, 13),
        (DealShape(extra_suits=2, jokers=2), 80, 6, 13),
        (DealShape(spare_cards=3), 52, 3, 16),
        (DealShape(extra_suits=1, spare_cards=3), 65, 4, 16),
    ],
)
def test_12_a_deal_is_a_full_table_of_distinct_cards_of_the_deck(
    shape: DealShape, cards: int, players: int, hand: int
) -> None:
    config = RuleConfig(
        extra_suits=shape.extra_suits, jokers=shape.jokers, spare_cards=shape.spare_cards
    )
    assert (shape.deck.size, shape.players, shape.hand_size) == (cards, players, hand)
    assert shape.players == config.max_seats and shape == DealShape.of(config)

    dealt = deal_cards(200, seed=3, shape=shape)

    assert dealt.shape == (200, players, hand)
    deck = {card.index for card in config.deck.cards}
    for deal in dealt:
        flat = deal.ravel().tolist()
        assert len(set(flat)) == len(flat) and set(flat) <= deck
    # Every card of the deck is dealt somewhere (jokers and copies included).
    assert set(dealt.ravel().tolist()) == deck
    assert np.array_equal(dealt, deal_cards(200, seed=3, shape=shape))


def test_the_classic_deals_and_file_name_are_as_before_the_variant_decks() -> None:
    assert np.array_equal(deal_cards(40, seed=9), deal_cards(40, seed=9, shape=CLASSIC_SHAPE))
    assert cache_filename(20, 2) == "special_masks_v1_20x4_seed2.npz"
    assert cache_filename(20, 2, shape=DealShape(extra_suits=1)) == (
        "special_masks_v1_20x5_seed2_deck1e0j0s.npz"
    )
    assert CLASSIC_SHAPE.is_classic and not DealShape(jokers=2).is_classic


@pytest.mark.parametrize(
    "shape", [DealShape(extra_suits=1), DealShape(jokers=2), DealShape(1, 0, 3)]
)
def test_12_a_variant_hands_mask_is_every_special_its_cards_make(shape: DealShape) -> None:
    simulated = simulate_deals(30, seed=4, shape=shape)
    dealt = deal_cards(30, seed=4, shape=shape)

    assert simulated.shape == shape and simulated.masks.shape == (30, shape.players)
    for d in range(30):
        for p in range(shape.players):
            cards = [ALL_CARDS[int(i)] for i in dealt[d, p]]
            expected = special_mask(qualifying_specials(cards))
            assert simulated.masks[d, p] == expected == hand_mask(dealt[d, p])


def test_12_4_sixteen_cards_make_more_specials_than_thirteen() -> None:
    thirteen = simulate_deals(150, seed=1, shape=DealShape(extra_suits=1))
    sixteen = simulate_deals(150, seed=1, shape=DealShape(extra_suits=1, spare_cards=3))
    assert np.count_nonzero(sixteen.masks) / sixteen.hands > (
        np.count_nonzero(thirteen.masks) / thirteen.hands
    )


def test_the_cache_file_keeps_its_deck(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    shape = DealShape.of(preset_config("duosanzhang"))
    built = load_or_simulate(tmp_path, 12, seed=2, shape=shape)
    path = tmp_path / cache_filename(12, 2, shape=shape)

    assert load_deals(path).shape == shape
    assert np.array_equal(load_deals(path).masks, built.masks)
    monkeypatch.setattr(stats, "simulate_deals", lambda *a, **k: pytest.fail("simulated"))
    assert load_or_simulate(tmp_path, 12, seed=2, shape=shape).shape == shape


def test_a_file_of_another_deck_is_simulated_again(tmp_path) -> None:
    shape = DealShape(jokers=2)
    path = tmp_path / cache_filename(10, 1, shape=shape)
    save_deals(path, simulate_deals(10, seed=1))  # classic deals under the jokers' name

    rebuilt = load_or_simulate(tmp_path, 10, seed=1, shape=shape)

    assert rebuilt.shape == shape and load_deals(path).shape == shape


def test_a_bad_deck_or_table_is_refused() -> None:
    with pytest.raises(ConfigError, match="extra_suits"):
        DealShape(extra_suits=3)
    with pytest.raises(ConfigError, match="jokers"):
        DealShape(jokers=1)
    with pytest.raises(ValueError, match="a 52-card deck deals 1 to 3 hands of 16"):
        deal_cards(1, seed=0, players=4, shape=DealShape(spare_cards=3))

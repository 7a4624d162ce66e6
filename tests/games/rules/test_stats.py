"""RULES.md §5 and §7.3 by simulation: how often each special counts, and its water per deal."""

from collections import Counter

import numpy as np
import pytest

from games.rules import stats
from games.rules.cards import DECK
from games.rules.config import DEFAULT_CONFIG, SPECIAL_IDS, RuleConfig
from games.rules.specials import detect_special, qualifying_specials
from games.rules.stats import (
    BIT,
    SimulatedDeals,
    StatsCacheError,
    cache_filename,
    counted_ranks,
    deal_cards,
    hand_mask,
    load_deals,
    load_or_simulate,
    save_deals,
    simulate_deals,
    special_mask,
    special_stats,
    specials_of_mask,
)

from .helpers import c
from .stats_helpers import NONE, TINY, deals_of


@pytest.fixture(scope="module")
def simulated() -> SimulatedDeals:
    return simulate_deals(300, seed=7)


def test_masks_use_one_bit_per_special_in_engine_order() -> None:
    assert list(BIT) == list(SPECIAL_IDS)
    assert sorted(BIT.values()) == [1 << i for i in range(len(SPECIAL_IDS))]
    assert specials_of_mask(special_mask(["dragon", "six_pairs"])) == {"dragon", "six_pairs"}


def test_5_hand_mask_is_every_special_the_cards_make() -> None:
    # Five pairs and trips can also be split into six pairs + 1 (RULES.md §5).
    cards = c("2S 2H 3S 3H 4S 4H 5S 5H 6S 6H 9S 9H 9D")
    assert specials_of_mask(hand_mask([card.index for card in cards])) == qualifying_specials(cards)
    assert {"five_pairs_trips", "six_pairs"} <= specials_of_mask(
        hand_mask([card.index for card in cards])
    )


def test_deals_are_whole_decks_and_reproducible() -> None:
    cards = deal_cards(50, seed=3)
    assert cards.shape == (50, 4, 13)
    assert all(sorted(deal.ravel().tolist()) == list(range(52)) for deal in cards)
    assert np.array_equal(cards, deal_cards(50, seed=3))
    assert not np.array_equal(cards, deal_cards(50, seed=4))


def test_same_seed_gives_the_same_masks(simulated: SimulatedDeals) -> None:
    again = simulate_deals(300, seed=7)
    assert again.masks.dtype == np.uint16
    assert again.masks.shape == (300, 4)
    assert np.array_equal(again.masks, simulated.masks)
    assert not np.array_equal(simulate_deals(300, seed=8).masks, simulated.masks)


def test_masks_do_not_depend_on_the_number_of_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats, "_CHUNK", 40)  # several chunks, so two processes really share
    alone = simulate_deals(120, seed=5)
    shared = simulate_deals(120, seed=5, workers=2)
    assert np.array_equal(alone.masks, shared.masks)


def test_progress_reports_every_chunk(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(stats, "_CHUNK", 10)
    seen: list[tuple[int, int]] = []
    simulate_deals(25, seed=1, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(10, 25), (20, 25), (25, 25)]


def test_5_frequencies_agree_with_direct_detection(simulated: SimulatedDeals) -> None:
    config = RuleConfig.from_dict({"specials": {"double_monster": {"enabled": True}}})
    cards = deal_cards(300, seed=7)
    hands = [[DECK[int(i)] for i in hand] for hand in cards.reshape(-1, 13)]
    counted = Counter(detect_special(hand, config) for hand in hands)
    made = Counter(sid for hand in hands for sid in qualifying_specials(hand))

    result = special_stats(simulated, config)

    assert result.hands == len(hands) == 1200
    for row in result.rows:
        assert row.counted == counted[row.id], row.id
        assert row.qualifying == made[row.id], row.id
    assert sum(row.counted for row in result.rows) == len(hands) - counted[None]
    assert made["six_pairs"] > 0  # the sample does exercise the comparison


def test_5_disabling_a_special_moves_its_hands_to_the_next_one_they_make() -> None:
    deals = deals_of(
        (("five_pairs_trips", "six_pairs"), ("five_pairs_trips", "six_pairs"), NONE, NONE),
        (("five_pairs_trips", "six_pairs"), ("six_pairs",), ("all_small",), NONE),
        (("all_small", "three_flushes"), NONE, NONE, NONE),
    )
    before = special_stats(deals, DEFAULT_CONFIG)
    after = special_stats(
        deals, RuleConfig.from_dict({"specials": {"five_pairs_trips": {"enabled": False}}})
    )
    assert (before["five_pairs_trips"].counted, before["six_pairs"].counted) == (3, 1)
    assert (after["five_pairs_trips"].counted, after["six_pairs"].counted) == (0, 4)
    assert after["five_pairs_trips"].rank is None
    assert after["five_pairs_trips"].qualifying == 3  # it is still made, it just never counts
    assert after["all_small"].counted == before["all_small"].counted == 2

    no_small = special_stats(
        deals, RuleConfig.from_dict({"specials": {"all_small": {"enabled": False}}})
    )
    assert no_small["all_small"].counted == 0
    assert no_small["three_flushes"].counted == 1


def test_7_3_expected_water_matches_a_hand_calculation() -> None:
    result = special_stats(TINY, DEFAULT_CONFIG)
    # Deal 1: six_pairs wins 4 from each of three players                      -> 12
    # Deal 2: dragon wins 36 x 3 = 108; six_pairs loses to it, wins 4 x 2 = 8
    # Deal 3: two three_flushes tie; each wins 3 from the two others: 6 + 6   -> 12
    # Deal 4: the first hand counts as three_straights (ranked above three_flushes): wins
    #         3 x 3 = 9; the three_flushes wins 3 x 2 = 6
    expected = {"six_pairs": 20, "dragon": 108, "three_flushes": 18, "three_straights": 9}
    for sid, won in expected.items():
        assert result[sid].water_won == won, sid
        assert result[sid].expected_water_per_deal == won / 4
    assert sum(row.water_won for row in result.rows) == sum(expected.values())
    assert result.expected_water_per_deal == sum(expected.values()) / 4
    assert result["six_pairs"].counted == 2
    assert result["three_flushes"].counted == 3  # the double hand counts once, higher up
    assert result["three_flushes"].qualifying == 4
    assert result["six_pairs"].frequency == 2 / 16
    assert result["six_pairs"].one_in == 8
    assert result["supreme_dragon"].one_in is None
    assert result.special_frequency == 7 / 16


def test_7_3_water_follows_the_configured_water_and_order() -> None:
    dearer = special_stats(TINY, RuleConfig.from_dict({"specials": {"six_pairs": {"water": 10}}}))
    assert dearer["six_pairs"].water_won == 10 * 3 + 10 * 2

    order = [sid for sid in SPECIAL_IDS if sid != "six_pairs"]
    order.insert(0, "six_pairs")
    six_pairs_first = special_stats(TINY, RuleConfig.from_dict({"special_order": order}))
    # Deal 2: now six_pairs beats the dragon: 4 x 3 = 12; the dragon wins 36 x 2 = 72.
    assert six_pairs_first["six_pairs"].water_won == 12 + 12
    assert six_pairs_first["dragon"].water_won == 72
    assert six_pairs_first["six_pairs"].rank == 1

    no_flushes = special_stats(
        TINY, RuleConfig.from_dict({"specials": {"three_flushes": {"enabled": False}}})
    )
    assert no_flushes["three_flushes"].water_won == 0
    assert no_flushes["three_straights"].water_won == 9  # now beats a plain hand instead


def test_counted_ranks_mark_hands_without_an_enabled_special() -> None:
    ranks = counted_ranks(TINY.masks, DEFAULT_CONFIG)
    none = len(DEFAULT_CONFIG.enabled_specials)
    assert ranks[0].tolist() == [10, none, none, none]  # six_pairs is the 11th enabled
    assert ranks[1].tolist() == [1, 10, none, none]


def test_rows_follow_the_configuration_order() -> None:
    result = special_stats(TINY, DEFAULT_CONFIG)
    assert [row.id for row in result.rows] == [s.id for s in DEFAULT_CONFIG.specials]
    enabled = [row.rank for row in result.rows if row.enabled]
    assert enabled == list(range(1, len(enabled) + 1))


def test_cache_round_trips_and_is_not_rebuilt(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    built = load_or_simulate(tmp_path, 20, seed=2)
    path = tmp_path / cache_filename(20, 2)
    assert path.exists()
    assert np.array_equal(load_deals(path).masks, built.masks)

    def fail(*args: object, **kwargs: object) -> SimulatedDeals:
        raise AssertionError("simulated again")

    monkeypatch.setattr(stats, "simulate_deals", fail)
    again = load_or_simulate(tmp_path, 20, seed=2)
    assert np.array_equal(again.masks, built.masks)
    assert again.seed == 2


def test_a_stale_or_corrupt_cache_is_rebuilt(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / cache_filename(10, 1)
    path.write_bytes(b"not an npz file")
    with pytest.raises(StatsCacheError):
        load_deals(path)
    rebuilt = load_or_simulate(tmp_path, 10, seed=1)
    assert rebuilt.deals == 10

    monkeypatch.setattr(stats, "FORMAT_VERSION", stats.FORMAT_VERSION + 1)
    with pytest.raises(StatsCacheError, match="other special hands"):
        load_deals(path)


def test_save_leaves_no_temporary_file(tmp_path) -> None:
    save_deals(tmp_path / "deals.npz", TINY)
    assert [p.name for p in tmp_path.iterdir()] == ["deals.npz"]
    assert np.array_equal(load_deals(tmp_path / "deals.npz").masks, TINY.masks)

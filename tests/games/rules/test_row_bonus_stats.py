"""RULES.md §7.1: what each row bonus moves per deal, from deals arranged as auto-arrange does."""

import itertools

import pytest

from games.rules.arrange import arrange
from games.rules.cards import ALL_CARDS
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.hands import ROWS, evaluate
from games.rules.row_bonus_stats import CHUNK, row_bonus_stats
from games.rules.scoring import Arranged, Seat, score_round
from games.rules.stats import DealShape, deal_cards


def _frozen_clock() -> float:
    return 0.0  # never past the budget: min_deals decides how many deals


def reference(config: RuleConfig, deals: int, seed: int) -> tuple[dict[str, int], dict[str, int]]:
    """The same figures through the scoring engine: each deal's row-playing hands as
    auto-arrange plays them (a hand that declares a special plays no rows), scored by
    ``score_round``; a row's winner (from the pair's row results) takes the bonus of its row's
    category."""
    held: dict[str, int] = {key: 0 for key, _ in config.row_bonus}
    won: dict[str, int] = {key: 0 for key, _ in config.row_bonus}
    shape = DealShape.of(config)
    for chunk in range(deals // CHUNK):
        for deal in deal_cards(CHUNK, seed + chunk, shape=shape):
            seats = []
            for i, hand in enumerate(deal):
                cards = [ALL_CARDS[int(c)] for c in hand]
                result = arrange(cards, config, limit=1, opponents=len(deal) - 1)
                best = result.best
                if result.special is None:  # a declared special plays no rows: left out
                    arranged = Arranged(best.front, best.middle, best.back)
                    seats.append(Seat(str(i), arranged, unused=best.unused))
            pairs = score_round(seats, config).pairs if len(seats) >= 2 else ()
            rows = {
                i: [evaluate(r, config.a2345) for r in seat.hand.rows()]
                for i, seat in enumerate(seats)
                if isinstance(seat.hand, Arranged)
            }
            for hands in rows.values():
                for row, rh in zip(ROWS, hands, strict=True):
                    if f"{row}.{rh.category.id}" in held:
                        held[f"{row}.{rh.category.id}"] += 1
            for pair in pairs:
                if pair.rows is None:
                    continue
                for k, row in enumerate(ROWS):
                    if pair.rows[k] == 0:
                        continue
                    winner = rows[pair.a][k] if pair.rows[k] > 0 else rows[pair.b][k]
                    key = f"{row}.{winner.category.id}"
                    if key in won:
                        won[key] += config.bonus(row, winner.category)
    return held, won


@pytest.mark.parametrize(
    "config",
    [
        DEFAULT_CONFIG,
        RuleConfig.from_dict({"row_water": 2, "row_bonus": {"front.trips": 5, "back.quads": 0}}),
        RuleConfig.from_dict({"extra_suits": 1}),
        RuleConfig.from_dict({"jokers": 2}),
        RuleConfig.from_dict({"spare_cards": 3}),
    ],
    ids=["classic", "row_water_2", "extra_suit", "jokers", "spare_cards"],
)
def test_7_1_row_bonus_figures_match_the_scoring_engine(config: RuleConfig) -> None:
    stats = row_bonus_stats(
        config,
        seed=5,
        budget_seconds=0,
        min_deals=2 * CHUNK,
        max_deals=2 * CHUNK,
        clock=_frozen_clock,
    )
    held, won = reference(config, 2 * CHUNK, 5)
    assert stats.deals == 2 * CHUNK
    assert stats.hands == 2 * CHUNK * DealShape.of(config).players
    assert {r.key: r.held for r in stats.rows} == held
    assert {r.key: r.water_won for r in stats.rows} == won
    assert stats.expected_water_per_deal == pytest.approx(sum(won.values()) / stats.deals)


def test_7_1_a_bonus_of_0_moves_no_water_but_its_hands_are_still_counted() -> None:
    config = RuleConfig.from_dict({"row_bonus": {"back.quads": 0}})
    stats = row_bonus_stats(
        config, seed=1, budget_seconds=0, min_deals=60, max_deals=60, clock=_frozen_clock
    )
    quads = stats["back.quads"]
    assert quads.bonus == 0 and quads.water_won == 0
    assert quads.held > 0  # 60 deals of 4 hands: quads in the back row are dealt
    assert stats["front.trips"].water_won > 0


def test_7_1_figures_come_with_intervals_that_hold_them() -> None:
    stats = row_bonus_stats(
        DEFAULT_CONFIG, seed=3, budget_seconds=0, min_deals=40, max_deals=40, clock=_frozen_clock
    )
    for row in stats.rows:
        assert row.frequency_interval.low <= row.frequency <= row.frequency_interval.high
        assert (
            row.water_interval.low - 1e-9
            <= row.expected_water_per_deal
            <= row.water_interval.high + 1e-9
        )
    assert stats.total_interval.low <= stats.expected_water_per_deal <= stats.total_interval.high


def test_the_same_seed_gives_the_same_figures_however_fast_the_machine() -> None:
    ticks = itertools.count()
    fast = row_bonus_stats(
        DEFAULT_CONFIG, seed=2, budget_seconds=1e9, max_deals=20, clock=_frozen_clock
    )
    slow = row_bonus_stats(
        DEFAULT_CONFIG,
        seed=2,
        budget_seconds=5,
        min_deals=20,
        max_deals=20,
        clock=lambda: float(next(ticks) * 100),
    )
    assert fast == slow


def test_the_budget_stops_after_the_minimum() -> None:
    ticks = itertools.count()
    seen: list[tuple[int, int]] = []
    stats = row_bonus_stats(
        DEFAULT_CONFIG,
        seed=2,
        budget_seconds=1,
        min_deals=CHUNK,
        max_deals=1000,
        clock=lambda: float(next(ticks) * 10),
        progress=lambda d, t: seen.append((d, t)),
    )
    assert stats.deals == CHUNK and seen == [(CHUNK, 1000)]


@pytest.mark.parametrize(
    "kwargs", [{"budget_seconds": -1}, {"budget_seconds": 1, "min_deals": 5, "max_deals": 4}]
)
def test_a_sample_that_cannot_be_is_refused(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="sample"):
        row_bonus_stats(DEFAULT_CONFIG, **kwargs)  # type: ignore[arg-type]

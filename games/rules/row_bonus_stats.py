"""What each row bonus of a configuration is worth to the table (RULES.md §7.1).

A row bonus is won by the winner of a row with a strong hand there (``front.trips``,
``middle.full_house``, …). How often it changes hands depends on how people arrange, so unlike
the special hands (:mod:`games.rules.stats`, which only need each hand's cards) this deals
rounds of the configuration's deck to a full table and arranges every hand as auto-arrange does
(RULES.md §6: the engine's best arrangement under this configuration); a hand that makes an
enabled special declares it (a choice timeout counts as Yes, §5.1) and plays no rows. Every
pair of row-playing hands then compares its rows, and the winner of a row takes its bonus.

Arranging costs milliseconds a hand, so the figures come from a sample that fits a time budget,
each with its 95 % confidence interval (:func:`games.rules.stats.mean_interval`, over deals,
which are independent). Chunk ``i`` of the sample is dealt from ``seed + i``, so the same seed
and number of deals always give the same figures, however fast the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .arrange import arrange
from .cards import ALL_CARDS
from .config import RuleConfig
from .hands import ROWS, Category, RowHand, evaluate
from .stats import DealShape, Interval, Progress, deal_cards, mean_interval, wilson_interval

# Deals arranged between two looks at the clock (and two progress reports).
CHUNK = 10
DEFAULT_SEED = 13


@dataclass(frozen=True, slots=True)
class RowBonusStat:
    """One row bonus ``row.category`` of a configuration over a sample of deals.

    - ``held``: hands whose arranged row ``row`` is of ``category`` (whatever the bonus; a hand
      that declares a special plays no rows); ``frequency = held / hands``.
    - ``water_won``: the bonus water holders won by winning that row, over all deals (each
      pair once; guns, which may multiply a pair's water, are not included).
      ``expected_water_per_deal = water_won / deals``: what the bonus moves per deal at a full
      table (× base score for coins).
    """

    key: str
    row: str
    category: Category
    bonus: int
    held: int
    water_won: int
    hands: int
    deals: int
    frequency_interval: Interval
    water_interval: Interval

    @property
    def frequency(self) -> float:
        return self.held / self.hands if self.hands else 0.0

    @property
    def one_in(self) -> float | None:
        return self.hands / self.held if self.held else None

    @property
    def expected_water_per_deal(self) -> float:
        return self.water_won / self.deals if self.deals else 0.0


@dataclass(frozen=True, slots=True)
class RowBonusStats:
    """Every row bonus of a configuration (in its ``row_bonus`` order) over one sample."""

    deals: int
    hands: int
    players: int
    seed: int
    rows: tuple[RowBonusStat, ...]
    total_interval: Interval  # all row-bonus water per deal
    specials_declared: int  # hands that declared a special (and played no rows)

    def __getitem__(self, key: str) -> RowBonusStat:
        for row in self.rows:
            if row.key == key:
                return row
        raise KeyError(key)

    @property
    def expected_water_per_deal(self) -> float:
        """All row-bonus water that changes hands per deal."""
        return sum(r.water_won for r in self.rows) / self.deals if self.deals else 0.0


def _arranged_rows(
    cards: list[int], config: RuleConfig, opponents: int
) -> tuple[RowHand, RowHand, RowHand] | None:
    """The rows auto-arrange plays with these cards, or None when they declare a special."""
    result = arrange([ALL_CARDS[i] for i in cards], config, limit=1, opponents=opponents)
    if result.special is not None:
        return None
    best = result.best
    front, middle, back = (
        evaluate(row, config.a2345) for row in (best.front, best.middle, best.back)
    )
    return front, middle, back


def _deal_figures(
    hands: list[list[int]], config: RuleConfig, index: dict[str, int]
) -> tuple[np.ndarray, np.ndarray, int]:
    """One deal: (held count per key, bonus water won per key, hands declaring a special)."""
    held = np.zeros(len(index), dtype=np.int64)
    won = np.zeros(len(index), dtype=np.int64)
    opponents = len(hands) - 1
    rows = [_arranged_rows(h, config, opponents) for h in hands]
    for hand in rows:
        if hand is None:
            continue
        for row, rh in zip(ROWS, hand, strict=True):
            at = index.get(f"{row}.{rh.category.id}")
            if at is not None:
                held[at] += 1
    for i, a in enumerate(rows):
        for b in rows[i + 1 :]:
            if a is None or b is None:
                continue
            for k, row in enumerate(ROWS):
                result = a[k].compare(b[k])
                if result == 0:
                    continue
                winner = a[k] if result > 0 else b[k]
                key = f"{row}.{winner.category.id}"
                at = index.get(key)
                if at is not None:
                    won[at] += config.bonus(row, winner.category)
    return held, won, sum(1 for r in rows if r is None)


def row_bonus_stats(
    config: RuleConfig,
    *,
    seed: int = DEFAULT_SEED,
    budget_seconds: float,
    max_deals: int = 2_000,
    min_deals: int = CHUNK,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> RowBonusStats:
    """Deals of ``config``'s deck at a full table, ``CHUNK`` at a time, arranged and compared
    until ``budget_seconds`` have passed (at least ``min_deals``, at most ``max_deals``); the
    figures of each row bonus with their 95 % intervals. ``progress(done, max_deals)`` after
    each chunk."""
    if budget_seconds < 0 or min_deals < 0 or max_deals < min_deals:
        raise ValueError("a sample needs 0 <= min_deals <= max_deals and a budget >= 0")
    shape = DealShape.of(config)
    players = shape.players
    keys = [key for key, _ in config.row_bonus]
    index = {key: i for i, key in enumerate(keys)}
    held_rows: list[np.ndarray] = []
    won_rows: list[np.ndarray] = []
    declared = 0
    start = clock()
    done = 0
    chunk = 0
    while done < max_deals and (done < min_deals or clock() - start < budget_seconds):
        size = min(CHUNK, max_deals - done)
        for deal in deal_cards(size, seed + chunk, shape=shape):
            held, won, specials = _deal_figures([list(map(int, h)) for h in deal], config, index)
            held_rows.append(held)
            won_rows.append(won)
            declared += specials
        chunk += 1
        done += size
        if progress is not None:
            progress(done, max_deals)
    width = len(keys)
    held_all = np.array(held_rows, dtype=np.int64).reshape(-1, width)
    won_all = np.array(won_rows, dtype=np.float64).reshape(-1, width)
    hands = done * players
    rows = []
    for at, key in enumerate(keys):
        row, category = key.split(".", 1)
        held_count = int(held_all[:, at].sum())
        rows.append(
            RowBonusStat(
                key=key,
                row=row,
                category=Category.from_id(category),
                bonus=config.bonus(row, Category.from_id(category)),
                held=held_count,
                water_won=round(float(won_all[:, at].sum())),
                hands=hands,
                deals=done,
                frequency_interval=wilson_interval(held_count, hands),
                water_interval=mean_interval(won_all[:, at]),
            )
        )
    return RowBonusStats(
        deals=done,
        hands=hands,
        players=players,
        seed=seed,
        rows=tuple(rows),
        total_interval=mean_interval(won_all.sum(axis=1)),
        specials_declared=declared,
    )

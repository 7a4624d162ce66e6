"""Hand-built simulations for the statistics tests (RULES.md §5, §7.3)."""

import numpy as np

from games.rules.stats import SimulatedDeals, special_mask


def deals_of(*deals: tuple[tuple[str, ...], ...]) -> SimulatedDeals:
    """Hand-built deals: each a tuple of four hands, each hand the specials it makes."""
    masks = np.array([[special_mask(hand) for hand in deal] for deal in deals], dtype=np.uint16)
    return SimulatedDeals(masks, seed=0)


NONE: tuple[str, ...] = ()
# Four deals whose special water test_stats.py works out by hand (default ranking among the
# enabled: dragon 2nd, six_pairs 11th, three_straights 12th, three_flushes 13th; water 36,
# 4, 3, 3).
TINY = deals_of(
    (("six_pairs",), NONE, NONE, NONE),
    (("dragon",), ("six_pairs",), NONE, NONE),
    (("three_flushes",), ("three_flushes",), NONE, NONE),
    (("three_straights", "three_flushes"), ("three_flushes",), NONE, NONE),
)

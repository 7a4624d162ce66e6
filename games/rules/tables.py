"""Row-strength tables: how often a row hand beats the rows opponents actually play.

``data/row_tables.npz`` holds, for each ``a2345`` mode and each row, the sorted distinct keys
of the rows played by the reference policy over many random deals with their counts, plus the
exact distribution of all 2,598,960 five-card and 22,100 three-card hands (for the
"sum of row strengths" baseline); ``data/row_tables_<deck>.npz`` the same for a variant deck.
The expected-water model (:mod:`games.rules.expected_water`) reads them through :func:`load`;
:mod:`games.rules.build_tables` builds them (``python -m games.rules.build_tables``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from .config import RuleConfig
from .hands import ROWS
from .vectorized import IntArray

DATA = Path(__file__).with_name("data") / "row_tables.npz"
MODES = ("lowest", "second")


@dataclass(frozen=True, eq=False)
class KeyDistribution:
    """Sorted distinct keys with their counts; answers P(other < key) and P(other == key)."""

    keys: IntArray
    counts: IntArray

    @property
    def total(self) -> int:
        return int(self.counts.sum())

    def less_equal(self, keys: IntArray) -> tuple[np.ndarray, np.ndarray]:
        """Fractions of the distribution strictly below, and equal to, each key."""
        cum = np.concatenate(([0], np.cumsum(self.counts)))
        lo = np.searchsorted(self.keys, keys, side="left")
        hi = np.searchsorted(self.keys, keys, side="right")
        n = float(cum[-1])
        return cum[lo] / n, (cum[hi] - cum[lo]) / n

    @staticmethod
    def of(samples: IntArray) -> KeyDistribution:
        keys, counts = np.unique(samples, return_counts=True)
        return KeyDistribution(keys.astype(np.int64), counts.astype(np.int64))


@dataclass(frozen=True, eq=False)
class Tables:
    rows: dict[tuple[str, str], KeyDistribution]  # (mode, row) -> rows played by the reference
    all5: dict[str, KeyDistribution]  # mode -> every 5-card hand
    all3: KeyDistribution
    gun_rate: float  # how often one reference hand guns another
    deals: int


def deck_name(config: RuleConfig) -> str:
    """The name of a configuration's deck for its row tables: ``classic``, or e.g. ``e1j0s3``
    (extra suits, jokers, spare cards; RULES.md §12)."""
    if config.is_classic_deck:
        return "classic"
    return f"e{config.extra_suits}j{config.jokers}s{config.spare_cards}"


def data_path(name: str) -> Path:
    return DATA if name == "classic" else DATA.with_name(f"row_tables_{name}.npz")


@lru_cache(maxsize=8)
def load(name: str = "classic") -> Tables:
    """The row tables of a deck (``deck_name``). A deck without its own file uses the classic
    tables (every preset deck has its own: ``python -m games.rules.build_tables --all``)."""
    path = data_path(name)
    if not path.exists():
        path = DATA
    with np.load(path) as z:
        rows = {
            (m, r): KeyDistribution(z[f"{m}_{r}_keys"], z[f"{m}_{r}_counts"])
            for m in MODES
            for r in ROWS
        }
        all5 = {m: KeyDistribution(z[f"all5_{m}_keys"], z[f"all5_{m}_counts"]) for m in MODES}
        all3 = KeyDistribution(z["all3_keys"], z["all3_counts"])
        return Tables(rows, all5, all3, float(z["gun_rate"]), int(z["deals"]))

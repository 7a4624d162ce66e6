"""Building the row-strength tables of :mod:`games.rules.tables`, reproducibly (fixed seeds).

``python -m games.rules.build_tables [DECK|--all] [DEALS]`` rebuilds a deck's tables
(:func:`build`: iterate the model from a row-strength baseline over simulated deals).

The rows opponents "actually play" must be the rows the engine itself plays with these very
tables (a fixed point): otherwise the model values a row against opponents who do not play
like it. ``python -m games.rules.build_tables --refine`` (:func:`refine`) iterates towards it
with damping. The classic tables were refined so (10,000 deals × 6 iterations, seed 20261202):
their category shares match the engine's play to about 0.02, and a rollout player that
samples the unseen cards gains nothing measurable over ``best`` (benchmarks/rollout.py).
"""

from __future__ import annotations

import sys
from itertools import combinations
from pathlib import Path

import numpy as np

from .arrange import Policy
from .cards import ALL_CARDS
from .config import RuleConfig
from .expected_water import water_model
from .hands import ROWS, evaluate
from .tables import MODES, KeyDistribution, Tables, data_path
from .vectorized import (
    B3,
    B5,
    IntArray,
    all_combinations,
    eval3,
    eval5,
    eval_cards3,
    eval_cards5,
    sort_desc,
)


def all_hands() -> tuple[dict[str, KeyDistribution], KeyDistribution]:
    ranks = np.arange(52, dtype=np.int64) // 4 + 2
    suits = np.arange(52, dtype=np.int64) % 4
    # Cards numbered high rank first, so every combination lists ranks high to low.
    ranks, suits = ranks[::-1].copy(), suits[::-1].copy()
    combos5 = np.fromiter(
        (i for c in combinations(range(52), 5) for i in c), dtype=np.int64
    ).reshape(-1, 5)
    all5 = {}
    for mode in MODES:
        keys = np.concatenate(
            [
                eval5(*sort_desc(ranks[chunk], suits[chunk]), mode)[0]
                for chunk in np.array_split(combos5, 26)
            ]
        )
        all5[mode] = KeyDistribution.of(keys)
    combos3 = np.array(list(combinations(range(52), 3)), dtype=np.int64)
    return all5, KeyDistribution.of(eval3(ranks[combos3]))


def _deck_hands(config: RuleConfig) -> tuple[dict[str, KeyDistribution], KeyDistribution]:
    """Every 5-card and 3-card hand of a variant deck (for the row-strength baseline)."""
    deck = np.array([c.index for c in config.deck.cards], dtype=np.int64)
    combos5 = all_combinations(len(deck), 5)
    all5 = {}
    for mode in MODES:
        keys = np.concatenate(
            [eval_cards5(deck[chunk], mode)[0] for chunk in np.array_split(combos5, 32)]
        )
        all5[mode] = KeyDistribution.of(keys)
    return all5, KeyDistribution.of(eval_cards3(deck[all_combinations(len(deck), 3)]))


def build(
    deals: int = 10_000,
    iterations: int = 2,
    seed: int = 20261129,
    config: RuleConfig | None = None,
) -> dict[str, np.ndarray]:
    """Rebuild the tables of ``config``'s deck (default: the classic deck): start from the
    row-strength-sum policy, then iterate the model.

    Each iteration deals ``deals`` random 4-player deals, arranges every hand with the current
    policy, and records the rows played; the next policy is the expected-water model on them.
    """
    cfg = config or RuleConfig()
    deck = np.array([c.index for c in cfg.deck.cards], dtype=np.int64)
    size = cfg.hand_size
    all5, all3 = all_hands() if cfg.deck.is_classic else _deck_hands(cfg)
    out: dict[str, np.ndarray] = {}
    for m in MODES:
        out[f"all5_{m}_keys"], out[f"all5_{m}_counts"] = all5[m].keys, all5[m].counts
    out["all3_keys"], out["all3_counts"] = all3.keys, all3.counts
    tables: Tables | None = None
    gun_rate = 0.0
    for it in range(iterations + 1):
        rng = np.random.default_rng(seed + it)
        name = "strength_sum" if tables is None else "best"
        policy = Policy(name, cfg)
        played: list[list[int]] = []
        guns = pairs = 0
        for _ in range(deals):
            dealt = deck[rng.permutation(len(deck))]
            rows_keys = []
            for p in range(4):
                cards = [int(x) for x in dealt[size * p : size * p + size]]
                idx = policy.choose(cards, tables=tables or _bootstrap(out))
                played.append(idx)
                rows_keys.append(idx)
            for a in range(4):
                for b in range(a + 1, 4):
                    pairs += 1
                    guns += _gun(rows_keys[a], rows_keys[b]) != 0
        gun_rate = guns / pairs
        arr = np.array(played, dtype=np.int64)
        for m in MODES:
            out[f"{m}_front_keys"], out[f"{m}_front_counts"] = _dist(eval_cards3(arr[:, :3]))
            out[f"{m}_middle_keys"], out[f"{m}_middle_counts"] = _dist(
                eval_cards5(arr[:, 3:8], m)[0]
            )
            out[f"{m}_back_keys"], out[f"{m}_back_counts"] = _dist(eval_cards5(arr[:, 8:], m)[0])
        out["gun_rate"] = np.array(gun_rate)
        out["deals"] = np.array(deals)
        tables = from_arrays(out)
        print(f"iteration {it}: policy {policy.name}, gun rate {gun_rate:.4f}", file=sys.stderr)
    return out


def refine(
    name: str = "classic",
    deals: int = 10_000,
    iterations: int = 4,
    weight: float = 0.5,
    seed: int = 20261202,
) -> dict[str, np.ndarray]:
    """Move a deck's stored tables towards a fixed point of the engine's own play.

    The stored row tables are the rows one policy played, but the engine then plays with
    those tables and its rows differ (its front row is a pair more often than the tables
    say): the model values rows against opponents who do not play like it. Each iteration
    deals ``deals`` 4-player deals, arranges every hand with ``best`` on the current tables,
    and mixes the rows played into the tables with ``weight`` (the rest is the previous
    tables: damping, so that the iteration settles instead of swinging between two policies);
    the gun rate likewise. Prints, per iteration, how far the rows played were from the tables
    used (the largest gap of a row's category shares).
    """
    overrides, _default = DECKS[name]
    cfg = RuleConfig.from_dict(overrides)
    deck = np.array([c.index for c in cfg.deck.cards], dtype=np.int64)
    size = cfg.hand_size
    with np.load(data_path(name)) as z:
        out = {key: z[key] for key in z.files}
    tables = from_arrays(out)
    for it in range(iterations):
        water_model.cache_clear()
        rng = np.random.default_rng(seed + it)
        policy = Policy("best", cfg)
        played: list[list[int]] = []
        guns = pairs = 0
        for _ in range(deals):
            dealt = deck[rng.permutation(len(deck))]
            seats = [
                policy.choose([int(x) for x in dealt[size * p : size * p + size]], tables=tables)
                for p in range(4)
            ]
            played.extend(seats)
            for a in range(4):
                for b in range(a + 1, 4):
                    pairs += 1
                    guns += _gun(seats[a], seats[b]) != 0
        arr = np.array(played, dtype=np.int64)
        gap = 0.0
        for m in MODES:
            rows = {
                "front": eval_cards3(arr[:, :3]),
                "middle": eval_cards5(arr[:, 3:8], m)[0],
                "back": eval_cards5(arr[:, 8:], m)[0],
            }
            for row, keys in rows.items():
                old = KeyDistribution(out[f"{m}_{row}_keys"], out[f"{m}_{row}_counts"])
                new = KeyDistribution.of(keys)
                gap = max(gap, _category_gap(old, new, row))
                merged = mix(old, new, weight)
                out[f"{m}_{row}_keys"], out[f"{m}_{row}_counts"] = merged.keys, merged.counts
        rate = guns / pairs
        out["gun_rate"] = np.array((1 - weight) * float(out["gun_rate"]) + weight * rate)
        out["deals"] = np.array(deals)
        tables = from_arrays(out)
        print(
            f"iteration {it}: largest category gap {gap:.3f}, gun rate played {rate:.4f}, "
            f"tables {float(out['gun_rate']):.4f}",
            file=sys.stderr,
        )
    water_model.cache_clear()
    return out


def mix(old: KeyDistribution, new: KeyDistribution, weight: float) -> KeyDistribution:
    """``(1 - weight) * old + weight * new``, as counts on the union of their keys (a million
    in all, so that rare rows keep a count)."""
    keys = np.union1d(old.keys, new.keys)
    scale = 1_000_000

    def shares(d: KeyDistribution) -> np.ndarray:
        out = np.zeros(len(keys))
        out[np.searchsorted(keys, d.keys)] = d.counts / d.total
        return out

    mixed = (1 - weight) * shares(old) + weight * shares(new)
    counts = np.maximum(np.rint(mixed * scale).astype(np.int64), (mixed > 0).astype(np.int64))
    keep = counts > 0
    return KeyDistribution(keys[keep].astype(np.int64), counts[keep])


def _category_gap(old: KeyDistribution, new: KeyDistribution, row: str) -> float:
    divisor = B3 if row == "front" else B5
    cats = np.union1d(old.keys // divisor, new.keys // divisor)

    def shares(d: KeyDistribution) -> np.ndarray:
        return np.array([d.counts[d.keys // divisor == c].sum() / d.total for c in cats])

    return float(np.abs(shares(old) - shares(new)).max())


def _gun(a: list[int], b: list[int]) -> int:
    """+1 if a guns b (all three rows, run-over counted), -1 if b guns a, else 0."""
    res = [
        evaluate([ALL_CARDS[i] for i in a[s]]).compare(evaluate([ALL_CARDS[i] for i in b[s]]))
        for s in (slice(0, 3), slice(3, 8), slice(8, 13))
    ]
    if min(res) >= 0 and max(res) == 1:
        return 1
    if max(res) <= 0 and min(res) == -1:
        return -1
    return 0


def _dist(samples: IntArray) -> tuple[IntArray, IntArray]:
    d = KeyDistribution.of(samples)
    return d.keys, d.counts


def _bootstrap(arrays: dict[str, np.ndarray]) -> Tables:
    all5 = {m: KeyDistribution(arrays[f"all5_{m}_keys"], arrays[f"all5_{m}_counts"]) for m in MODES}
    all3 = KeyDistribution(arrays["all3_keys"], arrays["all3_counts"])
    return Tables({}, all5, all3, 0.0, 0)


def from_arrays(arrays: dict[str, np.ndarray]) -> Tables:
    base = _bootstrap(arrays)
    rows = {
        (m, r): KeyDistribution(arrays[f"{m}_{r}_keys"], arrays[f"{m}_{r}_counts"])
        for m in MODES
        for r in ROWS
    }
    return Tables(rows, base.all5, base.all3, float(arrays["gun_rate"]), int(arrays["deals"]))


# The decks of the presets (RULES.md §12.6) that have their own tables, with the deals each
# is built from (16-card hands are slower to arrange, so fewer).
DECKS: dict[str, tuple[dict[str, int], int]] = {
    "classic": ({}, 10_000),
    "e1j0s0": ({"extra_suits": 1}, 3_000),
    "e0j2s0": ({"jokers": 2}, 3_000),
    "e1j0s3": ({"extra_suits": 1, "spare_cards": 3}, 1_000),
}


def rebuild(name: str, deals: int | None = None) -> Path:
    overrides, default_deals = DECKS[name]
    arrays = build(deals=deals or default_deals, config=RuleConfig.from_dict(overrides))
    path = data_path(name)
    path.parent.mkdir(exist_ok=True)
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    print(f"wrote {path}", file=sys.stderr)
    return path


def main() -> None:
    """``python -m games.rules.build_tables [DECK|--all] [DEALS]``: DECK is one of ``DECKS``
    (default ``classic``); ``--all`` rebuilds every deck. ``python -m games.rules.build_tables
    --refine [DECK] [DEALS] [ITERATIONS]`` moves a deck's stored tables towards the fixed
    point of the engine's own play (:func:`refine`) and saves them."""
    args = sys.argv[1:]
    if args[:1] == ["--refine"]:
        name = args[1] if len(args) > 1 else "classic"
        arrays = refine(
            name,
            deals=int(args[2]) if len(args) > 2 else 10_000,
            iterations=int(args[3]) if len(args) > 3 else 6,
        )
        np.savez_compressed(data_path(name), **arrays)  # type: ignore[arg-type]
        print(f"wrote {data_path(name)}", file=sys.stderr)
        return
    names = list(DECKS) if args[:1] == ["--all"] else [args[0]] if args else ["classic"]
    if args and args[0].isdigit():  # DEALS alone: the classic deck
        names, args = ["classic"], ["classic", *args]
    deals = int(args[1]) if len(args) > 1 else None
    for name in names:
        rebuild(name, deals)


if __name__ == "__main__":
    main()

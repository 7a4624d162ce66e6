"""Speed of the rules engine, printed as figures (``make bench`` / ``python -m benchmarks.engine``).

Targets: arrange (best + 10 suggestions) <= 2 ms median; special detection <= 0.2 ms;
a 4-player score <= 1 ms; process start of the command line <= 0.5 s. Timings are wall-clock on
this machine, so they move with whatever else runs; the script reports medians and p99.

Variant decks, as ratios to the classic arrange measured in the same run: arrange
with 2 jokers in hand <= 3x; arrange with 16 cards (spare cards) <= 25x; special detection with
jokers or with 16 cards <= 1 ms median.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from games.rules.arrange import arrange, best_arrangement
from games.rules.cards import ALL_CARDS, DECK, Card
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.hands import evaluate
from games.rules.presets import preset_config
from games.rules.scoring import Seat, score_round
from games.rules.specials import detect_special
from games.rules.vectorized import eval5, sort_desc

ROOT = Path(__file__).resolve().parent.parent


def _hands(rng: np.random.Generator, n: int, size: int = 13) -> list[list[Card]]:
    return [[DECK[i] for i in rng.choice(52, size, replace=False)] for _ in range(n)]


def _times(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t)
    return out


def _line(name: str, value: str, target: str = "") -> None:
    print(f"{name:<46} {value:>22}  {target}")


def bench_eval(rng: np.random.Generator) -> None:
    n = 1_000_000
    idx = np.array([rng.choice(52, 5, replace=False) for _ in range(n // 100)])
    idx = np.concatenate([idx] * 100)
    ranks, suits = sort_desc(idx // 4 + 2, idx % 4)
    t = time.perf_counter()
    eval5(ranks, suits)
    vec = n / (time.perf_counter() - t)
    hands = _hands(rng, 100_000, 5)
    t = time.perf_counter()
    for h in hands:
        evaluate(h)
    scalar = len(hands) / (time.perf_counter() - t)
    _line("5-card evaluations / s (vectorised, 1M batch)", f"{vec:,.0f}")
    _line("5-card evaluations / s (scalar, one at a time)", f"{scalar:,.0f}")


def bench_arrange(rng: np.random.Generator) -> float:
    hands = _hands(rng, 1000)
    arrange(hands[0])  # load tables, build caches
    times = [t * 1e3 for h in hands for t in _times(lambda h=h: arrange(h, limit=10), 1)]
    med, p99 = statistics.median(times), float(np.percentile(times, 99))
    _line("arrange, best + 10 suggestions: median ms", f"{med:.3f}", "target <= 2 ms")
    _line("arrange, best + 10 suggestions: p99 ms", f"{p99:.3f}")
    return med


def _variant_hands(
    rng: np.random.Generator, config: RuleConfig, n: int, jokers: int = 0
) -> list[list[Card]]:
    """Hands of ``config``'s deck, each holding ``jokers`` jokers."""
    deck = [c for c in config.deck.cards if not c.is_joker]
    out = []
    for _ in range(n):
        picked = [deck[i] for i in rng.choice(len(deck), config.hand_size - jokers, replace=False)]
        out.append(picked + [ALL_CARDS[78], ALL_CARDS[79]][:jokers])
    return out


def bench_variants(rng: np.random.Generator, classic_ms: float) -> None:
    """Arrange and special detection with the variant decks."""
    laizi, spare = preset_config("laizi"), preset_config("duosanzhang")
    for label, config, jokers, n, target in (
        ("arrange, 2 jokers (laizi)", laizi, 2, 500, 3),
        ("arrange, 16 cards (duosanzhang)", spare, 0, 200, 25),
    ):
        hands = _variant_hands(rng, config, n, jokers)
        arrange(hands[0], config)
        times = [t * 1e3 for h in hands for t in _times(lambda h=h, c=config: arrange(h, c), 1)]
        med = statistics.median(times)
        _line(f"{label}: median ms", f"{med:.3f}")
        _line(f"{label}: p99 ms", f"{np.percentile(times, 99):.3f}")
        _line(
            f"{label}: × classic",
            f"{med / classic_ms:.2f}",
            f"target <= {target}x",
        )
    jokers16 = RuleConfig.from_dict({"jokers": 2, "extra_suits": 1, "spare_cards": 3})
    for label, config, jokers in (
        ("special, 2 jokers (laizi)", laizi, 2),
        ("special, 16 cards (duosanzhang)", spare, 0),
        ("special, 16 cards + 2 jokers", jokers16, 2),
    ):
        hands = _variant_hands(rng, config, 5000, jokers)
        times = [
            t * 1e6 for h in hands for t in _times(lambda h=h, c=config: detect_special(h, c), 1)
        ]
        _line(
            f"{label}: median µs",
            f"{statistics.median(times):.1f}",
            "target <= 1000 µs",
        )


def bench_special(rng: np.random.Generator) -> None:
    hands = _hands(rng, 20_000)
    times = [
        t * 1e6 for h in hands for t in _times(lambda h=h: detect_special(h, DEFAULT_CONFIG), 1)
    ]
    _line(
        "special detection: median µs per hand",
        f"{statistics.median(times):.1f}",
        "target <= 200 µs",
    )
    _line(
        "special detection: mean µs / p99 µs",
        f"{statistics.fmean(times):.1f} / {np.percentile(times, 99):.1f}",
    )


def bench_score(rng: np.random.Generator) -> None:
    rounds = []
    for _ in range(500):
        deck = [DECK[i] for i in rng.permutation(52)]
        rounds.append(
            [
                Seat(str(p), best_arrangement(deck[13 * p : 13 * p + 13]), balance=50_000)
                for p in range(4)
            ]
        )
    times = [t * 1e6 for r in rounds for t in _times(lambda r=r: score_round(r, DEFAULT_CONFIG), 1)]
    _line(
        "score, 4-player round: median µs", f"{statistics.median(times):.1f}", "target <= 1000 µs"
    )
    _line("score, 4-player round: p99 µs", f"{np.percentile(times, 99):.1f}")


def _cli(command: str, request: dict[str, object]) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "games.rules", command],
        input=json.dumps(request).encode(),
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t


def bench_cli() -> None:
    compare = {"a": ["AS", "AH", "3D"], "b": ["KS", "KH", "QD", "2C", "3C"]}
    hand = [str(c) for c in DECK[::4]]
    _cli("compare", compare)
    starts = [_cli("compare", compare) for _ in range(10)]
    arranges = [_cli("arrange", {"cards": hand}) for _ in range(10)]
    _line(
        "CLI process start, compare: median s",
        f"{statistics.median(starts):.3f}",
        "target <= 0.5 s",
    )
    _line("CLI process start + numpy + 1 arrange: median s", f"{statistics.median(arranges):.3f}")
    batch = {
        "batch": [{"cards": [str(c) for c in h]} for h in _hands(np.random.default_rng(1), 1000)]
    }
    t = _cli("arrange", batch)
    _line("CLI batch of 1,000 arrange requests: s", f"{t:.2f}", f"({t:.2f} ms per hand)")


def main() -> None:
    rng = np.random.default_rng(20261129)
    print(f"Shisanshui engine benchmark — Python {sys.version.split()[0]}, numpy {np.__version__}")
    bench_eval(rng)
    classic_ms = bench_arrange(rng)
    bench_special(rng)
    bench_score(rng)
    bench_variants(rng, classic_ms)
    bench_cli()


if __name__ == "__main__":
    main()

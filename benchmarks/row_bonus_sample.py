"""How fast the rule admin's row-bonus figures give a first answer, on every deck.

    python -m benchmarks.row_bonus_sample [--seconds S]

The change page of a rule configuration shows what each row bonus moves per deal
(games.rules.row_bonus_stats: deals of the configuration's deck at a full table, every hand
arranged as auto-arrange does, every pair's rows compared). Its first answer is a sample of
``--seconds`` (the admin's ROW_BONUS_SAMPLE_SECONDS, 8); this prints, for each deck, the deals
that fit, the time the answer took, and all row-bonus water per deal with its 95 % interval,
so that "a first answer within ~10 s, with a stated confidence" can be read off.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from benchmarks.host_probes import host_speed_ms
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.rules.presets import preset_config
from games.rules.row_bonus_stats import row_bonus_stats

DECKS: tuple[tuple[str, RuleConfig], ...] = (
    ("classic 52", DEFAULT_CONFIG),
    ("extra suit 65 (多一色)", preset_config("duoyise")),
    ("two extra suits 78 (多两色)", RuleConfig.from_dict({"extra_suits": 2})),
    ("jokers 54 (癞子)", preset_config("laizi")),
    ("spare cards 65/16 (多三张)", preset_config("duosanzhang")),
)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="the sample's budget")
    args = parser.parse_args(argv)
    if args.seconds < 0:
        parser.error("--seconds must not be negative")
    print(
        f"row-bonus sample of {args.seconds:g} s per deck "
        f"(host speed {host_speed_ms():.0f} ms: benchmarks.host_probes)"
    )
    print(f"  {'deck':<28} {'deals':>6} {'hands':>6} {'answer':>8}  bonus water per deal (95 %)")
    for name, config in DECKS:
        started = time.perf_counter()
        stats = row_bonus_stats(config, budget_seconds=args.seconds)
        took = time.perf_counter() - started
        half = stats.total_interval.half_width
        print(
            f"  {name:<28} {stats.deals:>6} {stats.hands:>6} {took:>7.1f}s"
            f"  {stats.expected_water_per_deal:.3f} ± {half:.3f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

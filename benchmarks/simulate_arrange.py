"""How good is the engine's best arrangement? A reproducible simulation.

``python -m benchmarks.simulate_arrange [DEALS] [WORKERS] [PRESET ...]`` (default 20,000 deals,
2 workers, the classic game). ``--presets`` instead of preset names runs every preset of RULES.md
§12.6 (4 players; 5 for ``duoyise``).

Each deal gives one hand per seat from the preset's deck. For every seat in turn, that seat
arranges with the engine's ``best`` while the others use a baseline heuristic
(:data:`BASELINES`), and the round is scored by the engine under the preset's configuration
(:func:`play`). The script prints, for each baseline, the mean over deals of the ``best``
seat's water with its standard error. The deals come from a fixed seed, so the figures are
reproducible.
"""

from __future__ import annotations

import math
import sys
import time
from functools import partial
from multiprocessing import Pool

import numpy as np

from games.rules.arrange import Policy
from games.rules.cards import ALL_CARDS
from games.rules.config import RuleConfig
from games.rules.presets import PRESET_IDS, preset_config
from games.rules.scoring import Arranged, Seat, score_round

SEED = 20261129
# The baselines: ``strongest_back``, the foul-free split with the strongest back, then middle,
# then front; ``strength_sum``, the foul-free split maximising the sum of the rows' percentiles
# among all hands of their size.
BASELINES = ("strongest_back", "strength_sum")


def players_for(preset: str) -> int:
    return 5 if preset == "duoyise" else 4


def _arranged(order: list[int]) -> Arranged:
    cards = [ALL_CARDS[i] for i in order]
    return Arranged(tuple(cards[:3]), tuple(cards[3:8]), tuple(cards[8:]))


def play(deal: int, preset: str = "classic") -> dict[str, float]:
    """The ``best`` seat's mean water in this deal against each baseline, over its rotations.

    The rounds are scored with every rule of the preset (row bonuses, guns, run-over, home
    runs). Every hand is arranged normally (a special hand's declaration is a separate
    choice); with spare cards (16-card hands) the baselines play the 13 highest cards (jokers
    first) and ``best`` chooses its 13 with the model."""
    config: RuleConfig = preset_config(preset)
    players = players_for(preset)
    deck = np.array([c.index for c in config.deck.cards])
    size = config.hand_size
    dealt = deck[np.random.default_rng([SEED, deal]).permutation(len(deck))]
    hands = [[int(x) for x in dealt[size * p : size * p + size]] for p in range(players)]
    best = [_arranged(Policy("best", config).choose(h)) for h in hands]
    out = {}
    for name in BASELINES:
        base = [_arranged(Policy(name, config).choose(h)) for h in hands]
        total = 0
        for seat in range(players):
            seats = [Seat(str(p), best[p] if p == seat else base[p]) for p in range(players)]
            total += score_round(seats, config).water[seat]
        out[name] = total / players
    return out


def run(preset: str, deals: int, workers: int) -> None:
    start = time.perf_counter()
    with Pool(workers) as pool:
        results = pool.map(partial(play, preset=preset), range(deals), chunksize=25)
    elapsed = time.perf_counter() - start
    print(f"{preset}: {deals:,} {players_for(preset)}-player deals, seed {SEED} ({elapsed:.0f} s)")
    for name in BASELINES:
        values = np.array([r[name] for r in results])
        mean, se = values.mean(), values.std(ddof=1) / math.sqrt(len(values))
        print(f"  vs {name:<15} mean {mean:+.3f} water (SE {se:.3f}, z = {mean / se:.1f})")


def main() -> None:
    args = sys.argv[1:]
    deals = int(args[0]) if args else 20_000
    workers = int(args[1]) if len(args) > 1 else 2
    presets = args[2:] or ["classic"]
    if presets == ["--presets"]:
        presets = list(PRESET_IDS)
    print("water per deal of the seat using `best` against seats using the baseline:")
    for preset in presets:
        run(preset, deals, workers)


if __name__ == "__main__":
    main()

"""How a bot of each level plays a hand (bot levels).

Four levels, weakest first: ``easy`` (a greedy beginner), ``normal`` (a fair player),
``strong`` (the engine's best arrangement, RULES.md §6) and ``expert`` (a rollout player).
:func:`level_play` says how each arranges its cards, :func:`level_plays_special` whether it
declares a special it is dealt. Every level is deterministic for the same cards, configuration
and opponents (the expert's samples are seeded by its cards), so a replayed task submits the
same arrangement. ``python -m benchmarks.bot_levels`` measures each level's water per deal
against the others.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from .advice import special_advice
from .arrange import Policy, arrange
from .cards import ALL_CARDS, Card
from .config import RuleConfig
from .scoring import Arranged, Seat, score_round

Level = Literal["easy", "normal", "strong", "expert"]
LEVELS: tuple[Level, ...] = ("easy", "normal", "strong", "expert")
DEFAULT_LEVEL: Level = "strong"
EXPERT_SAMPLES = 48  # deals of the unseen cards per decision (about a second on one core)
# With spare cards each opponent's best of 16 costs ~8 times more: fewer deals, same time.
EXPERT_SPARE_DIVISOR = 8
EXPERT_CANDIDATES = 10  # the best arrangement of each of this many category triples

_POLICIES = {"easy": "strongest_back", "normal": "strength_sum"}


@dataclass(frozen=True, slots=True)
class Play:
    arranged: Arranged
    unused: tuple[Card, ...] = ()  # with spare cards: the 3 set aside


def level_play(
    cards: Sequence[Card],
    config: RuleConfig,
    level: str,
    *,
    opponents: int = 3,
    samples: int = EXPERT_SAMPLES,
) -> Play:
    """The arrangement a bot of ``level`` submits for its dealt ``cards``.

    - ``easy``: the foul-free split with the strongest back, then middle, then front
      (``Policy("strongest_back")``);
    - ``normal``: the split whose rows rank highest among all hands of their size
      (``Policy("strength_sum")``);
    - ``strong``: the engine's best arrangement (RULES.md §6) against ``opponents`` (at a full
      table, what hosting and auto-arrange submit);
    - ``expert``: deals the cards it cannot see to its opponents ``samples`` times, lets them
      play the engine's best, scores each of the best arrangements of its distinct category
      triples exactly (every rule of the configuration) and plays the one that wins most on
      average (with spare cards, over fewer deals: each costs more).

    With spare cards (RULES.md §12.4) ``easy`` and ``normal`` keep the 13 highest cards
    (jokers first); ``strong`` and ``expert`` choose their 13 with the model.
    """
    cards = tuple(cards)
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r} (one of {', '.join(LEVELS)})")
    if level in _POLICIES:
        order = Policy(_POLICIES[level], config).choose([c.index for c in cards])
        chosen = [ALL_CARDS[i] for i in order]
        played = Arranged(tuple(chosen[:3]), tuple(chosen[3:8]), tuple(chosen[8:]))
        return Play(played, tuple(c for c in cards if c not in set(chosen)))
    top = arrange(
        cards, config, limit=EXPERT_CANDIDATES if level == "expert" else 1, opponents=opponents
    )
    if level == "strong" or len(top.suggestions) == 1:
        return Play(top.best.arranged(), top.best.unused)
    candidates = [Play(s.arranged(), s.unused) for s in top.suggestions]
    if config.spare_cards:
        samples = max(6, samples // EXPERT_SPARE_DIVISOR)
    return _rollout(cards, config, candidates, opponents, samples)


def level_plays_special(
    cards: Sequence[Card], config: RuleConfig, special: str, level: str, *, opponents: int = 3
) -> bool:
    """Whether a bot of ``level`` declares the special it was dealt: ``easy`` always does,
    the others follow the special advice (:mod:`games.rules.advice`)."""
    if level not in LEVELS:
        raise ValueError(f"unknown bot level {level!r} (one of {', '.join(LEVELS)})")
    if level == "easy":
        return True
    return special_advice(cards, config, special, opponents).recommend == "special"


def _rollout(
    cards: tuple[Card, ...],
    config: RuleConfig,
    candidates: list[Play],
    opponents: int,
    samples: int,
) -> Play:
    """The candidate with the most water on average over ``samples`` deals of the unseen
    cards to ``opponents`` who play the engine's best (ties: the earlier, i.e. the model's)."""
    seen = set(cards)
    unseen = [c for c in config.deck.cards if c not in seen]
    size = config.hand_size
    digest = hashlib.sha256(" ".join(sorted(str(c) for c in cards)).encode()).digest()
    rng = random.Random(int.from_bytes(digest[:8], "big"))
    totals = [0] * len(candidates)
    for _ in range(max(1, samples)):
        rng.shuffle(unseen)
        others = []
        for k in range(opponents):
            best = arrange(unseen[size * k : size * (k + 1)], config, limit=1, opponents=opponents)
            others.append(Seat(str(k + 1), best.best.arranged(), unused=best.best.unused))
        for i, play in enumerate(candidates):
            seats = [Seat("0", play.arranged, unused=play.unused), *others]
            totals[i] += score_round(seats, config).water[0]
    best_index = max(range(len(candidates)), key=lambda i: (totals[i], -i))
    return candidates[best_index]

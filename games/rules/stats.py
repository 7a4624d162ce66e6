"""How often each special hand occurs, and what it is worth to the table (RULES.md §5, §7.3).

Two parts, so that the slow one is done once:

1. :func:`simulate_deals` deals ``n`` rounds of one :class:`DealShape` (the classic deck, or a
   variant deck of RULES.md §12, at a full table) from a seeded generator and records, for
   every hand, the specials it qualifies for as a bit mask. Detecting the specials of every
   hand is the slow part, so callers keep the result (:func:`load_or_simulate` caches it as an
   ``.npz`` file); the same seed, size and deck always give the same masks, whatever the
   configuration's other rules.
2. :func:`special_stats` evaluates one configuration over those masks with numpy, in
   milliseconds, so an admin can see what a change of water or order does. What its figures
   mean: :class:`SpecialStat`.

The full simulation of a big deck takes minutes. :func:`sample_deals` is the fast path: as many
deals as fit in a time budget (seconds), and :func:`special_intervals` states each figure of
such a sample with its 95 % confidence interval.
"""

from __future__ import annotations

import math
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from .cards import ALL_CARDS, Deck
from .config import SPECIAL_BY_ID, SPECIAL_IDS, RuleConfig
from .errors import RulesError
from .specials import qualifying_specials

MaskArray = npt.NDArray[np.uint16]
CardArray = npt.NDArray[np.int8]

PLAYERS = 4  # the classic deck's full table
DEFAULT_DEALS = 100_000
DEFAULT_SEED = 13
# Bump when the detection of specials changes: a cache of another version is never used.
FORMAT_VERSION = 1
# Deals drawn from the generator at a time: fixed, so a seed always gives the same deals.
_CHUNK = 5_000

BIT: dict[str, int] = {sid: 1 << i for i, sid in enumerate(SPECIAL_IDS)}
assert len(BIT) <= 16, "masks are 16-bit"

Progress = Callable[[int, int], None]


class StatsCacheError(RulesError):
    """A cached simulation that cannot be used (another format, other specials, corrupt)."""

    code = "stats_cache"


@dataclass(frozen=True, slots=True)
class DealShape:
    """What one simulated deal is (RULES.md §12): the deck of these settings, dealt to a full
    table (its seats), ``hand_size`` cards each. Invalid settings raise ``ConfigError``."""

    extra_suits: int = 0
    jokers: int = 0
    spare_cards: int = 0

    def __post_init__(self) -> None:
        self.rules()  # validates

    @staticmethod
    def of(config: RuleConfig) -> DealShape:
        """The deals of ``config``'s deck (its other rules do not change the masks)."""
        return DealShape(config.extra_suits, config.jokers, config.spare_cards)

    def rules(self) -> RuleConfig:
        return RuleConfig(
            extra_suits=self.extra_suits, jokers=self.jokers, spare_cards=self.spare_cards
        )

    @property
    def deck(self) -> Deck:
        return self.rules().deck

    @property
    def hand_size(self) -> int:
        return self.rules().hand_size

    @property
    def players(self) -> int:
        """A full table: the deck's seats (4 with the classic deck)."""
        return self.rules().max_seats

    @property
    def is_classic(self) -> bool:
        return self == CLASSIC_SHAPE

    @property
    def tag(self) -> str:
        """The cache file name's mark of a variant deck ("" for the classic one)."""
        if self.is_classic:
            return ""
        return f"_deck{self.extra_suits}e{self.jokers}j{self.spare_cards}s"


CLASSIC_SHAPE = DealShape()


@dataclass(frozen=True, slots=True)
class SimulatedDeals:
    """The specials every hand of ``deals`` simulated deals qualifies for.

    ``masks[d, p]`` is the mask of player ``p``'s hand in deal ``d``; ``shape`` is the deck
    the hands were dealt from.
    """

    masks: MaskArray
    seed: int
    shape: DealShape = CLASSIC_SHAPE

    @property
    def deals(self) -> int:
        return int(self.masks.shape[0])

    @property
    def players(self) -> int:
        return int(self.masks.shape[1])

    @property
    def hands(self) -> int:
        return self.deals * self.players


def special_mask(special_ids: Sequence[str] | frozenset[str]) -> int:
    """The mask of a set of specials (bit ``i`` is ``SPECIAL_IDS[i]``)."""
    mask = 0
    for sid in special_ids:
        mask |= BIT[sid]
    return mask


def specials_of_mask(mask: int) -> frozenset[str]:
    return frozenset(sid for sid, bit in BIT.items() if mask & bit)


def hand_mask(card_indices: Sequence[int] | npt.NDArray[np.integer[Any]]) -> int:
    """The mask of every special (enabled or not) these cards (card indices) make: 13 cards,
    or 16 with spare cards (every special some 13 of them make, §12.4); jokers wild (RULES.md
    §12)."""
    return special_mask(qualifying_specials([ALL_CARDS[int(i)] for i in card_indices]))


def deal_cards(
    n_deals: int, seed: int, players: int | None = None, *, shape: DealShape = CLASSIC_SHAPE
) -> CardArray:
    """``n_deals`` deals of ``players`` (default: a full table) hands of ``shape.hand_size``
    card indices from ``shape``'s deck, reproducible from ``seed``."""
    if players is None:
        players = shape.players
    size, hand = shape.deck.size, shape.hand_size
    if n_deals < 0:
        raise ValueError("n_deals cannot be negative")
    if not 1 <= players <= shape.players:
        raise ValueError(f"a {size}-card deck deals 1 to {shape.players} hands of {hand}")
    rng = np.random.default_rng(seed)
    out = np.empty((n_deals, players, hand), dtype=np.int8)
    deck = np.array([card.index for card in shape.deck.cards], dtype=np.int8)
    for start in range(0, n_deals, _CHUNK):
        count = min(_CHUNK, n_deals - start)
        decks = rng.permuted(np.tile(deck, (count, 1)), axis=1)
        out[start : start + count] = decks[:, : players * hand].reshape(count, players, hand)
    return out


def _masks_of(hands: CardArray) -> MaskArray:
    flat = hands.reshape(-1, hands.shape[-1])
    masks = np.fromiter((hand_mask(h) for h in flat), dtype=np.uint16, count=len(flat))
    return masks.reshape(hands.shape[:-1])


def _chunks(cards: CardArray) -> Iterator[CardArray]:
    for start in range(0, len(cards), _CHUNK):
        yield cards[start : start + _CHUNK]


def simulate_deals(
    n_deals: int = DEFAULT_DEALS,
    seed: int = DEFAULT_SEED,
    *,
    players: int | None = None,
    workers: int = 1,
    progress: Progress | None = None,
    shape: DealShape = CLASSIC_SHAPE,
) -> SimulatedDeals:
    """Deal and detect; the same ``(n_deals, seed, players, shape)`` always gives the same
    masks (``players`` defaults to a full table of the deck).

    ``workers > 1`` detects in that many processes; the result does not depend on it.
    ``progress(done, total)`` is called after each chunk of deals.
    """
    cards = deal_cards(n_deals, seed, players, shape=shape)
    masks = np.empty(cards.shape[:2], dtype=np.uint16)
    done = 0

    def store(chunk: MaskArray) -> None:
        nonlocal done
        masks[done : done + len(chunk)] = chunk
        done += len(chunk)
        if progress is not None:
            progress(done, n_deals)

    if workers > 1 and n_deals > _CHUNK:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            for chunk in pool.map(_masks_of, _chunks(cards)):
                store(chunk)
    else:
        for part in _chunks(cards):
            store(_masks_of(part))
    return SimulatedDeals(masks, seed, shape)


# -- the cache file -------------------------------------------------------------------------


def cache_filename(
    n_deals: int, seed: int, players: int | None = None, *, shape: DealShape = CLASSIC_SHAPE
) -> str:
    """The cache file's name: a variant deck's carries ``shape.tag``, the classic deck's
    nothing more."""
    players = shape.players if players is None else players
    return f"special_masks_v{FORMAT_VERSION}_{n_deals}x{players}_seed{seed}{shape.tag}.npz"


def save_deals(path: Path, deals: SimulatedDeals) -> None:
    """Write atomically (a temporary file renamed into place), so readers never see half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez_compressed(
                f,
                masks=deals.masks,
                seed=np.int64(deals.seed),
                version=np.int64(FORMAT_VERSION),
                special_ids=np.array(SPECIAL_IDS),
                deck=np.array(
                    [deals.shape.extra_suits, deals.shape.jokers, deals.shape.spare_cards],
                    dtype=np.int64,
                ),
            )
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def load_deals(path: Path) -> SimulatedDeals:
    """Read a cache file; :class:`StatsCacheError` if it was made for other rules or is bad."""
    try:
        with np.load(path, allow_pickle=False) as data:
            version = int(data["version"])
            ids = tuple(str(x) for x in data["special_ids"])
            masks = np.asarray(data["masks"], dtype=np.uint16)
            seed = int(data["seed"])
            # A file without a deck is of the classic deck.
            deck = [int(x) for x in data["deck"]] if "deck" in data.files else [0, 0, 0]
    except (OSError, KeyError, ValueError) as exc:
        raise StatsCacheError(f"cannot read {path.name}: {exc}") from None
    if version != FORMAT_VERSION or ids != SPECIAL_IDS:
        raise StatsCacheError(f"{path.name} was made for other special hands")
    if masks.ndim != 2:
        raise StatsCacheError(f"{path.name} does not hold a table of masks")
    try:
        shape = DealShape(*deck)
    except (TypeError, RulesError):
        raise StatsCacheError(f"{path.name} names no valid deck: {deck}") from None
    return SimulatedDeals(masks, seed, shape)


def load_or_simulate(
    directory: Path,
    n_deals: int = DEFAULT_DEALS,
    seed: int = DEFAULT_SEED,
    *,
    rebuild: bool = False,
    workers: int = 1,
    progress: Progress | None = None,
    shape: DealShape = CLASSIC_SHAPE,
) -> SimulatedDeals:
    """The cached simulation of ``shape``'s deck in ``directory``, simulated and saved first
    when missing or stale."""
    path = directory / cache_filename(n_deals, seed, shape=shape)
    if not rebuild and path.exists():
        try:
            deals = load_deals(path)
        except StatsCacheError:
            pass
        else:
            if deals.deals == n_deals and deals.seed == seed and deals.shape == shape:
                return deals
    deals = simulate_deals(n_deals, seed, workers=workers, progress=progress, shape=shape)
    save_deals(path, deals)
    return deals


# -- one configuration ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpecialStat:
    """One special hand ``s`` under one configuration, over ``deals`` simulated deals.

    - ``qualifying``: hands that make ``s``, whether or not it is enabled or outranked.
    - ``counted``: hands that count as ``s`` — ``s`` is the highest-ranked *enabled* special
      the hand makes (§5). ``frequency = counted / hands`` and ``one_in = hands / counted``.
    - ``water_won``: every holder is assumed to declare (a choice timeout counts as Yes, §5.1).
      In each deal a holder of ``s`` wins ``water(s)`` from each of the other players who
      holds no special or a lower-ranked one; the same special on both sides is a tie (0);
      against a higher-ranked special the holder loses *that* special's water, which is
      counted in that special's row, not here (§7.3). ``expected_water_per_deal = water_won /
      deals``: the water that holders of ``s`` win per deal at a full table (× base score for
      coins). Summed over the specials it is all the special-hand water that changes hands
      per deal.
    """

    id: str
    zh: str
    en: str
    enabled: bool
    water: int
    rank: int | None  # 1 = highest among the enabled specials; None when disabled
    qualifying: int  # hands that make it, enabled or not
    counted: int  # hands that count as it (§5: the highest-ranked enabled special they make)
    water_won: int  # water its holders won over all deals (see the class docstring)
    hands: int
    deals: int

    @property
    def frequency(self) -> float:
        """Share of hands that count as this special."""
        return self.counted / self.hands if self.hands else 0.0

    @property
    def one_in(self) -> float | None:
        """One hand in this many counts as this special; None when none did."""
        return self.hands / self.counted if self.counted else None

    @property
    def expected_water_per_deal(self) -> float:
        return self.water_won / self.deals if self.deals else 0.0


@dataclass(frozen=True, slots=True)
class SpecialStats:
    """Every special of a configuration (in its ranking order) over one simulation."""

    deals: int
    hands: int
    seed: int
    rows: tuple[SpecialStat, ...]

    def __getitem__(self, special_id: str) -> SpecialStat:
        for row in self.rows:
            if row.id == special_id:
                return row
        raise KeyError(special_id)

    @property
    def special_frequency(self) -> float:
        """Share of hands that count as some enabled special."""
        return sum(r.counted for r in self.rows) / self.hands if self.hands else 0.0

    @property
    def expected_water_per_deal(self) -> float:
        """All special-hand water that changes hands per deal."""
        return sum(r.water_won for r in self.rows) / self.deals if self.deals else 0.0


def counted_ranks(masks: MaskArray, config: RuleConfig) -> npt.NDArray[np.int64]:
    """For each hand, the rank (0 = highest) of the enabled special it counts as; ``k`` (the
    number of enabled specials) for a hand that makes none."""
    enabled = config.enabled_specials
    wide = masks.astype(np.int64)
    ranks = np.full(masks.shape, len(enabled), dtype=np.int64)
    for rank in range(len(enabled) - 1, -1, -1):  # the highest-ranked one is written last
        ranks[(wide & BIT[enabled[rank].id]) != 0] = rank
    return ranks


def special_stats(deals: SimulatedDeals, config: RuleConfig) -> SpecialStats:
    """Frequencies and expected water of every special of ``config`` (:class:`SpecialStat`)."""
    enabled = config.enabled_specials
    k = len(enabled)
    ranks = counted_ranks(deals.masks, config)
    # beaten[d, p]: opponents of p in deal d holding no special or a lower-ranked one.
    beaten = (ranks[:, None, :] > ranks[:, :, None]).sum(axis=2)
    water = np.array([s.water for s in enabled] + [0], dtype=np.int64)
    won = beaten * water[ranks]
    counted = np.bincount(ranks.ravel(), minlength=k + 1)
    won_by_rank = np.bincount(ranks.ravel(), weights=won.ravel(), minlength=k + 1)
    wide = deals.masks.astype(np.int64)
    rank_of = {s.id: i for i, s in enumerate(enabled)}
    rows = []
    for rule in config.specials:
        info = SPECIAL_BY_ID[rule.id]
        rank = rank_of.get(rule.id)
        rows.append(
            SpecialStat(
                id=rule.id,
                zh=info.zh,
                en=info.en,
                enabled=rule.enabled,
                water=rule.water,
                rank=None if rank is None else rank + 1,
                qualifying=int(np.count_nonzero(wide & BIT[rule.id])),
                counted=0 if rank is None else int(counted[rank]),
                water_won=0 if rank is None else round(float(won_by_rank[rank])),
                hands=deals.hands,
                deals=deals.deals,
            )
        )
    return SpecialStats(deals.deals, deals.hands, deals.seed, tuple(rows))


# -- the fast path: a sample with its confidence --------------------------------------------

# Deals detected between two looks at the clock (and two progress reports) when sampling.
SAMPLE_CHUNK = 100
# The normal quantile of a two-sided 95 % interval.
Z_95 = 1.959964


def sample_deals(
    seed: int = DEFAULT_SEED,
    *,
    budget_seconds: float,
    max_deals: int = DEFAULT_DEALS,
    min_deals: int = SAMPLE_CHUNK,
    shape: DealShape = CLASSIC_SHAPE,
    progress: Progress | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> SimulatedDeals:
    """Deals of ``shape`` simulated ``SAMPLE_CHUNK`` at a time until ``budget_seconds`` have
    passed (at least ``min_deals``, at most ``max_deals``): a first answer in bounded time for
    any deck. Chunk ``i`` is ``simulate_deals(SAMPLE_CHUNK, seed + i)``, so the same seed and
    number of deals always give the same masks, however fast the machine. ``progress(done,
    max_deals)`` after each chunk."""
    if budget_seconds < 0 or min_deals < 0 or max_deals < min_deals:
        raise ValueError("a sample needs 0 <= min_deals <= max_deals and a budget >= 0")
    start = clock()
    parts: list[MaskArray] = []
    done = 0
    chunk_index = 0
    while done < max_deals and (done < min_deals or clock() - start < budget_seconds):
        size = min(SAMPLE_CHUNK, max_deals - done)
        parts.append(simulate_deals(size, seed + chunk_index, shape=shape).masks)
        chunk_index += 1
        done += size
        if progress is not None:
            progress(done, max_deals)
    masks = np.concatenate(parts) if parts else np.empty((0, shape.players), dtype=np.uint16)
    return SimulatedDeals(masks, seed, shape)


@dataclass(frozen=True, slots=True)
class Interval:
    """A 95 % confidence interval ``[low, high]``."""

    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def wilson_interval(successes: int, trials: int, z: float = Z_95) -> Interval:
    """The Wilson score interval of a proportion (sound near 0, where specials live)."""
    if trials <= 0:
        return Interval(0.0, 1.0)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return Interval(max(0.0, centre - spread), min(1.0, centre + spread))


def mean_interval(values: npt.NDArray[np.float64], z: float = Z_95) -> Interval:
    """The normal interval of the mean of independent ``values`` (one per deal)."""
    n = len(values)
    if n == 0:
        return Interval(0.0, 0.0)
    mean = float(values.mean())
    if n == 1:
        return Interval(mean, mean)
    spread = z * float(values.std(ddof=1)) / math.sqrt(n)
    return Interval(mean - spread, mean + spread)


@dataclass(frozen=True, slots=True)
class SpecialInterval:
    """The 95 % intervals of one special's ``frequency`` and ``expected_water_per_deal``."""

    id: str
    frequency: Interval
    expected_water_per_deal: Interval


def special_intervals(deals: SimulatedDeals, config: RuleConfig) -> dict[str, SpecialInterval]:
    """95 % confidence intervals of :func:`special_stats`'s figures over ``deals``, by special:
    frequency (Wilson, over hands; the hands of one deal are treated as independent, which
    they nearly are) and expected water per deal (normal, over deals, which are independent),
    plus ``"*"`` for any special and for all special water. A disabled special's are 0."""
    enabled = config.enabled_specials
    k = len(enabled)
    ranks = counted_ranks(deals.masks, config)
    beaten = (ranks[:, None, :] > ranks[:, :, None]).sum(axis=2)
    water = np.array([s.water for s in enabled] + [0], dtype=np.int64)
    won = (beaten * water[ranks]).astype(np.float64)
    hands = deals.hands
    out: dict[str, SpecialInterval] = {}
    zero = Interval(0.0, 0.0)
    for rank, rule in enumerate(enabled):
        held = ranks == rank
        out[rule.id] = SpecialInterval(
            rule.id,
            wilson_interval(int(held.sum()), hands),
            mean_interval((won * held).sum(axis=1)),
        )
    for rule in config.specials:
        out.setdefault(rule.id, SpecialInterval(rule.id, zero, zero))
    out["*"] = SpecialInterval(
        "*", wilson_interval(int((ranks < k).sum()), hands), mean_interval(won.sum(axis=1))
    )
    return out

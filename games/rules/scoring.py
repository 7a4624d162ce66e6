"""Scoring a round (RULES.md §7.1–7.3) and turning it into coins (§7.4–7.5).

Every pair of players is scored on its own; a player's water is the sum over its opponents,
so scoring is zero-sum and antisymmetric by construction, and adding a player never changes
another pair's water — except through the home run, which by definition looks at the table.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .cards import Card, ensure_distinct
from .config import RuleConfig
from .errors import (
    BadInputError,
    ConfigError,
    FoulError,
    InvalidCardError,
    NotSpecialError,
    WrongCountError,
)
from .hands import ROWS, RowHand, check_foul, evaluate
from .settlement import Settlement, settle
from .specials import detect_special, makes_special


@dataclass(frozen=True, slots=True)
class Arranged:
    front: tuple[Card, ...]
    middle: tuple[Card, ...]
    back: tuple[Card, ...]

    @property
    def cards(self) -> tuple[Card, ...]:
        return self.front + self.middle + self.back

    def rows(self) -> tuple[tuple[Card, ...], tuple[Card, ...], tuple[Card, ...]]:
        return self.front, self.middle, self.back


@dataclass(frozen=True, slots=True)
class Declared:
    """A special hand played as such (RULES.md §5.1)."""

    special: str
    cards: tuple[Card, ...]


@dataclass(frozen=True, slots=True)
class Seat:
    id: str
    hand: Arranged | Declared
    balance: int | None = None  # None: enough to pay anything
    escaped: bool = False
    unused: tuple[Card, ...] = ()  # the spare cards set aside (RULES.md §12.4), if given


@dataclass(frozen=True, slots=True)
class PairResult:
    """What seat ``a`` wins from seat ``b``, itemised (negative when a loses)."""

    a: int
    b: int
    rows: tuple[int, int, int] | None  # a's result per row; None when a special is involved
    row_water: int
    bonus_water: int
    gun: str | None  # "gun" / "home_run" (whoever shoots), None
    shooter: int | None
    gun_water: int
    special_water: int
    water: int


@dataclass(frozen=True, slots=True)
class RoundResult:
    seats: tuple[Seat, ...]
    specials: tuple[str | None, ...]  # the special each seat is scored by
    water: tuple[int, ...]
    coins: tuple[int, ...]
    pairs: tuple[PairResult, ...]
    home_run: int | None  # the seat that made a home run
    settlement: Settlement
    base_score: int


def verify_seats(seats: Sequence[Seat], config: RuleConfig) -> tuple[str | None, ...]:
    """Check a round's hands; return the special each seat is scored by (None: normal).

    A declared special must be enabled and made by the cards; when the cards make a
    higher-ranked enabled special too, that one counts (RULES.md §5).
    """
    if not 2 <= len(seats) <= config.max_seats:
        raise WrongCountError(
            f"a round has 2 to {config.max_seats} players with this deck, got {len(seats)}"
        )
    ids = [s.id for s in seats]
    if len(set(ids)) != len(ids):
        raise BadInputError("player ids must be distinct")
    deck = config.deck
    for seat in seats:
        if seat.unused and len(seat.unused) != config.spare_cards:
            raise WrongCountError(f"player {seat.id}: {config.spare_cards} unused cards, no other")
        for card in seat.hand.cards + seat.unused:
            if card.index >= 52 and card not in deck:
                raise InvalidCardError(f"card {card} is not in this deck ({deck.describe()})")
    ensure_distinct(c for s in seats for c in s.hand.cards + s.unused)
    specials: list[str | None] = []
    for seat in seats:
        hand = seat.hand
        if seat.balance is not None and seat.balance < 0:
            raise BadInputError(f"player {seat.id}: balance cannot be negative")
        if isinstance(hand, Declared):
            if len(hand.cards) != 13:
                raise WrongCountError(f"player {seat.id}: a special hand has 13 cards")
            try:
                rule = config.special(hand.special)
            except ConfigError:
                raise NotSpecialError(
                    f"player {seat.id}: unknown special {hand.special!r}"
                ) from None
            if not rule.enabled:
                raise NotSpecialError(f"player {seat.id}: special {hand.special} is disabled")
            if not makes_special(hand.cards, hand.special):
                raise NotSpecialError(f"player {seat.id}: the cards do not make {hand.special}")
            specials.append(detect_special(hand.cards, config))
        else:
            for row, cards in zip(ROWS, hand.rows(), strict=True):
                need = 3 if row == "front" else 5
                if len(cards) != need:
                    raise WrongCountError(f"player {seat.id}: {row} row needs {need} cards")
            specials.append(None)
    return tuple(specials)


def score_round(seats: Sequence[Seat], config: RuleConfig) -> RoundResult:
    """Score and settle one round. Raises a :class:`RulesError` on any invalid hand."""
    seats = tuple(seats)
    specials = verify_seats(seats, config)
    n = len(seats)
    rows: list[tuple[RowHand, RowHand, RowHand] | None] = []
    for seat in seats:
        hand = seat.hand
        if isinstance(hand, Arranged):
            evaluated = tuple(evaluate(c, config.a2345) for c in hand.rows())
            front, middle, back = evaluated
            try:
                check_foul(front, middle, back)
            except FoulError as exc:
                raise FoulError(f"player {seat.id}: {exc.message}", rows=exc.rows) from None
            rows.append((front, middle, back))
        else:
            rows.append(None)

    # Row results and guns for every normal pair.
    results: dict[tuple[int, int], tuple[int, int, int]] = {}
    guns: dict[tuple[int, int], int] = {}  # (i, j) -> shooter
    for i in range(n):
        for j in range(i + 1, n):
            ri, rj = rows[i], rows[j]
            if ri is None or rj is None:
                continue
            res = (ri[0].compare(rj[0]), ri[1].compare(rj[1]), ri[2].compare(rj[2]))
            results[(i, j)] = res
            for shooter, sign in ((i, 1), (j, -1)):
                signed = [sign * r for r in res]
                if _is_gun(signed, config.run_over_counts_as_gun):
                    guns[(i, j)] = shooter
    home_run = None
    if n >= config.home_run_min_players and all(r is not None for r in rows):
        for i in range(n):
            if all(guns.get((min(i, j), max(i, j))) == i for j in range(n) if j != i):
                home_run = i

    pairs: list[PairResult] = []
    pair_water = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            pair = _score_pair(i, j, rows, specials, results, guns, home_run, config)
            pairs.append(pair)
            pair_water[i][j], pair_water[j][i] = pair.water, -pair.water
    water = tuple(sum(row) for row in pair_water)
    base = config.base_score
    settlement = settle(
        [[w * base for w in row] for row in pair_water],
        [s.balance for s in seats],
        [s.escaped for s in seats],
        penalty=config.penalty_multiplier * base,
        escape_covers_losses=config.escape_covers_losses,
    )
    return RoundResult(
        seats,
        specials,
        water,
        tuple(w * base for w in water),
        tuple(pairs),
        home_run,
        settlement,
        base,
    )


def row_bonus(row: str, result: int, a: RowHand, b: RowHand, config: RuleConfig) -> int:
    """The row bonus ``a`` wins from ``b`` in ``row`` (RULES.md §7.1), given ``result`` =
    ``a.compare(b)``: the winner's bonus for its hand, negative when ``b`` won, 0 on a tie."""
    if result > 0:
        return config.bonus(row, a.category)
    if result < 0:
        return -config.bonus(row, b.category)
    return 0


def row_water(row: str, a: RowHand, b: RowHand, config: RuleConfig) -> int:
    """What ``a`` wins from ``b`` in ``row`` (RULES.md §7.1): the configured row water plus
    the winner's row bonus, negative when ``b`` wins the row, 0 on a tie; guns not included.
    Antisymmetric."""
    result = a.compare(b)
    return result * config.row_water + row_bonus(row, result, a, b, config)


def _is_gun(res: Sequence[int], run_over: bool) -> bool:
    """Gun: all three rows won; with run-over, no row lost and at least one won (§7.2)."""
    if run_over:
        return min(res) >= 0 and max(res) == 1
    return all(r == 1 for r in res)


def _score_pair(
    i: int,
    j: int,
    rows: Sequence[tuple[RowHand, RowHand, RowHand] | None],
    specials: Sequence[str | None],
    results: dict[tuple[int, int], tuple[int, int, int]],
    guns: dict[tuple[int, int], int],
    home_run: int | None,
    config: RuleConfig,
) -> PairResult:
    si, sj = specials[i], specials[j]
    if si is not None or sj is not None:
        water = _special_water(si, sj, config)
        return PairResult(i, j, None, 0, 0, None, None, 0, special_water=water, water=water)
    ri, rj = rows[i], rows[j]
    assert ri is not None and rj is not None
    res = results[(i, j)]
    row_water = sum(res) * config.row_water
    bonus = sum(row_bonus(row, res[k], ri[k], rj[k], config) for k, row in enumerate(ROWS))
    shooter = guns.get((i, j))
    gun = None if shooter is None else ("home_run" if shooter == home_run else "gun")
    extra = 0
    if gun is not None:
        sign = 1 if shooter == i else -1
        if config.gun_mode == "fixed":
            extra = sign * (config.home_run_water if gun == "home_run" else config.gun_water)
        else:
            extra = (row_water + bonus) * (3 if gun == "home_run" else 1)
    total = row_water + bonus + extra
    return PairResult(i, j, res, row_water, bonus, gun, shooter, extra, 0, water=total)


def _special_water(si: str | None, sj: str | None, config: RuleConfig) -> int:
    """What i wins from j when at least one side plays a special (RULES.md §7.3)."""
    if si is not None and sj is None:
        return config.special(si).water
    if sj is not None and si is None:
        return -config.special(sj).water
    assert si is not None and sj is not None
    if si == sj:
        return 0
    if config.special_rank(si) < config.special_rank(sj):
        return config.special(si).water
    return -config.special(sj).water

"""Properties that must always hold (STYLE.md "Tests"), checked with Hypothesis.

Scoring is zero-sum and antisymmetric, a pair's water depends only on that pair (except
through a home run), auto-arrange never fouls, settlement never makes a balance negative and
creates no coins, and row comparison is an order that agrees with an independent reading of
RULES.md §3.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from games.rules.arrange import arrange, special_split
from games.rules.cards import DECK, Card, Suit
from games.rules.config import RuleConfig
from games.rules.hands import Category, compare, evaluate, foul_rows
from games.rules.scoring import Arranged, Declared, RoundResult, Seat, score_round
from games.rules.settlement import settle
from games.rules.specials import detect_special, makes_special

from .reference import expected_home_run, expected_pair_water

FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SLOW = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])

DEFAULT = RuleConfig()

# -- strategies --------------------------------------------------------------------------------

configs = st.builds(
    RuleConfig,
    a2345=st.sampled_from(["lowest", "second"]),
    gun_mode=st.sampled_from(["fixed", "double"]),
    run_over_counts_as_gun=st.booleans(),
    home_run_min_players=st.integers(2, 5),
    row_water=st.sampled_from([1, 1, 2, 3]),
)
decks = st.permutations(DECK)


def build_six_pairs(deck: list[Card]) -> list[Card]:
    """Six pairs + 1 from the front of ``deck`` (the cards are removed from it)."""
    by_rank: dict[int, list[Card]] = {}
    for card in deck:
        by_rank.setdefault(card.rank, []).append(card)
    ranks = [r for r in dict.fromkeys(c.rank for c in deck) if len(by_rank[r]) >= 2][:6]
    hand = [c for r in ranks for c in by_rank[r][:2]]
    hand.append(next(c for c in deck if c not in hand))
    for card in hand:
        deck.remove(card)
    return hand


def build_three_flushes(deck: list[Card]) -> list[Card]:
    """Three, five and five cards of three suits (the cards are removed from ``deck``)."""
    suits = list(dict.fromkeys(c.suit for c in deck))[:3]
    hand: list[Card] = []
    for suit, size in zip(suits, (3, 5, 5), strict=True):
        hand += [c for c in deck if c.suit == suit][:size]
    for card in hand:
        deck.remove(card)
    return hand


BUILDERS = {"six_pairs": build_six_pairs, "three_flushes": build_three_flushes}
MIRROR = {Suit.SPADES: Suit.HEARTS, Suit.CLUBS: Suit.DIAMONDS}


@st.composite
def seats(draw: st.DrawFn, config: RuleConfig, count: int, *, specials: bool = True) -> list[Seat]:
    """``count`` seats from one deal: normal hands arranged by the engine (its best, or another
    of its suggestions), sometimes a special the deal makes, sometimes a constructed special."""
    deck = list(draw(decks))
    hands: list[tuple[list[Card], str | None]] = []
    if draw(st.booleans()):
        # Two hands with the same ranks (♠→♥, ♣→♦): their rows tie unless they are arranged
        # differently, which is where run-overs and three-tie pairs come from.
        first = [c for c in deck if c.suit in (Suit.SPADES, Suit.CLUBS)][:13]
        second = [Card(c.rank, MIRROR[c.suit]) for c in first]
        hands += [(first, None), (second, None)]
        deck = [c for c in deck if c not in first and c not in second]
    elif specials:
        built = draw(st.lists(st.sampled_from(sorted(BUILDERS)), max_size=2))[: count - 1]
        hands += [(BUILDERS[b](deck), b) for b in built]
    while len(hands) < count:
        hands.append((deck[:13], None))
        del deck[:13]
    hands = draw(st.permutations(hands))
    out: list[Seat] = []
    for i, (cards, declared) in enumerate(hands):
        found = detect_special(cards, config) if specials else None
        if declared is None and found is not None and draw(st.booleans()):
            declared = found
        hand: Arranged | Declared
        if declared is not None:
            hand = Declared(declared, tuple(cards))
        else:
            suggestions = arrange(cards, config).suggestions
            pick = draw(st.sampled_from([0, 0, 0, 1, 2, 9]))
            hand = suggestions[min(pick, len(suggestions) - 1)].arranged()
        out.append(Seat(f"P{i}", hand))
    return out


def pair_water(result: RoundResult) -> dict[tuple[str, str], int]:
    """What a wins from b, keyed by both orders."""
    ids = [s.id for s in result.seats]
    out: dict[tuple[str, str], int] = {}
    for p in result.pairs:
        out[(ids[p.a], ids[p.b])] = p.water
        out[(ids[p.b], ids[p.a])] = -p.water
    return out


def player_water(result: RoundResult) -> dict[str, int]:
    return {s.id: w for s, w in zip(result.seats, result.water, strict=True)}


# -- scoring -----------------------------------------------------------------------------------


@SLOW
@given(data=st.data(), config=configs)
def test_7_scoring_is_zero_sum(data: st.DataObject, config: RuleConfig) -> None:
    table = data.draw(seats(config, data.draw(st.integers(2, 4))))

    result = score_round(table, config)

    assert sum(result.water) == 0
    assert sum(result.coins) == 0
    water = pair_water(result)
    for seat, total in player_water(result).items():
        assert total == sum(w for (a, _), w in water.items() if a == seat)
    st_ = result.settlement
    assert sum(st_.deltas) + sum(st_.penalties) == 0
    assert list(st_.deltas) == list(result.coins)  # no balances, nobody escaped


@SLOW
@given(data=st.data(), config=configs)
def test_7_scoring_is_antisymmetric_in_seat_order(data: st.DataObject, config: RuleConfig) -> None:
    table = data.draw(seats(config, data.draw(st.integers(2, 4))))
    reordered = data.draw(st.permutations(table))

    first, second = score_round(table, config), score_round(reordered, config)

    assert pair_water(first) == pair_water(second)
    assert player_water(first) == player_water(second)
    ids = [s.id for s in first.seats]
    ids2 = [s.id for s in second.seats]
    shooter = None if first.home_run is None else ids[first.home_run]
    assert shooter == (None if second.home_run is None else ids2[second.home_run])
    for p in first.pairs:
        a, b = ids[p.a], ids[p.b]
        other = next(q for q in second.pairs if {ids2[q.a], ids2[q.b]} == {a, b})
        if ids2[other.a] == a:
            assert (other.rows, other.water) == (p.rows, p.water)
        else:
            flipped = None if p.rows is None else tuple(-r for r in p.rows)
            assert (other.rows, other.water) == (flipped, -p.water)


@SLOW
@given(data=st.data(), config=configs)
def test_7_adding_a_player_changes_no_other_pair_without_home_runs(
    data: st.DataObject, config: RuleConfig
) -> None:
    config = RuleConfig.from_dict({"home_run_min_players": 5}, base=config)
    table = data.draw(seats(config, data.draw(st.integers(3, 4))))

    smaller, larger = score_round(table[:-1], config), score_round(table, config)

    assert smaller.home_run is None and larger.home_run is None
    by_pair = {(p.a, p.b): p for p in larger.pairs}
    for p in smaller.pairs:
        assert by_pair[(p.a, p.b)] == p


@SLOW
@given(data=st.data(), config=configs)
def test_7_2_adding_a_player_changes_only_the_home_run_shooters_pairs(
    data: st.DataObject, config: RuleConfig
) -> None:
    table = data.draw(seats(config, data.draw(st.integers(3, 4))))

    smaller, larger = score_round(table[:-1], config), score_round(table, config)

    shooters = {smaller.home_run, larger.home_run} - {None}
    by_pair = {(p.a, p.b): p for p in larger.pairs}
    for p in smaller.pairs:
        if by_pair[(p.a, p.b)].water != p.water:
            assert shooters & {p.a, p.b}, (p, by_pair[(p.a, p.b)])


@SLOW
@given(data=st.data(), config=configs)
def test_7_pair_water_follows_the_rules(data: st.DataObject, config: RuleConfig) -> None:
    table = data.draw(seats(config, data.draw(st.integers(2, 4))))

    result = score_round(table, config)

    assert result.home_run == expected_home_run(result, config)
    for p in result.pairs:
        assert (p.rows, p.water) == expected_pair_water(result, p.a, p.b, config)
        assert p.water == p.row_water + p.bonus_water + p.gun_water + p.special_water


@SLOW
@given(data=st.data(), config=configs, k=st.integers(2, 5))
def test_7_1_row_water_scales_the_rows_and_what_doubles_them_only(
    data: st.DataObject, config: RuleConfig, k: int
) -> None:
    """``row_water`` = k multiplies each row's 1 (§7.1) and, in ``double`` mode, the doubled
    part of a gun or home run with it (§7.2); bonuses, fixed gun and home-run water, specials
    and who guns whom stay as they are."""
    one = RuleConfig.from_dict({"row_water": 1}, base=config)
    table = data.draw(seats(one, data.draw(st.integers(2, 4))))

    base, scaled = score_round(table, one), score_round(table, replace(one, row_water=k))

    assert scaled.home_run == base.home_run
    for p, q in zip(base.pairs, scaled.pairs, strict=True):
        assert (q.rows, q.gun, q.shooter) == (p.rows, p.gun, p.shooter)
        assert q.row_water == k * p.row_water
        assert (q.bonus_water, q.special_water) == (p.bonus_water, p.special_water)
        doubled = {None: 0, "gun": 1, "home_run": 3}[p.gun] if config.gun_mode == "double" else 0
        assert q.gun_water == p.gun_water + doubled * (k - 1) * p.row_water
    assert sum(scaled.water) == 0


# -- arrange -----------------------------------------------------------------------------------


def check_suggestions(cards: Sequence[Card], config: RuleConfig, limit: int) -> None:
    result = arrange(cards, config, limit=limit)
    assert 1 <= len(result.suggestions) <= limit
    assert result.best == result.suggestions[0]
    triples = set()
    for s in result.suggestions:
        assert (len(s.front), len(s.middle), len(s.back)) == (3, 5, 5)
        assert Counter(s.front + s.middle + s.back) == Counter(cards)
        hands = [evaluate(r, config.a2345) for r in (s.front, s.middle, s.back)]
        assert foul_rows(*hands) == (), s
        assert tuple(h.category for h in hands) == s.categories
        triples.add(s.categories)
    assert len(triples) == len(result.suggestions)


@FAST
@given(deck=decks, a2345=st.sampled_from(["lowest", "second"]), limit=st.integers(1, 10))
def test_6_arrange_never_fouls_and_uses_the_13_cards(
    deck: list[Card], a2345: str, limit: int
) -> None:
    check_suggestions(deck[:13], RuleConfig(a2345=a2345), limit)


@FAST
@given(data=st.data(), builder=st.sampled_from(sorted(BUILDERS)))
def test_6_arrange_never_fouls_on_special_hands(data: st.DataObject, builder: str) -> None:
    cards = BUILDERS[builder](list(data.draw(decks)))

    check_suggestions(cards, DEFAULT, 10)


@FAST
@given(data=st.data(), config=configs)
def test_6_arrange_is_deterministic_in_any_input_order(
    data: st.DataObject, config: RuleConfig
) -> None:
    cards = data.draw(decks)[:13]
    shuffled = data.draw(st.permutations(cards))

    assert arrange(cards, config) == arrange(shuffled, config)


@FAST
@given(deck=decks, a2345=st.sampled_from(["lowest", "second"]))
def test_5_three_flushes_split_is_one_suit_per_row_and_foul_free(
    deck: list[Card], a2345: str
) -> None:
    cards = build_three_flushes(list(deck))
    config = RuleConfig(a2345=a2345)

    split = special_split(cards, "three_flushes", config)

    assert makes_special(cards, "three_flushes")
    assert split is not None
    assert Counter(split.cards) == Counter(cards)
    for row in split.rows():
        assert len({c.suit for c in row}) == 1
    assert foul_rows(*(evaluate(r, a2345) for r in split.rows())) == ()


@FAST
@given(deck=decks)
def test_5_six_pairs_constructions_are_detected(deck: list[Card]) -> None:
    cards = build_six_pairs(list(deck))

    assert makes_special(cards, "six_pairs")
    assert detect_special(cards, DEFAULT) is not None


# -- settlement --------------------------------------------------------------------------------


@st.composite
def settlements(
    draw: st.DrawFn,
) -> tuple[list[list[int]], list[int | None], list[bool], int, bool]:
    n = draw(st.integers(2, 5))
    coins = [[0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1, n):
            v = draw(st.integers(-500, 500)) * 100
            coins[i][j], coins[j][i] = v, -v
    balances = draw(st.lists(st.none() | st.integers(0, 100_000), min_size=n, max_size=n))
    escaped = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    penalty = draw(st.sampled_from([0, 100, 500, 1000, 5000]))
    return coins, balances, escaped, penalty, draw(st.booleans())


@settings(max_examples=200, deadline=None)
@given(case=settlements())
def test_7_4_settlement_creates_no_coins_and_no_negative_balance(
    case: tuple[list[list[int]], list[int | None], list[bool], int, bool],
) -> None:
    coins, balances, escaped, penalty, covers = case
    n = len(coins)

    result = settle(coins, balances, escaped, penalty=penalty, escape_covers_losses=covers)

    assert sum(result.deltas) + sum(result.penalties) == 0
    for i in range(n):
        bal = balances[i]
        if bal is not None:
            assert bal + result.deltas[i] >= 0
        received = sum(t.coins for t in result.transfers if t.dst == i)
        paid = sum(t.coins for t in result.transfers if t.src == i)
        assert result.deltas[i] == received - paid - result.penalties[i]
        if not escaped[i]:
            assert result.penalties[i] == 0
        else:
            before = result.deltas[i] + result.penalties[i]
            can = penalty if bal is None else max(0, min(penalty, bal + before))
            assert result.penalties[i] == can
    for t in result.transfers:
        assert t.coins > 0
        if t.kind == "settlement":
            assert t.coins <= max(0, coins[t.dst][t.src])
        else:
            assert t.kind == "cover" and covers and escaped[t.src] and not escaped[t.dst]
    pairs = [(t.src, t.dst) for t in result.transfers if t.kind == "settlement"]
    assert len(pairs) == len(set(pairs))
    for c in result.cuts:
        assert 0 <= c.paid < c.owed == coins[c.dst][c.src]


@settings(max_examples=200, deadline=None)
@given(case=settlements())
def test_7_4_unlimited_balances_pay_exactly_the_water(
    case: tuple[list[list[int]], list[int | None], list[bool], int, bool],
) -> None:
    coins, _, escaped, penalty, covers = case
    n = len(coins)

    result = settle(coins, [None] * n, escaped, penalty=penalty, escape_covers_losses=covers)

    assert result.cuts == ()
    assert list(result.penalties) == [penalty if e else 0 for e in escaped]
    cover = [
        sum(t.coins for t in result.transfers if t.kind == "cover" and t.dst == i)
        - sum(t.coins for t in result.transfers if t.kind == "cover" and t.src == i)
        for i in range(n)
    ]
    if not covers or not any(escaped):
        assert cover == [0] * n
    for i in range(n):
        assert result.deltas[i] == sum(coins[i]) - result.penalties[i] + cover[i]


@settings(max_examples=200, deadline=None)
@given(case=settlements())
def test_7_4_balances_that_cover_everything_change_nothing(
    case: tuple[list[list[int]], list[int | None], list[bool], int, bool],
) -> None:
    coins, _, _, _, _ = case
    n = len(coins)
    rich = [sum(max(0, -c) for c in row) for row in coins]  # exactly what each one owes

    result = settle(coins, rich, [False] * n, penalty=500, escape_covers_losses=False)

    assert result.cuts == ()
    assert list(result.deltas) == [sum(row) for row in coins]


# -- row comparison ----------------------------------------------------------------------------


def oracle(cards: Sequence[Card], a2345: str) -> tuple[int, tuple[float, ...]]:
    """(category on the §3.3 scale, tie-break ranks), written from RULES.md §3 alone."""
    ranks = sorted((int(c.rank) for c in cards), reverse=True)
    counts = Counter(ranks)
    by_count = sorted(counts, key=lambda r: (counts[r], r), reverse=True)
    shape = sorted(counts.values(), reverse=True)
    if len(cards) == 3:
        if shape[0] == 3:
            return Category.TRIPS, (by_count[0],)
        if shape[0] == 2:
            return Category.PAIR, (by_count[0], by_count[1])
        return Category.HIGH_CARD, tuple(ranks)
    flush = len({c.suit for c in cards}) == 1
    straight: float | None = None
    if len(counts) == 5 and ranks[0] - ranks[4] == 4:
        straight = ranks[0]
    elif ranks == [14, 5, 4, 3, 2]:
        straight = 5 if a2345 == "lowest" else 13.5
    if straight is not None:
        return (Category.STRAIGHT_FLUSH if flush else Category.STRAIGHT), (straight,)
    if shape == [4, 1]:
        return Category.QUADS, (by_count[0], by_count[1])
    if shape == [3, 2]:
        return Category.FULL_HOUSE, (by_count[0], by_count[1])
    if flush:
        return Category.FLUSH, tuple(ranks)
    if shape[0] == 3:
        return Category.TRIPS, (by_count[0], *sorted(by_count[1:], reverse=True))
    if shape == [2, 2, 1]:
        return Category.TWO_PAIR, tuple(by_count)
    if shape[0] == 2:
        return Category.PAIR, (by_count[0], *sorted(by_count[1:], reverse=True))
    return Category.HIGH_CARD, tuple(ranks)


def oracle_compare(a: Sequence[Card], b: Sequence[Card], a2345: str) -> int:
    ca, ta = oracle(a, a2345)
    cb, tb = oracle(b, a2345)
    if len(a) != len(b):
        # §3.3: a front row against a middle row, over the ranks the 3-card row has.
        width = {Category.TRIPS: 1, Category.PAIR: 2, Category.HIGH_CARD: 3}.get(Category(ca), 0)
        ta, tb = ta[:width], tb[:width]
    x, y = (ca, ta), (cb, tb)
    return (x > y) - (x < y)


sizes = st.sampled_from([(5, 5), (3, 3), (3, 5), (5, 3)])
modes = st.sampled_from(["lowest", "second"])


@FAST
@given(deck=decks, size=sizes, a2345=modes)
def test_3_compare_is_antisymmetric_and_matches_the_rules(
    deck: list[Card], size: tuple[int, int], a2345: str
) -> None:
    a, b = deck[: size[0]], deck[size[0] : size[0] + size[1]]

    result = compare(a, b, a2345)

    assert result == -compare(b, a, a2345)
    assert result == oracle_compare(a, b, a2345)
    assert compare(a, a, a2345) == 0


@FAST
@given(data=st.data(), a2345=modes)
def test_3_compare_agrees_with_the_oracle_on_close_hands(data: st.DataObject, a2345: str) -> None:
    """Random deals rarely tie; draw rows from few ranks so ties and near-ties are common."""
    ranks = data.draw(st.lists(st.sampled_from([2, 3, 4, 5, 14]), min_size=2, max_size=3))
    pool = [c for c in DECK if c.rank in ranks or c.rank in (13, 12)]
    cards = data.draw(st.permutations(pool))
    size = data.draw(sizes)
    a, b = cards[: size[0]], cards[size[0] : size[0] + size[1]]

    assert compare(a, b, a2345) == oracle_compare(a, b, a2345)


@FAST
@given(deck=decks, size=st.sampled_from([3, 5]), a2345=modes)
def test_3_compare_is_transitive_within_a_row_size(deck: list[Card], size: int, a2345: str) -> None:
    a, b, c = deck[:size], deck[size : 2 * size], deck[2 * size : 3 * size]
    x, y, z = sorted([a, b, c], key=lambda h: evaluate(h, a2345).key)

    assert compare(x, y, a2345) <= 0
    assert compare(y, z, a2345) <= 0
    assert compare(x, z, a2345) <= 0
    if compare(x, y, a2345) < 0 or compare(y, z, a2345) < 0:
        assert compare(x, z, a2345) < 0


@FAST
@given(deck=decks, shape=st.sampled_from(["335", "353", "533", "355", "535", "553"]), a2345=modes)
def test_3_3_strict_order_is_transitive_across_row_sizes(
    deck: list[Card], shape: str, a2345: str
) -> None:
    hands, start = [], 0
    for size in map(int, shape):
        hands.append(deck[start : start + size])
        start += size
    a, b, c = hands

    if compare(a, b, a2345) > 0 and compare(b, c, a2345) > 0:
        assert compare(a, c, a2345) > 0
    if compare(a, b, a2345) < 0 and compare(b, c, a2345) < 0:
        assert compare(a, c, a2345) < 0


@FAST
@given(deck=decks, a2345=modes)
def test_3_3_a_stronger_middle_never_loses_to_a_front_the_weaker_one_beats(
    deck: list[Card], a2345: str
) -> None:
    """The foul check is monotone: strengthening the middle can only help it against front."""
    front, m1, m2 = deck[:3], deck[3:8], deck[8:13]
    weak, strong = sorted([m1, m2], key=lambda h: evaluate(h, a2345).key)

    assert compare(strong, front, a2345) >= compare(weak, front, a2345)


@pytest.mark.parametrize("a2345", ["lowest", "second"])
def test_3_1_every_straight_in_order(a2345: str) -> None:
    """Exhaustive over the ten straights: order by top card, A2345 placed by ``a2345``."""
    suits = [0, 1, 2, 3, 0]
    straights = []
    for low in range(1, 11):
        ranks = [14 if r == 1 else r for r in range(low, low + 5)]
        straights.append([DECK[(r - 2) * 4 + s] for r, s in zip(ranks, suits, strict=True)])
    if a2345 == "second":
        straights.insert(-1, straights.pop(0))

    for lower, higher in zip(straights, straights[1:], strict=False):
        assert compare(lower, higher, a2345) == -1
        assert evaluate(higher, a2345).category == Category.STRAIGHT

"""RULES.md §7.4 (water to coins, cannot cover) and §7.5 (escape)."""

import random

import pytest

from games.rules.config import RuleConfig
from games.rules.scoring import Seat, score_round
from games.rules.settlement import Cut, Transfer, _pay_leftovers, clear, settle, share

from .helpers import arr


def antisym(wins: dict[tuple[int, int], int], n: int) -> list[list[int]]:
    """pair_coins from {(winner, loser): coins}."""
    m = [[0] * n for _ in range(n)]
    for (w, lo), coins in wins.items():
        m[w][lo], m[lo][w] = coins, -coins
    return m


def test_7_4_share_example_from_s0_gives_555_277_168():
    assert share(1000, [0, 2000, 1000, 600]) == [0, 555, 277, 168]


def test_7_4_share_takes_largest_debt_first_and_the_last_gets_the_remainder():
    # Amended RULES.md §7.4: a share is never more than the debt (this once gave 0/33/33/34
    # when called with more than is owed; clearing only calls it with less).
    assert share(100, [0, 1, 1, 1]) == [0, 1, 1, 1]
    assert share(100, [0, 40, 40, 40]) == [0, 33, 33, 34]  # equal debts: seat order
    assert share(10, [0, 3, 7]) == [0, 3, 7]
    assert share(7, [0, 5, 5]) == [0, 3, 4]
    # Amended §7.4: never more than owed, so more than the debts pays exactly the debts.
    assert sum(share(999_999, [0, 12_300, 4_500, 800])) == 17_600
    assert sum(share(9_999, [0, 12_300, 4_500, 800])) == 9_999


def test_11_4_the_last_share_is_capped_and_the_excess_goes_to_the_first():
    assert share(299, [0, 100, 100, 100]) == [0, 100, 99, 100]
    m = antisym({(1, 0): 100, (2, 0): 100, (3, 0): 100}, 4)
    s = settle(m, [299, None, None, None], [False] * 4, penalty=0, escape_covers_losses=False)
    assert s.deltas == (-299, 100, 99, 100)


def test_7_4_no_share_exceeds_its_debt():
    for available in range(0, 400, 7):
        for debts in ([0, 100, 100, 100], [0, 1, 2, 300], [0, 5, 5], [0, 97, 3, 3]):
            got = share(available, debts)
            assert all(g <= d for g, d in zip(got, debts, strict=True))
            assert sum(got) == min(available, sum(debts))


def test_7_4_step_4_a_cut_player_ends_with_nothing_and_no_creditor_gets_more_than_owed():
    rng = random.Random(74)
    for _ in range(3000):
        n = rng.choice([2, 3, 4, 5, 6])
        m = [[0] * n for _ in range(n)]
        for i in range(n):
            for j in range(i + 1, n):
                w = rng.randint(-9, 9) * rng.choice([1, 7, 100])
                m[i][j], m[j][i] = w, -w
        balances = [rng.randint(0, 1500) for _ in range(n)]
        s = settle(m, balances, [False] * n, penalty=0, escape_covers_losses=False)
        assert sum(s.deltas) == 0
        cut = {c.src for c in s.cuts}
        for i in range(n):
            assert balances[i] + s.deltas[i] >= 0
            if i in cut:
                assert balances[i] + s.deltas[i] == 0
        paid = {(t.src, t.dst): t.coins for t in s.transfers}
        assert all(paid.get((i, j), 0) <= max(0, -m[i][j]) for i in range(n) for j in range(n))


def test_7_4_step_4_leftovers_go_round_robin_largest_unpaid_first():
    pay = [[0, 3, 1, 0], [0] * 4, [0] * 4, [0] * 4]
    owed = [[0, 5, 5, 2], [0] * 4, [0] * 4, [0] * 4]
    _pay_leftovers(owed, [7, None, None, None], pay)
    # A holds 7 - 4 = 3 coins; unpaid C 4, B 2, D 2: C, B, D one coin each.
    assert pay[0] == [0, 4, 2, 1]


def test_11_2_cannot_cover_example():
    m = antisym({(1, 0): 2000, (2, 0): 1000, (3, 0): 600}, 4)
    s = settle(m, [1000, None, None, None], [False] * 4, penalty=500, escape_covers_losses=False)
    assert s.deltas == (-1000, 555, 277, 168)
    assert s.transfers == (Transfer(0, 1, 555), Transfer(0, 2, 277), Transfer(0, 3, 168))
    assert s.cuts == (Cut(0, 1, 2000, 555), Cut(0, 2, 1000, 277), Cut(0, 3, 600, 168))


def test_7_4_a_loser_who_owes_one_player_pays_everything_it_has():
    m = antisym({(1, 0): 5000}, 2)
    s = settle(m, [1234, 0], [False, False], penalty=0, escape_covers_losses=False)
    assert s.deltas == (-1234, 1234)


def test_7_4_what_a_loser_can_pay_includes_what_it_receives():
    # A owes B 3000 and has 1000, but wins 2500 from C (who can pay): A pays B in full.
    m = antisym({(1, 0): 3000, (0, 2): 2500}, 3)
    s = settle(m, [1000, 0, 10_000], [False] * 3, penalty=0, escape_covers_losses=False)
    assert s.deltas == (-500, 3000, -2500)
    assert s.cuts == ()


def test_7_4_receipts_that_are_themselves_cut_are_cleared_proportionally():
    # C owes A 2500 but has 500; A owes B 3000 with 1000 of its own: A can pay 1500.
    m = antisym({(1, 0): 3000, (0, 2): 2500}, 3)
    s = settle(m, [1000, 0, 500], [False] * 3, penalty=0, escape_covers_losses=False)
    assert s.deltas == (-1000, 1500, -500)
    assert Cut(2, 0, 2500, 500) in s.cuts and Cut(0, 1, 3000, 1500) in s.cuts
    assert s.rounds >= 2


def test_7_4_a_circular_debt_terminates_and_conserves_coins():
    m = antisym({(1, 0): 4000, (2, 1): 4000, (0, 2): 4000}, 3)
    s = settle(m, [0, 0, 0], [False] * 3, penalty=0, escape_covers_losses=False)
    assert sum(s.deltas) == 0
    assert all(d >= 0 for d in s.deltas)  # nobody had anything: each balance stays >= 0


def test_7_4_clearing_payments_never_rise():
    owed = [[0, 3000, 0], [0, 0, 0], [2500, 0, 0]]
    pay, steps = clear(owed, [1000, 0, 500])
    assert all(pay[i][j] <= owed[i][j] for i in range(3) for j in range(3))
    assert steps <= 5


def test_7_4_water_times_base_score_through_score_round():
    a = arr("QS QC 3D", "8C 8D 8H 2S 2C", "9H TH JH QH KH")
    b = arr("AS KD 4C", "AC AD 3S 3H 4H", "5S 6D 7C 8S 9D")
    cfg = RuleConfig(base_score=250)
    r = score_round([Seat("A", a), Seat("B", b, balance=1000)], cfg)
    assert r.coins == (11 * 250, -11 * 250)
    assert r.settlement.deltas == (1000, -1000)  # B could cover only 1,000


def test_7_5_escaper_pays_the_penalty_to_the_house_after_settlement():
    m = antisym({(0, 1): 1100}, 2)
    s = settle(m, [None, 50_000], [False, True], penalty=500, escape_covers_losses=False)
    assert s.penalties == (0, 500)
    assert s.deltas == (1100, -1600)


def test_7_5_penalty_never_exceeds_what_the_escaper_has_left():
    m = antisym({(0, 1): 1100}, 2)
    s = settle(m, [None, 1300], [False, True], penalty=500, escape_covers_losses=False)
    assert s.penalties == (0, 200)
    assert s.deltas == (1100, -1300)


def test_7_5_escape_covers_losses_example_from_s1():
    # A +5, B +8, C -7, D -6; C escapes and covers D's loss, then pays 10 × base (base 1).
    m = antisym({(0, 2): 3, (1, 2): 4, (0, 3): 2, (1, 3): 4}, 4)
    s = settle(m, [None] * 4, [False, False, True, False], penalty=10, escape_covers_losses=True)
    assert s.deltas == (5, 8, -23, 0)
    assert s.penalties == (0, 0, 10, 0)
    assert Transfer(2, 3, 6, "cover") in s.transfers
    assert sum(s.deltas) + sum(s.penalties) == 0


def test_7_5_escape_covers_losses_within_what_the_escaper_has():
    m = antisym({(0, 2): 300, (1, 3): 600}, 4)
    s = settle(
        m,
        [None, None, 500, 100],
        [False, False, True, False],
        penalty=1000,
        escape_covers_losses=True,
    )
    # C pays A 300, then covers 100 of D's (D paid all its 100 to B... D owed 600, had 100).
    assert s.deltas[2] == -500
    assert sum(s.deltas) + sum(s.penalties) == 0
    assert all(b + d >= 0 for b, d in zip([500, 100], [s.deltas[2], s.deltas[3]], strict=True))


def test_7_5_escape_through_score_round_uses_the_configured_multiplier():
    a = arr("QS QC 3D", "8C 8D 8H 2S 2C", "9H TH JH QH KH")
    b = arr("AS KD 4C", "AC AD 3S 3H 4H", "5S 6D 7C 8S 9D")
    r = score_round([Seat("A", a, escaped=True), Seat("B", b)], RuleConfig())
    assert r.settlement.penalties == (500, 0)
    assert r.settlement.deltas == (1100 - 500, -1100)
    r = score_round(
        [Seat("A", a, escaped=True), Seat("B", b)], RuleConfig(escape_covers_losses=True)
    )
    assert r.settlement.penalties == (1000, 0)


@pytest.mark.parametrize("covers", [False, True])
def test_7_4_no_balance_goes_negative_and_no_coin_is_created(covers):
    m = antisym({(1, 0): 7000, (2, 0): 3000, (3, 0): 100, (1, 2): 900, (3, 2): 1200}, 4)
    balances = [2000, 0, 1500, 50]
    s = settle(m, balances, [True, False, False, True], penalty=800, escape_covers_losses=covers)
    assert sum(s.deltas) + sum(s.penalties) == 0
    assert all(b + d >= 0 for b, d in zip(balances, s.deltas, strict=True))

"""The Monte-Carlo rollout player (benchmarks/rollout*.py): candidates, exact scorer,
cross-fitting and a tiny end-to-end run. Figures are printed by the script, not asserted."""

from __future__ import annotations

import math
import re
from dataclasses import replace

import numpy as np
import pytest

from benchmarks import rollout, rollout_candidates, rollout_player, rollout_water
from games.rules.arrange import arrange
from games.rules.cards import ALL_CARDS
from games.rules.config import CHOICES, DEFAULT_CONFIG, RuleConfig
from games.rules.hands import check_foul, evaluate
from games.rules.scoring import Arranged, Seat, score_round
from games.rules.vectorized import COMB3, COMB5, SPLIT_B, SPLIT_F, SPLIT_M

HAND_SEEDS = (1, 2, 3, 4, 5, 6)


def _hand(seed: int) -> list[int]:
    return [int(x) for x in np.random.default_rng([99, seed]).permutation(52)[:13]]


def _dominates(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a (..., 3) >= b (..., 3) in every row, broadcast."""
    return np.asarray((a >= b).all(axis=-1))


def _split(cards: np.ndarray, split: int) -> Arranged:
    c = cards.tolist()
    return Arranged(
        tuple(ALL_CARDS[c[j]] for j in COMB3[SPLIT_F[split]]),
        tuple(ALL_CARDS[c[j]] for j in COMB5[SPLIT_M[split]]),
        tuple(ALL_CARDS[c[j]] for j in COMB5[SPLIT_B[split]]),
    )


# -- candidates -------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", HAND_SEEDS)
@pytest.mark.parametrize(("a2345", "opponents"), [("lowest", 3), ("second", 1), ("lowest", 2)])
def test_pareto_set_holds_the_engine_best_or_a_split_dominating_it(
    seed: int, a2345: str, opponents: int
) -> None:
    config = replace(DEFAULT_CONFIG, a2345=a2345)
    hand = _hand(seed)
    cand = rollout_candidates.candidates(hand, config, opponents)
    best = arrange([ALL_CARDS[i] for i in hand], config, limit=1, opponents=opponents).best
    best_keys = np.array(rollout_candidates.row_keys(best.arranged(), a2345))
    assert (cand.keys[0] == best_keys).all()
    front = cand.keys if cand.best_on_front else cand.keys[1:]
    assert _dominates(front, best_keys).any()
    # Every candidate is a foul-free split of the hand, with the keys it claims.
    for row in range(1, len(cand.keys)):
        arranged = cand.arranged(row)
        assert sorted(c.index for c in arranged.cards) == sorted(hand)
        assert rollout_candidates.row_keys(arranged, a2345) == tuple(cand.keys[row].tolist())
        check_foul(*(evaluate(row, a2345) for row in arranged.rows()))


@pytest.mark.parametrize("seed", HAND_SEEDS)
def test_no_candidate_is_dominated_by_any_foul_free_split(seed: int) -> None:
    config = DEFAULT_CONFIG
    cand = rollout_candidates.candidates(_hand(seed), config, 3)
    _, _, keys = rollout_candidates.split_keys(_hand(seed), config.a2345)
    front = cand.keys if cand.best_on_front else cand.keys[1:]
    # Distinct triples, none weakly below another candidate or any split of the hand.
    assert len(np.unique(front, axis=0)) == len(front)
    ge = _dominates(keys[:, None, :], front[None, :, :])  # split >= candidate
    gt = ge & (keys[:, None, :] != front[None, :, :]).any(axis=-1)
    assert not gt.any()
    # The set is also complete: every split's triple is weakly below some candidate.
    covered = np.zeros(len(keys), dtype=bool)
    for row in front:
        covered |= _dominates(row, keys)
    assert covered.all()


def test_pareto_mask_matches_brute_force() -> None:
    rng = np.random.default_rng(7)
    for _ in range(300):
        n = int(rng.integers(1, 80))
        keys = np.unique(rng.integers(0, int(rng.integers(2, 9)), size=(n, 3)), axis=0)
        ge = _dominates(keys[:, None, :], keys[None, :, :])
        np.fill_diagonal(ge, False)
        assert (rollout_candidates.pareto_mask(keys) == ~ge.any(axis=0)).all()


def test_pareto_reduction_is_exact_for_the_configurations_measured() -> None:
    for mode in CHOICES["gun_mode"]:
        assert rollout_candidates.pareto_is_exact(rollout.make_config(mode))
    assert not rollout_candidates.pareto_is_exact(replace(DEFAULT_CONFIG, home_run_water=1))
    bonus = dict(DEFAULT_CONFIG.row_bonus) | {"back.straight_flush": 0}
    assert not rollout_candidates.pareto_is_exact(
        replace(DEFAULT_CONFIG, row_bonus=tuple(bonus.items()))
    )


# -- the exact scorer ---------------------------------------------------------------------------


def _random_config(rng: np.random.Generator) -> RuleConfig:
    return replace(
        DEFAULT_CONFIG,
        gun_mode=str(rng.choice(CHOICES["gun_mode"])),
        run_over_counts_as_gun=bool(rng.integers(2)),
        home_run_min_players=int(rng.integers(2, 5)),
        a2345=str(rng.choice(CHOICES["a2345"])),
        gun_water=int(rng.integers(0, 5)),
        home_run_water=int(rng.integers(5, 15)),
    )


def test_table_water_equals_score_round_on_random_tables() -> None:
    rng = np.random.default_rng(11)
    guns = home_runs = 0
    for _ in range(400):
        config = _random_config(rng)
        n = int(rng.integers(2, 5))
        deck = rng.permutation(52)
        arrangements = []
        for p in range(n):
            cards, splits, keys = rollout_candidates.split_keys(
                [int(x) for x in deck[13 * p : 13 * p + 13]], config.a2345
            )
            if rng.random() < 0.5:  # strong splits, so that guns and home runs happen
                split = splits[np.lexsort((keys[:, 0], keys[:, 1], keys[:, 2]))[-1]]
            else:
                split = splits[rng.integers(len(splits))]
            arrangements.append(_split(cards, int(split)))
        result = score_round([Seat(str(i), a) for i, a in enumerate(arrangements)], config)
        guns += sum(p.gun is not None for p in result.pairs)
        home_runs += result.home_run is not None
        keys = np.array([rollout_candidates.row_keys(a, config.a2345) for a in arrangements])
        for seat in range(n):
            others = np.delete(keys, seat, axis=0)[None]
            assert (
                rollout_water.table_water(keys[seat][None], others, config)[0, 0]
                == (result.water[seat])
            )
    assert guns > 50 and home_runs > 10


@pytest.mark.parametrize("gun_mode", CHOICES["gun_mode"])
def test_table_water_equals_score_round_for_every_candidate(gun_mode: str) -> None:
    config = rollout.make_config(gun_mode)
    hand = _hand(3)
    cand = rollout_candidates.candidates(hand, config, 3)
    samples = rollout_player.draw_samples(hand, config, 4, 3, np.random.default_rng(5))
    opp = rollout_player.opponents_keys(samples, config)
    water = rollout_water.table_water(cand.keys, opp, config)
    for t in range(len(samples)):
        opponents = [
            rollout_candidates.engine_best([ALL_CARDS[i] for i in h], config, 3)
            for h in samples[t].tolist()
        ]
        for row in range(len(cand.keys)):
            expected = rollout_water.score_with_engine([cand.arranged(row), *opponents], config)[0]
            assert water[t, row] == expected


# -- samples and cross-fitting ------------------------------------------------------------------


def test_samples_deal_only_unseen_cards() -> None:
    hand = _hand(1)
    samples = rollout_player.draw_samples(hand, DEFAULT_CONFIG, 4, 20, np.random.default_rng(0))
    assert samples.shape == (20, 3, 13)
    for sample in samples:
        cards = sample.reshape(-1).tolist()
        assert len(set(cards)) == 39 and not set(cards) & set(hand)
    # Samples differ from one another.
    assert len({tuple(s.reshape(-1).tolist()) for s in samples}) == 20


def test_the_two_halves_are_disjoint_and_cover_every_sample() -> None:
    for s in (1, 5, 100):
        a, b = rollout_player.halves(s)
        assert len(a) == len(b) == s
        assert not set(a.tolist()) & set(b.tolist())
        assert sorted([*a.tolist(), *b.tolist()]) == list(range(2 * s))


def test_cross_fit_scores_each_pick_on_the_other_half() -> None:
    # Candidate 1 looks great on half A and bad on half B; candidate 2 the other way round.
    water = np.array(
        [
            [0, 10, -5],
            [0, 10, -5],
            [0, -4, 6],
            [0, -4, 6],
        ]
    )
    gain, pick_a, pick_b = rollout_player.cross_fit(water)
    assert (pick_a, pick_b) == (1, 2)
    assert gain == pytest.approx(((-4) + (-5)) / 2)  # held out: A's pick on B, B's pick on A
    # Exact ties go to the engine's best (row 0).
    assert rollout_player.cross_fit(np.zeros((4, 3), dtype=np.int64))[1:] == (0, 0)


def test_a_fixed_seed_gives_the_same_output_twice() -> None:
    config = DEFAULT_CONFIG
    first = rollout.measure(2, 3, 3, config, seed=5)
    second = rollout.measure(2, 3, 3, config, seed=5)
    assert first == second
    other = rollout.measure(2, 3, 3, config, seed=6)
    assert other != first


def _figures(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"[-+]?\d+\.\d+", text)]


@pytest.mark.parametrize(("seats", "gun_mode"), [(4, "fixed"), (2, "double"), (3, "double")])
def test_a_tiny_run_gives_finite_figures(
    seats: int, gun_mode: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--deals", "2", "--samples", "5", "--seats", str(seats), "--gun-mode", gun_mode]
    text = rollout.main(argv)
    assert capsys.readouterr().out.strip() == text
    assert text.splitlines()[0] == "command: python -m benchmarks.rollout " + " ".join(argv)
    assert f"N = {seats} seats, gun mode {gun_mode}" in text
    figures = _figures(text)
    assert figures and all(math.isfinite(x) for x in figures)
    summary = rollout.measure(2, 5, seats, rollout.make_config(gun_mode))
    for name in ("gain", "real", "in_sample"):
        mean, se = summary.figure(name)
        assert math.isfinite(mean) and math.isfinite(se)
    assert 0.0 <= summary.differs <= 1.0
    # A deal's real-deal figure is a mean of whole water over its seats.
    assert all(float(d.real * seats).is_integer() for d in summary.deals)


def test_the_command_line_exposes_the_gun_modes_of_the_configuration() -> None:
    args = rollout.parse_args([])
    assert (args.deals, args.samples, args.seats, args.workers) == (40, 100, 4, 1)
    assert args.gun_mode == DEFAULT_CONFIG.gun_mode
    assert CHOICES["gun_mode"] == rollout.GUN_MODES
    with pytest.raises(SystemExit):
        rollout.parse_args(["--gun-mode", "triple"])

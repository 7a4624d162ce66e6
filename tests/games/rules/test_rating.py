"""The skill rating's pure core (games.rules.rating): the Glicko-2 library against Glickman's
published example, and what a round's pairs are worth."""

from __future__ import annotations

import pytest

from games.rules import rating
from games.rules.rating import (
    DUPLICATE_WEIGHT,
    Game,
    Rating,
    duplicate_games,
    glicko2_update,
    pair_pars,
    pair_score,
    plain_games,
    rate_round,
)


def test_glickmans_example_of_the_glicko2_system() -> None:
    # Mark Glickman, "Example of the Glicko-2 system" (2012), steps 1-8.
    player = Rating(1500, 200, 0.06)

    new = glicko2_update(player, [(1400, 30, 1.0), (1550, 100, 0.0), (1700, 300, 0.0)], tau=0.5)

    assert new.rating == pytest.approx(1464.06, abs=0.01)
    assert new.deviation == pytest.approx(151.52, abs=0.01)
    assert new.volatility == pytest.approx(0.05999, abs=1e-5)


def test_a_surprising_period_raises_the_volatility() -> None:
    # The volatility step of the algorithm actually moves (an old implementation's bug in it
    # hid behind the example, whose volatility barely changes): a settled strong player who
    # loses many games to a settled weak one.
    strong = Rating(1900, 50, 0.06)

    new = glicko2_update(strong, [(1300, 50, 0.0)] * 20, tau=0.5)
    expected = glicko2_update(strong, [(1300, 50, 1.0)] * 20, tau=0.5)

    assert new.volatility == pytest.approx(0.06555, abs=1e-4)
    assert new.rating < 1900
    assert expected.volatility < 0.06 < new.volatility


def test_a_pairs_score_is_half_for_a_draw_and_saturates() -> None:
    assert pair_score(0) == 0.5
    assert pair_score(3) == pytest.approx(0.75)
    assert pair_score(-3) == pytest.approx(0.25)
    assert pair_score(rating.WATER_FOR_FULL_SCORE) == 1.0
    assert pair_score(40) == 1.0
    assert pair_score(-40) == 0.0


def test_a_round_is_one_game_per_pair_from_its_water() -> None:
    games = plain_games([("a", "b", 3), ("a", "c", -6), ("b", "c", 0)])

    assert games == [
        Game("a", "b", 0.75, 1),
        Game("a", "c", 0.0, 1),
        Game("b", "c", 0.5, 1),
    ]


def test_a_round_updates_every_player_from_the_ratings_before_it() -> None:
    before = {"a": Rating(), "b": Rating(), "c": Rating()}
    games = plain_games([("a", "b", 6), ("a", "c", 6), ("b", "c", 0)])

    after = rate_round(before, games)
    # The order of the pairs does not matter: everyone is rated from the ratings before.
    again = rate_round(before, list(reversed(games)))

    assert after["a"].rating > 1500 > after["b"].rating
    assert after["b"].rating == pytest.approx(after["c"].rating)
    assert after["a"].rating - 1500 == pytest.approx(2 * (1500 - after["b"].rating), rel=0.05)
    assert all(after[k].deviation < 350 for k in after)
    for k in after:
        assert again[k].rating == pytest.approx(after[k].rating)
        assert again[k].deviation == pytest.approx(after[k].deviation)


def test_a_new_player_starts_at_1500_and_350() -> None:
    after = rate_round({}, [Game(1, 2, 1.0)])

    assert set(after) == {1, 2}
    assert after[1].rating > 1500 > after[2].rating
    assert after[1].rating - 1500 == pytest.approx(1500 - after[2].rating)


def test_the_par_of_a_pair_is_its_mean_water_over_the_tables() -> None:
    tables = [{(0, 1): 4, (0, 2): -2, (1, 2): 1}, {(0, 1): 2, (2, 0): 4, (1, 2): 1}]

    pars = pair_pars(tables)

    assert pars[(0, 1)] == 3 and pars[(1, 0)] == -3
    assert pars[(0, 2)] == -3 and pars[(2, 0)] == 3  # (2, 0) at the second table is -(0, 2)
    assert pars[(1, 2)] == 1


def test_a_duplicate_game_is_judged_against_par_and_weighs_more() -> None:
    # Both tables won 6 with the same cards: no skill shows, a draw for the rating.
    assert duplicate_games([("a", "b", 6, 6)]) == [Game("a", "b", 0.5, DUPLICATE_WEIGHT)]
    # 3 more than par with the same cards.
    (game,) = duplicate_games([("a", "b", 5, 2)])
    assert game.score == pair_score(3, rating.DUPLICATE_WATER_FOR_FULL_SCORE) == 1.0
    assert game.weight == DUPLICATE_WEIGHT > 1
    (game,) = duplicate_games([("a", "b", 2, 3)])
    assert game.score == pytest.approx(0.25)  # one less than par, of the 2 for a full score

    plain = rate_round({}, [Game("a", "b", 1.0)])  # the same score, once
    weighted = rate_round({}, duplicate_games([("a", "b", 5, 2)]))

    assert weighted["a"].rating > plain["a"].rating > 1500
    assert weighted["a"].deviation < plain["a"].deviation


@pytest.mark.parametrize(
    "game", [Game("a", "b", 1.5), Game("a", "b", -0.1), Game("a", "b", 0.5, 0)]
)
def test_a_game_out_of_range_is_refused(game: Game[str]) -> None:
    with pytest.raises(ValueError):
        rate_round({}, [game])


def test_a_rating_must_be_finite_and_its_deviation_positive() -> None:
    with pytest.raises(ValueError):
        Rating(float("nan"))
    with pytest.raises(ValueError):
        Rating(1500, 0)


def test_the_bot_levels_ratings_rise_with_the_level() -> None:
    levels = ("easy", "normal", "strong", "expert")
    assert set(rating.BOT_LEVEL_RATING) == set(levels)
    values = [rating.BOT_LEVEL_RATING[level] for level in levels[:3]]
    assert values == sorted(values) and len(set(values)) == 3

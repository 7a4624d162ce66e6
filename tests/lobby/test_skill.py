"""The lobby's view of skill (`lobby.skill`): where a rating comes from, how close two ratings
must be, and the rating of each bot level."""

import pytest

from games.models import RuleConfiguration
from lobby import skill
from lobby.models import BotLevel
from tests.lobby.conftest import MakePlayer


@pytest.fixture
def rating_module(monkeypatch: pytest.MonkeyPatch) -> None:
    """games.history.rating as the lobby reads it: player 7 is rated 1820 ± 60 in "classic"."""
    monkeypatch.setattr(
        skill,
        "player_rating",
        lambda user_id, family: (1820.0, 60.0) if (user_id, family) == (7, "classic") else None,
    )
    monkeypatch.setattr(skill, "rating_family", lambda config, preset="": "classic")


def test_a_rating_comes_from_the_history_and_unrated_is_1500_350(
    rating_module: None,
) -> None:
    assert skill.skill_of(7, "classic") == (1820.0, 60.0)
    assert skill.skill_of(8, "classic") == skill.UNRATED == (1500.0, 350.0)
    assert skill.skill_of(7, "other") == (1500.0, 350.0)


def test_the_family_comes_from_the_history(rating_module: None, rules: RuleConfiguration) -> None:
    assert skill.skill_family(rules) == "classic"


def test_the_gap_is_at_least_200_twice_the_deviation_and_widens_with_the_wait() -> None:
    assert skill.match_gap(deviations=(50, 60), waited=0) == 200
    assert skill.match_gap(deviations=(50, 150), waited=0) == 300
    assert skill.match_gap(deviations=(50, 60), waited=4) == 400
    assert skill.match_gap(deviations=(50, 60), waited=-1) == 200  # never narrower


def test_every_bot_level_has_its_measured_rating() -> None:
    from games.rules.levels import LEVELS
    from games.rules.rating import BOT_LEVEL_RATING

    assert list(skill.BOT_LEVEL_RATING) == list(LEVELS) == list(BotLevel.values)
    assert skill.BOT_LEVEL_RATING == BOT_LEVEL_RATING  # the simulation's figures
    rating = skill.BOT_LEVEL_RATING
    assert rating["easy"] < rating["normal"] < rating["strong"]


def test_a_stored_rating_is_what_the_lobby_reads(
    rules: RuleConfiguration, make_player: MakePlayer
) -> None:
    from games.models import PlayerRating

    player = make_player(username="rated")
    family = skill.skill_family(rules)
    assert skill.skill_of(player.pk, family) == skill.UNRATED
    PlayerRating.objects.create(
        user=player, family=family, rating=1612.5, deviation=80.0, volatility=0.004, rounds=30
    )
    assert skill.skill_of(player.pk, family) == (1612.5, 80.0)

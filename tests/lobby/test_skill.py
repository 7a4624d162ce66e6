"""The lobby's view of skill (`lobby.skill`): where a rating comes from, how close two ratings
must be, and the rating of each bot level."""

import sys
import types

import pytest

from games.models import RuleConfiguration
from lobby import skill
from lobby.models import BotLevel


@pytest.fixture
def rating_module(monkeypatch: pytest.MonkeyPatch) -> types.ModuleType:
    """A stand-in for games.history.rating: player 7 is rated 1820 ± 60 in "classic"."""
    module = types.ModuleType("games.history.rating")
    module.player_rating = lambda user_id, family: (  # type: ignore[attr-defined]
        (1820.0, 60.0) if (user_id, family) == (7, "classic") else None
    )
    module.rating_family = lambda config, preset="": "classic"  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "games.history.rating", module)
    return module


def test_a_rating_comes_from_the_history_and_unrated_is_1500_350(
    rating_module: types.ModuleType,
) -> None:
    assert skill.skill_of(7, "classic") == (1820.0, 60.0)
    assert skill.skill_of(8, "classic") == skill.UNRATED == (1500.0, 350.0)
    assert skill.skill_of(7, "other") == (1500.0, 350.0)


def test_the_family_comes_from_the_history(
    rating_module: types.ModuleType, rules: RuleConfiguration
) -> None:
    assert skill.skill_family(rules) == "classic"


def test_the_gap_is_at_least_200_twice_the_deviation_and_widens_with_the_wait() -> None:
    assert skill.match_gap(deviations=(50, 60), waited=0) == 200
    assert skill.match_gap(deviations=(50, 150), waited=0) == 300
    assert skill.match_gap(deviations=(50, 60), waited=4) == 400
    assert skill.match_gap(deviations=(50, 60), waited=-1) == 200  # never narrower


def test_every_bot_level_has_a_rating_rising_with_its_strength() -> None:
    from games.rules.levels import LEVELS

    assert list(skill.BOT_LEVEL_RATING) == list(LEVELS) == list(BotLevel.values)
    values = list(skill.BOT_LEVEL_RATING.values())
    assert values == sorted(values) and len(set(values)) == len(values)

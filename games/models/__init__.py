"""The games app's models: rule configurations, tables and rounds, standings."""

from games.models.play import (
    MATCH_MAX_DEALS,
    MATCH_TABLES,
    DuplicateMatch,
    MatchStatus,
    Round,
    RoundPlayer,
    RoundStaffAction,
    Table,
    TableEvent,
)
from games.models.rating import PlayerRating
from games.models.rules import (
    PLAIN_FIELDS,
    ROW_BONUS_FIELDS,
    SPECIAL_CHOICES,
    RuleConfiguration,
    SpecialHandSetting,
)
from games.models.standings import Standing, StandingPeriod, StandingsRun

__all__ = [
    "SPECIAL_CHOICES",
    "ROW_BONUS_FIELDS",
    "PLAIN_FIELDS",
    "RuleConfiguration",
    "SpecialHandSetting",
    "Table",
    "TableEvent",
    "Round",
    "RoundPlayer",
    "RoundStaffAction",
    "MATCH_TABLES",
    "MATCH_MAX_DEALS",
    "MatchStatus",
    "DuplicateMatch",
    "StandingPeriod",
    "Standing",
    "StandingsRun",
    "PlayerRating",
]

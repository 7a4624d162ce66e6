"""The engine's exceptions: one family, each with a stable machine-readable code.

Untrusted input is parsed once, at the edge; everything it can get wrong raises a subclass of
:class:`RulesError` whose ``code`` is the error code of ENGINE_CLI.md.
"""

from __future__ import annotations


class RulesError(ValueError):
    """Base of every error the rules engine raises on bad input."""

    code = "rules_error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class BadInputError(RulesError):
    """The request is not the shape a command needs (not JSON, missing or mistyped fields)."""

    code = "bad_json"


class InvalidCardError(RulesError):
    """A card string that is not a rank followed by a suit."""

    code = "bad_card"


class DuplicateCardError(RulesError):
    """The same card appears twice, within a hand or across players."""

    code = "duplicate_card"


class WrongCountError(RulesError):
    """A row, a hand or a list of players of the wrong size."""

    code = "wrong_count"


class FoulError(RulesError):
    """An arrangement that breaks back >= middle >= front (RULES.md §4)."""

    code = "foul"

    def __init__(self, message: str, rows: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.rows = rows


class NotSpecialError(RulesError):
    """A declared special hand that the cards do not make (or that is disabled)."""

    code = "not_special"


class ConfigError(RulesError):
    """An invalid rule configuration."""

    code = "bad_config"

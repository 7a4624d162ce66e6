"""Why the table refused a command.

Every refusal is a :class:`TableError` with a stable machine-readable ``code`` (for the
WebSocket protocol), a ``message`` for people and optional ``details`` (JSON-able, e.g. the
fouled rows). When one is raised, nothing has changed: commands are pure functions.
"""

from __future__ import annotations

from typing import Any


class TableError(ValueError):
    """A command the table does not allow in its current state, with the reason."""

    def __init__(self, code: str, message: str, **details: Any) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, **self.details}


class StaleTimeout(TableError):
    """A timeout that must do nothing: the phase or version moved on, or it came early.

    :func:`games.table.machine.timeout` never raises it (it returns an empty transition);
    :func:`games.table.machine.verify_timeout` does, for callers that want the reason.
    """

"""Structured logs: one JSON object per line, and the request context every record carries.

Imported by the settings (``build_logging``), so nothing here may touch ``django.conf``.
The request id and user come from a context variable the request-id middleware sets; the
context filter copies them onto every record logged while the request is handled, in
whichever thread or task that happens (asgiref carries context variables across).
"""

from __future__ import annotations

import json
import logging
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from django.core.exceptions import ImproperlyConfigured

# The request being handled in this context, if any (set by RequestIdMiddleware).
current_request: ContextVar[Any] = ContextVar("shisanshui_current_request", default=None)

# Attributes every LogRecord has; anything else on a record came from `extra=`.
_RECORD_ATTRIBUTES = frozenset(
    vars(logging.LogRecord("", logging.INFO, "", 0, "", None, None)).keys()
) | {"message", "asctime", "taskName"}


class RequestContextFilter(logging.Filter):
    """Adds ``request_id`` and ``user_id`` of the request being handled, when there is one.

    The user is read only if authentication already loaded it: logging never queries.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        request = current_request.get()
        if request is None:
            return True
        if not hasattr(record, "request_id"):
            record.request_id = getattr(request, "request_id", None)
        user = getattr(request, "_cached_user", None)
        if user is not None and not hasattr(record, "user_id") and user.is_authenticated:
            record.user_id = user.pk
        return True


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time (UTC, ISO 8601), level, logger, message, extras.

    Extras are the record's non-standard attributes (``extra={"table": 7}``); values JSON
    cannot encode are written as their ``str()``. An exception goes under ``exc_info``.
    """

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, tz=UTC).isoformat(
                timespec="milliseconds"
            ),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in vars(record).items():
            if key not in _RECORD_ATTRIBUTES and not key.startswith("_") and key not in entry:
                entry[key] = value
        if record.exc_info:
            entry["exc_info"] = self.formatException(record.exc_info)
        if record.stack_info:
            entry["stack_info"] = self.formatStack(record.stack_info)
        return json.dumps(entry, default=str, ensure_ascii=False)


class PlainFormatter(logging.Formatter):
    """The development format, with the request id appended when there is one."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(levelname)s %(name)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        line = super().format(record)
        request_id = getattr(record, "request_id", None)
        return f"{line} [request {request_id}]" if request_id else line


def build_logging(*, log_format: str, level: str) -> dict[str, Any]:
    """The LOGGING dict: everything to stderr, as ``plain`` text or ``json`` lines."""
    if log_format not in {"plain", "json"}:
        raise ImproperlyConfigured(f"LOG_FORMAT must be 'plain' or 'json', not {log_format!r}.")
    if level not in logging.getLevelNamesMapping():
        raise ImproperlyConfigured(f"LOG_LEVEL {level!r} is not a logging level.")
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"request_context": {"()": "shisanshui.logs.RequestContextFilter"}},
        "formatters": {
            "plain": {"()": "shisanshui.logs.PlainFormatter"},
            "json": {"()": "shisanshui.logs.JsonFormatter"},
        },
        "handlers": {
            "console": {
                "class": "logging.StreamHandler",
                "formatter": log_format,
                "filters": ["request_context"],
            },
        },
        "root": {"handlers": ["console"], "level": level},
    }

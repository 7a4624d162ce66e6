"""Structured logs: the JSON formatter, the request context, the LOGGING builder."""

import json
import logging
from typing import Any

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.test import Client

from shisanshui.logs import (
    JsonFormatter,
    PlainFormatter,
    RequestContextFilter,
    build_logging,
    current_request,
)


def _record(message: str = "table %s settled", *args: object, **extra: object) -> logging.LogRecord:
    logger = logging.getLogger("games.live.services")
    return logger.makeRecord(
        logger.name, logging.INFO, __file__, 1, message, args or (7,), None, extra=extra
    )


def test_a_record_is_one_json_object_with_time_level_logger_and_message() -> None:
    line = JsonFormatter().format(_record())

    assert "\n" not in line
    entry = json.loads(line)
    assert entry["level"] == "INFO"
    assert entry["logger"] == "games.live.services"
    assert entry["message"] == "table 7 settled"
    assert entry["time"].endswith("+00:00")
    assert set(entry) == {"time", "level", "logger", "message"}


def test_extra_fields_are_written_and_unencodable_values_as_text() -> None:
    class Seat:
        def __str__(self) -> str:
            return "seat 3"

    entry = json.loads(JsonFormatter().format(_record(table=7, round=12, seat=Seat())))

    assert entry["table"] == 7
    assert entry["round"] == 12
    assert entry["seat"] == "seat 3"


def test_an_exception_is_kept_in_the_same_line() -> None:
    try:
        raise ValueError("foul")
    except ValueError:
        record = logging.getLogger("x").makeRecord(
            "x", logging.ERROR, __file__, 1, "failed", (), __import__("sys").exc_info()
        )

    line = JsonFormatter().format(record)

    assert "\n" not in line
    assert "ValueError: foul" in json.loads(line)["exc_info"]


def test_non_ascii_messages_stay_readable() -> None:
    entry = JsonFormatter().format(_record("十三水 %s", "ok"))

    assert "十三水 ok" in entry


def test_the_context_filter_adds_the_request_id_and_loaded_user() -> None:
    class User:
        pk = 42
        is_authenticated = True

    class Request:
        request_id = "abc123"
        _cached_user = User()

    token = current_request.set(Request())
    try:
        record = _record()
        assert RequestContextFilter().filter(record)
    finally:
        current_request.reset(token)

    entry = json.loads(JsonFormatter().format(record))
    assert entry["request_id"] == "abc123"
    assert entry["user_id"] == 42
    assert "[request abc123]" in PlainFormatter().format(record)


def test_outside_a_request_the_filter_adds_nothing() -> None:
    record = _record()

    assert RequestContextFilter().filter(record)
    assert "request_id" not in json.loads(JsonFormatter().format(record))


def test_build_logging_selects_the_formatter_and_refuses_unknown_values() -> None:
    assert build_logging(log_format="json", level="INFO")["handlers"]["console"]["formatter"] == (
        "json"
    )
    assert build_logging(log_format="plain", level="DEBUG")["root"]["level"] == "DEBUG"
    with pytest.raises(ImproperlyConfigured):
        build_logging(log_format="xml", level="INFO")
    with pytest.raises(ImproperlyConfigured):
        build_logging(log_format="json", level="LOUD")


def test_a_request_is_logged_with_its_id_status_and_duration(
    client: Client, settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    settings.LOG_REQUESTS = True
    caplog.set_level(logging.INFO, logger="shisanshui.requests")

    response = client.get("/", HTTP_X_REQUEST_ID="req-1")

    (record,) = [r for r in caplog.records if r.name == "shisanshui.requests"]
    assert response["X-Request-ID"] == "req-1"
    assert record.getMessage() == "GET / 200"
    assert record.status == 200  # type: ignore[attr-defined]
    assert record.duration_ms >= 0  # type: ignore[attr-defined]

"""What every endpoint of the HTTP API shares: the refusal of a request over its rate.

A throttled request (REST_FRAMEWORK's DEFAULT_THROTTLE_RATES) is answered 429 with
Retry-After and {"error": {"code": "rate_limited", "message": ..., "retry_after": seconds}},
the API's error shape (lobby.apis gives every refusal of its own in it too).
"""

from __future__ import annotations

import math
from typing import Any

from django.utils.translation import ngettext
from rest_framework import exceptions, status
from rest_framework.response import Response
from rest_framework.views import exception_handler


def api_error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The API's error body."""
    return {"error": {"code": code, "message": message, **extra}}


def retry_message(seconds: int) -> str:
    return ngettext(
        "Too many requests: try again in %(seconds)d second.",
        "Too many requests: try again in %(seconds)d seconds.",
        seconds,
    ) % {"seconds": seconds}


def too_many_requests(*, code: str, message: str, retry_after: int | float | None) -> Response:
    """A 429 in the API's error shape, Retry-After in whole seconds (at least 1)."""
    seconds = max(1, math.ceil(retry_after or 1))
    return Response(
        api_error(code, message, retry_after=seconds),
        status=status.HTTP_429_TOO_MANY_REQUESTS,
        headers={"Retry-After": str(seconds)},
    )


def throttled_response(exc: exceptions.Throttled) -> Response:
    seconds = max(1, math.ceil(exc.wait or 1))
    return too_many_requests(
        code="rate_limited", message=retry_message(seconds), retry_after=seconds
    )


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with a throttled request in the API's error shape."""
    if isinstance(exc, exceptions.Throttled):
        return throttled_response(exc)
    return exception_handler(exc, context)

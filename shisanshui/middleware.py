"""Request ids and the access log."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction
from django.conf import settings
from django.http import HttpRequest, HttpResponse

from shisanshui.logs import current_request

logger = logging.getLogger("shisanshui.requests")

HEADER = "X-Request-ID"
# An id from the load balancer is kept only if it is short and plain: it ends up in logs.
_VALID_ID = re.compile(r"^[A-Za-z0-9._:-]{1,128}$")
# Probes of the load balancer are logged at DEBUG, so they do not drown the access log.
_PROBES = frozenset({"/healthz", "/livez"})


def _request_id(request: HttpRequest) -> str:
    incoming = request.headers.get(HEADER, "")
    return incoming if _VALID_ID.match(incoming) else uuid.uuid4().hex


def _log(request: HttpRequest, response: HttpResponse, started: float) -> None:
    if not getattr(settings, "LOG_REQUESTS", False):
        return
    level = logging.DEBUG if request.path in _PROBES else logging.INFO
    logger.log(
        level,
        "%s %s %s",
        request.method,
        request.path,
        response.status_code,
        extra={
            "method": request.method,
            "path": request.path,
            "status": response.status_code,
            "duration_ms": round((time.monotonic() - started) * 1000, 1),
        },
    )


class RequestIdMiddleware:
    """Gives each request an id (the incoming X-Request-ID, or a new one), returns it in the
    response's X-Request-ID, puts it on every log record of the request, and logs the request.
    """

    sync_capable = True
    async_capable = True

    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response
        self.is_async = iscoroutinefunction(get_response)
        if self.is_async:
            markcoroutinefunction(self)

    def __call__(self, request: HttpRequest) -> Any:
        if self.is_async:
            return self.__acall__(request)
        started = time.monotonic()
        request.request_id = _request_id(request)  # type: ignore[attr-defined]
        token = current_request.set(request)
        try:
            response = self.get_response(request)
            response[HEADER] = request.request_id  # type: ignore[attr-defined]
            _log(request, response, started)
            return response
        finally:
            current_request.reset(token)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        started = time.monotonic()
        request.request_id = _request_id(request)  # type: ignore[attr-defined]
        token = current_request.set(request)
        try:
            get_response: Callable[[HttpRequest], Awaitable[HttpResponse]] = self.get_response
            response = await get_response(request)
            response[HEADER] = request.request_id  # type: ignore[attr-defined]
            _log(request, response, started)
            return response
        finally:
            current_request.reset(token)

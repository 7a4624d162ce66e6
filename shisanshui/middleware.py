"""Request ids and the access log; the rate of log-in attempts per address."""

from __future__ import annotations

import logging
import math
import re
import time
import uuid
from collections.abc import Awaitable, Callable
from functools import lru_cache
from typing import Any

from asgiref.sync import iscoroutinefunction, markcoroutinefunction, sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from rest_framework.throttling import SimpleRateThrottle

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


class LoginRateThrottle(SimpleRateThrottle):
    """REST framework's "login" rate, per client address (REMOTE_ADDR), in the default cache."""

    scope = "login"

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


@lru_cache(maxsize=1)
def _login_paths() -> frozenset[str]:
    return frozenset({reverse("accounts:login"), reverse("admin:login")})


def _login_refused(request: HttpRequest) -> HttpResponse | None:
    """The 429 page when this POST to a log-in form is over its address's rate, else None."""
    if request.method != "POST" or request.path not in _login_paths():
        return None
    throttle = LoginRateThrottle()
    if throttle.allow_request(request, None):
        return None
    from accounts.lockout import login_throttled_message, too_many_attempts_page

    seconds = max(1, math.ceil(throttle.wait() or 1))
    return too_many_attempts_page(
        request, message=login_throttled_message(seconds), seconds=seconds
    )


class LoginThrottleMiddleware:
    """Limits the POSTs to the web and admin log-in forms per client address (the "login" rate
    of REST_FRAMEWORK's DEFAULT_THROTTLE_RATES): 429 with Retry-After beyond it. Beside the
    lockout of one user name + address (django-axes), this bounds the names one address tries.
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
        refused = _login_refused(request)
        return refused if refused is not None else self.get_response(request)

    async def __acall__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST":
            refused = await sync_to_async(_login_refused)(request)
            if refused is not None:
                return refused
        get_response: Callable[[HttpRequest], Awaitable[HttpResponse]] = self.get_response
        return await get_response(request)

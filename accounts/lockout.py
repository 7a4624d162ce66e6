"""The log-in lockout (django-axes, settings AXES_*): what a locked-out client is told.

Failures are counted per user name + client address; after AXES_FAILURE_LIMIT of them the pair
is refused until AXES_COOLOFF_TIME after its last failure, whatever the password. Attempts
refused during a lockout are not recorded (AXES_RESET_COOL_OFF_ON_FAILURE_DURING_LOCKOUT is
off), so the time left is exact and is sent as Retry-After.
"""

from __future__ import annotations

import math
from typing import Any

from axes.helpers import get_client_ip_address, get_client_username, get_cool_off
from axes.models import AccessAttempt
from django.db.models import Max
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import ngettext

API_PREFIX = "/api/"


def lockout_seconds_left(request: Any, credentials: dict[str, Any] | None = None) -> int:
    """Seconds until the lockout of this request's user name + address ends (at least 1)."""
    cool_off = get_cool_off(request)
    total = math.ceil(cool_off.total_seconds()) if cool_off else 0
    username = get_client_username(request, credentials)
    address = getattr(request, "axes_ip_address", None) or get_client_ip_address(request)
    last = AccessAttempt.objects.filter(username=username, ip_address=address).aggregate(
        last=Max("attempt_time")
    )["last"]
    if last is None or cool_off is None:
        return max(1, total)
    left = (last + cool_off - timezone.now()).total_seconds()
    return max(1, min(total, math.ceil(left)))


def lockout_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many failed log-ins with this user name from your address. "
        "Try again in %(minutes)d minute.",
        "Too many failed log-ins with this user name from your address. "
        "Try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def lockout_api_response(request: Any, credentials: dict[str, Any] | None = None) -> JsonResponse:
    """429 in the API's error shape, for POST /api/auth/token/."""
    seconds = lockout_seconds_left(request, credentials)
    response = JsonResponse(
        {
            "error": {
                "code": "locked_out",
                "message": lockout_message(seconds),
                "retry_after": seconds,
            }
        },
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


def too_many_attempts_page(request: HttpRequest, *, message: str, seconds: int) -> HttpResponse:
    """The HTML 429 page of a refused log-in (locked out, or too many from one address)."""
    response = render(
        request,
        "too_many_attempts.html",
        {"message": message, "retry_after": seconds},
        status=429,
    )
    response["Retry-After"] = str(seconds)
    return response


def lockout_response(
    request: HttpRequest,
    original_response: HttpResponse | None = None,
    credentials: dict[str, Any] | None = None,
) -> HttpResponse:
    """AXES_LOCKOUT_CALLABLE: the page (or, under /api/, the JSON error) of a lockout."""
    if request.path.startswith(API_PREFIX):
        return lockout_api_response(request, credentials)
    seconds = lockout_seconds_left(request, credentials)
    return too_many_attempts_page(request, message=lockout_message(seconds), seconds=seconds)


def login_throttled_message(seconds: int) -> str:
    return ngettext(
        "Too many log-in attempts from your address. Try again in %(seconds)d second.",
        "Too many log-in attempts from your address. Try again in %(seconds)d seconds.",
        seconds,
    ) % {"seconds": seconds}

"""What every endpoint of the HTTP API shares: the error body and the refusals answered in it.

Every refusal is {"error": {"code": ..., "message": ..., ...}} (`api_error`), the message in the
request's language. A throttled request (REST_FRAMEWORK's DEFAULT_THROTTLE_RATES) is answered
429 with Retry-After and `retry_after`, by every view. A view derived from `ErrorBodyApi`
answers every other refusal in that body too: a `shisanshui.errors.ClientError` with its code
and status, a request that did not validate as `invalid` with its `fields`, and DRF's own (not
logged in, not found, wrong method) with their codes. `ERRORS` describes those answers in the
OpenAPI schema.
"""

from __future__ import annotations

import math
from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.utils.translation import gettext as _
from drf_spectacular.utils import OpenApiResponse, extend_schema_serializer
from rest_framework import exceptions, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView, exception_handler

from shisanshui.errors import ClientError, RateLimitedError, retry_message


def api_error(code: str, message: str, **extra: Any) -> dict[str, Any]:
    """The API's error body."""
    return {"error": {"code": code, "message": message, **extra}}


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


def error_body_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Every refusal in the one {"error": {...}} shape."""
    if isinstance(exc, exceptions.Throttled):
        return throttled_response(exc)
    if isinstance(exc, ClientError):
        response = Response(api_error(exc.code, exc.message, **exc.details()), status=exc.status)
        if isinstance(exc, RateLimitedError):  # as throttled_response does for DRF's throttles
            response["Retry-After"] = str(exc.retry_after)
        return response
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied()
    if isinstance(exc, exceptions.ValidationError):
        fields = exc.detail if isinstance(exc.detail, dict) else {"non_field_errors": exc.detail}
        return Response(
            api_error("invalid", _("The request is not valid."), fields=fields),
            status=status.HTTP_400_BAD_REQUEST,
        )
    response = exception_handler(exc, context)
    if response is not None and isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else "error"
        response.data = api_error(code, str(exc.detail))
    return response


class ErrorBodyApi(APIView):
    """Base of the views that answer every refusal in the API's error body."""

    def get_exception_handler(self) -> Any:
        return error_body_exception_handler


# The error body in the OpenAPI schema, under the component names API clients know.


@extend_schema_serializer(component_name="LobbyErrorBody")
class ErrorBodySerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable, for programs: e.g. room_full.")
    message = serializers.CharField(help_text="For people, in the request's language.")
    fields = serializers.DictField(
        required=False, help_text="Per-field messages of a request that did not validate."
    )
    retry_after = serializers.IntegerField(
        required=False, help_text="rate_limited only: seconds to wait before trying again."
    )


@extend_schema_serializer(component_name="LobbyError")
class ErrorSerializer(serializers.Serializer):
    error = ErrorBodySerializer()


ERRORS = {
    400: OpenApiResponse(ErrorSerializer, description="Bad input."),
    403: OpenApiResponse(ErrorSerializer, description="Not allowed, or not logged in."),
    404: OpenApiResponse(ErrorSerializer, description="No such room."),
    409: OpenApiResponse(ErrorSerializer, description="The room's or the player's state."),
    429: OpenApiResponse(
        ErrorSerializer,
        description="Over a rate limit: `retry_after` seconds (also the Retry-After header).",
    ),
}


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    """The schema's answers of these HTTP statuses (an `extend_schema` `responses` part)."""
    return {code: ERRORS[code] for code in codes}

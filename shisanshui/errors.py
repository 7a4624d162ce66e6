"""Refusals a client can act on, shared by every app's API and sockets.

A `ClientError` has a stable `code` (for programs), an HTTP `status` (for the API) and a
`message` for people, rendered in the language active when it is read, so the same refusal
reads in English or Chinese wherever it is shown. When one is raised, nothing has been written.
Each app derives its refusals from it (`lobby.errors`, the duplicate match's in
`games.live.matches`); the API (`shisanshui.api`) and the sockets answer any of them in one
place. The ones here belong to no app: a socket frame that cannot be used, and a rate limit.
"""

from __future__ import annotations

from typing import Any, ClassVar

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext


class ClientError(Exception):
    """A refused request. `params` fill the message's %(name)s placeholders."""

    code: ClassVar[str] = "client_error"
    status: ClassVar[int] = 400
    template: ClassVar[Promise | str] = _("The request was refused.")

    def __init__(self, **params: Any) -> None:
        self.params = params
        super().__init__(self.code, params)

    @property
    def message(self) -> str:
        """The message in the active language."""
        return str(self.template) % self.params if self.params else str(self.template)

    def details(self) -> dict[str, Any]:
        """Fields a program needs beside code and message (e.g. `retry_after`); none here."""
        return {}

    def __str__(self) -> str:
        return self.message


# A WebSocket frame that cannot be used (400).


class MalformedMessage(ClientError):
    code = "malformed_message"
    template = _("The message cannot be used: %(detail)s")


class UnknownMessageType(ClientError):
    code = "unknown_message_type"
    template = _("Unknown message type %(type)s.")


class MessageTooLarge(ClientError):
    code = "message_too_large"
    template = _("The message is longer than %(max)s bytes.")


# Too many requests (429).


def retry_message(seconds: int) -> str:
    """What a request over a rate limit is told, in the active language."""
    return ngettext(
        "Too many requests: try again in %(seconds)d second.",
        "Too many requests: try again in %(seconds)d seconds.",
        seconds,
    ) % {"seconds": seconds}


class RateLimitedError(ClientError):
    """A rate limit (shisanshui.ratelimit) refused the request; `retry_after` is in seconds."""

    code = "rate_limited"
    status = 429

    def __init__(self, retry_after: int) -> None:
        super().__init__(retry_after=retry_after)
        self.retry_after = retry_after

    @property
    def message(self) -> str:
        return retry_message(self.retry_after)  # the words of the API's throttled requests

    def details(self) -> dict[str, Any]:
        return {"retry_after": self.retry_after}

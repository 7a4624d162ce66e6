"""Ids from admin addresses, checked: a mistyped address is a 404, never a 500.

Django's own admin views turn an id that is not one (``abc``) into "does not exist", but
django-simple-history's history views, and any view that looks an id up itself, pass it to
the database as it comes: ``/admin/<app>/<model>/1/change/history/`` reaches the history
view with the object id ``1/change``, and the lookup raises ValueError (a 500).
"""

from __future__ import annotations

from typing import Any

from django.contrib.admin.utils import unquote
from django.core.exceptions import ValidationError
from django.db.models import Model
from django.http import Http404, HttpRequest, HttpResponse


def admin_id_or_404(model: type[Model], value: str) -> Any:
    """The primary key of ``model`` that the admin address's ``value`` names (quoted as the
    admin quotes ids), or Http404 when it cannot be one."""
    try:
        return model._meta.pk.to_python(unquote(value))
    except (ValidationError, ValueError, TypeError):
        raise Http404 from None


class CheckedHistoryIds:
    """For a ``SimpleHistoryAdmin`` (put it first among the bases): the history list and an
    old version's page check their ids before simple-history looks them up."""

    model: type[Model]

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        admin_id_or_404(self.model, object_id)
        return super().history_view(request, object_id, extra_context)  # type: ignore[misc]

    def history_form_view(
        self,
        request: HttpRequest,
        object_id: str,
        version_id: str,
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        admin_id_or_404(self.model, object_id)
        admin_id_or_404(self.model.history.model, version_id)
        return super().history_form_view(  # type: ignore[misc]
            request, object_id, version_id, extra_context
        )

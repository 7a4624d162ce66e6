"""The base of the ledger's admin pages: read-only to everyone, whatever their permissions
(coins move only through the ledger's services)."""

from typing import Any

from django.contrib import admin
from django.http import HttpRequest


class LedgerModelAdmin(admin.ModelAdmin):
    """Read-only for everyone: ledger rows are written only by the ledger services."""

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def _action_form_context(self, request: HttpRequest, obj: Any, title: str) -> dict[str, Any]:
        return {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": obj,
            "title": title,
        }

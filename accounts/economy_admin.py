"""The admin of the economy: its settings (with their history), the sign-up quotas per address,
and the collusion flags support reviews. Registered on import by ``accounts.admin``."""

from typing import Any
from urllib.parse import urlencode

from django.conf import settings
from django.contrib import admin
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.urls import reverse
from django.utils.html import format_html
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from accounts.admin_base import LedgerModelAdmin
from accounts.collusion import collusion_flag_review
from accounts.models import (
    Account,
    AccountKind,
    CollusionFlag,
    EconomySettings,
    SignupQuota,
    User,
)
from accounts.services import economy_settings_get_or_create
from shisanshui.admin_ids import CheckedHistoryIds


@admin.register(EconomySettings)
class EconomySettingsAdmin(CheckedHistoryIds, SimpleHistoryAdmin):
    """The one row of economy settings: the list opens it directly; every change is kept in
    its history with who made it. Changed by superusers and `rules_admin` (the permission
    `accounts.change_economysettings`), viewed by `support`."""

    fieldsets = (
        (_("Grants"), {"fields": ("signup_grant", "daily_bonus")}),
        (
            _("Relief for broke players"),
            {"fields": ("relief_amount", "relief_below", "relief_per_day")},
        ),
        (_("Sign-ups"), {"fields": ("signups_per_address_per_day",)}),
        (
            _("Collusion report"),
            {
                "fields": (
                    "collusion_min_rounds",
                    "collusion_days",
                    "collusion_min_share_percent",
                    "collusion_min_flow",
                )
            },
        ),
        (None, {"fields": ("updated_at",)}),
    )
    readonly_fields = ("updated_at",)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_or_change_permission(request):
            raise PermissionDenied
        stored = economy_settings_get_or_create()
        return HttpResponseRedirect(
            reverse("admin:accounts_economysettings_change", args=[stored.pk])
        )

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change, **kwargs)
        field = form.base_fields.get("signup_grant")
        if field is not None:
            field.help_text = gettext(
                "Coins a new player receives. Empty: the SIGNUP_GRANT setting (now %(coins)s)."
            ) % {"coins": f"{settings.SIGNUP_GRANT:,}"}
        return form


@admin.register(SignupQuota)
class SignupQuotaAdmin(LedgerModelAdmin):
    """Accounts created per address and UTC day (read-only: written by the sign-up)."""

    list_display = ("day", "address", "count")
    list_filter = ("day",)
    search_fields = ("address",)
    fields = ("address", "day", "count")
    readonly_fields = fields


def _entries_url(user: User) -> str | None:
    wallet = Account.objects.filter(user=user, kind=AccountKind.WALLET).first()
    if wallet is None:
        return None
    return reverse("admin:accounts_entry_changelist") + f"?account__id__exact={wallet.pk}"


@admin.register(CollusionFlag)
class CollusionFlagAdmin(admin.ModelAdmin):
    """The collusion report: written by the hourly scan (games.history.collusion), reviewed by
    support, who may change only the status and the note (recorded with their name)."""

    list_display = (
        "id",
        "loser",
        "winner",
        "shared_rounds",
        "flow",
        "share_percent",
        "last_round_at",
        "status",
        "reviewer",
        "updated_at",
    )
    list_display_links = ("id", "loser")
    list_filter = ("status", "updated_at")
    list_select_related = ("loser", "winner", "reviewer")
    search_fields = ("loser__username", "winner__username", "note")
    ordering = ("status", "-flow")
    fieldsets = (
        (
            _("Pair"),
            {
                "fields": (
                    "loser",
                    "winner",
                    "shared_rounds",
                    "flow",
                    "losses",
                    "share_percent",
                    "first_round_at",
                    "last_round_at",
                    "flagged_at",
                    "updated_at",
                )
            },
        ),
        (_("Evidence"), {"fields": ("rounds_link", "loser_entries_link", "winner_entries_link")}),
        (_("Review"), {"fields": ("status", "note", "reviewer", "reviewed_at")}),
    )
    readonly_fields = (
        "loser",
        "winner",
        "shared_rounds",
        "flow",
        "losses",
        "share_percent",
        "first_round_at",
        "last_round_at",
        "flagged_at",
        "updated_at",
        "rounds_link",
        "loser_entries_link",
        "winner_entries_link",
        "reviewer",
        "reviewed_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    @admin.display(description=_("Rounds together"))
    def rounds_link(self, flag: CollusionFlag) -> str:
        query = urlencode({"player": flag.loser.username, "q": flag.winner.username})
        url = reverse("admin:games_round_changelist") + "?" + query
        return format_html(
            '<a href="{}">{}</a>',
            url,
            gettext("Rounds of %(loser)s with %(winner)s")
            % {"loser": flag.loser, "winner": flag.winner},
        )

    @admin.display(description=_("Ledger of the losing player"))
    def loser_entries_link(self, flag: CollusionFlag) -> str:
        return self._entries_link(flag.loser)

    @admin.display(description=_("Ledger of the winning player"))
    def winner_entries_link(self, flag: CollusionFlag) -> str:
        return self._entries_link(flag.winner)

    def _entries_link(self, user: User) -> str:
        url = _entries_url(user)
        if url is None:
            return gettext("No wallet yet.")
        return format_html(
            '<a href="{}">{}</a>', url, gettext("Statement of %(user)s") % {"user": user}
        )

    def save_model(self, request: HttpRequest, obj: CollusionFlag, form: Any, change: bool) -> None:
        collusion_flag_review(
            flag=obj,
            status=form.cleaned_data["status"],
            note=form.cleaned_data.get("note", ""),
            reviewer=request.user,
        )

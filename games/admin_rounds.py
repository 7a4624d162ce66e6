"""The settlement audit in the admin: played rounds, read-only for everyone (support included).

Rounds are written only by :mod:`games.table_services`; here they are listed, filtered,
looked at, verified (:func:`games.audit.round_verify`) and exported as CSV. Nothing can be
added, changed or deleted, superusers included; the `support` group views them
(``games.view_round``) and exports ledger entries with ``accounts.export_ledger``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

from django.contrib import admin
from django.contrib.admin.filters import DateFieldListFilter
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin import ledger_csv_rows
from accounts.models import Entry
from games import audit
from games.models import Round
from shisanshui.csv_export import csv_text, streamed_csv

ROUND_CSV_HEADER = (
    "round_id",
    "room",
    "table_id",
    "number",
    "started_at",
    "settled_at",
    "username",
    "position",
    "special",
    "auto",
    "escaped",
    "water",
    "delta",
    "penalty",
    "flags",
    "transaction_id",
    "commitment",
)


def round_csv_rows(rounds: QuerySet[Round]) -> Iterator[tuple[Any, ...]]:
    """ROUND_CSV_HEADER, then one row per player of each round, in round order."""
    yield ROUND_CSV_HEADER
    rows = rounds.select_related("table__room").prefetch_related("players__user").order_by("pk")
    for round_, flags in audit.rounds_with_flags(rows):
        for p in round_.players.all():
            yield (
                round_.pk,
                csv_text(round_.table.room.name),
                round_.table_id,
                round_.number,
                round_.started_at.isoformat(),
                round_.settled_at.isoformat() if round_.settled_at else "",
                csv_text(p.user.username),
                p.position,
                p.special,
                p.auto,
                int(p.escaped),
                p.water,
                p.delta,
                p.penalty,
                " ".join(flags),
                round_.transaction_id or "",
                round_.commitment,
            )


class PlayerFilter(admin.SimpleListFilter):
    title = _("player")
    parameter_name = "player"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        names = (
            Round.objects.values_list("players__user__username", flat=True)
            .distinct()
            .order_by("players__user__username")[:100]
        )
        chosen = self.value()
        out = [(n, n) for n in names if n]
        if chosen and (chosen, chosen) not in out:
            out.append((chosen, chosen))
        return out

    def queryset(self, request: HttpRequest, queryset: QuerySet[Round]) -> QuerySet[Round]:
        return (
            audit.rounds_filter(rounds=queryset, player=self.value()) if self.value() else queryset
        )


class AmountFilter(admin.SimpleListFilter):
    """The largest |delta| of one player: ``min-max`` coins (either end may be empty)."""

    title = _("amount (coins won or lost by one player)")
    parameter_name = "amount"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        out = [
            ("0-99", _("under 100")),
            ("100-999", "100 – 999"),
            ("1000-9999", "1,000 – 9,999"),
            ("10000-", _("10,000 and more")),
        ]
        value = self.value()
        if value and value not in {v for v, _label in out}:
            out.append((value, value))
        return out

    def queryset(self, request: HttpRequest, queryset: QuerySet[Round]) -> QuerySet[Round]:
        value = self.value()
        if not value:
            return queryset
        low, _sep, high = value.partition("-")
        try:
            amount_min = int(low) if low else None
            amount_max = int(high) if high else None
        except ValueError:
            return queryset.none()
        return audit.rounds_filter(rounds=queryset, amount_min=amount_min, amount_max=amount_max)


class FlagFilter(admin.SimpleListFilter):
    title = _("flag")
    parameter_name = "flag"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [
            (audit.FLAG_ESCAPE, _("an escape")),
            (audit.FLAG_CUT, _("a cannot-cover cut")),
            (audit.FLAG_AUTO, _("an automatic arrangement")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Round]) -> QuerySet[Round]:
        return audit.rounds_filter(rounds=queryset, flag=self.value()) if self.value() else queryset


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    """Rounds for the settlement audit: read-only, verified on demand."""

    list_display = ("id", "room", "number", "settled_at", "player_names", "amount", "flags")
    list_display_links = ("id", "number")
    list_filter = (
        PlayerFilter,
        ("table__room", admin.RelatedOnlyFieldListFilter),
        ("settled_at", DateFieldListFilter),
        AmountFilter,
        FlagFilter,
    )
    search_fields = ("players__user__username", "table__room__name", "commitment")
    date_hierarchy = "settled_at"
    actions = ["verify_selected", "export_rounds_csv", "export_ledger_csv"]
    ordering = ("-settled_at", "-id")

    def get_queryset(self, request: HttpRequest) -> QuerySet[Round]:
        return (
            super()
            .get_queryset(request)
            .select_related("table__room")
            .prefetch_related("players__user")
        )

    # -- read-only for everyone -------------------------------------------------------------
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_export_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("accounts.export_ledger"))

    # -- list columns -----------------------------------------------------------------------
    @admin.display(description=_("room"), ordering="table__room__name")
    def room(self, round_: Round) -> str:
        return str(round_.table.room.name)

    @admin.display(description=_("players"))
    def player_names(self, round_: Round) -> str:
        return ", ".join(
            f"{p.user.username} {p.delta:+d}"
            for p in sorted(round_.players.all(), key=lambda p: p.position)
        )

    @admin.display(description=_("amount"))
    def amount(self, round_: Round) -> int:
        return max((abs(p.delta) for p in round_.players.all()), default=0)

    @admin.display(description=_("flags"))
    def flags(self, round_: Round) -> str:
        return " ".join(audit.rounds_with_flags([round_])[0][1])

    # -- detail -----------------------------------------------------------------------------
    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        """Everything about one round; POST is refused (nothing here can be changed)."""
        if request.method != "GET":
            raise PermissionDenied
        round_ = get_object_or_404(
            Round.objects.select_related("table__room", "transaction"), pk=object_id
        )
        if not self.has_view_permission(request, round_):
            raise PermissionDenied
        players = list(round_.players.select_related("user").order_by("position"))
        report = audit.round_verify(round_=round_)
        checks = {c.user_id: c for c in report.players}
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": round_,
            "title": gettext("Round %(round)s") % {"round": round_},
            "round": round_,
            "rows": [(p, checks.get(p.user_id)) for p in players],
            "report": report,
            "config_json": json.dumps(round_.config, indent=2, ensure_ascii=False),
            "result": round_.result or {},
            "transactions": [
                (t, list(t.entries.select_related("account__user").order_by("id")))
                for t in audit.round_transactions(round_=round_)
            ],
            "replay_url": reverse("games:round_replay", args=[round_.pk]),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/games/round/detail.html", context)

    # -- actions and the bulk verification --------------------------------------------------
    @admin.action(description=_("Verify the selected rounds"), permissions=["view"])
    def verify_selected(self, request: HttpRequest, queryset: QuerySet[Round]) -> HttpResponse:
        reports = [audit.round_verify(round_=r) for r in queryset.order_by("pk")]
        return self._reports_response(request, reports, gettext("Verification"))

    @admin.action(description=_("Export the selected rounds as CSV"), permissions=["view"])
    def export_rounds_csv(self, request: HttpRequest, queryset: QuerySet[Round]) -> HttpResponse:
        stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
        return streamed_csv(round_csv_rows(queryset), f"rounds-{stamp}.csv")

    @admin.action(
        description=_("Export the ledger entries of the selected rounds as CSV"),
        permissions=["export"],
    )
    def export_ledger_csv(self, request: HttpRequest, queryset: QuerySet[Round]) -> HttpResponse:
        references = [f"round:{pk}" for pk in queryset.values_list("pk", flat=True)]
        entries = Entry.objects.filter(transaction__reference__in=references)
        stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
        return streamed_csv(ledger_csv_rows(entries), f"round-ledger-entries-{stamp}.csv")

    def get_urls(self) -> list[URLPattern]:
        bulk = path(
            "verify/",
            self.admin_site.admin_view(self.bulk_verify_view),
            name="games_round_bulk_verify",
        )
        return [bulk, *super().get_urls()]

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        extra = {
            **(extra_context or {}),
            "bulk_verify_url": reverse("admin:games_round_bulk_verify"),
        }
        return super().changelist_view(request, extra_context=extra)

    def bulk_verify_view(self, request: HttpRequest) -> HttpResponse:
        """Verify every round settled in a date range (GET ``date_from``, ``date_to``)."""
        if not self.has_view_permission(request):
            raise PermissionDenied
        reports = None
        date_from = _date(request.GET.get("date_from"))
        date_to = _date(request.GET.get("date_to"))
        if date_from is not None and date_to is not None:
            reports = audit.rounds_verify(date_from=date_from, date_to=date_to)
        return self._reports_response(
            request,
            reports,
            gettext("Verify rounds by settlement date"),
            date_from=request.GET.get("date_from", ""),
            date_to=request.GET.get("date_to", ""),
            bulk=True,
        )

    def _reports_response(
        self,
        request: HttpRequest,
        reports: list[audit.VerifyReport] | None,
        title: str,
        **extra: Any,
    ) -> HttpResponse:
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "title": title,
            "reports": reports,
            "mismatched": [r for r in reports or [] if not r.ok],
            **extra,
        }
        return TemplateResponse(request, "admin/games/round/verify.html", context)


def _date(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None

"""The settlement audit in the admin: played rounds, read-only for everyone (support included).

Rounds are written only by :mod:`games.live.services`; here they are listed, filtered,
looked at, verified (:func:`games.history.audit.round_verify`) and exported as CSV. Nothing can be
added, changed or deleted, superusers included; the `support` group views them
(``games.view_round``) and exports ledger entries with ``accounts.export_ledger``.

Nobody sees a hand before the settlement, superusers included. A round in play is
listed (who plays, when it started, its commitment) with the "in play" marker, but every page,
filter, action and export reads rounds through
:func:`games.selectors.rounds_hidden_until_settled` (the cards, arrangements, specials, deck
and result of a round in play come out of the database blank), URL lookups on those fields are
refused, and verifying a round in play computes nothing.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

from django.contrib import admin
from django.contrib.admin.filters import DateFieldListFilter
from django.contrib.humanize.templatetags.humanize import intcomma
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.db.models.constants import LOOKUP_SEP
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.admin import ledger_csv_rows
from accounts.models import Entry, User
from games import labels
from games.history import audit
from games.history.selectors import (
    ROUND_PLAYER_SECRET_FIELDS,
    ROUND_SECRET_FIELDS,
    SHOWN_IF_SETTLED,
    round_in_play,
    rounds_hidden_until_settled,
)
from games.models import Round
from shisanshui.admin_ids import admin_id_or_404
from shisanshui.csv_export import csv_text, streamed_csv

IN_PLAY = _("in play — cards hidden until settlement")
STATUS_IN_PLAY = "in_play"
STATUS_SETTLED = "settled"
# Field names that no URL lookup of the round list may go through.
_SECRET_LOOKUPS = frozenset(
    {*ROUND_SECRET_FIELDS, *ROUND_PLAYER_SECRET_FIELDS, "state", "events", "payload"}
)

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
    "status",
    "cards",
    "arrangement",
    # Appended later (the columns above keep their places): what the settlement started from
    # and moved, and the rules the round was played under.
    "balance_before",
    "cut_owed",
    "cut_paid",
    "transfers_paid",
    "transfers_received",
    "table_fee",
    "rule_configuration_id",
    "rule_configuration",
    "rule_version",
    "base_score",
)


def round_csv_rows(rounds: QuerySet[Round]) -> Iterator[tuple[Any, ...]]:
    """ROUND_CSV_HEADER, then one row per player of each round, in round order.

    A round in play has its players, start, commitment and rules, status ``in_play`` and
    nothing else: no cards, arrangement, special or result (they are blank in the query).

    ``balance_before`` is the wallet balance the settlement started from (what verifying the
    round uses: stored at settlement, else read from the ledger); ``cut_owed``/``cut_paid``
    are the player's cannot-cover cuts as the one who could not cover them (coins owed, coins
    paid); ``transfers_paid``/``transfers_received`` the coins of the settlement's transfers
    out of and into the player's wallet; ``table_fee`` the fee paid on winnings."""
    yield ROUND_CSV_HEADER
    rows = rounds_hidden_until_settled(rounds=rounds.select_related("table__room__rules")).order_by(
        "pk"
    )
    for round_, flags in audit.rounds_with_flags(rows):
        in_play = round_in_play(round_)
        rules = audit.round_rules(round_=round_)
        rules_cells = (
            rules.configuration_id,
            csv_text(rules.name),
            "" if rules.version is None else rules.version,
            "" if rules.base_score is None else rules.base_score,
        )
        players = list(round_.players.all())
        balances = {} if in_play else audit.round_balances_before(round_=round_)
        result = round_.result or {}
        for p in players:
            money: tuple[Any, ...] = (
                ("", "", "", "", "", "")
                if in_play
                else (
                    balances.get(p.user_id, ""),
                    sum(int(c["owed"]) for c in result.get("cuts", []) if _is(c["from"], p)),
                    sum(int(c["paid"]) for c in result.get("cuts", []) if _is(c["from"], p)),
                    sum(int(t["coins"]) for t in result.get("transfers", []) if _is(t["from"], p)),
                    sum(int(t["coins"]) for t in result.get("transfers", []) if _is(t["to"], p)),
                    audit.round_fee(result, p.user_id),
                )
            )
            played: tuple[Any, ...] = (
                ("", "", "", "", "", "", "")
                if in_play
                else (
                    p.special,
                    p.auto,
                    int(p.escaped),
                    p.water,
                    p.delta,
                    p.penalty,
                    " ".join(flags),
                )
            )
            yield (
                round_.pk,
                csv_text(round_.table.room.name),
                round_.table_id,
                round_.number,
                round_.started_at.isoformat(),
                round_.settled_at.isoformat() if round_.settled_at else "",
                csv_text(p.user.username),
                p.position,
                *played,
                round_.transaction_id or "",
                round_.commitment,
                STATUS_IN_PLAY if in_play else STATUS_SETTLED,
                p.cards,
                _arrangement_text(p.arrangement),
                *money,
                *rules_cells,
            )


def _is(user_id: Any, player: Any) -> bool:
    """Whether a result's player id (a string in the stored JSON) is ``player``'s."""
    return str(user_id) == str(player.user_id)


def _arrangement_text(arrangement: Any) -> str:
    """``front | middle | back`` in card strings, or "" (none, or a special hand)."""
    if not arrangement:
        return ""
    return " | ".join(" ".join(arrangement.get(row, [])) for row in ("front", "middle", "back"))


def player_label(user: User) -> str:
    """A player as the audit names them: the username, after a bot's nickname."""
    name = user.display_name()
    return name if name == user.get_username() else f"{name} ({user.get_username()})"


def signed(value: int) -> str:
    """Coins or water with their sign and thousands separators: +1,200, -60, 0."""
    return ("+" if value > 0 else "") + intcomma(value)


def result_rows(
    result: dict[str, Any], names: dict[str, str], *, base_score: int | None = None
) -> dict[str, list[dict[str, Any]]]:
    """A stored result's pairs, cuts and transfers as the round page shows them: players by
    name (``names``: user id -> label), guns told apart (gun, run-over, home run), row results
    and kinds in words, and each pair's coins (its water times ``base_score``, before any
    cannot-cover cut; "?" without a base score)."""

    def who(user_id: Any) -> str:
        return names.get(str(user_id), str(user_id))

    pairs = []
    for pair in result.get("pairs", []):
        kind = labels.gun_kind(pair)
        pairs.append(
            {
                "a": who(pair["a"]),
                "b": who(pair["b"]),
                "rows": labels.row_marks(pair.get("rows")),
                "gun": labels.gun_label(kind),
                "gun_kind": kind or "",
                "shooter": who(pair["shooter"]) if kind else "",
                **{
                    key: signed(pair.get(key, 0))
                    for key in ("row_water", "bonus_water", "gun_water", "special_water", "water")
                },
                "coins": "?" if base_score is None else signed(pair.get("water", 0) * base_score),
            }
        )
    cuts = [
        {
            "from": who(c["from"]),
            "to": who(c["to"]),
            "owed": intcomma(c["owed"]),
            "paid": intcomma(c["paid"]),
        }
        for c in result.get("cuts", [])
    ]
    transfers = [
        {
            "from": who(t["from"]),
            "to": who(t["to"]),
            "coins": intcomma(t["coins"]),
            "kind": labels.transfer_kind_label(t.get("kind", "settlement")),
        }
        for t in result.get("transfers", [])
    ]
    return {"pairs": pairs, "cuts": cuts, "transfers": transfers}


class StatusFilter(admin.SimpleListFilter):
    """In play (hands hidden until settlement) or settled."""

    title = _("status")
    parameter_name = "status"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, Any]]:
        return [(STATUS_IN_PLAY, IN_PLAY), (STATUS_SETTLED, _("settled"))]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Round]) -> QuerySet[Round]:
        if self.value() == STATUS_IN_PLAY:
            return queryset.filter(settled_at__isnull=True)
        if self.value() == STATUS_SETTLED:
            return queryset.filter(settled_at__isnull=False)
        return queryset


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
            (audit.FLAG_STAFF, _("a staff action on a player's account")),
        ]

    def queryset(self, request: HttpRequest, queryset: QuerySet[Round]) -> QuerySet[Round]:
        return audit.rounds_filter(rounds=queryset, flag=self.value()) if self.value() else queryset


@admin.register(Round)
class RoundAdmin(admin.ModelAdmin):
    """Rounds for the settlement audit: read-only, verified on demand."""

    # Seven columns that fit a 1280 px window beside the filters: the start, the settlement
    # and the status are one "when" column, and the players' column wraps one player a line.
    list_display = (
        "id",
        "room",
        "number",
        "when",
        "player_names",
        "amount",
        "flags",
    )
    list_display_links = ("id", "number")

    class Media:
        css = {"all": ("games/admin_round_list.css",)}

    list_filter = (
        StatusFilter,
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
        """Every page, filter, action and export starts here: hands of rounds in play blank."""
        rounds = super().get_queryset(request).select_related("table__room", "transaction")
        return rounds_hidden_until_settled(rounds=rounds)

    def lookup_allowed(self, lookup: str, value: str, request: HttpRequest | None = None) -> bool:
        """No URL lookup on a hand, the deck, the result or a table's state or events
        (``?deck__startswith=AS`` would tell a round in play's cards without showing them)."""
        parts = lookup.split(LOOKUP_SEP)
        if any(p in _SECRET_LOOKUPS or p.startswith(SHOWN_IF_SETTLED) for p in parts):
            return False
        return bool(super().lookup_allowed(lookup, value, request))

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

    @admin.display(description=_("settled at"), ordering="settled_at")
    def when(self, round_: Round) -> str:
        """When the round was settled; a round in play says so, with its start."""
        if round_in_play(round_):
            return format_html(
                "{}<br><small>{} {}</small>",
                IN_PLAY,
                gettext("started at"),
                _short_time(round_.started_at),
            )
        return _short_time(round_.settled_at)

    @admin.display(description=_("players (coins won or lost, before the penalty)"))
    def player_names(self, round_: Round) -> str:
        players = sorted(round_.players.all(), key=lambda p: p.position)
        if round_in_play(round_):
            lines = [player_label(p.user) for p in players]
        else:
            lines = [f"{player_label(p.user)} {signed(p.delta)}" for p in players]
        return format_html_join(mark_safe("<br>"), "{}", ((line,) for line in lines))

    @admin.display(description=_("amount"))
    def amount(self, round_: Round) -> str | None:
        if round_in_play(round_):
            return None
        return intcomma(max((abs(p.delta) for p in round_.players.all()), default=0))

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
        """Everything about one round; POST is refused (nothing here can be changed).

        A round in play shows who plays, when it started and its commitment, with the "in
        play" marker: no hand, no result, and no verification (nothing is computed)."""
        if request.method != "GET":
            raise PermissionDenied
        round_ = get_object_or_404(self.get_queryset(request), pk=_int(object_id))
        if not self.has_view_permission(request, round_):
            raise PermissionDenied
        players = sorted(round_.players.all(), key=lambda p: p.position)
        report = audit.round_verify(round_=round_)
        checks = {c.user_id: c for c in report.players}
        in_play = report.in_play
        names = {str(p.user_id): player_label(p.user) for p in players}
        rules = audit.round_rules(round_=round_)
        context = {
            **self.admin_site.each_context(request),
            "opts": self.opts,
            "original": round_,
            # A wide page (a row per player, a column per figure): the width the admin's
            # navigation would take is the table's, so that the page fits a 1280 px window.
            "is_nav_sidebar_enabled": False,
            "title": gettext("Round %(round)s") % {"round": round_},
            "round": round_,
            "rows": [
                (
                    p,
                    checks.get(p.user_id),
                    labels.special_name(p.special),
                    labels.auto_label(p.auto),
                    audit.round_fee(round_.result, p.user_id),
                )
                for p in players
            ],
            "report": report,
            "in_play": in_play,
            "in_play_marker": IN_PLAY,
            "config_json": json.dumps(round_.config, indent=2, ensure_ascii=False),
            **_rules_context(request, rules),
            "result": round_.result or {},
            **(
                {}
                if in_play
                else result_rows(round_.result or {}, names, base_score=rules.base_score)
            ),
            "transactions": [
                (t, list(t.entries.select_related("account__user").order_by("id")))
                for t in audit.round_transactions(round_=round_)
            ],
            "replay_url": (
                None if in_play else reverse("games:round_replay", args=[round_.pk]) + "?from=admin"
            ),
            "chat": audit.round_chat(round_=round_),
            "staff_actions": list(audit.round_staff_actions(round_=round_)),
            **(extra_context or {}),
        }
        return TemplateResponse(request, "admin/games/round/detail.html", context)

    def history_view(
        self, request: HttpRequest, object_id: str, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        """Django's history page (empty: rounds are never changed), but a 404 for an address
        that names no round id (``<id>/change/history/`` reaches it with "<id>/change")."""
        admin_id_or_404(Round, object_id)
        return super().history_view(request, object_id, extra_context)

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
            # The list, its filters and the navigation do not fit 1280 px side by side: the
            # navigation's width goes to the list (as on the round page).
            "is_nav_sidebar_enabled": False,
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
            "verified": [r for r in reports or [] if not r.in_play],
            "mismatched": [r for r in reports or [] if not r.in_play and not r.ok],
            "in_play": [r for r in reports or [] if r.in_play],
            **extra,
        }
        return TemplateResponse(request, "admin/games/round/verify.html", context)


def _rules_context(request: HttpRequest, rules: audit.RoundRules) -> dict[str, Any]:
    """The round page's naming of its rules, with links to the configuration and the version
    for whoever may view rule configurations."""
    linked = request.user.has_perm("games.view_ruleconfiguration")
    cid = rules.configuration_id
    return {
        "rules": rules,
        "rules_url": reverse("admin:games_ruleconfiguration_change", args=[cid]) if linked else "",
        "rules_version_url": (
            reverse("admin:games_ruleconfiguration_simple_history", args=[cid, rules.version])
            if linked and rules.version is not None
            else ""
        ),
    }


def _short_time(moment: Any) -> str:
    """A moment in the current time zone to the minute: "2026-12-07 14:45"."""
    return "" if moment is None else timezone.localtime(moment).strftime("%Y-%m-%d %H:%M")


def _int(value: str) -> int | None:
    try:
        return int(value)
    except ValueError:
        return None


def _date(value: str | None) -> date | None:
    try:
        return date.fromisoformat(value) if value else None
    except ValueError:
        return None

"""The admin of the economy: its settings (with their history), the mint report (each day's
minting by kind against its ceiling), the sign-up quotas per address, and the collusion flags
support reviews. Registered on import by ``accounts.admin``."""

from typing import Any
from urllib.parse import urlencode

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from simple_history.admin import SimpleHistoryAdmin

from accounts.admin_base import LedgerModelAdmin
from accounts.collusion import collusion_flag_review
from accounts.collusion_graph import Arrow, Node, ring_svg
from accounts.economy import economy_settings
from accounts.errors import EconomyChangeRefused
from accounts.freeze_admin import freeze_link
from accounts.mint import REPORT_DAYS, mint_report
from accounts.models import (
    ECONOMY_GUARDED_FIELDS,
    Account,
    AccountKind,
    CollusionFlag,
    CollusionReason,
    CollusionStatus,
    EconomyChange,
    EconomySettings,
    MintDay,
    MintKind,
    SignupQuota,
    User,
)
from accounts.scan_now import collusion_scan_request
from accounts.services import (
    ECONOMY_MONEY_PERMISSION,
    economy_change_approve,
    economy_change_propose,
    economy_settings_get_or_create,
)
from shisanshui.admin_ids import CheckedHistoryIds
from shisanshui.ratelimit import rate_limit_hit

COLLUSION_SCAN_RATE = "admin.collusion_scan"  # settings.RATE_LIMITS


class EconomySettingsForm(forms.ModelForm):  # type: ignore[type-arg]
    """Refuses, with a clear error, a change by someone without the economy administrator
    permission (every setting is what the mint pays or a protection); `user` is set by the
    admin."""

    user: User | None = None

    change_reason = forms.CharField(
        label=_("reason for the change"),
        max_length=200,
        required=False,
        help_text=_("Shown to the economy administrator who approves the proposal."),
    )

    class Meta:
        model = EconomySettings
        fields = "__all__"

    def clean(self) -> dict[str, Any]:
        cleaned: dict[str, Any] = super().clean()
        guarded = [name for name in self.changed_data if name in ECONOMY_GUARDED_FIELDS]
        if guarded and (self.user is None or not self.user.has_perm(ECONOMY_MONEY_PERMISSION)):
            raise ValidationError(
                gettext(
                    "Changing what the mint pays or a protection needs the economy "
                    "administrator permission; nothing was changed."
                )
            )
        return cleaned


@admin.register(EconomySettings)
class EconomySettingsAdmin(CheckedHistoryIds, SimpleHistoryAdmin):
    """The one row of economy settings: the list opens it directly; every change is kept in
    its history. Saving the form does not change the settings: it proposes an economy change
    (`economy_change_propose`), applied once another economy administrator approves it.
    Proposed by superusers and `economy_admin` (`accounts.change_economy_money`), viewed by
    `support` and `rules_admin`."""

    form = EconomySettingsForm

    fieldsets = (
        (_("Grants"), {"fields": ("signup_grant", "guest_grant", "daily_bonus")}),
        (
            _("Relief for broke players"),
            {"fields": ("relief_amount", "relief_below", "relief_per_day")},
        ),
        (_("Table fee"), {"fields": ("table_fee_percent",)}),
        (
            _("Daily mint ceilings (UTC days)"),
            {
                "fields": (
                    "mint_ceiling_signup",
                    "mint_ceiling_daily_bonus",
                    "mint_ceiling_relief",
                    "mint_ceiling_bot_funding",
                    "mint_ceiling_guest",
                )
            },
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
        (None, {"fields": ("change_reason", "updated_at")}),
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
        form.user = request.user
        field = form.base_fields.get("signup_grant")
        if field is not None:
            field.help_text = gettext(
                "Coins a new player receives. Empty: the SIGNUP_GRANT setting (now %(coins)s)."
            ) % {"coins": f"{settings.SIGNUP_GRANT:,}"}
        return form

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        values = {
            name: form.cleaned_data[name] for name in form.changed_data if name != "change_reason"
        }
        if not values:
            return
        try:
            proposed = economy_change_propose(
                user=request.user,  # type: ignore[arg-type]
                values=values,
                reason=form.cleaned_data.get("change_reason") or "",
            )
        except EconomyChangeRefused as refused:
            self.message_user(request, refused.message, messages.ERROR)
            return
        self.message_user(
            request,
            gettext(
                "Proposed as economy change #%(id)s: the settings change once another economy "
                "administrator approves it."
            )
            % {"id": proposed.pk},
            messages.WARNING,
        )

    def history_form_view(
        self,
        request: HttpRequest,
        object_id: str,
        version_id: str,
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        # Old versions can be looked at, not restored (SIMPLE_HISTORY_REVERT_DISABLED only
        # hides the button; simple-history would still save a posted form, for anyone who may
        # view): going back to an old version is a proposal like any other, made on the form.
        if request.method == "POST":
            raise PermissionDenied
        return super().history_form_view(request, object_id, version_id, extra_context)

    def response_change(self, request: HttpRequest, obj: Any) -> HttpResponse:
        # Back to the settings, with the proposal's message only: nothing was changed yet.
        return HttpResponseRedirect(request.path)

    def log_change(self, request: HttpRequest, obj: Any, message: Any) -> Any:
        # Nothing changed yet: the proposal is the record (EconomyChange).
        return None


@admin.action(
    description=_("Approve and apply the selected changes"),
    permissions=["change"],
)
def economy_changes_approve(
    modeladmin: admin.ModelAdmin,
    request: HttpRequest,
    queryset: Any,  # type: ignore[type-arg]
) -> None:
    for change in queryset.order_by("pk"):
        try:
            economy_change_approve(change=change, approver=request.user)  # type: ignore[arg-type]
        except EconomyChangeRefused as refused:
            modeladmin.message_user(request, refused.message, messages.ERROR)
        else:
            modeladmin.message_user(
                request,
                gettext("Economy change #%(id)s applied.") % {"id": change.pk},
                messages.SUCCESS,
            )


@admin.register(EconomyChange)
class EconomyChangeAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """The proposed economy changes: read-only; approved by another economy administrator
    with the action (the only way a change applies)."""

    list_display = (
        "id",
        "values",
        "status",
        "proposed_by",
        "proposed_at",
        "reason",
        "approved_by",
        "applied_at",
        "applied_version",
    )
    list_filter = ("status",)
    actions = [economy_changes_approve]
    readonly_fields = list_display

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return bool(
            super().has_change_permission(request, obj)
            and request.user.has_perm(ECONOMY_MONEY_PERMISSION)
        )


# Who may read the mint report: whoever may read the economy settings (support, the rules and
# economy administrators, superusers).
ECONOMY_VIEW_PERMISSION = "accounts.view_economysettings"


def may_read_mint_report(user: Any) -> bool:
    return bool(user.is_active and user.is_staff and user.has_perm(ECONOMY_VIEW_PERMISSION))


@admin.register(MintDay)
class MintReportAdmin(admin.ModelAdmin):  # type: ignore[type-arg]
    """The mint report: for each of the last REPORT_DAYS UTC days and each kind, the coins
    minted against that day's ceiling, and whether the ceiling refused claims (the alert).
    Read-only; written by `accounts.mint.mint_budget_take` alone."""

    def has_view_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return may_read_mint_report(request.user)

    def has_module_permission(self, request: HttpRequest) -> bool:
        return may_read_mint_report(request.user)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def changelist_view(
        self, request: HttpRequest, extra_context: dict[str, Any] | None = None
    ) -> HttpResponse:
        if not self.has_view_permission(request):
            raise PermissionDenied
        economy = economy_settings()
        days = mint_report(economy=economy)
        return TemplateResponse(
            request,
            "admin/accounts/mintday/report.html",
            {
                **self.admin_site.each_context(request),
                "opts": self.opts,
                "title": gettext("Mint report"),
                "days": days,
                "today": days[0],
                "report_days": REPORT_DAYS,
                "kinds": [str(label) for _kind, label in MintKind.choices],
            },
        )

    def change_view(self, request: HttpRequest, object_id: str, *args: Any, **kwargs: Any) -> Any:
        return HttpResponseRedirect(reverse("admin:accounts_mintday_changelist"))


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

    change_list_template = "admin/accounts/collusionflag/change_list.html"
    list_display = (
        "id",
        "loser",
        "winner",
        "score_display",
        "shared_rounds",
        "flow",
        "share_percent",
        "reasons_display",
        "ring",
        "last_round_at",
        "status",
        "reviewer",
        "updated_at",
    )
    list_display_links = ("id", "loser")
    list_filter = ("status", "updated_at")
    list_select_related = ("loser", "winner", "reviewer")
    search_fields = ("loser__username", "winner__username", "note")
    ordering = ("status", "-score", "-flow")
    fieldsets = (
        (
            _("Pair"),
            {
                "fields": (
                    "loser",
                    "winner",
                    "reasons_display",
                    "score_display",
                    "water_given",
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
        (
            _("Evidence"),
            {
                "fields": (
                    "evidence_table",
                    "ring_graph",
                    "freeze_links",
                    "rounds_link",
                    "loser_entries_link",
                    "winner_entries_link",
                )
            },
        ),
        (_("Review"), {"fields": ("status", "note", "reviewer", "reviewed_at")}),
    )
    readonly_fields = (
        "loser",
        "winner",
        "reasons_display",
        "score_display",
        "water_given",
        "shared_rounds",
        "flow",
        "losses",
        "share_percent",
        "first_round_at",
        "last_round_at",
        "flagged_at",
        "updated_at",
        "evidence_table",
        "ring_graph",
        "freeze_links",
        "rounds_link",
        "loser_entries_link",
        "winner_entries_link",
        "reviewer",
        "reviewed_at",
    )

    def get_urls(self) -> list[URLPattern]:
        scan = path(
            "scan/",
            self.admin_site.admin_view(self.scan_view),
            name="accounts_collusionflag_scan",
        )
        return [scan, *super().get_urls()]

    def scan_view(self, request: HttpRequest) -> HttpResponse:
        """Scan now (POST, CSRF-checked by the admin view): queued for the worker, or run here
        when none answers; at most once a minute per staff member (`admin.collusion_scan`)."""
        if request.method != "POST":
            return HttpResponseNotAllowed(["POST"])
        if not self.has_view_permission(request):
            raise PermissionDenied
        back = HttpResponseRedirect(reverse("admin:accounts_collusionflag_changelist"))
        limited = rate_limit_hit(COLLUSION_SCAN_RATE, request.user.pk)
        if limited is not None:
            self.message_user(
                request,
                gettext("A scan was asked for a moment ago: try again in %(seconds)s s.")
                % {"seconds": limited.retry_after},
                messages.ERROR,
            )
            return back
        flagged = collusion_scan_request()
        if flagged is None:
            message = gettext("The scan is running; reload this page in a minute.")
        else:
            message = ngettext(
                "The scan ran: %(count)d pair is flagged.",
                "The scan ran: %(count)d pairs are flagged.",
                flagged,
            ) % {"count": flagged}
        self.message_user(request, message, messages.SUCCESS)
        return back

    @admin.display(description=_("Evidence"), ordering="score")
    def score_display(self, flag: CollusionFlag) -> str:
        if not flag.threshold:
            return "-"
        return gettext("%(score)s of %(threshold)s needed") % {
            "score": f"{flag.score:.1f}",
            "threshold": f"{flag.threshold:.1f}",
        }

    @admin.display(description=_("Reasons"))
    def reasons_display(self, flag: CollusionFlag) -> str:
        labels = dict(CollusionReason.choices)
        return ", ".join(str(labels.get(r, r)) for r in flag.reasons) or "-"

    @admin.display(description=_("Rounds of the evidence"))
    def evidence_table(self, flag: CollusionFlag) -> str:
        if not flag.evidence:
            return gettext("No round of deliberate play: flagged by its coin volume alone.")
        head = format_html(
            "<thead><tr>{}</tr></thead>",
            format_html_join(
                "",
                '<th scope="col">{}</th>',
                (
                    (gettext(h),)
                    for h in (
                        "Round",
                        "Settled",
                        "Room",
                        "Play of the losing player",
                        "Expected water given away",
                        "Water given to the winner",
                        "Coins to the winner",
                    )
                ),
            ),
        )
        rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            (
                (
                    _round_link(row),
                    str(row.get("settled_at", ""))[:19].replace("T", " "),
                    row.get("room", ""),
                    sign_words(str(row.get("sign", "")), float(row.get("better_share", 0.0))),
                    f"{float(row.get('regret', 0.0)):.1f}",
                    row.get("given", 0),
                    f"{int(row.get('coins', 0)):,}",
                )
                for row in flag.evidence
            ),
        )
        total = format_html(
            '<tfoot><tr><th scope="row" colspan="5">{}</th><td>{}</td><td>{}</td></tr></tfoot>',
            gettext("In all"),
            flag.water_given,
            f"{sum(int(r.get('coins', 0)) for r in flag.evidence):,}",
        )
        return format_html(
            '<table class="collusion-evidence"><caption>{}</caption>{}<tbody>{}</tbody>{}</table>',
            gettext("The rounds that reached the evidence, in the order played"),
            head,
            rows,
            total,
        )

    @admin.display(description=_("Flow graph of the ring"))
    def ring_graph(self, flag: CollusionFlag) -> str:
        """The flags linked to this one through shared accounts (its ring, named by the scan;
        this flag alone when it has none): a drawing, and the same as a table."""
        flags = [flag]
        if flag.ring is not None:
            flags = list(
                CollusionFlag.objects.filter(ring=flag.ring)
                .select_related("loser", "winner")
                .order_by("pk")
            )
            if flag.pk not in {f.pk for f in flags}:
                flags.append(flag)
        users: dict[int, User] = {}
        for f in flags:
            users[f.loser_id], users[f.winner_id] = f.loser, f.winner
        nodes = [
            Node(
                u.pk,
                u.get_username(),
                frozen=u.transfers_frozen,
                current=u.pk in (flag.loser_id, flag.winner_id),
            )
            for u in sorted(users.values(), key=lambda u: u.pk)
        ]
        arrows = [
            Arrow(
                f.loser_id,
                f.winner_id,
                coins=f.flow,
                water=f.water_given,
                rounds=len(f.evidence) or f.shared_rounds,
                current=f.pk == flag.pk,
                open=f.status == CollusionStatus.OPEN,
            )
            for f in flags
        ]
        title = ngettext(
            "Ring of %(count)d account: who lost to whom",
            "Ring of %(count)d accounts: who lost to whom",
            len(nodes),
        ) % {"count": len(nodes)}
        svg = ring_svg(nodes, arrows, title=title)
        table = format_html(
            '<table class="collusion-ring-table"><caption>{}</caption><thead><tr>'
            '<th scope="col">{}</th><th scope="col">{}</th><th scope="col">{}</th>'
            '<th scope="col">{}</th><th scope="col">{}</th><th scope="col">{}</th>'
            "</tr></thead><tbody>{}</tbody></table>",
            title,
            gettext("Losing player"),
            gettext("Winning player"),
            gettext("Coins"),
            gettext("Water given away"),
            gettext("Rounds"),
            gettext("Status"),
            format_html_join(
                "",
                '<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><a href="{}">{}</a>'
                "</td></tr>",
                (
                    (
                        f.loser,
                        f.winner,
                        f"{f.flow:,}",
                        f.water_given,
                        len(f.evidence) or f.shared_rounds,
                        reverse("admin:accounts_collusionflag_change", args=[f.pk]),
                        f.get_status_display(),
                    )
                    for f in flags
                ),
            ),
        )
        return format_html('<div class="collusion-ring">{}{}</div>', svg, table)

    @admin.display(description=_("Transfers"))
    def freeze_links(self, flag: CollusionFlag) -> str:
        return format_html_join(
            mark_safe("<br>"),
            "{}",
            ((freeze_link(u, flag=flag),) for u in (flag.loser, flag.winner)),
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


SIGN_WORDS = {
    "worst": _("worst 1 %% of arrangements (%(share)s of the splits are better)"),
    "careful_loss": _("careful loss: the best split of a losing shape"),
    "weak": _("weak: among the worst 10 %% (%(share)s of the splits are better)"),
    "none": _("no sign"),
}


def sign_words(sign: str, better_share: float) -> str:
    """A sign of games.rules.dumping in words."""
    words = SIGN_WORDS.get(sign)
    if words is None:
        return sign
    return str(words) % {"share": f"{better_share:.1%}"}


def _round_link(row: dict[str, Any]) -> str:
    round_id = row.get("round")
    if not isinstance(round_id, int):
        return "-"
    return format_html(
        '<a href="{}">#{}</a>', reverse("admin:games_round_change", args=[round_id]), round_id
    )

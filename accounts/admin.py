"""The admin of users, wallets and the ledger.

Nobody sets another account's password here, superusers included (PlayerUserAdmin): support
sends a password reset link to the player's address instead.

Ledger rows are read-only here for everyone, superusers included: nothing can be added,
changed or deleted through a model form. Coins move only through two forms that call the
services: "Adjust balance" on a wallet (permission `accounts.adjust_wallet`) and "Reverse" on
a transaction (`accounts.reverse_transaction`). Entries can be exported as CSV by staff with
`accounts.export_ledger` (the support group has it).

The economy settings (one row, with history), the sign-ups counted per address, and the
collusion report are here too; support changes only a collusion flag's status and note.
"""

import logging
from collections.abc import Iterator
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.forms import ReadOnlyPasswordHashWidget
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone
from django.utils.html import format_html
from django.utils.http import urlencode
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _

from accounts.admin_base import LedgerModelAdmin
from accounts.errors import LedgerError
from accounts.forms import (
    LookAlikeCheckedChangeForm,
    LookAlikeCheckedCreationForm,
    TransactionReversalForm,
    WalletAdjustmentForm,
)
from accounts.freeze_admin import TransferFreezeAdminMixin
from accounts.models import (
    Account,
    AccountKind,
    Entry,
    Transaction,
    TransactionKind,
    User,
)
from accounts.services import (
    ledger_reverse,
    password_reset_refusal,
    user_email_change_notify,
    user_password_reset_link_send,
    wallet_admin_adjust,
)
from accounts.signals import staff_account_action
from shisanshui.admin_ids import admin_id_or_404
from shisanshui.csv_export import csv_text, streamed_csv
from shisanshui.ratelimit import rate_limit_hit


class SelfOnlyPasswordWidget(ReadOnlyPasswordHashWidget):
    """The password of another account: what kind of hash it is, and no link to set it."""

    template_name = "accounts/widgets/password_hash_self_only.html"


# The changes of another account that the games app marks in the rounds the player is in.
MARKED_CHANGES = ("password", "email", "is_active")
PASSWORD_RESET_RATE = "admin.password_reset"  # settings.RATE_LIMITS

logger = logging.getLogger(__name__)


def _email_change_notify(user: User, old_email: str, request: HttpRequest) -> None:
    """Tell the old address; the change is saved whether or not the mail can be sent."""
    try:
        user_email_change_notify(user=user, old_email=old_email, request=request)
    except OSError as error:
        logger.warning("accounts: the old address of user %s was not told: %s", user.pk, error)


@admin.register(User)
class PlayerUserAdmin(TransferFreezeAdminMixin, UserAdmin):
    """Django's user admin, with a link to the user's wallet, where nobody sets another
    account's password: superusers included, a staff member sets only their own. Otherwise a
    superuser could set a player's password, log in as the player and open the table of a
    round in play, seeing the player's hand. Support sends a password reset link instead (the
    action; permission `accounts.send_password_reset`), which goes to the player's address.

    A change of another account's password, e-mail address or active flag, and a reset link
    sent, are reported (`accounts.signals.staff_account_action`): the games app marks the
    rounds the player is in. A changed e-mail address is told to the previous one. Adding a
    user still sets its first password: a new account has no hand, coins or history of
    anybody's. A name added or renamed to is refused as at sign-up when it looks like another
    account's name or holds an invisible character (`accounts.forms`).

    Staff with `accounts.freeze_transfers` (support, economy administrators) freeze a player's
    transfers pending a collusion review, and unfreeze them, with a note
    (`accounts.freeze_admin`).
    """

    form = LookAlikeCheckedChangeForm
    add_form = LookAlikeCheckedCreationForm
    actions = ["send_password_reset_link"]

    list_display = (*UserAdmin.list_display, "is_bot")
    list_filter = (*UserAdmin.list_filter, "is_bot")
    readonly_fields = (
        "wallet_link",
        "rounds_link",
        "entries_link",
        "is_bot",
        "transfers_state",
        "freeze_history",
        "signup_address",
    )
    # The coins, rounds and ledger links come right after the name: what support looks for.
    fieldsets = (
        *(UserAdmin.fieldsets or ())[:1],
        (
            _("Coins"),
            {
                "fields": (
                    "wallet_link",
                    "rounds_link",
                    "entries_link",
                    "transfers_state",
                    "freeze_history",
                    "signup_address",
                )
            },
        ),
        *(UserAdmin.fieldsets or ())[1:],
        (_("Bot"), {"fields": ("is_bot",)}),
    )

    def get_urls(self) -> list[URLPattern]:
        return [*self.freeze_urls(), *super().get_urls()]

    def get_form(
        self, request: HttpRequest, obj: Any = None, change: bool = False, **kwargs: Any
    ) -> Any:
        form = super().get_form(request, obj, change=change, **kwargs)
        if obj is None or obj.pk == request.user.pk:
            return form

        class OtherAccountForm(form):  # type: ignore[misc,valid-type]
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                if "password" in self.fields:
                    self.fields["password"].widget = SelfOnlyPasswordWidget()

        return OtherAccountForm

    def user_change_password(
        self, request: HttpRequest, id: str, form_url: str = ""
    ) -> HttpResponse:
        """The password form, for one's own account only (403 for any other)."""
        if unquote(id) != str(request.user.pk):
            raise PermissionDenied
        return super().user_change_password(request, id, form_url)

    def save_model(self, request: HttpRequest, obj: Any, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if not change or obj.pk == request.user.pk:
            return
        changed = [name for name in MARKED_CHANGES if name in form.changed_data]
        if changed:
            staff_account_action.send(
                sender=type(self), user=obj, staff=request.user, actions=changed
            )
        if "email" in changed:
            old_email = str(form.initial.get("email") or "")
            transaction.on_commit(lambda: _email_change_notify(obj, old_email, request))

    def has_send_password_reset_permission(self, request: HttpRequest) -> bool:
        return bool(request.user.has_perm("accounts.send_password_reset"))

    @admin.action(description=_("Send a password reset link"), permissions=["send_password_reset"])
    def send_password_reset_link(self, request: HttpRequest, queryset: QuerySet[User]) -> None:
        """E-mail each selected account a link to choose a new password. Bots, deactivated
        accounts and accounts without an address are skipped, each with a warning. Over the
        staff member's budget of links, none is sent."""
        users = list(queryset.order_by("pk"))
        sendable = []
        for user in users:
            refusal = password_reset_refusal(user=user)
            if refusal is None:
                sendable.append(user)
            else:
                self.message_user(
                    request, gettext("No link sent: %(why)s") % {"why": refusal}, messages.WARNING
                )
        if not sendable:
            return
        limited = rate_limit_hit(PASSWORD_RESET_RATE, request.user.pk, cost=len(sendable))
        if limited is not None:
            self.message_user(
                request,
                gettext("Too many reset links: none sent. Try again in %(seconds)s s.")
                % {"seconds": limited.retry_after},
                messages.ERROR,
            )
            return
        sent = 0
        for user in sendable:
            try:
                user_password_reset_link_send(user=user, request=request)
            except (ValueError, OSError) as error:  # a bad address, the mail server down
                logger.warning("accounts: no reset link sent to user %s: %s", user.pk, error)
                self.message_user(
                    request, gettext("No link sent: %(why)s") % {"why": error}, messages.ERROR
                )
                continue
            sent += 1
            with transaction.atomic():
                self.log_change(request, user, gettext("Sent a password reset link."))
                if user.pk != request.user.pk:
                    staff_account_action.send(
                        sender=type(self), user=user, staff=request.user, actions=["reset_link"]
                    )
        self.message_user(
            request,
            ngettext(
                "Sent a password reset link to %(count)d account.",
                "Sent a password reset link to %(count)d accounts.",
                sent,
            )
            % {"count": sent},
            messages.SUCCESS if sent else messages.WARNING,
        )

    @admin.display(description=_("Played rounds"))
    def rounds_link(self, user: User) -> str:
        """The round audit filtered to the user's rounds (its ``player`` filter, by username)."""
        url = reverse("admin:games_round_changelist") + "?" + urlencode({"player": user.username})
        return format_html('<a id="user-rounds" href="{}">{}</a>', url, gettext("Their rounds"))

    @admin.display(description=_("Ledger entries"))
    def entries_link(self, user: User) -> str:
        """The statement of the user's wallet: its ledger entries."""
        wallet = Account.objects.filter(user=user, kind=AccountKind.WALLET).first()
        if wallet is None:
            return gettext("No wallet yet.")
        url = reverse("admin:accounts_entry_changelist") + f"?account__id__exact={wallet.pk}"
        return format_html(
            '<a id="user-entries" href="{}">{}</a>', url, gettext("Their ledger entries")
        )

    @admin.display(description=_("Wallet"))
    def wallet_link(self, user: User) -> str:
        wallet = Account.objects.filter(user=user, kind=AccountKind.WALLET).first()
        if wallet is None:
            return gettext("No wallet yet.")
        url = reverse("admin:accounts_account_change", args=[wallet.pk])
        return format_html(
            '<a href="{}">{}</a>', url, gettext("%(balance)s coins") % {"balance": wallet.balance}
        )


# The admin pages a ledger reference names, by URL name: accounts imports neither games nor
# lobby, so it reaches their pages through the URL names their admins register.
REFERENCE_ADMIN_URLS = {"round": "admin:games_round_change", "room": "admin:lobby_room_change"}


def reference_link(posted: Transaction) -> str:
    """A transaction's reference as a link to the round or room it names ("round:14" →
    Round #14), else its words as they are."""
    kind, _sep, ident = posted.reference.partition(":")
    url_name = REFERENCE_ADMIN_URLS.get(kind)
    if url_name is None or not ident.isdigit():
        return format_html("{}", posted.reference_display() or posted.reference)
    return format_html(
        '<a href="{}">{}</a>', reverse(url_name, args=[int(ident)]), posted.reference_display()
    )


@admin.register(Account)
class AccountAdmin(LedgerModelAdmin):
    list_display = ("id", "kind", "user", "balance", "created_at")
    list_display_links = ("id", "kind")
    list_filter = ("kind",)
    list_select_related = ("user",)
    search_fields = ("user__username", "user__email")
    fields = ("kind", "user", "balance", "created_at", "entries_link")
    readonly_fields = fields

    @admin.display(description=_("Entries"))
    def entries_link(self, account: Account) -> str:
        url = reverse("admin:accounts_entry_changelist") + f"?account__id__exact={account.pk}"
        return format_html('<a href="{}">{}</a>', url, gettext("Statement of this account"))

    def get_urls(self) -> list[URLPattern]:
        adjust = path(
            "<int:object_id>/adjust/",
            self.admin_site.admin_view(self.adjust_view),
            name="accounts_account_adjust",
        )
        return [adjust, *super().get_urls()]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        extra_context = {
            **(extra_context or {}),
            "can_adjust": request.user.has_perm("accounts.adjust_wallet"),
        }
        return super().change_view(request, object_id, form_url, extra_context)

    def adjust_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Credit or debit a player's wallet against the mint, with a mandatory reason."""
        if not request.user.has_perm("accounts.adjust_wallet"):
            raise PermissionDenied
        wallet = get_object_or_404(
            Account.objects.select_related("user"), pk=object_id, kind=AccountKind.WALLET
        )
        form = WalletAdjustmentForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                posted = wallet_admin_adjust(
                    user=wallet.user,
                    amount=form.signed_amount(),
                    reason=form.cleaned_data["reason"],
                    created_by=request.user,
                    idempotency_key=form.cleaned_data["idempotency_key"],
                )
            except LedgerError as error:
                form.add_error(None, error.message)
            else:
                self.message_user(
                    request,
                    gettext("Posted transaction #%(id)s: %(amount)+d coins for %(user)s.")
                    % {"id": posted.pk, "amount": form.signed_amount(), "user": wallet.user},
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(
                    reverse("admin:accounts_account_change", args=[wallet.pk])
                )
        context = {
            **self._action_form_context(request, wallet, gettext("Adjust balance")),
            "form": form,
        }
        return TemplateResponse(request, "admin/accounts/account/adjust.html", context)


class EntryInline(admin.TabularInline):
    model = Entry
    fields = ("account", "amount", "balance_after")
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(Transaction)
class TransactionAdmin(LedgerModelAdmin):
    list_display = (
        "id",
        "created_at",
        "kind",
        "reference_link",
        "created_by",
        "cause",
        "reverses",
    )
    list_display_links = ("id", "created_at")
    list_filter = ("kind", "created_at")
    list_select_related = ("created_by", "reverses")
    search_fields = ("reference", "idempotency_key", "reason", "cause")
    date_hierarchy = "created_at"
    fields = (
        "kind",
        "reference",
        "reference_link",
        "reason",
        "created_by",
        "cause",
        "created_at",
        "idempotency_key",
        "content_hash",
        "reverses",
        "reversed_by_link",
    )
    readonly_fields = fields
    inlines = [EntryInline]

    @admin.display(description=_("caused by"), ordering="reference")
    def reference_link(self, posted: Transaction) -> str:
        return reference_link(posted)

    @admin.display(description=_("Reversed by"))
    def reversed_by_link(self, posted: Transaction) -> str:
        reversal = Transaction.objects.filter(reverses=posted).first()
        if reversal is None:
            return "-"
        url = reverse("admin:accounts_transaction_change", args=[reversal.pk])
        return format_html('<a href="{}">{}</a>', url, str(reversal))

    def get_urls(self) -> list[URLPattern]:
        reverse_url = path(
            "<int:object_id>/reverse/",
            self.admin_site.admin_view(self.reverse_view),
            name="accounts_transaction_reverse",
        )
        return [reverse_url, *super().get_urls()]

    def change_view(
        self,
        request: HttpRequest,
        object_id: str,
        form_url: str = "",
        extra_context: dict[str, Any] | None = None,
    ) -> HttpResponse:
        posted = Transaction.objects.filter(pk=admin_id_or_404(Transaction, object_id)).first()
        can_reverse = (
            posted is not None
            and posted.kind != TransactionKind.REVERSAL
            and not Transaction.objects.filter(reverses=posted).exists()
            and request.user.has_perm("accounts.reverse_transaction")
        )
        extra_context = {**(extra_context or {}), "can_reverse": can_reverse}
        return super().change_view(request, object_id, form_url, extra_context)

    def reverse_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        """Post the reversal of a transaction after confirmation, with a mandatory reason."""
        if not request.user.has_perm("accounts.reverse_transaction"):
            raise PermissionDenied
        original = get_object_or_404(Transaction, pk=object_id)
        form = TransactionReversalForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            try:
                reversal = ledger_reverse(
                    original=original,
                    reason=form.cleaned_data["reason"],
                    created_by=request.user,
                )
            except LedgerError as error:
                form.add_error(None, error.message)
            else:
                self.message_user(
                    request,
                    gettext("Transaction #%(id)s was reversed by #%(reversal)s.")
                    % {"id": original.pk, "reversal": reversal.pk},
                    messages.SUCCESS,
                )
                return HttpResponseRedirect(
                    reverse("admin:accounts_transaction_change", args=[reversal.pk])
                )
        context = {
            **self._action_form_context(request, original, gettext("Reverse transaction")),
            "form": form,
            "reversal_entries": [
                (entry.account, -entry.amount)
                for entry in original.entries.select_related("account__user").order_by("id")
            ],
        }
        return TemplateResponse(request, "admin/accounts/transaction/reverse.html", context)


CSV_HEADER = (
    "entry_id",
    "transaction_id",
    "created_at",
    "kind",
    "reference",
    "idempotency_key",
    "reverses_transaction_id",
    "account_id",
    "account_kind",
    "username",
    "amount",
    "balance_after",
    "reason",
    "created_by",
)


def ledger_csv_rows(entries: QuerySet[Entry]) -> Iterator[tuple[Any, ...]]:
    """CSV_HEADER, then one row per entry in id order, read in chunks."""
    yield CSV_HEADER
    rows = entries.select_related(
        "transaction", "transaction__created_by", "account", "account__user"
    ).order_by("id")
    for entry in rows.iterator(chunk_size=2000):
        posted, account = entry.transaction, entry.account
        yield (
            entry.pk,
            posted.pk,
            posted.created_at.isoformat(),
            posted.kind,
            csv_text(posted.reference),
            csv_text(posted.idempotency_key),
            posted.reverses_id or "",
            account.pk,
            account.kind,
            csv_text(account.user.username) if account.user else "",
            entry.amount,
            entry.balance_after,
            csv_text(posted.reason),
            csv_text(posted.created_by.username) if posted.created_by else "",
        )


@admin.register(Entry)
class EntryAdmin(LedgerModelAdmin):
    list_display = (
        "id",
        "created_at",
        "transaction",
        "kind",
        "reference",
        "account",
        "amount",
        "balance_after",
    )
    list_display_links = ("id",)
    list_filter = ("transaction__kind", "account__kind")
    list_select_related = ("transaction", "account", "account__user")
    search_fields = ("account__user__username", "transaction__reference")
    fields = ("transaction", "reference", "account", "amount", "balance_after")
    readonly_fields = fields
    actions = ["export_csv"]

    @admin.display(description=_("created at"), ordering="transaction__created_at")
    def created_at(self, entry: Entry) -> Any:
        return entry.transaction.created_at

    @admin.display(description=_("kind"), ordering="transaction__kind")
    def kind(self, entry: Entry) -> str:
        return str(entry.transaction.get_kind_display())

    @admin.display(description=_("reference"), ordering="transaction__reference")
    def reference(self, entry: Entry) -> str:
        return reference_link(entry.transaction)

    def has_export_permission(self, request: HttpRequest) -> bool:
        return request.user.has_perm("accounts.export_ledger")

    @admin.action(description=_("Export the selected entries as CSV"), permissions=["export"])
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Entry]) -> HttpResponse:
        stamp = timezone.now().strftime("%Y%m%dT%H%M%SZ")
        return streamed_csv(ledger_csv_rows(queryset), f"ledger-entries-{stamp}.csv")


# The economy: its settings, the sign-ups by address, and the collusion report.


# The economy's admin registers itself on import.
from accounts import economy_admin  # noqa: E402,F401

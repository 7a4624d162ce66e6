"""Freezing a player's transfers pending a collusion review, from the admin: the form (a note
is required), the two views on the user admin (`<id>/freeze/`, `<id>/unfreeze/`, permission
`accounts.freeze_transfers`, rate-limited per staff member), the account's freeze history and
the link the user page and the collusion flag page show."""

from __future__ import annotations

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html, format_html_join
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from accounts.collusion import (
    NOTE_MAX,
    FreezeRefused,
    transfers_freeze,
    transfers_unfreeze,
)
from accounts.models import CollusionFlag, User
from shisanshui.ratelimit import rate_limit_hit

FREEZE_PERMISSION = "accounts.freeze_transfers"
FREEZE_RATE = "admin.transfer_freeze"  # settings.RATE_LIMITS


class FreezeForm(forms.Form):
    note = forms.CharField(
        label=_("Note"),
        max_length=NOTE_MAX,
        widget=forms.Textarea(attrs={"rows": 4, "cols": 60}),
        help_text=_("Why, for the review (required)."),
    )


def freeze_link(user: User, *, flag: CollusionFlag | None = None) -> str:
    """The player's transfer state and the link to freeze or unfreeze it."""
    action = "unfreeze" if user.transfers_frozen else "freeze"
    url = reverse(f"admin:accounts_user_{action}", args=[user.pk])
    if flag is not None:
        url += f"?flag={flag.pk}"
    if user.transfers_frozen:
        state = gettext("%(user)s: transfers frozen since %(at)s by %(by)s: %(note)s") % {
            "user": user,
            "at": f"{user.transfers_frozen_at:%Y-%m-%d %H:%M}",
            "by": user.transfers_frozen_by,
            "note": user.transfers_frozen_note,
        }
        label = gettext("Unfreeze")
    else:
        state = gettext("%(user)s: transfers not frozen") % {"user": user}
        label = gettext("Freeze transfers pending review")
    return format_html('{} — <a href="{}">{}</a>', state, url, label)


class TransferFreezeAdminMixin:
    """The freeze and unfreeze views of the user admin."""

    admin_site: admin.AdminSite

    def freeze_urls(self) -> list[URLPattern]:
        return [
            path(
                "<int:object_id>/freeze/",
                self.admin_site.admin_view(self.freeze_view),
                name="accounts_user_freeze",
            ),
            path(
                "<int:object_id>/unfreeze/",
                self.admin_site.admin_view(self.unfreeze_view),
                name="accounts_user_unfreeze",
            ),
        ]

    @admin.display(description=_("Transfers"))
    def transfers_state(self, user: User) -> str:
        return freeze_link(user)

    @admin.display(description=_("Freeze history"))
    def freeze_history(self, user: User) -> str:
        """Every freeze and unfreeze of the account, newest first."""
        rows = list(user.transfer_freezes.select_related("by").order_by("-at", "-pk"))
        if not rows:
            return "-"
        return format_html(
            "<table><thead><tr><th>{}</th><th>{}</th><th>{}</th><th>{}</th></tr></thead>"
            "<tbody>{}</tbody></table>",
            gettext("When"),
            gettext("Action"),
            gettext("By"),
            gettext("Note"),
            format_html_join(
                "",
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                ((f"{r.at:%Y-%m-%d %H:%M}", r.get_action_display(), r.by, r.note) for r in rows),
            ),
        )

    def freeze_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        return self._freeze_form(request, object_id, freezing=True)

    def unfreeze_view(self, request: HttpRequest, object_id: int) -> HttpResponse:
        return self._freeze_form(request, object_id, freezing=False)

    def _freeze_form(self, request: HttpRequest, object_id: int, *, freezing: bool) -> HttpResponse:
        """A note, then the freeze or the unfreeze (`accounts.collusion`), logged in the
        admin's history too. Bad input or a refusal: the form again with the reason, nothing
        changed."""
        if not request.user.has_perm(FREEZE_PERMISSION):
            raise PermissionDenied
        user = get_object_or_404(User, pk=object_id)
        flag = _flag_of(request)
        form = FreezeForm(request.POST if request.method == "POST" else None)
        if request.method == "POST" and form.is_valid():
            limited = rate_limit_hit(FREEZE_RATE, request.user.pk)
            try:
                if limited is not None:
                    raise FreezeRefused(
                        "rate_limited",
                        gettext("Too many freezes and unfreezes: try again in %(seconds)s s.")
                        % {"seconds": limited.retry_after},
                    )
                service = transfers_freeze if freezing else transfers_unfreeze
                service(user=user, staff=request.user, note=form.cleaned_data["note"], flag=flag)
            except FreezeRefused as refused:
                form.add_error(None, str(refused.message))
            else:
                done = (
                    gettext("Froze the transfers pending review.")
                    if freezing
                    else gettext("Unfroze the transfers.")
                )
                self.log_change(request, user, f"{done} {form.cleaned_data['note']}")  # type: ignore[attr-defined]
                self.message_user(request, f"{user}: {done}", messages.SUCCESS)  # type: ignore[attr-defined]
                back = (
                    reverse("admin:accounts_collusionflag_change", args=[flag.pk])
                    if flag is not None
                    else reverse("admin:accounts_user_change", args=[user.pk])
                )
                return HttpResponseRedirect(back)
        title = gettext("Freeze transfers pending review") if freezing else gettext("Unfreeze")
        context = {
            **self.admin_site.each_context(request),
            "opts": User._meta,
            "original": user,
            "title": title,
            "form": form,
            "freezing": freezing,
            "flag": flag,
        }
        return TemplateResponse(request, "admin/accounts/user/freeze.html", context)


def _flag_of(request: HttpRequest) -> CollusionFlag | None:
    raw = request.GET.get("flag", "")
    if not raw.isdigit() or len(raw) > 18:
        return None
    return CollusionFlag.objects.filter(pk=int(raw)).first()

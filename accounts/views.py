"""Pages of the accounts app: sign-up and the profile. Log-in, log-out and password change
are Django's own views with our templates (see accounts/urls.py)."""

from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe
from django.views.generic import FormView

from accounts.forms import SignUpForm
from accounts.selectors import wallet_balance, wallet_entries
from accounts.services import user_signup

ENTRIES_PER_PAGE = 20


class SignUpView(FormView):
    """Create a player, log them in and show their profile with the sign-up grant."""

    template_name = "accounts/signup.html"
    form_class = SignUpForm

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated:
            return redirect("accounts:profile")
        return super().dispatch(request, *args, **kwargs)

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return {**super().get_context_data(**kwargs), "SIGNUP_GRANT": settings.SIGNUP_GRANT}

    def form_valid(self, form: SignUpForm) -> HttpResponse:
        try:
            user = user_signup(
                username=form.cleaned_data["username"],
                email=form.cleaned_data.get("email", ""),
                password=form.cleaned_data["password1"],
            )
        except IntegrityError:
            # Someone took the name between the form's check and our insert.
            form.add_error("username", _("A user with that username already exists."))
            return self.form_invalid(form)
        login(self.request, user)
        messages.success(
            self.request,
            _("Welcome, %(username)s! Your wallet holds %(balance)s coins.")
            % {"username": user.get_username(), "balance": f"{wallet_balance(user=user):,}"},
        )
        return redirect("accounts:profile")


@login_required
@require_safe
def profile(request: HttpRequest) -> HttpResponse:
    """The player's balance and ledger history, newest first, a page at a time."""
    page = Paginator(wallet_entries(user=request.user), ENTRIES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    context = {"balance": wallet_balance(user=request.user), "page": page}
    return render(request, "accounts/profile.html", context)

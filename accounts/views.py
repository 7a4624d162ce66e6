"""Pages of the accounts app: sign-up and the profile, with the buttons that claim the daily
bonus and relief, and the page of a password reset link. Log-in, log-out and password change
are Django's own views with our templates (see accounts/urls.py)."""

import hashlib
import math
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth import login, update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.db import IntegrityError
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import timezone
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST, require_safe
from django.views.generic import FormView
from rest_framework.throttling import SimpleRateThrottle

from accounts.economy import (
    coins,
    daily_bonus_status,
    economy_settings,
    network_address,
    next_utc_midnight,
    relief_status,
)
from accounts.errors import ClaimRefused, SignupRefused
from accounts.forms import GuestSignUpForm, SignUpForm, TableSettingsForm
from accounts.models import Transaction, User
from accounts.selectors import wallet_balance, wallet_entries
from accounts.services import (
    guest_convert,
    guest_create,
    guest_signup_topup,
    user_settings_update,
    user_signup,
    wallet_daily_bonus_claim,
    wallet_relief_claim,
)
from shisanshui.api import retry_message
from shisanshui.ratelimit import RateLimited, rate_limit_hit

ENTRIES_PER_PAGE = 20
# Guests created per client address (settings.RATE_LIMITS).
GUEST_CREATES = "accounts.guest_create"
# How a guest is logged in (several authentication backends: django-axes first).
LOGIN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def guest_start(request: HttpRequest) -> User | RateLimited:
    """The visitor's guest: created (`guest_create`, counted against the client address's
    sign-ups) and logged in, so the next request plays as it. Over the rate of guest creations
    per address, the RateLimited answer instead (nothing created); a refusal of the service
    (`signup_limit`, `mint_ceiling`) is raised as SignupRefused. For any view that seats a
    visitor without an account (Play now; an invite link)."""
    address = request.META.get("REMOTE_ADDR", "")
    limited = rate_limit_hit(GUEST_CREATES, network_address(address))
    if limited is not None:
        return limited
    user = guest_create(address=address)
    guest_login(request, user)
    return user


def guest_login(request: HttpRequest, user: User) -> None:
    """Log a guest in on this browser (a new session; it has no password to log in again)."""
    login(request, user, backend=LOGIN_BACKEND)


class SignUpView(FormView):
    """Create a player, log them in and show their profile with the sign-up grant. A guest
    signing up keeps its account: the same row becomes a full account (`guest_convert`)."""

    template_name = "accounts/signup.html"
    form_class = SignUpForm

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if request.user.is_authenticated and not request.user.is_guest:
            return redirect("accounts:profile")
        return super().dispatch(request, *args, **kwargs)

    def _guest(self) -> User | None:
        user = self.request.user
        return user if user.is_authenticated and user.is_guest else None

    def get_form_class(self) -> Any:
        return GuestSignUpForm if self._guest() is not None else SignUpForm

    def get_form_kwargs(self) -> dict[str, Any]:
        kwargs = super().get_form_kwargs()
        guest = self._guest()
        if guest is not None:
            kwargs["guest"] = guest
        return kwargs

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        grant = economy_settings().effective_signup_grant
        context = super().get_context_data(**kwargs)
        guest = self._guest()
        if guest is not None:
            return {
                **context,
                "guest": guest,
                "guest_balance": wallet_balance(user=guest),
                "guest_topup": guest_signup_topup(user=guest),
                "next": self._next_url(),
            }
        return {**context, "SIGNUP_GRANT": grant, "next": self._next_url()}

    def _next_url(self) -> str:
        """Where to go once signed up (?next=, kept by the form, as the log-in page does): a
        URL of this site only, else "" (the profile)."""
        candidate = self.request.POST.get("next") or self.request.GET.get("next") or ""
        safe = url_has_allowed_host_and_scheme(
            candidate,
            allowed_hosts={self.request.get_host()},
            require_https=self.request.is_secure(),
        )
        return candidate if safe else ""

    def form_valid(self, form: Any) -> HttpResponse:
        guest = self._guest()
        if guest is not None:
            return self._guest_valid(form, guest)
        try:
            user = user_signup(
                username=form.cleaned_data["username"],
                email=form.cleaned_data.get("email", ""),
                password=form.cleaned_data["password1"],
                # daphne --proxy-headers sets it from the proxy's X-Forwarded-For.
                ip_address=self.request.META.get("REMOTE_ADDR", ""),
            )
        except SignupRefused as refusal:
            if refusal.code != "signup_limit":
                # A look-alike name taken since the form checked it: nothing created.
                form.add_error("username", refusal.message)
                return self.form_invalid(form)
            # Too many accounts from this address today: 429, nothing created.
            form.add_error(None, refusal.message)
            response = self.form_invalid(form)
            response.status_code = 429
            seconds = (next_utc_midnight() - timezone.now()).total_seconds()
            response["Retry-After"] = str(max(1, math.ceil(seconds)))
            return response
        except IntegrityError:
            # Someone took the name between the form's check and our insert.
            form.add_error("username", _("A user with that username already exists."))
            return self.form_invalid(form)
        # Several authentication backends (django-axes first): name the one that logs in.
        login(self.request, user, backend=LOGIN_BACKEND)
        messages.success(
            self.request,
            _("Welcome, %(username)s! Your wallet holds %(balance)s coins.")
            % {"username": user.get_username(), "balance": f"{wallet_balance(user=user):,}"},
        )
        return redirect(self._next_url() or "accounts:profile")

    def _guest_valid(self, form: GuestSignUpForm, guest: User) -> HttpResponse:
        try:
            user = guest_convert(
                user=guest,
                username=form.cleaned_data["username"],
                email=form.cleaned_data.get("email", ""),
                password=form.cleaned_data["password1"],
            )
        except SignupRefused as refusal:
            field = "username" if refusal.code.startswith("name_") else None
            form.add_error(field, refusal.message)
            return self.form_invalid(form)
        except IntegrityError:
            form.add_error("username", _("A user with that username already exists."))
            return self.form_invalid(form)
        # The password changed: keep this browser logged in.
        update_session_auth_hash(self.request, user)
        messages.success(
            self.request,
            _(
                "Welcome, %(username)s! You kept your coins and rounds; your wallet holds "
                "%(balance)s coins."
            )
            % {"username": user.get_username(), "balance": f"{wallet_balance(user=user):,}"},
        )
        return redirect(self._next_url() or "accounts:profile")


def _profile_page(
    request: HttpRequest, *, status: int = 200, settings_form: TableSettingsForm | None = None
) -> HttpResponse:
    page = Paginator(wallet_entries(user=request.user), ENTRIES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    economy = economy_settings()
    if settings_form is None:
        opening = (
            TableSettingsForm.SUGGESTED
            if getattr(request.user, "default_layout", True)
            else TableSettingsForm.SORTED
        )
        settings_form = TableSettingsForm(initial={"opening": opening})
    context = {
        "settings_form": settings_form,
        "balance": wallet_balance(user=request.user),
        "page": page,
        "daily_bonus": daily_bonus_status(user=request.user, economy=economy),
        "relief": relief_status(user=request.user, economy=economy),
    }
    return render(request, "accounts/profile.html", context, status=status)


@login_required
@require_safe
def profile(request: HttpRequest) -> HttpResponse:
    """The player's balance, the grants they may claim, and their ledger history, newest
    first, a page at a time."""
    return _profile_page(request)


class ClaimThrottle(SimpleRateThrottle):
    """A claim button's rate per user: the API's scope of the same claim, same cache key, so
    the page and the API share one budget (REST_FRAMEWORK's DEFAULT_THROTTLE_RATES)."""

    def __init__(self, scope: str) -> None:
        self.scope = scope
        super().__init__()

    def get_cache_key(self, request: Any, view: Any) -> str:
        return self.cache_format % {"scope": self.scope, "ident": request.user.pk}


def _claim(
    request: HttpRequest,
    *,
    scope: str,
    claim: Callable[..., Transaction],
    done: str,
) -> HttpResponse:
    """POST from a profile button: claim, then back to the profile with what happened.

    Over the rate: the profile page with status 429 and the time to wait, nothing claimed.
    """
    throttle = ClaimThrottle(scope)
    if not throttle.allow_request(request, None):
        seconds = max(1, math.ceil(throttle.wait() or 1))
        messages.error(request, retry_message(seconds))
        response = _profile_page(request, status=429)
        response["Retry-After"] = str(seconds)
        return response
    user = request.user
    try:
        posted = claim(user=user)
    except ClaimRefused as refusal:
        messages.error(request, refusal.message)
    else:
        amount = posted.entries.get(account__user=user).amount
        messages.success(request, done % {"amount": coins(amount)})
    return redirect("accounts:profile")


@login_required
@require_POST
def claim_daily_bonus(request: HttpRequest) -> HttpResponse:
    """The profile's "Claim daily bonus" button."""
    return _claim(
        request,
        scope="wallet_daily_bonus",
        claim=wallet_daily_bonus_claim,
        done=_("You received your daily bonus of %(amount)s coins."),
    )


@login_required
@require_POST
def claim_relief(request: HttpRequest) -> HttpResponse:
    """The profile's "Claim relief" button."""
    return _claim(
        request,
        scope="wallet_relief",
        claim=wallet_relief_claim,
        done=_("You received a relief grant of %(amount)s coins."),
    )


@login_required
@require_POST
def save_settings(request: HttpRequest) -> HttpResponse:
    """The profile's table settings: saved, then back to the profile. A value the form does not
    offer: the profile with the form's error (400), nothing saved. Over the rate (per user): the
    profile with status 429 and the time to wait, nothing saved."""
    throttle = ClaimThrottle("profile_settings")
    if not throttle.allow_request(request, None):
        seconds = max(1, math.ceil(throttle.wait() or 1))
        messages.error(request, retry_message(seconds))
        response = _profile_page(request, status=429)
        response["Retry-After"] = str(seconds)
        return response
    form = TableSettingsForm(request.POST)
    if not form.is_valid():
        return _profile_page(request, status=400, settings_form=form)
    user_settings_update(user=request.user, default_layout=form.default_layout())
    messages.success(request, _("Your table settings are saved."))
    return redirect("accounts:profile")


PASSWORD_RESET_RATE = "accounts.password_reset"  # settings.RATE_LIMITS
PASSWORD_RESET_REQUEST_RATE = "accounts.password_reset_request"
PASSWORD_RESET_MAILBOX_RATE = "accounts.password_reset_mailbox"


def _too_many(limited: RateLimited) -> HttpResponse:
    response = HttpResponse(
        retry_message(limited.retry_after), status=429, content_type="text/plain; charset=utf-8"
    )
    response["Retry-After"] = str(limited.retry_after)
    return response


class PasswordResetRequestView(auth_views.PasswordResetView):
    """ "Forgot your password?": a link to choose a new one, e-mailed to the accounts (active,
    with a usable password: no bot) that have the address given. The page after it is the
    same whether an account has the address or not, so it tells nobody which addresses are
    known. Each POST counts against the client address's budget (over it: 429, nothing sent);
    each address receives at most its own budget of links (past it: the same page, no mail),
    so the page cannot be used to flood someone's mailbox."""

    template_name = "accounts/password_reset_form.html"
    email_template_name = "accounts/password_reset_email.txt"
    subject_template_name = "accounts/password_reset_subject.txt"
    success_url = reverse_lazy("accounts:password_reset_done")

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        address = network_address(request.META.get("REMOTE_ADDR"))
        limited = rate_limit_hit(PASSWORD_RESET_REQUEST_RATE, address)
        if limited is not None:
            return _too_many(limited)
        return super().post(request, *args, **kwargs)

    def form_valid(self, form: Any) -> HttpResponse:
        mailbox = hashlib.sha256(form.cleaned_data["email"].strip().lower().encode()).hexdigest()
        if rate_limit_hit(PASSWORD_RESET_MAILBOX_RATE, mailbox) is not None:
            return HttpResponseRedirect(self.get_success_url())
        return super().form_valid(form)


class PasswordResetConfirmView(auth_views.PasswordResetConfirmView):
    """The page a password reset link opens (asked for by the player, or sent by support from
    the admin): choose a new password. Both its requests (the link, then the form it
    redirects to) count against the client address's budget; over it, 429 with Retry-After
    and nothing changed."""

    template_name = "accounts/password_reset_confirm.html"
    success_url = reverse_lazy("accounts:password_reset_complete")

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        address = network_address(request.META.get("REMOTE_ADDR"))
        limited = rate_limit_hit(PASSWORD_RESET_RATE, address)
        if limited is not None:
            return _too_many(limited)
        return super().dispatch(request, *args, **kwargs)

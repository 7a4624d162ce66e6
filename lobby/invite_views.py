"""The invite link's page, /lobby/invite/<token>/, and the owner's "new link" post.

GET shows what the link is for and one button (it never changes anything: a link previewed by
a chat app seats nobody); POST seats the player (`lobby.invites.invite_accept`) and goes to the
table. A visitor without an account is offered to log in or sign up and come back here
(?next=), or to take the seat at once as a guest (`accounts.views.guest_start`: a name and
the guest grant, counted like a sign-up of its address). Every request is counted per client
address (guesses of a token included), every seating and every new link per user; a bad,
revoked or expired link gets the same page with the reason, and nothing changes.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext as _
from django.views.decorators.http import require_http_methods, require_POST

from accounts.economy import economy_settings, network_address
from accounts.errors import SignupRefused
from accounts.models import User
from accounts.views import guest_start
from games.labels import data_name
from lobby.errors import GuestCannotCover, InviteExpired, RoomFull
from lobby.invites import invite_accept, invite_path, invite_regenerate, invite_target
from lobby.models import Seat
from shisanshui.api import retry_message
from shisanshui.errors import ClientError
from shisanshui.ratelimit import RateLimited, rate_limit_hit

ADDRESS_BUDGET = "lobby.invite_address"  # settings.RATE_LIMITS
USER_BUDGET = "lobby.invite_user"
REGENERATE_BUDGET = "lobby.invite_regenerate"


def _limited(request: HttpRequest, budget: str, key: object) -> HttpResponse | None:
    """None within the budget (spent here); else the page with why, 429 and Retry-After."""
    limited = rate_limit_hit(budget, str(key))
    if limited is None:
        return None
    response = render(
        request,
        "lobby/invite.html",
        {
            "error": _("Too many tries: try again in %(seconds)s s.")
            % {"seconds": limited.retry_after},
            "error_code": "rate_limited",
        },
        status=429,
    )
    response["Retry-After"] = str(limited.retry_after)
    return response


def _refused(request: HttpRequest, error: ClientError) -> HttpResponse:
    return render(
        request,
        "lobby/invite.html",
        {"error": error.message, "error_code": error.code},
        status=error.status,
    )


@require_http_methods(["GET", "HEAD", "POST"])
def invite(request: HttpRequest, token: str) -> HttpResponse:
    limited = _limited(request, ADDRESS_BUDGET, network_address(request.META.get("REMOTE_ADDR")))
    if limited is not None:
        return limited
    here = request.path
    if request.method == "POST":
        if not request.user.is_authenticated:
            if request.POST.get("as_guest") != "1":
                return redirect(f"{reverse('accounts:login')}?{urlencode({'next': here})}")
            started = _guest_for(request, token)
            if isinstance(started, HttpResponse):
                return started
        limited = _limited(request, USER_BUDGET, request.user.pk)
        if limited is not None:
            return limited
        try:
            seat = invite_accept(user=request.user, token=token)
        except ClientError as error:
            return _refused(request, error)
        messages.success(
            request,
            _("You are seated in “%(room)s”, seat %(position)s.")
            % {"room": data_name(seat.room.name), "position": seat.position + 1},
        )
        return redirect(reverse("games:table", args=[seat.room_id]))
    try:
        target = invite_target(token)
        if not target.open:
            raise InviteExpired()
    except ClientError as error:
        return _refused(request, error)
    if request.user.is_authenticated:
        seat = Seat.objects.filter(user=request.user, room_id__in=target.room_ids()).first()
        if seat is not None:  # seated there already: the link leads to the table
            return redirect(reverse("games:table", args=[seat.room_id]))
    view = _target_view(target)
    return render(
        request,
        "lobby/invite.html",
        {
            "target": view,
            "here": here,
            "guest_grant": economy_settings().guest_grant,
            "guest_can_sit": view["entry_minimum"] <= economy_settings().guest_grant,
        },
    )


def _guest_for(request: HttpRequest, token: str) -> User | HttpResponse:
    """A visitor taking the seat as a guest: the link, its target and a free seat checked
    first, and that a guest's coins reach the entry minimum, so that no guest is made for a
    seat it could not take; then the guest (`guest_start`: the guest rate per address, the
    address's sign-ups of the day, the guest mint ceiling), logged in on this browser."""
    try:
        target = invite_target(token)
        if not target.open:
            raise InviteExpired()
        view = _target_view(target)
        if view["free"] <= 0:
            raise RoomFull()
        if view["entry_minimum"] > economy_settings().guest_grant:
            raise GuestCannotCover()
    except ClientError as error:
        return _refused(request, error)
    try:
        started = guest_start(request)
    except SignupRefused as refusal:  # the address's sign-ups of today, the mint ceiling
        return render(
            request,
            "lobby/invite.html",
            {"error": refusal.message, "error_code": refusal.code},
            status=429,
        )
    if isinstance(started, RateLimited):
        response = render(
            request,
            "lobby/invite.html",
            {"error": retry_message(started.retry_after), "error_code": "rate_limited"},
            status=429,
        )
        response["Retry-After"] = str(started.retry_after)
        return response
    return started


def _target_view(target: Any) -> dict[str, Any]:
    """What the page tells the invitee: the room or match, its owner, terms and free seats."""
    if target.room is not None:
        room = target.room
        taken = room.taken_seats.count()
        return {
            "kind": "series" if room.series_rounds else "room",
            "name": data_name(room.name),
            "owner": room.owner.display_name(),
            "base_score": room.base_score,
            "entry_minimum": room.entry_minimum,
            "seats": room.seats,
            "free": room.seats - taken,
            "series_rounds": room.series_rounds,
        }
    match = target.match
    rooms = list(match.rooms.all())
    free = sum(room.seats - room.taken_seats.count() for room in rooms)
    return {
        "kind": "match",
        "name": data_name(match.name),
        "owner": match.owner.display_name(),
        "base_score": match.base_score,
        "entry_minimum": rooms[0].entry_minimum if rooms else 0,
        "seats": match.seats * match.tables,
        "free": free,
        "tables": match.tables,
        "deals": match.deals,
    }


@login_required
@require_POST
def regenerate(request: HttpRequest) -> HttpResponse:
    """The owner makes a new link (the old one stops working) and goes back to the page it
    was on (``back``, a path on this site; else the lobby)."""
    back = request.POST.get("back") or ""
    if not back.startswith("/") or not url_has_allowed_host_and_scheme(
        back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    ):
        back = reverse("lobby:index")
    limited = _limited(request, REGENERATE_BUDGET, request.user.pk)
    if limited is not None:
        return limited
    kind = request.POST.get("kind")
    target_id = request.POST.get("id") or ""
    if kind not in ("r", "m") or not target_id.isdigit() or len(target_id) > 12:
        messages.error(request, _("That is not a room or match of yours."))
        return redirect(back)
    try:
        made = invite_regenerate(
            user=request.user,
            room_id=int(target_id) if kind == "r" else None,
            match_id=int(target_id) if kind == "m" else None,
        )
    except ClientError as error:
        messages.error(request, error.message)
    else:
        messages.success(
            request,
            _("A new invite link is made: %(link)s. The earlier link no longer works.")
            % {"link": request.build_absolute_uri(invite_path(made))},
        )
    return redirect(back)

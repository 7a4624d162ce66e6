"""The lobby page, /lobby/, and the plain form posts behind it.

The page works without JavaScript: each form posts here, the view calls a service and redirects
back with a message. static/lobby/lobby.js then keeps the room list live over ws/lobby/ and
sends the same actions over the socket instead, without reloading.
"""

import math
from collections.abc import Callable
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.forms import Form
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils import timezone
from django.utils.functional import Promise
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy as _lazy
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from accounts.economy import next_utc_midnight
from accounts.errors import SignupRefused
from accounts.selectors import wallet_balance
from accounts.views import guest_start
from games.labels import data_name
from games.live import sent_away
from games.live.matches import match_create
from games.models import RuleConfiguration
from games.variants import CLASSIC, VARIANT_HELP, variant_name
from lobby.checks import default_room_name, entry_minimum
from lobby.forms import (
    MatchCreateForm,
    QuickJoinForm,
    RoomCreateForm,
    RoomFilterForm,
    RoomJoinForm,
    RoomRefForm,
)
from lobby.matchmaking import (
    QUICK_PLAY_BASE_SCORES,
    quick_play_base_score,
    room_quick_join,
)
from lobby.models import CODE_LENGTH, MAX_BASE_SCORE, NAME_MAX_LENGTH, PlayWait
from lobby.selectors import (
    RoomView,
    SeatView,
    room_page,
    room_view_of,
    seat_in_round,
    seat_view,
    variants_offered,
)
from lobby.services import room_close, room_create, room_join, room_join_by_code, room_leave
from lobby.waiting import PlayNow, play_now, play_wait_cancel, play_wait_check
from shisanshui.api import retry_message
from shisanshui.errors import ClientError, RateLimitedError
from shisanshui.ratelimit import RateLimited, rate_limit_hit

# Why the table sent a player back to the room list (the table page redirects to
# /lobby/?left=<reason>); any other value is ignored, never shown.
LEFT_MESSAGES: dict[str, Promise] = {
    "ready_timeout": _lazy(
        "You did not press Ready in time, so the table sent you back to the room list."
    ),
    "escaped": _lazy(
        "You left during a round: it was played out for you and you paid the escape penalty."
    ),
    "left": _lazy("You left the table."),
    "match_over": _lazy(
        "The table's last round is played (a duplicate match or a series), so it sent you "
        "back to the room list. The results stay on the match's or the series' page."
    ),
    "kicked": _lazy("You were removed from the table."),
    "escaping": _lazy(
        "You left during a round: it is played out for you, and you pay the escape penalty "
        "when it is settled."
    ),
    "escaped_disconnected": _lazy(
        "You were disconnected during a round and not back before it was settled: it was "
        "played out for you, you paid the escape penalty, and the table sent you back to the "
        "room list."
    ),
    "not_seated": _lazy("You are no longer seated at that table."),
    "insufficient_coins": _lazy(
        "You no longer had the table's entry minimum, so the table sent you back to the room list."
    ),
    "transfers_frozen": _lazy(
        "Your account's transfers are frozen pending a review by support, so the table sent you "
        "back to the room list after the round. You cannot take a seat until the review is over."
    ),
}


def left_message(reason: str | None) -> str:
    """The message for a ?left= reason, in the active language; "" for anything else."""
    message = LEFT_MESSAGES.get(reason or "")
    return str(message) if message is not None else ""


def _left_reason(request: HttpRequest) -> str | None:
    """Why the player is back here: the reason the table last sent it away (its own note,
    told once: ``games.live.sent_away``; forgotten whenever it sits down, so it is the latest
    and a link's ?left= cannot say otherwise), else what the table page said (?left=)."""
    note = sent_away.pop(user_id=request.user.pk)
    if note is not None:
        return note["reason"]
    return request.GET.get("left")


@login_required
@require_safe
def lobby(request: HttpRequest) -> HttpResponse:
    """A page of the room list (?page=, filtered by the query string; LOBBY_PAGE_SIZE rooms,
    newest first: those where a person sits, and the player's own), the player's seat (a
    banner back to the table), Play now, the lobby's forms, and why the table sent the player
    back here (?left=).

    A filter's bad value is ignored, but for an unknown ?variant=, which is answered 400 with
    the list unfiltered by variant and a message saying which variants there are."""
    filters = RoomFilterForm(request.GET or None)
    filters.is_valid()
    wanted = getattr(filters, "cleaned_data", {})  # the fields that are valid
    filter_error = " ".join(filters.errors.get("variant", []))
    page = room_page(
        page=_page_number(request.GET.get("page")),
        base_score=wanted.get("base_score"),
        seats=wanted.get("seats"),
        has_free_seat=True if wanted.get("free") else None,
        listed_for=request.user,
        variant=wanted.get("variant") or None,
    )
    seat = seat_view(user=request.user)
    in_round = seat is not None and seat_in_round(user=request.user, room_id=seat["room"]["id"])
    balance = wallet_balance(user=request.user)
    context = {
        "rooms": [
            _page_row(room_view_of(room=room, user=request.user), request.user, seat)
            for room in page.rooms
        ],
        "page": page,
        "newer_url": _page_url(request, page.number - 1) if page.number > 1 else "",
        "older_url": _page_url(request, page.number + 1) if page.number < page.pages else "",
        "seat": seat,
        "in_round": in_round,
        "seat_text": _banner_text(seat, in_round=in_round) if seat else "",
        "left_message": left_message(_left_reason(request)),
        "balance": balance,
        "quick_play": _quick_play_terms(balance),
        "play_variants": _play_variants(),
        "filters": filters,
        "filter_error": filter_error,
        "create_form": RoomCreateForm(),
        "default_room_name": data_name(default_room_name(owner=request.user)),
        "join_form": RoomJoinForm(),
        "quick_join_form": QuickJoinForm(),
        "limits": {
            "name": NAME_MAX_LENGTH,
            "code": CODE_LENGTH,
            "base_score": MAX_BASE_SCORE,
        },
        "js_strings": {
            "full": _("Full"),
            "private": _("Private"),
            "you": _("you"),
            "connected": _("Live"),
            "disconnected": _("Reconnecting…"),
            "seated": _("You are seated in “%(room)s”, seat %(position)s."),
            "seated_at": _("You are seated at table “%(room)s”"),
            "in_round": _("You are in a round at table “%(room)s”"),
            "left": _("You left “%(room)s”."),
            "closed": _("You closed “%(room)s”."),
            "created": _("You opened “%(room)s”."),
            "to_table": _("Go to the table"),
            "page_info": _("Page %(page)s of %(pages)s · %(total)s open rooms"),
            "bot_levels": {level: str(name) for level, name in BOT_LEVEL_NAMES.items()},
            "duplicate": _("Duplicate %(table)s/%(tables)s"),
            "watch": _("Watch"),
            "match_url": reverse("games:match", args=[0]),
        },
        "table_url_zero": reverse("games:table", args=[0]),
    }
    return render(request, "lobby/lobby.html", context, status=400 if filter_error else 200)


def _page_number(value: str | None) -> int:
    """The ?page= asked for; 1 when missing or not a positive number (past the last: the last)."""
    try:
        return max(1, min(int(value or 1), 1_000_000))
    except ValueError:
        return 1


def _page_url(request: HttpRequest, number: int) -> str:
    """This page's URL at another page number, the filters kept."""
    query = request.GET.copy()
    query["page"] = str(number)
    return f"{reverse('lobby:index')}?{query.urlencode()}"


def _page_row(row: RoomView, user: Any, seat: SeatView | None) -> dict[str, Any]:
    """A row with what this player can do with it (lobby.js decides the same way)."""
    full = row["seats_taken"] >= row["seats"]
    mine = seat is not None and seat["room"]["id"] == row["id"]
    return {
        **row,
        "full": full,
        "mine": mine,
        "can_join": seat is None and not full,
        "can_close": row["owner"] == user.get_username() and row["seats_taken"] == 0,
        "classic": row["variant"]["tags"] == [CLASSIC],  # its badge shown subtly
        "bots": row["seats_taken"] - row["people"],
        "bot_level_name": BOT_LEVEL_NAMES.get(row["bot_level"], row["bot_level"]),
    }


# How each bot level is named on a room's row (games.rules.levels).
BOT_LEVEL_NAMES = {
    "easy": _lazy("Easy bots"),
    "normal": _lazy("Normal bots"),
    "strong": _lazy("Strong bots"),
    "expert": _lazy("Expert bots"),
}


def _quick_play_terms(balance: int) -> dict[str, Any] | None:
    """What Play now would seat the player at: {"base_score", "entry_minimum", "affordable"};
    when the player cannot afford any, the smallest entry minimum with `affordable` False.
    None without usable default rules (Play now then says why when pressed)."""
    rules = RuleConfiguration.objects.filter(is_default=True).first()
    if rules is None:
        return None
    try:
        base_score = quick_play_base_score(rules=rules, balance=balance)
        shown = base_score or QUICK_PLAY_BASE_SCORES[-1]
        return {
            "base_score": shown,
            "entry_minimum": entry_minimum(rules=rules, base_score=shown),
            "affordable": base_score is not None,
        }
    except ClientError:
        return None


def _play_variants() -> list[dict[str, str]]:
    """The variants Play now offers (those some configuration offers), each with its name in
    the active language and its one-line help."""
    chinese = (get_language() or "").lower().startswith("zh")
    return [
        {"slug": slug, "name": variant_name(slug, chinese), "help": str(VARIANT_HELP[slug])}
        for slug in variants_offered()
    ]


def _banner_text(seat: SeatView, *, in_round: bool) -> str:
    """The seat banner's words (the link back to the table follows them)."""
    if in_round:
        return _("You are in a round at table “%(room)s”") % {"room": seat["room"]["name"]}
    return _("You are seated at table “%(room)s”") % {"room": seat["room"]["name"]}


def _seated_text(seat: SeatView) -> str:
    return _("You are seated in “%(room)s”, seat %(position)s.") % {
        "room": seat["room"]["name"],
        "position": seat["position"] + 1,
    }


def _act(
    request: HttpRequest,
    form: Form,
    action: Callable[[dict[str, Any]], str],
    *,
    to_table: bool = False,
) -> HttpResponse:
    """Run one form action and come back to the lobby with what happened; with ``to_table``,
    a player it seated goes on to the table page instead."""
    if not form.is_valid():
        _form_errors(request, form)
    else:
        try:
            messages.success(request, action(form.cleaned_data))
        except ClientError as error:
            messages.error(request, error.message)
        else:
            seat = seat_view(user=request.user) if to_table else None
            if seat is not None:
                return redirect(reverse("games:table", args=[seat["room"]["id"]]))
    return redirect(reverse("lobby:index"))


def _form_errors(request: HttpRequest, form: Form) -> None:
    """Each of a refused form's errors as a message, named by its field's label."""
    for field, errors in form.errors.items():
        label = form.fields[field].label if field in form.fields else ""
        for error in errors:
            messages.error(request, f"{label}: {error}" if label else error)


def _seated_message(user: Any) -> str:
    seat = seat_view(user=user)
    assert seat is not None
    return _seated_text(seat)


@login_required
@require_POST
def create(request: HttpRequest) -> HttpResponse:
    def action(data: dict[str, Any]) -> str:
        room = room_create(owner=request.user, **data)
        return _("You opened “%(room)s”.") % {"room": data_name(room.name)}

    return _act(request, RoomCreateForm(request.POST), action, to_table=True)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def create_match(request: HttpRequest) -> HttpResponse:
    """The duplicate match form (GET), and opening one (POST, games.live.duplicate): the player goes
    to its first table; a refusal comes back to the form with the reason."""
    form = MatchCreateForm(request.POST or None)
    if request.method == "POST":
        if not form.is_valid():
            _form_errors(request, form)
        else:
            try:
                match = match_create(owner=request.user, **form.cleaned_data)
            except ClientError as error:
                messages.error(request, error.message)
            else:
                messages.success(
                    request,
                    _(
                        "You opened the duplicate match “%(match)s”: "
                        "%(tables)s tables, %(deals)s deals."
                    )
                    % {
                        "match": data_name(match.name),
                        "tables": match.tables,
                        "deals": match.deals,
                    },
                )
                room = match.rooms.get(match_table=1)
                return redirect(reverse("games:table", args=[room.pk]))
        return redirect(reverse("lobby:create_match"))
    context = {
        "match_form": form,
        "default_room_name": data_name(default_room_name(owner=request.user)),
        "limits": {"name": NAME_MAX_LENGTH},
    }
    return render(request, "lobby/match_create.html", context)


@login_required
@require_POST
def join(request: HttpRequest) -> HttpResponse:
    """Join a room from the list (room id, and code if private) or by code alone."""

    def action(data: dict[str, Any]) -> str:
        if data.get("room") is not None:
            room_join(user=request.user, room_id=data["room"], code=data.get("code", ""))
        else:
            room_join_by_code(user=request.user, code=data.get("code", ""))
        return _seated_message(request.user)

    return _act(request, RoomJoinForm(request.POST), action, to_table=True)


@login_required
@require_POST
def quick_join(request: HttpRequest) -> HttpResponse:
    def action(data: dict[str, Any]) -> str:
        room_quick_join(user=request.user, **data)
        return _seated_message(request.user)

    return _act(request, QuickJoinForm(request.POST), action, to_table=True)


@require_POST
def guest_play(request: HttpRequest) -> HttpResponse:
    """The front page's Play now for a visitor without an account: one tap makes them a guest
    (`accounts.views.guest_start`: a name, the guest grant, logged in) and seats them at a
    table with bots (`room_quick_play`). A player logged in already simply plays now. Over
    the rate of guest creations per address, or past the address's sign-ups of the day or
    the guest mint ceiling: the front page again, with the reason and status 429, and nothing
    created."""
    if not request.user.is_authenticated:
        try:
            started = guest_start(request)
        except SignupRefused as refusal:
            return _home_refused(request, refusal.message, seconds=None)
        if isinstance(started, RateLimited):
            return _home_refused(
                request, retry_message(started.retry_after), seconds=started.retry_after
            )
    return _play_now(request)


def _home_refused(request: HttpRequest, message: str, *, seconds: int | None) -> HttpResponse:
    if seconds is None:
        seconds = max(1, math.ceil((next_utc_midnight() - timezone.now()).total_seconds()))
    messages.error(request, message)
    context = {"play_url": reverse("lobby:play"), "lobby_url": reverse("lobby:index")}
    response = render(request, "home.html", context, status=429)
    response["Retry-After"] = str(seconds)
    return response


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def play(request: HttpRequest) -> HttpResponse:
    """Play now (`lobby.waiting.play_now`): POST seats the player with people of a similar
    rating waiting for the same rules, or puts the player in the wait for them and comes back
    here (with `variant`, a slug: a table of that variant, as the page's variant buttons send
    it); seated, the player goes to the table (a player seated already to their own table).

    GET is where the front page's Play now lands after logging in or signing up (?next=), and
    where the player waits: a player seated already goes to their table; a player waiting sees
    "Finding players of your level…" (static/lobby/play.js asks `play_wait` until seated, and
    without JavaScript the page reloads after the deadline, when the deadline's task has seated
    the player); anyone else gets a page with the Play now button, which play.js presses at once
    when the page was reached from this site (a link from elsewhere never seats anyone by
    itself). Writes happen only on POST.
    """
    if request.method != "POST":
        seat = seat_view(user=request.user)
        if seat is not None:
            return redirect(reverse("games:table", args=[seat["room"]["id"]]))
        wait = PlayWait.objects.filter(user=request.user).first()
        return render(
            request,
            "lobby/play.html",
            {
                "quick_play": _quick_play_terms(wallet_balance(user=request.user)),
                "play_variants": _play_variants(),
                "wait": _wait_view(PlayNow(wait=wait)) if wait is not None else None,
                "js_strings": {
                    "finding": _("Finding players of your level… (%(seconds)s s)"),
                    "seating": _("Seating you at a table…"),
                },
            },
        )
    return _play_now(request)


def _play_now(request: HttpRequest) -> HttpResponse:
    """POST of Play now: seat the player at a table with bots and go to it."""
    try:
        played = play_now(user=request.user, variant=request.POST.get("variant") or None)
    except ClientError as error:
        messages.error(request, error.message)
        return redirect(reverse("lobby:index"))
    if played.seat is None:
        return redirect(reverse("lobby:play"))  # waiting: the page shows it
    room = played.seat.room
    if not played.seated_now:
        messages.info(
            request,
            _("You are already seated at table “%(room)s”: here it is.")
            % {"room": data_name(room.name)},
        )
    return redirect(reverse("games:table", args=[room.pk]))


def _wait_view(played: PlayNow) -> dict[str, Any]:
    """Where a player's Play now stands, for the waiting page's script (and its first render):
    `state` "seated" (with `url`, the table's page), "waiting" (with `seconds`, whole seconds
    left, rounded up) or "idle" (not waiting: `url` the lobby, `message` why, if refused)."""
    if played.seat is not None:
        return {"state": "seated", "url": reverse("games:table", args=[played.seat.room_id])}
    if played.wait is not None:
        return {"state": "waiting", "seconds": math.ceil(played.seconds_left())}
    message = played.refused.message if played.refused is not None else ""
    return {"state": "idle", "url": reverse("lobby:index"), "message": message}


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@login_required
@require_POST
def play_wait(request: HttpRequest) -> HttpResponse:
    """Ask where the player's Play now wait stands (`play_wait_check`, which ends a wait that
    is due): JSON for the waiting page's script (`_wait_view`); a plain form post goes where
    the answer says. Rate-limited per player ("lobby.play_wait": 429 with Retry-After)."""
    limited = rate_limit_hit("lobby.play_wait", request.user.pk)
    if limited is not None:
        if _wants_json(request):
            response: HttpResponse = JsonResponse(
                {"error": "rate_limited", "retry_after": limited.retry_after}, status=429
            )
        else:
            response = HttpResponse(
                RateLimitedError(retry_after=limited.retry_after).message,
                status=429,
                content_type="text/plain; charset=utf-8",
            )
        response["Retry-After"] = str(limited.retry_after)
        return response
    view = _wait_view(play_wait_check(user=request.user))
    if view.get("message"):
        messages.error(request, view["message"])  # shown by the lobby the page goes to
    if _wants_json(request):
        return JsonResponse(view)
    if view["state"] == "waiting":
        return redirect(reverse("lobby:play"))
    return redirect(view["url"])


@login_required
@require_POST
def play_cancel(request: HttpRequest) -> HttpResponse:
    """Stop waiting for players (`play_wait_cancel`) and go back to the lobby; a player seated
    meanwhile goes to the table. Rate-limited per player ("lobby.play_cancel")."""
    limited = rate_limit_hit("lobby.play_cancel", request.user.pk)
    if limited is not None:
        messages.error(request, RateLimitedError(retry_after=limited.retry_after).message)
        return redirect(reverse("lobby:play"))
    played = play_wait_cancel(user=request.user)
    if played.seat is not None:
        return redirect(reverse("games:table", args=[played.seat.room_id]))
    messages.info(request, _("You stopped waiting for players."))
    return redirect(reverse("lobby:index"))


@login_required
@require_POST
def leave(request: HttpRequest) -> HttpResponse:
    def action(data: dict[str, Any]) -> str:
        room = room_leave(user=request.user)
        return _("You left “%(room)s”.") % {"room": data_name(room.name)}

    return _act(request, Form(request.POST), action)


@login_required
@require_POST
def close(request: HttpRequest) -> HttpResponse:
    def action(data: dict[str, Any]) -> str:
        room = room_close(user=request.user, room_id=data["room"])
        return _("You closed “%(room)s”.") % {"room": data_name(room.name)}

    return _act(request, RoomRefForm(request.POST), action)

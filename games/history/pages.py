"""Player pages of played rounds: the hand history, a round's replay, a duplicate match's
results, a series' scoreboard, the standings and a player's statistics (thin: the reads are in
games.history)."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.translation import get_language
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from games.history import audit
from games.history.matches import match_results
from games.history.rating import family_name, player_ratings, rated_families, rating_standings
from games.history.replay import round_replay_data
from games.history.selectors import round_in_play, rounds_hidden_until_settled
from games.history.series import series_room, series_scoreboard
from games.history.standings import listed_players, player_stats, standings
from games.labels import CATEGORY_EN, special_name
from games.models import DuplicateMatch, Round, StandingPeriod
from games.rules.config import SPECIAL_INFO
from games.rules.hands import CATEGORY_ZH
from games.variants import CLASSIC
from lobby.selectors import seat_view
from shisanshui.ratelimit import rate_limit_hit

MATCH_PAGES = "games.match_page"  # settings.RATE_LIMITS


@login_required
@require_GET
def history(request: HttpRequest) -> HttpResponse:
    """The player's recent rounds, newest first (a round in play first, marked, no hand)."""
    rows = [
        (row, audit.round_fee(row.round.result, row.user_id))
        for row in audit.player_rounds(user=request.user)
    ]
    fees = any(fee for _row, fee in rows)
    return render(request, "games/history.html", {"rows": rows, "fees": fees})


@login_required
@require_GET
def replay(request: HttpRequest, round_id: int) -> HttpResponse:
    """A settled round step by step, drawn by the table's own reducer and views from the
    round's public events (games.history.replay): the deal, the arranging, the comparison row
    by row, guns, specials and the settlement.

    Only its players and staff allowed to view rounds may open it; anyone else gets a 404, so
    the page does not tell which rounds exist. A round in play is replayed to nobody (403 with
    the reason): its hands are shown to no one before the settlement.
    """
    rounds = rounds_hidden_until_settled(rounds=Round.objects.select_related("table__room__rules"))
    round_ = get_object_or_404(rounds, pk=round_id)
    position = next(
        (p.position for p in round_.players.all() if p.user_id == request.user.pk), None
    )
    staff = request.user.is_staff and request.user.has_perm("games.view_round")
    if position is None and not staff:
        raise Http404
    back = _replay_back(request, round_, staff=staff)
    if round_in_play(round_):
        context = {"round": round_, "position": position, "in_play": True, **back}
        return render(request, "games/replay.html", context, status=403)
    data = {**round_replay_data(round_=round_, viewer=position), **_hand_names()}
    return render(
        request,
        "games/replay.html",
        {
            "round": round_,
            "position": position,
            "replay": data,
            "rules": audit.round_rules(round_=round_),
            **back,
        },
    )


# Where a replay's back link may lead, by the value of its ``from`` parameter: a name picks
# one of these pages of the round, so no address is ever read from the query (no open
# redirect). Anything else leads to the viewer's hand history.
_REPLAY_BACK = {"admin": "admin:games_round_change"}


def _replay_back(request: HttpRequest, round_: Round, *, staff: bool) -> dict[str, str]:
    """The replay's back link: the round's admin page when opened from there (``?from=admin``)
    by staff who may view rounds, else the hand history."""
    url_name = _REPLAY_BACK.get(request.GET.get("from", ""))
    if url_name is not None and staff:
        return {"back_url": reverse(url_name, args=[round_.pk]), "back_label": _("Round audit")}
    return {"back_url": reverse("games:history"), "back_label": _("Hand history")}


def _hand_names() -> dict[str, dict[str, dict[str, str]]]:
    """The Chinese and English names of the special hands and row categories, as the table
    page's config gives them to its views."""
    return {
        "specials": {s.id: {"zh": s.zh, "en": s.en} for s in SPECIAL_INFO},
        "categories": {c.id: {"zh": zh, "en": CATEGORY_EN[c.id]} for c, zh in CATEGORY_ZH.items()},
    }


_SUITS = {"S": ("♠", False), "H": ("♥", True), "C": ("♣", False), "D": ("♦", True)}


def card_view(text: str) -> dict[str, object]:
    """A card's text ("AS", "TD", a copy "7D2", a joker "RJ"/"BJ") as the page shows it."""
    if text in ("RJ", "BJ"):
        return {"text": text, "rank": _("Joker"), "suit": "", "red": text == "RJ"}
    rank, suit = text[0], text[1]
    symbol, red = _SUITS.get(suit, (suit, False))
    return {
        "text": text,
        "rank": "10" if rank == "T" else rank,
        "suit": symbol + ("′" * (len(text) - 2)),
        "red": red,
    }


def _rows_view(entry: dict[str, object]) -> list[list[dict[str, object]]]:
    arrangement = entry.get("arrangement")
    if not isinstance(arrangement, dict):
        return []
    return [[card_view(c) for c in arrangement.get(row, [])] for row in ("front", "middle", "back")]


@login_required
@require_GET
def match(request: HttpRequest, match_id: int) -> HttpResponse:
    """A duplicate match's results (games.history.matches.match_results): every deal all its tables
    have settled, each hand with what every table's player made of it against the hand's par,
    and the standings. Any signed-in player may read it: it shows only what the tables showed
    everyone at the reveal, and the seed only once the match is over."""
    limited = _limited(
        MATCH_PAGES, request.user.pk, _("Too many results pages: try again in %(seconds)s s.")
    )
    if limited is not None:
        return limited
    found = get_object_or_404(DuplicateMatch.objects.select_related("rules"), pk=match_id)
    data = match_results(found)
    seat = seat_view(user=request.user)
    my_rooms = {r["id"] for r in data["rooms"]}
    for deal in data["results"]:
        for hand in deal["hands"]:
            hand["card_views"] = [card_view(c) for c in hand["cards"]]
            for entry in hand["entries"]:
                entry["rows"] = _rows_view(entry)
                entry["special_name"] = special_name(entry["special"]) if entry["special"] else ""
                entry["mine"] = entry["user_id"] == request.user.pk
    for entry in data["standings"]:
        entry["mine"] = entry["user_id"] == request.user.pk
    context = {
        "match": found,
        "data": data,
        "seated_here": seat is not None and seat["room"]["id"] in my_rooms,
        "seat": seat,
        "api_url": reverse("api-match", args=[match_id]),
    }
    return render(request, "games/match.html", context)


SERIES_PAGES = "games.series_page"  # settings.RATE_LIMITS


def _series_limited(request: HttpRequest) -> HttpResponse | None:
    """The share link is read by anyone who has it, signed in or not: rate-limited by user,
    or by address for a visitor."""
    key = request.user.pk if request.user.is_authenticated else request.META.get("REMOTE_ADDR")
    return _limited(SERIES_PAGES, f"{key}", _("Too many scoreboards: try again in %(seconds)s s."))


def _limited(budget: str, key: object, message: str) -> HttpResponse | None:
    """None within the budget (spent here); else a 429 with ``message`` and Retry-After."""
    limited = rate_limit_hit(budget, key)
    if limited is None:
        return None
    response = HttpResponse(
        message % {"seconds": limited.retry_after},
        status=429,
        content_type="text/plain; charset=utf-8",
    )
    response["Retry-After"] = str(limited.retry_after)
    return response


def _scoreboard_view(token: str) -> dict[str, Any]:
    room = series_room(token)
    if room is None:
        raise Http404
    data = series_scoreboard(room)
    for entry in data["players"]:
        best = entry["best"]
        if best is not None:
            best["rows"] = _rows_view(best)
            best["special_name"] = special_name(best["special"]) if best["special"] else ""
    data["numbers"] = list(range(1, data["rounds"] + 1))
    data["room_id"] = room.pk  # its owner's page shows the invite link (lobby.invites)
    return data


@require_GET
def series(request: HttpRequest, token: str) -> HttpResponse:
    """A series' final scoreboard (games.history.series), at its share link: anyone with the link
    may read it, signed in or not."""
    limited = _series_limited(request)
    if limited is not None:
        return limited
    data = _scoreboard_view(token)
    context = {
        "data": data,
        "token": token,
        "share_url": request.build_absolute_uri(reverse("games:series", args=[token])),
        "image_url": reverse("games:series_image", args=[token]),
    }
    return render(request, "games/series.html", context)


@require_GET
def series_image(request: HttpRequest, token: str) -> HttpResponse:
    """The scoreboard as an SVG image, to share where a link will not do."""
    limited = _series_limited(request)
    if limited is not None:
        return limited
    data = _scoreboard_view(token)
    players = data["players"]
    response = render(
        request,
        "games/series.svg",
        {"data": data, "height": 120 + 34 * len(players), "rows": players},
        content_type="image/svg+xml; charset=utf-8",
    )
    response["Content-Disposition"] = 'inline; filename="scoreboard.svg"'
    return response


STATS_PAGES = "games.stats_page"  # settings.RATE_LIMITS


def _stats_limited(request: HttpRequest) -> HttpResponse | None:
    return _limited(STATS_PAGES, request.user.pk, _("Too many pages: try again in %(seconds)s s."))


@login_required
@require_GET
def standings_page(request: HttpRequest) -> HttpResponse:
    """The standings (games.history.standings): this week or all time, by net coins or by water per
    round, as the beat job last computed them; or by skill rating in a rule family
    (``?by=rating&family=``, games.history.rating). A bad ?period=, ?by= or ?family= falls back
    to the default (this week, by coins; the classic family)."""
    limited = _stats_limited(request)
    if limited is not None:
        return limited
    period = request.GET.get("period", StandingPeriod.WEEK)
    by = request.GET.get("by", "coins")
    if period not in StandingPeriod.values:
        period = StandingPeriod.WEEK
    if by == "rating":
        return _rating_standings_page(request, period)
    if by not in ("coins", "water"):
        by = "coins"
    data = standings(period=period, by=by)
    for row in data["rows"]:
        row["mine"] = row["player"] == request.user.get_username()
    return render(request, "games/standings.html", {"data": data, "periods": StandingPeriod})


def _rating_standings_page(request: HttpRequest, period: str) -> HttpResponse:
    families = rated_families()
    family = request.GET.get("family", CLASSIC)
    if family not in families:
        family = CLASSIC
    data = rating_standings(family=family)
    chinese = _chinese()
    for row in data["rows"]:
        row["mine"] = row["player"] == request.user.get_username()
    data.update(period=period, by="rating", family_name=family_name(family, chinese))
    context = {
        "data": data,
        "periods": StandingPeriod,
        "families": [(f, family_name(f, chinese)) for f in families],
    }
    return render(request, "games/standings.html", context)


def _chinese() -> bool:
    return (get_language() or "").startswith("zh")


@login_required
@require_GET
def player_page(request: HttpRequest, username: str) -> HttpResponse:
    """A player's statistics, this week and all time (games.history.standings); the same 404 for
    an unknown name and for one that hides its statistics (staff, bots)."""
    limited = _stats_limited(request)
    if limited is not None:
        return limited
    user = get_object_or_404(listed_players(), username=username)
    data = player_stats(user)
    chinese = _chinese()
    ratings = [
        {**r, "family_name": family_name(r["family"], chinese)} for r in player_ratings(user.pk)
    ]
    return render(request, "games/player.html", {"data": data, "player": user, "ratings": ratings})

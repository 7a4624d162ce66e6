"""The table page a player or a watcher opens; its socket does the rest."""

from __future__ import annotations

from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.templatetags.static import static
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.models import User
from accounts.selectors import wallet_balance
from games.labels import CATEGORY_EN, category_name, special_name
from games.live import sent_away
from games.models import RuleConfiguration, Table
from games.rules.config import SPECIAL_INFO
from games.rules.errors import ConfigError
from games.rules.hands import CATEGORY_ZH
from games.setup.sheet import RulesSheet, rules_sheet
from games.table.chat import MAX_TEXT_CHARS, PHRASES, REACTIONS
from lobby.models import Room
from lobby.selectors import room_view, seat_view

# The table's sound effects (static/games/sounds/<name>.wav).
SOUNDS = ("gun", "home_run", "deal", "settle")


@login_required
@require_GET
def table(request: HttpRequest, room_id: int) -> HttpResponse:
    """The live table of the room the player sits in; the page itself is static/games/table/,
    driven by the table's WebSocket (docs/protocol.md). Anyone not seated there goes back to
    the lobby, which says why when the table sent the player away from this room."""
    seat = seat_view(user=request.user)
    if seat is None or seat["room"]["id"] != room_id:
        note = sent_away.peek(user_id=request.user.pk)
        if note is None or note["room"] != room_id:
            messages.error(request, _("You are not seated at that table. Join a room first."))
        # else the lobby says why the table sent the player away (and forgets it)
        return redirect("lobby:index")
    return _table_page(request, seat["room"], position=seat["position"])


@login_required
@require_GET
def watch(request: HttpRequest, room_id: int) -> HttpResponse:
    """The same page for a spectator: an open public room that allows watching; its
    socket sends only what is public. A player seated there goes to its own seat instead."""
    seat = seat_view(user=request.user)
    if seat is not None and seat["room"]["id"] == room_id:
        return redirect("games:table", room_id=room_id)
    room = room_view(room_id=room_id, user=request.user)
    watchable = room is not None and room["status"] == "open" and not room["private"]
    if room is None or not watchable or not room["allow_spectators"]:
        messages.error(request, _("That table cannot be watched."))
        return redirect("lobby:index")
    return _table_page(request, room, position=None)


def _gone_names(room: Any) -> dict[str, str]:
    """Position -> name of the last round's players who have left since: the round's
    comparison and settlement, still on screen, name them (two queries, only when it has)."""
    state = Table.objects.filter(room_id=room["id"]).values_list("state", flat=True).first()
    result = (state or {}).get("result") or {}
    seated = {p["position"] for p in room["players"]}
    gone = {
        int(p["id"]): str(p["position"])
        for p in result.get("players", [])
        if p.get("position") not in seated and str(p.get("id", "")).isdigit()
    }
    if not gone:
        return {}
    return {gone[user.pk]: user.display_name() for user in User.objects.filter(pk__in=list(gone))}


def _rules_sheet(room: Any) -> RulesSheet | None:
    """The room's rules as its header's chip shows them (None for rules the engine refuses:
    no room plays them)."""
    rules = RuleConfiguration.objects.filter(pk=room["rules"]["id"]).first()
    if rules is None:
        return None
    try:
        config = rules.engine_config()
    except ConfigError:
        return None
    return rules_sheet(config, name=rules.name, preset=rules.preset, base_score=room["base_score"])


def _table_page(request: HttpRequest, room: Any, *, position: int | None) -> HttpResponse:
    room_id = room["id"]
    # A series (房卡): its rounds, and for its players the scoreboard's link.
    series = Room.objects.filter(pk=room_id).values("series_rounds", "series_token").first() or {}
    series_url = (
        reverse("games:series", args=[series["series_token"]])
        if series.get("series_token") and position is not None
        else None
    )
    balance = wallet_balance(user=request.user)
    ws_url = f"/ws/table/{room_id}/"
    config = {
        "room_id": room_id,
        "ws_url": ws_url,
        # A spectator has no seat: -1, so that no seat is "you".
        "position": -1 if position is None else position,
        "spectator": position is None,
        "series_rounds": series.get("series_rounds"),
        "series_url": series_url,
        "seats": room["seats"],
        "base_score": room["base_score"],
        "balance": balance,
        "player_id": str(request.user.pk),
        # How a fresh hand opens (RULES.md §6): laid out as the first suggestion, or sorted in
        # the hand area (the player's setting on the profile page).
        "opening": "suggested" if getattr(request.user, "default_layout", True) else "sorted",
        "username": request.user.get_username(),
        "names": {str(p["position"]): p["name"] for p in room["players"]},
        "gone_names": _gone_names(room),
        "room_api": reverse("api-lobby-room", args=[room_id]),
        "wallet_api": reverse("api-wallet"),
        "lobby_url": reverse("lobby:index"),
        "sounds": {name: static(f"games/sounds/{name}.wav") for name in SOUNDS},
        # Each name in both languages, and ``name`` in the page's (the one to show).
        "specials": {
            s.id: {"zh": s.zh, "en": s.en, "name": special_name(s.id)} for s in SPECIAL_INFO
        },
        "categories": {
            c.id: {"zh": zh, "en": CATEGORY_EN[c.id], "name": category_name(c.id)}
            for c, zh in CATEGORY_ZH.items()
        },
        "chat": {
            "phrases": {pid: {"zh": zh, "en": en} for pid, (zh, en) in PHRASES.items()},
            "reactions": REACTIONS,
        },
    }
    context = {
        "chat_phrases": [(pid, zh, en) for pid, (zh, en) in PHRASES.items()],
        "chat_reactions": list(REACTIONS.items()),
        "chat_max": MAX_TEXT_CHARS,
        "room": room,
        "position": position,
        "spectator": position is None,
        "series_rounds": series.get("series_rounds"),
        "series_url": series_url,
        "balance": balance,
        "ws_url": ws_url,
        "table_config": config,
        "rules_sheet": _rules_sheet(room),
    }
    return render(request, "games/table.html", context)

"""Player pages: the table, the hand history and the replay of a round (thin: selectors in
games.audit, lobby.selectors and accounts.selectors)."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from accounts.selectors import wallet_balance
from games import audit
from games.models import Round
from games.rules.config import SPECIAL_INFO
from games.rules.hands import CATEGORY_ZH
from games.selectors import rounds_hidden_until_settled
from lobby.selectors import seat_view

# English names of the row categories (the Chinese ones are the engine's).
CATEGORY_EN = {
    "high_card": "High card",
    "pair": "Pair",
    "two_pair": "Two pair",
    "trips": "Trips",
    "straight": "Straight",
    "flush": "Flush",
    "full_house": "Full house",
    "quads": "Quads",
    "straight_flush": "Straight flush",
    "five_of_a_kind": "Five of a kind",
}


@login_required
@require_GET
def table(request: HttpRequest, room_id: int) -> HttpResponse:
    """The live table of the room the player sits in; the page itself is static/games/table.js,
    driven by the table's WebSocket (docs/protocol.md). Anyone not seated there goes back to
    the lobby."""
    seat = seat_view(user=request.user)
    if seat is None or seat["room"]["id"] != room_id:
        messages.error(request, _("You are not seated at that table. Join a room first."))
        return redirect("lobby:index")
    room = seat["room"]
    balance = wallet_balance(user=request.user)
    ws_url = f"/ws/table/{room_id}/"
    config = {
        "room_id": room_id,
        "ws_url": ws_url,
        "position": seat["position"],
        "seats": room["seats"],
        "base_score": room["base_score"],
        "balance": balance,
        "player_id": str(request.user.pk),
        "username": request.user.get_username(),
        "names": {str(p["position"]): p["username"] for p in room["players"]},
        "room_api": reverse("api-lobby-room", args=[room_id]),
        "wallet_api": reverse("api-wallet"),
        "lobby_url": reverse("lobby:index"),
        "specials": {s.id: {"zh": s.zh, "en": s.en} for s in SPECIAL_INFO},
        "categories": {c.id: {"zh": zh, "en": CATEGORY_EN[c.id]} for c, zh in CATEGORY_ZH.items()},
    }
    context = {
        "room": room,
        "position": seat["position"],
        "balance": balance,
        "ws_url": ws_url,
        "table_config": config,
    }
    return render(request, "games/table.html", context)


@login_required
@require_GET
def history(request: HttpRequest) -> HttpResponse:
    """The player's recent rounds, newest first (a round in play first, marked, no hand)."""
    rows = audit.player_rounds(user=request.user)
    return render(request, "games/history.html", {"rows": rows})


@login_required
@require_GET
def replay(request: HttpRequest, round_id: int) -> HttpResponse:
    """A round event by event, as the player's seat saw it (staff: every event, once settled).

    Anyone else gets a 404, so the page does not tell which rounds exist. A round in play is
    replayed to nobody (403 with the reason): its player's live hand is at the table.
    """
    rounds = rounds_hidden_until_settled(rounds=Round.objects.select_related("table__room"))
    round_ = get_object_or_404(rounds, pk=round_id)
    position = audit.round_replay_position(round_=round_, user=request.user)
    staff = request.user.is_staff and request.user.has_perm("games.view_round")
    if position is None and not staff:
        raise Http404
    player = None if position is None else str(request.user.pk)
    try:
        events = audit.round_replay(round_=round_, player=player, everything=position is None)
    except audit.RoundInPlay:
        context = {"round": round_, "position": position, "in_play": True}
        return render(request, "games/replay.html", context, status=403)
    steps = [
        {
            "version": e.version,
            "type": e.type,
            "private": e.audience != "all",
            "payload": json.dumps(e.payload, indent=1, ensure_ascii=False, sort_keys=True),
        }
        for e in events
    ]
    return render(
        request,
        "games/replay.html",
        {"round": round_, "position": position, "steps": steps},
    )

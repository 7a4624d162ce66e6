"""Player pages: the hand history and the replay of a round (thin: selectors in games.audit)."""

from __future__ import annotations

import json

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from django.views.decorators.http import require_GET

from games import audit
from games.models import Round


@login_required
@require_GET
def history(request: HttpRequest) -> HttpResponse:
    """The player's recent rounds, newest first."""
    rows = audit.player_rounds(user=request.user)
    return render(request, "games/history.html", {"rows": rows})


@login_required
@require_GET
def replay(request: HttpRequest, round_id: int) -> HttpResponse:
    """A round event by event, as the player's seat saw it (staff: every event, once settled).

    Anyone else gets a 404, so the page does not tell which rounds exist.
    """
    round_ = get_object_or_404(Round.objects.select_related("table__room"), pk=round_id)
    position = audit.round_replay_position(round_=round_, user=request.user)
    staff = request.user.is_staff and request.user.has_perm("games.view_round")
    if position is None and not staff:
        raise Http404
    events = audit.round_replay(round_=round_, position=position, everything=position is None)
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

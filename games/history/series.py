"""A series' final scoreboard (房卡): a private room opened for N rounds
(``Room.series_rounds``; its table's ``last_round``) and, once they are played, each player's
water and coins per round and in total, the guns fired and suffered, the home runs, and the
best hand (the round it won most water with, and how it was played).

The scoreboard is read through the room's unguessable ``series_token`` (the link the players
share): it shows only what the table showed everyone at each reveal. It shows the rounds
settled so far while the series is played, marked unfinished.
"""

from __future__ import annotations

from typing import Any

from games.labels import data_name
from games.models import Round
from lobby.models import Room


def series_room(token: str) -> Room | None:
    """The series room of a share link's token (None for an unknown token)."""
    if not token or len(token) > 24:
        return None
    return Room.objects.filter(series_token=token).select_related("rules").first()


def series_scoreboard(room: Room) -> dict[str, Any]:
    """The scoreboard as JSON: ``players`` (by total coins, then water) with their ``rounds``
    (water, coins per round, None for a round they did not play), totals, guns, home runs and
    best hand; ``rounds_played`` of ``rounds``; ``finished`` once the last one is settled."""
    assert room.series_rounds is not None
    rounds = list(
        Round.objects.filter(
            table__room=room, number__lte=room.series_rounds, settled_at__isnull=False
        )
        .prefetch_related("players__user")
        .order_by("number")
    )
    players: dict[int, dict[str, Any]] = {}
    for round_ in rounds:
        result = round_.result or {}
        guns = [p for p in result.get("pairs", []) if p.get("gun")]
        for row in round_.players.all():
            me = str(row.user_id)
            entry = players.setdefault(
                row.user_id,
                {
                    "user_id": row.user_id,
                    "player": str(row.user.display_name()),
                    "bot": bool(row.user.is_bot),
                    "rounds": {},
                    "water": 0,
                    "coins": 0,
                    "guns": 0,
                    "shot": 0,
                    "home_runs": 0,
                    "best": None,
                },
            )
            entry["rounds"][round_.number] = {"water": row.water, "coins": row.delta}
            entry["water"] += row.water
            entry["coins"] += row.delta
            entry["guns"] += sum(1 for p in guns if p.get("shooter") == me)
            entry["shot"] += sum(
                1 for p in guns if me in (p.get("a"), p.get("b")) and p.get("shooter") != me
            )
            entry["home_runs"] += result.get("home_run") == me
            best = entry["best"]
            if best is None or row.water > best["water"]:
                entry["best"] = {
                    "round": round_.number,
                    "water": row.water,
                    "special": row.special or None,
                    "arrangement": row.arrangement,
                }
    numbers = list(range(1, room.series_rounds + 1))
    ordered = sorted(players.values(), key=lambda e: (-e["coins"], -e["water"], e["player"]))
    for rank, entry in enumerate(ordered, start=1):
        entry["rank"] = rank
        entry["rounds"] = [entry["rounds"].get(n) for n in numbers]
    played = len(rounds)
    return {
        "room": data_name(room.name),
        "rules": data_name(room.rules.name),
        "base_score": room.base_score,
        "rounds": room.series_rounds,
        "rounds_played": played,
        "finished": played >= room.series_rounds,
        "players": ordered,
    }

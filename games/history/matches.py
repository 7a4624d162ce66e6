"""A duplicate match's results, the results page's and the API's data: for every deal that every
table has settled, each hand (a seat position) with what every table's player at that position
made of it, against the hand's average ("par"); and the standings, by the sum of (water − par).
"""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

from games.labels import data_name
from games.models import DuplicateMatch, Round
from games.table.deck import seed_commitment
from lobby.models import Room


def _name(user: Any) -> str:
    return str(user.display_name())


def _played(row: Any) -> dict[str, Any]:
    """How a round's player played its hand: the rows, or the special."""
    return {
        "special": row.special or None,
        "arrangement": row.arrangement,
        "auto": row.auto or None,
        "escaped": row.escaped,
    }


def _score(value: Fraction) -> float:
    return round(float(value), 2)


def match_results(match: DuplicateMatch) -> dict[str, Any]:
    """The match's results as JSON (see the module's docstring). Only deals every table has
    settled are shown; the seed only once the match is over."""
    rooms = {r.pk: r.match_table for r in Room.objects.filter(match=match)}
    rounds = (
        Round.objects.filter(table__room_id__in=list(rooms))
        .select_related("table")
        .prefetch_related("players__user")
        .order_by("number", "table__room_id")
    )
    by_deal: dict[int, dict[int, Round]] = defaultdict(dict)
    for round_ in rounds:
        by_deal[round_.number][rooms[round_.table.room_id]] = round_
    deals: list[dict[str, Any]] = []
    totals: dict[int, dict[str, Any]] = {}
    for number in sorted(by_deal):
        at = by_deal[number]
        if len(at) != match.tables or any(r.settled_at is None for r in at.values()):
            break  # deals are played in order: the first unsettled one ends what is shown
        hands: dict[int, list[tuple[int, Any]]] = defaultdict(list)
        commitment = ""
        for table_no, round_ in sorted(at.items()):
            commitment = round_.commitment
            for row in round_.players.all():
                hands[row.position].append((table_no, row))
        deal_hands = []
        for position in sorted(hands):
            held = hands[position]
            par = Fraction(sum(row.water for _, row in held), len(held))
            entries = []
            for table_no, row in held:
                diff = row.water - par
                entries.append(
                    {
                        "table": table_no,
                        "player": _name(row.user),
                        "user_id": row.user_id,
                        "bot": bool(row.user.is_bot),
                        "water": row.water,
                        "coins": row.delta,
                        "vs_par": _score(diff),
                        **_played(row),
                    }
                )
                mine = totals.setdefault(
                    row.user_id,
                    {
                        "player": _name(row.user),
                        "user_id": row.user_id,
                        "bot": bool(row.user.is_bot),
                        "tables": [],
                        "deals": 0,
                        "water": 0,
                        "coins": 0,
                        "score": Fraction(0),
                    },
                )
                mine["deals"] += 1
                if table_no not in mine["tables"]:
                    mine["tables"].append(table_no)
                mine["water"] += row.water
                mine["coins"] += row.delta
                mine["score"] += diff
            deal_hands.append(
                {
                    "position": position,
                    "cards": held[0][1].cards.split(),
                    "par": _score(par),
                    "entries": sorted(entries, key=lambda e: (-e["water"], e["table"])),
                }
            )
        deals.append({"deal": number, "commitment": commitment, "hands": deal_hands})
    standings = sorted(totals.values(), key=lambda t: (-t["score"], -t["water"], t["player"]))
    for rank, entry in enumerate(standings, start=1):
        entry["rank"] = rank
        entry["score"] = _score(entry["score"])
    seed = match.seed_revealed
    return {
        "id": match.pk,
        "name": data_name(match.name),
        "status": match.status,
        "tables": match.tables,
        "deals": match.deals,
        "seats": match.seats,
        "base_score": match.base_score,
        "rules": data_name(match.rules.name),
        "rooms": [{"id": pk, "table": no} for pk, no in sorted(rooms.items(), key=lambda i: i[1])],
        "deals_played": len(deals),
        "seed_commitment": match.seed_commitment,
        "seed": seed,
        "seed_verified": None if seed is None else seed_commitment(seed) == match.seed_commitment,
        "results": deals,
        "standings": standings,
    }

"""The replay of a settled round as the table showed it: a selector (reads only).

:func:`round_replay_data` turns what a settled round stores (each player's dealt cards,
arrangement or declared special, the rules snapshot and the stored result) into the steps the
replay page (``static/games/replay.js``) draws: the deal, the arrangements, the comparison row
by row (front, middle, back: who beat whom, water per row, bonuses included), the guns (打枪),
run-overs (辗过) and home run (全垒打), the special hands, and the settlement with each pair's
breakdown (RULES.md §7, §8).

What it shows is what every seat of the table saw by the end of the round: the comparison
reveals every arrangement and special, and the settlement reveals the deck (so every dealt
hand). It never shows what stayed private to one player (suggestions, drafts, a special
offered and declined), the salt or the balances the round was settled with, and it refuses a
round in play (:class:`games.history.audit.RoundInPlay`): before the settlement nobody, staff
included, sees a hand (issue 13). Who may open a replay is the view's business.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from games.history.audit import RoundInPlay
from games.history.selectors import round_in_play
from games.models import Round, RoundPlayer
from games.rules.arrange import special_split
from games.rules.cards import Card, format_cards, parse_cards, sort_cards
from games.rules.config import RuleConfig
from games.rules.errors import RulesError
from games.rules.hands import ROWS, RowHand, evaluate
from games.rules.specials import SPLIT_SPECIALS

Json = dict[str, Any]

# The kinds of steps, in the order a round plays them.
STEP_DEAL = "deal"
STEP_ARRANGE = "arrange"
STEP_ROW = "row"
STEP_GUNS = "guns"
STEP_SPECIALS = "specials"
STEP_SETTLE = "settle"


def round_replay_data(*, round_: Round, viewer: int | None) -> Json:
    """Everything the replay page draws for a settled round, as JSON-able data.

    ``viewer`` is the seat (position) of the player looking, None for staff. Players are given
    by position, with the name other players see; amounts are water (水) and coins as the
    round settled them. Raises :class:`RoundInPlay` for a round not settled yet.
    """
    if round_in_play(round_):
        raise RoundInPlay(round_.pk)
    config = RuleConfig.from_dict(round_.config)
    rows = sorted(round_.players.all(), key=lambda r: r.position)
    result: Json = round_.result or {}
    position_of = {str(r.user_id): r.position for r in rows}
    scored = {position_of.get(str(p.get("id"))): p for p in result.get("players", [])}
    pairs = [_pair(p, position_of) for p in result.get("pairs", [])]

    players = [_player(r, scored.get(r.position, {}), config, viewer) for r in rows]
    normal = [p for p in players if p["rows"] is not None]
    steps: list[Json] = [{"kind": STEP_DEAL}, {"kind": STEP_ARRANGE}]
    if len(normal) >= 2:
        steps += [_row_step(k, normal, config) for k in range(len(ROWS))]
    guns = [_gun(p) for p in pairs if p["gun"] is not None]
    home_run = position_of.get(str(result.get("home_run")))
    if guns:
        steps.append({"kind": STEP_GUNS, "guns": guns, "home_run": home_run})
    specials = [_special(p, pairs) for p in players if p["special"] is not None]
    if specials:
        steps.append({"kind": STEP_SPECIALS, "specials": specials})
    steps.append({"kind": STEP_SETTLE})

    return {
        "round": {
            "id": round_.pk,
            "number": round_.number,
            "settled_at": round_.settled_at.isoformat() if round_.settled_at else None,
        },
        "viewer": viewer,
        "rules": {
            "base_score": result.get("base_score", config.base_score),
            "gun_mode": config.gun_mode,
            "gun_water": config.gun_water,
            "home_run_water": config.home_run_water,
            "run_over_counts_as_gun": config.run_over_counts_as_gun,
        },
        "players": players,
        "steps": steps,
        "settlement": {
            "pairs": pairs,
            "home_run": home_run,
            "cuts": [
                {
                    "from": position_of.get(str(c["from"])),
                    "to": position_of.get(str(c["to"])),
                    "owed": c["owed"],
                    "paid": c["paid"],
                }
                for c in result.get("cuts", [])
            ],
            "transfers": [
                {
                    "from": position_of.get(str(t["from"])),
                    "to": position_of.get(str(t["to"])),  # None: the house
                    "coins": t["coins"],
                    "kind": t.get("kind", "settlement"),
                }
                for t in result.get("transfers", [])
            ],
        },
    }


def _cards(texts: Sequence[str], config: RuleConfig) -> tuple[Card, ...]:
    return parse_cards(list(texts), deck=config.deck)


def _player(
    row: RoundPlayer, scored: Mapping[str, Any], config: RuleConfig, viewer: int | None
) -> Json:
    """One seat: its dealt cards (sorted), its rows with their hands or its special, and what
    it won. ``rows`` is None for a declared special (it is not compared row by row)."""
    dealt = _cards(row.cards.split(), config)
    special = scored.get("special") or row.special or None
    arranged: Json | None = None
    unused: list[str] = []
    split: Json | None = None
    if row.arrangement is not None and special is None:
        arranged = {}
        used: set[Card] = set()
        for name in ROWS:
            cards = _cards(row.arrangement[name], config)
            used.update(cards)
            hand = evaluate(cards, config.a2345)
            arranged[name] = {"cards": format_cards(cards), "category": hand.category.id}
            if hand.jokers:  # what each joker stood for (RULES.md §12.2)
                arranged[name]["jokers"] = {str(j): str(v) for j, v in hand.jokers}
        unused = format_cards(sort_cards(c for c in dealt if c not in used))
    elif special is not None:
        # With spare cards (§12.4) the special was made by the 13 not set aside.
        aside = set(_cards(row.unused.split(), config)) if row.unused else set()
        unused = format_cards(sort_cards(aside))
    if special is not None and special in SPLIT_SPECIALS:
        played = [c for c in dealt if format_cards([c])[0] not in unused]
        try:
            shown = special_split(played, special, config)
        except RulesError:
            shown = None
        if shown is not None:
            split = {
                name: format_cards(cards) for name, cards in zip(ROWS, shown.rows(), strict=True)
            }
    return {
        "position": row.position,
        "name": row.user.display_name(),
        "you": row.position == viewer,
        "cards": format_cards(sort_cards(dealt)),
        "rows": arranged,
        "unused": unused,
        "special": special,
        "special_water": None if special is None else _special_water(config, special),
        "split": split,
        "auto": row.auto or None,
        "escaped": row.escaped,
        "water": scored.get("water", row.water),
        "coins": scored.get("coins", row.delta + row.penalty),
        "penalty": scored.get("penalty", row.penalty),
        "delta": scored.get("delta", row.delta),
    }


def _special_water(config: RuleConfig, special: str) -> int | None:
    try:
        return config.special(special).water
    except RulesError:
        return None


def _row_step(k: int, normal: Sequence[Json], config: RuleConfig) -> Json:
    """Row ``k`` compared between every pair of normally arranged seats (RULES.md §7.1): the
    winner of a pair takes 1 water plus its hand's row bonus, a tie moves nothing."""
    row = ROWS[k]
    hands: dict[int, RowHand] = {
        p["position"]: evaluate(_cards(p["rows"][row]["cards"], config), config.a2345)
        for p in normal
    }
    water = dict.fromkeys(hands, 0)
    duels = []
    positions = sorted(hands)
    for i, a in enumerate(positions):
        for b in positions[i + 1 :]:
            outcome = hands[a].compare(hands[b])
            winner = a if outcome > 0 else b if outcome < 0 else None
            loser = None if winner is None else (b if winner == a else a)
            bonus = 0 if winner is None else config.bonus(row, hands[winner].category)
            amount = 0 if winner is None else 1 + bonus
            if winner is not None and loser is not None:
                water[winner] += amount
                water[loser] -= amount
            duels.append(
                {"a": a, "b": b, "winner": winner, "loser": loser, "water": amount, "bonus": bonus}
            )
    return {
        "kind": STEP_ROW,
        "row": row,
        "water": [{"position": p, "water": w} for p, w in sorted(water.items())],
        "duels": duels,
    }


def _pair(pair: Mapping[str, Any], position_of: Mapping[str, int]) -> Json:
    """A pair of the stored result by positions; ``run_over`` when its gun won no row less
    than all three (a row tied: 辗过, RULES.md §7.2)."""
    gun = pair.get("gun")
    rows = pair.get("rows")
    shooter = position_of.get(str(pair.get("shooter"))) if gun else None
    return {
        "a": position_of[str(pair["a"])],
        "b": position_of[str(pair["b"])],
        "rows": rows,
        "row_water": pair.get("row_water", 0),
        "bonus_water": pair.get("bonus_water", 0),
        "gun": gun,
        "run_over": bool(gun) and rows is not None and 0 in rows,
        "shooter": shooter,
        "gun_water": pair.get("gun_water", 0),
        "special_water": pair.get("special_water", 0),
        "water": pair.get("water", 0),
    }


def _gun(pair: Json) -> Json:
    """A gun as the table announced it: who shot whom, how, and the water it added."""
    shooter = pair["shooter"]
    target = pair["b"] if shooter == pair["a"] else pair["a"]
    return {
        "shooter": shooter,
        "target": target,
        "kind": "run_over" if pair["run_over"] else "gun",
        "home_run": pair["gun"] == "home_run",
        "water": abs(pair["gun_water"]),
    }


def _special(player: Json, pairs: Sequence[Json]) -> Json:
    """A declared special and the water it won (or lost to a higher special) from each
    opponent, from its holder's side (RULES.md §7.3)."""
    me = player["position"]
    against = []
    for pair in pairs:
        if me not in (pair["a"], pair["b"]):
            continue
        sign = 1 if pair["a"] == me else -1
        other = pair["b"] if pair["a"] == me else pair["a"]
        against.append({"position": other, "water": sign * pair["special_water"]})
    return {
        "position": me,
        "special": player["special"],
        "water": player["special_water"],
        "against": sorted(against, key=lambda x: x["position"]),
    }

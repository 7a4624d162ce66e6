"""The engine's JSON interface (ENGINE_CLI.md): requests in, answers out, as plain dicts.

Untrusted JSON is parsed here, once, into engine values; anything malformed raises a
:class:`RulesError` with the contract's error code. The command line (``__main__``) and the
Django side (support's recomputation, round snapshots) both go through these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from . import arrange as engine
from .cards import Card, ensure_distinct, format_cards, parse_cards
from .config import RuleConfig
from .errors import BadInputError, RulesError, WrongCountError
from .hands import RowHand, evaluate
from .scoring import Arranged, Declared, RoundResult, Seat, score_round

Json = dict[str, Any]


def _obj(request: object) -> Mapping[str, Any]:
    if not isinstance(request, Mapping):
        raise BadInputError("a request must be a JSON object")
    return request


def _field(request: Mapping[str, Any], name: str) -> Any:
    if name not in request:
        raise BadInputError(f"missing field {name!r}")
    return request[name]


def _config(request: Mapping[str, Any]) -> RuleConfig:
    return RuleConfig.from_dict(request.get("config"))


def compare(request: object) -> Json:
    req = _obj(request)
    cfg = _config(req)
    raw_a, raw_b = _field(req, "a"), _field(req, "b")
    for name, raw in (("a", raw_a), ("b", raw_b)):
        if isinstance(raw, list) and len(raw) not in (3, 5):
            raise WrongCountError(f"{name} must have 3 or 5 cards, got {len(raw)}")
    a = parse_cards(raw_a, what="a", deck=cfg.deck)
    b = parse_cards(raw_b, what="b", deck=cfg.deck)
    if cfg.is_classic_deck:
        ensure_distinct(a + b)
    # With the variant decks the two rows are checked each on its own (ENGINE_CLI.md).
    ha, hb = evaluate(a, cfg.a2345), evaluate(b, cfg.a2345)
    return {"a": _row_json(ha), "b": _row_json(hb), "result": ha.compare(hb)}


def _row_json(hand: RowHand) -> Json:
    out: Json = {"category": hand.category.id}
    if hand.jokers:
        out["jokers"] = {str(joker): str(value) for joker, value in hand.jokers}
    return out


def _rows_json(arranged: Arranged) -> Json:
    return {
        "front": format_cards(arranged.front),
        "middle": format_cards(arranged.middle),
        "back": format_cards(arranged.back),
    }


def special(request: object) -> Json:
    req = _obj(request)
    cfg = _config(req)
    cards = parse_cards(_field(req, "cards"), count=cfg.hand_size, what="cards", deck=cfg.deck)
    found = engine.special_with_split(cards, cfg)
    answer: Json = {"special": None, "water": None, "split": None}
    if cfg.spare_cards:
        answer["unused"] = None
    if found is None:
        return answer
    answer["special"] = found.special
    answer["water"] = cfg.special(found.special).water
    answer["split"] = None if found.split is None else _rows_json(found.split)
    if cfg.spare_cards:
        answer["unused"] = format_cards(found.unused)
    return answer


def arrange(request: object) -> Json:
    req = _obj(request)
    cfg = _config(req)
    cards = parse_cards(_field(req, "cards"), count=cfg.hand_size, what="cards", deck=cfg.deck)
    limit = req.get("limit", 10)
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 10:
        raise BadInputError("limit must be a whole number from 1 to 10")
    result = engine.arrange(cards, cfg, limit=limit)
    suggestions = []
    for s in result.suggestions:
        item: Json = {
            **_rows_json(s.arranged()),
            "categories": [c.id for c in s.categories],
            "expected_water": s.expected_water,
        }
        if cfg.spare_cards:
            item["unused"] = format_cards(s.unused)
        jokers = jokers_json(s.arranged(), cfg)
        if jokers:
            item["jokers"] = jokers
        suggestions.append(item)
    keys = ("front", "middle", "back", "unused") if cfg.spare_cards else ("front", "middle", "back")
    best = {k: suggestions[0][k] for k in keys}
    return {"best": best, "suggestions": suggestions, "special": result.special}


def jokers_json(arranged: Arranged, cfg: RuleConfig) -> dict[str, str]:
    """What each joker stands for in its row (for the UI, RULES.md §12.2); {} without."""
    out: dict[str, str] = {}
    if not cfg.jokers:
        return out
    for row in arranged.rows():
        if any(c.is_joker for c in row):
            for joker, value in evaluate(row, cfg.a2345).jokers:
                out[str(joker)] = str(value)
    return out


def parse_seat(item: object, position: int, config: RuleConfig | None = None) -> Seat:
    """One player of a ``score`` request (cards checked against ``config``'s deck)."""
    cfg = config or RuleConfig()
    deck = cfg.deck
    p = _obj(item)
    pid = p.get("id", str(position))
    if isinstance(pid, bool) or not isinstance(pid, str | int):
        raise BadInputError(f"player {position}: id must be a string or a number")
    pid = str(pid)
    has_rows = any(k in p for k in ("front", "middle", "back"))
    has_special = "special" in p or "cards" in p
    hand: Arranged | Declared
    if has_rows and has_special:
        raise BadInputError(f"player {pid}: give either front/middle/back or special/cards")
    if has_special:
        sid = _field(p, "special")
        if not isinstance(sid, str):
            raise BadInputError(f"player {pid}: special must be a special hand id")
        hand = Declared(
            sid, parse_cards(_field(p, "cards"), count=13, what=f"player {pid} cards", deck=deck)
        )
    elif has_rows:
        hand = Arranged(
            parse_cards(_field(p, "front"), count=3, what=f"player {pid} front", deck=deck),
            parse_cards(_field(p, "middle"), count=5, what=f"player {pid} middle", deck=deck),
            parse_cards(_field(p, "back"), count=5, what=f"player {pid} back", deck=deck),
        )
    else:
        raise BadInputError(f"player {pid}: needs front/middle/back or special/cards")
    unused: tuple[Card, ...] = ()
    if "unused" in p:
        if not cfg.spare_cards:
            raise BadInputError(f"player {pid}: unused cards exist only with spare_cards 3")
        unused = parse_cards(
            p["unused"], count=cfg.spare_cards, what=f"player {pid} unused", deck=deck
        )
    balance = p.get("balance")
    if balance is not None and (isinstance(balance, bool) or not isinstance(balance, int)):
        raise BadInputError(f"player {pid}: balance must be a whole number")
    escaped = p.get("escaped", False)
    if not isinstance(escaped, bool):
        raise BadInputError(f"player {pid}: escaped must be true or false")
    return Seat(pid, hand, balance, escaped, unused)


def score(request: object) -> Json:
    req = _obj(request)
    cfg = _config(req)
    players = _field(req, "players")
    if not isinstance(players, list):
        raise BadInputError("players must be a list")
    if not 2 <= len(players) <= cfg.max_seats:
        raise WrongCountError(
            f"a round has 2 to {cfg.max_seats} players with this deck, got {len(players)}"
        )
    seats = [parse_seat(p, i, cfg) for i, p in enumerate(players)]
    return result_json(score_round(seats, cfg))


def result_json(result: RoundResult) -> Json:
    """The ``score`` answer for a scored round (also what a round stores for audit)."""
    ids = [s.id for s in result.seats]
    st = result.settlement
    players = [
        {
            "id": ids[i],
            "special": result.specials[i],
            "escaped": result.seats[i].escaped,
            "water": result.water[i],
            "coins": result.coins[i],
            "penalty": st.penalties[i],
            "delta": st.deltas[i],
        }
        for i in range(len(ids))
    ]
    pairs = [
        {
            "a": ids[p.a],
            "b": ids[p.b],
            "rows": None if p.rows is None else list(p.rows),
            "gun": p.gun,
            "shooter": None if p.shooter is None else ids[p.shooter],
            "row_water": p.row_water,
            "bonus_water": p.bonus_water,
            "gun_water": p.gun_water,
            "special_water": p.special_water,
            "water": p.water,
        }
        for p in result.pairs
    ]
    return {
        "players": players,
        "pairs": pairs,
        "transfers": [
            {"from": ids[t.src], "to": ids[t.dst], "coins": t.coins, "kind": t.kind}
            for t in st.transfers
        ],
        "cuts": [
            {"from": ids[c.src], "to": ids[c.dst], "owed": c.owed, "paid": c.paid} for c in st.cuts
        ],
        "home_run": None if result.home_run is None else ids[result.home_run],
        "base_score": result.base_score,
    }


COMMANDS: dict[str, Callable[[object], Json]] = {
    "compare": compare,
    "special": special,
    "arrange": arrange,
    "score": score,
}


def error_json(exc: RulesError) -> Json:
    return {"error": {"code": exc.code, "message": exc.message}}


def handle(command: str, request: object) -> Json:
    """Answer one request or a batch; a bad request inside a batch answers an error in place."""
    handler = COMMANDS[command]
    if isinstance(request, Mapping) and "batch" in request:
        extra = sorted(k for k in request if k != "batch")
        if extra:
            raise BadInputError(f"a batch holds only 'batch'; put {extra[0]!r} inside each request")
        items = request["batch"]
        if not isinstance(items, list):
            raise BadInputError("batch must be a list of requests")
        answers: list[Json] = []
        for item in items:
            try:
                answers.append(handler(item))
            except RulesError as exc:
                answers.append(error_json(exc))
        return {"batch": answers}
    return handler(request)

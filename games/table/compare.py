"""The comparison (RULES.md §8.5) as a paced script of events, and the round's scoring.

When every hand is in, the machine emits the whole comparison at once (:func:`script`): rows
front, middle, back, then the guns and the home run, then the declared specials. Each event
carries ``offset_ms``, when the client should show it (``reveal_interval_ms`` apart). Only
seats that arranged normally take part in rows and guns. :func:`score` scores the round with
the engine, and :func:`result_payload` is its result as stored and sent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from games.rules.api import jokers_json, result_json
from games.rules.arrange import special_split
from games.rules.cards import format_cards, sort_cards
from games.rules.config import RuleConfig
from games.rules.hands import ROWS, RowHand, evaluate
from games.rules.scoring import Arranged, Declared, RoundResult, Seat, row_water, score_round
from games.rules.specials import SPLIT_SPECIALS

from .state import Json, SeatState, arranged_json


def scoring_seats(
    seats: Sequence[SeatState], balances: Mapping[str, int] | None = None
) -> list[Seat]:
    """The engine's view of the round's seats (position order): hands, balances, escapes."""
    out = []
    for s in seats:
        assert s.hand is not None
        hand: Arranged | Declared
        if s.declared:
            assert s.special is not None and s.played_cards is not None
            hand = Declared(s.special, s.played_cards)
        else:
            assert s.arrangement is not None
            hand = s.arrangement
        balance = None if balances is None else balances[s.player]
        out.append(Seat(s.player, hand, balance, s.escaped, s.unused))
    return out


def score(
    seats: Sequence[SeatState], config: RuleConfig, balances: Mapping[str, int] | None = None
) -> RoundResult:
    return score_round(scoring_seats(seats, balances), config)


def result_payload(seats: Sequence[SeatState], result: RoundResult) -> Json:
    """``api.result_json`` with each player's position added (and, with spare cards, the
    cards it set aside: ``unused``)."""
    data = result_json(result)
    for player, seat in zip(data["players"], seats, strict=True):
        player["position"] = seat.position
        if seat.hand is not None and len(seat.hand) > 13:
            player["unused"] = format_cards(seat.unused)
    return data


def compare_order(keys: Mapping[int, int]) -> list[int]:
    """Reveal order of one row: from the smallest hand (ties: lower position), then by
    increasing position (counter-clockwise), wrapping round."""
    positions = sorted(keys)
    first = min(positions, key=lambda p: (keys[p], p))
    i = positions.index(first)
    return positions[i:] + positions[:i]


def revealed_hand(seat: SeatState, config: RuleConfig) -> Json:
    """A seat's hand as everyone sees it once revealed."""
    assert seat.hand is not None
    extra: Json = {}
    if config.spare_cards:
        extra["unused"] = format_cards(seat.unused)
    if seat.declared:
        assert seat.special is not None and seat.played_cards is not None
        split = None
        jokers: dict[str, str] = {}
        if seat.special in SPLIT_SPECIALS:
            shown = special_split(seat.played_cards, seat.special, config)
            split = None if shown is None else arranged_json(shown)
            jokers = {} if shown is None else jokers_json(shown, config)
        if jokers:
            extra["jokers"] = jokers
        return {
            "special": seat.special,
            "cards": format_cards(sort_cards(seat.played_cards)),
            "split": split,
            "water": config.special(seat.special).water,
            **extra,
        }
    assert seat.arrangement is not None
    jokers = jokers_json(seat.arrangement, config)
    if jokers:
        extra["jokers"] = jokers
    return {"special": None, **arranged_json(seat.arrangement), **extra}


def script(
    seats: Sequence[SeatState], config: RuleConfig, result: RoundResult
) -> tuple[list[tuple[str, Json]], int]:
    """The comparison's events (type, payload) in order, and its length in ms.

    1. Rows front, middle, back. ``sequential``: within a row one ``reveal`` per hand, in
       :func:`compare_order`. ``simultaneous``: one ``reveal`` per row with every hand. After
       a row's reveals, a ``row_result`` (same offset as the last reveal) gives each seat's
       water for that row, bonuses included, guns not. With spare cards a ``reveal_unused``
       (at the back row's result) shows every normal hand's 3 set-aside cards.
    2. ``gun`` for each gun or run-over (kind ``gun``, or ``home_run`` when it is part of a
       home run), then ``home_run`` when there is one: the client's animation and its score
       line.
    3. ``reveal_special`` for each declared special hand, in position order (after the normal
       comparison, [S1]), its set-aside cards included.

    With the variant decks (RULES.md §12) a revealed row names what its jokers stand for
    (``jokers``). Each paced step lasts ``reveal_interval_ms``; a gun's and a home run's
    full-screen effect (``effect_ms``, 1.5 and 3 reveal intervals) is played out before the
    next event, so the comparison — and the settlement that follows it — never cuts one
    short."""
    interval = config.reveal_interval_ms
    gun_effect = interval * 3 // 2
    home_run_effect = interval * 3
    normal = [s for s in seats if not s.declared]
    rows: dict[int, tuple[RowHand, RowHand, RowHand]] = {}
    for s in normal:
        assert s.arrangement is not None
        front, middle, back = (evaluate(r, config.a2345) for r in s.arrangement.rows())
        rows[s.position] = (front, middle, back)
    by_position = {s.position: s for s in seats}
    out: list[tuple[str, Json]] = []
    step = 0

    def hand(position: int, k: int) -> Json:
        arranged = by_position[position].arrangement
        assert arranged is not None
        shown: Json = {
            "position": position,
            "cards": format_cards(arranged.rows()[k]),
            "category": rows[position][k].category.id,
        }
        if rows[position][k].jokers:
            shown["jokers"] = {str(j): str(v) for j, v in rows[position][k].jokers}
        return shown

    for k, row in enumerate(ROWS):
        if not normal:
            break
        keys = {p: r[k].key for p, r in rows.items()}
        if config.compare_mode == "sequential":
            for p in compare_order(keys):
                out.append(
                    ("reveal", {"row": row, "offset_ms": step * interval, "hands": [hand(p, k)]})
                )
                step += 1
        else:
            hands = [hand(p, k) for p in sorted(rows)]
            out.append(("reveal", {"row": row, "offset_ms": step * interval, "hands": hands}))
            step += 1
        water, versus = _row_result(rows, k, row, config)
        payload = {"row": row, "offset_ms": (step - 1) * interval, "water": water, "versus": versus}
        out.append(("row_result", payload))
    if config.spare_cards and normal:
        hands = [{"position": s.position, "cards": format_cards(s.unused)} for s in normal]
        out.append(("reveal_unused", {"offset_ms": (step - 1) * interval, "hands": hands}))

    position_of = [s.position for s in seats]
    at = step * interval  # the next event's offset (ms)
    for pair in result.pairs:
        if pair.gun is None or pair.shooter is None:
            continue
        target = pair.b if pair.shooter == pair.a else pair.a
        # A run-over (辗过) is a gun won with a tied row (§7.2): named so, scored the same.
        run_over = pair.rows is not None and 0 in pair.rows
        effect = gun_effect if pair.gun == "gun" else 0  # a home run has its own effect
        out.append(
            (
                "gun",
                {
                    "offset_ms": at,
                    "shooter": position_of[pair.shooter],
                    "target": position_of[target],
                    "kind": pair.gun,
                    "run_over": run_over,
                    "water": abs(pair.gun_water),
                    "effect_ms": effect,
                },
            )
        )
        at += max(interval, effect)
    if result.home_run is not None:
        shooter = position_of[result.home_run]
        payload = {"offset_ms": at, "shooter": shooter, "effect_ms": home_run_effect}
        out.append(("home_run", payload))
        at += max(interval, home_run_effect)
    for s in seats:
        if s.declared:
            payload = {"offset_ms": at, "position": s.position}
            out.append(("reveal_special", {**payload, **revealed_hand(s, config)}))
            at += interval
    return out, at


def _row_result(
    rows: Mapping[int, tuple[RowHand, RowHand, RowHand]], k: int, row: str, config: RuleConfig
) -> tuple[list[Json], list[Json]]:
    """Each normal seat's water from row ``k`` against every opponent (the engine's
    :func:`~games.rules.scoring.row_water`), and head to head each pair's water (``a`` < ``b``)
    from ``a``'s side."""
    water = dict.fromkeys(rows, 0)
    versus: list[Json] = []
    for a in rows:
        for b in rows:
            if a < b:
                gained = row_water(row, rows[a][k], rows[b][k], config)
                water[a] += gained
                water[b] -= gained
                versus.append({"a": a, "b": b, "water": gained})
    return [{"position": p, "water": w} for p, w in sorted(water.items())], versus

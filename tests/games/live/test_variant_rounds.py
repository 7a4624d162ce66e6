"""Whole rounds of every rule preset (RULES.md §12.6) over the table's WebSocket, with as many
players as the preset's deck seats (5 for 多一色, 6 with two extra suits, 4 for 多三张 on 65
cards), checked against the engine: the deal is the committed deck, the coins each player
gets are the engine's score of the stored hands, the ledger moved exactly that, and support's
recomputation (``games.history.audit.round_verify``) finds nothing to say.

Also the variant messages: submitting 13 of 16 cards with the 3 set aside, ``suggest`` for the
13 kept after a swap, and their refusals (each changes nothing).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from channels.db import database_sync_to_async

from accounts.models import User
from games.history.audit import round_verify
from games.history.replay import round_replay_data
from games.live import deal as table_deal
from games.models import Round, RuleConfiguration
from games.rules.api import score
from games.rules.cards import parse_cards
from games.rules.config import RuleConfig
from games.rules.presets import PRESETS
from games.table.deck import verify_commitment
from games.table.state import Phase
from lobby.models import Room
from lobby.services import room_create, room_join
from tests.games.live import test_consumers as tc
from tests.games.live.test_consumers import Clock, Socket, balances, state_of, strings, timeout
from tests.games.live.test_consumers_rounds import ready_and_deal as deal
from tests.games.live.test_consumers_rounds import settlement_moves

clock = tc.clock
sockets = tc.sockets
pytestmark = tc.pytestmark

NAMES = ["alice", "bob", "carol", "dave", "erin", "frank"]
# Every preset, and the 78-card deck of two extra suits (6 players), which no preset uses.
DECKS: dict[str, RuleConfig] = {p.id: p.config for p in PRESETS.values()}
DECKS["two_extra_suits"] = RuleConfig(extra_suits=2)


@database_sync_to_async
def variant_room(config: RuleConfig, players: int, tag: str = "") -> tuple[Room, list[User]]:
    users = [tc.make_player(name + tag) for name in NAMES[:players]]
    rules = RuleConfiguration.from_engine(config, name=f"variant {uuid.uuid4().hex[:12]}")
    room = room_create(owner=users[0], name="Variant", base_score=1, seats=players, rules=rules)
    for user in users[1:]:
        room_join(user=user, room_id=room.pk)
    return room, users


@database_sync_to_async
def the_round(room: Room) -> tuple[Round, list[Any]]:
    round_ = Round.objects.get(table__room=room, number=1)
    return round_, list(round_.players.order_by("position"))


@database_sync_to_async
def verify(round_: Round) -> Any:
    return round_verify(round_=Round.objects.get(pk=round_.pk))


@database_sync_to_async
def replay(round_: Round) -> Any:
    return round_replay_data(round_=Round.objects.get(pk=round_.pk), viewer=None)


def without_jokers(value: Any) -> Any:
    """``value`` without its ``jokers`` maps (a joker's value is any card, held or not)."""
    if isinstance(value, dict):
        return {k: without_jokers(v) for k, v in value.items() if k != "jokers"}
    if isinstance(value, list):
        return [without_jokers(v) for v in value]
    return value


def swapped(hand: dict[str, Any]) -> list[str]:
    """13 cards to keep of 16: the first suggestion's, one swapped with a set-aside card."""
    best = hand["suggestions"][0]
    kept = best["front"] + best["middle"] + best["back"]
    return [best["unused"][0], *kept[1:]]


async def play_round(
    key: str, clock: Clock, sockets: Callable[..., Any]
) -> tuple[RuleConfig, Room, list[User], dict[User, Socket], dict[User, dict[str, Any]]]:
    config = DECKS[key]
    room, users = await variant_room(config, config.max_seats)
    socks = {u: await sockets(u, room) for u in users}
    before = await balances(users)
    hands = await deal(socks)

    deck = config.deck
    dealt = [c for hand in hands.values() for c in hand["cards"]]
    assert len(dealt) == len(set(dealt)) == config.hand_size * len(users)
    assert set(parse_cards(dealt, deck=deck)) <= set(deck.cards)
    for hand in hands.values():
        assert len(hand["cards"]) == len(hand["offsets_ms"]) == config.hand_size
        for suggestion in hand["suggestions"]:
            assert ("unused" in suggestion) == bool(config.spare_cards)

    await timeout(room, clock, "dealing")
    state = await state_of(room)
    declared = set()
    for user, socket in socks.items():
        seat = state.seat_of(str(user.pk))
        if seat.choosing:  # play the special at even positions, refuse it at odd ones
            play = seat.position % 2 == 0
            reply = await socket.request(
                {"type": "choose_special", "id": "c", "play_special": play}
            )
            assert reply["type"] == "ok", reply
            if play:
                declared.add(user)
    for index, (user, socket) in enumerate(socks.items()):
        if user in declared:
            continue
        best = hands[user]["suggestions"][0]
        rows = {row: best[row] for row in ("front", "middle", "back")}
        if config.spare_cards and index == 0:
            # The first player swaps a spare card in and plays the suggestion for its 13.
            kept = swapped(hands[user])
            reply = await socket.request({"type": "suggest", "id": "sg", "cards": kept})
            assert reply["type"] == "suggestions", reply
            assert reply["cards"] == kept
            first = reply["suggestions"][0]
            assert sorted(first["front"] + first["middle"] + first["back"]) == sorted(kept)
            rows = {row: first[row] for row in ("front", "middle", "back")}
            rows["unused"] = first["unused"]
        elif config.spare_cards:
            rows["unused"] = best["unused"]
        reply = await socket.request({"type": "submit", "id": f"s-{user.pk}", **rows})
        assert reply == {"type": "ok", "id": f"s-{user.pk}", "action": "submit"}, reply
        mine = (await socket.event("arrangement"))["payload"]
        assert [mine[r] for r in ("front", "middle", "back")] == [
            rows[r] for r in ("front", "middle", "back")
        ]
        if config.spare_cards:
            assert sorted(mine["unused"]) == sorted(
                set(hands[user]["cards"])
                - {c for r in ("front", "middle", "back") for c in rows[r]}
            )
        in_rows = [c for r in ("front", "middle", "back") for c in rows[r]]
        assert ("jokers" in mine) == any(c in ("RJ", "BJ") for c in in_rows)

    assert (await state_of(room)).phase is Phase.COMPARING
    await timeout(room, clock, "comparing")
    settled = [(await s.event("settled"))["payload"] for s in socks.values()]
    # Nobody saw another seat's card before the comparison started (the frames each socket
    # received, to the letter); what a joker stands for may name any card, so it is left out.
    every = {c for hand in hands.values() for c in hand["cards"]}
    for user, socket in socks.items():
        mine = set(hands[user]["cards"])
        for event in socket.frames_events():
            if event["type"] == "phase" and event["payload"]["phase"] == "comparing":
                break
            seen = {text for text in strings(without_jokers(event["payload"])) if text in every}
            assert seen <= mine, (event["type"], sorted(seen - mine))
    assert all(payload == settled[0] for payload in settled)
    payload = settled[0]

    # The deal was the committed deck: the whole configured deck, copies and jokers by name.
    revealed = parse_cards(payload["deck"], deck=deck)
    assert len(revealed) == deck.size and set(revealed) == set(deck.cards)
    assert verify_commitment(revealed, payload["salt"], payload["commitment"])

    # Coins: the engine's score of the stored hands, moved once on the ledger.
    round_, rows_ = await the_round(room)
    request = {
        "config": round_.config,
        "players": [
            {
                "id": str(r.user_id),
                **(
                    r.arrangement
                    if r.arrangement is not None
                    else {
                        "special": r.special,
                        "cards": [c for c in r.cards.split() if c not in r.unused.split()],
                    }
                ),
                **({"unused": r.unused.split()} if r.unused else {}),
                "balance": round_.balances[str(r.user_id)],
            }
            for r in rows_
        ],
    }
    engine = score(request)
    by_id = {p["id"]: p for p in engine["players"]}
    result = {p["id"]: p for p in payload["result"]["players"]}
    for pid, p in by_id.items():
        assert (result[pid]["delta"], result[pid]["water"]) == (p["delta"], p["water"])
        if config.spare_cards:
            assert len(result[pid]["unused"]) == 3
    assert payload["result"]["pairs"] == engine["pairs"]
    deltas = {int(pid): p["delta"] for pid, p in by_id.items()}
    after = await balances(users)
    assert {pk: after[pk] - before[pk] for pk in after} == deltas
    moved = await settlement_moves(room, 1)
    assert {pk: moved.get(pk, 0) for pk in deltas} == deltas
    assert sum(deltas.values()) == 0

    report = await verify(round_)
    assert report.mismatches == [] and report.commitment_ok is True
    shown = await replay(round_)
    assert len(shown["snapshot"]["seats"]) == len(users)
    # The replay reveals the set-aside cards and the jokers' values, as the table did.
    events = [(e["type"], e["payload"]) for e in shown["events"]]
    aside = [h["cards"] for kind, p in events if kind == "reveal_unused" for h in p["hands"]]
    aside += [p["unused"] for kind, p in events if kind == "reveal_special" and "unused" in p]
    assert [len(cards) for cards in aside] == ([3] * len(users) if config.spare_cards else [])
    for row in (h for kind, p in events if kind == "reveal" for h in p["hands"]):
        assert ("jokers" in row) == any(c in ("RJ", "BJ") for c in row["cards"])
    return config, room, users, socks, hands


@pytest.mark.parametrize("key", sorted(DECKS))
async def test_a_round_of_each_preset_over_websockets(
    key: str, clock: Clock, sockets: Callable[..., Any]
) -> None:
    config, room, users, socks, hands = await play_round(key, clock, sockets)
    events = [e for e in next(iter(socks.values())).frames_events()]
    reveals = [h for e in events if e["type"] == "reveal" for h in e["payload"]["hands"]]
    for hand in reveals:
        has_joker = any(c in ("RJ", "BJ") for c in hand["cards"])
        assert ("jokers" in hand) == has_joker
        if has_joker:
            assert set(hand["jokers"]) == {c for c in hand["cards"] if c in ("RJ", "BJ")}
    unused = [e for e in events if e["type"] == "reveal_unused"]
    assert len(unused) == (1 if config.spare_cards and reveals else 0)
    assert (await state_of(room)).phase is Phase.SETTLED


class Rigged(random.Random):
    """A seeded shuffle dealing ``cards`` to the first seat in dealing order."""

    def __init__(self, seed: int, players: int, cards: list[Any]) -> None:
        super().__init__(seed)
        self.players, self.cards = players, cards

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        super().shuffle(x)
        rest = [card for card in x if card not in self.cards]
        slots = {k * self.players: card for k, card in enumerate(self.cards)}
        x[:] = [slots[i] if i in slots else rest.pop(0) for i in range(len(x))]


async def test_a_special_made_by_13_of_16_sets_the_other_3_aside(
    monkeypatch: pytest.MonkeyPatch, clock: Clock, sockets: Callable[..., Any]
) -> None:
    # Six pairs among 16 cards: the special names which 3 it sets aside (RULES.md §12.4).
    sixteen = [
        "2C",
        "2D",
        "4C",
        "4D",
        "6C",
        "6D",
        "8C",
        "8D",
        "TC",
        "TD",
        "QC",
        "QD",
        "KS",
        "3H",
        "5S",
        "7H",
    ]
    config = PRESETS["duosanzhang"].config
    monkeypatch.setattr(
        table_deal.secrets,
        "SystemRandom",
        lambda: Rigged(tc.SEED, 3, parse_cards(sixteen, deck=config.deck)),
    )
    room, users = await variant_room(config, 3)
    socks = {u: await sockets(u, room) for u in users}
    hands = await deal(socks)
    holder = next(u for u, h in hands.items() if set(h["cards"]) == set(sixteen))
    hand = hands[holder]
    assert hand["special"] == "six_pairs"
    aside = hand["special_unused"]
    assert len(aside) == 3 and set(aside) < set(sixteen)
    await timeout(room, clock, "dealing")
    reply = await socks[holder].request({"type": "choose_special", "id": "y", "play_special": True})
    assert reply["type"] == "ok"
    state = await state_of(room)
    for user, socket in socks.items():
        if user is holder or state.seat_of(str(user.pk)).done:
            continue
        if state.seat_of(str(user.pk)).choosing:
            await socket.request({"type": "choose_special", "id": "n", "play_special": False})
        best = hands[user]["suggestions"][0]
        rows = {r: best[r] for r in ("front", "middle", "back")}
        assert (await socket.request({"type": "submit", "id": "s", **rows}))["type"] == "ok"
    await timeout(room, clock, "comparing")
    settled = (await socks[holder].event("settled"))["payload"]
    me = next(p for p in settled["result"]["players"] if p["id"] == str(holder.pk))
    assert me["special"] == "six_pairs" and sorted(me["unused"]) == sorted(aside)
    special = next(e for e in socks[holder].frames_events() if e["type"] == "reveal_special")
    assert sorted(special["payload"]["unused"]) == sorted(aside)
    assert len(special["payload"]["cards"]) == 13
    round_, rows_ = await the_round(room)
    stored = next(r for r in rows_ if r.user_id == holder.pk)
    assert sorted(stored.unused.split()) == sorted(aside)
    report = await verify(round_)
    assert report.mismatches == []


# -- refusals: each answers an error and changes nothing --------------------------------------


async def spare_table(
    clock: Clock, sockets: Callable[..., Any], key: str = "duosanzhang"
) -> tuple[Room, list[User], dict[User, Socket], dict[User, dict[str, Any]]]:
    config = DECKS[key]
    room, users = await variant_room(config, 2, tag=key)
    socks = {u: await sockets(u, room) for u in users}
    hands = await deal(socks)
    await timeout(room, clock, "dealing")
    state = await state_of(room)
    for user, socket in socks.items():
        if state.seat_of(str(user.pk)).choosing:
            await socket.request({"type": "choose_special", "id": "n", "play_special": False})
    return room, users, socks, hands


async def test_suggest_and_submit_refusals_change_nothing(
    clock: Clock, sockets: Callable[..., Any], settings: Any
) -> None:
    # Refused requests count against the budget too; this test sends many on purpose.
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "table.suggest": "100/second"}
    room, users, socks, hands = await spare_table(clock, sockets)
    me, other = users
    sock = socks[me]
    mine = hands[me]["cards"]
    theirs = hands[other]["cards"]
    before = await state_of(room)
    bad = [
        ("short", mine[:12], "wrong_count"),
        ("foreign", [theirs[0], *mine[1:13]], "not_your_cards"),
        ("twice", [mine[0], *mine[:12]], "bad_cards"),  # "card … appears twice"
        ("unknown", ["ZZ", *mine[1:13]], "bad_cards"),
    ]
    for id_, cards, code in bad:
        reply = await sock.request({"type": "suggest", "id": id_, "cards": cards})
        assert reply["type"] == "error" and reply["error"]["code"] == code, reply
    reply = await sock.request({"type": "suggest", "id": "shape", "cards": "AS KS"})
    assert reply["error"]["code"] == "bad_field"

    best = hands[me]["suggestions"][0]
    rows = {r: best[r] for r in ("front", "middle", "back")}
    wrong = [c for c in mine if c not in best["unused"]][:3]
    reply = await sock.request({"type": "submit", "id": "w", **rows, "unused": wrong})
    assert reply["error"]["code"] == "wrong_unused", reply
    reply = await sock.request({"type": "submit", "id": "w2", **rows, "unused": "x"})
    assert reply["error"]["code"] == "bad_field", reply
    # 13 cards of 16 that are not the seat's own (another's card in a row).
    foreign = {**rows, "front": [theirs[0], *rows["front"][1:]]}
    reply = await sock.request({"type": "submit", "id": "f", **foreign})
    assert reply["error"]["code"] == "not_your_cards", reply
    after = await state_of(room)
    assert after.to_dict() == before.to_dict()

    # Once submitted, nothing is left to suggest.
    reply = await sock.request({"type": "submit", "id": "ok", **rows})
    assert reply["type"] == "ok"
    reply = await sock.request({"type": "suggest", "id": "late", "cards": swapped(hands[me])})
    assert reply["error"]["code"] == "already_submitted"


async def test_suggest_is_only_for_spare_cards_and_is_rate_limited(
    clock: Clock, sockets: Callable[..., Any], settings: Any
) -> None:
    room, users, socks, hands = await spare_table(clock, sockets, key="laizi")
    sock = socks[users[0]]
    reply = await sock.request({"type": "suggest", "id": "x", "cards": hands[users[0]]["cards"]})
    assert reply["error"]["code"] == "no_spare_cards"
    reply = await sock.request(
        {"type": "submit", "id": "u", **_rows(hands[users[0]]), "unused": ["AS", "KS", "QS"]}
    )
    assert reply["error"]["code"] == "no_spare_cards"

    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "table.suggest": "2/minute"}
    room, users, socks, hands = await spare_table(clock, sockets)
    sock = socks[users[0]]
    kept = swapped(hands[users[0]])
    for i in range(2):
        reply = await sock.request({"type": "suggest", "id": f"r{i}", "cards": kept})
        assert reply["type"] == "suggestions"
    reply = await sock.request({"type": "suggest", "id": "r3", "cards": kept})
    assert reply["error"]["code"] == "rate_limited"


def _rows(hand: dict[str, Any]) -> dict[str, list[str]]:
    best = hand["suggestions"][0]
    return {r: best[r] for r in ("front", "middle", "back")}

"""Whole rounds over the table's WebSocket: four players, a special hand declared or refused,
and a frame-level scan for leaked cards over many random rounds.

Built on the fixtures and helpers of ``test_consumers`` (the real ASGI stack and channel
layer, the services' clock moved to each deadline, the timers recorded and never run, a seeded
shuffle). Where a test needs a special hand, the shuffle is rigged so that the first seat in
dealing order is dealt six pairs.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from typing import Any

from channels.db import database_sync_to_async

from accounts.models import Entry, Transaction, TransactionKind, User
from games.live import deal as table_deal
from games.models import Round, RoundPlayer
from games.rules.cards import parse_cards
from games.table.state import Phase
from lobby.models import Room
from tests.games.live import test_consumers as tc
from tests.games.live.test_consumers import (
    Clock,
    Socket,
    balances,
    best_rows,
    make_room,
    state_of,
    strings,
    timeout,
)

# The fixtures of test_consumers, used here too (``clock`` is autouse).
clock = tc.clock
sockets = tc.sockets

pytestmark = tc.pytestmark

ACTION_IDS = itertools.count()  # fresh ids: a reused action id would be answered, not applied
SIX_PAIRS = parse_cards(["2C", "2D", "4C", "4D", "6C", "6D", "8C", "8D", "TC", "TD"])
SIX_PAIRS += parse_cards(["QC", "QD", "KS"])


class SixPairsFirst(random.Random):
    """A seeded stand-in for ``secrets.SystemRandom`` whose shuffle deals six pairs to the
    first seat in dealing order (deck indices 0, n, 2n, … for n players)."""

    def __init__(self, seed: int, players: int, rigged: Callable[[int], bool] = bool) -> None:
        super().__init__(seed)
        self.players = players
        self.rigged = rigged  # which shuffles (counted from 1) are rigged: all by default
        self.shuffles = 0

    def shuffle(self, x: list) -> None:  # type: ignore[override]
        super().shuffle(x)
        self.shuffles += 1
        if not self.rigged(self.shuffles):
            return
        rest = [card for card in x if card not in SIX_PAIRS]
        slots = {k * self.players: card for k, card in enumerate(SIX_PAIRS)}
        x[:] = [slots[i] if i in slots else rest.pop(0) for i in range(len(x))]


@database_sync_to_async
def round_cards(room: Room, number: int) -> dict[int, set[str]]:
    """Each player's 13 dealt cards in round ``number`` (from the stored round)."""
    rows = RoundPlayer.objects.filter(round__table__room=room, round__number=number)
    return {rp.user_id: set(rp.cards.split()) for rp in rows}


@database_sync_to_async
def settlement_moves(room: Room, number: int) -> dict[int, int]:
    """What the round's settlement and penalty postings moved on each player's wallet."""
    round_ = Round.objects.get(table__room=room, number=number)
    moved: dict[int, int] = {}
    for entry in Entry.objects.filter(
        transaction__in=Transaction.objects.filter(
            reference=f"round:{round_.pk}",
            kind__in=[TransactionKind.SETTLEMENT, TransactionKind.ESCAPE_PENALTY],
        ),
        account__user__isnull=False,
    ).values("account__user_id", "amount"):
        user_id = entry["account__user_id"]
        moved[user_id] = moved.get(user_id, 0) + entry["amount"]
    return moved


async def ready_and_deal(players: dict[User, Socket]) -> dict[User, dict[str, Any]]:
    """Everyone presses Ready; each socket's private ``hand`` payload, with the suggestions
    that follow it (the hand comes with ``"suggestions": None``, then a ``hand_suggestions``
    frame for its cards, docs/protocol.md)."""
    for user, socket in players.items():
        reply = await socket.request({"type": "ready", "id": f"ready-{user.pk}-{next(ACTION_IDS)}"})
        assert reply["type"] == "ok", reply
    hands = {}
    for user, socket in players.items():
        await socket.event("deal")
        hand = (await socket.event("hand"))["payload"]
        assert hand["suggestions"] is None
        follow = await socket.next("hand_suggestions")
        assert follow["cards"] == hand["cards"] and follow["suggestions"]
        # … after the frame that brought the hand
        at = next(i for i, f in enumerate(socket.frames) if f is follow)
        assert any(
            e["type"] == "hand"
            for f in socket.frames[:at]
            if f["type"] == "events"
            for e in f["events"]
        )
        hands[user] = {**hand, "suggestions": follow["suggestions"]}
    return hands


async def submit(socket: Socket, rows: dict[str, list[str]], id_: str) -> None:
    reply = await socket.request({"type": "submit", "id": id_, **rows})
    assert reply == {"type": "ok", "id": id_, "action": "submit"}, reply


# 1. Four players.


async def test_a_four_player_round_over_websockets(
    clock: Clock, sockets: Callable[..., Any]
) -> None:
    room, users = await make_room(["alice", "bob", "carol", "dave"])
    socks = {u: await sockets(u, room) for u in users}
    before = await balances(users)

    hands = await ready_and_deal(socks)
    state = await state_of(room)
    assert state.phase is Phase.DEALING and len(state.round_seats) == 4
    for user, hand in hands.items():
        assert hand["position"] == state.seat_of(str(user.pk)).position
        assert len(hand["cards"]) == 13
    dealt = [card for hand in hands.values() for card in hand["cards"]]
    assert len(set(dealt)) == 52
    await timeout(room, clock, "dealing")
    state = await state_of(room)
    for user, socket in socks.items():
        if state.seat_of(str(user.pk)).choosing:  # a special with this seed: decline it
            reply = await socket.request(
                {"type": "choose_special", "id": "c", "play_special": False}
            )
            assert reply["type"] == "ok"
    state = await state_of(room)
    assert state.phase is Phase.ARRANGING

    for user, socket in socks.items():
        await submit(socket, best_rows(hands[user]["cards"], state), f"s-{user.pk}")
    assert (await state_of(room)).phase is Phase.COMPARING
    await timeout(room, clock, "comparing")

    settled = [(await s.event("settled"))["payload"] for s in socks.values()]
    assert all(payload == settled[0] for payload in settled)
    payload = settled[0]
    assert payload["round_no"] == 1
    players = {int(p["id"]): p for p in payload["result"]["players"]}
    assert set(players) == {u.pk for u in users}
    assert len(payload["result"]["pairs"]) == 6
    deltas = {pk: p["delta"] for pk, p in players.items()}
    penalties = {pk: p["penalty"] for pk, p in players.items()}
    assert sum(deltas.values()) + sum(penalties.values()) == 0 and any(deltas.values())

    after = await balances(users)
    assert {pk: after[pk] - before[pk] for pk in after} == deltas
    moved = await settlement_moves(room, 1)  # the settlement and any penalty postings
    assert {pk: moved.get(pk, 0) for pk in deltas} == deltas
    rows = await tc.round_rows(room)
    assert {pk: row.delta for pk, row in rows.items()} == deltas
    assert (await state_of(room)).phase is Phase.SETTLED


# 2. A special hand, declared or refused.


async def play_special_round(
    monkeypatch: Any, clock: Clock, sockets: Callable[..., Any], *, declare: bool
) -> tuple[dict[str, Any], Room, User, list[User], dict[User, Socket]]:
    rigged = SixPairsFirst(tc.SEED, players=3)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rigged)
    room, users = await make_room(["alice", "bob", "carol"])
    socks = {u: await sockets(u, room) for u in users}

    hands = await ready_and_deal(socks)
    holders = [u for u, hand in hands.items() if hand["special"] is not None]
    assert len(holders) == 1, {u.username: h["special"] for u, h in hands.items()}
    holder = holders[0]
    assert hands[holder]["special"] == "six_pairs"
    assert set(hands[holder]["cards"]) == {str(c) for c in SIX_PAIRS}
    await timeout(room, clock, "dealing")
    state = await state_of(room)
    assert state.phase is Phase.SPECIAL_CHOICE
    # The others may arrange meanwhile; the holder must answer first.
    refused = await socks[holder].request(
        {"type": "submit", "id": "early", **best_rows(hands[holder]["cards"], state)}
    )
    assert refused["type"] == "error"
    assert refused["error"]["code"] == "choose_special_first"
    reply = await socks[holder].request(
        {"type": "choose_special", "id": "choice", "play_special": declare}
    )
    assert reply == {"type": "ok", "id": "choice", "action": "choose_special"}
    chosen = await socks[holder].event("special_chosen")
    assert chosen["payload"]["play_special"] is declare
    state = await state_of(room)
    assert state.phase is Phase.ARRANGING
    seat = state.seat_of(str(holder.pk))
    assert seat.done is declare
    if not declare:
        await submit(socks[holder], best_rows(hands[holder]["cards"], state), "s-holder")
    for user in users:
        if user != holder:
            await submit(socks[user], best_rows(hands[user]["cards"], state), f"s-{user.pk}")
    assert (await state_of(room)).phase is Phase.COMPARING
    await timeout(room, clock, "comparing")

    settled = [(await s.event("settled"))["payload"] for s in socks.values()]
    assert all(payload == settled[0] for payload in settled)
    # The offer and the answer were private: only the holder heard of them.
    for user in users:
        if user != holder:
            events = [e for f in socks[user].frames if f["type"] == "events" for e in f["events"]]
            assert [e["payload"]["special"] for e in events if e["type"] == "hand"] == [None]
            assert not [e for e in events if e["type"] == "special_chosen"]
    return settled[0], room, holder, users, socks


async def test_a_declared_special_is_scored_as_the_special(
    clock: Clock, sockets: Callable[..., Any], monkeypatch: Any
) -> None:
    payload, room, holder, users, socks = await play_special_round(
        monkeypatch, clock, sockets, declare=True
    )
    result = payload["result"]
    players = {int(p["id"]): p for p in result["players"]}
    assert players[holder.pk]["special"] == "six_pairs"
    assert all(players[u.pk]["special"] is None for u in users if u != holder)
    water = tc.DEFAULT_CONFIG.special("six_pairs").water
    mine = [p for p in result["pairs"] if str(holder.pk) in (str(p["a"]), str(p["b"]))]
    assert len(mine) == 2
    for pair in mine:
        assert pair["rows"] is None and pair["gun"] is None
        sign = 1 if str(pair["a"]) == str(holder.pk) else -1
        assert sign * pair["special_water"] == water and sign * pair["water"] == water
    assert players[holder.pk]["water"] == 2 * water
    assert players[holder.pk]["delta"] > 0
    deltas = [p["delta"] + p["penalty"] for p in players.values()]
    assert sum(deltas) == 0
    # The holder never arranged: the comparison showed its special, not rows.
    for socket in socks.values():
        specials = [e for f in socket.frames if f["type"] == "events" for e in f["events"]]
        shown = [e["payload"] for e in specials if e["type"] == "reveal_special"]
        assert [(s["position"], s["special"]) for s in shown] == [
            (players[holder.pk]["position"], "six_pairs")
        ]
        reveals = [e["payload"] for e in specials if e["type"] == "reveal"]
        positions = {h["position"] for r in reveals for h in r["hands"]}
        assert players[holder.pk]["position"] not in positions and len(positions) == 2
    rows = await tc.round_rows(room)
    assert rows[holder.pk].special == "six_pairs" and rows[holder.pk].arrangement is None


async def test_a_refused_special_is_arranged_and_compared_normally(
    clock: Clock, sockets: Callable[..., Any], monkeypatch: Any
) -> None:
    payload, room, holder, users, socks = await play_special_round(
        monkeypatch, clock, sockets, declare=False
    )
    result = payload["result"]
    players = {int(p["id"]): p for p in result["players"]}
    assert all(p["special"] is None for p in players.values())
    assert len(result["pairs"]) == 3
    for pair in result["pairs"]:
        assert isinstance(pair["rows"], list) and len(pair["rows"]) == 3
        assert pair["special_water"] == 0
    assert sum(p["delta"] + p["penalty"] for p in players.values()) == 0
    for socket in socks.values():
        events = [e for f in socket.frames if f["type"] == "events" for e in f["events"]]
        assert not [e for e in events if e["type"] == "reveal_special"]
        reveals = [e["payload"] for e in events if e["type"] == "reveal"]
        assert players[holder.pk]["position"] in {
            h["position"] for r in reveals for h in r["hands"]
        }


# 3. No card of another seat in any frame before the reveal, over many random rounds.

ROUNDS = 6
LEAK_SEED = 7


def boundary(frames: list[dict[str, Any]], start: int) -> int:
    """The index of the first frame from ``start`` holding a reveal (the comparison)."""
    for index in range(start, len(frames)):
        frame = frames[index]
        if frame["type"] == "events" and any(
            e["type"] in ("reveal", "reveal_special") for e in frame["events"]
        ):
            return index
    raise AssertionError("no reveal was received")


async def test_no_frame_holds_another_seats_cards_before_the_reveal_over_many_rounds(
    clock: Clock, sockets: Callable[..., Any], monkeypatch: Any
) -> None:
    rng = random.Random(LEAK_SEED)
    # Every other deal gives someone six pairs, so that specials are offered and played too.
    shuffler = SixPairsFirst(LEAK_SEED, players=3, rigged=lambda n: n % 2 == 0)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: shuffler)
    room, users = await make_room(["alice", "bob", "carol"])
    socks = {u: await sockets(u, room) for u in users}
    for socket in socks.values():
        welcome = await socket.request({"type": "hello", "id": "h", "since": None})
        assert welcome["type"] == "welcome"
    plans_seen: set[str] = set()
    specials_offered = 0

    for number in range(1, ROUNDS + 1):
        marks = {u: len(s.frames) for u, s in socks.items()}
        hands = await ready_and_deal(socks)
        await timeout(room, clock, "dealing")
        state = await state_of(room)
        for user, socket in socks.items():
            if state.seat_of(str(user.pk)).choosing:
                answer = ["yes", "no", "none"][specials_offered % 3]
                specials_offered += 1
                plans_seen.add(f"special_{answer}")
                if answer != "none":
                    reply = await socket.request(
                        {
                            "type": "choose_special",
                            "id": f"c{number}",
                            "play_special": answer == "yes",
                        }
                    )
                    assert reply["type"] == "ok"
        state = await state_of(room)
        if state.phase is Phase.SPECIAL_CHOICE:
            await timeout(room, clock, "special_choice")
        order = list(users)
        rng.shuffle(order)
        for user in order:
            state = await state_of(room)
            seat = state.seat_of(str(user.pk))
            if state.phase not in (Phase.SPECIAL_CHOICE, Phase.ARRANGING) or seat.done:
                continue
            plan = rng.choices(["best", "suggestion", "idle"], weights=[3, 3, 2])[0]
            plans_seen.add(plan)
            if plan == "best":
                rows = best_rows(hands[user]["cards"], state)
            elif plan == "suggestion":
                chosen = rng.choice(hands[user]["suggestions"])
                rows = {k: chosen[k] for k in ("front", "middle", "back")}
            else:
                continue
            await submit(socks[user], rows, f"s{number}-{user.pk}")
        for _ in range(4):
            state = await state_of(room)
            if state.phase in (Phase.SETTLED, Phase.WAITING):
                break
            await timeout(room, clock, state.phase.value)
        settled = [
            (await s.event("settled", lambda p, n=number: p["round_no"] == n))["payload"]
            for s in socks.values()
        ]
        assert all(p == settled[0] for p in settled)
        assert sum(p["delta"] + p["penalty"] for p in settled[0]["result"]["players"]) == 0

        cards = await round_cards(room, number)
        assert sum(len(c) for c in cards.values()) == 39
        for user, socket in socks.items():
            end = boundary(socket.frames, marks[user])
            before_reveal = socket.frames[marks[user] : end]
            seen = {s for frame in before_reveal for s in strings(frame)}
            assert cards[user.pk] <= seen  # its own hand did arrive
            for other in users:
                if other != user:
                    leaked = cards[other.pk] & seen
                    assert not leaked, (number, user.username, other.username, leaked)
            # Afterwards every hand is revealed to everyone.
            after = {s for frame in socket.frames[end:] for s in strings(frame)}
            assert set().union(*cards.values()) <= after

    assert {"best", "suggestion", "idle"} <= plans_seen, plans_seen
    events = [e for f in socks[users[0]].frames if f["type"] == "events" for e in f["events"]]
    autos = {e["payload"]["auto"] for e in events if e["type"] == "submitted"}
    assert "timeout" in autos, autos  # the arrange timeout played for an idle seat
    assert {"special_yes", "special_no", "special_none"} <= plans_seen, plans_seen

"""The table services: a round through the database, the ledger, on-commit events and the
deadlines the timers read.

Transactional tests, so that ``on_commit`` fires: events go to ``send_messages`` (recorded
here). The table row is the timer (``games.live.timers`` polls its deadline): its deadline is
checked here, and timeouts are asked for by hand. The clock is ``table_store.clock``, set an
hour in the past so that stored deadlines are overdue for the sweeper; the shuffle is seeded so
that every run plays the same hands.
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from django.db import connection
from django.db.models import Sum
from django.test import override_settings

from accounts.models import (
    Account,
    AccountKind,
    EconomySettings,
    Transaction,
    TransactionKind,
    User,
)
from accounts.selectors import wallet_balance
from accounts.services import economy_settings_get_or_create, user_signup
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import services as table_services
from games.live import store as table_store
from games.live import tasks
from games.live import timers as live_timers
from games.models import Round, RoundPlayer, RuleConfiguration, Table, TableEvent
from games.rules.arrange import best_arrangement
from games.rules.cards import format_cards, parse_cards
from games.rules.config import DEFAULT_CONFIG
from games.table.deck import deal_hands, deal_order, verify_commitment
from games.table.errors import TableError
from games.table.state import Phase, TableState
from lobby.models import Room, Seat
from lobby.services import room_create, room_join, room_leave
from shisanshui import publish
from tests.games.table_helpers import submit_best

pytestmark = pytest.mark.django_db(transaction=True)

SEED = 7


@dataclass
class World:
    clock: float
    sent: list[dict[str, Any]] = field(default_factory=list)


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch) -> Iterator[World]:
    w = World(clock=time.time() - 3600)
    monkeypatch.setattr(table_store, "clock", lambda: w.clock)
    monkeypatch.setattr(
        table_notify, "send_messages", lambda table_id, message: w.sent.append(message)
    )
    rng = random.Random(SEED)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: rng)
    yield w


def _range(batch: dict[str, Any]) -> tuple[int, int]:
    """The versions a group message covers, as a ``range``'s bounds (any player's message)."""
    message = batch if "first" in batch else next(iter(batch.values()))
    return message["first"], message["last"] + 1


def _seat(player: str, state: TableState) -> int | None:
    seat = state.seat_of(player)
    return None if seat is None else seat.position


def _player(name: str) -> User:
    if not RuleConfiguration.objects.filter(is_default=True).exists():
        RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Standard 标准", is_default=True)
    with override_settings(SIGNUP_GRANT=100_000):
        return user_signup(username=name, password="not-used-1")


@pytest.fixture
def players(world: World) -> tuple[User, User]:
    return _player("alice"), _player("bob")


@pytest.fixture
def room(players: tuple[User, User]) -> Room:
    alice, bob = players
    room = room_create(owner=alice, name="Table", base_score=10, seats=2)
    room_join(user=bob, room_id=room.pk)
    return room


def state_of(room: Room) -> TableState:
    return TableState.from_dict(Table.objects.get(room=room).state)


def total_coins() -> int:
    return Account.objects.aggregate(total=Sum("balance"))["total"]


def start_round(room: Room, players: tuple[User, User]) -> None:
    """Both players sat at the table when they took their room seats; both press Ready."""
    for user in players:
        table_services.table_ready(user=user, room=room)


def to_arranging(world: World, room: Room, players: tuple[User, User]) -> TableState:
    """End the deal (by its timeout) and answer No for any special hand."""
    state = state_of(room)
    assert state.phase is Phase.DEALING and state.deadline is not None
    world.clock = state.deadline
    table_services.table_timeout(table_id=_table_id(room), version=state.version, phase="dealing")
    for user in players:
        seat = state_of(room).seat_of(str(user.pk))
        assert seat is not None
        if seat.choosing:
            table_services.table_choose_special(user=user, room=room, play_special=False)
    state = state_of(room)
    assert state.phase is Phase.ARRANGING
    return state


def settle(world: World, room: Room) -> TableState:
    state = state_of(room)
    assert state.phase is Phase.COMPARING and state.deadline is not None
    world.clock = state.deadline
    table_services.table_timeout(table_id=_table_id(room), version=state.version, phase="comparing")
    return state


def _table_id(room: Room) -> int:
    return Table.objects.get(room=room).pk


def test_a_full_round_deals_settles_once_and_reveals_the_deck(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    alice, bob = players
    coins_before = total_coins()
    balances_before = {u.pk: wallet_balance(user=u) for u in players}

    start_round(room, players)

    table = Table.objects.get(room=room)
    assert table.phase == "dealing" and table.deadline is not None
    round_ = Round.objects.get(table=table)
    assert len(round_.commitment) == 64 and round_.deck == "" and round_.salt == ""
    assert round_.config == state_of(room).config.to_dict()
    assert round_.config["base_score"] == 10
    assert RoundPlayer.objects.filter(round=round_).count() == 2
    # The deal's deadline is the row's: what the timers' poll finds, with the state's float.
    deadline = state_of(room).deadline
    assert deadline is not None and table.deadline.timestamp() == pytest.approx(deadline)
    assert live_timers.table_deadlines_before(until=deadline, limit=10) == [
        (table.pk, table.version, "dealing", deadline)
    ]
    assert live_timers.table_deadlines_before(until=deadline - 0.01, limit=10) == []

    to_arranging(world, room, players)
    submit_best(room, alice)
    submit_best(room, bob)
    comparing = settle(world, room)

    state = state_of(room)
    assert state.phase is Phase.SETTLED
    round_.refresh_from_db()
    assert round_.settled_at is not None and round_.result is not None
    settlements = Transaction.objects.filter(kind=TransactionKind.SETTLEMENT)
    assert list(settlements) == [round_.transaction]
    assert round_.transaction.idempotency_key == f"round:{round_.pk}:settlement"
    deltas = {int(p["id"]): p["delta"] for p in round_.result["players"]}
    assert sum(deltas.values()) == 0 and any(deltas.values())
    for user in players:
        assert wallet_balance(user=user) == balances_before[user.pk] + deltas[user.pk]
    assert total_coins() == coins_before
    assert round_.result["pairs"] and "row_water" in round_.result["pairs"][0]
    for row in RoundPlayer.objects.filter(round=round_):
        assert row.delta == deltas[row.user_id] and row.penalty == 0 and not row.escaped
        assert row.arrangement is not None and row.auto == ""

    # The revealed deck is the committed one, and it deals exactly the stored hands.
    deck = parse_cards(round_.deck.split(), count=52)
    assert verify_commitment(deck, round_.salt, round_.commitment)
    hands = deal_hands(deck, deal_order([0, 1], comparing.start_seat))
    for row in RoundPlayer.objects.filter(round=round_):
        assert row.cards == " ".join(format_cards(hands[row.position]))

    # A duplicated settling task does nothing.
    events = TableEvent.objects.count()
    table_services.table_timeout(table_id=table.pk, version=comparing.version, phase="comparing")
    assert TableEvent.objects.count() == events
    assert Transaction.objects.filter(kind=TransactionKind.SETTLEMENT).count() == 1
    assert total_coins() == coins_before

    # The event log is contiguous, and every event went out on commit, in order.
    versions = list(TableEvent.objects.order_by("version").values_list("version", flat=True))
    assert versions == list(range(1, state.version + 1))
    # Each batch goes to each player with a private event in it on its own group, and its
    # public events once to everyone else; every batch covers contiguous versions.
    covered = [v for batch in world.sent for v in range(*_range(batch))]
    assert covered == versions
    logged = {
        (e.version, e.type): e.audience is not None or e.recipient is not None
        for e in TableEvent.objects.all()
    }
    ids = {str(p.pk) for p in players}
    for batch in world.sent:
        everyone = batch.pop(table_notify.EVERYONE, None)
        if everyone is not None:  # public events only, for all but the players named
            assert not any(logged[e["version"], e["type"]] for e in everyone["events"])
            assert set(everyone["except"]) == set(batch)
            if batch:
                assert _range(everyone) == _range(batch)
        else:  # every player has its own: nobody watches
            assert set(batch) == ids
        assert set(batch) <= ids
        assert all(m["type"] == "table.events" for m in batch.values())
        assert len({_range(m) for m in batch.values()}) <= 1
        for player, m in batch.items():
            assert all(e["version"] in range(*_range(m)) for e in m["events"])
            assert not any(
                e["type"] == "hand" and e["payload"]["position"] != _seat(player, state)
                for e in m["events"]
            )


def test_no_private_event_shows_another_seats_cards_before_the_reveal(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    start_round(room, players)
    to_arranging(world, room, players)
    for user in players:
        submit_best(room, user)

    hands = {
        rp.position: set(rp.cards.split())
        for rp in RoundPlayer.objects.filter(round__table__room=room)
    }
    private = 0
    for event in TableEvent.objects.order_by("version"):
        if event.type == "reveal":
            break
        private += event.audience is not None
        shown = set(_strings(event.payload))
        for position, cards in hands.items():
            if event.audience != position:
                assert not shown & cards, (event.type, event.audience, position)
    assert private >= 4  # both hands and both arrangements were checked


def test_6_the_hand_goes_out_with_its_deal_and_its_suggestions_follow(
    world: World, room: Room, players: tuple[User, User], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The deal's batch goes out at once, each person's hand with ``"suggestions": None``; the
    engine's suggestions are worked out only after it is published (the outbox's later work,
    outside the deal's transaction) and follow in a ``table.suggestions`` message to the
    player's own group, equal to a snapshot's. The log keeps the hand without them; a
    reconnect's missed events bring them with the hand, a reconnect after the hand brings
    them on their own."""
    from games.table import perspective as views

    alice, bob = players
    before = state_of(room).version
    inside: list[bool] = []
    worked_out = views.suggestions

    def suggestions(*args: Any, **kwargs: Any) -> Any:
        inside.append(connection.in_atomic_block)
        return worked_out(*args, **kwargs)

    monkeypatch.setattr(views, "suggestions", suggestions)
    with publish.outbox() as box:
        start_round(room, players)
    assert inside == []  # nothing worked out before the deal's batch is out
    hands = {}
    for user in players:
        player = str(user.pk)
        (sent,) = [
            e
            for batch in world.sent
            for e in batch.get(player, {}).get("events", [])
            if e["type"] == "hand"
        ]
        assert sent["payload"]["suggestions"] is None
        hands[player] = sent
    follow = box.run_later()
    assert inside == [False, False]  # both hands, neither inside a transaction
    table_id = _table_id(room)
    assert [g for g, _ in follow] == [
        table_notify.table_player_group(table_id, str(u.pk)) for u in players
    ]
    for user, (_group, message) in zip(players, follow, strict=True):
        player = str(user.pk)
        view = table_reads.table_resync(table_id=table_id, player=player, since=None)
        mine = view["snapshot"]["you"]
        assert message == {
            "type": "table.suggestions",
            "cards": mine["hand"],
            "suggestions": mine["suggestions"],
        }
        assert len(mine["suggestions"]) >= 1
        missed = table_reads.table_resync(table_id=table_id, player=player, since=before)
        (again,) = [e for e in missed["events"] if e["type"] == "hand"]
        payload = {**hands[player]["payload"], "suggestions": mine["suggestions"]}
        assert again == {**hands[player], "payload": payload}
        assert "suggestions" not in missed  # they came with the hand
        after = table_reads.table_resync(
            table_id=table_id, player=player, since=hands[player]["version"]
        )
        assert after["suggestions"] == {"cards": mine["hand"], "suggestions": mine["suggestions"]}
        logged = TableEvent.objects.get(type="hand", recipient=player)
        assert "suggestions" not in logged.payload
        assert {k: v for k, v in hands[player]["payload"].items() if k != "suggestions"} == (
            logged.payload
        )
    assert state_of(room).phase is Phase.DEALING


def test_a_hand_whose_suggestions_fail_is_followed_by_none(
    world: World,
    room: Room,
    players: tuple[User, User],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The suggestions are worked out after the deal is out: should they fail, the deal and
    the hands have gone out all the same, and what follows says "none" (the client stops
    waiting); the failure is logged."""
    from games.table import perspective as views

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("no suggestions today")

    monkeypatch.setattr(views, "suggestions", broken)
    with publish.outbox() as box:
        start_round(room, players)
    for user in players:
        batches = [b[str(user.pk)] for b in world.sent if str(user.pk) in b]
        (hand,) = [e for b in batches for e in b["events"] if e["type"] == "hand"]
        assert hand["payload"]["suggestions"] is None and len(hand["payload"]["cards"]) == 13
        assert any(e["type"] == "deal" for b in batches for e in b["events"])
    follow = box.run_later()
    assert [m["suggestions"] for _, m in follow] == [[], []]
    assert "could not work out the suggestions of a hand" in caplog.text
    assert state_of(room).phase is Phase.DEALING


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def test_a_fouled_submission_is_refused_and_changes_nothing(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    alice, _bob = players
    start_round(room, players)
    state = to_arranging(world, room, players)
    seat = state.seat_of(str(alice.pk))
    assert seat is not None and seat.hand is not None
    best = best_arrangement(seat.hand, state.config)
    table = Table.objects.get(room=room)
    events, sent = TableEvent.objects.count(), len(world.sent)

    with pytest.raises(TableError) as refused:
        table_services.table_submit(
            user=alice,
            room=room,
            front=format_cards(best.front),
            middle=format_cards(best.back),
            back=format_cards(best.middle),
        )

    assert refused.value.code == "foul"
    with pytest.raises(TableError) as bad:
        table_services.table_submit(user=alice, room=room, front=["ZZ"], middle=[], back=[])
    assert bad.value.code == "bad_cards"
    after = Table.objects.get(room=room)
    assert (after.state, after.version, after.deadline) == (
        table.state,
        table.version,
        table.deadline,
    )
    assert TableEvent.objects.count() == events
    assert len(world.sent) == sent


def test_stale_and_early_timeouts_do_nothing(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    start_round(room, players)
    state = to_arranging(world, room, players)
    table = Table.objects.get(room=room)
    events = TableEvent.objects.count()
    world.clock = state.arrange_deadline + 1

    table_services.table_timeout(table_id=table.pk, version=state.version - 1, phase="arranging")
    table_services.table_timeout(table_id=table.pk, version=state.version, phase="dealing")
    assert TableEvent.objects.count() == events

    world.clock = state.arrange_deadline - 5
    table_services.table_timeout(table_id=table.pk, version=state.version, phase="arranging")
    assert TableEvent.objects.count() == events
    # An early timeout leaves the deadline where it was, for the poller to ask again.
    after = Table.objects.get(pk=table.pk)
    assert (after.version, after.phase, after.deadline) == (
        table.version,
        table.phase,
        table.deadline,
    )
    assert table_services.table_timeout(table_id=0, version=1, phase="waiting") is None


def test_one_timer_per_phase_deadline_holds_across_the_commands_in_between(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    alice, bob = players
    start_round(room, players)
    state = to_arranging(world, room, players)
    assert state.arrange_deadline is not None
    timers = live_timers.table_deadlines_before(until=state.arrange_deadline, limit=10)
    assert len(timers) == 1  # the row's deadline, set when the phase began
    table_id, version, phase, deadline = timers[0]
    assert (phase, deadline) == ("arranging", state.arrange_deadline)

    submit_best(room, alice)  # a new version, the same deadline
    (moved,) = live_timers.table_deadlines_before(until=deadline, limit=10)
    assert moved[0] == table_id and moved[2:] == (phase, deadline)
    assert moved[1] == state_of(room).version > version

    events = TableEvent.objects.count()
    world.clock = deadline + 1
    # A timer for another deadline of the same phase is stale.
    table_services.table_timeout(
        table_id=table_id, version=version, phase=phase, deadline=deadline - 1
    )
    assert TableEvent.objects.count() == events
    # The phase's own timer still holds although the version moved on: Bob is played for.
    table_services.table_timeout(table_id=table_id, version=version, phase=phase, deadline=deadline)
    after = state_of(room)
    assert after.phase is Phase.COMPARING
    bob_seat = after.seat_of(str(bob.pk))
    assert bob_seat is not None and bob_seat.auto == "timeout"


def test_the_arrange_timeout_submits_for_everyone_still_arranging(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    alice, bob = players
    start_round(room, players)
    state = to_arranging(world, room, players)
    submit_best(room, alice)
    version = state_of(room).version
    world.clock = state.arrange_deadline

    table_services.table_timeout(table_id=_table_id(room), version=version, phase="arranging")

    state = state_of(room)
    assert state.phase is Phase.COMPARING
    assert state.seat_of(str(alice.pk)).auto is None
    assert state.seat_of(str(bob.pk)).auto == "timeout"
    settle(world, room)
    rows = {rp.user_id: rp for rp in RoundPlayer.objects.all()}
    assert rows[bob.pk].auto == "timeout" and rows[alice.pk].auto == ""


def test_a_player_who_leaves_mid_round_escapes_and_pays_the_house(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    alice, bob = players
    coins_before = total_coins()
    start_round(room, players)
    to_arranging(world, room, players)

    table_services.table_leave(user=bob, room=room)
    assert Seat.objects.filter(user=bob).exists()  # nobody takes the seat mid-round
    submit_best(room, alice)
    settle(world, room)

    round_ = Round.objects.get()
    bob_row = RoundPlayer.objects.get(round=round_, user=bob)
    assert bob_row.escaped and bob_row.auto == "escaped" and bob_row.penalty > 0
    penalty = Transaction.objects.get(kind=TransactionKind.ESCAPE_PENALTY)
    assert penalty.idempotency_key == f"round:{round_.pk}:penalty:{bob.pk}"
    house = Account.objects.get(kind=AccountKind.HOUSE)
    assert house.balance == bob_row.penalty
    assert total_coins() == coins_before
    assert state_of(room).seat_of(str(bob.pk)) is None
    # The room seat was kept through the round and freed at settlement.
    assert not Seat.objects.filter(user=bob).exists()


@pytest.mark.parametrize("percent", [5, 0])
def test_the_settled_event_and_the_state_carry_the_table_fee(
    world: World, room: Room, players: tuple[User, User], percent: int
) -> None:
    economy_settings_get_or_create()
    EconomySettings.objects.update(table_fee_percent=percent)
    balances_before = {u.pk: wallet_balance(user=u) for u in players}
    start_round(room, players)
    to_arranging(world, room, players)
    for user in players:
        submit_best(room, user)
    version = settle(world, room).version

    round_ = Round.objects.get()
    stored = TableEvent.objects.get(type="settled")
    sent = [
        e
        for batch in world.sent
        for message in batch.values()
        for e in message["events"]
        if e["type"] == "settled"
    ]
    state = state_of(room)
    # Told, saved and kept as stored: with the fee when there is one, at the machine's version.
    assert sent and all(e["payload"]["result"] == round_.result for e in sent)
    assert stored.payload["result"] == round_.result == state.result
    assert stored.version == sent[0]["version"] > version
    versions = list(TableEvent.objects.order_by("version").values_list("version", flat=True))
    assert versions == list(range(1, state.version + 1))
    players_ = state.result["players"] if state.result else []
    if percent:
        assert state.result is not None and state.result["fee_percent"] == percent
        winner = max(players_, key=lambda p: p["delta"])
        assert winner["fee"] == winner["delta"] * percent // 100 > 0
    else:
        assert state.result is not None and "fee_percent" not in state.result
        assert all("fee" not in p for p in players_)
    for p in players_:
        user_id = int(p["id"])
        assert wallet_balance(user=User.objects.get(pk=user_id)) == (
            balances_before[user_id] + p["delta"] - p.get("fee", 0)
        )


def test_the_sweeper_fires_an_overdue_deadline(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    start_round(room, players)
    state = state_of(room)
    world.clock = state.deadline  # the deal's timer was lost; the clock is an hour behind

    assert tasks.sweep_deadlines() == 1

    assert state_of(room).phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING)


def test_sitting_needs_a_seat_in_the_room(world: World, room: Room) -> None:
    carol = _player("carol")
    with pytest.raises(TableError) as refused:
        table_services.table_sit(user=carol, room=room)
    assert refused.value.code == "not_in_room"
    with pytest.raises(TableError) as refused:
        table_services.table_ready(user=carol, room=room)
    assert refused.value.code == "not_at_table"


def test_joining_the_room_sits_at_its_table_and_leaving_between_rounds_leaves_both(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    alice, bob = players
    seats = {s.player: s.position for s in state_of(room).seats}
    assert seats == {str(alice.pk): 0, str(bob.pk): 1}

    room_leave(user=bob)

    assert state_of(room).seat_of(str(bob.pk)) is None
    assert not Seat.objects.filter(user=bob).exists()


def test_a_ready_timeout_returns_the_players_to_the_room_list(
    world: World, room: Room, players: tuple[User, User]
) -> None:
    state = state_of(room)
    assert state.phase is Phase.WAITING and state.deadline is not None
    world.clock = state.deadline

    table_services.table_timeout(
        table_id=_table_id(room), version=state.version, phase=state.phase.value
    )

    assert state_of(room).seats == ()
    assert not Seat.objects.filter(room=room).exists()
    room.refresh_from_db()
    assert room.status == "open"  # an empty room stays open with its owner

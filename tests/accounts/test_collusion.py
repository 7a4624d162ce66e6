"""The collusion report: how a pair's coin flow is measured, and the dumping it finds.

The scripted attack of two accounts at a private two-seat table, one of them losing
on purpose round after round (it submits its weakest arrangement, its friend the best); the
hourly task flags the pair, in the right direction. An honest table of four playing the same
number of rounds with mixed results is not flagged. Rounds are played through the table
services with the clock moved to each deadline (as tests/games/live/test_round_simulation.py does).
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from decimal import Decimal

import pytest
from django.utils import timezone

from accounts.collusion import collusion_flag_review
from accounts.models import CollusionFlag, CollusionStatus, EconomySettings, User
from accounts.selectors import ledger_audit, wallet_balance
from games.history import collusion, tasks
from games.history.collusion import (
    PairFlow,
    SharedRound,
    collusion_scan,
    pair_flows,
    round_payments,
)
from games.live import deal as table_deal
from games.live import notify as table_notify
from games.live import services as table_services
from games.live import store as table_store
from games.models import Round
from games.rules.arrange import best_arrangement
from games.rules.cards import format_cards
from games.table.state import LOBBY_PHASES, PLAY_PHASES, Phase
from games.table.suggest import suggestions
from lobby.models import Room
from lobby.services import room_create, room_join
from tests.games.table_helpers import (
    ensure_at_table,
    fast_rules,
    make_player,
    open_table,
    state_of,
    table_id,
)

T0 = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)


# How coins are attributed to pairs (no database).


def test_the_stored_transfers_are_the_payments_between_two_players() -> None:
    result = {
        "players": [
            {"id": "1", "delta": -300, "penalty": 0},
            {"id": "2", "delta": 200, "penalty": 0},
            {"id": "3", "delta": 100, "penalty": 0},
        ],
        "transfers": [
            {"from": "1", "to": "2", "coins": 200, "kind": "settlement"},
            {"from": "1", "to": "3", "coins": 150, "kind": "settlement"},
            {"from": "3", "to": "1", "coins": 0, "kind": "settlement"},
            {"from": "3", "to": "2", "coins": 50, "kind": "cover"},
        ],
    }

    assert round_payments(result) == {(1, 2): 200, (1, 3): 150, (3, 2): 50}


def test_without_transfers_a_loss_is_split_among_the_winners_by_their_gains() -> None:
    # Player 1 lost 1,000 (and paid a 30 penalty to the house, not to anyone here); 2 and 3
    # won 700 and 300; player 4 lost 1 coin, all of it attributed (the remainder to the
    # largest winner).
    result = {
        "players": [
            {"id": 1, "delta": -1030, "penalty": 30},
            {"id": 2, "delta": 700, "penalty": 0},
            {"id": 3, "delta": 301, "penalty": 0},
            {"id": 4, "delta": -1, "penalty": 0},
        ]
    }

    payments = round_payments(result)

    assert payments == {(1, 2): 700, (1, 3): 300, (4, 2): 1}
    assert round_payments({"players": [{"id": 1, "delta": 0, "penalty": 0}]}) == {}


def _round(at: datetime, players: list[int], transfers: list[tuple[int, int, int]]) -> tuple:
    result = {"transfers": [{"from": a, "to": b, "coins": c} for a, b, c in transfers]}
    return at, result, players


def test_a_pair_flow_is_net_and_measured_against_the_losers_losses() -> None:
    rounds = [
        _round(T0, [1, 2], [(1, 2, 1000)]),
        _round(T0 + timedelta(minutes=1), [1, 2], [(2, 1, 100)]),
        # A third player: 1 also loses 300 to 3 in a round shared with 2.
        _round(T0 + timedelta(minutes=2), [1, 2, 3], [(1, 2, 500), (1, 3, 300), (3, 2, 10)]),
    ]

    flows = {(f.loser_id, f.winner_id): f for f in pair_flows(rounds)}

    assert flows[(1, 2)] == PairFlow(
        loser_id=1,
        winner_id=2,
        shared_rounds=3,
        flow=1400,
        losses=1800,
        first_round_at=T0,
        last_round_at=T0 + timedelta(minutes=2),
    )
    assert flows[(1, 2)].share_percent == Decimal("77.8")
    assert flows[(1, 3)].shared_rounds == 1 and flows[(1, 3)].flow == 300
    assert flows[(3, 2)].flow == 10 and flows[(3, 2)].losses == 10
    assert (2, 1) not in flows


def test_even_play_has_no_flow_and_a_zero_loss_no_share() -> None:
    rounds = [_round(T0, [1, 2], [(1, 2, 50)]), _round(T0, [1, 2], [(2, 1, 50)])]

    assert pair_flows(rounds) == []
    assert PairFlow(1, 2, 1, 0, 0, T0, T0).share_percent == 0


# The scan: thresholds, the window, bots, and a flag updated in place.


def _scan_over(monkeypatch: pytest.MonkeyPatch, rounds: list[tuple], now: datetime):
    """collusion_scan() over these rounds (as its query would return them since the window)."""

    def settled_rounds(*, since: datetime) -> list[SharedRound]:
        return [
            SharedRound(i, at, "room", result, list(people), {})
            for i, (at, result, people) in enumerate(rounds)
            if at >= since
        ]

    monkeypatch.setattr(collusion, "settled_rounds", settled_rounds)
    return collusion_scan(now=now)


@pytest.mark.django_db
def test_the_scan_applies_every_threshold(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = make_player("pa"), make_player("pb")
    _thresholds(
        collusion_min_rounds=3,
        collusion_days=2,
        collusion_min_share_percent=80,
        collusion_min_flow=900,
    )
    dumping = [_round(T0 + timedelta(hours=i), [a.pk, b.pk], [(a.pk, b.pk, 300)]) for i in range(3)]
    now = T0 + timedelta(days=1)

    # Too few rounds, too little flow, too small a share, rounds too old: nothing.
    assert _scan_over(monkeypatch, dumping[:2], now).flagged == 0
    small = [_round(r[0], r[2], [(a.pk, b.pk, 299)]) for r in dumping]
    assert _scan_over(monkeypatch, small, now).flagged == 0
    mixed = [*dumping, _round(T0, [a.pk, b.pk], [(b.pk, a.pk, 200)])]
    assert _scan_over(monkeypatch, mixed, now).flagged == 0  # 700 of 900: 77.8%
    assert _scan_over(monkeypatch, dumping, now + timedelta(days=2)).flagged == 0
    assert not CollusionFlag.objects.exists()

    result = _scan_over(monkeypatch, dumping, now)

    assert (result.flagged, result.created) == (1, 1)
    flag = CollusionFlag.objects.get()
    assert (flag.loser, flag.winner, flag.flow, flag.losses) == (a, b, 900, 900)
    assert flag.share_percent == 100 and flag.shared_rounds == 3


@pytest.mark.django_db
def test_a_pair_found_again_is_updated_in_place_and_keeps_its_review(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    a, b, reviewer = make_player("qa"), make_player("qb"), make_player("qsupport")
    _thresholds(collusion_min_rounds=2, collusion_min_flow=1, collusion_min_share_percent=50)
    rounds = [
        _round(T0 + timedelta(minutes=i), [a.pk, b.pk], [(a.pk, b.pk, 100)]) for i in range(2)
    ]
    _scan_over(monkeypatch, rounds, T0 + timedelta(hours=1))
    flag = CollusionFlag.objects.get()
    collusion_flag_review(
        flag=flag, status=CollusionStatus.DISMISSED, note=" Friends. ", reviewer=reviewer
    )

    rounds.append(_round(T0 + timedelta(minutes=5), [a.pk, b.pk], [(a.pk, b.pk, 100)]))
    again = _scan_over(monkeypatch, rounds, T0 + timedelta(hours=2))

    assert (again.flagged, again.created) == (1, 0)
    flag = CollusionFlag.objects.get()
    assert (flag.shared_rounds, flag.flow, flag.last_round_at) == (
        3,
        300,
        T0 + timedelta(minutes=5),
    )
    assert flag.updated_at == T0 + timedelta(hours=2)
    assert (flag.status, flag.note, flag.reviewer) == (
        CollusionStatus.DISMISSED,
        "Friends.",
        reviewer,
    )


@pytest.mark.django_db
def test_bots_are_nobodys_accomplice_but_losses_to_them_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from games.models import RoundPlayer

    a, b = make_player("ra"), make_player("rb")
    bot = make_player("rbot")
    User.objects.filter(pk=bot.pk).update(is_bot=True)
    _thresholds(collusion_min_rounds=2, collusion_min_flow=1, collusion_min_share_percent=60)
    room = room_create(owner=a, name="With a bot", base_score=10, seats=3, rules=fast_rules())
    table = table_store.table_for_room(room=room)
    now = timezone.now()
    for number in range(1, 3):
        # a loses 100 to b and 100 to the bot; the bot loses 500 to a.
        result = {
            "transfers": [
                {"from": str(a.pk), "to": str(b.pk), "coins": 100},
                {"from": str(a.pk), "to": str(bot.pk), "coins": 100},
                {"from": str(bot.pk), "to": str(a.pk), "coins": 500},
            ]
        }
        round_ = Round.objects.create(
            table=table,
            number=number,
            config={},
            commitment="x",
            started_at=now,
            settled_at=now,
            result=result,
        )
        for position, user in enumerate((a, b, bot)):
            RoundPlayer.objects.create(round=round_, user=user, position=position, cards="")

    result = collusion_scan(now=now + timedelta(minutes=1))

    # Only the human pair is examined: 200 of a's 400 coins of losses went to b (50%).
    assert (result.pairs_examined, result.flagged) == (1, 0)


# Through the table services: the scripted dumping and an honest table.


@dataclass
class Clock:
    now: float


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    """The tables' clock, moved by hand; no worker, no socket, a seeded shuffle."""
    c = Clock(now=timezone.now().timestamp())
    monkeypatch.setattr(table_store, "clock", lambda: c.now)
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, message: None)
    shuffler = random.Random(13)
    monkeypatch.setattr(table_deal.secrets, "SystemRandom", lambda: shuffler)
    yield c


def _submit(room: Room, user: User, *, worst: bool) -> None:
    """Submit the best arrangement, or (dumping) the suggestion expected to win the least."""
    s = state_of(room).seat_of(str(user.pk))
    assert s is not None and s.hand is not None
    config = state_of(room).config
    if worst:
        chosen = min(suggestions(s.hand, config), key=lambda g: g["expected_water"])
        rows = chosen["front"], chosen["middle"], chosen["back"]
    else:
        best = best_arrangement(s.hand, config)
        rows = format_cards(best.front), format_cards(best.middle), format_cards(best.back)
    table_services.table_submit(user=user, room=room, front=rows[0], middle=rows[1], back=rows[2])


def play_round(
    room: Room, players: list[User], clock: Clock, *, dumper: User | None = None
) -> None:
    """One round: everyone ready, the deal, no special declared, everyone submits, the
    comparison runs out; the dumper (if any) plays its worst, the others their best."""
    for user in players:
        ensure_at_table(user, room)
        s = state_of(room).seat_of(str(user.pk))
        assert s is not None
        if not s.ready:
            table_services.table_ready(user=user, room=room)
    state = state_of(room)
    assert state.phase is Phase.DEALING, state.phase
    clock.now = max(clock.now, state.deadline or clock.now) + 0.1
    table_services.table_timeout(table_id=table_id(room), version=state.version, phase="dealing")
    for user in players:
        s = state_of(room).seat_of(str(user.pk))
        if state_of(room).phase not in PLAY_PHASES or s is None or s.done:
            continue
        if s.choosing:
            table_services.table_choose_special(user=user, room=room, play_special=False)
        _submit(room, user, worst=user == dumper)
    for _ in range(8):
        state = state_of(room)
        if state.phase in LOBBY_PHASES:
            break
        assert state.deadline is not None, state.phase
        clock.now = max(clock.now, state.deadline) + 0.1
        table_services.table_timeout(
            table_id=table_id(room), version=state.version, phase=state.phase.value
        )
    assert state_of(room).phase in LOBBY_PHASES


ROUNDS = 12


def _thresholds(**values: int) -> EconomySettings:
    economy = EconomySettings(pk=EconomySettings.SINGLETON_ID, **values)
    economy.full_clean()
    economy.save()
    return economy


@pytest.mark.django_db(transaction=True)
def test_dumping_at_a_private_two_seat_table_is_flagged_in_the_right_direction(
    clock: Clock,
) -> None:
    _thresholds(
        collusion_min_rounds=ROUNDS,
        collusion_days=1,
        collusion_min_share_percent=70,
        collusion_min_flow=1_000,
    )
    dumper, friend = make_player("dumper"), make_player("friend")
    room = room_create(
        owner=dumper, name="Just us", base_score=100, seats=2, private=True, rules=fast_rules()
    )
    room_join(user=friend, room_id=room.pk, code=room.code or "")

    for _ in range(ROUNDS):
        play_round(room, [dumper, friend], clock, dumper=dumper)

    rounds = Round.objects.filter(table__room=room, settled_at__isnull=False)
    assert rounds.count() == ROUNDS
    dumped = wallet_balance(user=friend) - 100_000
    assert dumped > 0 and wallet_balance(user=dumper) == 100_000 - dumped

    assert tasks.collusion_scan.apply().get() == 1

    flag = CollusionFlag.objects.get()
    assert (flag.loser, flag.winner) == (dumper, friend)
    assert flag.shared_rounds == ROUNDS
    assert flag.flow == dumped
    assert flag.share_percent >= 70
    assert flag.status == CollusionStatus.OPEN
    settled = list(rounds.order_by("settled_at").values_list("settled_at", flat=True))
    assert (flag.first_round_at, flag.last_round_at) == (settled[0], settled[-1])
    assert ledger_audit().ok


@pytest.mark.django_db(transaction=True)
def test_an_honest_table_of_four_with_mixed_results_is_not_flagged(clock: Clock) -> None:
    _thresholds(
        collusion_min_rounds=ROUNDS,
        collusion_days=1,
        collusion_min_share_percent=70,
        collusion_min_flow=1_000,
    )
    players = [make_player(f"honest{i}") for i in range(4)]
    room = open_table(players, rules=fast_rules(), base_score=50)

    for _ in range(ROUNDS):
        play_round(room, players, clock)

    deltas = set()
    for round_ in Round.objects.filter(table__room=room).prefetch_related("players"):
        deltas |= {(p.user_id, p.delta > 0) for p in round_.players.all()}
    # Mixed results: everybody won some round and lost another.
    assert deltas == {(p.pk, won) for p in players for won in (True, False)}
    assert collusion_scan().flagged == 0
    assert not CollusionFlag.objects.exists()


def test_the_scan_runs_hourly_from_celery_beat(settings) -> None:  # type: ignore[no-untyped-def]
    entries = [
        entry
        for entry in settings.CELERY_BEAT_SCHEDULE.values()
        if entry["task"] == "accounts.tasks.collusion_scan"
    ]

    assert [entry["schedule"] for entry in entries] == [3600.0]

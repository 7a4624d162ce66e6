"""Helpers of the table integration tests: players with coins, fast rules, seating, reading.

Seating goes through the lobby (``room_create`` / ``room_join``) and then sits at the table
only when the player is not there yet, so the helpers hold whether or not joining a room also
sits the player at its table.
"""

from __future__ import annotations

from django.db.models import Sum
from django.test import override_settings

from accounts.models import Account, AccountKind, Transaction, TransactionKind, User
from accounts.services import user_signup
from games.live import services as table_services
from games.live import store as table_store
from games.models import RuleConfiguration
from games.rules.arrange import best_arrangement
from games.rules.cards import format_cards
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from games.table.state import TableState
from lobby.models import Room
from lobby.services import room_create, room_join

SIGNUP_COINS = 100_000

# The shortest clocks the engine allows, and the shortest deal and reveal that still take a
# moment (1 ms per card), so that a test can look at the dealing and comparing phases (with
# no pacing at all those phases end in the same transaction: tests/games/live/test_query_budget.py):
# a round that nobody plays ends ~arrange_seconds after the last Ready.
FAST_RULES = {
    "ready_seconds": 60,
    "special_choice_seconds": 1,
    "arrange_seconds": 2,
    "deal_interval_ms": 1,
    "reveal_interval_ms": 1,
}


def default_rules() -> RuleConfiguration:
    """The default configuration the lobby needs, created once."""
    rules = RuleConfiguration.objects.filter(is_default=True).first()
    if rules is None:
        rules = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Standard 标准", is_default=True)
    return rules


def fast_rules(name: str = "Fast (tests)", **overrides: int) -> RuleConfiguration:
    """A saved configuration with the engine's shortest clocks (overridable)."""
    default_rules()
    config = RuleConfig.from_dict({**FAST_RULES, **overrides}, base=DEFAULT_CONFIG)
    return RuleConfiguration.from_engine(config, name=name)


def make_player(name: str) -> User:
    """A signed-up player holding ``SIGNUP_COINS`` (minted by the signup grant)."""
    default_rules()
    with override_settings(SIGNUP_GRANT=SIGNUP_COINS):
        return user_signup(username=name, password="not-used-1")


def state_of(room: Room) -> TableState:
    return TableState.from_dict(table_store.table_for_room(room=room).state)


def submit_best(room: Room, user: User) -> None:
    """Submit the engine's best arrangement of the player's hand."""
    state = state_of(room)
    seat = state.seat_of(str(user.pk))
    assert seat is not None and seat.hand is not None
    best = best_arrangement(seat.hand, state.config)
    table_services.table_submit(
        user=user,
        room=room,
        front=format_cards(best.front),
        middle=format_cards(best.middle),
        back=format_cards(best.back),
    )


def table_id(room: Room) -> int:
    return table_store.table_for_room(room=room).pk


def ensure_at_table(user: User, room: Room) -> None:
    """Sit ``user`` (already holding a seat in ``room``) at its table unless already there."""
    if state_of(room).seat_of(str(user.pk)) is None:
        table_services.table_sit(user=user, room=room)


def open_table(
    players: list[User], *, rules: RuleConfiguration, base_score: int = 10, seats: int | None = None
) -> Room:
    """A room owned by the first player, joined by the others, everyone at the table."""
    owner, *others = players
    room = room_create(
        owner=owner,
        name=f"Table {owner.username}",
        base_score=base_score,
        seats=seats or len(players),
        rules=rules,
    )
    for user in others:
        room_join(user=user, room_id=room.pk)
    for user in players:
        ensure_at_table(user, room)
    return room


def press_ready(players: list[User], room: Room) -> None:
    """Everyone presses Ready (skipping anyone already ready); the last Ready deals."""
    for user in players:
        seat = state_of(room).seat_of(str(user.pk))
        if seat is not None and not seat.ready:
            table_services.table_ready(user=user, room=room)


def total_coins() -> int:
    """The sum of every account (wallets, house, mint): zero while no coin is created."""
    return Account.objects.aggregate(total=Sum("balance"))["total"] or 0


def house_balance() -> int:
    house = Account.objects.filter(kind=AccountKind.HOUSE).first()
    return 0 if house is None else house.balance


def settlements_of(round_pk: int) -> list[Transaction]:
    return list(
        Transaction.objects.filter(
            kind=TransactionKind.SETTLEMENT, reference=f"round:{round_pk}"
        ).order_by("pk")
    )

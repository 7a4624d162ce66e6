"""Bots, hosting and auto-arrange at every variant deck (RULES.md §12): one person fills a room
of each preset with bots and plays rounds to a settlement, the bots through the table's own
services (specials included), the person's hand played by the arrange timeout in one round
and hosted (托管) while it is away in another (auto-arrange of 13 of 16 cards, jokers,
copies), and support's recomputation clean after each.
"""

from __future__ import annotations

from typing import Any

import pytest
from django.db.models import Sum

from accounts.models import Account
from accounts.selectors import ledger_audit, wallet_balance
from games.history.audit import round_verify
from games.live import reads as table_reads
from games.live import services as table_services
from games.models import Round, RoundPlayer, RuleConfiguration
from games.rules.config import RuleConfig
from games.rules.presets import PRESETS
from games.table.state import Phase
from lobby.services import room_create
from tests.games.live import test_bots as tb
from tests.games.table_helpers import make_player, state_of, table_id

world = tb.world
pytestmark = pytest.mark.django_db(transaction=True)

FAST = {
    "ready_seconds": 30,
    "special_choice_seconds": 5,
    "arrange_seconds": 20,
    "deal_interval_ms": 10,
    "reveal_interval_ms": 100,
}
DECKS: dict[str, RuleConfig] = {p.id: p.config for p in PRESETS.values()}
DECKS["two_extra_suits"] = RuleConfig(extra_suits=2)


def play_round(world: tb.World, room: Any, person: Any, *, how: str) -> Round:
    """One round: the person submits the best suggestion (``submit``), lets the arrange
    timeout play for it (``timeout``), or is away and hosted (``hosted``: back before the
    comparison ends, so it is no escape)."""
    table_services.table_ready(user=person, room=room)
    tb.drive_bots(room)
    if state_of(room).phase is Phase.DEALING:
        tb.timeout(world, room)  # the deal is over
    if how == "hosted":
        table_services.table_disconnect(user=person, room=room)
    tb.drive_bots(room)
    if how == "hosted":
        while state_of(room).phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING):
            tb.timeout(world, room)  # a pending special choice waits for its deadline
        table_services.table_reconnect(user=person, room=room)
    elif how == "timeout":
        while state_of(room).phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING):
            tb.timeout(world, room)  # the person's hand is played for it
    else:
        state = state_of(room)
        seat = state.seat_of(str(person.pk))
        if seat.choosing:
            table_services.table_choose_special(user=person, room=room, play_special=False)
        hand = table_reads.table_resync(table_id=table_id(room), player=str(person.pk), since=None)[
            "snapshot"
        ]["you"]
        best = hand["suggestions"][0]
        table_services.table_submit(
            user=person,
            room=room,
            front=best["front"],
            middle=best["middle"],
            back=best["back"],
            unused=best.get("unused"),
        )
        tb.drive_bots(room)
    assert state_of(room).phase is Phase.COMPARING
    tb.timeout(world, room)
    assert state_of(room).phase is Phase.SETTLED
    return Round.objects.filter(table__room=room).order_by("-number").first()


@pytest.mark.parametrize("key", sorted(DECKS))
def test_a_person_and_bots_play_each_variant_to_a_settlement(world: tb.World, key: str) -> None:
    config = RuleConfig.from_dict({**DECKS[key].to_dict(), **FAST})
    seats = config.max_seats
    person = make_player(f"p{key}"[:30])
    rules = RuleConfiguration.from_engine(config, name=f"bots {key}")
    room = room_create(
        owner=person, name="Bots", base_score=1, seats=seats, rules=rules, bots=seats - 1
    )
    assert len(state_of(room).seats) == seats
    for number, how in ((1, "submit"), (2, "timeout"), (3, "hosted")):
        round_ = play_round(world, room, person, how=how)
        assert round_.number == number and round_.settled_at is not None
        rows = list(RoundPlayer.objects.filter(round=round_))
        assert len(rows) == seats
        assert all(len(r.cards.split()) == config.hand_size for r in rows)
        if config.spare_cards:
            assert all(len(r.unused.split()) == 3 for r in rows)
        mine = next(r for r in rows if r.user_id == person.pk)
        assert mine.auto == {"submit": "", "timeout": "timeout", "hosted": "hosted"}[how]
        assert not mine.escaped and mine.penalty == 0
        report = round_verify(round_=round_)
        assert report.mismatches == [] and report.commitment_ok
        net = {int(p["id"]): p["delta"] + p["penalty"] for p in round_.result["players"]}
        assert sum(net.values()) == 0
    assert ledger_audit().ok
    assert (Account.objects.aggregate(total=Sum("balance"))["total"] or 0) == 0
    assert wallet_balance(user=person) >= 0

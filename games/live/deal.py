"""Dealing a round of a locked table, and recording it.

When a command starts a round (``state.awaiting_deal``) the deal happens in the same
transaction: a deck shuffled by ``secrets.SystemRandom``, a fresh salt and a random starting
seat. The :class:`~games.models.Round` stores the rules snapshot and the deck's commitment;
the deck and salt themselves are stored only at settlement (``games.live.settle``), when the
``settled`` event reveals them.
"""

from __future__ import annotations

import secrets

from django.db import connection

from games.live.store import aware
from games.models import DuplicateMatch, Round, RoundPlayer, Table
from games.rules.cards import format_cards
from games.table import machine
from games.table.deck import seeded_deck, seeded_salt, seeded_start_seat
from games.table.events import Transition
from games.table.state import TableState
from shisanshui import fastjson

_ROUND = Round._meta.db_table
_ROUND_PLAYER = RoundPlayer._meta.db_table


def deal_round(*, table: Table, state: TableState, now: float) -> Transition:
    """Shuffle, pick the starting seat, deal, and record the round with its commitment.

    A duplicate match's table deals the match's deal of this number instead, derived from the
    match's secret seed (``games.table.deck.seeded_deck``): every table of the match gets the
    same deck, salt and starting seat."""
    positions = [s.position for s in state.round_seats]
    if state.lockstep:
        seed = (
            DuplicateMatch.objects.filter(rooms__pk=table.room_id)
            .values_list("seed", flat=True)
            .get()
        )
        deck = list(seeded_deck(state.config.deck.cards, seed, state.round_no))
        salt = seeded_salt(seed, state.round_no)
        start_seat = seeded_start_seat(positions, seed, state.round_no)
    else:
        rng = secrets.SystemRandom()
        deck = list(state.config.deck.cards)
        rng.shuffle(deck)
        salt = secrets.token_hex(16)
        start_seat = rng.choice(positions)
    dealt = machine.deal(state, deck=deck, salt=salt, start_seat=start_seat, now=now)
    new = dealt.state
    assert new.commitment is not None
    _record_round(table=table, state=new, now=now)
    return dealt


def _record_round(*, table: Table, state: TableState, now: float) -> None:
    """The dealt round and its players' rows: on PostgreSQL one statement (the ORM's two
    inserts cost more CPU than the rest of the deal's writes), elsewhere through the ORM."""
    assert state.commitment is not None
    players = [
        (int(s.player), s.position, " ".join(format_cards(s.hand or ()))) for s in state.round_seats
    ]
    if connection.vendor != "postgresql":
        round_ = Round.objects.create(
            table=table,
            number=state.round_no,
            config=state.config.to_dict(),
            commitment=state.commitment,
            started_at=aware(now),
        )
        RoundPlayer.objects.bulk_create(
            RoundPlayer(round=round_, user_id=user_id, position=position, cards=cards)
            for user_id, position, cards in players
        )
        return
    values = ", ".join(["(%s, %s, %s)"] * len(players))
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH dealt AS (INSERT INTO {_ROUND} (table_id, number, config, commitment, deck, "
            "salt, started_at) VALUES (%s, %s, %s, %s, '', '', %s) RETURNING id) "
            f"INSERT INTO {_ROUND_PLAYER} (round_id, user_id, position, cards, unused, special, "
            "auto, escaped, water, delta, penalty) "
            "SELECT dealt.id, p.user_id, p.position, p.cards, '', '', '', false, 0, 0, 0 "
            f"FROM dealt, (VALUES {values}) AS p (user_id, position, cards)",
            [
                table.pk,
                state.round_no,
                fastjson.dumps(state.config.to_dict()),
                state.commitment,
                connection.ops.adapt_datetimefield_value(aware(now)),
                *(value for player in players for value in player),
            ],
        )

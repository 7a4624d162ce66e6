"""Opening a duplicate match: its tables as lobby rooms, its seed, its first seat.

A duplicate match (`games.models.DuplicateMatch`) is 2 to 4 public rooms with the same rules,
base score and seats whose tables play the same deals in lockstep (`games.live.duplicate`
drives them). It is checked as a room is (`lobby.checks`) and its rooms are written as the
lobby writes any room (`lobby.store`), in one transaction.
"""

from __future__ import annotations

import secrets

from django.db import transaction
from django.utils.translation import gettext_lazy as _

from accounts.models import User
from games.live import store as table_store
from games.models import (
    MATCH_MAX_DEALS,
    MATCH_TABLES,
    DuplicateMatch,
    MatchStatus,
    RuleConfiguration,
)
from games.table.deck import seed_commitment
from lobby.checks import (
    check_creation_rate,
    check_not_guest,
    checked_base_score,
    checked_bot_level,
    checked_bots_wanted,
    checked_name,
    checked_seats,
    checked_table_terms,
    default_room_name,
    default_rules,
)
from lobby.models import NAME_MAX_LENGTH, BotLevel
from lobby.services import bots_seat, invite_issue
from lobby.store import ROOM_CREATED, room_insert, room_notify, seat_take
from shisanshui.errors import ClientError


class InvalidMatchTables(ClientError):
    code = "invalid_match_tables"
    template = _("A duplicate match has 2 to 4 tables, not %(tables)s.")


class InvalidMatchDeals(ClientError):
    code = "invalid_match_deals"
    template = _("A duplicate match has 1 to %(max)s deals, not %(deals)s.")


class TooManyMatches(ClientError):
    code = "too_many_matches"
    status = 409
    template = _(
        "You already have a duplicate match being played: one at a time. It ends after its "
        "last deal, or when nobody plays at its tables any more."
    )


def checked_match_tables(tables: object) -> int:
    if isinstance(tables, bool) or not isinstance(tables, int) or tables not in MATCH_TABLES:
        raise InvalidMatchTables(tables=str(tables)[:20])
    return tables


def checked_match_deals(deals: object) -> int:
    if isinstance(deals, bool) or not isinstance(deals, int) or not 1 <= deals <= MATCH_MAX_DEALS:
        raise InvalidMatchDeals(deals=str(deals)[:20], max=MATCH_MAX_DEALS)
    return deals


@transaction.atomic
def match_create(
    *,
    owner: User,
    base_score: int,
    seats: int,
    tables: int,
    deals: int,
    name: str | None = None,
    rules: RuleConfiguration | None = None,
    bots: bool = False,
    bot_level: str = BotLevel.STRONG,
) -> DuplicateMatch:
    """Open a duplicate match: ``tables`` public rooms "<name> · 1", "· 2", … with the same
    rules, base score and seats, whose tables play the same ``deals`` deals in lockstep; the
    creator sits at table 1, position 0. With ``bots``, every other seat of every table takes a
    bot at ``bot_level`` (a table of bots is "the field" a person's play is compared with).

    Checked as a room is (name, seats, base score, rules, entry minimum, not seated elsewhere),
    and: 2 to 4 tables (``invalid_match_tables``), 1 to MATCH_MAX_DEALS deals
    (``invalid_match_deals``), one playing match per owner (``too_many_matches``); opening one
    spends one room creation of the rate "lobby.room_create". Its rooms do not count against
    LOBBY_MAX_OPEN_ROOMS. The seed is drawn here (``secrets``), its commitment stored beside it.
    """
    check_not_guest(user=owner)
    tables = checked_match_tables(tables)
    deals = checked_match_deals(deals)
    name = checked_name(default_room_name(owner=owner) if name is None else name)
    suffix = f" · {tables}"
    name = name[: NAME_MAX_LENGTH - len(suffix)].rstrip()
    bot_level = checked_bot_level(bot_level)
    base_score = checked_base_score(base_score)
    seats = checked_seats(seats)
    bots = checked_bots_wanted(bots, seats=seats)
    rules = rules if rules is not None else default_rules()
    needed = checked_table_terms(owner=owner, rules=rules, base_score=base_score, seats=seats)
    if DuplicateMatch.objects.filter(owner=owner, status=MatchStatus.PLAYING).exists():
        raise TooManyMatches()
    check_creation_rate(owner=owner)

    seed = secrets.token_hex(32)
    match = DuplicateMatch.objects.create(
        name=name,
        owner=owner,
        rules=rules,
        base_score=base_score,
        seats=seats,
        tables=tables,
        deals=deals,
        seed=seed,
        seed_commitment=seed_commitment(seed),
    )
    rooms = []
    for number in range(1, tables + 1):
        room = room_insert(
            owner=owner,
            name=f"{name} · {number}",
            rules=rules,
            base_score=base_score,
            seats=seats,
            private=False,
            minimum=needed,
            bot_level=bot_level,
            match=match,
            match_table=number,
        )
        table_store.table_for_room(room=room)
        rooms.append(room)
    seat_take(room=rooms[0], user=owner, position=0)
    invite_issue(match=match)  # its share link (lobby.invites)
    for room in rooms:
        room_notify(event=ROOM_CREATED, room=room)
    if bots:
        for room in rooms:
            bots_seat(room=room, count=seats - (1 if room is rooms[0] else 0))
    return match

"""A settled round of 2 to 4 players, played through the table services (as in
tests/games/live/test_table_services.py, whose ``world`` fixture must be active: seeded shuffle,
recorded events and timers)."""

from __future__ import annotations

from accounts.models import User
from games.live import services as table_services
from games.models import Round, Table
from lobby.models import Room
from lobby.services import room_create, room_join
from tests.games.live.test_table_services import World, _player, settle, state_of, to_arranging
from tests.games.table_helpers import submit_best


def play_round(world: World, usernames: list[str], *, base_score: int = 100) -> Round:
    """Sign the players up, seat them in one room, play one round with the best arrangements
    (no special hand) and settle it; returns the round."""
    players = [_player(name) for name in usernames]
    room = room_create(
        owner=players[0], name="Audit table", base_score=base_score, seats=len(players)
    )
    for user in players[1:]:
        room_join(user=user, room_id=room.pk)
    for user in players:
        table_services.table_ready(user=user, room=room)
    to_arranging(world, room, players)  # type: ignore[arg-type]
    for user in players:
        if not state_of(room).seat_of(str(user.pk)).done:  # type: ignore[union-attr]
            submit_best(room, user)
    settle(world, room)
    round_ = Round.objects.get(table=Table.objects.get(room=room))
    assert round_.settled_at is not None
    return round_


def make_bot(user: User, *, zh: str, en: str) -> User:
    """Turn a player into a bot named ``zh`` / ``en`` (for pages that name players)."""
    user.is_bot = True
    user.first_name, user.last_name = zh, en
    user.save(update_fields=["is_bot", "first_name", "last_name"])
    return user


def room_of(round_: Round) -> Room:
    return round_.table.room

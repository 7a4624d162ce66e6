"""Why the table sent a player away, for a player who was not there to hear it
(games.live.sent_away): which removals leave a note, and a note is read once."""

from __future__ import annotations

import pytest
from django.core.cache import cache

from games.live import sent_away
from games.table import machine
from tests.games.table.helpers import Game


@pytest.fixture(autouse=True)
def _clean_cache() -> None:
    cache.delete_many([f"table-sent-away:{u}" for u in (1, 2, 3)])


def test_the_tables_reasons_leave_notes_a_players_own_leave_and_bots_do_not() -> None:
    game = Game(0, capacity=4)
    for position, player in enumerate(("1", "2", "3")):
        game.do(machine.sit, player=player, position=position)
    game.do(machine.sit, player="bot-9", position=3, bot=True)
    before = game.state
    left = game.do(machine.leave, position=1)  # player 2's own Leave: nothing to tell
    game.do(machine.ready, position=2)
    timed_out = game.fire()  # player 1's Ready deadline (player 3 is ready, the bot pressed)

    assert sent_away.reasons_sent_away(before, left.events) == {}
    assert sent_away.reasons_sent_away(before, timed_out.events) == {1: "ready_timeout"}


def test_a_disconnected_escaper_sent_away_at_the_ready_deadline_is_told_it_escaped() -> None:
    game = Game(0, capacity=2)
    game.do(machine.sit, player="1", position=0)
    game.do(machine.sit, player="2", position=1)
    game.start()
    game.do(machine.disconnect, position=0)
    game.submit_best(1)
    game.fire()  # the grace ends: the hosted hand is played, the comparison starts
    game.fire()  # the comparison ends: settled, and player 1, not back, escaped
    assert game.seat(0).escaped and game.seat(0).ready_deadline is not None
    game.do(machine.ready, position=1)
    before = game.state
    timed_out = game.fire()  # the Ready deadline

    assert sent_away.reasons_sent_away(before, timed_out.events) == {1: "escaped_disconnected"}


@pytest.mark.django_db(transaction=True)
def test_a_note_is_written_on_commit_read_once_and_only_by_its_player() -> None:
    from django.db import transaction

    with transaction.atomic():
        sent_away.record_on_commit(room_id=7, reasons={1: "ready_timeout"})
        assert sent_away.peek(user_id=1) is None  # not before the commit
    assert sent_away.peek(user_id=2) is None
    assert sent_away.peek(user_id=1) == {"room": 7, "reason": "ready_timeout"}
    assert sent_away.pop(user_id=1) == {"room": 7, "reason": "ready_timeout"}
    assert sent_away.pop(user_id=1) is None


@pytest.mark.django_db(transaction=True)
def test_a_rolled_back_removal_leaves_no_note() -> None:
    from django.db import transaction

    with pytest.raises(RuntimeError), transaction.atomic():
        sent_away.record_on_commit(room_id=7, reasons={1: "ready_timeout"})
        raise RuntimeError
    assert sent_away.peek(user_id=1) is None


@pytest.mark.django_db(transaction=True)
def test_the_lobby_tells_the_players_own_note_once_whatever_a_link_says() -> None:
    from django.test import Client

    from tests.games.table_helpers import make_player

    alice, bob = make_player("alice"), make_player("bob")
    cache.set(f"table-sent-away:{alice.pk}", {"room": 1, "reason": "ready_timeout"})
    client = Client()
    client.force_login(alice)

    page = client.get("/lobby/?left=left").content.decode()  # a link cannot say otherwise
    assert "did not press Ready in time" in page and "You left the table." not in page
    assert "did not press Ready in time" not in client.get("/lobby/").content.decode()
    client.force_login(bob)  # nobody else hears of it
    cache.set(f"table-sent-away:{alice.pk}", {"room": 1, "reason": "ready_timeout"})
    assert "did not press Ready in time" not in client.get("/lobby/").content.decode()
    assert sent_away.peek(user_id=alice.pk) is not None
    cache.delete(f"table-sent-away:{alice.pk}")

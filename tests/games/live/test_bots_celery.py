"""A person and bots play a round through a real Celery worker on the real Redis broker: the
bots' tasks (Ready, special choice, arrangement) and the table's timeouts run in the worker,
the person plays through the table's services, and the round settles once.

Same harness as ``test_celery_integration``: a worker process on a queue private to the test,
talking to the test database (the tests are transactional). Every wait has a deadline.
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from django.conf import settings

from accounts.models import User
from accounts.selectors import wallet_balance
from games.live import tasks
from games.models import RoundPlayer
from games.table.state import Phase
from lobby.models import Seat
from lobby.services import room_create, room_leave
from tests.games.live import test_celery_integration as integration
from tests.games.live.test_bots import submit_best
from tests.games.table_helpers import fast_rules, make_player, state_of

BROKER = str(getattr(settings, "CELERY_BROKER_URL", ""))
# The bots' delays in the worker: a fifth of the normal pace, so the test is quick but the
# tasks still wait.
SCALE = "0.2"
ARRANGE_SECONDS = 60

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(
        not BROKER.startswith("redis://"), reason="needs REDIS_URL (a real Redis broker)"
    ),
]

# The integration tests' fixture: a private queue and the workers started on it.
celery = integration.celery


def test_a_person_and_bots_play_a_round_through_the_worker(
    celery: integration.Celery, monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.BOT_DELAY_SCALE = float(SCALE)
    send = tasks.bot_act.apply_async

    def send_to_queue(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("queue", celery.queue)
        return send(*args, **kwargs)

    monkeypatch.setattr(tasks.bot_act, "apply_async", send_to_queue)
    celery.env["BOT_DELAY_SCALE"] = SCALE
    rules = fast_rules(arrange_seconds=ARRANGE_SECONDS, special_choice_seconds=20)
    alice = make_player("botsa")
    room = room_create(owner=alice, name="Solo", base_score=10, seats=4, rules=rules, bots=3)
    bots = list(User.objects.filter(is_bot=True, pk__in=Seat.objects.values("user")))
    assert len(bots) == 3
    players = [alice, *bots]
    before = {u.pk: wallet_balance(user=u) for u in players}
    celery.start_worker()

    from games.live import services as table_services

    table_services.table_ready(user=alice, room=room)
    integration.wait_until(
        "the bots to press Ready and the cards to be dealt",
        lambda: state_of(room).phase in (Phase.SPECIAL_CHOICE, Phase.ARRANGING),
        seconds=20,
    )
    started = time.time()
    submit_best(room, alice)
    integration.wait_until(
        "the bots to arrange and the round to settle",
        lambda: integration.settled_round(room),
        seconds=40,
    )

    # The bots played well before the arrange deadline: nobody was played for by a timeout.
    assert time.time() - started < ARRANGE_SECONDS / 2
    round_ = integration.assert_settled_once(room, players, before)
    rows = RoundPlayer.objects.filter(round=round_)
    assert len(rows) == 4 and all(row.auto == "" for row in rows)
    assert state_of(room).phase is Phase.SETTLED

    room_leave(user=alice)
    assert not Seat.objects.filter(room=room).exists()  # the bots left with her

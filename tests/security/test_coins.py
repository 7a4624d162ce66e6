"""Attacks on the coins, against the live platform (points 3 and 4).

- The freeroll: a player below the room's entry minimum presses Ready round after round
  (losses are capped by the balance, wins are not). Before: accepted. Now: refused with
  ``insufficient_coins``, and nothing happens at the table.
- The dump: one account loses on purpose to a friend at a private two-seat table, round after
  round. Before: nothing flagged it. Now: the worker's collusion scan reports the pair, loser
  to winner.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import websockets
from celery import Celery

from accounts.economy import economy_settings
from accounts.models import CollusionFlag, User
from accounts.selectors import wallet_balance
from accounts.services import wallet_admin_adjust
from benchmarks.seating import open_table
from benchmarks.table_client import TableClient, cookie_header
from games.management.commands.load_test_rules import LOAD_TEST_RULES
from games.models import Table
from lobby.models import Room
from tests.games.table_helpers import fast_rules, make_player
from tests.live_server import LivePlatform, session_cookie_for, wait_until

SECONDS = 60


def test_a_player_below_the_entry_minimum_cannot_press_ready(live_platform: LivePlatform) -> None:
    rules = fast_rules(name="Security freeroll").pk
    poor, rich = make_player("sec-poor"), make_player("sec-rich")
    cookies = [(u.username, session_cookie_for(u)) for u in (poor, rich)]
    ws_base, origin = live_platform.ws_url("").rstrip("/"), live_platform.url
    room_id = asyncio.run(open_table(ws_base, origin, cookies, rules, 2))
    room = Room.objects.get(pk=room_id)
    staff = User.objects.create_user("sec-staff", password="not-used-1", is_staff=True)
    # The poor player sat down with enough, then lost it elsewhere (here: a support debit).
    debit = room.entry_minimum - wallet_balance(user=poor) - 1
    wallet_admin_adjust(
        user=poor, amount=debit, reason="test", created_by=staff, idempotency_key="sec-debit"
    )
    version = Table.objects.get(room=room).version

    async def press_ready() -> list[dict[str, Any]]:
        headers = {"Cookie": cookie_header(cookies[0][1]), "Origin": origin}
        url = live_platform.ws_url(f"ws/table/{room_id}/")
        async with websockets.connect(url, additional_headers=headers) as ws:
            replies = []
            for n in range(3):  # round after round: every Ready is refused
                await ws.send(json.dumps({"type": "ready", "id": f"ready-{n}"}))
                while True:
                    frame = json.loads(await asyncio.wait_for(ws.recv(), SECONDS))
                    if frame.get("id") == f"ready-{n}":
                        replies.append(frame)
                        break
            return replies

    for reply in asyncio.run(press_ready()):
        assert reply["type"] == "error", reply
        assert reply["error"]["code"] == "insufficient_coins"
        assert reply["error"]["minimum"] == room.entry_minimum
        assert reply["error"]["balance"] == room.entry_minimum - 1
    # Only the socket's own reconnect events, no Ready, no round.
    table = Table.objects.get(room=room)
    assert not table.events.filter(version__gt=version, type="ready").exists()
    assert table.phase == "waiting"


class Dumper(TableClient):
    """A client that always plays its worst foul-free arrangement (the last suggestion)."""

    def _arrangement(self) -> dict[str, list[str]]:
        if self.suggestions:
            worst = self.suggestions[-1]
            return {row: worst[row] for row in ("front", "middle", "back")}
        return super()._arrangement()


def test_losing_on_purpose_to_a_friend_is_flagged(live_platform: LivePlatform) -> None:
    rounds = 8
    settings = economy_settings()
    settings.collusion_min_rounds = rounds - 2
    settings.collusion_min_flow = 1
    settings.collusion_min_share_percent = 60
    settings.save()
    rules = fast_rules(name="Security dump", **LOAD_TEST_RULES).pk
    dumper, friend = make_player("sec-dumper"), make_player("sec-friend")
    cookies = [(u.username, session_cookie_for(u)) for u in (dumper, friend)]
    ws_base, origin = live_platform.ws_url("").rstrip("/"), live_platform.url

    async def play() -> None:
        room = await open_table(ws_base, origin, cookies, rules, 2)
        clients = [
            Dumper(ws_url=ws_base, room_id=room, cookie=cookies[0][1], origin=origin, name="d"),
            TableClient(ws_url=ws_base, room_id=room, cookie=cookies[1][1], origin=origin),
        ]
        await asyncio.gather(*(c.play(rounds=rounds, seconds=240) for c in clients))

    asyncio.run(play())
    # Not the process's current app: the shared tasks of later tests must keep the test broker.
    Celery(broker=live_platform.redis_url, set_as_current=False).send_task(
        "accounts.tasks.collusion_scan"
    )
    flag = wait_until(
        "the pair to be flagged",
        lambda: CollusionFlag.objects.filter(loser=dumper, winner=friend).first(),
        seconds=SECONDS,
    )
    assert flag.shared_rounds >= rounds - 2 and flag.flow > 0 and flag.share_percent >= 60
    assert not CollusionFlag.objects.filter(loser=friend, winner=dumper).exists()

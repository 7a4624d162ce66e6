"""Fault tests: a round survives Redis, the Celery worker or the web process restarting.

Real processes (tests.live_server): players sit at a table through the lobby's socket, then
play over real WebSockets with benchmarks.table_client, which reconnects with backoff and
resyncs (``hello {since}``) after a drop or a silence. Mid-round a process is killed
(SIGKILL) and started again; the round must then settle exactly once — one settlement
transaction (``round:<pk>:settlement``), no coin created or lost — and every client must have
seen the same result as the ledger. Every wait has a deadline: a failure fails, never hangs.
"""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Awaitable, Callable

import pytest

from benchmarks.seating import open_table
from benchmarks.table_client import PLAY_PHASES, TableClient
from games.models import Round, RoundPlayer, Table
from tests.games.table_helpers import fast_rules, make_player, total_coins
from tests.live.checks import assert_round_settled_once, wait_for
from tests.live_server import LivePlatform, session_cookie_for

PLAYERS = 3
ROUND_SECONDS = 90  # the whole scenario's deadline


Player = tuple[str, dict[str, str]]  # a name and its session cookie


def players_and_rules(prefix: str, **clocks: int) -> tuple[list[Player], int]:
    """Players with coins and logged-in sessions, and fast rules with these clocks."""
    rules = fast_rules(name=f"Faults {prefix}", **clocks)
    users = [make_player(f"{prefix}{i}") for i in range(PLAYERS)]
    return [(user.username, session_cookie_for(user)) for user in users], rules.pk


async def play_with_fault(
    platform: LivePlatform,
    players: list[Player],
    rules: int,
    fault: Callable[[list[TableClient]], Awaitable[None]],
) -> tuple[int, list[TableClient]]:
    """Seat the players, start one round with every client holding its hand, run ``fault``,
    and wait for every client to see the round settle. Returns the room id and the clients."""
    ws_base, origin = platform.ws_url("").rstrip("/"), platform.url
    room = await open_table(ws_base, origin, players, rules, PLAYERS)
    clients = [
        TableClient(ws_url=ws_base, room_id=room, cookie=cookie, origin=origin, name=name)
        for name, cookie in players
    ]
    for client in clients:
        client.hold_play = True
    tasks = [asyncio.create_task(c.play(rounds=1, seconds=ROUND_SECONDS)) for c in clients]
    try:
        await wait_for(
            "every client to hold its hand",
            lambda: all(c.phase in PLAY_PHASES and c.hand for c in clients),
        )
        await fault(clients)
        await asyncio.wait_for(asyncio.gather(*tasks), ROUND_SECONDS)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    return room, clients


def assert_settled_once(room_id: int, clients: list[TableClient]) -> Round:
    """One round, settled by one ledger transaction that every client saw; coins conserved."""
    rounds = list(Round.objects.filter(table=Table.objects.get(room_id=room_id)))
    assert len(rounds) == 1
    round_ = rounds[0]
    assert_round_settled_once(round_, clients)
    assert total_coins() == 0  # wallets + house + mint: no coin created or lost
    return round_


@pytest.mark.parametrize(
    "live_platform", [{"CHANNEL_LAYER": "pubsub"}, {"CHANNEL_LAYER": "core"}], indirect=True
)
def test_redis_restarted_while_arranging_the_round_settles_once(
    live_platform: LivePlatform,
) -> None:
    players, rules = players_and_rules("redis", arrange_seconds=60, special_choice_seconds=60)

    async def restart_redis(clients: list[TableClient]) -> None:
        reconnects = [c.stats.reconnects for c in clients]
        await asyncio.to_thread(live_platform.restart, live_platform.redis, kill=True)
        await asyncio.sleep(2)
        if live_platform.extra_env.get("CHANNEL_LAYER") == "core":
            # The core layer's groups lived in the Redis that restarted: a socket hears its
            # groups again only once its receive has failed on the dead connection, closing
            # it, and its client has reconnected and joined them again. The pub/sub layer's
            # connections reconnect and subscribe again by themselves (no socket closes).
            pairs = list(zip(clients, reconnects, strict=True))
            await wait_for(
                "every client to reconnect", lambda: all(c.stats.reconnects > n for c, n in pairs)
            )
        if not live_platform.worker.running:
            # kombu 5.7 + redis-py 8: a worker holding an unacknowledged (ETA) task while the
            # broker is down can die on "Unrecoverable error: AttributeError('NoneType' object
            # has no attribute 'hostname')" (docs/load-and-faults.md). Production runs the
            # worker under a supervisor that restarts it; do what it would do.
            warnings.warn("the Celery worker died when Redis restarted", stacklevel=1)
            await asyncio.to_thread(live_platform.worker.start)
        before.update({id(c): c.stats.broadcasts for c in clients})
        for client in clients:
            client.hold_play = False  # everyone submits now; the broadcasts go through Redis

    before: dict[int, int] = {}
    room, clients = asyncio.run(play_with_fault(live_platform, players, rules, restart_redis))
    round_ = assert_settled_once(room, clients)
    # The channel layer delivers again after the restart (not only the clients' resyncs).
    assert all(c.stats.broadcasts > before[id(c)] for c in clients)
    assert set(RoundPlayer.objects.filter(round=round_).values_list("auto", flat=True)) == {""}
    assert all(not c.stats.errors and not c.stats.timeouts for c in clients)


def test_worker_killed_mid_round_the_restarted_worker_settles_it_once(
    live_platform: LivePlatform,
) -> None:
    players, rules = players_and_rules("worker", arrange_seconds=2, special_choice_seconds=1)

    async def kill_worker(clients: list[TableClient]) -> None:
        # Nobody acts: the arrange deadline passes while no worker runs. The deadline is the
        # table row's: the restarted worker's poller (or its beat's sweeper) settles the round.
        live_platform.worker.kill()
        await asyncio.sleep(3)
        await asyncio.to_thread(live_platform.worker.start)

    room, clients = asyncio.run(play_with_fault(live_platform, players, rules, kill_worker))
    round_ = assert_settled_once(room, clients)
    autos = set(RoundPlayer.objects.filter(round=round_).values_list("auto", flat=True))
    assert autos == {"timeout"}
    assert all(not c.stats.errors and not c.stats.timeouts for c in clients)


def test_web_restarted_mid_round_players_reconnect_and_finish(
    live_platform: LivePlatform,
) -> None:
    players, rules = players_and_rules("web", arrange_seconds=60, special_choice_seconds=60)

    async def restart_web(clients: list[TableClient]) -> None:
        await asyncio.to_thread(live_platform.restart, live_platform.web, kill=True)
        for client in clients:
            client.hold_play = False

    room, clients = asyncio.run(play_with_fault(live_platform, players, rules, restart_web))
    round_ = assert_settled_once(room, clients)
    # They played their own hands after reconnecting: nobody was hosted or timed out.
    assert set(RoundPlayer.objects.filter(round=round_).values_list("auto", flat=True)) == {""}
    assert all(c.stats.reconnects + c.stats.connect_failures >= 1 for c in clients)
    assert all(not c.stats.errors and not c.stats.timeouts for c in clients)

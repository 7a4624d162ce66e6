"""The platform as a cluster: daphne processes behind HAProxy, one Redis, one PostgreSQL.

``live_cluster`` (tests.live_server.LiveCluster) runs two daphne processes behind the balancer
`make run-cluster` runs (deploy/haproxy.cfg.template: round robin, no sticky sessions; a
table's sockets hashed by their path onto one process while it is up), a Celery worker with
beat and a private Redis, on the test database. The players play real rounds with
benchmarks.table_client on the "Load test" rules (manage.py load_test_rules):

- the seats of one table talk to different daphne processes: every event crosses processes
  through the Redis channel layer, and each round settles once, seen alike by every seat;
- one daphne process is killed (SIGKILL) mid-round while half the table's seats reach it
  through the balancer and half talk to the other process: the balancer's players reconnect
  through it to the other one, the others never notice, and the round settles exactly once;
  the process restarted rejoins rotation;
- a page and lobby sockets go through the balancer, spread over the processes.

Every wait has a deadline: a failure fails, never hangs.
"""

from __future__ import annotations

import asyncio
import io
import json
import urllib.request

import websockets
from django.core.management import call_command

from accounts.selectors import ledger_audit
from benchmarks.seating import open_table
from benchmarks.table_client import PLAY_PHASES, TableClient, cookie_header
from games.models import Round, RoundPlayer, Table
from tests.games.table_helpers import make_player, total_coins
from tests.live.checks import assert_round_settled_once, wait_for
from tests.live_server import LiveCluster, session_cookie_for, wait_until

PLAYERS = 4
ROUNDS = 3
PLAY_SECONDS = 60  # a scenario's deadline
# Longer than any scenario: a client that hears nothing asks again (``hello {since}``) only
# after this long, so the rounds can only advance on the events the channel layer carries.
NO_RESYNC_SECONDS = 120.0

Player = tuple[str, dict[str, str]]  # a name and its session cookie


def load_test_rules() -> int:
    """The "Load test" rule configuration (no pacing, short clocks), created once."""
    out = io.StringIO()
    call_command("load_test_rules", stdout=out)
    return int(out.getvalue().strip())


def players(prefix: str) -> list[Player]:
    users = [make_player(f"{prefix}{i}") for i in range(PLAYERS)]
    return [(user.username, session_cookie_for(user)) for user in users]


def spread_over(cluster: LiveCluster, total: int) -> list[int]:
    """Waits until the balancer carries ``total`` client connections to the daphne processes
    (HAProxy's own count, per server); returns them per process."""
    return list(
        wait_until(
            f"the balancer to carry {total} connections",
            lambda: (counts := cluster.server_sessions()) and sum(counts) == total and counts,
            seconds=10,
        )
    )


def assert_coins_conserved() -> None:
    audit = ledger_audit()
    assert audit.ok, audit
    assert total_coins() == 0  # wallets + house + mint: no coin created or lost


def test_the_seats_of_a_table_on_different_web_processes_play_rounds(
    live_cluster: LiveCluster,
) -> None:
    rules = load_test_rules()
    seated = players("split")
    room = asyncio.run(
        open_table(live_cluster.ws_url("").rstrip("/"), live_cluster.url, seated, rules, PLAYERS)
    )
    # Seat i talks to daphne process i mod 2, straight to its port; the pages' origin is the
    # balancer's, as in a browser.
    clients = [
        TableClient(
            ws_url=live_cluster.web_ws_url(i % len(live_cluster.webs), "").rstrip("/"),
            room_id=room,
            cookie=cookie,
            origin=live_cluster.url,
            name=name,
            silence_seconds=NO_RESYNC_SECONDS,
        )
        for i, (name, cookie) in enumerate(seated)
    ]
    assert len({client.url for client in clients}) == len(live_cluster.webs) == 2

    async def play() -> None:
        await asyncio.gather(*(c.play(rounds=ROUNDS, seconds=PLAY_SECONDS) for c in clients))

    asyncio.run(play())

    table = Table.objects.get(room_id=room)
    rounds = list(Round.objects.filter(table=table).order_by("number"))
    assert [r.number for r in rounds] == [1, 2, 3]
    for round_ in rounds:
        assert_round_settled_once(round_, clients)
    assert_coins_conserved()
    for client in clients:
        assert client.rounds_played == ROUNDS
        # Everything arrived as it happened, over one connection: no resync, no reconnect.
        assert (client.stats.resyncs, client.stats.reconnects) == (0, 0), client.stats
        assert client.stats.connect_failures == 0 and not client.stats.errors, client.stats
        assert client.stats.broadcasts > 0


def test_a_web_process_killed_mid_round_its_players_reconnect_and_it_settles_once(
    live_cluster: LiveCluster,
) -> None:
    rules = load_test_rules()
    seated = players("kill")
    ws_base, origin = live_cluster.ws_url("").rstrip("/"), live_cluster.url
    room = asyncio.run(open_table(ws_base, origin, seated, rules, PLAYERS))
    half = PLAYERS // 2

    def client(ws_url: str, name: str, cookie: dict[str, str]) -> TableClient:
        made = TableClient(ws_url=ws_url, room_id=room, cookie=cookie, origin=origin, name=name)
        made.hold_play = True  # Ready, then hold the hand: the round stays open
        return made

    # The first half through the balancer: the table's path puts both on one process.
    balanced = [client(ws_base, name, cookie) for name, cookie in seated[:half]]
    clients = list(balanced)
    before_kill: list[int] = []

    async def play() -> None:
        tasks = [asyncio.create_task(c.play(rounds=1, seconds=PLAY_SECONDS)) for c in balanced]
        try:
            before_kill.extend(await asyncio.to_thread(spread_over, live_cluster, half))
            held = before_kill.index(half)
            # The other half straight to the other process: the table spans both.
            direct = live_cluster.web_ws_url(1 - held, "").rstrip("/")
            others = [client(direct, name, cookie) for name, cookie in seated[half:]]
            clients.extend(others)
            tasks.extend(
                asyncio.create_task(c.play(rounds=1, seconds=PLAY_SECONDS)) for c in others
            )
            await wait_for(
                "every client to hold its hand",
                lambda: all(c.phase in PLAY_PHASES and c.hand for c in clients),
            )
            await asyncio.to_thread(live_cluster.webs[held].kill)
            for c in clients:
                c.hold_play = False
            await asyncio.wait_for(asyncio.gather(*tasks), PLAY_SECONDS)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    asyncio.run(play())

    # Table affinity: the balancer put the table's sockets on one process, not one each.
    assert sorted(before_kill) == [0, half], before_kill
    killed = before_kill.index(half)
    # Exactly the players of the killed process lost their socket and came back (through
    # the balancer, to the other process); the others kept theirs.
    assert all(c.stats.unexpected_closes == 1 and c.stats.reconnects >= 1 for c in balanced)
    assert all(c.stats.unexpected_closes == c.stats.reconnects == 0 for c in clients[half:])

    rounds = list(Round.objects.filter(table=Table.objects.get(room_id=room)))
    assert len(rounds) == 1
    assert_round_settled_once(rounds[0], clients)
    assert_coins_conserved()
    # Everyone played their own hand after the reconnect: nobody was hosted or timed out.
    assert set(RoundPlayer.objects.filter(round=rounds[0]).values_list("auto", flat=True)) == {""}
    assert all(not c.stats.errors and not c.stats.timeouts for c in clients)

    # The balancer noticed; the process started again rejoins the rotation.
    live_cluster.wait_for_server(killed, "DOWN")
    live_cluster.webs[killed].start()
    live_cluster.wait_for_server(killed, "UP")
    assert asyncio.run(lobby_snapshots(live_cluster, seated[0][1], 2)) == ["snapshot"] * 2


async def lobby_snapshots(cluster: LiveCluster, cookie: dict[str, str], count: int) -> list[str]:
    """Opens ``count`` lobby sockets through the balancer, one after the other, and checks
    that round robin spread them evenly over the web processes; returns the type of each
    socket's first frame."""
    headers = {"Cookie": cookie_header(cookie), "Origin": cluster.url}
    sockets = [
        await websockets.connect(
            cluster.ws_url("ws/lobby/"), additional_headers=headers, open_timeout=10
        )
        for _ in range(count)
    ]
    try:
        frames = [json.loads(await asyncio.wait_for(s.recv(), 10)) for s in sockets]
        counts = await asyncio.to_thread(spread_over, cluster, count)
        assert all(n == count // len(counts) for n in counts), counts  # round robin
        return [frame["type"] for frame in frames]
    finally:
        for s in sockets:
            await s.close()


def test_pages_and_sockets_go_through_the_balancer(live_cluster: LiveCluster) -> None:
    cookie = players("www")[0][1]
    # The same session's sockets, one after the other, land on both processes (no stickiness).
    assert asyncio.run(lobby_snapshots(live_cluster, cookie, 2)) == ["snapshot"] * 2

    with urllib.request.urlopen(f"{live_cluster.url}/", timeout=10) as response:
        assert response.status == 200
        assert "十三水" in response.read().decode()
    with urllib.request.urlopen(f"{live_cluster.url}/healthz", timeout=10) as response:
        assert json.loads(response.read())["checks"] == {
            "database": "ok",
            "redis": "ok",
            "celery": "ok",
        }

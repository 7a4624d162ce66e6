"""The CPU of a round's table commands in one process, without sockets: the services' share.

    python -m benchmarks.services                  # 4 seats, 200 rounds, 3 runs
    python -m benchmarks.services --profile 30     # and the top 30 functions (cProfile, CPU time)
    python -m benchmarks.services --leaves 50      # and 50 times: the four leave, then sit down
    python -m benchmarks.services --standings 16000  # and the standings job over 16,000 rounds
    python -m benchmarks.services --bots 3         # one person and three bots at the table

The table services (``table_ready``, ``table_submit`` …) alone, without frames, consumers and
channel layer, so that a change to the hot path is judged in seconds and without the load
script's noise: on a fresh database ``shisanshui_services`` (the PostgreSQL server of
``DATABASE_URL``) four players call the services directly; prints the CPU-ms per settled round
of this process and of its PostgreSQL backend, and the statements per round. The commands
publish to Redis (``BENCH_REDIS_URL``, default redis://127.0.0.1:6379/15, flushed) as in production.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import os
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks import capacity

ROOT = Path(__file__).resolve().parent.parent
DATABASE = "shisanshui_services"
SEATS = 4


def backend_cpu_ms(pid: int) -> float:
    """The CPU time of one local PostgreSQL backend, from /proc."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=200, help="rounds per run (200)")
    parser.add_argument("--runs", type=int, default=3, help="runs, the median printed (3)")
    parser.add_argument("--profile", type=int, default=0, help="print the top N functions")
    parser.add_argument(
        "--leaves", type=int, default=0, help="per run, N times: leave, sit down again (0)"
    )
    parser.add_argument(
        "--standings", type=int, default=0, help="then the standings job over N rounds (0)"
    )
    parser.add_argument(
        "--bots", type=int, default=0, help=f"of the {SEATS} players, how many are bots (0)"
    )
    args = parser.parse_args(argv)
    if args.rounds < 1 or args.runs < 1 or args.leaves < 0 or args.standings < 0:
        parser.error("--rounds and --runs must be at least 1, --leaves and --standings at least 0")
    if not 0 <= args.bots < SEATS:
        parser.error(f"--bots must be from 0 to {SEATS - 1}: a table needs a person")

    url = capacity.database_url(DATABASE)
    capacity.empty_database(url)
    os.environ.update(
        DJANGO_SETTINGS_MODULE="shisanshui.settings.local",
        DATABASE_URL=url,
        REDIS_URL=os.environ.get("BENCH_REDIS_URL", "redis://127.0.0.1:6379/15"),
        DEBUG="false",
        LOG_LEVEL="WARNING",
    )
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    call_command("load_test_rules", verbosity=0, stdout=io.StringIO())  # prints its id
    import redis
    from django.db import connection

    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    from accounts.selectors import ledger_audit
    from accounts.services import user_signup
    from games.live import services as table_services
    from games.live import store as table_store
    from games.models import RuleConfiguration
    from games.rules.arrange import best_arrangement
    from games.table.state import Phase, TableState, arranged_json
    from lobby.services import room_create, room_join
    from shisanshui import publish

    rules = RuleConfiguration.objects.get(name="Load test")
    users = [user_signup(username=f"sb_{i}", password=None) for i in range(SEATS)]
    for bot in users[SEATS - args.bots :]:  # seated as bots: no suggestions dealt to them
        bot.is_bot = True
        bot.save(update_fields=["is_bot"])
    room = room_create(owner=users[0], name="Bench", base_score=1, seats=SEATS, rules=rules)
    for user in users[1:]:
        room_join(user=user, room_id=room.pk)

    def sit_down() -> None:
        seated = TableState.from_dict(table_store.table_for_room(room=room).state)
        for user in users:  # joining the room seats a player at its table
            if seated.seat_of(str(user.pk)) is None:
                table_services.table_sit(user=user, room=room)

    sit_down()
    connection.ensure_connection()
    backend = connection.connection.info.backend_pid

    def state() -> TableState:
        return TableState.from_dict(table_store.table_for_room(room=room).state)

    loop = asyncio.new_event_loop()

    def command(service: Any, user: Any, **fields: Any) -> tuple[float, float, int]:
        """One command as the table's socket runs it: the service with its messages kept in
        an outbox, then published from an event loop (one pipeline), then its later messages.
        Its CPU seconds, its backend's, and its queries."""
        counted = [0]

        def count(execute: Any, sql: Any, params: Any, many: Any, context: Any) -> Any:
            counted[0] += 1
            return execute(sql, params, many, context)

        b = backend_cpu_ms(backend)
        t = time.process_time()
        with connection.execute_wrapper(count), publish.outbox() as box:
            service(user=user, room=room, **fields)
        loop.run_until_complete(publish.apublish(box))
        # … then what waited for them (the dealt hands' suggestions), on this thread: the
        # process CPU counts it either way.
        loop.run_until_complete(publish.apublish(box.run_later()))
        cpu = time.process_time() - t
        return cpu, (backend_cpu_ms(backend) - b) / 1000, counted[0]

    def play(rounds: int) -> tuple[float, float, int]:
        """CPU seconds of this process and of the backend in the services, and queries.

        With the "Load test" rules every seat presses Ready, then submits the engine's best
        arrangement (computed outside the measured time; with ``--bots K`` the last K players
        are bots, whose seats are dealt no suggestions). The deadlines are the table row's,
        which no poller reads here: only the players' commands move the rounds."""
        spent: list[tuple[float, float, int]] = []
        for _ in range(rounds):
            s = state()
            if s.phase is not Phase.WAITING and s.phase is not Phase.SETTLED:
                raise SystemExit(f"a round did not settle: {s.phase}")
            spent += [command(table_services.table_ready, user) for user in users]
            s = state()
            seats = [s.seat_of(str(user.pk)) for user in users]
            rows = [arranged_json(best_arrangement(seat.hand, s.config)) for seat in seats]
            for user, seat, arranged in zip(users, seats, rows, strict=True):
                if s.phase is Phase.SPECIAL_CHOICE and seat.special:
                    spent.append(
                        command(table_services.table_choose_special, user, play_special=False)
                    )
                spent.append(command(table_services.table_submit, user, **arranged))
        cpu, pg, queries = (sum(column) for column in zip(*spent, strict=True))
        return cpu, pg, int(queries)

    def leave(times: int) -> tuple[float, float, int]:
        """CPU seconds of this process and of the backend in the leaves, and queries: ``times``
        times the four players leave the table one by one (``table_leave``, which frees their
        lobby seats and tells the lobby), then sit down again (not measured)."""
        spent: list[tuple[float, float, int]] = []
        for _ in range(times):
            spent += [command(table_services.table_leave, user) for user in users]
            for user in users:
                room_join(user=user, room_id=room.pk)
            sit_down()
        cpu, pg, queries = (sum(column) for column in zip(*spent, strict=True))
        return cpu, pg, int(queries)

    play(10)  # warm: imports, caches, the first plans
    if args.leaves:
        leave(3)
    leaving = []
    figures = []
    for run in range(args.runs):
        profiler = cProfile.Profile(time.process_time) if args.profile and run == 0 else None
        if profiler:
            profiler.enable()
        cpu, pg, queries = play(args.rounds)
        if profiler:
            profiler.disable()
        figures.append((cpu * 1000 / args.rounds, pg * 1000 / args.rounds))
        print(
            f"run {run + 1}: {args.rounds} rounds, services {cpu * 1000 / args.rounds:.2f} "
            f"CPU-ms/round, PostgreSQL backend {pg * 1000 / args.rounds:.2f} CPU-ms/round, "
            f"{queries / args.rounds:.1f} statements/round (BEGIN and COMMIT not counted)"
            + (" (profiled)" if profiler else ""),
            flush=True,
        )
        if args.leaves:
            cpu, pg, queries = leave(args.leaves)
            count = args.leaves * SEATS
            leaving.append((cpu * 1000 / count, pg * 1000 / count))
            print(
                f"       {count} leaves, each: services {cpu * 1000 / count:.2f} CPU-ms, "
                f"PostgreSQL backend {pg * 1000 / count:.2f} CPU-ms, "
                f"{queries / count:.1f} statements (BEGIN and COMMIT not counted)",
                flush=True,
            )
        if profiler:
            pstats.Stats(profiler).sort_stats("cumulative").print_stats(args.profile)
            pstats.Stats(profiler).sort_stats("tottime").print_stats(args.profile)
    measured = figures[1:] if args.profile and len(figures) > 1 else figures
    print(
        f"median: services {statistics.median(f[0] for f in measured):.2f} CPU-ms/round, "
        f"PostgreSQL backend {statistics.median(f[1] for f in measured):.2f} CPU-ms/round"
    )
    if leaving:
        print(
            f"median: a leave {statistics.median(f[0] for f in leaving):.2f} CPU-ms, "
            f"PostgreSQL backend {statistics.median(f[1] for f in leaving):.2f} CPU-ms"
        )
    if args.standings:
        standings_figures(args.standings, backend)
    audit = ledger_audit()
    print("ledger_audit:", "ok" if audit.ok else audit)
    redis.Redis.from_url(os.environ["REDIS_URL"]).flushdb()
    loop.close()
    connection.close()
    return 0 if audit.ok else 1


def standings_figures(rounds: int, backend: int) -> None:
    """Copy the settled rounds (their players too) until ``rounds`` exist, then time the
    standings job (``games.history.standings.compute_standings``, on the beat every
    STANDINGS_SECONDS) both ways, in one statement (PostgreSQL's way) and in Python (the other
    databases'), with this process's CPU and the backend's: a full recount, a run that counts
    the newest 1/16 of the rounds (as if settled since the last run), and a run with nothing
    new."""
    from django.db import connection, transaction

    from games.history import standings
    from games.models import Round, RoundPlayer

    settled = list(Round.objects.filter(settled_at__isnull=False).order_by("pk"))
    players: dict[int, list[RoundPlayer]] = {}
    for player in RoundPlayer.objects.filter(round__in=settled):
        players.setdefault(player.round_id, []).append(player)
    last = max(r.number for r in settled)
    copies = []
    for n in range(max(0, rounds - len(settled))):
        copy = settled[n % len(settled)]
        copies.append((copy.pk, Round(**{**_fields(copy), "number": last + 1 + n})))
    with transaction.atomic():
        made = Round.objects.bulk_create([r for _pk, r in copies], batch_size=2000)
        RoundPlayer.objects.bulk_create(
            (
                RoundPlayer(**{**_fields(p), "round_id": new.pk})
                for (pk, _r), new in zip(copies, made, strict=True)
                for p in players[pk]
            ),
            batch_size=5000,
        )
    total = Round.objects.filter(settled_at__isnull=False).count()
    fresh = max(1, total // 16)  # the rounds settled since the last run, in the second run
    newest = list(
        Round.objects.filter(settled_at__isnull=False)
        .order_by("-pk")
        .values_list("pk", flat=True)[:fresh]
    )
    for name in ("postgresql", "python"):
        if name == "python":
            connection.vendor = "python"  # the other databases' way, on this one
        way = "one statement" if name == "postgresql" else "in Python"
        for runs, full, settled in (
            ("every round counted again", True, []),
            (f"{fresh} new", False, newest),  # as if settled since the last run
            ("none new", False, []),
        ):
            Round.objects.filter(pk__in=settled).update(standings_counted=False)
            analyze()  # what autovacuum does after such changes (off on this server)
            b, t = backend_cpu_ms(backend), time.process_time()
            written = standings.compute_standings(full=full)
            cpu, pg = time.process_time() - t, backend_cpu_ms(backend) - b
            print(
                f"standings over {total} settled rounds, {way}, {runs}: {written} rows, "
                f"this process {cpu * 1000:.0f} CPU-ms, PostgreSQL backend {pg:.0f} CPU-ms",
                flush=True,
            )
    del connection.vendor


def analyze() -> None:
    """The statistics of the rounds and their players brought up to date, as autovacuum's
    ANALYZE keeps them (this machine's PostgreSQL runs without autovacuum)."""
    from django.db import connection

    from games.models import Round, RoundPlayer

    with connection.cursor() as cursor:
        for model in (Round, RoundPlayer):
            cursor.execute(f"ANALYZE {model._meta.db_table}")


def _fields(row: Any) -> dict[str, Any]:
    """A model row's concrete fields by attribute name, without its primary key."""
    return {
        f.attname: getattr(row, f.attname) for f in row._meta.concrete_fields if not f.primary_key
    }


if __name__ == "__main__":
    raise SystemExit(main())

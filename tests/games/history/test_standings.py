"""Standings and statistics (games.history.standings): the beat job computes every
person's
figures from the settled rounds — this week and all time, bots left out — and the pages and
the API only read them."""

from __future__ import annotations

import io
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.throttling import SimpleRateThrottle

from games.history import tasks
from games.history.standings import (
    _empty,
    _figures,
    compute_standings,
    player_stats,
    standings,
    week_start,
)
from games.models import Round, RoundPlayer, Standing, StandingsRun
from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def copier(first: Round) -> Callable[..., Round]:
    """A function that copies ``first`` as round ``number`` of its table, with ``changes``
    (uncounted, as a newly settled round is)."""

    def copy(number: int, **changes: Any) -> Round:
        round_ = Round.objects.get(pk=first.pk)
        players = list(RoundPlayer.objects.filter(round=round_))
        round_.pk, round_.number, round_.standings_counted = None, number, False
        for name, value in changes.items():
            setattr(round_, name, value)
        round_.save()
        for player in players:
            player.pk, player.round = None, round_
            player.save()
        return round_

    return copy


def written() -> dict[str, dict[int, dict[str, int]]]:
    """The standing rows, by period and player: their figures."""
    found: dict[str, dict[int, dict[str, int]]] = {"all": {}, "week": {}}
    for row in Standing.objects.all():
        found[row.period][row.user_id] = {k: getattr(row, k) for k in _empty()}
    return found


def test_the_week_starts_on_monday_utc() -> None:
    wednesday = datetime(2026, 12, 2, 15, 30, tzinfo=UTC)
    assert week_start(wednesday) == datetime(2026, 11, 30, tzinfo=UTC)
    assert week_start(datetime(2026, 11, 30, 0, 0, tzinfo=UTC)) == datetime(
        2026, 11, 30, tzinfo=UTC
    )


def test_the_job_counts_every_figure_from_the_settled_rounds(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.STANDINGS_MIN_ROUNDS = {"week": 1, "all": 1}
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    assert tasks.compute_standings() == 2 * len(users)

    result = Round.objects.get(pk=round_.pk).result
    for name, user in users.items():
        row = RoundPlayer.objects.get(user=user, round=round_)
        stats = player_stats(user)
        for period in ("all", "week"):
            figures = stats[period]
            assert figures["rounds"] == 1, name
            assert (figures["water"], figures["coins"]) == (row.water, row.delta)
            me = str(user.pk)
            guns = [p for p in result["pairs"] if p["gun"] and me in (p["a"], p["b"])]
            assert figures["guns"] == sum(p["shooter"] == me for p in guns)
            assert figures["shot"] == sum(p["shooter"] != me for p in guns)
            assert figures["home_runs"] == (result["home_run"] == me)
            assert figures["specials"] == bool(row.special)
    assert sum(s.coins for s in Standing.objects.filter(period="all")) == 0

    # A counted round is not counted again.
    assert compute_standings() == 0
    assert player_stats(users["alice"])["all"]["rounds"] == 1
    # Last month's round counts all time, not this week (counted again: the history changed).
    Round.objects.filter(pk=round_.pk).update(settled_at=timezone.now() - timedelta(days=40))
    compute_standings(full=True)
    alice = player_stats(users["alice"])
    assert alice["all"]["rounds"] == 1 and alice["week"]["rounds"] == 0
    Round.objects.filter(pk=round_.pk).update(settled_at=timezone.now())
    compute_standings(full=True)

    ranked = standings(period="all", by="coins")["rows"]
    assert [r["coins"] for r in ranked] == sorted((r["coins"] for r in ranked), reverse=True)
    by_water = standings(period="all", by="water")["rows"]
    per_round = [r["water_per_round"] for r in by_water]
    assert per_round == sorted(per_round, reverse=True)

    settings.STANDINGS_MIN_ROUNDS = {"week": 2, "all": 1}
    assert standings(period="week", by="coins")["rows"] == []  # one round this week: too few
    assert len(standings(period="all", by="coins")["rows"]) == len(users)


def test_the_database_counts_what_the_python_counts(monkeypatch: pytest.MonkeyPatch) -> None:
    """On PostgreSQL the job counts in one statement (``_STANDINGS_SQL``); elsewhere in Python
    (``_figures``). The same rounds give the same figures: guns and a special, a hand played
    automatically, an escape (not counted as automatic), a round of last month, a result
    without pairs, gun values Python takes for false, and a bot at the table."""
    from games.live import bots

    if connection.vendor != "postgresql":
        pytest.skip("the statement is PostgreSQL's")
    first, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    alice, bob = users["alice"], users["bob"]
    copy = copier(first)

    second = copy(101, settled_at=timezone.now() - timedelta(days=40))  # last month
    RoundPlayer.objects.filter(round=second, user=alice).update(auto="timeout")
    RoundPlayer.objects.filter(round=second, user=bob).update(auto="left", escaped=True)
    result = Round.objects.get(pk=first.pk).result
    for pair in result["pairs"]:  # values Python takes for false
        pair["gun"] = {"gun": False, "home_run": 0}.get(pair["gun"], pair["gun"])
    result.pop("home_run")
    copy(102, result=result)
    fourth = copy(103, result=None)
    RoundPlayer.objects.filter(round=fourth, user=users["carol"]).update(user=bots.bot_create())
    copy(104, settled_at=None)  # not settled: not counted
    home_run = Round.objects.get(pk=first.pk).result | {"home_run": str(alice.pk)}
    copy(105, result=home_run)

    now = timezone.now()
    settled = RoundPlayer.objects.filter(round__settled_at__isnull=False, user__is_bot=False)
    expected = {
        "all": _figures(settled),
        "week": _figures(settled.filter(round__settled_at__gte=week_start(now))),
    }

    assert compute_standings(now) == len(expected["all"]) + len(expected["week"])
    assert written() == {period: dict(by_user) for period, by_user in expected.items()}
    # The other databases' way (in Python) writes the same rows.
    monkeypatch.setattr(connection, "vendor", "sqlite")
    assert compute_standings(now, full=True) == len(expected["all"]) + len(expected["week"])
    monkeypatch.undo()
    assert written() == {period: dict(by_user) for period, by_user in expected.items()}
    # The data exercised every figure.
    every = expected["all"][alice.pk] | expected["all"][bob.pk]
    totals = {k: sum(f[k] for f in expected["all"].values()) for k in every}
    assert all(totals.values()), totals
    assert expected["all"][bob.pk]["auto"] == 0  # an escape is not an automatic hand


@pytest.mark.parametrize("vendor", ["postgresql", "sqlite"])
def test_each_run_counts_the_rounds_settled_since_the_last(
    monkeypatch: pytest.MonkeyPatch, vendor: str
) -> None:
    """The job counts each settled round once: runs between which rounds are settled end with
    the rows a full recount of the whole history gives, in both ways (PostgreSQL's statement,
    the other databases' Python), and a run with nothing new writes nothing."""
    if vendor == "postgresql" and connection.vendor != "postgresql":
        pytest.skip("the statement is PostgreSQL's")
    first, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    copy = copier(first)
    monkeypatch.setattr(connection, "vendor", vendor)
    now = timezone.now()
    assert compute_standings(now) == 2 * len(users)
    assert Round.objects.filter(standings_counted=False, settled_at__isnull=False).count() == 0
    unsettled = copy(200, settled_at=None)
    copy(201)
    copy(202, settled_at=now - timedelta(days=40))  # last month: all time only
    RoundPlayer.objects.filter(round__number=201, user=users["alice"]).update(auto="timeout")
    assert compute_standings(now) == 2 * len(users)  # every player's two rows added to
    run = StandingsRun.objects.order_by("-pk").first()
    assert run is not None and (run.rounds, run.rows, run.full) == (2, 2 * len(users), False)
    assert compute_standings(now) == 0  # nothing new
    Round.objects.filter(pk=unsettled.pk).update(settled_at=now)  # settled now
    assert compute_standings(now) == 2 * len(users)
    counted = written()
    assert {f["rounds"] for f in counted["all"].values()} == {4}
    assert {f["rounds"] for f in counted["week"].values()} == {3}
    assert counted["all"][users["alice"].pk]["auto"] == 1
    assert compute_standings(now, full=True) == 2 * len(users)
    assert written() == counted
    fulls = StandingsRun.objects.filter(full=True).order_by("pk")
    assert list(fulls.values_list("rounds", flat=True)) == [1, 4]  # the first run, and --full
    assert StandingsRun.objects.count() == 5


def test_this_weeks_rows_start_again_on_monday(monkeypatch: pytest.MonkeyPatch) -> None:
    """The first run of a week drops last week's rows (a round settled on Sunday and counted
    on Monday counts all time only), and keeps the all-time rows; a run counts no round
    settled after its own week (it waited for the lock, or its clock is behind), which a run
    of the right week counts."""
    first, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    copy = copier(first)
    sunday = week_start(timezone.now()) + timedelta(days=6, hours=23, minutes=59)
    Round.objects.filter(pk=first.pk).update(settled_at=sunday - timedelta(hours=1))
    early = copy(299, settled_at=sunday + timedelta(minutes=10))  # Monday 00:09
    compute_standings(sunday)
    assert {f["rounds"] for f in written()["week"].values()} == {1}
    assert not Round.objects.get(pk=early.pk).standings_counted
    copy(300, settled_at=sunday + timedelta(seconds=30))  # settled before Monday 00:00
    monday = sunday + timedelta(minutes=3)
    assert week_start(monday) > week_start(sunday)
    compute_standings(monday)
    found = written()
    assert {f["rounds"] for f in found["week"].values()} == {1}  # Monday 00:09's only
    assert {f["rounds"] for f in found["all"].values()} == {3}
    copy(301, settled_at=monday)
    compute_standings(monday + timedelta(minutes=5))
    assert {f["rounds"] for f in written()["week"].values()} == {2}
    assert player_stats(users["alice"])["all"]["rounds"] == 4


def test_the_first_run_counts_every_round_whatever_rows_it_finds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A deploy's old beat may write its rows between the migration and the new job: the new
    job's first run counts every settled round again instead of adding to them."""
    _round, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    now = timezone.now()
    for user in users.values():  # what a job of before left, from the same history
        for period in ("all", "week"):
            Standing.objects.create(user=user, period=period, rounds=1, computed_at=now)
    compute_standings()
    assert {f["rounds"] for period in written().values() for f in period.values()} == {1}
    run = StandingsRun.objects.get()
    assert run.full and run.rounds == 1


def test_two_runs_at_once_count_each_round_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two runs at the same time (a beat that fired twice, a recount by hand): each new round
    is counted by one of them."""
    first, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    copy = copier(first)
    for number in range(400, 420):
        copy(number)
    start = threading.Barrier(2)
    errors: list[BaseException] = []

    def run() -> None:
        try:
            start.wait()
            compute_standings()
        except BaseException as error:  # noqa: BLE001 - reported by the test
            errors.append(error)
        finally:
            connection.close()

    threads = [threading.Thread(target=run) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert {f["rounds"] for f in written()["all"].values()} == {21}
    assert sum(r.rounds for r in StandingsRun.objects.all()) == 21


def test_the_command_counts_and_recounts(monkeypatch: pytest.MonkeyPatch) -> None:
    _round, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    out = io.StringIO()
    call_command("compute_standings", stdout=out)
    rows = 2 * len(users)
    assert out.getvalue().strip() == f"full recount: 1 settled rounds, {rows} standing rows written"
    before = written()
    out = io.StringIO()
    call_command("compute_standings", stdout=out)
    assert out.getvalue().strip() == "counted: 0 settled rounds, 0 standing rows written"
    out = io.StringIO()
    call_command("compute_standings", "--full", stdout=out)
    assert out.getvalue().startswith("full recount: 1 settled rounds")
    assert written() == before


def test_bots_have_no_standing(monkeypatch: pytest.MonkeyPatch) -> None:
    from games.live import bots

    bot = bots.bot_create()
    assert player_stats(make_player("alice"))["all"]["rounds"] == 0
    compute_standings()
    assert not Standing.objects.filter(user=bot).exists()
    assert logged_in(make_player("bob")).get(f"/games/players/{bot.username}/").status_code == 404


def test_the_pages_and_the_api_read_what_the_job_wrote(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.STANDINGS_MIN_ROUNDS = {"week": 1, "all": 1}
    _round, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    alice = users["alice"]
    client = logged_in(alice)
    before = client.get("/api/games/standings/?period=week&by=coins").json()
    assert before["rows"] == []  # not computed yet: nothing is computed on request
    assert before["computed_at"] is None
    compute_standings()

    page = client.get("/games/standings/?period=week&by=water", HTTP_ACCEPT_LANGUAGE="zh-hans")
    html = page.content.decode()
    assert page.status_code == 200 and "排名" in html and "按每局水数" in html
    assert html.count('data-testid="standing-row"') == len(users)
    assert client.get("/games/standings/?period=evil&by=<x>").status_code == 200  # defaults
    mine = client.get(f"/games/players/{alice.username}/").content.decode()
    assert 'data-testid="player-stats"' in mine
    assert client.get("/games/players/nobody-here/").status_code == 404

    api = client.get("/api/games/standings/?period=all&by=coins").json()
    assert len(api["rows"]) == len(users) and api["min_rounds"] == 1
    assert client.get("/api/games/standings/?period=year").status_code == 400
    stats = client.get(f"/api/games/players/{alice.username}/stats/").json()
    assert stats["all"]["rounds"] == 1
    # "Computed at" is the job's last run, for a player who has not played since too.
    compute_standings()
    later = client.get(f"/api/games/players/{alice.username}/stats/").json()["computed_at"]
    assert later is not None and later > stats["computed_at"] == api["computed_at"]
    assert client.get("/api/games/standings/?period=all&by=coins").json()["computed_at"] == later
    assert client.get("/api/games/players/nobody-here/stats/").status_code == 404
    assert Client().get("/api/games/standings/").status_code == 403
    assert Client().get("/games/standings/").status_code == 302  # to the log-in page


def test_the_standings_are_rate_limited(monkeypatch: pytest.MonkeyPatch, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "games.stats_page": "2/minute"}
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "standings", "2/min")
    client = logged_in(make_player("alice"))
    assert [client.get("/games/standings/").status_code for _ in range(3)] == [200, 200, 429]
    api = [client.get("/api/games/standings/").status_code for _ in range(3)]
    assert api == [200, 200, 429]


def test_the_job_is_on_the_beat(settings: Any) -> None:
    schedule = settings.CELERY_BEAT_SCHEDULE["compute-standings"]
    assert schedule["task"] == "games.tasks.compute_standings" and schedule["schedule"] > 0


def test_the_new_apis_are_in_the_openapi_schema() -> None:
    schema = logged_in(make_player("schema-reader")).get("/api/schema/?format=json").json()
    paths = schema["paths"]
    for path in (
        "/api/games/matches/",
        "/api/games/matches/{match_id}/",
        "/api/games/series/{token}/",
        "/api/games/standings/",
        "/api/games/players/{username}/stats/",
    ):
        assert path in paths, path
    assert {"200", "429"} <= set(paths["/api/games/standings/"]["get"]["responses"])
    room = schema["components"]["schemas"]["Room"]["properties"]
    assert {"match", "allow_spectators", "watchers"} <= set(room)
    create = schema["components"]["schemas"]["RoomCreateInput"]["properties"]
    assert {"chat_text", "spectators", "series_rounds"} <= set(create)

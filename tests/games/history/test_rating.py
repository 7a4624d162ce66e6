"""The skill rating of settled rounds (games.history.rating): queued by the settlement on
commit, rated once, duplicate deals against par and with more weight, and the standings by
rating and the player page, without bots and with a minimum of rounds."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.throttling import SimpleRateThrottle

from games.history import rating as history_rating
from games.history import tasks as history_tasks
from games.history.rating import (
    player_rating,
    rating_family,
    rating_standings,
    rating_update,
    ratings_catch_up,
)
from games.live import store as table_store
from games.models import DuplicateMatch, MatchStatus, PlayerRating, Round
from games.rules import rating as rules_rating
from games.rules.config import DEFAULT_CONFIG, RuleConfig
from lobby.models import Room
from lobby.services import room_create
from tests.games.replay_helpers import GUNS_AND_SPECIAL, play_rigged_round
from tests.games.table_helpers import default_rules, make_player

pytestmark = pytest.mark.django_db(transaction=True)


def ratings() -> dict[tuple[int, str], tuple[float, float, float, int]]:
    return {
        (r.user_id, r.family): (r.rating, r.deviation, r.volatility, r.rounds)
        for r in PlayerRating.objects.all()
    }


def crafted_round(room: Room, number: int, pairs: list[tuple[Any, Any, int]]) -> Round:
    """A settled round of ``room``'s table whose players sit in the order they first appear
    in ``pairs`` (``(user a, user b, water a won from b)``); no coins move."""
    users: list[Any] = []
    for a, b, _ in pairs:
        users += [u for u in (a, b) if u not in users]
    return Round.objects.create(
        table=table_store.table_for_room(room=room),
        number=number,
        config=DEFAULT_CONFIG.to_dict(),
        commitment="0" * 64,
        started_at=timezone.now(),
        settled_at=timezone.now(),
        result={
            "players": [{"id": str(u.pk), "position": p} for p, u in enumerate(users)],
            "pairs": [{"a": str(a.pk), "b": str(b.pk), "water": w} for a, b, w in pairs],
        },
    )


def a_room(owner: Any = None) -> Room:
    """A room for crafted rounds (a new host's when no owner is given)."""
    if owner is None:
        owner = make_player(f"host{Room.objects.count() + 1}")
    return room_create(owner=owner, base_score=10, seats=4, rules=default_rules())


def test_the_family_is_the_lobbys_variant_tags() -> None:
    assert rating_family(DEFAULT_CONFIG) == "classic"
    assert rating_family(DEFAULT_CONFIG, "fuzhou") == "fuzhou"
    laizi = RuleConfig.from_dict({"extra_suits": 1, "jokers": 2}, base=DEFAULT_CONFIG)
    assert rating_family(laizi) == "duoyise+laizi"


def test_a_settled_round_is_rated_once_after_it_commits(monkeypatch: pytest.MonkeyPatch) -> None:
    queued: list[int] = []
    monkeypatch.setattr(history_tasks.rating_update, "delay", queued.append)

    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)

    assert queued == [round_.pk]  # queued by the settlement, on commit
    assert not PlayerRating.objects.exists()
    assert player_rating(users["alice"].pk, "classic") is None

    assert history_tasks.rating_update(round_.pk) == 1
    after = ratings()
    # What the round was worth: every pair's water, rated from everyone's 1500 ± 350.
    result = Round.objects.get(pk=round_.pk).result
    expected = rules_rating.rate_round(
        {},
        rules_rating.plain_games((int(p["a"]), int(p["b"]), p["water"]) for p in result["pairs"]),
    )
    assert set(after) == {(u.pk, "classic") for u in users.values()}
    for user in users.values():
        rating, deviation, volatility, rounds = after[(user.pk, "classic")]
        assert (rating, deviation) == pytest.approx(
            (expected[user.pk].rating, expected[user.pk].deviation)
        )
        assert rounds == 1
        assert player_rating(user.pk, "classic") == pytest.approx((rating, deviation))
    assert len({r[0] for r in after.values()}) > 1  # the pairs' water moved them apart

    # Running it again, late, or from the catch-up changes nothing.
    assert rating_update(round_id=round_.pk) == 0
    assert ratings_catch_up() == 0
    assert ratings() == after
    assert Round.objects.get(pk=round_.pk).rating_counted


def test_the_catch_up_rates_the_rounds_whose_task_was_lost(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(history_tasks.rating_update, "delay", lambda round_id: None)
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    unsettled, _ = play_rigged_round(
        monkeypatch, {f"{k}2": h for k, h in GUNS_AND_SPECIAL.items()}, settle=False
    )

    assert history_tasks.ratings_catch_up() == 1
    assert {r.user_id for r in PlayerRating.objects.all()} == {u.pk for u in users.values()}
    assert history_tasks.ratings_catch_up() == 0
    assert rating_update(round_id=unsettled.pk) == 0  # not settled: nothing to rate


def duplicate_deal(water_at_second_table: int) -> tuple[dict[str, Any], list[Round], Any]:
    """A two-table duplicate match's first deal: alice beats bob by 6 at the first table with
    the cards that carol and dave (the same positions) play at the second."""
    people = {n: make_player(n) for n in ("alice", "bob", "carol", "dave")}
    match = DuplicateMatch.objects.create(
        name="Duplicate",
        owner=people["alice"],
        rules=default_rules(),
        base_score=10,
        seats=2,
        tables=2,
        deals=2,
        seed="s",
        seed_commitment="c",
    )
    rooms = [a_room(people["alice"]), a_room(people["carol"])]
    for number, room in enumerate(rooms, start=1):
        Room.objects.filter(pk=room.pk).update(match=match, match_table=number)
        room.refresh_from_db()
    first = crafted_round(rooms[0], 1, [(people["alice"], people["bob"], 6)])
    second = crafted_round(rooms[1], 1, [(people["carol"], people["dave"], water_at_second_table)])
    return people, [first, second], match


def test_a_duplicate_deal_is_rated_against_par_once_every_table_settled() -> None:
    people, (first, second), _ = duplicate_deal(6)
    Round.objects.filter(pk=second.pk).update(settled_at=None)

    assert rating_update(round_id=first.pk) == 0  # the other table still plays the deal
    assert not PlayerRating.objects.exists()

    Round.objects.filter(pk=second.pk).update(settled_at=timezone.now())
    assert rating_update(round_id=second.pk) == 2  # both tables' rounds, together
    assert rating_update(round_id=first.pk) == 0

    # Both tables won 6 with the same cards: the luck of the cards, no skill shown.
    for person in people.values():
        rating, deviation = player_rating(person.pk, "classic") or (0, 0)
        assert rating == pytest.approx(1500)
        assert deviation < 350


def test_a_duplicate_game_weighs_more_than_a_plain_one() -> None:
    people, (first, second), _ = duplicate_deal(0)  # par 3: alice made 3 more than par
    plain_owner = make_player("erin")
    plain = crafted_round(a_room(plain_owner), 1, [(plain_owner, make_player("fay"), 3)])

    assert rating_update(round_id=first.pk) == 2
    assert rating_update(round_id=plain.pk) == 1

    duplicate_alice = player_rating(people["alice"].pk, "classic")
    plain_erin = player_rating(plain_owner.pk, "classic")
    assert duplicate_alice is not None and plain_erin is not None
    assert duplicate_alice[0] > plain_erin[0] > 1500
    assert duplicate_alice[1] < plain_erin[1]


def test_an_unfinished_deal_of_a_match_that_ended_is_rated_plainly() -> None:
    people, (first, second), match = duplicate_deal(0)
    Round.objects.filter(pk=second.pk).update(settled_at=None)
    assert rating_update(round_id=first.pk) == 0

    DuplicateMatch.objects.filter(pk=match.pk).update(
        status=MatchStatus.ABANDONED, finished_at=timezone.now()
    )

    assert ratings_catch_up() == 1
    alice = player_rating(people["alice"].pk, "classic")
    plain = rules_rating.rate_round({}, rules_rating.plain_games([(1, 2, 6)]))[1]
    assert alice == pytest.approx((plain.rating, plain.deviation))


def rated(owner: Any, opponents: list[Any], rounds: int, *, start: int = 1) -> None:
    room = a_room()
    for number in range(start, start + rounds):
        round_ = crafted_round(room, number, [(owner, o, 6) for o in opponents])
        rating_update(round_id=round_.pk)


def test_the_standings_by_rating_list_people_with_enough_rounds_and_no_bots(
    settings: Any,
) -> None:
    settings.RATING_MIN_ROUNDS = 2
    bot = get_user_model().objects.create(username="bot-strong", is_bot=True)
    ann, ben, cat = (make_player(n) for n in ("ann", "ben", "cat"))
    rated(bot, [ann, ben], 3)  # the bot beats them: it has the highest rating
    rated(cat, [ann], 1, start=10)  # one round only

    data = rating_standings(family="classic")

    assert PlayerRating.objects.get(user=bot).rating > 1500  # bots are rated…
    assert [r["player"] for r in data["rows"]] == ["ben", "ann"] or [
        r["player"] for r in data["rows"]
    ] == ["ann", "ben"]  # …never listed, nor cat below the minimum
    assert data["min_rounds"] == 2
    ratings_of = {r["player"]: r for r in data["rows"]}
    assert ratings_of["ann"]["rounds"] == 4 and ratings_of["ben"]["rounds"] == 3
    assert [r["rank"] for r in data["rows"]] == [1, 2]
    assert data["rows"][0]["rating"] >= data["rows"][1]["rating"]

    settings.RATING_MIN_ROUNDS = 4
    assert [r["player"] for r in rating_standings(family="classic")["rows"]] == ["ann"]


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_the_pages_show_the_rating_and_its_uncertainty(settings: Any) -> None:
    settings.RATING_MIN_ROUNDS = 1
    ann, ben = make_player("ann"), make_player("ben")
    rated(ann, [ben], 2)
    mine = PlayerRating.objects.get(user=ann)
    shown = f"{round(mine.rating)} ± {round(mine.deviation)}"
    client = logged_in(ben)

    page = client.get("/games/standings/?by=rating&family=classic")
    assert page.status_code == 200
    body = page.content.decode()
    assert 'data-testid="rating-table"' in body and shown in body
    assert body.index('data-player="ann"') < body.index('data-player="ben"')

    chinese = client.get("/games/standings/?by=rating", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "按等级分" in chinese.content.decode()

    player = client.get("/games/players/ann/").content.decode()
    assert 'data-testid="player-ratings"' in player and shown in player

    # A family nobody plays, or a made-up one, shows the classic family's standings.
    for family in ("nonsense", "<script>", "x" * 500):
        page = client.get("/games/standings/", {"by": "rating", "family": family})
        assert page.status_code == 200 and shown in page.content.decode()
    assert ratings() == {
        (r.user_id, r.family): (r.rating, r.deviation, r.volatility, r.rounds)
        for r in PlayerRating.objects.all()
    }


def test_the_standings_page_by_rating_is_rate_limited(settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "games.stats_page": "2/minute"}
    ann = make_player("ann")
    client = logged_in(ann)

    codes = [client.get("/games/standings/?by=rating").status_code for _ in range(3)]

    assert codes == [200, 200, 429]


def test_the_history_module_names_the_families_for_people() -> None:
    assert history_rating.family_name("duoyise+laizi", chinese=True) == "多一色·癞子"
    assert history_rating.family_name("classic", chinese=False) == "Classic"


def test_the_catch_up_goes_past_a_round_it_cannot_read(caplog: pytest.LogCaptureFixture) -> None:
    ann, ben = make_player("ann"), make_player("ben")
    room = a_room()
    broken = crafted_round(room, 1, [(ann, ben, 6)])
    Round.objects.filter(pk=broken.pk).update(result={"players": [{"id": "x"}], "pairs": 3})
    fine = crafted_round(room, 2, [(ann, ben, 6)])

    assert ratings_catch_up() == 1

    assert Round.objects.get(pk=fine.pk).rating_counted
    assert not Round.objects.get(pk=broken.pk).rating_counted
    assert f"rating round {broken.pk} failed" in caplog.text
    assert PlayerRating.objects.get(user=ann).rounds == 1


def test_the_api_answers_the_standings_by_rating_and_refuses_a_bad_family(
    monkeypatch: pytest.MonkeyPatch, settings: Any
) -> None:
    settings.RATING_MIN_ROUNDS = 1
    ann, ben = make_player("ann"), make_player("ben")
    rated(ann, [ben], 2)
    before = ratings()
    client = logged_in(ben)

    data = client.get("/api/games/standings/", {"by": "rating", "family": "classic"}).json()
    assert [r["player"] for r in data["rows"]] == ["ann", "ben"]
    assert data["rows"][0]["deviation"] < 350 and data["family"] == "classic"
    stats = client.get("/api/games/players/ann/stats/").json()
    assert stats["ratings"][0]["family"] == "classic" and stats["ratings"][0]["rounds"] == 2

    for family in ("nonsense", "", "x" * 500):
        bad = client.get("/api/games/standings/", {"by": "rating", "family": family})
        assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"
    assert ratings() == before

    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "standings", "2/min")
    fresh = logged_in(make_player("cy"))
    codes = [fresh.get("/api/games/standings/?by=rating").status_code for _ in range(3)]
    assert codes == [200, 200, 429]

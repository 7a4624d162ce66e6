"""Play now's wait for people of a similar rating (`lobby.waiting`), the bot level closest to
the people at a table, and quick join's preference for the room closest in rating
(`lobby.skill`). Ratings are given by patching `lobby.skill.skill_of`, the one place the lobby
reads them."""

from datetime import timedelta
from typing import Any

import pytest
from django.db import connection
from django.db.models import F
from django.test import Client

from accounts.collusion import transfers_freeze
from accounts.models import User
from accounts.selectors import ledger_audit
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG
from lobby import skill, tasks
from lobby.errors import InsufficientCoins, TransfersFrozen
from lobby.matchmaking import room_quick_join, room_quick_play
from lobby.models import BotLevel, PlayWait, Room, Seat
from lobby.services import room_create, room_join
from lobby.waiting import (
    STALE_AFTER_SECONDS,
    play_now,
    play_wait_cancel,
    play_wait_check,
)
from shisanshui.errors import RateLimitedError
from tests.lobby.conftest import MakePlayer, lobby_counts, wait_over
from tests.lobby.test_services import race

requires_postgresql = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="races need PostgreSQL's locks"
)

PLAY = "/lobby/play/"
WAIT = "/lobby/play/wait/"
CANCEL = "/lobby/play/cancel/"

Ratings = dict[int, tuple[float, float]]


@pytest.fixture
def ratings(monkeypatch: pytest.MonkeyPatch) -> Ratings:
    """Each player's (rating, deviation) by user id; anyone else is unrated."""
    given: Ratings = {}
    monkeypatch.setattr(skill, "skill_of", lambda user, family: given.get(user, skill.UNRATED))
    # Levels spaced 150 apart: the measured ratings (games.rules.rating) lie within 70 points,
    # too close to tell the choice of level from the choice of the default one.
    monkeypatch.setattr(
        skill,
        "BOT_LEVEL_RATING",
        {
            BotLevel.EASY: 1300.0,
            BotLevel.NORMAL: 1450.0,
            BotLevel.STRONG: 1600.0,
            BotLevel.EXPERT: 1750.0,
        },
    )
    return given


def people_of(room: Room) -> list[int]:
    return sorted(Seat.objects.filter(room=room, user__is_bot=False).values_list("user", flat=True))


def bots_of(room: Room) -> int:
    return Seat.objects.filter(room=room, user__is_bot=True).count()


def rate(ratings: Ratings, user: User, rating: float, deviation: float = 50.0) -> User:
    ratings[user.pk] = (rating, deviation)
    return user


# Alone: one tap, seated with bots of the player's level once the wait is over.


def test_alone_the_player_waits_then_sits_with_bots_of_the_closest_level(
    ratings: Ratings, alice: User
) -> None:
    rate(ratings, alice, 1770)

    pressed = play_now(user=alice)

    assert pressed.seat is None and pressed.wait is not None
    assert 3.5 < pressed.seconds_left() <= 4  # PLAY_NOW_WAIT_SECONDS
    assert lobby_counts() == (0, 0)
    assert play_wait_check(user=alice).wait is not None  # not due: still waiting, nothing done
    assert lobby_counts() == (0, 0)

    wait_over()
    checked = play_wait_check(user=alice)

    assert checked.seated_now and checked.seat is not None
    room = checked.seat.room
    assert people_of(room) == [alice.pk] and bots_of(room) == 3
    assert room.bot_level == BotLevel.EXPERT
    assert not PlayWait.objects.exists()
    again = play_wait_check(user=alice)  # asking again, or late, changes nothing
    assert again.seat == checked.seat and not again.seated_now
    assert lobby_counts() == (1, 4)


@pytest.mark.parametrize(
    ("rating", "level"),
    [
        (1000, BotLevel.EASY),
        (1374, BotLevel.EASY),
        (1376, BotLevel.NORMAL),
        (1500, BotLevel.NORMAL),  # unrated: halfway between normal and strong, the weaker
        (1600, BotLevel.STRONG),
        (1670, BotLevel.STRONG),
        (1680, BotLevel.EXPERT),
        (2600, BotLevel.EXPERT),
    ],
)
def test_the_bot_level_is_the_one_closest_in_rating(
    ratings: Ratings, rating: float, level: str
) -> None:
    assert skill.bot_level_for([rating]) == level


def test_the_bot_level_follows_the_mean_of_the_people(ratings: Ratings) -> None:
    assert skill.bot_level_for([1300, 1900]) == BotLevel.STRONG  # mean 1600
    assert skill.bot_level_for([]) == BotLevel.STRONG  # nobody: the default


def test_with_the_measured_ratings_the_strongest_people_get_the_strongest_measured_bots() -> None:
    # games.rules.rating: easy 1464, normal 1499, strong 1533, expert 1528.
    assert skill.bot_level_for([1200]) == BotLevel.EASY
    assert skill.bot_level_for([1500]) == BotLevel.NORMAL
    assert skill.bot_level_for([2100]) == BotLevel.STRONG  # expert measured no stronger


def test_play_now_without_a_wait_picks_the_bots_level_too(
    ratings: Ratings, alice: User, bob: User
) -> None:
    rate(ratings, alice, 1310)
    rate(ratings, bob, 1470)

    assert room_quick_play(user=alice).seat.room.bot_level == BotLevel.EASY
    assert room_quick_play(user=bob).seat.room.bot_level == BotLevel.NORMAL


def test_with_no_wait_set_play_now_seats_with_bots_at_once(settings: Any, alice: User) -> None:
    settings.PLAY_NOW_WAIT_SECONDS = 0

    pressed = play_now(user=alice)

    assert pressed.seated_now and pressed.seat is not None and bots_of(pressed.seat.room) == 3
    assert not PlayWait.objects.exists()


# People of a similar rating sit together.


def test_two_players_pressing_within_the_wait_sit_at_one_table(
    ratings: Ratings, alice: User, bob: User
) -> None:
    rate(ratings, alice, 1580)
    rate(ratings, bob, 1700)

    waiting = play_now(user=alice)
    joined = play_now(user=bob)

    assert waiting.wait is not None and joined.seated_now and joined.seat is not None
    room = joined.seat.room
    assert people_of(room) == sorted([alice.pk, bob.pk]) and bots_of(room) == 2
    assert room.owner == bob and room.seats == 4
    assert room.bot_level == BotLevel.STRONG  # mean 1640
    assert not PlayWait.objects.exists()
    found = play_wait_check(user=alice)  # alice's page asks: she is seated there
    assert found.seat is not None and found.seat.room == room and not found.seated_now
    assert Room.objects.count() == 1 and ledger_audit().ok


def test_far_apart_ratings_do_not_sit_together_closer_ones_do(
    ratings: Ratings, alice: User, bob: User, carol: User
) -> None:
    rate(ratings, alice, 1500)
    rate(ratings, bob, 2300)
    rate(ratings, carol, 1620)

    play_now(user=alice)
    far = play_now(user=bob)
    near = play_now(user=carol)

    assert far.wait is not None  # 800 apart: bob waits on his own
    assert near.seat is not None and people_of(near.seat.room) == sorted([alice.pk, carol.pk])
    assert list(PlayWait.objects.values_list("user", flat=True)) == [bob.pk]

    wait_over()
    alone = play_wait_check(user=bob)  # even after the wait, 800 is too far

    assert alone.seat is not None and people_of(alone.seat.room) == [bob.pk]
    assert alone.seat.room.bot_level == BotLevel.EXPERT and bots_of(alone.seat.room) == 3


def test_the_best_match_comes_first_and_everyone_at_the_table_is_close(
    ratings: Ratings, alice: User, bob: User, carol: User
) -> None:
    rate(ratings, alice, 1500)
    rate(ratings, bob, 1750)  # 250 from alice: they do not match each other
    rate(ratings, carol, 1620)  # 120 from alice, 130 from bob

    play_now(user=alice)
    play_now(user=bob)
    seated = play_now(user=carol)

    assert seated.seat is not None
    assert people_of(seated.seat.room) == sorted([alice.pk, carol.pk])  # not bob: too far
    assert list(PlayWait.objects.values_list("user", flat=True)) == [bob.pk]


def test_the_gap_allowed_widens_with_the_wait(ratings: Ratings, alice: User, bob: User) -> None:
    rate(ratings, alice, 1500)
    rate(ratings, bob, 1850)  # 350 apart: too far at once, close enough after 4 s

    play_now(user=alice)
    assert play_now(user=bob).wait is not None

    wait_over()
    seated = play_wait_check(user=alice)

    assert seated.seat is not None
    assert people_of(seated.seat.room) == sorted([alice.pk, bob.pk])
    assert not PlayWait.objects.exists()
    assert play_wait_check(user=bob).seat == Seat.objects.get(user=bob)


def test_the_gap_allows_twice_the_deviation(ratings: Ratings, alice: User, bob: User) -> None:
    rate(ratings, alice, 1500, deviation=350)  # unsure ratings: 700 apart still match
    rate(ratings, bob, 2150, deviation=100)

    play_now(user=alice)
    seated = play_now(user=bob)

    assert seated.seat is not None and people_of(seated.seat.room) == sorted([alice.pk, bob.pk])


def test_only_the_same_rules_sit_together(alice: User, bob: User) -> None:
    other = RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Other rules")
    play_now(user=alice)
    PlayWait.objects.update(rules=other)  # alice waits for other rules

    assert play_now(user=bob).wait is not None
    assert PlayWait.objects.count() == 2


def test_a_wait_long_past_its_deadline_is_not_matched(alice: User, bob: User) -> None:
    play_now(user=alice)
    wait_over()
    PlayWait.objects.update(
        created_at=F("created_at") - timedelta(seconds=STALE_AFTER_SECONDS + 1),
        deadline=F("deadline") - timedelta(seconds=STALE_AFTER_SECONDS + 1),
    )

    assert play_now(user=bob).wait is not None  # alice has most likely left the page
    assert play_wait_check(user=alice).seat is not None  # her own late check: with bots
    assert people_of(Seat.objects.get(user=alice).room) == [alice.pk]


# Abuse: never twice in the pool, never two seats, frozen accounts refused, limits.


def test_pressing_again_while_waiting_keeps_the_one_wait(settings: Any, alice: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "1/minute"}
    first = play_now(user=alice)

    for _press in range(3):  # not refused: the same wait, no second one, nothing spent
        again = play_now(user=alice)
        assert again.wait is not None and again.wait.pk == first.wait.pk  # type: ignore[union-attr]

    assert PlayWait.objects.count() == 1 and lobby_counts() == (0, 0)


def test_a_waiting_player_who_sits_elsewhere_is_not_seated_twice(
    ratings: Ratings, alice: User, bob: User, carol: User
) -> None:
    play_now(user=alice)
    room = room_create(owner=carol, name="Carol's", base_score=100, seats=4)
    room_join(user=alice, room_id=room.pk)  # alice sat down elsewhere meanwhile

    assert play_now(user=bob).wait is not None  # alice is not matched
    assert play_wait_check(user=alice).seat == Seat.objects.get(user=alice)
    wait_over()
    play_wait_check(user=alice)
    assert list(PlayWait.objects.values_list("user", flat=True)) == [bob.pk]
    assert Seat.objects.filter(user=alice).count() == 1


def test_a_player_seated_already_is_sent_back_not_put_in_the_pool(alice: User, bob: User) -> None:
    room = room_create(owner=bob, name="Bob's", base_score=100, seats=4)
    room_join(user=alice, room_id=room.pk)

    pressed = play_now(user=alice)

    assert pressed.seat is not None and pressed.seat.room == room and not pressed.seated_now
    assert not PlayWait.objects.exists()


def test_cancel_leaves_the_pool(alice: User, bob: User) -> None:
    play_now(user=alice)

    cancelled = play_wait_cancel(user=alice)

    assert cancelled.seat is None and not PlayWait.objects.exists()
    assert play_wait_check(user=alice) == play_wait_cancel(user=alice)  # nothing, twice
    assert play_now(user=bob).wait is not None  # bob does not sit with alice
    wait_over()
    play_wait_check(user=alice)
    assert not Seat.objects.filter(user=alice).exists()


def test_cancel_after_being_seated_is_too_late(alice: User, bob: User) -> None:
    play_now(user=alice)
    play_now(user=bob)

    cancelled = play_wait_cancel(user=alice)

    assert cancelled.seat == Seat.objects.get(user=alice)


def test_a_frozen_account_is_refused_and_changes_nothing(alice: User) -> None:
    support = User.objects.create_superuser("support1", password="not-used-1")
    transfers_freeze(user=alice, staff=support, note="Dumping to a friend.")

    with pytest.raises(TransfersFrozen):
        play_now(user=alice)

    assert not PlayWait.objects.exists() and lobby_counts() == (0, 0)


def test_a_player_frozen_while_waiting_is_left_out(
    ratings: Ratings, alice: User, bob: User
) -> None:
    rate(ratings, alice, 1700, deviation=300)
    rate(ratings, bob, 1300, deviation=300)
    play_now(user=alice)
    support = User.objects.create_superuser("support1", password="not-used-1")
    transfers_freeze(user=alice, staff=support, note="Dumping to a friend.")

    seated = play_now(user=bob)

    assert seated.seat is not None and people_of(seated.seat.room) == [bob.pk]
    assert bots_of(seated.seat.room) == 3
    assert seated.seat.room.bot_level == BotLevel.EASY  # bob's level: alice is not there
    assert Room.objects.get().bot_level == BotLevel.EASY
    assert not PlayWait.objects.exists() and not Seat.objects.filter(user=alice).exists()


def test_a_refusal_at_the_deadline_ends_the_wait_with_the_reason(alice: User) -> None:
    play_now(user=alice)
    support = User.objects.create_superuser("support1", password="not-used-1")
    transfers_freeze(user=alice, staff=support, note="Dumping to a friend.")
    wait_over()

    checked = play_wait_check(user=alice)

    assert checked.seat is None and isinstance(checked.refused, TransfersFrozen)
    assert not PlayWait.objects.exists() and lobby_counts() == (0, 0)


def test_without_the_coins_play_now_is_refused_and_changes_nothing(
    make_player: MakePlayer,
) -> None:
    poor = make_player(coins=100)

    with pytest.raises(InsufficientCoins):
        play_now(user=poor)

    assert not PlayWait.objects.exists()


def test_play_now_over_its_rate_is_refused(settings: Any, alice: User) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.quick_play": "1/minute"}
    play_now(user=alice)
    play_wait_cancel(user=alice)

    with pytest.raises(RateLimitedError):
        play_now(user=alice)

    assert not PlayWait.objects.exists()


def test_the_deadline_task_only_asks(alice: User) -> None:
    play_now(user=alice)

    tasks.play_wait_close(alice.pk)  # early: nothing
    assert PlayWait.objects.exists() and lobby_counts() == (0, 0)

    wait_over()
    tasks.play_wait_close(alice.pk)
    tasks.play_wait_close(alice.pk)  # twice, or late: once
    tasks.play_wait_close(10**9)  # nobody: nothing

    assert Seat.objects.filter(user=alice).count() == 1 and lobby_counts() == (1, 4)


def test_pressing_schedules_the_deadline_task(
    monkeypatch: pytest.MonkeyPatch,
    django_capture_on_commit_callbacks: Any,
    alice: User,
) -> None:
    scheduled: list[dict[str, Any]] = []
    monkeypatch.setattr(
        tasks.play_wait_close, "apply_async", lambda **kwargs: scheduled.append(kwargs)
    )

    with django_capture_on_commit_callbacks(execute=True):
        play_now(user=alice)

    assert scheduled == [{"args": (alice.pk,), "countdown": 4.25}]


# Quick join: the room whose people are closest in rating.


def test_quick_join_prefers_the_room_closest_in_rating(
    ratings: Ratings, make_player: MakePlayer
) -> None:
    owners = [rate(ratings, make_player(), r) for r in (1500, 1900, 1720, 1300)]
    rooms = [room_quick_join(user=owner, base_score=100, seats=4).room for owner in owners[:1]]
    for owner in owners[1:]:  # each opens a room of its own (the first is the oldest)
        rooms.append(room_create(owner=owner, base_score=100, seats=4, name="Q"))
    player = rate(ratings, make_player(), 1750)

    seat = room_quick_join(user=player, base_score=100, seats=4)

    assert seat.room == rooms[2]  # 1720, not the oldest (1500)
    newcomer = rate(ratings, make_player(), 1350)
    assert room_quick_join(user=newcomer, base_score=100, seats=4).room == rooms[3]


def test_quick_join_uses_the_mean_rating_of_the_people_there(
    ratings: Ratings, make_player: MakePlayer
) -> None:
    a, b, c, d = (rate(ratings, make_player(), r) for r in (1200, 2000, 1550, 1750))
    near = room_create(owner=c, base_score=100, seats=4, name="Near")  # 1550, the oldest
    mixed = room_create(owner=a, base_score=100, seats=4, name="Mixed")
    room_join(user=b, room_id=mixed.pk)  # mean 1600

    assert room_quick_join(user=d, base_score=100, seats=4).room == mixed  # 150 < 200
    assert near.pk < mixed.pk


# The pages: the wait, its polling and cancelling.


@pytest.fixture
def page(client: Client, alice: User) -> Client:
    client.force_login(alice)
    return client


def test_the_waiting_page_says_so_in_both_languages(page: Client) -> None:
    page.post(PLAY)

    english = page.get(PLAY, HTTP_ACCEPT_LANGUAGE="en").content.decode()
    chinese = page.get(PLAY, HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()

    assert "Finding players of your level… (4 s)" in english
    assert 'data-testid="play-cancel"' in english and "data-autoplay" not in english
    assert "正在寻找水平相近的玩家… (4 秒)" in chinese


def test_polling_answers_where_the_wait_stands(page: Client, alice: User) -> None:
    page.post(PLAY)

    waiting = page.post(WAIT, HTTP_ACCEPT="application/json").json()
    wait_over()
    seated = page.post(WAIT, HTTP_ACCEPT="application/json").json()
    again = page.post(WAIT, HTTP_ACCEPT="application/json").json()

    room = Seat.objects.get(user=alice).room_id
    assert waiting == {"state": "waiting", "seconds": 4}
    assert seated == again == {"state": "seated", "url": f"/games/table/{room}/"}
    assert page.get(PLAY)["Location"] == f"/games/table/{room}/"


def test_polling_when_not_waiting_goes_back_to_the_lobby(page: Client) -> None:
    assert page.post(WAIT, HTTP_ACCEPT="application/json").json() == {
        "state": "idle",
        "url": "/lobby/",
        "message": "",
    }
    assert page.post(WAIT)["Location"] == "/lobby/"
    assert lobby_counts() == (0, 0)


def test_a_refusal_at_the_deadline_is_told_on_the_lobby(page: Client, alice: User) -> None:
    page.post(PLAY)
    support = User.objects.create_superuser("support1", password="not-used-1")
    transfers_freeze(user=alice, staff=support, note="Dumping to a friend.")
    wait_over()

    answer = page.post(WAIT, HTTP_ACCEPT="application/json").json()
    lobby = page.get("/lobby/", HTTP_ACCEPT_LANGUAGE="en")

    assert answer["state"] == "idle" and "frozen" in answer["message"]
    assert any("frozen" in str(m) for m in lobby.context["messages"])


def test_polling_is_rate_limited(settings: Any, page: Client) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.play_wait": "2/minute"}
    page.post(PLAY)
    page.post(WAIT, HTTP_ACCEPT="application/json")
    page.post(WAIT, HTTP_ACCEPT="application/json")
    wait_over()

    refused = page.post(WAIT, HTTP_ACCEPT="application/json")
    plain = page.post(WAIT)

    assert refused.status_code == 429 and refused.json()["error"] == "rate_limited"
    assert int(refused["Retry-After"]) >= 1 and plain.status_code == 429
    assert PlayWait.objects.exists() and lobby_counts() == (0, 0)  # nothing was done


def test_cancel_from_the_page(page: Client, alice: User) -> None:
    page.post(PLAY)

    response = page.post(CANCEL, follow=True, HTTP_ACCEPT_LANGUAGE="en")

    assert response.redirect_chain == [("/lobby/", 302)]
    assert "You stopped waiting for players." in [str(m) for m in response.context["messages"]]
    assert not PlayWait.objects.exists()


def test_cancel_is_rate_limited(settings: Any, page: Client) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.play_cancel": "1/minute"}
    page.post(CANCEL)
    page.post(PLAY)

    refused = page.post(CANCEL, follow=True, HTTP_ACCEPT_LANGUAGE="en")

    assert refused.redirect_chain == [(PLAY, 302)]
    assert PlayWait.objects.exists()  # still waiting
    assert "Too many requests" in refused.content.decode()


def test_the_new_endpoints_need_post_a_login_and_the_csrf_token(alice: User) -> None:
    anonymous = Client()
    assert anonymous.post(WAIT)["Location"].startswith("/accounts/login/")
    assert anonymous.post(CANCEL)["Location"].startswith("/accounts/login/")
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(alice)
    assert strict.post(WAIT).status_code == 403 and strict.post(CANCEL).status_code == 403
    assert strict.get(WAIT).status_code == 405 and strict.get(CANCEL).status_code == 405


# Races, on PostgreSQL: each thread has its own connection and real transactions.


@requires_postgresql
@pytest.mark.parametrize("attempt", range(3))
def test_two_players_pressing_at_once_end_at_one_table(
    transactional_db: None, make_player: MakePlayer, attempt: int
) -> None:
    alice, bob = make_player(), make_player()

    results = race(lambda: play_now(user=alice), lambda: play_now(user=bob))

    assert all(not isinstance(r, Exception) for r in results), results
    assert sorted(r.seat is None for r in results) == [False, True]  # one waited, one sat
    assert Room.objects.count() == 1 and not PlayWait.objects.exists()
    assert people_of(Room.objects.get()) == sorted([alice.pk, bob.pk])
    assert ledger_audit().ok


@requires_postgresql
def test_one_player_pressing_twice_at_once_waits_once(
    transactional_db: None, make_player: MakePlayer
) -> None:
    alice = make_player()

    results = race(lambda: play_now(user=alice), lambda: play_now(user=alice))

    assert all(not isinstance(r, Exception) and r.wait is not None for r in results), results
    assert PlayWait.objects.count() == 1 and lobby_counts() == (0, 0)


@requires_postgresql
@pytest.mark.parametrize("attempt", range(3))
def test_the_deadline_racing_a_new_player_seats_each_once(
    transactional_db: None, make_player: MakePlayer, attempt: int
) -> None:
    alice, bob = make_player(), make_player()
    play_now(user=alice)
    wait_over()

    results = race(
        lambda: play_wait_check(user=alice),
        lambda: play_now(user=bob),
        lambda: play_wait_check(user=alice),
    )

    assert all(not isinstance(r, Exception) for r in results), results
    alice_seat = Seat.objects.get(user=alice)
    assert all(r.seat == alice_seat for r in (results[0], results[2]))
    bob_seats = Seat.objects.filter(user=bob)
    if bob_seats:  # bob came first: one table, both
        assert bob_seats.get().room == alice_seat.room and Room.objects.count() == 1
    else:  # alice's deadline came first: she sat with bots, bob waits
        assert bots_of(alice_seat.room) == 3 and PlayWait.objects.get().user == bob
    assert ledger_audit().ok


@requires_postgresql
def test_cancel_racing_a_match_leaves_one_outcome(
    transactional_db: None, make_player: MakePlayer
) -> None:
    alice, bob = make_player(), make_player()
    play_now(user=alice)

    cancelled, pressed = race(lambda: play_wait_cancel(user=alice), lambda: play_now(user=bob))

    assert not isinstance(cancelled, Exception) and not isinstance(pressed, Exception)
    if cancelled.seat is not None:  # bob sat her down first: too late to cancel
        assert pressed.seat == Seat.objects.get(user=bob) and not PlayWait.objects.exists()
        assert cancelled.seat.room == pressed.seat.room
    else:  # she left the pool first: bob waits alone
        assert pressed.wait is not None and lobby_counts() == (0, 0)
        assert PlayWait.objects.get().user == bob


def test_a_guest_never_waits_for_people_and_meets_none(ratings: Ratings, alice: User) -> None:
    from accounts.services import guest_create

    rate(ratings, alice, 1500)
    assert play_now(user=alice).wait is not None  # a person waits for company
    guest = guest_create(address="198.51.100.77")

    pressed = play_now(user=guest)

    # Seated at once, with bots only: the waiting person is not its company.
    assert pressed.seat is not None and pressed.wait is None
    assert people_of(pressed.seat.room) == [guest.pk]
    assert not PlayWait.objects.filter(user=guest).exists()
    assert PlayWait.objects.filter(user=alice).exists()

"""Duplicate matches (games.live.duplicate): tables that deal the same seeded deals in
lockstep, reveal a deal everywhere together, and compare the players who held the same cards.

Transactional tests, so that ``on_commit`` fires (the match advances on commit); bot tasks are
recorded, never run, and no deadline poller runs: the tests act for the bots
(``drive_bots``) and move the clock.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.test import Client
from rest_framework.throttling import SimpleRateThrottle

from accounts.selectors import ledger_audit
from games.history import matches
from games.live import bots, duplicate, tasks
from games.live import matches as live_matches
from games.live import notify as table_notify
from games.live import reads as table_reads
from games.live import services as table_services
from games.live import store as table_store
from games.live.matches import (
    InvalidMatchDeals,
    InvalidMatchTables,
    TooManyMatches,
    match_create,
)
from games.models import DuplicateMatch, MatchStatus, Round, RuleConfiguration, Table
from games.rules.cards import format_cards, parse_cards
from games.table.deck import (
    commitment,
    seed_commitment,
    seeded_deck,
    seeded_salt,
    seeded_start_seat,
)
from games.table.errors import TableError
from games.table.state import Phase
from lobby.errors import AlreadySeated
from lobby.models import Room, RoomStatus, Seat
from lobby.services import room_join, room_leave
from shisanshui.errors import RateLimitedError
from tests.games.table_helpers import (
    fast_rules,
    make_player,
    state_of,
    submit_best,
    table_id,
    total_coins,
)

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class World:
    clock: float


@pytest.fixture
def world(monkeypatch: pytest.MonkeyPatch, settings: Any) -> Iterator[World]:
    settings.BOT_DELAY_SCALE = 0
    w = World(clock=time.time() - 3600)
    monkeypatch.setattr(table_store, "clock", lambda: w.clock)
    monkeypatch.setattr(table_notify, "send_messages", lambda table_id, message: None)
    monkeypatch.setattr(tasks.bot_act, "apply_async", lambda **kw: None)
    # Fixed seeds, so that every run deals the same (a match's seed is token_hex(32)).
    seeds = iter(f"{n:064x}" for n in range(1000, 2000))
    monkeypatch.setattr(live_matches.secrets, "token_hex", lambda nbytes=32: next(seeds))
    yield w


def rooms_of(match: DuplicateMatch) -> list[Room]:
    return list(Room.objects.filter(match=match).order_by("match_table"))


def drive_bots(rooms: list[Room]) -> None:
    """Every bot of every table does what it has to, as its task would, until none can."""
    for _ in range(30):
        acted = False
        for room in rooms:
            state = state_of(room)
            for seat in state.seats:
                if seat.bot and bots.bot_action(state, player=seat.player):
                    bots.bot_act(
                        table_id=table_id(room),
                        user_id=int(seat.player),
                        version=state_of(room).version,
                    )
                    acted = True
                    state = state_of(room)
        if not acted:
            return
    raise AssertionError("the bots never ran out of things to do")


def finish_comparisons(world: World, rooms: list[Room]) -> None:
    """Let every comparing table's reveal end (the clock moves to its deadline)."""
    for room in rooms:
        state = state_of(room)
        if state.phase is Phase.COMPARING:
            assert state.deadline is not None
            world.clock = max(world.clock, state.deadline)
            table_services.table_timeout(
                table_id=table_id(room), version=state.version, phase=state.phase.value
            )


def play(room: Room, user: Any) -> None:
    """The player answers a special hand No, then submits the engine's best arrangement."""
    seat = state_of(room).seat_of(str(user.pk))
    assert seat is not None
    if seat.choosing:
        table_services.table_choose_special(user=user, room=room, play_special=False)
    submit_best(room, user)


def end_the_deal(world: World, rooms: list[Room]) -> None:
    """The deal's pace is over (1 ms a card) at every table: arranging starts."""
    world.clock += 0.1
    for room in rooms:
        state = state_of(room)
        table_services.table_timeout(
            table_id=table_id(room), version=state.version, phase=state.phase.value
        )


def hands(room: Room) -> dict[int, tuple[str, ...]]:
    return {s.position: tuple(map(str, s.hand or ())) for s in state_of(room).round_seats}


def open_match(owner: Any, **overrides: Any) -> DuplicateMatch:
    options: dict[str, Any] = {
        "base_score": 10,
        "seats": 2,
        "tables": 2,
        "deals": 2,
        "name": "Duplicate",
        "rules": RuleConfiguration.objects.filter(name="Fast (tests)").first() or fast_rules(),
        "bots": True,
    }
    options.update(overrides)
    return match_create(owner=owner, **options)


def test_a_match_opens_its_tables_and_seats_the_field(world: World) -> None:
    alice = make_player("alice")
    match = open_match(alice, tables=3, seats=3)
    rooms = rooms_of(match)
    assert [r.name for r in rooms] == ["Duplicate · 1", "Duplicate · 2", "Duplicate · 3"]
    assert [r.match_table for r in rooms] == [1, 2, 3]
    assert all(r.seats == 3 and r.base_score == 10 and not r.is_private for r in rooms)
    assert Seat.objects.get(user=alice).room == rooms[0]
    assert [Seat.objects.filter(room=r).count() for r in rooms] == [3, 3, 3]
    for room in rooms:
        state = state_of(room)
        assert state.lockstep and state.last_round == 2 and len(state.seats) == 3
    assert match.seed_commitment == seed_commitment(match.seed)
    assert len(match.seed) == 64 and match.seed_revealed is None


def test_every_table_deals_the_same_cards_together_and_reveals_together(world: World) -> None:
    alice = make_player("alice")
    before_coins = total_coins()
    match = open_match(alice)
    one, two = rooms = rooms_of(match)

    drive_bots(rooms)  # the bots press Ready; the field's table waits for alice's
    assert state_of(two).match_ready and state_of(two).phase is Phase.WAITING
    assert state_of(one).phase is Phase.WAITING

    table_services.table_ready(user=alice, room=one)
    drive_bots(rooms)  # her table's bot presses Ready after her: the match's last Ready
    first, second = state_of(one), state_of(two)
    assert first.round_no == second.round_no == 1
    assert hands(one) == hands(two) and len(hands(one)) == 2
    assert first.commitment == second.commitment
    deck = seeded_deck(first.config.deck.cards, match.seed, 1)
    assert first.deck == deck
    assert first.commitment == commitment(deck, seeded_salt(match.seed, 1))
    assert first.start_seat == seeded_start_seat([0, 1], match.seed, 1)

    # The field plays at once; its table waits for alice's before anything is shown.
    end_the_deal(world, rooms)
    drive_bots(rooms)
    held = state_of(two)
    assert held.held and held.phase is Phase.ARRANGING and held.deadline is None
    assert not held.revealed and held.result is None
    assert state_of(one).phase in (Phase.ARRANGING, Phase.SPECIAL_CHOICE)

    play(one, alice)
    assert state_of(one).phase is Phase.COMPARING
    assert state_of(two).phase is Phase.COMPARING  # released together
    finish_comparisons(world, rooms)
    assert state_of(one).phase is Phase.SETTLED and state_of(two).phase is Phase.SETTLED

    # Deal 2: a different deal, the same at both tables; alice times out this time.
    drive_bots(rooms)
    table_services.table_ready(user=alice, room=one)
    drive_bots(rooms)
    assert hands(one) == hands(two)
    assert state_of(one).deck == seeded_deck(first.config.deck.cards, match.seed, 2) != deck
    end_the_deal(world, rooms)
    drive_bots(rooms)
    state = state_of(one)
    world.clock = state.arrange_deadline or state.deadline or world.clock
    table_services.table_timeout(
        table_id=table_id(one), version=state.version, phase=state.phase.value
    )
    assert state_of(one).phase is Phase.COMPARING and state_of(two).phase is Phase.COMPARING
    finish_comparisons(world, rooms)

    # The match is over: its seed is out, every round's deck is the seed's, the bots went.
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED and match.finished_at is not None
    assert match.seed_revealed == match.seed
    for round_ in Round.objects.filter(table__room__match=match):
        cards = parse_cards(round_.deck.split(), deck=first.config.deck)
        assert tuple(cards) == seeded_deck(first.config.deck.cards, match.seed, round_.number)
        assert round_.salt == seeded_salt(match.seed, round_.number)
    assert not Seat.objects.filter(room=two).exists()
    assert Room.objects.get(pk=two.pk).status == RoomStatus.CLOSED
    assert Seat.objects.filter(room=one).count() == 1  # alice stays until she leaves
    with pytest.raises(TableError) as refused:
        table_services.table_ready(user=alice, room=one)
    assert refused.value.code == "match_over"
    assert total_coins() == before_coins
    assert ledger_audit().ok


def test_the_results_compare_the_players_who_held_the_same_cards(world: World) -> None:
    alice = make_player("alice")
    match = open_match(alice, deals=1)
    rooms = rooms_of(match)
    drive_bots(rooms)
    table_services.table_ready(user=alice, room=rooms[0])
    drive_bots(rooms)
    assert matches.match_results(match)["results"] == []  # nothing shown while in play
    end_the_deal(world, rooms)
    drive_bots(rooms)
    assert matches.match_results(match)["results"] == []
    play(rooms[0], alice)
    finish_comparisons(world, rooms)

    match.refresh_from_db()
    results = matches.match_results(match)
    assert results["status"] == "finished" and results["deals_played"] == 1
    assert results["seed"] == match.seed and results["seed_verified"] is True
    (deal,) = results["results"]
    assert [h["position"] for h in deal["hands"]] == [0, 1]
    players = {}
    for hand in deal["hands"]:
        assert len(hand["entries"]) == 2  # one per table
        par = sum(e["water"] for e in hand["entries"]) / 2
        assert hand["par"] == pytest.approx(par)
        assert sum(e["vs_par"] for e in hand["entries"]) == pytest.approx(0)
        rounds = Round.objects.filter(table__room__match=match)
        for entry in hand["entries"]:
            row = rounds.get(table__room__match_table=entry["table"]).players.get(
                position=hand["position"]
            )
            assert row.cards.split() == hand["cards"]
            assert entry["water"] == row.water and entry["coins"] == row.delta
            players[entry["user_id"]] = entry
    standings = results["standings"]
    assert [s["rank"] for s in standings] == [1, 2, 3, 4]
    assert {s["user_id"] for s in standings} == set(players)
    assert [s["score"] for s in standings] == sorted((s["score"] for s in standings), reverse=True)
    mine = next(s for s in standings if s["user_id"] == alice.pk)
    assert mine["score"] == players[alice.pk]["vs_par"] and mine["deals"] == 1


def test_the_seed_and_unfinished_deals_stay_secret_while_the_match_is_played(
    world: World,
) -> None:
    alice = make_player("alice")
    match = open_match(alice)
    results = matches.match_results(match)
    assert results["seed"] is None and results["seed_verified"] is None
    assert results["seed_commitment"] == match.seed_commitment
    assert match.seed not in str(results)


def test_a_match_nobody_plays_any_more_is_abandoned_and_its_bots_leave(world: World) -> None:
    alice = make_player("alice")
    match = open_match(alice, tables=3)
    rooms = rooms_of(match)
    drive_bots(rooms)
    room_leave(user=alice)

    match.refresh_from_db()
    assert match.status == MatchStatus.ABANDONED and match.finished_at is not None
    assert not Seat.objects.filter(room__match=match).exists()
    for room in rooms[1:]:
        assert Room.objects.get(pk=room.pk).status == RoomStatus.CLOSED
    assert ledger_audit().ok


def test_a_person_can_take_a_seat_of_a_match_and_play_in_it(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    match = open_match(alice, bots=False)
    one, two = rooms_of(match)
    room_join(user=bob, room_id=two.pk)
    assert state_of(two).seat_of(str(bob.pk)) is not None
    # Half-empty tables never start, whoever is ready.
    table_services.table_ready(user=alice, room=one)
    table_services.table_ready(user=bob, room=two)
    assert state_of(one).phase is Phase.WAITING and state_of(two).phase is Phase.WAITING
    assert duplicate.match_advance(match_id=match.pk) is None


def test_a_table_out_of_the_match_refuses_the_match_commands(world: World) -> None:
    from games.table import machine

    state = state_of(rooms_of(open_match(make_player("alice")))[0])
    with pytest.raises(TableError) as refused:
        machine.start(state, now=world.clock)
    assert refused.value.code == "match_not_ready"
    with pytest.raises(TableError) as refused:
        machine.release(state, now=world.clock)
    assert refused.value.code == "not_held"


@pytest.mark.parametrize(
    ("overrides", "error"),
    [
        ({"tables": 1}, InvalidMatchTables),
        ({"tables": 5}, InvalidMatchTables),
        ({"tables": True}, InvalidMatchTables),
        ({"tables": "2"}, InvalidMatchTables),
        ({"deals": 0}, InvalidMatchDeals),
        ({"deals": 25}, InvalidMatchDeals),
        ({"deals": 2.0}, InvalidMatchDeals),
    ],
)
def test_bad_match_input_is_refused_and_writes_nothing(
    world: World, overrides: dict[str, Any], error: type[Exception]
) -> None:
    alice = make_player("alice")
    with pytest.raises(error):
        open_match(alice, **overrides)
    assert not DuplicateMatch.objects.exists() and not Room.objects.exists()


def test_one_playing_match_per_owner_and_none_while_seated(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    match = open_match(alice, bots=False)
    with pytest.raises(AlreadySeated):
        open_match(alice)
    room_join(user=bob, room_id=rooms_of(match)[1].pk)
    room_leave(user=alice)  # bob still plays in it: the match goes on
    with pytest.raises(TooManyMatches):
        open_match(alice)
    room_leave(user=bob)  # nobody sits at any of its tables: abandoned
    match.refresh_from_db()
    assert match.status == MatchStatus.ABANDONED
    open_match(alice)
    assert DuplicateMatch.objects.filter(owner=alice).count() == 2


def test_opening_matches_spends_the_room_creation_rate(world: World, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "lobby.room_create": "1/minute"}
    alice = make_player("alice")
    open_match(alice)
    room_leave(user=alice)
    with pytest.raises(RateLimitedError):
        open_match(alice)
    assert DuplicateMatch.objects.count() == 1


def test_the_seeded_deal_is_a_uniform_permutation_fixed_by_seed_and_deal() -> None:
    from games.rules.config import DEFAULT_CONFIG

    cards = DEFAULT_CONFIG.deck.cards
    seed = "ab" * 32
    one = seeded_deck(cards, seed, 1)
    assert sorted(map(str, one)) == sorted(map(str, cards))
    assert one == seeded_deck(cards, seed, 1)
    assert one != seeded_deck(cards, seed, 2) != seeded_deck(cards, "cd" * 32, 1)
    assert format_cards(one) != format_cards(cards)
    # Rough uniformity: each card lands in the first hand about a quarter of the time.
    firsts = [seeded_deck(cards, f"{k:064x}", 1)[0] for k in range(2000)]
    assert max(firsts.count(c) for c in set(firsts)) < 2000 / 52 * 2.2
    with pytest.raises(ValueError, match="64 hex"):
        seeded_deck(cards, "00", 1)


# -- the API and the pages ---------------------------------------------------------------------


def logged_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


def play_out(world: World, match: DuplicateMatch, person: Any) -> None:
    """Play every deal of the match: the person plays its best, the bots theirs."""
    rooms = rooms_of(match)
    mine = Seat.objects.get(user=person).room
    for _ in range(match.deals):
        drive_bots(rooms)
        table_services.table_ready(user=person, room=mine)
        drive_bots(rooms)
        end_the_deal(world, rooms)
        drive_bots(rooms)
        play(mine, person)
        finish_comparisons(world, rooms)


def test_the_api_opens_a_match_and_refuses_bad_input(world: World) -> None:
    alice = make_player("alice")
    client = logged_in(alice)
    rules = RuleConfiguration.objects.filter(name="Fast (tests)").first() or fast_rules()
    bad = [
        ({"tables": 9}, "invalid_match_tables"),
        ({"deals": 0}, "invalid_match_deals"),
        ({"seats": 7}, "invalid_seat_count"),
        ({"bot_level": "godlike"}, "invalid"),
        ({"base_score": "lots"}, "invalid"),
    ]
    body = {"base_score": 10, "seats": 2, "tables": 2, "deals": 3, "rules": rules.pk, "bots": True}
    for change, code in bad:
        response = client.post("/api/games/matches/", {**body, **change}, "application/json")
        assert response.status_code == 400, (change, response.content)
        assert response.json()["error"]["code"] == code
    assert not DuplicateMatch.objects.exists() and not Room.objects.exists()

    response = client.post("/api/games/matches/", body, content_type="application/json")
    assert response.status_code == 201
    data = response.json()
    assert data["status"] == "playing" and data["tables"] == 2 and data["deals"] == 3
    assert data["seed"] is None and data["results"] == [] and len(data["rooms"]) == 2
    match = DuplicateMatch.objects.get()
    assert data["seed_commitment"] == match.seed_commitment
    assert match.seed not in response.content.decode()
    again = client.post("/api/games/matches/", body, content_type="application/json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_seated"
    assert Client().post("/api/games/matches/", body, "application/json").status_code == 403

    # The lobby's rows say which match a room belongs to.
    row = client.get(f"/api/lobby/rooms/{data['rooms'][1]['id']}/").json()
    assert row["match"] == {
        "id": match.pk,
        "table": 2,
        "tables": 2,
        "deals": 3,
        "status": "playing",
    }


def test_the_results_api_and_page_show_the_finished_match(world: World) -> None:
    alice, bob = make_player("alice"), make_player("bob")
    match = open_match(alice, deals=2)
    play_out(world, match, alice)
    match.refresh_from_db()
    assert match.status == MatchStatus.FINISHED

    response = logged_in(bob).get(f"/api/games/matches/{match.pk}/")
    assert response.status_code == 200
    data = response.json()
    assert data["seed"] == match.seed and data["seed_verified"] is True
    assert data["deals_played"] == 2 and len(data["results"]) == 2
    assert data == json.loads(json.dumps(matches.match_results(match)))
    assert logged_in(bob).get("/api/games/matches/999999/").status_code == 404
    assert Client().get(f"/api/games/matches/{match.pk}/").status_code == 403

    page = logged_in(alice).get(f"/games/matches/{match.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert page.status_code == 200
    html = page.content.decode()
    assert "排名" in html and match.seed in html and 'data-testid="my-standing"' in html
    assert html.count('data-testid="match-deal"') == 2
    assert logged_in(bob).get("/games/matches/999999/").status_code == 404


def test_results_are_rate_limited(world: World, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = make_player("alice")
    match = open_match(alice)
    monkeypatch.setitem(SimpleRateThrottle.THROTTLE_RATES, "match_results", "2/min")
    client = logged_in(alice)
    codes = [client.get(f"/api/games/matches/{match.pk}/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]


def test_the_lobby_form_opens_a_match_and_goes_to_its_first_table(world: World) -> None:
    alice = make_player("alice")
    client = logged_in(alice)
    assert client.get("/lobby/create-match/").status_code == 200
    rules = RuleConfiguration.objects.filter(name="Fast (tests)").first() or fast_rules()
    form = {
        "name": "Friday",
        "rules": rules.pk,
        "base_score": 10,
        "tables": 3,
        "seats": 2,
        "deals": 4,
        "bots": "on",
        "bot_level": "normal",
    }
    refused = client.post("/lobby/create-match/", {**form, "deals": 30})
    assert refused.status_code == 302 and refused["Location"] == "/lobby/create-match/"
    assert not DuplicateMatch.objects.exists()

    response = client.post("/lobby/create-match/", form)
    match = DuplicateMatch.objects.get()
    first = rooms_of(match)[0]
    assert response.status_code == 302 and response["Location"] == f"/games/table/{first.pk}/"
    assert (match.name, match.tables, match.deals) == ("Friday", 3, 4)
    assert all(r.bot_level == "normal" for r in rooms_of(match))
    table_page = client.get(f"/games/table/{first.pk}/").content.decode()
    assert 'data-testid="match-chip"' in table_page and f"/games/matches/{match.pk}/" in table_page


def test_the_table_snapshot_says_the_table_is_a_match_table(world: World) -> None:
    from games.table.perspective import snapshot_for

    alice = make_player("alice")
    match = open_match(alice)
    one = rooms_of(match)[0]
    snap = snapshot_for(state_of(one), 0, now=world.clock)
    assert snap["match"] == {"last_round": 2, "held": False}
    assert "seed" not in json.dumps(snap)


def test_the_results_page_is_rate_limited(world: World, settings: Any) -> None:
    settings.RATE_LIMITS = {**settings.RATE_LIMITS, "games.match_page": "2/minute"}
    alice = make_player("alice")
    match = open_match(alice)
    client = logged_in(alice)
    codes = [client.get(f"/games/matches/{match.pk}/").status_code for _ in range(3)]
    assert codes == [200, 200, 429]
    assert logged_in(make_player("bob")).get(f"/games/matches/{match.pk}/").status_code == 200


def test_after_the_last_deal_the_players_go_back_to_the_room_list_because_it_is_over(
    world: World,
) -> None:
    alice = make_player("alice")
    match = open_match(alice, deals=1)
    play_out(world, match, alice)
    one = rooms_of(match)[0]
    state = state_of(one)
    assert state.match_over and [s.player for s in state.seats] == [str(alice.pk)]
    world.clock = state.deadline or world.clock
    table_services.table_timeout(
        table_id=table_id(one), version=state.version, phase=state.phase.value
    )
    left = [
        e
        for e in table_reads.table_events_since(
            table=Table.objects.get(room=one), version=state.version
        )
        if e.type == "left"
    ]
    assert [e.payload["reason"] for e in left] == ["match_over"]
    assert not Seat.objects.filter(user=alice).exists()
    page = logged_in(alice).get("/lobby/?left=match_over").content.decode()
    assert "last round is played" in page

"""The replay of a settled round (games.history.replay, the view games:round_replay) and the links
to
the hand history.

Rounds are played through the table services with chosen hands (tests/games/replay_helpers.py):
guns (打枪), a run-over (辗过), a declared special (六对半) and a home run (全垒打) are named as
RULES.md §7.2–7.3 say, row by row water adds up to the stored pair results, and only the
round's players and staff may open a replay, never before the settlement.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client
from django.urls import reverse

from accounts.models import User
from games.history import audit
from games.history.replay import round_replay_data
from games.history.selectors import rounds_hidden_until_settled
from games.models import Round
from tests.games.replay_helpers import (
    ALICE,
    BOB,
    CAROL,
    GUNS_AND_SPECIAL,
    HOME_RUN,
    play_rigged_round,
    positions,
)
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]


def logged_in(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def replay_url(round_: Round) -> str:
    return reverse("games:round_replay", args=[round_.pk])


def page_data(html: str) -> dict[str, Any]:
    """The replay's data as the page embeds it (json_script "replay-data")."""
    match = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', html)
    assert match, "no replay data on the page"
    return json.loads(match.group(1))


def data_for(round_: Round, viewer: int | None) -> dict[str, Any]:
    return round_replay_data(round_=rounds_hidden_until_settled().get(pk=round_.pk), viewer=viewer)


def step_names(data: dict[str, Any]) -> list[str]:
    return [s["row"] if s["kind"] == "row" else s["kind"] for s in data["steps"]]


@pytest.fixture
def four(monkeypatch: pytest.MonkeyPatch) -> tuple[Round, dict[str, User]]:
    return play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)


# -- the data: steps, rows, guns, specials, settlement -------------------------------------------


def test_7_2_guns_a_run_over_and_a_special_are_named_and_the_rows_add_up(
    four: tuple[Round, dict[str, User]],
) -> None:
    round_, _users = four
    seat = positions(round_)
    data = data_for(round_, seat["alice"])
    assert step_names(data) == [
        "deal",
        "arrange",
        "front",
        "middle",
        "back",
        "guns",
        "specials",
        "settle",
    ]
    players = {p["name"]: p for p in data["players"]}
    assert [p["position"] for p in data["players"]] == sorted(seat.values())
    assert players["alice"]["you"] and not any(players[n]["you"] for n in ("bob", "carol", "dave"))
    # The deal: every player's 13 cards (the settlement revealed the deck to the table).
    assert sorted(players["bob"]["cards"]) == sorted(BOB.dealt())
    assert sorted(players["carol"]["cards"]) == sorted(CAROL.dealt())
    # The arrangements, with each row's hand; the special is not arranged.
    alice_rows = players["alice"]["rows"]
    assert {r: sorted(alice_rows[r]["cards"]) for r in alice_rows} == {
        "front": sorted(ALICE.front.split()),
        "middle": sorted(ALICE.middle.split()),
        "back": sorted(ALICE.back.split()),
    }
    assert {r: alice_rows[r]["category"] for r in alice_rows} == {
        "front": "pair",
        "middle": "full_house",
        "back": "quads",
    }
    assert players["carol"]["rows"] is None
    assert players["carol"]["special"] == "six_pairs" and players["carol"]["special_water"] == 4

    # Row by row: who beat whom and the water, row bonuses included (RULES.md §7.1).
    by_name = {v: k for k, v in seat.items()}
    rows = {s["row"]: s for s in data["steps"] if s["kind"] == "row"}
    water = {r: {by_name[w["position"]]: w["water"] for w in s["water"]} for r, s in rows.items()}
    assert water == {
        "front": {"alice": 1, "bob": -2, "dave": 1},
        "middle": {"alice": 4, "bob": -3, "dave": -1},  # alice's full house: +1 bonus
        "back": {"alice": 8, "bob": -5, "dave": -3},  # alice's quads: +3 bonus
    }
    front = {(by_name[d["a"]], by_name[d["b"]]): d for d in rows["front"]["duels"]}
    assert front[tuple(sorted(("alice", "dave"), key=seat.get))]["winner"] is None  # tie
    duel = front[tuple(sorted(("bob", "dave"), key=seat.get))]
    assert (by_name[duel["winner"]], by_name[duel["loser"]], duel["water"]) == ("dave", "bob", 1)
    back = {frozenset((by_name[d["a"]], by_name[d["b"]])): d for d in rows["back"]["duels"]}
    assert back[frozenset(("alice", "bob"))]["water"] == 4
    assert back[frozenset(("alice", "bob"))]["bonus"] == 3

    # Guns: a gun wins all three rows, a run-over wins with a tied row (§7.2); no home run.
    (guns,) = [s for s in data["steps"] if s["kind"] == "guns"]
    assert guns["home_run"] is None
    assert sorted(
        (by_name[g["shooter"]], by_name[g["target"]], g["kind"], g["home_run"], g["water"])
        for g in guns["guns"]
    ) == [
        ("alice", "bob", "gun", False, 3),
        ("alice", "dave", "run_over", False, 3),
        ("dave", "bob", "gun", False, 3),
    ]
    # The special wins its water from every normal player (§7.3).
    (specials,) = [s for s in data["steps"] if s["kind"] == "specials"]
    (six_pairs,) = specials["specials"]
    assert by_name[six_pairs["position"]] == "carol" and six_pairs["special"] == "six_pairs"
    assert {by_name[a["position"]]: a["water"] for a in six_pairs["against"]} == {
        "alice": 4,
        "bob": 4,
        "dave": 4,
    }

    # The settlement is the stored one, and the rows add up to each pair's row water.
    assert {n: p["water"] for n, p in players.items()} == {
        "alice": 15,
        "bob": -20,
        "carol": 12,
        "dave": -7,
    }
    stored = {p.user.username: p for p in round_.players.select_related("user")}
    assert {n: p["delta"] for n, p in players.items()} == {n: p.delta for n, p in stored.items()}
    assert {n: p["delta"] for n, p in players.items()} == {
        "alice": 150,
        "bob": -200,
        "carol": 120,
        "dave": -70,
    }
    pairs = data["settlement"]["pairs"]
    assert len(pairs) == 6
    for pair in pairs:
        if pair["rows"] is None:
            assert pair["special_water"] != 0
            continue
        from_a = 0
        for step in rows.values():
            (duel,) = [d for d in step["duels"] if {d["a"], d["b"]} == {pair["a"], pair["b"]}]
            if duel["winner"] is not None:
                from_a += duel["water"] if duel["winner"] == pair["a"] else -duel["water"]
        assert from_a == pair["row_water"] + pair["bonus_water"], pair
    run_over = [p for p in pairs if p["run_over"]]
    assert [(by_name[p["shooter"]], p["gun"]) for p in run_over] == [("alice", "gun")]


def test_7_2_a_home_run_counts_the_run_over_as_a_gun(monkeypatch: pytest.MonkeyPatch) -> None:
    round_, _users = play_rigged_round(monkeypatch, HOME_RUN)
    seat = positions(round_)
    by_name = {v: k for k, v in seat.items()}
    data = data_for(round_, None)
    assert step_names(data) == ["deal", "arrange", "front", "middle", "back", "guns", "settle"]
    (guns,) = [s for s in data["steps"] if s["kind"] == "guns"]
    assert by_name[guns["home_run"]] == "alice"
    assert sorted(
        (by_name[g["shooter"]], by_name[g["target"]], g["kind"], g["home_run"], g["water"])
        for g in guns["guns"]
    ) == [
        ("alice", "bob", "gun", True, 12),
        ("alice", "dave", "run_over", True, 12),
        ("dave", "bob", "gun", False, 3),
    ]
    assert data["settlement"]["home_run"] == seat["alice"]
    assert {by_name[p["position"]]: p["water"] for p in data["players"]} == {
        "alice": 37,
        "bob": -25,
        "dave": -12,
    }
    assert not any(p["you"] for p in data["players"])
    assert data["viewer"] is None


def test_the_replay_of_a_round_in_play_is_refused_by_the_selector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    round_, users = play_rigged_round(monkeypatch, HOME_RUN, settle=False)
    with pytest.raises(audit.RoundInPlay):
        data_for(round_, positions(round_)["alice"])


# -- the page: who may open it -------------------------------------------------------------------


def test_the_players_see_the_round_drawn_from_the_data_and_nothing_secret(
    four: tuple[Round, dict[str, User]], django_assert_max_num_queries: Any
) -> None:
    round_, users = four
    seat = positions(round_)
    for name in ("alice", "carol"):
        client = logged_in(users[name])
        # The session, the user, the round, its players with their users, the header's balance.
        with django_assert_max_num_queries(6):
            response = client.get(replay_url(round_))
        assert response.status_code == 200
        html = response.content.decode()
        data = page_data(html)
        assert data["viewer"] == seat[name] == response.context["replay"]["viewer"]
        assert data["names"]["specials"]["six_pairs"] == {"zh": "六对半", "en": "Six pairs"}
        assert data["names"]["categories"]["quads"] == {"zh": "铁支", "en": "Quads"}
        assets = ("games/cards.js", "games/replay.js", "games/replay.css", "games/cards.css")
        for script in ("/jsi18n/", *assets):
            assert script in html, script
        assert 'data-testid="replay-step"' in html and 'data-testid="replay-next"' in html
        assert f"You played seat {seat[name] + 1}." in html
        # Nothing of what the table never showed: no salt, no deck, no balances, no JSON dump.
        round_.refresh_from_db()
        assert round_.salt not in html and round_.deck not in html
        assert {"deck", "salt", "balances", "commitment"}.isdisjoint(data["round"])
        assert "balances" not in json.dumps(data) and "suggestions" not in json.dumps(data)
        assert "<pre>" not in html


def test_only_the_rounds_players_and_staff_open_a_replay(
    four: tuple[Round, dict[str, User]], support: User, rules_admin: User
) -> None:
    round_, users = four
    url = replay_url(round_)
    erin = make_player("erin")  # plays too, but not this round
    assert logged_in(erin).get(url).status_code == 404
    assert logged_in(rules_admin).get(url).status_code == 404  # staff without view_round
    anonymous = Client().get(url)
    assert anonymous.status_code == 302 and "/accounts/login/" in anonymous["Location"]
    assert logged_in(users["bob"]).get(reverse("games:round_replay", args=[0])).status_code == 404
    assert logged_in(users["bob"]).post(url).status_code == 405
    staff = logged_in(support).get(url)
    assert staff.status_code == 200
    assert page_data(staff.content.decode())["viewer"] is None
    assert "Staff view of a settled round." in staff.content.decode()


def test_a_round_in_play_is_replayed_to_nobody(monkeypatch: pytest.MonkeyPatch) -> None:
    round_, users = play_rigged_round(monkeypatch, HOME_RUN, settle=False)
    url = replay_url(round_)
    for user in users.values():
        response = logged_in(user).get(url)
        html = response.content.decode()
        assert response.status_code == 403
        assert "its replay opens once it is settled" in html
        assert 'id="replay-data"' not in html and "replay.js" not in html
        dealt = round_.players.get(user=user).cards.split()
        assert len(dealt) == 13
        assert not any(f'"{card}"' in html for card in dealt)
    assert logged_in(make_player("erin")).get(url).status_code == 404


def test_the_replay_page_speaks_chinese(four: tuple[Round, dict[str, User]]) -> None:
    round_, users = four
    html = (
        logged_in(users["bob"])
        .get(replay_url(round_), HTTP_ACCEPT_LANGUAGE="zh-hans")
        .content.decode()
    )
    assert "回放控制" in html and "本局步骤" in html and "牌局历史" in html


def test_every_string_of_the_replay_script_is_translated() -> None:
    """Each gettext() string of replay.js has a Chinese msgstr in the games djangojs.po."""
    script = Path(finders.find("games/replay.js")).read_text()
    wanted = set(re.findall(r'\b_\("((?:[^"\\]|\\.)*)"\)', script))
    po = ROOT / "games/locale/zh_Hans/LC_MESSAGES/djangojs.po"
    entry = r'msgid "((?:[^"\\]|\\.)*)"\nmsgstr "(?:[^"\\]|\\.)+"'
    translated = set(re.findall(entry, po.read_text()))
    assert len(wanted) > 40, "no strings found"
    assert wanted - translated == set()


def test_the_javascript_catalogue_serves_the_replay_strings_in_chinese(client: Client) -> None:
    chinese = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert '"Run-over \\u8f97\\u8fc7": "\\u8f97\\u8fc7"' in chinese  # 辗过
    assert '"Pause": "\\u6682\\u505c"' in chinese  # 暂停


# -- links: the header, the profile, the hand history --------------------------------------------


def test_the_hand_history_is_linked_from_the_header_and_the_profile_and_links_replays(
    four: tuple[Round, dict[str, User]],
) -> None:
    round_, users = four
    history = reverse("games:history")
    client = logged_in(users["dave"])
    for page in (reverse("lobby:index"), reverse("accounts:profile"), history):
        html = client.get(page).content.decode()
        assert f'<a href="{history}" data-nav="history">History</a>' in html, page
    profile = client.get(reverse("accounts:profile")).content.decode()
    assert f'<a href="{history}" data-nav="history">Hand history</a>' in profile
    chinese = client.get(reverse("accounts:profile"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert f'<a href="{history}" data-nav="history">牌局记录</a>' in chinese.content.decode()
    assert f'<a href="{history}" data-nav="history">牌局历史</a>' in chinese.content.decode()
    rows = client.get(history).content.decode()
    assert f'<tr data-round="{round_.pk}">' in rows
    assert f'href="{replay_url(round_)}"' in rows
    # Nobody logged in: no link to a history.
    assert history not in Client().get(reverse("accounts:login")).content.decode()

"""The replay of a settled round (games.history.replay, the view games:round_replay) and the links
to the hand history.

Rounds are played through the table services with chosen hands (tests/games/replay_helpers.py).
The replay is the round's public events — what a spectator's socket was sent from the round's
start to its settlement — after a spectator's snapshot of the table before the round: the
reveals row by row, guns (打枪), a run-over (辗过), a declared special (六对半) and a home run
(全垒打) as RULES.md §7.2–7.3 say, and the stored result. Nothing private (a hand as dealt, a
draft), no chat, no salt or deck is in it; only the round's players and staff may open it,
never before the settlement.
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

from accounts.groups import ECONOMY_ADMIN
from accounts.models import EconomySettings, User
from accounts.services import economy_settings_get_or_create
from games.history import audit
from games.history.replay import round_log, round_replay_data
from games.history.selectors import rounds_hidden_until_settled
from games.live import services as table_services
from games.models import Round
from games.rules.config import RuleConfig
from games.table.perspective import events_for
from lobby.models import Room
from tests.games.conftest import MakeStaff
from tests.games.replay_helpers import (
    ALICE,
    BOB,
    CAROL,
    DAVE,
    GUNS_AND_SPECIAL,
    HOME_RUN,
    play_rigged_round,
    positions,
)
from tests.games.table_helpers import make_player

pytestmark = pytest.mark.django_db(transaction=True)

ROOT = Path(__file__).resolve().parents[3]
PRIVATE = {"hand", "special_chosen", "arrangement", "draft_saved"}
DRAFT = {"note": "a-draft-nobody-else-sees"}
CHAT = "a-word-at-the-table"


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


def of_type(data: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in data["events"] if e["type"] == kind]


def draft_and_chat(room: Room, users: dict[str, User]) -> None:
    """Bob saves a draft (private) and Alice says something (public), while hands are arranged."""
    table_services.table_save_draft(user=users["bob"], room=room, draft=DRAFT)
    table_services.table_chat(user=users["alice"], room=room, kind="text", value=CHAT)


@pytest.fixture
def four(monkeypatch: pytest.MonkeyPatch) -> tuple[Round, dict[str, User]]:
    return play_rigged_round(monkeypatch, GUNS_AND_SPECIAL, while_arranging=draft_and_chat)


# -- the data: a snapshot before the round, then the round's public events ---------------------


def test_the_replay_is_what_a_spectator_was_sent_from_the_round_start_to_its_settlement(
    four: tuple[Round, dict[str, User]],
) -> None:
    round_, users = four
    seat = positions(round_)
    data = data_for(round_, seat["alice"])
    assert (data["viewer"], data["player_id"]) == (seat["alice"], str(users["alice"].pk))
    assert data["names"] == {str(p): name for name, p in seat.items()}
    assert data["capacity"] == 4

    # The events: the stored log of the round as a spectator's socket got it, in order, but
    # the chat, and the settlement without its deck and salt.
    log = round_log(round_=round_)
    assert log[0].type == "round_start" and log[0].payload["round_no"] == round_.number
    assert (log[-1].type, log[-1].payload["phase"]) == ("phase", "settled")
    public = [e.message() for e in events_for(log, None) if e.type != "chat"]
    for event in public:
        if event["type"] == "settled":
            del event["payload"]["deck"], event["payload"]["salt"]
    assert data["events"] == public
    types = [e["type"] for e in data["events"]]
    assert {e.type for e in log} >= PRIVATE  # the log holds them; the replay does not
    assert PRIVATE.isdisjoint(types) and "chat" not in types and "chat" in {e.type for e in log}
    assert types.index("deal") < types.index("settled") < len(types) - 1
    assert of_type(data, "settled")[0]["commitment"] == round_.commitment

    # The snapshot: the table just before the round, its players seated and ready.
    snapshot = data["snapshot"]
    assert snapshot["version"] == data["events"][0]["version"] - 1
    assert (snapshot["phase"], snapshot["round_no"], snapshot["capacity"]) == ("waiting", 0, 4)
    assert [(s["position"], s["player"], s["ready"]) for s in snapshot["seats"]] == sorted(
        (p, str(users[name].pk), True) for name, p in seat.items()
    )
    assert snapshot["you"] is None and snapshot["deck"] is None and snapshot["salt"] is None
    assert RuleConfig.from_dict(snapshot["config"]) == RuleConfig.from_dict(round_.config)


def test_7_2_guns_a_run_over_and_a_special_are_revealed_as_the_table_played_them(
    four: tuple[Round, dict[str, User]],
) -> None:
    round_, _users = four
    seat = positions(round_)
    by_name = {v: k for k, v in seat.items()}
    data = data_for(round_, None)
    assert (data["viewer"], data["player_id"]) == (None, None)

    # Each arranged hand revealed row by row, with its hand's category; the special apart.
    shown: dict[str, dict[str, Any]] = {}
    for reveal in of_type(data, "reveal"):
        for hand in reveal["hands"]:
            shown.setdefault(by_name[hand["position"]], {})[reveal["row"]] = hand
    for name, hand in (("alice", ALICE), ("bob", BOB), ("dave", DAVE)):
        rows = {r: sorted(shown[name][r]["cards"]) for r in ("front", "middle", "back")}
        assert rows == {
            "front": sorted(hand.front.split()),
            "middle": sorted(hand.middle.split()),
            "back": sorted(hand.back.split()),
        }
    assert {r: shown["alice"][r]["category"] for r in shown["alice"]} == {
        "front": "pair",
        "middle": "full_house",
        "back": "quads",
    }
    assert "carol" not in shown
    (six_pairs,) = of_type(data, "reveal_special")
    assert by_name[six_pairs["position"]] == "carol" and six_pairs["special"] == "six_pairs"
    assert sorted(six_pairs["cards"]) == sorted(CAROL.dealt()) and six_pairs["water"] == 4

    # Row by row, each seat's water, row bonuses included (RULES.md §7.1).
    water = {
        r["row"]: {by_name[w["position"]]: w["water"] for w in r["water"]}
        for r in of_type(data, "row_result")
    }
    assert water == {
        "front": {"alice": 1, "bob": -2, "dave": 1},
        "middle": {"alice": 4, "bob": -3, "dave": -1},  # alice's full house: +1 bonus
        "back": {"alice": 8, "bob": -5, "dave": -3},  # alice's quads: +3 bonus
    }
    # Guns: a gun wins all three rows, a run-over wins with a tied row (§7.2); no home run.
    assert sorted(
        (by_name[g["shooter"]], by_name[g["target"]], g["kind"], g["run_over"], g["water"])
        for g in of_type(data, "gun")
    ) == [
        ("alice", "bob", "gun", False, 3),
        ("alice", "dave", "gun", True, 3),
        ("dave", "bob", "gun", False, 3),
    ]
    assert of_type(data, "home_run") == []

    # The settlement is the stored one.
    (settled,) = of_type(data, "settled")
    players = {by_name[p["position"]]: p for p in settled["result"]["players"]}
    assert {n: p["water"] for n, p in players.items()} == {
        "alice": 15,
        "bob": -20,
        "carol": 12,
        "dave": -7,
    }
    stored = {p.user.username: p.delta for p in round_.players.select_related("user")}
    assert {n: p["delta"] for n, p in players.items()} == stored
    assert settled["result"] == round_.result


def test_7_2_a_home_run_counts_the_run_over_as_a_gun(monkeypatch: pytest.MonkeyPatch) -> None:
    round_, _users = play_rigged_round(monkeypatch, HOME_RUN)
    by_name = {v: k for k, v in positions(round_).items()}
    data = data_for(round_, None)
    assert sorted(
        (by_name[g["shooter"]], by_name[g["target"]], g["kind"], g["run_over"], g["water"])
        for g in of_type(data, "gun")
    ) == [
        ("alice", "bob", "home_run", False, 12),
        ("alice", "dave", "home_run", True, 12),
        ("dave", "bob", "gun", False, 3),
    ]
    ((home_run,),) = [of_type(data, "home_run")]
    assert by_name[home_run["shooter"]] == "alice"
    assert of_type(data, "reveal_special") == []
    (settled,) = of_type(data, "settled")
    assert {by_name[p["position"]]: p["water"] for p in settled["result"]["players"]} == {
        "alice": 37,
        "bob": -25,
        "dave": -12,
    }


def test_the_replay_of_a_round_in_play_is_refused_by_the_selector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    round_, users = play_rigged_round(monkeypatch, HOME_RUN, settle=False)
    with pytest.raises(audit.RoundInPlay):
        data_for(round_, positions(round_)["alice"])


# -- the page: who may open it -------------------------------------------------------------------


def test_the_players_see_the_round_drawn_by_the_table_and_nothing_secret(
    four: tuple[Round, dict[str, User]], django_assert_max_num_queries: Any
) -> None:
    round_, users = four
    seat = positions(round_)
    for name in ("alice", "bob", "carol"):
        client = logged_in(users[name])
        # The session, the user, the round, its players with their users, the round's events,
        # the header's balance, the version of the rules the round played.
        with django_assert_max_num_queries(7):
            response = client.get(replay_url(round_))
        assert response.status_code == 200
        html = response.content.decode()
        data = page_data(html)
        assert data["viewer"] == seat[name] == response.context["replay"]["viewer"]
        assert data["player_id"] == str(users[name].pk)
        assert data["specials"]["six_pairs"] == {"zh": "六对半", "en": "Six pairs"}
        assert data["categories"]["quads"] == {"zh": "铁支", "en": "Quads"}
        # The table's styles and cards; the replay's module imports the table's reducer and views.
        assets = ("games/table.css", "games/cards.js", "games/cards.css", "games/replay.css")
        for asset in ("/jsi18n/", *assets):
            assert asset in html, asset
        assert re.search(r'<script type="module" src="[^"]*games/replay\.js"', html)
        assert 'id="seats"' in html and 'data-testid="settlement-panel"' in html
        assert 'data-testid="replay-step"' in html and 'data-testid="replay-next"' in html
        assert f"You played seat {seat[name] + 1}." in html
        # Nothing the table did not show everyone: no dealt hand, draft, suggestion or chat,
        # no salt, no deck, no balances.
        round_.refresh_from_db()
        assert round_.salt not in html and round_.deck not in html
        assert {"deck", "salt", "balances", "commitment"}.isdisjoint(data["round"])
        text = json.dumps(data, ensure_ascii=False)
        assert DRAFT["note"] not in html and CHAT not in html
        for word in ("balances", "suggestions", "draft"):
            assert word not in text, word
        assert PRIVATE.isdisjoint(e["type"] for e in data["events"])
        (settled,) = of_type(data, "settled")
        assert {"deck", "salt"}.isdisjoint(settled) and data["snapshot"]["salt"] is None


def test_only_the_rounds_players_and_staff_open_a_replay(
    four: tuple[Round, dict[str, User]], support: User, make_staff: MakeStaff
) -> None:
    round_, users = four
    economy_admin = make_staff(ECONOMY_ADMIN)
    url = replay_url(round_)
    erin = make_player("erin")  # plays too, but not this round
    assert logged_in(erin).get(url).status_code == 404
    assert logged_in(economy_admin).get(url).status_code == 404  # staff without view_round
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
    assert len(wanted) > 15, "no strings found"
    assert wanted - translated == set()


def test_the_javascript_catalogue_serves_the_replay_strings_in_chinese(client: Client) -> None:
    chinese = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    assert '"Run-over \\u8f97\\u8fc7": "\\u8f97\\u8fc7"' in chinese  # 辗过
    assert '"Pause": "\\u6682\\u505c"' in chinese  # 暂停


def test_the_table_fee_is_in_the_replay_and_the_hand_history(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    economy_settings_get_or_create()
    EconomySettings.objects.update(table_fee_percent=10)
    round_, users = play_rigged_round(monkeypatch, GUNS_AND_SPECIAL)
    assert round_.result["fee_percent"] == 10
    fees = {int(p["id"]): p["fee"] for p in round_.result["players"]}
    winner = max(users.values(), key=lambda u: fees[u.pk])
    assert fees[winner.pk] > 0

    (settled,) = of_type(data_for(round_, None), "settled")
    assert settled["result"] == round_.result
    # A round settled before the live table carried the fee: the replay has it from the round.
    audit.round_events(round_=round_).filter(type="settled").update(
        payload={**settled, "result": {**round_.result, "fee_percent": 0}}
    )
    assert of_type(data_for(round_, None), "settled")[0]["result"] == round_.result

    rows = logged_in(winner).get(reverse("games:history")).content.decode()
    assert "Table fee" in rows and f'data-fee="{fees[winner.pk]}"' in rows
    chinese = logged_in(winner).get(reverse("games:history"), HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "台费" in chinese.content.decode()


def test_no_table_fee_column_without_a_fee(four: tuple[Round, dict[str, User]]) -> None:
    round_, users = four
    rows = logged_in(users["alice"]).get(reverse("games:history")).content.decode()
    assert "Table fee" not in rows and "data-fee" not in rows
    assert "fee_percent" not in of_type(data_for(round_, None), "settled")[0]["result"]


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


def _back_link(response: Any) -> str:
    match = re.search(r'<p class="replay-back"><a href="([^"]*)">', response.content.decode())
    assert match is not None
    return match.group(1)


def test_the_replay_goes_back_to_the_admin_only_when_opened_from_it(
    four: tuple[Round, dict[str, User]], support: User
) -> None:
    round_, users = four
    url = replay_url(round_)
    admin_page = reverse("admin:games_round_change", args=[round_.pk])
    staff = logged_in(support)
    assert _back_link(staff.get(url, {"from": "admin"})) == admin_page
    assert _back_link(staff.get(url)) == reverse("games:history")
    # A player is sent to their own history whatever the parameter says.
    assert _back_link(logged_in(users["bob"]).get(url, {"from": "admin"})) == reverse(
        "games:history"
    )
    # Never an address from the query: an open redirect is ignored.
    for attempt in (
        "https://evil.example/",
        "//evil.example",
        "javascript:alert(1)",
        admin_page,
        "ADMIN",
        "admin ",
    ):
        response = staff.get(url, {"from": attempt})
        assert response.status_code == 200
        assert _back_link(response) == reverse("games:history"), attempt
        hrefs = re.findall(r'href="([^"]*)"', response.content.decode())
        assert not [h for h in hrefs if h.startswith(("javascript:", "//", "http"))], attempt


def test_the_replay_names_its_rules(four: tuple[Round, dict[str, User]]) -> None:
    round_, users = four
    text = logged_in(users["bob"]).get(replay_url(round_)).content.decode()
    rules = round_.table.room.rules
    match = re.search(r'(?s)<p class="replay-rules" id="replay-rules">(.*?)</p>', text)
    assert match is not None
    assert f"base score {round_.config['base_score']}" in match.group(1)
    version = rules.history.order_by("-history_id").first()
    assert version is not None
    # The name as the page's language shows it (the English half of "Standard 标准").
    assert rules.name.split()[0] in match.group(1)
    assert f"version #{version.history_id}" in match.group(1)

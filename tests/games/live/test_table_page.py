"""The table page, /games/table/<room_id>/, and the JavaScript catalog it loads."""

import json
import re
from collections.abc import Callable
from itertools import count
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.test import Client, override_settings

from accounts.models import User
from accounts.services import user_signup
from games.models import RuleConfiguration
from games.rules.config import DEFAULT_CONFIG
from lobby.models import Room
from lobby.services import room_create, room_join

_names = count(1)


@pytest.fixture(autouse=True)
def no_table_timers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seating a player beside a bot schedules its action on commit: keep it out of the
    broker."""
    from games.live import tasks

    monkeypatch.setattr(tasks.bot_act, "apply_async", lambda **kwargs: None)


@pytest.fixture
def rules(db: None) -> RuleConfiguration:
    existing = RuleConfiguration.objects.filter(is_default=True).first()
    if existing is not None:
        return existing
    return RuleConfiguration.from_engine(DEFAULT_CONFIG, name="Standard 标准", is_default=True)


@pytest.fixture
def make_player(rules: RuleConfiguration) -> Callable[[], User]:
    def make() -> User:
        with override_settings(SIGNUP_GRANT=100_000):
            return user_signup(username=f"tablepage{next(_names)}", password="not-used-1")

    return make


@pytest.fixture
def room(make_player: Callable[[], User]) -> Room:
    return room_create(owner=make_player(), name="Felt 绿台", base_score=100, seats=3)


def page_for(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def table_config(body: str) -> dict[str, Any]:
    found = re.search(r'<script id="table-config" type="application/json">(.*?)</script>', body)
    assert found, "the page has no table-config"
    return json.loads(found.group(1))


def test_anonymous_players_are_sent_to_log_in(room: Room) -> None:
    response = Client().get(f"/games/table/{room.pk}/")

    assert response.status_code == 302
    assert response["Location"] == f"/accounts/login/?next=/games/table/{room.pk}/"


def test_a_player_not_seated_there_goes_back_to_the_lobby(
    room: Room, make_player: Callable[[], User]
) -> None:
    stranger = make_player()
    elsewhere = make_player()
    other = room_create(owner=elsewhere, name="Other", base_score=100, seats=2)

    for client in (page_for(stranger), page_for(elsewhere)):
        response = client.get(f"/games/table/{room.pk}/", follow=True)
        assert response.redirect_chain == [("/lobby/", 302)]
        assert [str(m) for m in response.context["messages"]] == [
            "You are not seated at that table. Join a room first."
        ]
    assert page_for(stranger).get(f"/games/table/{other.pk + 1000}/").status_code == 302


def test_a_seated_player_gets_the_table_with_its_socket(
    room: Room, make_player: Callable[[], User]
) -> None:
    bob = make_player()
    room_join(user=bob, room_id=room.pk)

    response = page_for(bob).get(f"/games/table/{room.pk}/")

    assert response.status_code == 200
    body = response.content.decode()
    config = table_config(body)
    assert config["ws_url"] == f"/ws/table/{room.pk}/"
    assert config["position"] == 1
    assert config["seats"] == 3
    assert config["balance"] == 100_000
    assert config["names"] == {"0": room.owner.get_username(), "1": bob.get_username()}
    # Both languages, and the page's own in "name" (the one to show).
    six_pairs = {"zh": "六对半", "en": "Six pairs", "name": "Six pairs"}
    assert config["specials"]["six_pairs"] == six_pairs
    full_house = {"zh": "葫芦", "en": "Full house", "name": "Full house"}
    assert config["categories"]["full_house"] == full_house
    assert 'data-testid="my-balance" data-balance="100000"' in body
    assert "Felt 绿台" in body
    assert "/jsi18n/" in body and "vendor/sortablejs/Sortable.min.js" in body


def test_6_the_page_opens_a_hand_as_the_players_setting_says(
    room: Room, make_player: Callable[[], User]
) -> None:
    """RULES.md §6: laid out as the first suggestion by default; sorted, the rows empty, for
    a player who turned that off."""
    bob = make_player()
    room_join(user=bob, room_id=room.pk)
    body = page_for(bob).get(f"/games/table/{room.pk}/").content.decode()
    assert table_config(body)["opening"] == "suggested"

    User.objects.filter(pk=bob.pk).update(default_layout=False)
    body = page_for(bob).get(f"/games/table/{room.pk}/").content.decode()
    assert table_config(body)["opening"] == "sorted"
    assert 'data-testid="sort"' in body and 'data-testid="handtypes"' in body


def test_the_page_speaks_chinese(room: Room) -> None:
    response = page_for(room.owner).get(f"/games/table/{room.pk}/", HTTP_ACCEPT_LANGUAGE="zh-hans")

    body = response.content.decode()
    assert "排序" in body and "选择牌型" in body and "出牌" in body and "推荐牌型" in body


def test_the_javascript_catalog_serves_the_table_strings_in_chinese(client: Client) -> None:
    chinese = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="zh-hans").content.decode()
    english = client.get("/jsi18n/", HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert '"Reconnecting\\u2026": "\\u91cd\\u65b0\\u8fde\\u63a5\\u4e2d\\u2026"' in chinese
    assert "\\u524d\\u58a9" in chinese  # 前墩, the front row
    assert "\\u524d\\u58a9" not in english


def _table_modules() -> str:
    """The text of every ES module of the table page (static/games/table/)."""
    folder = Path(finders.find("games/table/main.js")).parent
    return "\n".join(p.read_text() for p in sorted(folder.rglob("*.js")))


def test_every_string_of_the_table_script_is_translated() -> None:
    """Each gettext() string of the table's modules has a Chinese msgstr in djangojs.po."""
    script = _table_modules()
    wanted = set(re.findall(r'\b_\("((?:[^"\\]|\\.)*)"\)', script))
    po = Path(__file__).resolve().parents[3] / "games/locale/zh_Hans/LC_MESSAGES/djangojs.po"
    entry = r'msgid "((?:[^"\\]|\\.)*)"\nmsgstr "(?:[^"\\]|\\.)+"'
    translated = set(re.findall(entry, po.read_text()))
    assert wanted, "no strings found"
    assert wanted - translated == set()


def test_the_scripts_are_served_from_this_project() -> None:
    for name in ("games/table/main.js", "games/cards.js", "vendor/sortablejs/Sortable.min.js"):
        path = finders.find(name)
        assert path, name
    assert finders.find("vendor/sortablejs/LICENSE")
    script = _table_modules()
    assert "new WebSocket(" in script and "http" not in script.replace("https:", "")

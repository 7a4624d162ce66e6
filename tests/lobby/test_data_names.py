"""Names the platform gives its own rooms and rule configurations ("快速 Quick · 机器人 Bots",
"Standard 标准", "alice 的桌 Table") are shown in the page's language only: the lobby, its API
and live rows (both halves, the reader picks), the table page, the create form; a name someone
typed is shown as entered."""

from __future__ import annotations

import re

import pytest
from django.test import Client
from django.urls import reverse
from django.utils import translation
from rest_framework.test import APIClient

from accounts.models import User
from games.labels import DATA_NAMES, data_name, data_names
from games.models import RuleConfiguration
from games.rules.presets import PRESETS, preset_config
from lobby.checks import DEFAULT_ROOM_NAME, default_room_name
from lobby.matchmaking import QUICK_JOIN_ROOM_NAME, QUICK_PLAY_ROOM_NAME
from lobby.models import Room
from lobby.selectors import room_get, room_row
from lobby.services import room_create

pytestmark = pytest.mark.django_db

CHINESE = re.compile(r"[\u4e00-\u9fff]")


def page(user: User, language: str) -> Client:
    client = Client(headers={"accept-language": language})
    client.force_login(user)
    return client


def test_every_name_the_platform_gives_has_both_halves() -> None:
    for name in (QUICK_JOIN_ROOM_NAME, QUICK_PLAY_ROOM_NAME, "Standard 标准"):
        assert name in DATA_NAMES
    for preset in PRESETS.values():
        assert data_names(f"{preset.zh} {preset.en}") == {"zh": preset.zh, "en": preset.en}
        assert data_names(f"{preset.zh} {preset.en} (2)") == {
            "zh": f"{preset.zh} (2)",
            "en": f"{preset.en} (2)",
        }
    assert DEFAULT_ROOM_NAME == "{owner} 的桌 Table"
    assert data_names("alice 的桌 Table · 2") == {"zh": "alice 的桌 · 2", "en": "alice's table · 2"}
    for zh, en in (data_names(n).values() for n in DATA_NAMES):
        assert CHINESE.search(zh) and not CHINESE.search(en), (zh, en)


def test_a_typed_name_is_shown_as_entered() -> None:
    for typed in ("Friday 周五 Poker", "Table · 3", "我的桌", "Standard"):
        with translation.override("en"):
            assert data_name(typed) == typed
        with translation.override("zh-hans"):
            assert data_name(typed) == typed


@pytest.mark.parametrize("language", ["en", "zh-hans"])
def test_the_lobby_its_api_and_the_table_show_one_language(
    alice: User, rules: RuleConfiguration, language: str
) -> None:
    chinese = language == "zh-hans"
    RuleConfiguration.objects.filter(pk=rules.pk).update(name="Standard 标准")
    room = room_create(owner=alice, name=QUICK_PLAY_ROOM_NAME, base_score=100, seats=4)
    client = page(alice, language)

    lobby = client.get(reverse("lobby:index")).content.decode()
    row = re.search(rf'<tr data-room="{room.pk}".*?</tr>', lobby, re.S)
    assert row is not None
    expected_room, expected_rules = (
        ("快速 · 机器人", "标准") if chinese else ("Quick · Bots", "Standard")
    )
    assert f'data-field="name">{expected_room}<' in row.group(0)
    assert f'data-field="rules">{expected_rules}<' in row.group(0)
    shown = re.sub(r"<[^>]*>", " ", lobby)  # the text, not the attributes scripts read
    for bilingual in ("快速 Quick", "Standard 标准", "机器人 Bots"):
        assert bilingual not in shown

    api = APIClient(headers={"accept-language": language})
    api.force_login(alice)
    body = api.get(reverse("api-lobby-room", args=[room.pk])).json()
    assert body["name"] == expected_room and body["rules"]["name"] == expected_rules
    assert body["names"] == {"zh": "快速 · 机器人", "en": "Quick · Bots"}
    assert body["rules"]["names"] == {"zh": "标准", "en": "Standard"}

    table = client.get(reverse("games:table", args=[room.pk])).content.decode()
    assert f'<h1 class="room-name">{expected_room}</h1>' in table
    assert "快速 Quick" not in table


def test_a_live_row_carries_both_names_and_the_create_form_one(
    alice: User, rules: RuleConfiguration
) -> None:
    RuleConfiguration.objects.filter(pk=rules.pk).update(name="Standard 标准")
    fuzhou = RuleConfiguration.objects.filter(name="福州 Fuzhou").first()  # games/0021
    if fuzhou is None:  # the database was flushed
        fuzhou = RuleConfiguration.from_engine(preset_config("fuzhou"), name="福州 Fuzhou")
    room = room_create(
        owner=alice, name=default_room_name(owner=alice), base_score=100, seats=4, rules=fuzhou
    )
    fresh = room_get(room_id=room.pk)
    assert fresh is not None
    with translation.override("zh-hans"):
        row = room_row(room=fresh)
    assert row["name"] == "alice 的桌" and row["names"]["en"] == "alice's table"
    assert row["rules"]["name"] == "福州" and row["rules"]["names"]["en"] == "Fuzhou"
    assert Room.objects.get(pk=room.pk).name == "alice 的桌 Table"  # stored as given

    form = page(alice, "zh-hans").get(reverse("lobby:index")).content.decode()
    select = re.search(r'<select name="rules"[^>]*>(.*?)</select>', form, re.S)
    assert select is not None
    labels = " | ".join(re.findall(r">([^<]*)</option>", select.group(1)))
    assert "福州 · 最多 4 人" in labels and "标准 · 经典" in labels  # no badge twice
    assert "Fuzhou" not in labels and "Standard" not in labels
    assert 'data-name="福州 Fuzhou"' in select.group(1)  # scripts still find it by its name

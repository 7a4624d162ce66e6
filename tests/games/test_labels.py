"""games.labels: the game's terms in the reader's language only, and guns told apart as
RULES.md §7.2 names them (打枪 gun, 辗过 run-over, 全垒打 home run)."""

from __future__ import annotations

import pytest
from django.utils import translation

from games import labels
from games.history.admin import result_rows
from games.rules.config import SPECIAL_INFO
from games.rules.hands import CATEGORY_ZH

PAIR = {"a": "1", "b": "2", "shooter": "1", "row_water": 3, "bonus_water": 0, "gun_water": 3}


@pytest.mark.parametrize(
    ("rows", "gun", "kind"),
    [
        ([1, 1, 1], "gun", "gun"),  # all three rows: 打枪
        ([1, 0, 1], "gun", "run_over"),  # won two, tied one: 辗过
        ([0, 1, 0], "gun", "run_over"),  # won one, tied two: 辗过
        ([1, 0, 1], "home_run", "home_run"),  # part of a home run: 全垒打
        ([1, 1, -1], None, None),
        (None, None, None),  # a special hand: no rows compared
    ],
)
def test_7_2_gun_run_over_and_home_run_are_told_apart(
    rows: list[int] | None, gun: str | None, kind: str | None
) -> None:
    assert labels.gun_kind({**PAIR, "rows": rows, "gun": gun}) == kind


def test_7_2_gun_labels_in_each_language() -> None:
    with translation.override("zh-hans"):
        assert [labels.gun_label(k) for k in ("gun", "run_over", "home_run")] == [
            "打枪",
            "辗过",
            "全垒打",
        ]
        assert labels.gun_label(None) == ""
    with translation.override("en"):
        assert [labels.gun_label(k) for k in ("gun", "run_over", "home_run")] == [
            "Gun",
            "Run-over",
            "Home run",
        ]


def test_category_and_special_names_are_in_one_language() -> None:
    with translation.override("zh-hans"):
        assert labels.category_name("full_house") == "葫芦"
        assert labels.special_name("six_pairs") == "六对半"
        for category, zh in CATEGORY_ZH.items():
            assert labels.category_name(category.name.lower()) == zh
        for info in SPECIAL_INFO:
            assert labels.special_name(info.id) == info.zh
    with translation.override("en"):
        assert labels.category_name("full_house") == "Full house"
        assert labels.special_name("six_pairs") == "Six pairs"
        for info in SPECIAL_INFO:
            assert labels.special_name(info.id) == info.en
    assert labels.special_name("no_such_special") == "no_such_special"


def test_row_marks_transfer_kinds_and_auto_reasons() -> None:
    with translation.override("zh-hans"):
        assert labels.row_marks([1, 0, -1]) == "头墩 赢 · 中墩 平 · 尾墩 输"
        assert labels.transfer_kind_label("settlement") == "结算"
        assert labels.auto_label("timeout") == "超时"
    with translation.override("en"):
        assert labels.row_marks([1, 0, -1]) == "front won · middle tie · back lost"
        assert labels.transfer_kind_label("cover") == "escaper covers a loss"
    assert labels.row_marks(None) == "" and labels.auto_label("") == ""


def test_the_round_pages_pairs_and_transfers_name_the_players() -> None:
    result = {
        "pairs": [
            {
                **PAIR,
                "rows": [1, 0, 1],
                "gun": "gun",
                "bonus_water": 1200,
                "special_water": 0,
                "water": 1206,
            },
            {
                "a": "1",
                "b": "3",
                "rows": None,
                "gun": None,
                "shooter": None,
                "row_water": 0,
                "bonus_water": 0,
                "gun_water": 0,
                "special_water": -12,
                "water": -12,
            },
        ],
        "transfers": [{"from": "2", "to": "1", "coins": 120600, "kind": "settlement"}],
        "cuts": [{"from": "3", "to": "1", "owed": 12000, "paid": 9999}],
    }
    names = {"1": "alice", "2": "bob", "3": "金龙 (bot-ee37f740)"}
    with translation.override("zh-hans"):
        shown = result_rows(result, names)
    first, second = shown["pairs"]
    assert (first["a"], first["b"], first["shooter"]) == ("alice", "bob", "alice")
    assert first["gun"] == "辗过" and first["gun_kind"] == "run_over"
    assert first["bonus_water"] == "+1,200" and first["water"] == "+1,206"
    assert second["gun"] == "" and second["rows"] == "" and second["special_water"] == "-12"
    assert shown["transfers"] == [
        {"from": "bob", "to": "alice", "coins": "120,600", "kind": "结算"}
    ]
    assert shown["cuts"] == [
        {"from": "金龙 (bot-ee37f740)", "to": "alice", "owed": "12,000", "paid": "9,999"}
    ]

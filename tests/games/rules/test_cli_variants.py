"""ENGINE_CLI.md with the variant decks of RULES.md §12: card names, counts, seats, answers."""

from __future__ import annotations

from typing import Any

import pytest

from games.rules.api import handle
from games.rules.errors import RulesError

Json = dict[str, Any]


def call(command: str, request: Json) -> Json:
    return handle(command, request)


def code(command: str, request: Json) -> str:
    with pytest.raises(RulesError) as err:
        handle(command, request)
    return err.value.code


def test_12_1_a_copy_is_a_bad_card_without_extra_suits():
    assert code("compare", {"a": ["7D2", "7D", "2C"], "b": ["AS", "KS", "QS"]}) == "bad_card"
    got = call(
        "compare",
        {"a": ["7D2", "7D", "2C"], "b": ["AS", "KS", "QS"], "config": {"extra_suits": 1}},
    )
    assert got["a"] == {"category": "pair"} and got["result"] == 1


def test_12_2_a_joker_is_a_bad_card_without_jokers():
    assert code("compare", {"a": ["RJ", "7D", "2C"], "b": ["AS", "KS", "QS"]}) == "bad_card"


def test_12_bad_config_comes_before_cards():
    assert code("compare", {"a": ["RJ"], "b": [], "config": {"jokers": 1}}) == "bad_config"


def test_12_1_more_players_than_the_deck_seats_is_wrong_count():
    player = {"front": ["2S", "3S", "4S"], "middle": ["5S"] * 5, "back": ["6S"] * 5}
    assert code("score", {"players": [player] * 5}) == "wrong_count"
    assert code("score", {"players": [player] * 6, "config": {"extra_suits": 1}}) == "wrong_count"


def test_12_4_unused_cards_only_with_spare_cards():
    p = {
        "id": "A",
        "front": ["QS", "QC", "3D"],
        "middle": ["8C", "8D", "8H", "2S", "2C"],
        "back": ["9H", "TH", "JH", "QH", "KH"],
    }
    q = {
        "id": "B",
        "front": ["AS", "KD", "4C"],
        "middle": ["AC", "AD", "3S", "3H", "4H"],
        "back": ["5S", "6D", "7C", "8S", "9D"],
    }
    assert code("score", {"players": [{**p, "unused": ["2D", "3C", "4D"]}, q]}) == "bad_json"
    spare = {"spare_cards": 3}
    assert (
        code("score", {"players": [{**p, "unused": ["2D", "3C"]}, q], "config": spare})
        == "wrong_count"
    )
    assert (
        code("score", {"players": [{**p, "unused": ["2D", "3C", "AS"]}, q], "config": spare})
        == "duplicate_card"
    )
    got = call("score", {"players": [{**p, "unused": ["2D", "3C", "4D"]}, q], "config": spare})
    assert [x["water"] for x in got["players"]] == [11, -11]


def test_12_5_a_home_run_at_five_players_guns_four():
    from games.rules.arrange import best_arrangement
    from games.rules.cards import parse_cards
    from games.rules.presets import preset_config
    from games.rules.scoring import Arranged, Seat, score_round

    cfg = preset_config("duoyise")
    deck = cfg.deck
    shooter = Arranged(
        parse_cards(["AS", "AH", "AC"], deck=deck),
        parse_cards(["QS", "QH", "QC", "QD", "QD2"], deck=deck),
        parse_cards(["KS", "KH", "KC", "KD", "KD2"], deck=deck),
    )
    rest = [c for c in deck.cards if c not in shooter.cards]
    seats = [Seat("A", shooter)]
    for p in range(4):
        seats.append(Seat("BCDE"[p], best_arrangement(rest[p * 13 : p * 13 + 13], cfg)))
    result = score_round(seats, cfg)
    assert result.home_run == 0
    assert [p.gun for p in result.pairs if p.a == 0] == ["home_run"] * 4
    assert sum(result.water) == 0
    # Fixed mode: 4 opponents each pay the rows, the five-of-a-kind bonuses and 12.
    assert all(p.gun_water == 12 for p in result.pairs if p.a == 0)


def test_12_batches_answer_errors_in_place_with_the_variant_decks():
    config = {"jokers": 2}
    got = call(
        "compare",
        {
            "batch": [
                {"a": ["AS", "AH", "RJ"], "b": ["KS", "KH", "KC"], "config": config},
                {"a": ["AS", "AH", "7D2"], "b": ["KS", "KH", "KC"], "config": config},
                {"a": ["AS", "AH", "RJ"], "b": ["KS", "KH", "KC"], "config": {"jokers": 3}},
            ]
        },
    )
    first, second, third = got["batch"]
    assert first == {
        "a": {"category": "trips", "jokers": {"RJ": "AS"}},
        "b": {"category": "trips"},
        "result": 1,
    }
    assert second["error"]["code"] == "bad_card"
    assert third["error"]["code"] == "bad_config"

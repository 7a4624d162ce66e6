"""The engine's command line, ``python -m games.rules COMMAND < request.json`` (ENGINE_CLI.md).

A few tests run the real process to prove the contract at the edge (exit status, stdout,
stderr, no traceback); everything else calls ``games.rules.__main__.main`` in-process with a
fake stdin, which is the same code path without the start-up cost.
"""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from games.rules.__main__ import main
from games.rules.arrange import best_arrangement
from games.rules.cards import DECK, format_cards, parse_cards
from games.rules.config import RuleConfig
from games.rules.hands import ROWS, evaluate, foul_rows
from games.rules.scoring import Arranged, Seat, score_round

from .reference import expected_pair_water

ROOT = Path(__file__).resolve().parents[3]

Json = dict[str, Any]


def cards(text: str) -> list[str]:
    return text.split()


def rows(front: str, middle: str, back: str, **extra: Any) -> Json:
    """A normally arranged player of a ``score`` request."""
    return {"front": cards(front), "middle": cards(middle), "back": cards(back), **extra}


# RULES.md §11 example 1.
EX1_A = rows("QS QC 3D", "8C 8D 8H 2S 2C", "9H TH JH QH KH", id="A")
EX1_B = rows("AS KD 4C", "AC AD 3S 3H 4H", "5S 6D 7C 8S 9D", id="B")

# RULES.md §11 example 3: A declares six_pairs, B all_small, C arranges normally.
SIX_PAIRS = "9S 9H TS TH JS JH QS QH KS KH AS AH 2C"
ALL_SMALL = "2S 2H 3S 3H 4S 4H 5S 5H 6S 6H 7S 7H 8S"
EX3_C = rows("2D 3D 5D", "3C 4C 5C 6C 8C", "9C TC JC QC KC", id="C")

# Specials used to build the [S0] cannot-cover table; with NO_SPECIAL they use all 52 cards.
THREE_QUADS = "AS AH AC AD KS KH KC KD QS QH QC QD 2S"  # 20 water
ONE_COLOR = "3H 4H 5H 6H 7H 2D 3D 4D 5D 6D 7D 9D JD"  # 10 water
FOUR_TRIPS = "JS JH JC TS TH TC 9S 9H 9C 8S 8H 8C 2H"  # 6 water
NO_SPECIAL = rows("8D TD 7C", "2C 3C 4C 5C 6C", "3S 4S 5S 6S 7S")

THREE_FLUSHES = "2C 3C 5C 2H 6H 8H TH QH 3S 9S JS KS AS"
DOUBLE_MONSTER = "AS AH AC KS KH QS QH QC JS JH TS TH 5D"  # disabled by default
FIVE_PAIRS_TRIPS = "2S 2H 2C 3S 3H 4S 4H 5S 5H 9S 9H KS KH"  # also makes six_pairs
PLAIN_13 = "AS KD QC 9H 9D 7C 6S 5H 4D 3C 2S 2H JH"

# A foul-free partner that shares no card with the hands it is paired with below.
PARTNER = rows("2C 3S 4S", "6C 7C 8C 9C JC", "6D 7D 8D 9D TD", id="P")

GOOD: dict[str, Json] = {
    "compare": {"a": cards("AS AH 2D"), "b": cards("KS KH 3C 4D 5S")},
    "special": {"cards": cards(SIX_PAIRS)},
    "arrange": {"cards": cards(PLAIN_13), "limit": 2},
    "score": {"players": [EX1_A, EX1_B]},
}


@dataclass(frozen=True)
class Outcome:
    status: int
    stdout: str
    stderr: str

    @property
    def answer(self) -> Json:
        """The one JSON object on stdout of a successful run."""
        assert self.status == 0, self.stderr
        assert self.stderr == ""
        assert self.stdout.endswith("\n") and self.stdout.count("\n") == 1
        answer = json.loads(self.stdout)
        assert isinstance(answer, dict)
        return answer

    @property
    def error(self) -> Json:
        """The ``error`` object of a failed run: status 2, empty stdout, one line of JSON."""
        assert self.status == 2, self.stdout
        assert self.stdout == ""
        assert "Traceback" not in self.stderr
        assert self.stderr.endswith("\n") and self.stderr.count("\n") == 1
        body = json.loads(self.stderr)
        assert set(body) == {"error"}
        error = body["error"]
        assert set(error) == {"code", "message"}
        assert isinstance(error["code"], str)
        assert isinstance(error["message"], str) and error["message"]
        return error

    @property
    def code(self) -> str:
        return str(self.error["code"])


Run = Callable[..., Outcome]


@pytest.fixture
def cli(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Run:
    """Run ``main`` in-process: ``cli("compare", {...})`` or raw bytes as the request."""

    def run(
        command: str | None, request: object = None, *, argv: list[str] | None = None
    ) -> Outcome:
        raw = request if isinstance(request, bytes) else json.dumps(request).encode()
        monkeypatch.setattr(sys, "stdin", SimpleNamespace(buffer=io.BytesIO(raw)))
        args = argv if argv is not None else ([] if command is None else [command])
        status = main(args)
        out, err = capsys.readouterr()
        return Outcome(status, out, err)

    return run


def run_process(args: list[str], stdin: bytes) -> Outcome:
    proc = subprocess.run(
        [sys.executable, "-m", "games.rules", *args],
        input=stdin,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
        check=False,
    )
    return Outcome(proc.returncode, proc.stdout.decode(), proc.stderr.decode())


def partner_for(hand: str) -> Json:
    """A foul-free normal player holding 13 cards that ``hand`` does not use."""
    used = set(parse_cards(cards(hand)))
    free = [c for c in DECK if c not in used][:13]
    arranged = best_arrangement(free)
    return {"id": "P", **{r: format_cards(getattr(arranged, r)) for r in ROWS}}


def check_arrangement(arranged: Json, hand: list[str], a2345: str = "lowest") -> tuple[str, ...]:
    """Assert an answer's rows use exactly ``hand`` and do not foul; return their categories."""
    front, middle, back = (parse_cards(arranged[r]) for r in ROWS)
    assert (len(front), len(middle), len(back)) == (3, 5, 5)
    assert sorted(map(str, front + middle + back)) == sorted(map(str, parse_cards(hand)))
    evaluated = [evaluate(front, a2345), evaluate(middle, a2345), evaluate(back, a2345)]
    assert foul_rows(*evaluated) == ()
    return tuple(h.category.id for h in evaluated)


# -- the real process --------------------------------------------------------------------------


@pytest.mark.parametrize("command", sorted(GOOD))
def test_process_answers_one_json_object_and_exits_0(command: str) -> None:
    outcome = run_process([command], json.dumps(GOOD[command]).encode())

    assert isinstance(outcome.answer, dict)


@pytest.mark.parametrize(
    ("args", "stdin", "code"),
    [
        (["compare"], b"{not json", "bad_json"),
        (["score"], b'{"players": [{"id": "A"}]}', "wrong_count"),
        (
            ["special"],
            json.dumps(
                {
                    "cards": [
                        "AS",
                        *["2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "TS", "JS", "QS", "AS"],
                    ]
                }
            ).encode(),
            "duplicate_card",
        ),
        (["arrange"], b'{"cards": ["1S"]}', "bad_card"),
        (["shuffle"], b"{}", "unknown_command"),
        ([], b"{}", "unknown_command"),
    ],
    ids=["not_json", "one_player", "duplicate", "bad_card", "unknown_command", "no_command"],
)
def test_process_bad_input_exits_2_with_one_json_line_on_stderr(
    args: list[str], stdin: bytes, code: str
) -> None:
    outcome = run_process(args, stdin)

    assert outcome.code == code


# -- every error code --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "request_"),
    [
        ("compare", b"{not json"),
        ("compare", b"\xff\xfe\x00"),
        ("compare", b""),
        ("compare", b"[" * 100_000),
        ("compare", [cards("AS KS QS"), cards("2S 3S 4S")]),
        ("compare", "AS KS QS"),
        ("compare", None),
        ("compare", {"b": cards("AS KS QS")}),
        ("compare", {"a": cards("AS KS QS")}),
        ("special", {}),
        ("arrange", {"config": {}}),
        ("score", {}),
        ("score", {"players": "A B"}),
        ("score", {"players": [EX1_A, "B"]}),
        ("score", {"players": [EX1_A, {"id": "B"}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "special": "six_pairs"}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "id": "A"}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "balance": "lots"}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "balance": -1}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "escaped": "yes"}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "id": ["B"]}]}),
        ("score", {"players": [EX1_A, {"id": "B", "special": 6, "cards": cards(SIX_PAIRS)}]}),
    ],
    ids=[
        "not_json",
        "not_utf8",
        "empty_input",
        "nested_too_deeply",
        "not_an_object_list",
        "not_an_object_string",
        "not_an_object_null",
        "compare_missing_a",
        "compare_missing_b",
        "special_missing_cards",
        "arrange_missing_cards",
        "score_missing_players",
        "score_players_not_a_list",
        "score_player_not_an_object",
        "score_player_without_hand",
        "score_player_with_rows_and_special",
        "score_duplicate_ids",
        "score_balance_not_a_number",
        "score_negative_balance",
        "score_escaped_not_a_bool",
        "score_id_not_a_string",
        "score_special_not_a_string",
    ],
)
def test_error_code_bad_json(cli: Run, command: str, request_: object) -> None:
    assert cli(command, request_).code == "bad_json"


@pytest.mark.parametrize(
    ("command", "request_"),
    [
        ("compare", {"a": "AS KS QS", "b": cards("2S 3S 4S")}),
        ("compare", {"a": cards("AS KS QS"), "b": None}),
        ("special", {"cards": {"AS": 1}}),
        ("arrange", {"cards": "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"}),
        ("score", {"players": [EX1_A, {**EX1_B, "middle": "AC AD 3S 3H 4H"}]}),
    ],
    ids=[
        "compare_cards_as_string",
        "compare_cards_null",
        "special_cards_as_object",
        "arrange_cards_as_string",
        "score_row_as_string",
    ],
)
def test_error_code_bad_json_for_cards_that_are_not_a_list(
    cli: Run, command: str, request_: object
) -> None:
    """A card field that is not a list is "not the fields a command needs" (ENGINE_CLI.md).

    ``bad_card`` is about one card's text; a string or null where a list belongs is the
    request's shape, so the contract's code is ``bad_json``.
    """
    assert cli(command, request_).code == "bad_json"


@pytest.mark.parametrize("card", ["1S", "AX", 5, "", "A", "ASS", "10", None, ["AS"], 14.0])
def test_error_code_bad_card(cli: Run, card: object) -> None:
    request = {"a": ["KS", "QS", card], "b": cards("2S 3S 4S")}

    error = cli("compare", request).error

    assert error["code"] == "bad_card"


@pytest.mark.parametrize(
    ("command", "request_"),
    [
        ("special", {"cards": cards(PLAIN_13)[:12] + ["AS"]}),
        ("arrange", {"cards": cards(PLAIN_13)[:12] + ["as"]}),
        ("score", {"players": [EX1_A, {**EX1_B, "front": cards("AS AS 4C")}]}),
    ],
    ids=["special", "arrange", "score_row"],
)
def test_error_code_duplicate_card_within_a_hand(cli: Run, command: str, request_: object) -> None:
    assert cli(command, request_).code == "duplicate_card"


def test_error_code_duplicate_card_within_a_compare_row(cli: Run) -> None:
    error = cli("compare", {"a": cards("AS AS KS"), "b": cards("2S 3S 4S")}).error

    assert error["code"] == "duplicate_card"
    assert "AS" in error["message"]


def test_error_code_duplicate_card_across_a_and_b_in_compare(cli: Run) -> None:
    error = cli("compare", {"a": cards("AS KS QS"), "b": cards("2S 3S AS")}).error

    assert error["code"] == "duplicate_card"


def test_error_code_duplicate_card_across_players(cli: Run) -> None:
    b = rows("QS KD 4C", "AC AD 3S 3H 4H", "5S 6D 7C 8S 9D", id="B")  # QS is also A's

    error = cli("score", {"players": [EX1_A, b]}).error

    assert error["code"] == "duplicate_card"
    assert "QS" in error["message"]


def test_error_code_duplicate_card_across_a_special_and_an_arranged_player(cli: Run) -> None:
    special = {"id": "S", "special": "six_pairs", "cards": cards(SIX_PAIRS)}

    assert cli("score", {"players": [EX1_A, special]}).code == "duplicate_card"


def test_10_is_read_as_t_in_a_duplicate_check(cli: Run) -> None:
    assert cli("compare", {"a": cards("TD JD QD"), "b": cards("10d 2S 3S")}).code == (
        "duplicate_card"
    )


@pytest.mark.parametrize(
    ("command", "request_"),
    [
        ("compare", {"a": cards("AS KS QS JS"), "b": cards("2S 3S 4S")}),
        ("compare", {"a": cards("AS KS QS"), "b": cards("2S 3S 4S 5S 6S 7S")}),
        ("compare", {"a": [], "b": cards("2S 3S 4S")}),
        ("arrange", {"cards": cards(PLAIN_13)[:12]}),
        ("arrange", {"cards": cards(PLAIN_13) + ["TC"]}),
        ("special", {"cards": cards(PLAIN_13)[:12]}),
        ("score", {"players": [EX1_A, {**EX1_B, "middle": cards("AC AD 3S 3H")}]}),
        ("score", {"players": [EX1_A, {**EX1_B, "front": cards("AS KD")}]}),
        ("score", {"players": [EX1_A, {"id": "B", "special": "six_pairs", "cards": ["AC"]}]}),
        ("score", {"players": [EX1_A]}),
        ("score", {"players": []}),
        ("score", {"players": [EX1_A, EX1_B, EX3_C, PARTNER, NO_SPECIAL]}),
    ],
    ids=[
        "compare_row_of_4",
        "compare_row_of_6",
        "compare_empty_row",
        "arrange_12_cards",
        "arrange_14_cards",
        "special_12_cards",
        "score_middle_of_4",
        "score_front_of_2",
        "score_special_of_1",
        "score_1_player",
        "score_0_players",
        "score_5_players",
    ],
)
def test_error_code_wrong_count(cli: Run, command: str, request_: object) -> None:
    assert cli(command, request_).code == "wrong_count"


def test_error_code_foul_middle_higher_than_back(cli: Run) -> None:
    fouled = rows("QS QC 3D", "9H TH JH QH KH", "8C 8D 8H 2S 2C", id="A")  # SF in the middle

    error = cli("score", {"players": [fouled, EX1_B]}).error

    assert error["code"] == "foul"
    assert "middle" in error["message"] and "back" in error["message"]


def test_error_code_foul_front_higher_than_middle(cli: Run) -> None:
    fouled = rows("AS AH 2D", "KS KD 3C 4D 5S", "9H TH JH QH KH", id="F")  # AA over KK

    error = cli("score", {"players": [fouled, PARTNER]}).error

    assert error["code"] == "foul"
    assert "front" in error["message"]


@pytest.mark.parametrize(
    ("special", "hand", "config"),
    [
        ("six_pairs", PLAIN_13, None),
        ("three_flushes", PLAIN_13, None),
        ("double_monster", DOUBLE_MONSTER, None),
        ("six_pairs", SIX_PAIRS, {"specials": {"six_pairs": {"enabled": False}}}),
        ("seven_pairs", SIX_PAIRS, None),
        ("", SIX_PAIRS, None),
    ],
    ids=[
        "cards_do_not_make_six_pairs",
        "cards_do_not_make_three_flushes",
        "double_monster_disabled_by_default",
        "six_pairs_disabled_by_config",
        "unknown_special_id",
        "empty_special_id",
    ],
)
def test_error_code_not_special(cli: Run, special: str, hand: str, config: Json | None) -> None:
    declared = {"id": "S", "special": special, "cards": cards(hand)}
    request: Json = {"players": [declared, partner_for(hand)]}
    if config is not None:
        request["config"] = config

    assert cli("score", request).code == "not_special"


def test_double_monster_is_accepted_once_enabled(cli: Run) -> None:
    declared = {"id": "S", "special": "double_monster", "cards": cards(DOUBLE_MONSTER)}
    partner = partner_for(DOUBLE_MONSTER)
    config = {"specials": {"double_monster": {"enabled": True}}}

    answer = cli("score", {"players": [declared, partner], "config": config}).answer

    assert [p["water"] for p in answer["players"]] == [6, -6]


ALL_SPECIALS = [
    "supreme_dragon",
    "dragon",
    "twelve_royals",
    "three_straight_flushes",
    "three_quads",
    "all_big",
    "all_small",
    "one_color",
    "trips_and_bomb",
    "double_monster",
    "four_trips",
    "five_pairs_trips",
    "six_pairs",
    "three_straights",
    "three_flushes",
]

BAD_CONFIGS: dict[str, object] = {
    "negative_water": {"specials": {"six_pairs": {"water": -1}}},
    "water_not_a_number": {"specials": {"six_pairs": {"water": "4"}}},
    "enabled_not_a_bool": {"specials": {"six_pairs": {"enabled": "yes"}}},
    "unknown_special_field": {"specials": {"six_pairs": {"points": 4}}},
    "unknown_special_in_specials": {"specials": {"seven_pairs": {"water": 4}}},
    "specials_not_an_object": {"specials": ["six_pairs"]},
    "duplicate_in_special_order": {"special_order": ALL_SPECIALS + ["six_pairs"]},
    "unknown_in_special_order": {"special_order": ALL_SPECIALS + ["seven_pairs"]},
    "special_order_missing_an_enabled_special": {"special_order": ALL_SPECIALS[1:]},
    "unknown_row_bonus_key": {"row_bonus": {"front.flush": 2}},
    "negative_row_bonus": {"row_bonus": {"front.trips": -2}},
    "gun_mode_triple": {"gun_mode": "triple"},
    "a2345_highest": {"a2345": "highest"},
    "base_score_not_an_integer": {"base_score": 1.5},
    "base_score_a_string": {"base_score": "100"},
    "base_score_zero": {"base_score": 0},
    "base_score_a_bool": {"base_score": True},
    "gun_water_negative": {"gun_water": -3},
    "run_over_not_a_bool": {"run_over_counts_as_gun": 1},
    "home_run_min_players_6": {"home_run_min_players": 6},
    "unknown_config_field": {"colour": "red"},
    "config_not_an_object": ["gun_mode", "fixed"],
    "row_water_zero": {"row_water": 0},
    "row_water_too_large": {"row_water": 101},
    "row_water_a_string": {"row_water": "2"},
    "row_water_not_an_integer": {"row_water": 1.5},
}


@pytest.mark.parametrize("command", sorted(GOOD))
@pytest.mark.parametrize("config", BAD_CONFIGS.values(), ids=BAD_CONFIGS.keys())
def test_error_code_bad_config(cli: Run, command: str, config: object) -> None:
    assert cli(command, {**GOOD[command], "config": config}).code == "bad_config"


@pytest.mark.parametrize(
    "config",
    [
        {},
        None,
        {"escape_penalty_multiplier": None},
        {"special_order": list(reversed(ALL_SPECIALS))},
        {"row_bonus": {"front.trips": 0}, "gun_mode": "double", "a2345": "second"},
        {"row_water": 3},
    ],
    ids=["empty", "null", "null_multiplier", "reversed_order", "several_fields", "row_water"],
)
@pytest.mark.parametrize("command", sorted(GOOD))
def test_valid_configs_are_accepted(cli: Run, command: str, config: object) -> None:
    assert cli(command, {**GOOD[command], "config": config}).status == 0


@pytest.mark.parametrize("argv", [["shuffle"], ["COMPARE"], [""], ["compare", "score"]])
def test_error_code_unknown_command(cli: Run, argv: list[str]) -> None:
    assert cli(None, GOOD["compare"], argv=argv).code == "unknown_command"


def test_error_code_unknown_command_when_no_command_is_given(cli: Run) -> None:
    assert cli(None, GOOD["compare"], argv=[]).code == "unknown_command"


# -- card text ---------------------------------------------------------------------------------


def test_1_10d_is_read_as_td_and_lowercase_is_accepted(cli: Run) -> None:
    answer = cli("compare", {"a": ["10d", "jd", "qD", "Kd", "ad"], "b": cards("TS JS QS KS AS")})

    assert answer.answer == {
        "a": {"category": "straight_flush"},
        "b": {"category": "straight_flush"},
        "result": 0,
    }


def test_1_answers_write_cards_in_canonical_form(cli: Run) -> None:
    hand = [c.lower() for c in cards(PLAIN_13)] + ["10h"]
    hand.remove("jh")

    answer = cli("arrange", {"cards": hand, "limit": 1}).answer

    shown = [c for r in ROWS for c in answer["best"][r]]
    assert sorted(shown) == sorted(cards(PLAIN_13.replace("JH", "TH")))


# -- batches -----------------------------------------------------------------------------------

BAD_REQUEST: dict[str, tuple[Json, str]] = {
    "compare": ({"a": cards("AS KS QS JS"), "b": cards("2S 3S 4S")}, "wrong_count"),
    "special": ({"cards": cards(PLAIN_13)[:12] + ["AS"]}, "duplicate_card"),
    "arrange": ({"cards": ["1S"] * 13}, "bad_card"),
    "score": ({"players": [EX1_A]}, "wrong_count"),
}


@pytest.mark.parametrize("command", sorted(GOOD))
def test_batch_answers_in_order_with_errors_in_place(cli: Run, command: str) -> None:
    good, (bad, code) = GOOD[command], BAD_REQUEST[command]
    single = cli(command, good).answer

    answer = cli(command, {"batch": [good, bad, good]}).answer

    assert set(answer) == {"batch"}
    first, error, last = answer["batch"]
    assert first == single and last == single
    assert set(error) == {"error"}
    assert error["error"]["code"] == code
    assert error["error"]["message"]


def test_batch_keeps_the_order_of_different_requests(cli: Run) -> None:
    requests = [
        {"a": cards("AS AH 2D"), "b": cards("KS KH 3C")},
        {"a": cards("2S 3H 4D"), "b": cards("KS KH 3C")},
        "not an object",
        {"a": cards("2S 3H 4D"), "b": cards("2C 3C 4C")},
    ]

    answer = cli("compare", {"batch": requests}).answer

    results = [a.get("result", a.get("error", {}).get("code")) for a in answer["batch"]]
    assert results == [1, -1, "bad_json", 0]


@pytest.mark.parametrize("batch", ["compare", {"a": []}, None, 3])
def test_batch_that_is_not_a_list_is_bad_json(cli: Run, batch: object) -> None:
    assert cli("compare", {"batch": batch}).code == "bad_json"


@pytest.mark.parametrize("command", sorted(GOOD))
def test_empty_batch_answers_an_empty_batch(cli: Run, command: str) -> None:
    assert cli(command, {"batch": []}).answer == {"batch": []}


def test_batch_with_a_bad_config_inside_answers_bad_config_in_place(cli: Run) -> None:
    bad = {**GOOD["compare"], "config": {"gun_mode": "triple"}}

    answer = cli("compare", {"batch": [bad, GOOD["compare"]]}).answer

    assert answer["batch"][0]["error"]["code"] == "bad_config"
    assert answer["batch"][1]["result"] == 1


# -- compare -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a", "b", "categories", "result"),
    [
        ("QS QH 3D", "QC QD KS 5H 4C", ("pair", "pair"), -1),
        ("QS QH 5D", "QC QD 5S 4H 3C", ("pair", "pair"), 0),
        ("QS QH 5D", "QC QD 4S 3H 2C", ("pair", "pair"), 1),
        ("2S 2H 2D", "AS AH KS KH QC", ("trips", "two_pair"), 1),
        ("AS AH KD", "2S 2H 3S 3H 4C", ("pair", "two_pair"), -1),
        ("AS KH QD", "AC KC QS 4H 3C", ("high_card", "high_card"), 0),
        ("AS KH QD", "AC KC JS 9H 8C", ("high_card", "high_card"), 1),
        ("7S 7H 7D", "8S 8H 8D 2C 3C", ("trips", "trips"), -1),
        ("AS AH AD", "2S 3H 4D 5C 6C", ("trips", "straight"), -1),
        ("AS AH AD", "2S 7S 4S 5S 9S", ("trips", "flush"), -1),
    ],
    ids=[
        "front_QQ3_below_middle_QQK",
        "front_QQ5_equals_middle_QQ543",
        "front_QQ5_above_middle_QQ432",
        "front_trips_above_middle_two_pair",
        "front_pair_below_middle_two_pair",
        "front_AKQ_equals_middle_AKQ43",
        "front_AKQ_above_middle_AKJ98",
        "front_777_below_middle_888",
        "front_trips_below_middle_straight",
        "front_trips_below_middle_flush",
    ],
)
def test_3_3_compare_front_with_middle(
    cli: Run, a: str, b: str, categories: tuple[str, str], result: int
) -> None:
    forward = cli("compare", {"a": cards(a), "b": cards(b)}).answer
    backward = cli("compare", {"a": cards(b), "b": cards(a)}).answer

    assert (forward["a"]["category"], forward["b"]["category"]) == categories
    assert forward["result"] == result
    assert backward["result"] == -result


@pytest.mark.parametrize(
    ("a2345", "other", "result"),
    [
        ("lowest", "9H TH JD QC KS", -1),
        ("second", "9H TH JD QC KS", 1),
        ("lowest", "2H 3C 4H 5D 6S", -1),
        ("second", "2H 3C 4H 5D 6D", 1),
        ("second", "TS JH QD KC AH", -1),
    ],
    ids=[
        "lowest_vs_9TJQK",
        "second_vs_9TJQK",
        "lowest_vs_23456",
        "second_vs_23456",
        "second_vs_TJQKA",
    ],
)
def test_3_1_a2345_config_changes_the_wheel(cli: Run, a2345: str, other: str, result: int) -> None:
    wheel = cards("AS 2S 3D 4C 5S")
    request = {"a": wheel, "b": cards(other), "config": {"a2345": a2345}}

    answer = cli("compare", request).answer

    assert answer["a"]["category"] == "straight"
    assert answer["result"] == result


def test_3_1_a2345_default_is_lowest(cli: Run) -> None:
    answer = cli("compare", {"a": cards("AS 2S 3D 4C 5S"), "b": cards("9H TH JD QC KS")}).answer

    assert answer["result"] == -1


def test_3_1_suits_never_break_ties(cli: Run) -> None:
    answer = cli("compare", {"a": cards("AS KS QS JS 9S"), "b": cards("AH KH QH JH 9H")}).answer

    assert answer == {"a": {"category": "flush"}, "b": {"category": "flush"}, "result": 0}


# -- special -----------------------------------------------------------------------------------


def test_5_six_pairs_answers_water_4_and_no_split(cli: Run) -> None:
    answer = cli("special", {"cards": cards(SIX_PAIRS)}).answer

    assert answer == {"special": "six_pairs", "water": 4, "split": None}


def test_5_three_flushes_answers_a_foul_free_split_of_one_suit_rows(cli: Run) -> None:
    answer = cli("special", {"cards": cards(THREE_FLUSHES)}).answer

    assert answer["special"] == "three_flushes"
    assert answer["water"] == 3
    split = answer["split"]
    for row in ROWS:
        assert len({c[-1] for c in split[row]}) == 1, f"{row} is not one suit: {split[row]}"
    check_arrangement(split, cards(THREE_FLUSHES))


def test_5_three_flushes_split_is_foul_free_when_the_obvious_split_would_foul(cli: Run) -> None:
    # Hearts make a straight flush, spades only a flush: hearts must go to the back.
    hand = "2C 5C 9C 4H 5H 6H 7H 8H 2S 7S 9S JS KS"

    answer = cli("special", {"cards": cards(hand)}).answer

    assert answer["special"] == "three_flushes"
    front, middle, back = check_arrangement(answer["split"], cards(hand))
    assert (middle, back) == ("flush", "straight_flush")


def test_5_compare_agrees_the_three_flushes_split_is_foul_free(cli: Run) -> None:
    split = cli("special", {"cards": cards(THREE_FLUSHES)}).answer["split"]

    middle_vs_back = cli("compare", {"a": split["middle"], "b": split["back"]}).answer
    front_vs_middle = cli("compare", {"a": split["front"], "b": split["middle"]}).answer

    assert middle_vs_back["result"] <= 0
    assert front_vs_middle["result"] <= 0


def test_5_non_special_hand_answers_nulls(cli: Run) -> None:
    answer = cli("special", {"cards": cards(PLAIN_13)}).answer

    assert answer == {"special": None, "water": None, "split": None}


@pytest.mark.parametrize(
    ("hand", "config", "expected"),
    [
        (SIX_PAIRS, {"specials": {"six_pairs": {"enabled": False}}}, None),
        (THREE_FLUSHES, {"specials": {"three_flushes": {"enabled": False}}}, None),
        (ONE_COLOR, None, "one_color"),
        (ONE_COLOR, {"specials": {"one_color": {"enabled": False}}}, "three_flushes"),
        (FIVE_PAIRS_TRIPS, None, "five_pairs_trips"),
        (FIVE_PAIRS_TRIPS, {"specials": {"five_pairs_trips": {"enabled": False}}}, "six_pairs"),
        (DOUBLE_MONSTER, None, None),
        (DOUBLE_MONSTER, {"specials": {"double_monster": {"enabled": True}}}, "double_monster"),
        (
            ONE_COLOR,
            {"special_order": list(reversed(ALL_SPECIALS))},
            "three_flushes",
        ),
    ],
    ids=[
        "six_pairs_disabled",
        "three_flushes_disabled",
        "one_color_by_default",
        "one_color_disabled_falls_to_three_flushes",
        "five_pairs_trips_by_default",
        "five_pairs_trips_disabled_falls_to_six_pairs",
        "double_monster_off_by_default",
        "double_monster_enabled",
        "reversed_order_ranks_three_flushes_first",
    ],
)
def test_5_config_changes_which_special_counts(
    cli: Run, hand: str, config: Json | None, expected: str | None
) -> None:
    answer = cli("special", {"cards": cards(hand), "config": config}).answer

    assert answer["special"] == expected
    if expected is None:
        assert answer == {"special": None, "water": None, "split": None}


def test_5_config_changes_the_water(cli: Run) -> None:
    config = {"specials": {"six_pairs": {"water": 7}}}

    answer = cli("special", {"cards": cards(SIX_PAIRS), "config": config}).answer

    assert answer == {"special": "six_pairs", "water": 7, "split": None}


def test_5_double_monster_split_shows_two_full_houses(cli: Run) -> None:
    config = {"specials": {"double_monster": {"enabled": True}}}

    answer = cli("special", {"cards": cards(DOUBLE_MONSTER), "config": config}).answer

    front, middle, back = check_arrangement(answer["split"], cards(DOUBLE_MONSTER))
    assert (middle, back) == ("full_house", "full_house")
    assert front in ("pair", "trips")


@pytest.mark.parametrize(
    ("a2345", "back"), [("lowest", "9TJQK"), ("second", "A2345")], ids=["lowest", "second"]
)
def test_5_three_straights_split_puts_the_wheel_where_it_does_not_foul(
    cli: Run, a2345: str, back: str
) -> None:
    """A23 + A2345 + 9TJQK: with a2345 = second the wheel outranks 9TJQK, so it goes back."""
    hand = "AS 2H 3D AC 2D 3C 4H 5S 9D TS JH QC KD"

    answer = cli("special", {"cards": cards(hand), "config": {"a2345": a2345}}).answer

    assert answer["special"] == "three_straights"
    assert check_arrangement(answer["split"], cards(hand), a2345) == (
        "high_card",
        "straight",
        "straight",
    )
    order = "A23456789TJQK" if back == "A2345" else "23456789TJQKA"
    ranks = "".join(sorted((c[0] for c in answer["split"]["back"]), key=order.index))
    assert ranks == back


# -- arrange -----------------------------------------------------------------------------------

ARRANGE_HANDS = [
    PLAIN_13,
    SIX_PAIRS,
    THREE_FLUSHES,
    "AS AH AC AD KS 2H 3C 4D 5S 6H 8C 9D TS",
    "2S 4H 6C 8D TS QH AC 3D 5S 7H 9C JD KS",
]


@pytest.mark.parametrize("hand", ARRANGE_HANDS)
def test_6_arrange_suggestions_are_foul_free_distinct_and_best_first(cli: Run, hand: str) -> None:
    answer = cli("arrange", {"cards": cards(hand)}).answer

    suggestions = answer["suggestions"]
    assert 1 <= len(suggestions) <= 10
    assert answer["best"] == {r: suggestions[0][r] for r in ROWS}
    triples = []
    for s in suggestions:
        triple = check_arrangement(s, cards(hand))
        assert list(triple) == s["categories"]
        triples.append(triple)
    assert len(set(triples)) == len(triples)


@pytest.mark.parametrize("limit", [1, 3, 10])
def test_6_arrange_limit_caps_the_suggestions(cli: Run, limit: int) -> None:
    answer = cli("arrange", {"cards": cards(PLAIN_13), "limit": limit}).answer

    assert 1 <= len(answer["suggestions"]) <= limit


def test_6_arrange_limit_keeps_the_same_best(cli: Run) -> None:
    one = cli("arrange", {"cards": cards(PLAIN_13), "limit": 1}).answer
    ten = cli("arrange", {"cards": cards(PLAIN_13), "limit": 10}).answer

    assert one["best"] == ten["best"]
    assert one["suggestions"] == ten["suggestions"][:1]


@pytest.mark.parametrize("limit", [0, 11, -1, "x", 2.5, True, None])
def test_6_arrange_bad_limit_is_bad_json(cli: Run, limit: object) -> None:
    assert cli("arrange", {"cards": cards(PLAIN_13), "limit": limit}).code == "bad_json"


@pytest.mark.parametrize(
    ("hand", "special"),
    [(PLAIN_13, None), (SIX_PAIRS, "six_pairs"), (THREE_FLUSHES, "three_flushes")],
)
def test_6_arrange_reports_the_special(cli: Run, hand: str, special: str | None) -> None:
    assert cli("arrange", {"cards": cards(hand)}).answer["special"] == special


def test_6_arrange_is_deterministic_for_any_input_order(cli: Run) -> None:
    hand = cards(PLAIN_13)

    first = cli("arrange", {"cards": hand}).answer
    second = cli("arrange", {"cards": list(reversed(hand))}).answer

    assert first == second


# -- score -------------------------------------------------------------------------------------


def by_id(items: list[Json]) -> dict[str, Json]:
    return {item["id"]: item for item in items}


def check_money(answer: Json, balances: dict[str, int | None] | None = None) -> None:
    """Deltas plus penalties sum to zero, transfers explain every delta, no balance < 0."""
    players = by_id(answer["players"])
    assert sum(p["delta"] + p["penalty"] for p in players.values()) == 0
    for pid, p in players.items():
        received = sum(t["coins"] for t in answer["transfers"] if t["to"] == pid)
        paid = sum(t["coins"] for t in answer["transfers"] if t["from"] == pid)
        assert p["delta"] == received - paid - p["penalty"], pid
        assert p["coins"] == p["water"] * answer.get("base_score", 100)
        balance = (balances or {}).get(pid)
        if balance is not None:
            assert balance + p["delta"] >= 0, pid
    assert all(t["coins"] > 0 for t in answer["transfers"])


def test_11_example_1_two_players(cli: Run) -> None:
    answer = cli("score", {"players": [EX1_A, EX1_B]}).answer

    players = by_id(answer["players"])
    assert {k: players["A"][k] for k in ("water", "coins", "penalty", "delta")} == {
        "water": 11,
        "coins": 1100,
        "penalty": 0,
        "delta": 1100,
    }
    assert {k: players["B"][k] for k in ("water", "coins", "penalty", "delta")} == {
        "water": -11,
        "coins": -1100,
        "penalty": 0,
        "delta": -1100,
    }
    [pair] = answer["pairs"]
    assert {k: pair[k] for k in ("a", "b", "rows", "gun", "water")} == {
        "a": "A",
        "b": "B",
        "rows": [1, 1, 1],
        "gun": "gun",
        "water": 11,
    }
    assert [{k: t[k] for k in ("from", "to", "coins")} for t in answer["transfers"]] == [
        {"from": "B", "to": "A", "coins": 1100}
    ]
    check_money(answer)


def test_11_example_1_in_the_other_seat_order(cli: Run) -> None:
    answer = cli("score", {"players": [EX1_B, EX1_A]}).answer

    [pair] = answer["pairs"]
    assert (pair["a"], pair["b"], pair["rows"], pair["water"]) == ("B", "A", [-1, -1, -1], -11)
    assert {p["id"]: p["water"] for p in answer["players"]} == {"A": 11, "B": -11}


def test_11_example_3_three_players_with_specials(cli: Run) -> None:
    a = {"id": "A", "special": "six_pairs", "cards": cards(SIX_PAIRS)}
    b = {"id": "B", "special": "all_small", "cards": cards(ALL_SMALL)}

    answer = cli("score", {"players": [a, b, EX3_C]}).answer

    assert {p["id"]: p["water"] for p in answer["players"]} == {"A": -8, "B": 24, "C": -16}
    pairs = {(p["a"], p["b"]): (p["rows"], p["gun"], p["water"]) for p in answer["pairs"]}
    assert pairs == {
        ("A", "B"): (None, None, -12),
        ("A", "C"): (None, None, 4),
        ("B", "C"): (None, None, 12),
    }
    check_money(answer)


def test_7_2_gun_mode_double_doubles_example_1(cli: Run) -> None:
    answer = cli("score", {"players": [EX1_A, EX1_B], "config": {"gun_mode": "double"}}).answer

    assert [p["water"] for p in answer["players"]] == [16, -16]


def test_7_2_home_run_pays_home_run_water(cli: Run) -> None:
    # A guns both B and C: each pays 12 instead of 3 on top of the rows.
    c = rows("2H 3C 4S", "5H 6S 7H 9S JC", "2D 4D 5D TD JD", id="C")

    answer = cli("score", {"players": [EX1_A, EX1_B, c]}).answer

    assert answer["home_run"] == "A"
    pairs = {(p["a"], p["b"]): (p["gun"], p["water"]) for p in answer["pairs"]}
    assert pairs[("A", "B")] == pairs[("A", "C")] == ("home_run", 8 + 12)
    assert pairs[("B", "C")] == (None, 1)
    assert by_id(answer["players"])["A"]["water"] == 40
    check_money(answer)


def test_7_2_home_run_in_double_mode_doubles_twice(cli: Run) -> None:
    c = rows("2H 3C 4S", "5H 6S 7H 9S JC", "2D 4D 5D TD JD", id="C")

    answer = cli("score", {"players": [EX1_A, EX1_B, c], "config": {"gun_mode": "double"}}).answer

    pairs = {(p["a"], p["b"]): (p["gun"], p["water"]) for p in answer["pairs"]}
    assert pairs[("A", "B")] == pairs[("A", "C")] == ("home_run", 8 * 4)
    assert by_id(answer["players"])["A"]["water"] == 64


def test_7_2_no_home_run_below_home_run_min_players(cli: Run) -> None:
    c = rows("2H 3C 4S", "5H 6S 7H 9S JC", "2D 4D 5D TD JD", id="C")
    config = {"home_run_min_players": 4}

    answer = cli("score", {"players": [EX1_A, EX1_B, c], "config": config}).answer

    assert answer["home_run"] is None
    assert {p["gun"] for p in answer["pairs"] if p["a"] == "A"} == {"gun"}
    assert by_id(answer["players"])["A"]["water"] == 22


@pytest.mark.parametrize(
    ("config", "water"),
    [
        ({"row_water": 2}, 3 * 2 + 5 + 3),  # rows 2 each, bonuses 5, gun 3
        ({"row_water": 3}, 3 * 3 + 5 + 3),
        ({"row_water": 2, "gun_mode": "double"}, (3 * 2 + 5) * 2),
        ({"row_water": 3, "gun_water": 0}, 3 * 3 + 5),
    ],
)
def test_7_1_row_water_in_example_1(cli: Run, config: Json, water: int) -> None:
    answer = cli("score", {"players": [EX1_A, EX1_B], "config": config}).answer

    assert {p["id"]: p["water"] for p in answer["players"]} == {"A": water, "B": -water}
    [pair] = answer["pairs"]
    assert (pair["rows"], pair["gun"], pair["water"]) == ([1, 1, 1], "gun", water)
    check_money(answer)


def test_7_1_row_water_in_a_home_run_in_double_mode(cli: Run) -> None:
    c = rows("2H 3C 4S", "5H 6S 7H 9S JC", "2D 4D 5D TD JD", id="C")
    config = {"row_water": 2, "gun_mode": "double"}

    answer = cli("score", {"players": [EX1_A, EX1_B, c], "config": config}).answer

    pairs = {(p["a"], p["b"]): (p["gun"], p["water"]) for p in answer["pairs"]}
    assert pairs[("A", "B")] == pairs[("A", "C")] == ("home_run", (6 + 5) * 4)
    assert pairs[("B", "C")] == (None, 2)
    check_money(answer)


@pytest.mark.parametrize("row_water", [2, 3])
@pytest.mark.parametrize("gun_mode", ["fixed", "double"])
def test_7_1_row_water_matches_the_reference_computation(
    cli: Run, row_water: int, gun_mode: str
) -> None:
    """Random deals of 2 to 4 players, arranged by the engine, scored by the command line
    with row water 2 and 3: every pair's water and every player's total is the reference
    reading of §7 (tests/games/rules/reference.py)."""
    config_json = {"row_water": row_water, "gun_mode": gun_mode, "home_run_min_players": 2}
    config = RuleConfig.from_dict(config_json)
    rng = random.Random(row_water * 10 + len(gun_mode))
    guns = 0
    for deal in range(12):
        deck = rng.sample(DECK, 52)
        players = []
        for i in range(2 + deal % 3):
            arranged = best_arrangement(deck[13 * i : 13 * i + 13], config)
            players.append({"id": f"P{i}", **{r: format_cards(getattr(arranged, r)) for r in ROWS}})

        answer = cli("score", {"players": players, "config": config_json}).answer

        seats = [Seat(p["id"], Arranged(*(parse_cards(p[r]) for r in ROWS))) for p in players]
        result = score_round(seats, config)
        ids = [p["id"] for p in players]
        for pair in answer["pairs"]:
            i, j = ids.index(pair["a"]), ids.index(pair["b"])
            assert (tuple(pair["rows"]), pair["water"]) == expected_pair_water(result, i, j, config)
            guns += pair["gun"] is not None
        totals = {p["id"]: p["water"] for p in answer["players"]}
        assert sum(totals.values()) == 0
        check_money(answer)
    assert guns > 0  # the deals exercise the gun terms too


def test_process_applies_row_water() -> None:
    request = {"players": [EX1_A, EX1_B], "config": {"row_water": 2}}

    assert [
        p["water"] for p in run_process(["score"], json.dumps(request).encode()).answer["players"]
    ] == [14, -14]
    bad = {**request, "config": {"row_water": 0}}
    error = run_process(["score"], json.dumps(bad).encode()).error
    assert error == {
        "code": "bad_config",
        "message": "row_water must be between 1 and 100, got 0",
    }


def test_7_4_cannot_cover_s0_example_through_score(cli: Run) -> None:
    """A owes B 20, C 10, D 6 water (base 100) and has 1,000 coins: B 555, C 277, D 168.

    B, C and D hold specials worth 20, 10 and 6, so A (normal) loses exactly that to each;
    they also play each other, which does not touch A's debts.
    """
    players = [
        {**NO_SPECIAL, "id": "A", "balance": 1000},
        {"id": "B", "special": "three_quads", "cards": cards(THREE_QUADS)},
        {"id": "C", "special": "one_color", "cards": cards(ONE_COLOR)},
        {"id": "D", "special": "four_trips", "cards": cards(FOUR_TRIPS)},
    ]

    answer = cli("score", {"players": players}).answer

    water = {(p["a"], p["b"]): p["water"] for p in answer["pairs"]}
    assert (water[("A", "B")], water[("A", "C")], water[("A", "D")]) == (-20, -10, -6)
    paid_by_a = {t["to"]: t["coins"] for t in answer["transfers"] if t["from"] == "A"}
    assert paid_by_a == {"B": 555, "C": 277, "D": 168}
    cuts = {(c["from"], c["to"]): (c["owed"], c["paid"]) for c in answer["cuts"]}
    assert cuts == {("A", "B"): (2000, 555), ("A", "C"): (1000, 277), ("A", "D"): (600, 168)}
    deltas = {p["id"]: p["delta"] for p in answer["players"]}
    assert deltas == {"A": -1000, "B": 555 + 2000 + 2000, "C": 277 + 1000 - 2000, "D": 168 - 3000}
    check_money(answer, {"A": 1000})


def test_7_4_loser_owing_one_player_pays_everything_it_has(cli: Run) -> None:
    answer = cli("score", {"players": [EX1_A, {**EX1_B, "balance": 700}]}).answer

    assert {p["id"]: p["delta"] for p in answer["players"]} == {"A": 700, "B": -700}
    assert [c["owed"] - c["paid"] for c in answer["cuts"]] == [400]
    check_money(answer, {"B": 700})


def test_7_4_zero_balance_pays_nothing(cli: Run) -> None:
    answer = cli("score", {"players": [EX1_A, {**EX1_B, "balance": 0}]}).answer

    assert {p["id"]: p["delta"] for p in answer["players"]} == {"A": 0, "B": 0}
    assert answer["transfers"] == []


def test_7_5_escaped_player_pays_five_times_base(cli: Run) -> None:
    answer = cli("score", {"players": [EX1_A, {**EX1_B, "escaped": True}]}).answer

    players = by_id(answer["players"])
    assert (players["B"]["penalty"], players["B"]["delta"]) == (500, -1100 - 500)
    assert (players["A"]["penalty"], players["A"]["delta"]) == (0, 1100)
    check_money(answer)


def test_7_5_escape_penalty_follows_base_score(cli: Run) -> None:
    request = {"players": [EX1_A, {**EX1_B, "escaped": True}], "config": {"base_score": 10}}

    players = by_id(cli("score", request).answer["players"])

    assert (players["B"]["penalty"], players["B"]["delta"]) == (50, -110 - 50)


def test_7_5_escape_penalty_is_capped_by_what_is_left(cli: Run) -> None:
    b = {**EX1_B, "escaped": True, "balance": 1500}

    answer = cli("score", {"players": [EX1_A, b]}).answer

    players = by_id(answer["players"])
    assert (players["B"]["penalty"], players["B"]["delta"]) == (400, -1500)
    assert players["A"]["delta"] == 1100
    check_money(answer, {"B": 1500})


def test_7_5_escaped_winner_still_pays_the_penalty(cli: Run) -> None:
    answer = cli("score", {"players": [{**EX1_A, "escaped": True, "balance": 0}, EX1_B]}).answer

    players = by_id(answer["players"])
    assert (players["A"]["penalty"], players["A"]["delta"]) == (500, 600)
    check_money(answer, {"A": 0})


def test_7_5_escape_covers_losses_variant(cli: Run) -> None:
    """C escapes in example 3: it also pays A's loss of 800, then a penalty of 10 x base."""
    a = {"id": "A", "special": "six_pairs", "cards": cards(SIX_PAIRS)}
    b = {"id": "B", "special": "all_small", "cards": cards(ALL_SMALL)}
    c = {**EX3_C, "escaped": True}

    answer = cli("score", {"players": [a, b, c], "config": {"escape_covers_losses": True}}).answer

    players = by_id(answer["players"])
    assert {pid: (p["delta"], p["penalty"]) for pid, p in players.items()} == {
        "A": (0, 0),
        "B": (2400, 0),
        "C": (-1600 - 800 - 1000, 1000),
    }
    check_money(answer)


def test_score_transfers_sum_to_deltas_in_a_four_player_round(cli: Run) -> None:
    players = [
        {**NO_SPECIAL, "id": "A", "balance": 1000},
        {"id": "B", "special": "three_quads", "cards": cards(THREE_QUADS), "balance": 0},
        {"id": "C", "special": "one_color", "cards": cards(ONE_COLOR), "balance": 500},
        {"id": "D", "special": "four_trips", "cards": cards(FOUR_TRIPS), "escaped": True},
    ]

    answer = cli("score", {"players": players}).answer

    check_money(answer, {"A": 1000, "B": 0, "C": 500})


def test_batch_with_other_top_level_fields_is_rejected_not_ignored(cli: Run) -> None:
    request = {"batch": [{"a": ["AS"], "b": ["KS"]}], "config": {"a2345": "second"}}
    outcome = cli("compare", request)
    assert outcome.status == 2 and outcome.stdout == ""
    assert outcome.code == "bad_json"
    assert "inside each request" in outcome.error["message"]

"""The table state's JSON form, and the guarantee that the machine is pure."""

from __future__ import annotations

import ast
import json
from pathlib import Path

from games.rules.config import RuleConfig
from games.table import machine
from games.table.state import Phase, SeatState, TableState

from .helpers import Game, c

ROOT = Path(__file__).resolve().parents[3]
TABLE = ROOT / "games" / "table"
SIX_PAIRS = c("2S 2H 3S 3H 5S 5H 7S 7H 9S 9H KS KH AD")

# No framework, and nothing that reads a clock, draws random numbers or does I/O.
FORBIDDEN = {
    "django",
    "channels",
    "celery",
    "rest_framework",
    "daphne",
    "drf_spectacular",
    "time",
    "datetime",
    "random",
    "secrets",
    "os",
    "socket",
    "asyncio",
    "threading",
    "uuid",
}


def _stored(state: TableState) -> TableState:
    """Through JSON text and back, as the service stores it."""
    return TableState.from_dict(json.loads(json.dumps(state.to_dict())))


def test_round_trip_through_json_at_every_step_of_a_round() -> None:
    config = RuleConfig(compare_mode="simultaneous", escape_penalty_multiplier=7)
    game = Game(3, config, capacity=4)
    states = [game.state]
    game.watchers.append(lambda transition, now: states.append(transition.state))
    game.start(hands={2: SIX_PAIRS})
    game.do(machine.save_draft, position=0, draft={"front": ["AS"], "n": 1.5, "ok": True})
    game.do(machine.choose_special, position=2, play_special=True)
    game.do(machine.disconnect, position=1)
    game.do(machine.leave, position=0)
    game.do(machine.sit, player="late", position=3)
    game.fire()  # the disconnected seat's grace ends: its hand is played, the comparison starts
    game.fire({"p0": 1000, "p1": 5000, "p2": 0, "late": 1})
    game.do(machine.ready, position=3)
    phases = {s.phase for s in states}
    assert phases == set(Phase)
    for state in states:
        assert _stored(state) == state
    assert game.state.result is not None and game.state.deck is not None


def test_a_new_table_is_waiting_and_empty() -> None:
    state = TableState(capacity=4)
    assert (state.version, state.phase, state.round_no, state.seats) == (0, Phase.WAITING, 0, ())
    assert state.deadline is None and not state.awaiting_deal and not state.revealed
    assert _stored(state) == state


def test_seat_flags() -> None:
    seat = SeatState("p", 0, in_round=True, hand=SIX_PAIRS, special="six_pairs")
    assert seat.choosing and not seat.done and not seat.declared
    yes = SeatState("p", 0, in_round=True, hand=SIX_PAIRS, special="six_pairs", special_choice=True)
    assert yes.done and yes.declared and not yes.choosing


def test_the_phases_are_rules_8() -> None:
    assert [p.value for p in Phase] == [
        "waiting",
        "dealing",
        "special_choice",
        "arranging",
        "comparing",
        "settled",
    ]


def _imported_top_level_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_the_table_machine_imports_no_framework_clock_randomness_or_io() -> None:
    files = sorted(TABLE.rglob("*.py"))
    assert files, "games/table has no modules"
    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in files
        if (found := _imported_top_level_names(ast.parse(path.read_text(), str(path))) & FORBIDDEN)
    }
    assert offenders == {}
    # Its only first-party dependency is the pure rules engine.
    first_party = {"games", "accounts", "lobby", "shisanshui"}
    for path in files:
        tree = ast.parse(path.read_text(), str(path))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                top = node.module.split(".")[0]
                if top in first_party:
                    assert node.module.startswith("games.rules"), (path, node.module)

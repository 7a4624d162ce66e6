"""Guarantees about the shape of the repository: the rules engine imports no framework, imports
go the layout's one way, and every model change has its migration."""

import ast
import importlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.migrations import CreateModel

ROOT = Path(__file__).resolve().parent.parent

# The rules engine is a plain library: it must import without Django or anything built on it.
FRAMEWORKS = {"django", "channels", "celery", "rest_framework", "daphne", "drf_spectacular"}
# The application packages, migrations included; `benchmarks` and `tests` are the project too,
# but nothing of the application may import them.
APPLICATION = ("shisanshui", "games", "accounts", "lobby")
PROJECT = {*APPLICATION, "benchmarks", "tests"}


def imports_in(source: str, module: str, *, package: bool = False) -> list[tuple[int, str]]:
    """(line, absolute name) of every import in a module's source: at the top or nested in a
    function or an ``if``, relative ones resolved against the module (``package``: the source
    is that package's ``__init__``), and ``importlib.import_module`` of a literal name. ``from a
    import b`` gives ``a.b``: b may be a module of a."""
    base = module.split(".") if package else module.split(".")[:-1]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            parent = base[: len(base) - node.level + 1] if node.level else []
            origin = ".".join([*parent, *([node.module] if node.module else [])])
            found += [
                (node.lineno, origin if alias.name == "*" else f"{origin}.{alias.name}")
                for alias in node.names
            ]
        elif (
            isinstance(node, ast.Call)
            and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
            == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
            and not node.args[0].value.startswith(".")
        ):
            found.append((node.lineno, node.args[0].value))
    return found


def within(name: str, package: str) -> bool:
    return name == package or name.startswith(f"{package}.")


def direction_broken(module: str, name: str) -> str | None:
    """The rule of the layout that ``module`` importing ``name`` breaks, if any."""
    if name.split(".")[0] not in PROJECT:
        return None
    if within(name, "benchmarks") or within(name, "tests"):
        return "the application never imports benchmarks or tests"
    if within(module, "games.rules") and not within(name, "games.rules"):
        return "games.rules imports nothing of the project"
    if within(module, "games.table") and not any(
        within(name, allowed) for allowed in ("games.rules", "games.table")
    ):
        return "games.table imports only games.rules"
    if within(module, "games.history") and within(name, "games.live"):
        return "games.history never imports games.live"
    if within(module, "accounts") and (within(name, "games") or within(name, "lobby")):
        return "accounts imports neither games nor lobby"
    return None


def offences_in(source: str, module: str, *, package: bool = False) -> list[str]:
    return [
        f"{line}: {name} ({rule})"
        for line, name in imports_in(source, module, package=package)
        if (rule := direction_broken(module, name))
    ]


def application_modules() -> Iterator[tuple[Path, str, bool]]:
    """(path, module name, whether it is a package's __init__) of every application module."""
    for top in APPLICATION:
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            package = parts[-1] == "__init__"
            yield path, ".".join(parts[:-1] if package else parts), package


def test_rules_engine_never_imports_a_framework() -> None:
    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path, module, package in application_modules()
        if within(module, "games.rules")
        and (
            found := {name.split(".")[0] for _, name in imports_in(path.read_text(), module)}
            & FRAMEWORKS
        )
    }

    assert offenders == {}


def test_imports_go_the_layouts_one_way() -> None:
    offences = [
        f"{path.relative_to(ROOT)}:{offence}"
        for path, module, package in application_modules()
        for offence in offences_in(path.read_text(), module, package=package)
    ]

    assert not offences, "imports against the layout's directions:\n" + "\n".join(offences)


def test_the_direction_check_sees_every_form_of_import() -> None:
    source = (
        "from __future__ import annotations\n"
        "import importlib\n"
        "from typing import TYPE_CHECKING\n"
        "from . import replay\n"
        "from ..rules.cards import Card\n"
        "from .. import live\n"
        "from ..live.services import table_ready\n"
        "if TYPE_CHECKING:\n"
        "    import games.live.tasks\n"
        "def late():\n"
        "    from benchmarks import load\n"
        "    return importlib.import_module('games.live.bots')\n"
    )

    assert offences_in(source, "games.history.audit") == [
        "6: games.live (games.history never imports games.live)",
        "7: games.live.services.table_ready (games.history never imports games.live)",
        "9: games.live.tasks (games.history never imports games.live)",
        "11: benchmarks.load (the application never imports benchmarks or tests)",
        "12: games.live.bots (games.history never imports games.live)",
    ]
    assert sorted(imports_in("from . import x\nfrom .y import z", "games", package=True)) == [
        (1, "games.x"),
        (2, "games.y.z"),
    ]
    assert offences_in("from games.models import Round", "accounts.collusion") == [
        "1: games.models.Round (accounts imports neither games nor lobby)"
    ]
    assert offences_in("from . import cards\nfrom ..table import state", "games.rules.hands") == [
        "2: games.table.state (games.rules imports nothing of the project)"
    ]
    assert offences_in("from games.rules import cards\nimport lobby", "games.table.state") == [
        "2: lobby (games.table imports only games.rules)"
    ]
    framework = "import django.db\nfrom channels.layers import x\nif x:\n    import celery"
    assert {name.split(".")[0] for _, name in imports_in(framework, "games.rules.cards")} == {
        "django",
        "channels",
        "celery",
    }


def test_first_accounts_migration_creates_the_user_model() -> None:
    migration = importlib.import_module("accounts.migrations.0001_initial").Migration

    assert migration.initial is True
    created = [op.name for op in migration.operations if isinstance(op, CreateModel)]
    assert created == ["User"]


@pytest.mark.django_db
def test_no_model_change_is_missing_a_migration() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)

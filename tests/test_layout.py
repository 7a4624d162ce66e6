"""Guarantees about the shape of the repository."""

import ast
import importlib
from pathlib import Path

import pytest
from django.core.management import call_command
from django.db.migrations import CreateModel

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "games" / "rules"

# The rules engine is a plain library: it must import without Django or anything built on it.
FRAMEWORKS = {"django", "channels", "celery", "rest_framework", "daphne", "drf_spectacular"}


def _imported_top_level_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def test_rules_engine_never_imports_a_framework() -> None:
    if not RULES.is_dir():
        pytest.skip("games/rules does not exist yet")

    offenders = {
        str(path.relative_to(ROOT)): sorted(found)
        for path in sorted(RULES.rglob("*.py"))
        if (found := _imported_top_level_names(ast.parse(path.read_text(), str(path))) & FRAMEWORKS)
    }

    assert offenders == {}


def test_the_import_check_sees_every_form_of_import() -> None:
    source = (
        "import django.db\nfrom channels.layers import x\nif x:\n    import celery\nfrom . import y"
    )

    assert _imported_top_level_names(ast.parse(source)) == {"django", "channels", "celery"}


def test_first_accounts_migration_creates_the_user_model() -> None:
    migration = importlib.import_module("accounts.migrations.0001_initial").Migration

    assert migration.initial is True
    created = [op.name for op in migration.operations if isinstance(op, CreateModel)]
    assert created == ["User"]


@pytest.mark.django_db
def test_no_model_change_is_missing_a_migration() -> None:
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)

"""Fixtures shared by the whole suite (pytest-django provides client, db, admin_user ...)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_server import LiveCluster, LivePlatform, database_url_of

ROOT = Path(__file__).resolve().parents[1]
# Screenshots and logs of the live tests, kept as artifacts (gitignored).
TEST_OUTPUT = ROOT / "test-output"

# The markers of pyproject.toml. `browser`: the tests that drive Chromium, those of
# tests/browser and these.
BROWSER_TESTS = ROOT / "tests" / "browser"
CHROMIUM_TESTS = (
    "tests/games/test_cards_js_variants.py::test_12_copies_and_jokers_look_right_in_chromium",
)
# `live`: the tests that start processes running beside them, through one of these fixtures
# (the platform or cluster of tests/live_server.py; a Celery worker of
# tests/games/live/test_celery_integration) ...
PROCESS_FIXTURES = frozenset({"live_platform", "live_cluster", "celery"})
# ... or by themselves. A command run to its end (node, git, manage.py check, python -c) is no
# such process.
PROCESS_TESTS = (
    # `make run`: honcho, daphne, a Celery worker and beat, redis-server.
    "tests/shisanshui/test_make_run.py",
    # daphne (shisanshui.web).
    "tests/shisanshui/test_web.py::test_the_web_process_serves_on_uvloop_and_stops_on_a_signal",
    # Writers racing each other from processes of their own, on SQLite and on PostgreSQL.
    "tests/shisanshui/test_sqlite_concurrency.py",
    "tests/accounts/test_concurrency.py",
    # benchmarks/services.py playing rounds on a database of its own.
    "tests/benchmarks/test_services_script.py",
)


def listed(item: pytest.Item, tests: tuple[str, ...]) -> bool:
    """Whether the item is one of ``tests``: modules, or tests of a module (``path::name``)."""
    test = item.nodeid.split("[", 1)[0]
    return any(test == name or test.startswith(f"{name}::") for name in tests)


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the `browser` and `live` tests before `-m` chooses among them."""
    for item in items:
        if item.path.is_relative_to(BROWSER_TESTS) or listed(item, CHROMIUM_TESTS):
            item.add_marker(pytest.mark.browser)
        fixtures = getattr(item, "fixturenames", ())
        if PROCESS_FIXTURES.intersection(fixtures) or listed(item, PROCESS_TESTS):
            item.add_marker(pytest.mark.live)


def pytest_configure(config: pytest.Config) -> None:
    """The Django tests' isolation fixtures (tests/django_isolation.py) are on whenever
    pytest-django is: `pytest -p no:django` runs the pure tests without them."""
    if config.pluginmanager.hasplugin("django"):
        config.pluginmanager.import_plugin("tests.django_isolation")


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Keep each phase's report on the item, so fixtures can tell whether the test failed."""
    report = yield
    setattr(item, f"report_{report.when}", report)
    return report


def output_dir_for(node: pytest.Item) -> Path:
    """test-output/<test name>/, emptied for this run."""
    name = re.sub(r"[^A-Za-z0-9_.-]+", "_", node.nodeid.split("::", 1)[-1])[:120]
    directory = TEST_OUTPUT / name
    shutil.rmtree(directory, ignore_errors=True)
    directory.mkdir(parents=True)
    return directory


@pytest.fixture
def test_output(request: pytest.FixtureRequest) -> Path:
    """A folder for this test's artifacts (screenshots), under test-output/."""
    return output_dir_for(request.node)


@pytest.fixture
def live_platform(
    request: pytest.FixtureRequest, transactional_db: None, test_output: Path
) -> Iterator[LivePlatform]:
    """Redis, daphne and a Celery worker with beat, on the test database (see live_server).

    Their logs are copied to the test's output folder, and printed when the test failed.
    """
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the platform's processes need the PostgreSQL test database")
    extra_env = getattr(request, "param", None) or {}
    platform = LivePlatform(database_url_of(connection.settings_dict), extra_env=extra_env)
    platform.start()
    try:
        yield platform
    finally:
        platform.stop()
        for process in platform.processes:
            if process.log.exists():
                shutil.copy(process.log, test_output / process.log.name)
        report = getattr(request.node, "report_call", None)
        if report is not None and report.failed:
            print(platform.logs())
        shutil.rmtree(platform.directory, ignore_errors=True)


@pytest.fixture
def live_cluster(
    request: pytest.FixtureRequest, transactional_db: None, test_output: Path
) -> Iterator[LiveCluster]:
    """Like ``live_platform``, with daphne processes (2, or the parametrized number) behind
    HAProxy (LiveCluster); logs copied to the test's output folder, printed when it failed."""
    from django.db import connection

    if connection.vendor != "postgresql":
        pytest.skip("the platform's processes need the PostgreSQL test database")
    web_processes = getattr(request, "param", None) or 2
    cluster = LiveCluster(database_url_of(connection.settings_dict), web_processes=web_processes)
    started = False
    try:
        cluster.start()
        started = True
        yield cluster
    finally:
        cluster.stop()
        for process in cluster.processes:
            if process.log.exists():
                shutil.copy(process.log, test_output / process.log.name)
        report = getattr(request.node, "report_call", None)
        if not started or (report is not None and report.failed):
            print(cluster.logs())
        shutil.rmtree(cluster.directory, ignore_errors=True)

"""Playwright (Python) driving Debian's Chromium against the live platform.

Each player gets its own browser context (its own cookies) and page; ``shot`` saves a
screenshot of a key moment under test-output/<test>/. `scripts/ensure-chromium` (run by
`make test`) installs /usr/bin/chromium when it is missing; Playwright's own browser
download is not used.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.live_server import LivePlatform, database_url_of

CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking"]
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 390, "height": 844}

sync_api = pytest.importorskip("playwright.sync_api")


def pytest_collection_finish(session: pytest.Session) -> None:
    """Playwright's sync API runs an event loop in this thread; Django would then refuse the
    ORM calls the tests make to check the ledger. The test process does nothing concurrently.
    Only a run that holds browser tests allows it: collecting this folder leaves the others
    (`-m "not browser"`) as they are."""
    if any(item.get_closest_marker("browser") for item in session.items):
        os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


# Module scope, not session: Playwright's sync API keeps an event loop running in this thread
# while it is started, and the asyncio tests of later modules need the thread without one.
@pytest.fixture(scope="module")
def browser() -> Iterator[sync_api.Browser]:
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing: run scripts/ensure-chromium")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True
        )
        try:
            yield chromium
        finally:
            chromium.close()


NewPage = Callable[..., sync_api.Page]


@pytest.fixture
def new_page(
    request: pytest.FixtureRequest, browser: sync_api.Browser, test_output: Path
) -> Iterator[NewPage]:
    """``new_page(viewport=DESKTOP, locale="en")``: a page in a fresh browser context. When
    the test failed, every page is saved as test-output/<test>/failed-<n>.png first."""
    contexts: list[sync_api.BrowserContext] = []

    def make(viewport: dict[str, int] | None = None, locale: str = "en") -> sync_api.Page:
        context = browser.new_context(viewport=viewport or DESKTOP, locale=locale)
        context.set_default_timeout(15_000)
        contexts.append(context)
        return context.new_page()

    try:
        yield make
    finally:
        if _failed(request):
            pages = [page for context in contexts for page in context.pages]
            for n, page in enumerate(pages, 1):
                with contextlib.suppress(sync_api.Error):
                    page.screenshot(path=str(test_output / f"failed-{n}.png"), full_page=True)
        for context in contexts:
            context.close()


def _failed(request: pytest.FixtureRequest) -> bool:
    report = getattr(request.node, "report_call", None)  # tests/conftest.py keeps it
    return report is not None and report.failed


Shot = Callable[[sync_api.Page, str], Path]


@pytest.fixture
def shot(test_output: Path) -> Shot:
    """``shot(page, "name")`` saves test-output/<test>/<nn>-name.png and returns its path."""
    count = 0

    def take(page: sync_api.Page, name: str) -> Path:
        nonlocal count
        count += 1
        path = test_output / f"{count:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path

    return take


_MODULE_PLATFORMS: list[LivePlatform] = []  # those of module_platform, while they run


def module_platform(extra_env: dict[str, str] | None = None) -> Any:
    """A module-scoped ``live_platform`` fixture: one platform (daphne, a Celery worker with
    beat, Redis) for every test of the module, on the test database; each test still starts
    from an empty database. In a module: ``live_platform = module_platform()``."""

    @pytest.fixture(scope="module")
    def live_platform(django_db_setup: None, django_db_blocker: Any) -> Iterator[LivePlatform]:
        from django.db import connection

        with django_db_blocker.unblock():
            if connection.vendor != "postgresql":
                pytest.skip("the platform's processes need the PostgreSQL test database")
            url = database_url_of(connection.settings_dict)
        platform = LivePlatform(url, extra_env=extra_env or {})
        platform.start()
        _MODULE_PLATFORMS.append(platform)
        try:
            yield platform
        finally:
            _MODULE_PLATFORMS.remove(platform)
            platform.stop()
            shutil.rmtree(platform.directory, ignore_errors=True)

    return live_platform


@pytest.fixture(autouse=True)
def _quiet_live_platform(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every test on a live platform gets ``quiet_platform``: a module-scoped platform keeps
    running while the test's database is flushed (a function-scoped one has stopped by then,
    and the wait below returns at once). When the test failed, a module-scoped platform's
    logs are printed (in the failure's report)."""
    if "live_platform" not in request.fixturenames:
        yield
        return
    request.getfixturevalue("quiet_platform")
    platform = request.getfixturevalue("live_platform")
    yield
    if _failed(request) and platform in _MODULE_PLATFORMS:
        # A function-scoped platform prints its logs itself (tests/conftest.py).
        print(platform.logs())


@pytest.fixture
def quiet_platform(transactional_db: None) -> Iterator[None]:
    """A live platform's bots, timers and sweeper may still be in a transaction when the test
    ends, and the flush's TRUNCATE can deadlock with it (PostgreSQL then aborts the flush).
    After the test: wait (up to 10 s) until no other connection to the test database is busy,
    and let the flush retry a deadlock (the other transaction has finished by then).
    Requested for every test that uses ``live_platform`` (see ``_quiet_live_platform``)."""
    import time as _time

    from django.db import OperationalError, connection

    ops = connection.ops
    if not getattr(ops, "_flush_retries_deadlocks", False):
        flush = ops.execute_sql_flush

        def execute_sql_flush(sql_list: Any) -> Any:
            for attempt in range(10):
                try:
                    return flush(sql_list)
                except OperationalError as exc:
                    if "deadlock" not in str(exc) or attempt == 9:
                        raise
                    _time.sleep(0.5)
            return None

        ops.execute_sql_flush = execute_sql_flush  # type: ignore[method-assign]
        ops._flush_retries_deadlocks = True  # type: ignore[attr-defined]
    yield
    deadline = _time.monotonic() + 10
    while _time.monotonic() < deadline:
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid() AND state <> 'idle'"
            )
            (busy,) = cursor.fetchone()
        if busy == 0:
            return
        _time.sleep(0.1)

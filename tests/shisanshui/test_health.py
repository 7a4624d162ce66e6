"""/healthz (database, Redis, Celery), /livez, and the request id every response carries."""

from collections.abc import Iterator
from typing import Any

import pytest
from django.test import Client

from shisanshui import health


@pytest.fixture(autouse=True)
def _fresh_celery_answer() -> Iterator[None]:
    health.forget_celery_answer()
    yield
    health.forget_celery_answer()


def _checks(monkeypatch: pytest.MonkeyPatch, **results: str) -> None:
    for name, result in results.items():
        monkeypatch.setitem(health.CHECKS, name, lambda result=result: result)


def test_healthz_is_200_when_every_check_is_ok(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _checks(monkeypatch, database="ok", redis="ok", celery="ok")

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json() == {
        "status": "ok",
        "checks": {"database": "ok", "redis": "ok", "celery": "ok"},
    }
    assert "no-cache" in response["Cache-Control"]


def test_healthz_is_503_and_names_what_failed(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _checks(
        monkeypatch, database="ok", redis="ConnectionError: refused", celery="no worker answered"
    )

    response = client.get("/healthz")

    assert response.status_code == 503
    body = response.json()
    assert body["status"] == "fail"
    assert body["failed"] == ["celery", "redis"]
    assert body["checks"]["redis"] == "ConnectionError: refused"


def test_healthz_is_503_when_the_database_fails(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _checks(monkeypatch, database="OperationalError: gone", redis="ok", celery="ok")

    response = client.get("/healthz")

    assert response.status_code == 503
    assert response.json()["failed"] == ["database"]


def test_not_configured_redis_and_celery_count_as_healthy(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _checks(monkeypatch, database="ok", redis="not configured", celery="not configured")

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json()["checks"]["redis"] == "not configured"


def test_livez_and_quick_healthz_check_only_the_process(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    _checks(monkeypatch, database="down", redis="down", celery="down")

    for url in ("/livez", "/healthz?quick=1"):
        response = client.get(url)
        assert response.status_code == 200, url
        assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_the_database_check_queries_the_database() -> None:
    assert health.check_database() == "ok"


def test_redis_and_celery_are_not_configured_without_redis_url(
    settings: Any,
) -> None:
    settings.REDIS_URL = ""

    assert health.check_redis() == "not configured"
    assert health.check_celery() == "not configured"


def test_the_redis_check_reports_a_refused_connection(
    settings: Any,
) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    result = health.check_redis()

    assert result not in health.HEALTHY
    assert result == "ConnectionError"  # the kind only: no host or port on a public page


def test_a_workers_answer_is_cached_for_a_few_seconds(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"
    pings: list[str] = []
    monkeypatch.setattr(health, "_ping_workers", lambda: pings.append("ping") or "ok")

    assert [health.check_celery() for _ in range(5)] == ["ok"] * 5
    assert pings == ["ping"]

    health.forget_celery_answer()
    assert health.check_celery() == "ok"
    assert pings == ["ping", "ping"]


def test_a_silent_worker_is_asked_again_soon(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:6379/0"
    monkeypatch.setattr(health, "_ping_workers", lambda: "no worker answered")
    health.check_celery()
    assert health._celery_answer is not None
    expiry, result = health._celery_answer

    assert result == "no worker answered"
    assert expiry - health.time.monotonic() <= health.CELERY_FAILURE_CACHE_SECONDS


def test_every_response_carries_a_request_id(client: Client) -> None:
    first = client.get("/livez")["X-Request-ID"]
    second = client.get("/livez")["X-Request-ID"]

    assert len(first) == 32
    assert first != second


def test_a_plain_incoming_request_id_is_kept_and_a_strange_one_replaced(client: Client) -> None:
    kept = client.get("/livez", HTTP_X_REQUEST_ID="lb-1234.abc")["X-Request-ID"]
    replaced = client.get("/livez", HTTP_X_REQUEST_ID="bad id\n<script>")["X-Request-ID"]

    assert kept == "lb-1234.abc"
    assert replaced != "bad id\n<script>"
    assert len(replaced) == 32

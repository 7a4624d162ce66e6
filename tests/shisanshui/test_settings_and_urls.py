"""The project shell: settings, pages, health check, API schema and the ASGI entry point."""

import pytest
from django.conf import settings
from django.contrib.auth import get_user_model
from django.test import Client

from accounts.models import User


def test_home_page_renders_in_english(client: Client) -> None:
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="en")

    assert response.status_code == 200
    body = response.content.decode()
    assert '<html lang="en">' in body
    assert "十三水 Shisanshui" in body
    assert "The platform is under construction." in body
    assert 'href="/admin/"' in body
    assert 'href="/api/docs/"' in body


def test_home_page_renders_in_simplified_chinese(client: Client) -> None:
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-Hans")

    assert response.status_code == 200
    body = response.content.decode()
    assert '<html lang="zh-hans">' in body
    assert "十三水 Shisanshui" in body
    assert "平台正在建设中。" in body
    assert "The platform is under construction." not in body


@pytest.mark.django_db
def test_set_language_switches_the_home_page_to_chinese(client: Client) -> None:
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})

    assert "平台正在建设中。" in client.get("/").content.decode()


@pytest.mark.django_db
def test_healthz_reports_ok_after_querying_the_database(
    client: Client, monkeypatch: pytest.MonkeyPatch
) -> None:
    from shisanshui import health

    # No Celery worker runs beside the in-process tests (tests/shisanshui/test_health.py).
    monkeypatch.setitem(health.CHECKS, "celery", lambda: health.OK)

    response = client.get("/healthz")

    assert response.status_code == 200
    assert response.json()["status"] == "ok"
    assert response.json()["checks"]["database"] == "ok"
    assert "no-cache" in response["Cache-Control"]


@pytest.mark.django_db
def test_api_schema_is_served_to_an_authenticated_user(client: Client) -> None:
    user = User.objects.create_user(username="ada", password="pw")
    client.force_login(user)

    response = client.get("/api/schema/")

    assert response.status_code == 200
    assert b"openapi:" in response.content


@pytest.mark.django_db
def test_api_docs_load_swagger_ui_from_this_server_not_a_cdn(client: Client) -> None:
    response = client.get("/api/docs/")

    assert response.status_code == 200
    body = response.content.decode()
    assert "/static/drf_spectacular_sidecar/swagger-ui-dist/" in body
    assert "cdn" not in body.lower()


def test_the_user_model_is_accounts_user() -> None:
    assert settings.AUTH_USER_MODEL == "accounts.User"
    assert get_user_model() is User


def test_asgi_application_routes_http_and_websocket() -> None:
    from channels.routing import ProtocolTypeRouter

    from shisanshui.asgi import application

    assert isinstance(application, ProtocolTypeRouter)
    assert set(application.application_mapping) == {"http", "websocket"}

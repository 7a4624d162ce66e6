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
    assert "under construction" not in body
    assert "Thirteen cards, three rows, one showdown." in body
    # Play now, for a visitor: one tap plays as a guest at a table with bots; sign-up is beside.
    assert '<form method="post" action="/lobby/play/guest/">' in body
    assert 'href="/accounts/signup/"' in body
    assert "Play now against bots" in body
    assert 'href="/accounts/login/?next=/lobby/"' in body  # a returning player: the lobby
    assert 'href="/admin/"' not in body  # a visitor has no use for it
    assert "/static/css/home.css" in body


def test_home_page_renders_in_simplified_chinese(client: Client) -> None:
    response = client.get("/", HTTP_ACCEPT_LANGUAGE="zh-Hans")

    assert response.status_code == 200
    body = response.content.decode()
    assert '<html lang="zh-hans">' in body
    assert "十三水 Shisanshui" in body
    assert "十三张牌，摆成三墩，一决高下。" in body
    assert "马上开玩（与机器人对战）" in body
    assert "Play now against bots" not in body


@pytest.mark.django_db
def test_set_language_switches_the_home_page_to_chinese(client: Client) -> None:
    client.post("/i18n/setlang/", {"language": "zh-hans", "next": "/"})

    assert "十三张牌，摆成三墩，一决高下。" in client.get("/").content.decode()


@pytest.mark.django_db
def test_home_page_plays_now_for_a_logged_in_player(client: Client) -> None:
    client.force_login(User.objects.create_user(username="ada", password="pw"))

    body = client.get("/", HTTP_ACCEPT_LANGUAGE="en").content.decode()

    assert '<form method="post" action="/lobby/play/">' in body
    assert 'name="csrfmiddlewaretoken"' in body and 'data-testid="home-play-now"' in body
    assert 'href="/lobby/"' in body and 'href="/api/docs/"' in body


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

"""The installable app's parts served by Django (shisanshui/pwa.py): the web app manifest, the
service worker at /sw.js and the offline page — each cheap (no query, the same bytes for
everybody), the worker's cache list holding only public URLs, its version following the
static files' manifest in production. And the icons: PNGs of the committed script's drawing.
(Chromium's own verdict, the worker at work and the offline page shown: tests/browser/
test_app_browser.py.)"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import struct
from pathlib import Path
from typing import Any

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client

from accounts.models import User
from shisanshui import pwa
from tests.shisanshui.test_deploy import PRODUCTION, _manage

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def worker_config(body: str) -> dict[str, Any]:
    match = re.search(r"^const CONFIG = (\{.*\});$", body, re.MULTILINE)
    assert match, body[:2000]
    config: dict[str, Any] = json.loads(match.group(1))
    return config


@pytest.fixture
def player(django_user_model: type[User]) -> User:
    return django_user_model.objects.create_user(username="pwa_player_zed", password="x")


def test_the_manifest_names_the_app_its_start_colours_and_icons(
    client: Client, django_assert_num_queries: Any
) -> None:
    with django_assert_num_queries(0):
        response = client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert manifest["name"] == "十三水 Shisanshui" and manifest["short_name"] == "十三水"
    assert manifest["start_url"] == "/" and manifest["scope"] == "/"
    assert manifest["display"] == "standalone"
    # The site's colours: the paper of site.css, the favicon's felt green.
    assert manifest["background_color"] == "#faf8f3"
    assert "--paper: #faf8f3" in (ROOT / "static/css/site.css").read_text()
    assert manifest["theme_color"] == "#0f5132"
    assert 'fill="#0f5132"' in (ROOT / "static/favicon.svg").read_text()
    icons = {(icon["sizes"], icon["purpose"]): icon for icon in manifest["icons"]}
    assert set(icons) == {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")}
    for (sizes, _purpose), icon in icons.items():
        assert icon["type"] == "image/png"
        name = icon["src"].removeprefix(static(""))
        found = finders.find(name)
        assert isinstance(found, str), icon
        width, height = png_size(Path(found).read_bytes())
        assert f"{width}x{height}" == sizes


def test_the_worker_is_served_at_the_root_uncached_with_its_scope_allowed(
    client: Client, player: User, django_assert_num_queries: Any
) -> None:
    client.force_login(player)
    with django_assert_num_queries(0):
        response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript; charset=utf-8"
    assert response["Service-Worker-Allowed"] == "/"
    assert "no-cache" in response["Cache-Control"] and "no-store" in response["Cache-Control"]
    assert client.post("/sw.js").status_code == 405


def test_the_worker_caches_only_the_offline_page_and_static_files() -> None:
    body = Client().get("/sw.js").content.decode()
    config = worker_config(body)
    assert config["offline_url"] == "/offline/"
    assert config["static_url"] == "/static/"
    assert config["version"] == pwa.static_version()
    assert config["hashed"] is False  # the test settings' storage: names without hashes
    shell = config["shell"]
    assert shell[0] == "/offline/"
    assert all(url.startswith(static("")) for url in shell[1:]), shell
    for name in ["css/site.css", "js/pwa.js", "js/offline.js", "app/icon-192.png"]:
        assert static(name) in shell
    # Every URL it keeps exists.
    client = Client()
    for url in shell[1:]:
        assert finders.find(url.removeprefix(static(""))), url
    assert client.get(shell[0]).status_code == 200
    # The handler answers navigations and /static/ only; nothing else is ever put in a cache.
    assert body.count("cache.put(") == 2
    assert "cache.addAll(CONFIG.shell" in body
    assert 'request.method !== "GET"' in body


def test_the_offline_page_is_the_same_for_everybody_in_both_languages(
    client: Client, player: User, django_assert_num_queries: Any
) -> None:
    anonymous = Client().get("/offline/", HTTP_ACCEPT_LANGUAGE="zh-hans")
    client.force_login(player)
    with django_assert_num_queries(0):
        response = client.get("/offline/")
    assert response.status_code == 200
    assert response.content == anonymous.content
    page = response.content.decode()
    assert 'data-lang="en"' in page and "You are offline" in page
    assert 'data-lang="zh-hans"' in page and "网络已断开" in page
    assert "csrfmiddlewaretoken" not in page and player.username not in page
    assert static("css/site.css") in page and static("js/offline.js") in page
    assert "<script>" not in page  # the policy allows no inline script


@pytest.mark.parametrize("url", ["/", "/accounts/login/"])
def test_the_site_pages_link_the_manifest_and_register_the_worker(client: Client, url: str) -> None:
    page = client.get(url).content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert '<meta name="theme-color" content="#0f5132">' in page
    assert f'<link rel="apple-touch-icon" href="{static("app/apple-touch-icon.png")}">' in page
    assert f'<script src="{static("js/pwa.js")}" data-worker="/sw.js" defer></script>' in page


def test_the_icons_are_the_scripts_drawing() -> None:
    spec = importlib.util.spec_from_file_location("make_icons", ROOT / "scripts/make-app-icons.py")
    assert spec and spec.loader
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    for name, (size, full_bleed, scale) in script.ICONS.items():
        committed = (ROOT / "static/app" / name).read_bytes()
        assert png_size(committed) == (size, size)
        assert script.draw(size, full_bleed=full_bleed, scale=scale).png() == committed, name


def test_in_production_the_worker_is_versioned_by_the_static_manifest(tmp_path: Path) -> None:
    """After collectstatic the worker's version comes from the manifest's hash, its cache list
    names the hashed files, and it serves them from its cache first."""
    done = _manage("collectstatic", "--noinput", **PRODUCTION, STATIC_ROOT=str(tmp_path))
    assert done.returncode == 0, done.stderr
    manifest = json.loads((tmp_path / "staticfiles.json").read_text())
    code = "from shisanshui import pwa; print(pwa._service_worker_body().decode())"
    done = _manage("shell", "--no-imports", "-c", code, **PRODUCTION, STATIC_ROOT=str(tmp_path))
    assert done.returncode == 0, done.stderr
    config = worker_config(done.stdout)
    assert config["hashed"] is True
    assert config["version"] == hashlib.sha256(manifest["hash"].encode()).hexdigest()[:16]
    hashed_icon = manifest["paths"]["app/icon-192.png"]
    assert hashed_icon != "app/icon-192.png"
    assert f"/static/{hashed_icon}" in config["shell"]
    for url in config["shell"][1:]:
        assert (tmp_path / url.removeprefix("/static/")).is_file(), url

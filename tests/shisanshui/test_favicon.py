"""The site's favicon (static/favicon.svg): linked from the site's pages and the admin's, served
as a static file, and /favicon.ico leads to it."""

from __future__ import annotations

import re
from pathlib import Path
from xml.etree import ElementTree

import pytest
from django.contrib.staticfiles import finders
from django.templatetags.static import static
from django.test import Client

from accounts.models import User

pytestmark = pytest.mark.django_db

ICON = '<link rel="icon" href="{}" type="image/svg+xml">'


def test_the_icon_is_a_small_svg_of_our_own() -> None:
    path = finders.find("favicon.svg")
    assert path is not None
    text = Path(path).read_text(encoding="utf-8")
    root = ElementTree.fromstring(text)
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 64 64"
    assert len(text) < 2000
    assert not re.search(r"https?://(?!www\.w3\.org/2000/svg)", text)  # nothing fetched


@pytest.mark.parametrize("url", ["/", "/accounts/login/", "/accounts/signup/"])
def test_the_site_pages_link_the_icon(client: Client, url: str) -> None:
    assert ICON.format(static("favicon.svg")) in client.get(url).content.decode()


@pytest.mark.parametrize(
    "url",
    ["/admin/", "/admin/games/round/", "/admin/accounts/transaction/", "/admin/login/"],
)
def test_the_admin_pages_link_the_icon(admin_user: User, url: str) -> None:
    client = Client()
    if url != "/admin/login/":
        client.force_login(admin_user)
    response = client.get(url)
    assert response.status_code == 200
    assert ICON.format(static("favicon.svg")) in response.content.decode()


def test_favicon_ico_leads_to_the_icon(client: Client) -> None:
    response = client.get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == static("favicon.svg")

"""The Content-Security-Policy header (django-csp) and pages that need nothing inline.

tests/browser/test_csp_browser.py checks in Chromium that no page violates the policy; these
check the header and that the HTML holds no inline script, style or handler without the nonce.
"""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.models import User

pytestmark = pytest.mark.django_db

DIRECTIVES = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "img-src": "'self' data:",
    "font-src": "'self'",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'self'",
    "form-action": "'self'",
    "frame-ancestors": "'none'",
}

_SCRIPT = re.compile(r"<script\b([^>]*)>", re.IGNORECASE)
_STYLE = re.compile(r"<style\b([^>]*)>", re.IGNORECASE)
_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
_STYLE_ATTRIBUTE = re.compile(r"<[^>]+\sstyle\s*=", re.IGNORECASE)


def _policy(response) -> dict[str, str]:
    header = response["Content-Security-Policy"]
    return {
        name: value.strip()
        for name, _space, value in (part.strip().partition(" ") for part in header.split(";"))
    }


def _inline_problems(html: str, nonce: str | None) -> list[str]:
    problems = []
    for attributes in _SCRIPT.findall(html):
        if "src=" in attributes or 'type="application/json"' in attributes:
            continue
        if nonce is None or f'nonce="{nonce}"' not in attributes:
            problems.append(f"<script{attributes}>")
    for attributes in _STYLE.findall(html):
        if nonce is None or f'nonce="{nonce}"' not in attributes:
            problems.append(f"<style{attributes}>")
    problems += _HANDLER.findall(html) + _STYLE_ATTRIBUTE.findall(html)
    if "javascript:" in html.lower():
        problems.append("javascript: URL")
    return problems


def test_the_policy_of_a_page() -> None:
    policy = _policy(Client().get("/"))

    assert policy == DIRECTIVES
    header = Client().get("/accounts/login/")["Content-Security-Policy"]
    assert "unsafe-inline" not in header and "unsafe-eval" not in header
    # Without an inline element the page carries no nonce.
    assert "nonce-" not in header


@pytest.mark.parametrize(
    "path",
    [
        "/",
        "/accounts/login/",
        "/accounts/signup/",
        "/accounts/profile/",
        "/accounts/password/",
        "/accounts/password/reset/",
        "/accounts/password/reset/sent/",
        "/accounts/reset/MQ/not-a-token/",
        "/accounts/reset/done/",
    ],
)
def test_the_site_pages_have_nothing_inline(path: str) -> None:
    client = Client()
    client.force_login(User.objects.create_user(username="reader", password="x-Pass-1234"))
    if path in ("/accounts/signup/", "/accounts/login/"):
        client = Client()  # both send a logged-in user on to the profile

    response = client.get(path)

    assert response.status_code == 200
    assert _inline_problems(response.content.decode(), None) == []


def test_the_lobby_page_has_nothing_inline() -> None:
    client = Client()
    client.force_login(User.objects.create_user(username="lobbyist", password="x-Pass-1234"))

    response = client.get("/lobby/")

    assert response.status_code == 200
    assert _inline_problems(response.content.decode(), None) == []


def test_the_api_docs_inline_init_script_and_style_carry_the_nonce() -> None:
    response = Client().get("/api/docs/")

    assert response.status_code == 200
    nonce = re.search(r"'nonce-([^']+)'", _policy(response)["script-src"])
    assert nonce is not None
    assert f"'nonce-{nonce.group(1)}'" in _policy(response)["style-src"]
    html = response.content.decode()
    assert html.count(f'nonce="{nonce.group(1)}"') == 2
    assert _inline_problems(html, nonce.group(1)) == []
    # A fresh nonce per response.
    assert nonce.group(1) not in Client().get("/api/docs/")["Content-Security-Policy"]

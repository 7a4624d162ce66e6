"""The installable app: the web app manifest, the service worker (/sw.js) and the offline page.

None of them reads the database or the session: they are the same for every visitor, built
once per process, so a browser may ask for them as often as it likes. The service worker caches
only public things — the static files and the offline page — and never a page, an API answer or
a socket (the navigation falls back to the offline page only when the server cannot be
reached); its caches are named after the static files' version, so a deploy (new hashed names
in the manifest of ManifestStaticFilesStorage) installs a new worker that drops the old caches.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.contrib.staticfiles import finders
from django.contrib.staticfiles.storage import staticfiles_storage
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.templatetags.static import static
from django.urls import reverse
from django.utils import translation
from django.views.decorators.cache import cache_control, never_cache
from django.views.decorators.http import require_safe

# The site's colours (static/css/site.css): the paper behind the pages, the felt green of the
# icon for the browser's bar and the splash screen's icon.
THEME_COLOR = "#0f5132"
BACKGROUND_COLOR = "#faf8f3"

# What the worker caches when it installs: what the offline page needs, and the icons.
SHELL_STATIC = (
    "css/site.css",
    "js/site-menu.js",
    "js/pwa.js",
    "js/offline.js",
    "favicon.svg",
    "app/icon-192.png",
    "app/icon-512.png",
    "app/icon-maskable-512.png",
    "app/apple-touch-icon.png",
)

ICONS = (
    ("app/icon-192.png", "192x192", "any"),
    ("app/icon-512.png", "512x512", "any"),
    ("app/icon-maskable-512.png", "512x512", "maskable"),
)


def hashed_static() -> bool:
    """Whether the static files have content-hashed names (ManifestStaticFilesStorage):
    then a URL never changes content, and the worker may serve it from its cache first."""
    return hasattr(staticfiles_storage, "manifest_hash")


@lru_cache(maxsize=1)
def static_version() -> str:
    """The static files' version: the hash of the storage's manifest after `collectstatic`;
    without hashed names (development, the live tests) a hash of the shell's files."""
    digest = hashlib.sha256()
    manifest_hash = getattr(staticfiles_storage, "manifest_hash", "")
    if manifest_hash:
        digest.update(manifest_hash.encode())
    else:
        for name in SHELL_STATIC:
            digest.update(name.encode() + b"\0")
            found = finders.find(name)
            if isinstance(found, str):
                with open(found, "rb") as file:
                    digest.update(file.read())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def _manifest_body() -> bytes:
    manifest: dict[str, Any] = {
        "id": "/",
        "name": "十三水 Shisanshui",
        "short_name": "十三水",
        "description": "Shisanshui (十三水), the thirteen-card game: play at a table with "
        "friends or bots.",
        "lang": "zh-Hans",
        "dir": "ltr",
        "start_url": reverse("home"),
        "scope": "/",
        "display": "standalone",
        "orientation": "any",
        "theme_color": THEME_COLOR,
        "background_color": BACKGROUND_COLOR,
        "categories": ["games"],
        "icons": [
            {"src": static(name), "sizes": sizes, "type": "image/png", "purpose": purpose}
            for name, sizes, purpose in ICONS
        ],
    }
    return json.dumps(manifest, ensure_ascii=False, indent=2).encode()


@require_safe
@cache_control(no_cache=True)
def manifest(request: HttpRequest) -> HttpResponse:
    """/manifest.webmanifest: the web app manifest (name, start page, colours, icons)."""
    return HttpResponse(_manifest_body(), content_type="application/manifest+json")


@lru_cache(maxsize=1)
def _service_worker_body() -> bytes:
    config = {
        "version": static_version(),
        "static_url": settings.STATIC_URL,
        "hashed": hashed_static(),
        "offline_url": reverse("offline"),
        "shell": [reverse("offline"), *(static(name) for name in SHELL_STATIC)],
    }
    return render_to_string(
        "pwa/sw.js", {"config": json.dumps(config, separators=(",", ":"))}
    ).encode()


@never_cache
@require_safe
def service_worker(request: HttpRequest) -> HttpResponse:
    """/sw.js: the service worker, at the root so that its scope is the whole site. Never
    cached by the browser's HTTP cache, so that a deploy's new version is seen at once."""
    response = HttpResponse(_service_worker_body(), content_type="text/javascript; charset=utf-8")
    response["Service-Worker-Allowed"] = "/"
    return response


@lru_cache(maxsize=1)
def _offline_body() -> bytes:
    sections = []
    for code, _name in settings.LANGUAGES:
        with translation.override(code):
            sections.append(render_to_string("pwa/offline_section.html", {"lang": code}))
    context = {
        "sections": sections,
        "LANGUAGE_CODE": settings.LANGUAGE_CODE,
        "language_cookie": settings.LANGUAGE_COOKIE_NAME,
    }
    return render_to_string("pwa/offline.html", context).encode()


@require_safe
@cache_control(no_cache=True)
def offline(request: HttpRequest) -> HttpResponse:
    """/offline/: what the service worker shows when the server cannot be reached. The same
    for everybody (no name, no balance, no form): one section per language, and
    static/js/offline.js shows the visitor's (the site's language cookie, else the browser's)."""
    return HttpResponse(_offline_body())

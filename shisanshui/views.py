"""Project-level pages: the home page and the health checks."""

import logging

from django.http import HttpRequest, HttpResponse, HttpResponseRedirect, JsonResponse
from django.shortcuts import render
from django.templatetags.static import static
from django.urls import reverse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from shisanshui import health

logger = logging.getLogger(__name__)


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The front page: what the game is, and Play now (for a visitor: sign up — or log in from
    there — then straight on to a table with bots, /lobby/play/); Log in leads to the lobby.
    No query for a visitor."""
    return render(
        request,
        "home.html",
        {"play_url": reverse("lobby:play"), "lobby_url": reverse("lobby:index")},
    )


@require_safe
def favicon(request: HttpRequest) -> HttpResponseRedirect:
    """/favicon.ico, which browsers ask for where a page names no icon (a JSON response, the
    API): the site's icon, static/favicon.svg, which every page links."""
    return HttpResponseRedirect(static("favicon.svg"))


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Readiness: 200 when the database, Redis and a Celery worker answer, 503 naming what
    failed otherwise. ``?quick=1`` checks only this process, like /livez.
    """
    if request.GET.get("quick"):
        return livez(request)
    checks = health.run_checks()
    failed = sorted(name for name, result in checks.items() if result not in health.HEALTHY)
    body = {"status": "fail" if failed else "ok", "checks": checks}
    if not failed:
        return JsonResponse(body)
    body["failed"] = failed
    logger.warning("health check failed: %s", ", ".join(failed), extra={"checks": checks})
    response = JsonResponse(body, status=503)
    # Logged just above as a warning; django.request would add an ERROR per probe.
    response._has_been_logged = True  # type: ignore[attr-defined]
    return response


@never_cache
@require_safe
def livez(request: HttpRequest) -> JsonResponse:
    """Liveness: this process answers HTTP; touches neither the database nor Redis."""
    return JsonResponse({"status": "ok"})

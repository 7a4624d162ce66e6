"""Project-level pages: the home page and the health check."""

from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import render
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe


@require_safe
def home(request: HttpRequest) -> HttpResponse:
    """The landing page."""
    return render(request, "home.html")


@never_cache
@require_safe
def healthz(request: HttpRequest) -> JsonResponse:
    """Ok only when the database answers; an error here is a 500 the load balancer sees."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return JsonResponse({"status": "ok"})

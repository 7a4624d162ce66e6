"""The project's URL configuration."""

from django.contrib import admin
from django.contrib.staticfiles.urls import staticfiles_urlpatterns
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from shisanshui import pwa, views

urlpatterns = [
    path("", views.home, name="home"),
    path("healthz", views.healthz, name="healthz"),
    path("livez", views.livez, name="livez"),
    path("favicon.ico", views.favicon, name="favicon"),
    # The installable app: at the root, so that the service worker's scope is the whole site.
    path("manifest.webmanifest", pwa.manifest, name="web-manifest"),
    path("sw.js", pwa.service_worker, name="service-worker"),
    path("offline/", pwa.offline, name="offline"),
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("admin/", admin.site.urls),
    path("accounts/", include("accounts.urls")),
    path("lobby/", include("lobby.urls")),
    path("games/", include("games.urls")),
    path("api/", include("accounts.api_urls")),
    path("api/lobby/", include("lobby.api_urls")),
    path("api/games/", include("games.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
]

# With DEBUG on, serve static files here too: daphne, unlike runserver, does not.
# (An empty list when DEBUG is off; production serves them with WhiteNoise.)
urlpatterns += staticfiles_urlpatterns()

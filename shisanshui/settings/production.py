"""Settings for production: secrets and hosts from the environment, HTTPS only.

Run several daphne processes behind a load balancer that terminates TLS and sets
X-Forwarded-Proto, with DATABASE_URL (PostgreSQL) and REDIS_URL set so that the channel layer,
Celery and the state of the tables are shared; see docs/run-and-deploy.md.
`DJANGO_SETTINGS_MODULE=shisanshui.settings.production manage.py check --deploy` is clean.
"""

from django.core.exceptions import ImproperlyConfigured

from shisanshui.logs import build_logging
from shisanshui.settings.base import *  # noqa: F403
from shisanshui.settings.base import DATABASES, LOG_LEVEL, MIDDLEWARE, REDIS_URL
from shisanshui.settings.env import env_bool, env_int, env_list, env_str


def _env_either(*names: str) -> str:
    """The first of these variables that is set (DJANGO_SECRET_KEY or SECRET_KEY ...)."""
    for name in names:
        value = env_str(name)
        if value:
            return value
    raise ImproperlyConfigured(f"The environment variable {names[0]} must be set.")


SECRET_KEY = _env_either("DJANGO_SECRET_KEY", "SECRET_KEY")
DEBUG = False
ALLOWED_HOSTS = [
    host.strip() for host in _env_either("DJANGO_ALLOWED_HOSTS", "ALLOWED_HOSTS").split(",")
]
ALLOWED_HOSTS = [host for host in ALLOWED_HOSTS if host]
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("The environment variable DJANGO_ALLOWED_HOSTS must be set.")

if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3" and not env_bool(
    "ALLOW_SQLITE", default=False
):
    raise ImproperlyConfigured("Production needs DATABASE_URL (PostgreSQL).")
if not REDIS_URL:
    raise ImproperlyConfigured(
        "Production needs REDIS_URL: the channel layer and Celery's broker are shared."
    )

# Logs: one JSON object per line unless LOG_FORMAT says otherwise.
LOG_FORMAT = env_str("LOG_FORMAT", "json")
LOGGING = build_logging(log_format=LOG_FORMAT, level=LOG_LEVEL)
LOG_REQUESTS = env_bool("LOG_REQUESTS", default=True)

# HTTPS

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
# The load balancer probes /healthz and /livez over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^livez$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 60 * 60 * 24 * 365)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
SESSION_COOKIE_HTTPONLY = True
SECURE_REFERRER_POLICY = "same-origin"
X_FRAME_OPTIONS = "DENY"
# The public origins (https://play.example.com); by default https:// + each allowed host.
CSRF_TRUSTED_ORIGINS = env_list(
    "CSRF_TRUSTED_ORIGINS",
    [f"https://{host.lstrip('.')}" for host in ALLOWED_HOSTS if host != "*"],
)
# The pages that may open the WebSockets: exactly these origins (scheme, host and port).
WEBSOCKET_ALLOWED_ORIGINS = env_list("WEBSOCKET_ALLOWED_ORIGINS", CSRF_TRUSTED_ORIGINS)

# Static files: served by WhiteNoise from STATIC_ROOT (after `collectstatic`).

_AFTER_SECURITY = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [
    *MIDDLEWARE[:_AFTER_SECURITY],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *MIDDLEWARE[_AFTER_SECURITY:],
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "shisanshui.staticfiles.StaticFilesStorage"},
}

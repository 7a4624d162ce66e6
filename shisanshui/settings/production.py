"""Settings for production: secrets and hosts from the environment, HTTPS only.

Run several daphne processes behind a load balancer that terminates TLS and sets
X-Forwarded-Proto, with REDIS_URL set so the channel layer and Celery are shared.
"""

from django.core.exceptions import ImproperlyConfigured

from shisanshui.settings.base import *  # noqa: F403
from shisanshui.settings.base import MIDDLEWARE
from shisanshui.settings.env import env_bool, env_list, env_required

SECRET_KEY = env_required("SECRET_KEY")
DEBUG = False
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS")
if not ALLOWED_HOSTS:
    raise ImproperlyConfigured("The environment variable ALLOWED_HOSTS must be set.")

# HTTPS

SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", default=True)
# The load balancer probes /healthz over plain HTTP.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
SECURE_HSTS_SECONDS = 60 * 60 * 24 * 365
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SECURE_CONTENT_TYPE_NOSNIFF = True
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")

# Static files: served by WhiteNoise from STATIC_ROOT (after `collectstatic`).

_AFTER_SECURITY = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [
    *MIDDLEWARE[:_AFTER_SECURITY],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *MIDDLEWARE[_AFTER_SECURITY:],
]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

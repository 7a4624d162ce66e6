"""Settings for a developer's machine: debug on, loopback hosts, a fixed development key."""

from shisanshui.settings.base import *  # noqa: F403
from shisanshui.settings.env import env_bool, env_list, env_str

SECRET_KEY = env_str("SECRET_KEY", "django-insecure-local-development-key-not-for-production")
DEBUG = env_bool("DEBUG", default=True)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
# Password reset mails are printed by the web process (`make run` shows them in its output).
EMAIL_BACKEND = env_str("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")

# The pages of these origins may open the WebSockets: any CSRF_TRUSTED_ORIGINS given, and the
# loopback hosts on port 8000. `make run` sets WEBSOCKET_ALLOWED_ORIGINS for its HOST and PORT
# (scripts/run.py; not through PORT, which honcho gives every process a value of its own).
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS")
WEBSOCKET_ALLOWED_ORIGINS = env_list(
    "WEBSOCKET_ALLOWED_ORIGINS",
    [
        *CSRF_TRUSTED_ORIGINS,
        *(f"http://{host}:8000" for host in ALLOWED_HOSTS if host[:1] not in ("*", ".")),
    ],
)

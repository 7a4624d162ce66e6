"""Settings of the platform processes the live tests start (daphne, the Celery worker).

The test settings, plus what a real server needs that the in-process tests do not: static
files served by WhiteNoise straight from the finders (no collectstatic), so the browser gets
the page's scripts from the same daphne it talks to.
"""

from shisanshui.settings import base
from shisanshui.settings.test import *  # noqa: F403
from shisanshui.settings.test import CACHES, MIDDLEWARE

# Like production: the action-id replies live in Redis (REDIS_URL), so they outlive a web
# process restart.
CACHES = getattr(base, "CACHES", CACHES)

# Like production: connections are kept (the processes are killed before the database goes).
DATABASES["default"]["CONN_MAX_AGE"] = base.DATABASES["default"]["CONN_MAX_AGE"]  # noqa: F405

_SECURITY = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware") + 1
MIDDLEWARE = [
    *MIDDLEWARE[:_SECURITY],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *MIDDLEWARE[_SECURITY:],
]
WHITENOISE_USE_FINDERS = True
WHITENOISE_AUTOREFRESH = True

"""Settings for the test suite.

The database is DATABASE_URL when set (`make test` points it at the local PostgreSQL),
otherwise SQLite; the channel layer and Celery follow REDIS_URL as in base.
"""

import os
import tempfile
from pathlib import Path

from shisanshui.settings.base import *  # noqa: F403
from shisanshui.settings.env import env_list, env_str

SECRET_KEY = env_str("SECRET_KEY", "django-insecure-test-key")
DEBUG = False
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]
# The in-process WebSocket tests' origin; the live platform's daphne is given its own origins
# (http://127.0.0.1:<port>) by tests/live_server.py.
WEBSOCKET_ALLOWED_ORIGINS = env_list("WEBSOCKET_ALLOWED_ORIGINS", ["http://testserver"])

# Hashing passwords properly is slow by design; tests do not need it.
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

# The in-process tests run database calls on threads that nobody closes; kept connections
# would block dropping the test database (the live tests' processes keep theirs).
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# One cache per test process, never shared with another run through Redis (the platform
# processes of the live tests use Redis: tests/live_settings.py).
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"

# Each pytest-xdist worker is a test run of its own (pytest-django gives it its own database):
# its own namespace on the shared Redis server's pub/sub, and its own stats cache.
# TEST_RUN_ID tells apart test runs that share the Redis server at once (two checkouts).
XDIST_WORKER = os.environ.get("TEST_RUN_ID", "") + os.environ.get("PYTEST_XDIST_WORKER", "main")
if "CONFIG" in CHANNEL_LAYERS["default"]:  # noqa: F405
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"asgi-test-{XDIST_WORKER}"  # noqa: F405

# The admin's special-hand table: a small simulation, cached outside the work tree.
STATS_CACHE_DIR = Path(tempfile.gettempdir()) / f"shisanshui-test-stats-{XDIST_WORKER}"
SPECIAL_STATS_DEALS = 200
# The admin's row-bonus table: no thread left running between tests; when a test computes,
# the smallest sample (one chunk of deals), then one more chunk.
ROW_BONUS_STATS_IN_BACKGROUND = False
ROW_BONUS_SAMPLE_SECONDS = 0.0
ROW_BONUS_FULL_SECONDS = 0.0
ROW_BONUS_FULL_MAX_DEALS = 20

"""Settings for a developer's machine: debug on, loopback hosts, a fixed development key."""

from shisanshui.settings.base import *  # noqa: F403
from shisanshui.settings.env import env_bool, env_list, env_str

SECRET_KEY = env_str("SECRET_KEY", "django-insecure-local-development-key-not-for-production")
DEBUG = env_bool("DEBUG", default=True)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])

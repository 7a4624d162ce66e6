"""Django's admin autodiscovery imports this module: the rule configurations' admin and the
played rounds' audit admin register themselves on import."""

from games.history import admin as history_admin  # noqa: F401
from games.setup import admin as setup_admin  # noqa: F401

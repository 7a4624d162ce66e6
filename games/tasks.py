"""Celery's autodiscovery imports this module: the table's tasks and the played rounds'
reports (standings, collusion) register themselves on import."""

from games.history import tasks as history_tasks  # noqa: F401
from games.live import tasks as live_tasks  # noqa: F401

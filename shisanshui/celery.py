"""The Celery application, configured from the Django settings named CELERY_*.

Every worker process also runs the tables' deadline poller (``games.live.timers``) on a thread of
its own, started and stopped with the worker (:class:`TableDeadlines`, a worker bootstep).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from celery import Celery, bootsteps

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shisanshui.settings.local")

app = Celery("shisanshui")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


class TableDeadlines(bootsteps.StartStopStep):
    """The worker's deadline poller: started once Django is set up and the pool is up (a
    prefork pool's children are forked before the poller's thread and its connection exist),
    stopped (and its thread joined) when the worker stops; ``TABLE_DEADLINE_POLL_MS = 0``
    leaves it off."""

    requires = ("celery.worker.components:Pool",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.thread: threading.Thread | None = None
        self.stop_event: threading.Event | None = None

    def start(self, parent: Any) -> None:
        from django.conf import settings

        from games.live import timers

        interval_ms = int(getattr(settings, "TABLE_DEADLINE_POLL_MS", 200))
        if interval_ms > 0:
            self.thread, self.stop_event = timers.start(interval_ms / 1000)

    def stop(self, parent: Any) -> None:
        if self.stop_event is not None and self.thread is not None:
            self.stop_event.set()
            self.thread.join(timeout=10)
        self.thread = self.stop_event = None

    shutdown = stop


app.steps["worker"].add(TableDeadlines)

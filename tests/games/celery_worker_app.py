"""The Celery app of the integration tests' worker: the project's app, on a private queue.

``celery -A tests.games.celery_worker_app worker -Q <queue>`` with ``SHISANSHUI_TEST_QUEUE``
set to the same name: the timeouts the worker itself schedules (on commit, for the next
deadline) then go back to that queue, so a test run never shares tasks with another worker.
"""

import os

from shisanshui.celery import app

app.conf.task_default_queue = os.environ["SHISANSHUI_TEST_QUEUE"]

__all__ = ["app"]

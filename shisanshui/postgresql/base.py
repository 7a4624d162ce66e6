"""Django's PostgreSQL backend, with cheaper connection health checks.

With ``CONN_HEALTH_CHECKS`` Django runs ``SELECT 1`` before the first query of every request —
and every table action is a "request" (channels closes stale connections around each call to
the database). On the table's hot path that is one more round trip per action for a connection
used a moment ago. Here a connection used less than ``HEALTH_CHECK_IDLE_SECONDS`` ago is taken
as healthy; one idle for longer (a database restart, a dropped link) is still checked first.
A connection that failed while in use is closed by Django anyway (``errors_occurred``).
"""

from __future__ import annotations

import time

from django.db.backends.postgresql import base

HEALTH_CHECK_IDLE_SECONDS = 5.0


class DatabaseWrapper(base.DatabaseWrapper):
    _last_checked = 0.0

    def close_if_health_check_failed(self) -> None:
        if (
            self.connection is not None
            and self.health_check_enabled
            and not self.health_check_done
            and time.monotonic() - self._last_checked < HEALTH_CHECK_IDLE_SECONDS
        ):
            self.health_check_done = True
        super().close_if_health_check_failed()
        self._last_checked = time.monotonic()

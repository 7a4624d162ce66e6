"""Celery tasks of the accounts app (the beat's schedule: settings.CELERY_BEAT_SCHEDULE)."""

from celery import shared_task

from accounts.services import guests_idle_remove


@shared_task(
    name="accounts.tasks.guests_idle_remove",
    ignore_result=True,
    soft_time_limit=600,
    time_limit=720,
)
def remove_idle_guests() -> int:
    """Remove the guests idle for GUEST_IDLE_DAYS (`accounts.services.guests_idle_remove`):
    safe to run twice, or late — each guest is checked again under its lock."""
    return guests_idle_remove()

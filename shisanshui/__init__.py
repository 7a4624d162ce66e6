"""The Shisanshui platform's Django project."""

from shisanshui.celery import app as celery_app

__all__ = ["celery_app"]

"""The Celery application, configured from the Django settings named CELERY_*."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "shisanshui.settings.local")

app = Celery("shisanshui")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

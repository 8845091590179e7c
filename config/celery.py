"""Celery application. With no REDIS_URL the tasks run in-process (eager)."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("casebook")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

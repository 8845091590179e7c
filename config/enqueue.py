"""Sending a task by its name, so that a service never imports the tasks
module that calls it (tasks import services, never the reverse).

``app.tasks`` is the registry Celery fills by autodiscovering every app's
``tasks`` module the first time it is read: the task found is the very object
the tasks module defines, so its options (limits, retries) apply, and with no
broker (``CELERY_TASK_ALWAYS_EAGER``) it runs in-process as a direct call would.
"""

from __future__ import annotations

from typing import Any

from celery import Task

from config.celery import app


def task(name: str) -> Task:
    """The registered task called ``name`` (``"triage.tasks.analyze_snapshot"``)."""
    return app.tasks[name]


def enqueue(name: str, *args: Any, **options: Any) -> Any:
    """Queue the task called ``name`` with ``args``; ``options`` go to
    ``apply_async`` (``time_limit``, ``retry_policy``, ...)."""
    # a list, as Celery sends it (celery-types wants a tuple; Celery takes any sequence)
    return task(name).apply_async(args=list(args), **options)  # type: ignore[arg-type]

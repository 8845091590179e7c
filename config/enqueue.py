"""Sending a task by its name, so that a service never imports the tasks
module that calls it (tasks import services, never the reverse).

``app.tasks`` is the registry Celery fills with every app's ``tasks`` module
(autodiscovered; :func:`task` has them imported in a process that has not
imported them yet, such as the web server): the task found is the very object
the tasks module defines, so its options (limits, retries) apply, and with no
broker (``CELERY_TASK_ALWAYS_EAGER``) it runs in-process as a direct call would.
"""

from __future__ import annotations

from typing import Any

from celery import Task

from config.celery import app


def task(name: str) -> Task:
    """The registered task called ``name`` (``"triage.tasks.analyze_snapshot"``).
    A process that never imported the tasks modules (the web server) has Celery
    import them first, as a worker does when it starts."""
    if name not in app.tasks:
        app.loader.import_default_modules()
    return app.tasks[name]


def enqueue(name: str, *args: Any, **options: Any) -> Any:
    """Queue the task called ``name`` with ``args``; ``options`` go to
    ``apply_async`` (``time_limit``, ``retry_policy``, ...)."""
    # a list, as Celery sends it (celery-types wants a tuple; Celery takes any sequence)
    return task(name).apply_async(args=list(args), **options)  # type: ignore[arg-type]

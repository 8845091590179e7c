"""Thin Celery tasks of the accounts app."""

import socket

from celery import shared_task

from . import services


@shared_task(name="accounts.tasks.record_heartbeat")
def record_heartbeat(heartbeat_id: int | None = None) -> int:
    request = record_heartbeat.request
    # Eager runs happen inside the web process: say so rather than pose as a worker.
    worker = f"in-process@{socket.gethostname()}" if request.is_eager else (request.hostname or "unknown")
    return services.record_heartbeat(heartbeat_id=heartbeat_id, worker=worker).pk

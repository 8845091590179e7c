"""/healthz: is this instance able to do its job?

Public (load balancers and compose healthchecks call it without a session).
``status`` is ``ok`` when the database answers, the broker is reachable (or there
is no broker because tasks run in-process: ``"eager"``) and, with a broker, a
worker heartbeat came within ``CASEBOOK_HEARTBEAT_STALE_SECONDS`` and the
analysis queue has at least one consumer; ``degraded`` when the heartbeat is
missing or no worker consumes the analysis queue (uploads wait), which answers
200 unless ``CASEBOOK_HEALTHZ_STRICT`` is set (then 503); ``error`` (503) when
the database or the broker is down. ``queues`` shows each queue's consumers
(the workers' announcements, :mod:`config.celery`) and waiting messages: the
heartbeat alone only says that the beat queue is served.

Errors are named by their class only: exception texts carry host names, ports
and user names, and this page is public.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

import redis
from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

from accounts.services import last_worker_contact
from config import celery as broker

CHECK_TIMEOUT_SECONDS = 2

log = logging.getLogger(__name__)


def _error(exc: Exception) -> str:
    # The class only: the message of a connection error names the server's
    # host and port (logged for operators, never shown on this public page).
    log.warning("health check failed: %s: %s", exc.__class__.__name__, exc)
    return f"error: {exc.__class__.__name__}"


def database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
            cursor.fetchone()
    except Exception as exc:
        return _error(exc)
    return "ok"


def broker_status() -> str:
    url = getattr(settings, "REDIS_URL", "")
    if not url:
        return "eager"

    try:
        client = redis.Redis.from_url(
            url, socket_connect_timeout=CHECK_TIMEOUT_SECONDS, socket_timeout=CHECK_TIMEOUT_SECONDS
        )
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return _error(exc)
    return "ok"


def worker_status() -> dict:
    """The last heartbeat answered by a worker and whether it is recent."""
    try:
        last = last_worker_contact()
    except Exception as exc:
        return {"last_seen": None, "name": "", "recent": False, "error": _error(exc)}
    if last is None or last.completed_at is None:  # (only answered heartbeats are read)
        return {"last_seen": None, "name": "", "recent": False}
    window = timedelta(seconds=settings.CASEBOOK_HEARTBEAT_STALE_SECONDS)
    recent = last.completed_at >= timezone.now() - window
    return {"last_seen": last.completed_at.isoformat(), "name": last.worker, "recent": recent}


def queues_status() -> dict:
    """Per queue (analysis, beat): the workers consuming it and the messages
    waiting in it."""
    names = list(dict.fromkeys([settings.CELERY_TASK_DEFAULT_QUEUE, settings.CASEBOOK_BEAT_QUEUE]))
    try:
        consumers = broker.queue_consumers(names)
        lengths = broker.queue_lengths(names)
    except Exception as exc:
        return {"error": _error(exc)}
    return {
        name: {
            "consumers": len(consumers.get(name, [])),
            "workers": consumers.get(name, []),
            "waiting": lengths.get(name, 0),
        }
        for name in names
    }


def health() -> tuple[int, dict]:
    """(HTTP status, body) of /healthz."""
    database = database_status()
    broker_state = broker_status()
    body: dict[str, Any] = {"status": "ok", "database": database, "broker": broker_state}
    if database == "ok":
        body["worker"] = worker_status()
    if broker_state == "ok":
        body["queues"] = queues_status()
    if database != "ok" or broker_state not in ("ok", "eager"):
        body["status"] = "error"
        return 503, body
    if broker_state == "ok":
        analysis = body["queues"].get(settings.CELERY_TASK_DEFAULT_QUEUE) or {}
        if not body["worker"]["recent"] or not analysis.get("consumers"):
            body["status"] = "degraded"
            return (503 if settings.CASEBOOK_HEALTHZ_STRICT else 200), body
    return 200, body


@login_not_required
@never_cache
@require_GET
def healthz(request):
    status, body = health()
    return JsonResponse(body, status=status)

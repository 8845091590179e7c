"""/healthz: is this instance able to do its job?

Public (load balancers and compose healthchecks call it without a session).
200 when the database answers and the broker is reachable, or when there is no
broker because tasks run in-process (``"eager"``); 503 otherwise. The last
worker heartbeat is reported for operators but does not change the status: a
web instance is healthy even while its workers restart.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.auth.decorators import login_not_required
from django.db import connection
from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

CHECK_TIMEOUT_SECONDS = 2


def _error(exc: Exception) -> str:
    # One line, bounded: the page is public and goes into monitoring systems.
    text = " ".join(str(exc).split()) or exc.__class__.__name__
    return f"error: {exc.__class__.__name__}: {text}"[:300]


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
    import redis

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
    from accounts.services import last_worker_contact

    try:
        last = last_worker_contact()
    except Exception as exc:
        return {"last_seen": None, "name": "", "error": _error(exc)}
    if last is None:
        return {"last_seen": None, "name": ""}
    return {"last_seen": last.completed_at.isoformat(), "name": last.worker}


def health() -> tuple[bool, dict]:
    database = database_status()
    broker = broker_status()
    body = {"database": database, "broker": broker}
    if database == "ok":
        body["worker"] = worker_status()
    healthy = database == "ok" and broker in ("ok", "eager")
    return healthy, body


@login_not_required
@never_cache
@require_GET
def healthz(request):
    healthy, body = health()
    return JsonResponse(body, status=200 if healthy else 503)

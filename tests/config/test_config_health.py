import time
import uuid
from datetime import timedelta

import pytest
from django.db import OperationalError
from django.utils import timezone

from accounts.models import WorkerHeartbeat
from accounts.services import record_heartbeat
from config import celery as broker

pytestmark = pytest.mark.django_db


def test_healthz_is_public_and_healthy_without_a_broker(client, settings):
    settings.REDIS_URL = ""
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["database"] == "ok"
    assert body["broker"] == "eager"
    assert body["status"] == "ok"
    assert body["worker"] == {"last_seen": None, "name": "", "recent": False}
    assert "no-cache" in response["Cache-Control"]


def test_healthz_reports_the_last_worker_heartbeat(client, settings):
    settings.REDIS_URL = ""
    record_heartbeat(heartbeat_id=None, worker="celery@node1")
    worker = client.get("/healthz").json()["worker"]
    assert worker["name"] == "celery@node1"
    assert worker["last_seen"]


def test_unreachable_broker_is_503(client, settings):
    # Port 1 on loopback: nothing listens there, the connection is refused at once.
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "ok"
    assert body["broker"].startswith("error: ")


def test_database_failure_is_503(client, settings, monkeypatch):
    settings.REDIS_URL = ""

    def broken_cursor(*args, **kwargs):
        raise OperationalError("could not connect to server: Connection refused")

    monkeypatch.setattr("config.health.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    assert response.status_code == 503
    body = response.json()
    assert body["database"] == "error: OperationalError"
    assert body["status"] == "error"
    assert "worker" not in body


def test_public_error_text_never_shows_connection_details(client, settings, monkeypatch):
    """The message of a connection error names the server (host, port, user):
    only the error's class reaches the public page."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    def broken_cursor(*args, **kwargs):
        raise OperationalError(
            'connection to server at "db.internal.example" (10.1.2.3), port 5432 failed: '
            'FATAL: password authentication failed for user "casebook"'
        )

    monkeypatch.setattr("config.health.connection.cursor", broken_cursor)
    response = client.get("/healthz")
    text = response.content.decode()
    assert response.status_code == 503
    for secret in ("db.internal.example", "10.1.2.3", "5432", "casebook", "127.0.0.1", ":1"):
        assert secret not in text
    assert response.json()["broker"].startswith("error: ")


def test_healthz_is_degraded_without_a_recent_worker_heartbeat(client, settings, monkeypatch):
    monkeypatch.setattr("config.health.broker_status", lambda: "ok")
    monkeypatch.setattr(
        "config.health.queues_status", lambda: {"celery": {"consumers": 1, "workers": ["w@h"], "waiting": 0}}
    )
    settings.CASEBOOK_HEARTBEAT_STALE_SECONDS = 60
    settings.CASEBOOK_HEALTHZ_STRICT = False
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "degraded"

    settings.CASEBOOK_HEALTHZ_STRICT = True
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["status"] == "degraded"

    heartbeat = record_heartbeat(heartbeat_id=None, worker="celery@beat")
    response = client.get("/healthz")
    assert response.status_code == 200
    assert response.json()["status"] == "ok" and response.json()["worker"]["recent"] is True

    # An old heartbeat is not a live worker.
    WorkerHeartbeat.objects.filter(pk=heartbeat.pk).update(
        completed_at=timezone.now() - timedelta(seconds=61)
    )
    response = client.get("/healthz")
    assert response.status_code == 503
    assert response.json()["worker"] == {
        "last_seen": response.json()["worker"]["last_seen"],
        "name": "celery@beat",
        "recent": False,
    }


def test_eager_mode_needs_no_worker_heartbeat(client, settings):
    settings.REDIS_URL = ""
    settings.CASEBOOK_HEALTHZ_STRICT = True
    response = client.get("/healthz")
    assert response.status_code == 200 and response.json()["status"] == "ok"


def test_healthz_only_answers_get(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.services
def test_real_redis_broker_is_ok(client, settings, redis_url):
    settings.REDIS_URL = redis_url
    response = client.get("/healthz")
    assert response.json()["broker"] == "ok"
    assert response.status_code == 200


@pytest.fixture
def own_broker(settings, redis_url):
    """The real Redis, with queue names and keys of this test only."""
    tag = uuid.uuid4().hex[:8]
    settings.REDIS_URL = redis_url
    settings.CASEBOOK_BROKER_KEY_PREFIX = f"test-{tag}"
    settings.CELERY_TASK_DEFAULT_QUEUE = f"test-{tag}-analysis"
    settings.CASEBOOK_BEAT_QUEUE = f"test-{tag}-beat"
    settings.CASEBOOK_HEALTHZ_STRICT = False
    yield settings
    client = broker._client()
    for key in [*client.scan_iter(match=f"test-{tag}*"), settings.CELERY_TASK_DEFAULT_QUEUE]:
        client.delete(key)
    client.close()


@pytest.mark.services
def test_healthz_is_degraded_while_no_worker_consumes_the_analysis_queue(client, own_broker):
    """The beat worker's heartbeat alone is no analysis worker."""
    analysis, beat = own_broker.CELERY_TASK_DEFAULT_QUEUE, own_broker.CASEBOOK_BEAT_QUEUE
    record_heartbeat(heartbeat_id=None, worker="beat@node1")
    broker.announce_consumer(worker="beat@node1", queues=[beat], ttl=60)
    broker._client().rpush(analysis, b"a message nobody takes")
    body = client.get("/healthz").json()
    assert body["status"] == "degraded"
    assert body["queues"][analysis] == {"consumers": 0, "workers": [], "waiting": 1}
    assert body["queues"][beat]["workers"] == ["beat@node1"]

    broker.announce_consumer(worker="analysis@node2", queues=[analysis], ttl=0.5)
    body = client.get("/healthz").json()
    assert body["status"] == "ok" and body["queues"][analysis]["workers"] == ["analysis@node2"]

    time.sleep(0.7)  # the worker stopped announcing itself (killed): its announcement expires
    assert client.get("/healthz").json()["status"] == "degraded"

    broker.announce_consumer(worker="analysis@node2", queues=[analysis], ttl=60)
    broker.withdraw_consumer(worker="analysis@node2", queues=[analysis])  # a warm shutdown
    assert client.get("/healthz").json()["status"] == "degraded"


@pytest.mark.services
def test_the_broker_marks_reuse_one_connection(own_broker, monkeypatch):
    """Marking a sent analysis and clearing the mark when a worker takes it
    are on the path from the row's save to the task's start: each opened a
    new connection (TCP and four handshake commands, 3-4 ms on the shared
    machine) before; the process's client keeps its connections."""
    import redis.connection

    opened = []
    on_connect = redis.connection.AbstractConnection.on_connect_check_health

    def counted(self, *args, **kwargs):
        opened.append(self)
        return on_connect(self, *args, **kwargs)

    monkeypatch.setattr(redis.connection.AbstractConnection, "on_connect_check_health", counted)
    for n in range(5):
        broker.mark_waiting(f"analysis:{n}")
        broker.clear_waiting(f"analysis:{n}")
    assert broker.still_waiting(["analysis:0"], queue=own_broker.CELERY_TASK_DEFAULT_QUEUE) == set()
    assert len(opened) <= 1
    assert broker._client() is broker._client()

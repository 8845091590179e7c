import pytest
from django.db import OperationalError

from accounts.services import record_heartbeat

pytestmark = pytest.mark.django_db


def test_healthz_is_public_and_healthy_without_a_broker(client, settings):
    settings.REDIS_URL = ""
    response = client.get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["database"] == "ok"
    assert body["broker"] == "eager"
    assert body["worker"] == {"last_seen": None, "name": ""}
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
    assert body["database"] == "error: OperationalError: could not connect to server: Connection refused"
    assert "worker" not in body


def test_healthz_only_answers_get(client):
    assert client.post("/healthz").status_code == 405


@pytest.mark.services
def test_real_redis_broker_is_ok(client, settings, redis_url):
    settings.REDIS_URL = redis_url
    response = client.get("/healthz")
    assert response.json()["broker"] == "ok"
    assert response.status_code == 200

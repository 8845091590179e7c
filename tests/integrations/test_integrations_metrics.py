"""/metrics: who may scrape it, and that what it says matches the database."""

from __future__ import annotations

import uuid

import pytest
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from accounts.services import record_heartbeat
from integrations import metrics
from tests.api.world import build_world
from triage import analysis, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db


def samples(text: str) -> dict:
    """{(name, frozenset(labels)): value} of an exposition."""
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, frozenset(s.labels.items()))] = s.value
    return out


def value(parsed: dict, name: str, **labels) -> float:
    return parsed[(name, frozenset(labels.items()))]


def scrape(client: Client | None = None, **extra) -> str:
    response = (client or Client()).get("/metrics", **extra)
    assert response.status_code == 200, response.content
    assert response["Content-Type"].startswith("text/plain; version=")
    return response.content.decode()


def test_nobody_by_default(settings, django_user_model):
    settings.CASEBOOK_METRICS_TOKEN = ""
    settings.CASEBOOK_METRICS_ALLOW = []
    assert Client().get("/metrics").status_code == 403
    admin = django_user_model.objects.create_superuser("root", "r@example.com", "root-pass-123")
    client = Client()
    client.force_login(admin)
    assert client.get("/metrics").status_code == 403  # a session is not a scrape credential


def test_token_or_allowed_address(settings):
    settings.CASEBOOK_METRICS_TOKEN = "s3cret-token"
    settings.CASEBOOK_METRICS_ALLOW = ["10.1.0.0/16"]
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Bearer wrong").status_code == 403
    assert Client().get("/metrics", HTTP_AUTHORIZATION="Token s3cret-token").status_code == 403
    scrape(HTTP_AUTHORIZATION="Bearer s3cret-token")
    scrape(REMOTE_ADDR="10.1.2.3")
    assert Client().get("/metrics", REMOTE_ADDR="10.2.0.1").status_code == 403
    # A forwarded-for header is not the peer address.
    assert (
        Client().get("/metrics", REMOTE_ADDR="10.2.0.1", HTTP_X_FORWARDED_FOR="10.1.2.3").status_code == 403
    )
    assert Client().post("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-token").status_code == 405


def test_counts_match_the_database(settings, django_user_model, monkeypatch, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"
    settings.CASEBOOK_METRICS_ALLOW = ["127.0.0.1/32"]
    world = build_world(django_user_model)  # one analysed snapshot
    # One more upload that fails, one left queued.
    failing = uploads.create_snapshot(owner=world.users["engineer_a"], data=b"$ uname -r\n6.1\n")
    Snapshot.objects.filter(pk=failing.pk).update(status="analyzing", started_at=failing.created_at)
    analysis._fail(failing.pk, "analysis failed: test")
    monkeypatch.setattr(uploads, "enqueue_analysis", lambda *, snapshot_id: True)
    uploads.create_snapshot(owner=world.users["engineer_a"], data=b"$ uname -r\n6.2\n")
    record_heartbeat(heartbeat_id=None, worker="celery@test")

    # Let the sweeper re-queue the queued one twice.
    Snapshot.objects.filter(status="queued").update(queued_at=None)
    assert len(analysis.sweep_stale()) == 1
    Snapshot.objects.filter(status="queued").update(queued_at=None)
    assert len(analysis.sweep_stale()) == 1

    client = Client()
    client.get("/healthz")
    parsed = samples(scrape(client))
    assert value(parsed, "casebook_uploads_total") == Snapshot.objects.count() == 3
    assert value(parsed, "casebook_snapshots", status="done") == 1
    assert value(parsed, "casebook_snapshots", status="failed") == 1
    assert value(parsed, "casebook_snapshots", status="queued") == 1
    for status in ("done", "failed"):
        assert value(parsed, "casebook_analysis_duration_seconds_count", status=status) == 1
        assert value(parsed, "casebook_analysis_duration_seconds_bucket", status=status, le="+Inf") == 1
    done = Snapshot.objects.get(status="done")
    seconds = (done.finished_at - done.started_at).total_seconds()
    assert value(parsed, "casebook_analysis_duration_seconds_sum", status="done") == pytest.approx(seconds)
    # Buckets are cumulative and place the analysis where its duration is.
    for bound in metrics.ANALYSIS_BUCKETS:
        expected = 1 if seconds <= bound else 0
        assert (
            value(parsed, "casebook_analysis_duration_seconds_bucket", status="done", le=str(float(bound)))
            == expected
        )
    assert value(parsed, "casebook_sweeper_requeues_total") == 2
    assert value(parsed, "casebook_worker_heartbeat_seen") == 1
    assert 0 <= value(parsed, "casebook_worker_heartbeat_age_seconds") < 60
    # Request latency of this process, labelled by URL name.
    assert (
        value(
            parsed, "casebook_http_request_duration_seconds_count", method="GET", view="healthz", status="2xx"
        )
        >= 1
    )


@pytest.mark.services
def test_queue_depth_from_redis(settings, redis_url):
    import redis

    settings.CASEBOOK_METRICS_ALLOW = ["127.0.0.1/32"]
    settings.REDIS_URL = redis_url
    # queue names of this test only: another run of the suite may share this Redis
    queue = f"metrics-test-queue-{uuid.uuid4().hex[:8]}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue
    settings.CASEBOOK_BEAT_QUEUE = f"{queue}-beat"
    client = redis.Redis.from_url(redis_url)
    names = [queue, f"{queue}\x06\x163", f"{queue}-beat"]
    try:
        client.lpush(queue, "a", "b")
        client.lpush(f"{queue}\x06\x163", "c")  # a priority-3 message
        client.lpush(f"{queue}-beat", "d")
        parsed = samples(scrape())
        assert value(parsed, "casebook_queue_length", queue=queue) == 3
        assert value(parsed, "casebook_queue_length", queue=f"{queue}-beat") == 1
    finally:
        client.delete(*names)
        client.close()


def test_the_grafana_dashboard_uses_only_exported_metrics(settings):
    """docs/grafana-casebook.json queries metrics that /metrics exports."""
    import json
    import re

    from tests.conftest import ROOT

    settings.CASEBOOK_METRICS_ALLOW = ["127.0.0.1/32"]
    exported = {name for name, _labels in samples(scrape())}
    dashboard = json.loads((ROOT / "docs" / "grafana-casebook.json").read_text())
    queried = {
        name
        for panel in dashboard["panels"]
        for target in panel["targets"]
        for name in re.findall(r"casebook_\w+", target["expr"])
    }
    # Request latency and the heartbeat age appear once a request / heartbeat happened.
    always = exported | {
        "casebook_http_request_duration_seconds_bucket",
        "casebook_worker_heartbeat_age_seconds",
        "casebook_queue_length",  # with REDIS_URL only
    }
    assert queried and queried <= always, queried - always


CHILD = """
import os, sys, django
django.setup()
from django.core.management import call_command
from django.test import Client
if sys.argv[1] == "serve":
    for _ in range(int(sys.argv[2])):
        assert Client().get("/healthz").status_code == 200
else:
    call_command("migrate", verbosity=0)
    print(Client().get("/metrics", HTTP_AUTHORIZATION="Bearer t").content.decode())
"""


@pytest.mark.slow
def test_multiprocess_mode_adds_up_the_web_processes(tmp_path):
    """With PROMETHEUS_MULTIPROC_DIR, the latency of requests answered by other
    processes (gunicorn workers) is in every process's /metrics."""
    import os
    import subprocess
    import sys

    from tests.conftest import ROOT

    (tmp_path / "prom").mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "CASEBOOK_DATA_DIR": str(tmp_path / "data"),
        "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "prom"),
        "CASEBOOK_METRICS_TOKEN": "t",
    }

    def child(*args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", CHILD, *args],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    child("serve", "3")
    child("serve", "4")
    parsed = samples(child("scrape"))
    assert (
        value(
            parsed, "casebook_http_request_duration_seconds_count", method="GET", view="healthz", status="2xx"
        )
        == 7
    )

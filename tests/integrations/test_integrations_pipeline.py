"""Webhooks and /metrics with real processes: gunicorn, redis-server and a
Celery worker (bench/pipeline.py's Stack) on pytest-django's PostgreSQL test
database. Uploads go through the web form; the worker analyses them, emits the
events and delivers the webhooks with Celery's back-off; /metrics is scraped
over HTTP with its token."""

from __future__ import annotations

import time
from datetime import datetime

import pytest
import requests

from accounts.models import Membership, Team
from bench.pipeline import WebClient
from integrations import services
from integrations.models import Delivery, Event
from tests.integrations.test_integrations_metrics import samples, value
from tests.processes.harness import wait_for
from triage.models import Snapshot

pytestmark = [
    pytest.mark.services,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

TOKEN = "pipeline-metrics-token"
TRANSCRIPTS = [
    b"[root@db-01 ~]# numactl -H\navailable: 2 nodes (0-1)\nnode 0 cpus: 0 1\nnode 0 size: 1024 MB\n"
    b"node 0 free: 10 MB\nnode 1 cpus: 2 3\nnode 1 size: 1024 MB\nnode 1 free: 900 MB\n"
    b"node distances:\nnode   0   1\n  0:  10  21\n  1:  21  10\n# run %d\n" % n
    for n in range(3)
]


@pytest.fixture(autouse=True)
def metrics_token(monkeypatch):
    """The web process inherits the environment when the stack starts it."""
    monkeypatch.setenv("CASEBOOK_METRICS_TOKEN", TOKEN)


def scrape(stack) -> dict:
    response = requests.get(
        f"{stack.base_url}/metrics", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30
    )
    assert response.status_code == 200, response.text[:500]
    return samples(response.text)


def test_metrics_count_what_the_pipeline_did(stack, web):
    client, _user = web
    assert requests.get(f"{stack.base_url}/metrics", timeout=30).status_code == 403
    stack.start_worker("w-metrics")
    ids = []
    for n, data in enumerate(TRANSCRIPTS):
        ids.append(WebClient.snapshot_id(client.upload(data, f"numa-{n}.txt", label=f"numa-{n}")))
        assert wait_for(lambda: Snapshot.objects.filter(pk=ids[-1], status="done").exists(), 60)
        parsed = scrape(stack)
        # After each upload the scrape counts exactly the uploads and analyses so far.
        assert value(parsed, "casebook_uploads_total") == n + 1
        assert value(parsed, "casebook_analysis_duration_seconds_count", status="done") == n + 1
    durations = [(s.finished_at - s.started_at).total_seconds() for s in Snapshot.objects.filter(pk__in=ids)]
    assert value(parsed, "casebook_analysis_duration_seconds_sum", status="done") == pytest.approx(
        sum(durations)
    )
    assert value(parsed, "casebook_queue_length", queue="celery") == 0
    assert (
        value(
            parsed,
            "casebook_http_request_duration_seconds_count",
            method="POST",
            view="triage:snapshot_new",
            status="3xx",
        )
        == 3
    )


def test_a_worker_retries_a_failed_webhook_with_back_off(stack, web, receiver):
    client, user = web
    team = Team.objects.create(name="Team P", slug="team-p")
    Membership.objects.create(user=user, team=team)
    hook = services.create_webhook(team=team, url=receiver.url, events=[Event.ANALYSIS_DONE])
    receiver.statuses = [500]
    stack.start_worker("w-hooks", CASEBOOK_WEBHOOK_BACKOFF="1", CASEBOOK_WEBHOOK_ALLOW="127.0.0.1/32")
    snapshot_id = WebClient.snapshot_id(client.upload(TRANSCRIPTS[0], "numa.txt", label="numa"))

    delivery = wait_for(lambda: Delivery.objects.filter(webhook=hook, status="delivered").first(), 60)
    assert delivery is not None, (list(Delivery.objects.values()), stack.procs[-1].text()[-3000:])
    assert (delivery.event, delivery.attempts, delivery.status_code) == ("analysis.done", 2, 200)
    first, second = (datetime.fromisoformat(a["at"]) for a in delivery.attempt_log)
    # Celery's countdown: BACKOFF * 2**0 = 1 s before the first retry.
    assert (second - first).total_seconds() >= 1
    assert [r.headers["X-Casebook-Event"] for r in receiver.received] == ["analysis.done"] * 2
    assert receiver.received[0].body == receiver.received[1].body
    body = receiver.received[1].body
    assert f'"id": {snapshot_id}'.encode() in body
    time.sleep(0.5)
    assert len(receiver.received) == 2  # nothing after the 200

"""/healthz and the sweeper without an analysis worker, with real workers and
a real Redis (issue 29, point 5): the beat worker's heartbeat keeps coming,
yet /healthz says ``degraded`` as soon as no worker consumes the analysis
queue, and the sweeper does not send the waiting uploads again (the queue
length stays flat) until an analysis worker is back."""

from __future__ import annotations

import json
import time

import pytest
import redis
import requests

from bench.pipeline import Stack, WebClient
from tests.integrations.test_integrations_pipeline import TRANSCRIPTS
from tests.processes.harness import wait_for
from triage.models import Snapshot

pytestmark = [
    pytest.mark.services,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

FAST = {"CASEBOOK_CONSUMER_SECONDS": "1", "CASEBOOK_HEARTBEAT_SECONDS": "1"}


def analysis_messages(broker: redis.Redis) -> int:
    """The analysis messages waiting in the default queue. Not its length: a
    worker that starts also queues a rule catalogue check there
    (triage.tasks._check_rules_on_start), and one left by the killed worker
    made the length 4 for 3 uploads in a run under heavy load."""
    raw = broker.lrange("celery", 0, -1)
    return sum(1 for m in raw if json.loads(m)["headers"]["task"] == "triage.tasks.analyze_snapshot")


def healthz(running: Stack) -> dict:
    return requests.get(f"{running.base_url}/healthz", timeout=10).json()


def test_without_analysis_workers_healthz_is_degraded_and_the_queue_stays_flat(stack, web):
    client, _user = web
    beat = stack.start_worker(
        "w-beat",
        beat=True,
        queues="beat",
        CASEBOOK_STALE_AFTER_SECONDS="2",
        CASEBOOK_SWEEP_SECONDS="1",
        wait=False,
        **FAST,
    )
    analysis = stack.start_worker("w-analysis", wait=False, **FAST)
    stack.wait_ready(beat, analysis)
    body = wait_for(lambda: (b := healthz(stack))["status"] == "ok" and b, 30)
    assert body, healthz(stack)
    assert body["queues"]["celery"]["consumers"] == 1 and body["queues"]["casebook-beat"]["consumers"] == 1

    Stack.kill(analysis)  # no warm shutdown: its announcement has to expire
    stopped = time.monotonic()
    body = wait_for(lambda: (b := healthz(stack))["status"] == "degraded" and b, 60)
    assert body, healthz(stack)
    degraded_after = time.monotonic() - stopped
    assert degraded_after < 60
    assert body["queues"]["celery"]["consumers"] == 0 and body["worker"]["recent"] is True

    ids = [
        WebClient.snapshot_id(client.upload(t, f"t{i}.txt", label=f"t{i}"))
        for i, t in enumerate(TRANSCRIPTS[:3])
    ]
    broker = redis.Redis.from_url(stack.redis_url)
    lengths = []
    for _ in range(8):  # eight sweeps, each past the stale age
        time.sleep(1)
        lengths.append(analysis_messages(broker))
    assert lengths[-1] == len(ids) and max(lengths) == len(ids), lengths
    assert "still wait in the broker; not sent again" in beat.text()
    assert set(Snapshot.objects.filter(pk__in=ids).values_list("status", flat=True)) == {"queued"}

    # An analysis worker comes back: everything is analysed once, and healthz is ok.
    stack.start_worker("w-back", **FAST)
    assert wait_for(lambda: Snapshot.objects.filter(pk__in=ids, status="done").count() == len(ids), 90)
    assert wait_for(lambda: healthz(stack)["status"] == "ok", 30)
    assert list(Snapshot.objects.filter(pk__in=ids).values_list("attempts", flat=True)) == [1] * len(ids)
    print(f"degraded {degraded_after:.1f} s after the analysis worker was killed; queue lengths {lengths}")

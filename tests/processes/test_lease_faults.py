"""Analysis leases under real database faults, with real workers (issue 29,
point 2): the lease thread's backend terminated mid-analysis
(``pg_terminate_backend``) and the database refusing every connection while
a finished analysis writes. Each time: one run, one "analysis done"
webhook, the findings written once.

The shared PostgreSQL server is never restarted: the faults are made on the
test's own throwaway database (see tests/processes/test_database_outage.py).
"""

from __future__ import annotations

import time

import psycopg
import pytest
from django.db import connection

from accounts.models import Membership, Team
from bench.pipeline import WebClient
from integrations import services
from integrations.models import Delivery, Event
from tests.integrations.receiver import Receiver
from tests.processes.harness import expected_rules, wait_for, zstack_inputs
from tests.processes.test_database_outage import _terminate_backends
from triage.models import Finding, Snapshot

pytestmark = [
    pytest.mark.services,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

ALLOW = "127.0.0.1/32"


@pytest.fixture
def hooked(web, settings):
    """(web client, a receiver subscribed to ``analysis.done`` for the user's team)."""
    client, user = web
    team = Team.objects.create(name="Team L", slug="team-l")
    Membership.objects.create(user=user, team=team)
    receiver = Receiver().start()
    settings.CASEBOOK_WEBHOOK_ALLOW = [ALLOW]
    hook = services.create_webhook(team=team, url=receiver.url, events=[Event.ANALYSIS_DONE])
    yield client, receiver, hook
    receiver.stop()


def _maintenance():
    db = connection.settings_dict
    return psycopg.connect(
        host=db["HOST"] or "127.0.0.1",
        port=db["PORT"] or 5432,
        user=db["USER"],
        password=db.get("PASSWORD") or None,
        dbname="postgres",
        autocommit=True,
    )


def _lease_backends(snapshot_id: int) -> list[int]:
    """Backends of the lease thread renewing ``snapshot_id``'s lease."""
    with _maintenance() as m:
        rows = m.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s AND application_name = %s",
            (connection.settings_dict["NAME"], f"casebook-lease-{snapshot_id}"),
        ).fetchall()
    return [r[0] for r in rows]


def _terminate(pid: int) -> bool:
    with _maintenance() as m:
        return bool(m.execute("SELECT pg_terminate_backend(%s)", (pid,)).fetchone()[0])


def _assert_one_run_one_webhook(snapshot_id: int, receiver: Receiver, hook, path) -> None:
    snap = wait_for(
        lambda: Snapshot.objects.filter(pk=snapshot_id, status__in=["done", "failed"]).first(), 120
    )
    assert snap is not None and snap.status == "done", snap and snap.last_error
    delivered = wait_for(lambda: Delivery.objects.filter(webhook=hook, status="delivered").count(), 30)
    time.sleep(3)  # a second run, if any, would finish and announce meanwhile
    snap.refresh_from_db()
    assert snap.status == "done" and snap.attempts == 1
    assert delivered == 1
    assert Delivery.objects.filter(webhook=hook, event=Event.ANALYSIS_DONE).count() == 1
    assert [r.headers["X-Casebook-Event"] for r in receiver.received] == ["analysis.done"]
    rules = sorted(Finding.objects.filter(snapshot_id=snapshot_id).values_list("rule", flat=True))
    assert rules == expected_rules(path)


def test_terminating_the_lease_threads_backend_runs_the_analysis_once(stack, hooked):
    client, receiver, hook = hooked
    # A short lease and an eager sweeper in the same worker, with a free pool
    # process: a lease that stopped being renewed would be taken over within
    # seconds and the analysis run a second time.
    worker = stack.start_worker(
        "w-lease",
        beat=True,
        concurrency=2,
        CASEBOOK_TEST_ANALYSIS_DELAY="12",
        CASEBOOK_LEASE_SECONDS="3",
        CASEBOOK_LEASE_RENEW_SECONDS="0.5",
        CASEBOOK_STALE_AFTER_SECONDS="3",
        CASEBOOK_SWEEP_SECONDS="1",
        CASEBOOK_WEBHOOK_ALLOW=ALLOW,
    )
    path = zstack_inputs()[0]
    snapshot_id = WebClient.snapshot_id(client.upload(path.read_bytes(), path.name, label="lease"))
    first = wait_for(lambda: _lease_backends(snapshot_id), 30)
    assert first, worker.text()[-3000:]
    assert _terminate(first[0])
    # The thread reconnects: a new backend renews the lease, which stays held.
    second = wait_for(lambda: [p for p in _lease_backends(snapshot_id) if p != first[0]], 10)
    assert second, worker.text()[-3000:]
    assert _terminate(second[0])  # and once more
    time.sleep(4)  # longer than the lease
    snap = Snapshot.objects.get(pk=snapshot_id)
    assert snap.status == "analyzing" and snap.attempts == 1 and snap.last_error == ""

    _assert_one_run_one_webhook(snapshot_id, receiver, hook, path)
    assert "could not renew the lease" in worker.text()


def test_a_finished_analysis_survives_a_database_outage_while_it_writes(stack, hooked):
    client, receiver, hook = hooked
    worker = stack.start_worker(
        "w-write",
        CASEBOOK_TEST_WRITE_DELAY="6",
        CASEBOOK_LEASE_SECONDS="60",
        CASEBOOK_LEASE_RENEW_SECONDS="1",
        CASEBOOK_WRITE_RETRY_SECONDS="60",
        CASEBOOK_WRITE_RETRY_MAX_DELAY="2",
        CASEBOOK_WEBHOOK_ALLOW=ALLOW,
    )
    path = zstack_inputs()[0]
    snapshot_id = WebClient.snapshot_id(client.upload(path.read_bytes(), path.name, label="outage"))
    assert wait_for(lambda: "writing in 6 s (test hook)" in worker.text(), 30), worker.text()[-3000:]
    # The analysis is finished; the database goes away before it writes (6 s
    # later) and comes back 12 s later: every backend of the worker is
    # terminated and no new connection is accepted meanwhile.
    try:
        assert _terminate_backends(block=True) >= 1
        time.sleep(12)
        snap = Snapshot.objects.get(pk=snapshot_id)
        assert snap.status == "analyzing"  # finished computing, could not write yet
    finally:
        _terminate_backends(block=False)

    _assert_one_run_one_webhook(snapshot_id, receiver, hook, path)
    log = worker.text()
    assert "could not write the analysis of snapshot" in log, log[-3000:]

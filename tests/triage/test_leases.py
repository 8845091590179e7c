"""Bounded analyses: leases instead of a fixed age, time limits that fail the
snapshot with a clear reason, and a give-up message that says what happened.

Mechanics tests replace the engine with a recording double (as in
test_analysis.py); the real worker processes are exercised in
tests/processes/test_bounded_worker.py.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from datetime import timedelta

import pytest
from celery.exceptions import TimeLimitExceeded
from django.conf import settings as django_settings
from django.utils import timezone

from collectors.archive import LoadedUpload
from collectors.facts import HostFacts, Reading
from engine import run as engine_run
from tests.triage.test_analysis import RecordingEngine, upload
from triage import analysis, leases, tasks, uploads
from triage.models import Snapshot

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path / "media"


@pytest.fixture
def user(django_user_model):
    return django_user_model.objects.create_user("alice", password="pw-alice-123")


@pytest.fixture
def enqueued(monkeypatch):
    """Record enqueues instead of running the (eager) task."""
    calls: list[int] = []

    def fake_enqueue(*, snapshot_id):
        calls.append(snapshot_id)
        return True

    monkeypatch.setattr(uploads, "enqueue_analysis", fake_enqueue)
    return calls


@pytest.fixture
def fake_loader(monkeypatch):
    monkeypatch.setattr(
        analysis,
        "_read_upload",
        # one line read (a host nothing was read from fails, issue 25)
        lambda snapshot, label: LoadedUpload(
            hosts=[HostFacts(label=label, hostname=snapshot.label, reading=Reading(lines=1, prose_lines=1))]
        ),
    )


def dead_pid() -> int:
    """The pid of a process that has exited (and been reaped)."""
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def local_owner(pid: int) -> str:
    host, namespace, _pid, token = leases.new_lease_owner().rsplit(":", 3)
    return f"{host}:{namespace}:{pid}:{token}"


# ------------------------------------------------------------------------ leases


def test_analysis_takes_a_lease_and_counts_one_attempt(user, enqueued, fake_loader, monkeypatch, settings):
    settings.CASEBOOK_LEASE_SECONDS = 30
    seen = {}

    def analyze(snapshot_facts):
        row = Snapshot.objects.get(pk=snap.pk)
        seen.update(status=row.status, owner=row.lease_owner, expires=row.lease_expires_at)
        return RecordingEngine()(snapshot_facts)

    monkeypatch.setattr(engine_run, "analyze", analyze)
    snap = upload(user, b"one")
    before = timezone.now()
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == Snapshot.Status.DONE and done.attempts == 1
    assert seen["status"] == "analyzing"
    host, _namespace, pid, _token = seen["owner"].rsplit(":", 3)
    assert host == socket.gethostname() and int(pid) == os.getpid()
    assert before + timedelta(seconds=29) <= seen["expires"] <= timezone.now() + timedelta(seconds=30)


def test_live_lease_is_never_started_twice(user, enqueued, fake_loader, monkeypatch):
    """A second delivery (the broker's, or the sweeper's) while the first worker
    still holds the lease does not run the analysis again."""
    fake = RecordingEngine()
    monkeypatch.setattr(engine_run, "analyze", fake)
    snap = upload(user, b"held")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="analyzing",
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=400),
        lease_owner="worker-2:4026531836:4242:abcdef",  # another host: alive as far as we know
        lease_expires_at=timezone.now() + timedelta(seconds=25),
    )
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert result.status == "analyzing" and result.attempts == 1
    assert fake.calls == []


def test_sweeper_leaves_a_long_analysis_with_a_renewed_lease_alone(user, enqueued, settings):
    """Running for 400 s is no reason to start again: only the lease counts."""
    settings.CASEBOOK_STALE_AFTER_SECONDS = 60
    snap = upload(user, b"long")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="analyzing",
        queued_at=timezone.now() - timedelta(seconds=401),
        started_at=timezone.now() - timedelta(seconds=400),
        lease_owner="worker-2:1:77:abc",
        lease_expires_at=timezone.now() + timedelta(seconds=20),
    )
    enqueued.clear()
    assert analysis.sweep_stale() == []
    assert enqueued == []
    assert Snapshot.objects.get(pk=snap.pk).status == "analyzing"


def test_sweeper_requeues_an_expired_lease_and_says_why(user, enqueued, fake_loader, monkeypatch):
    fake = RecordingEngine()
    monkeypatch.setattr(engine_run, "analyze", fake)
    snap = upload(user, b"worker gone")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="analyzing",
        attempts=1,
        started_at=timezone.now() - timedelta(seconds=50),
        lease_owner="worker-2:1:77:abc",
        lease_expires_at=timezone.now() - timedelta(seconds=1),
    )
    enqueued.clear()
    assert analysis.sweep_stale() == [snap.pk]
    assert enqueued == [snap.pk]
    row = Snapshot.objects.get(pk=snap.pk)
    assert (row.status, row.lease_owner, row.lease_expires_at) == ("queued", "", None)
    assert row.last_error == leases.LEASE_EXPIRED
    # The next sweep does not send it again while it waits in the broker.
    assert analysis.sweep_stale() == []

    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == "done" and done.attempts == 2 and done.last_error == ""
    assert len(fake.calls) == 1


@pytest.mark.services
def test_sweeper_does_not_resend_a_message_still_waiting_in_the_broker(user, enqueued, settings, redis_url):
    """No analysis worker: the message waits in the queue, and the sweeper
    used to send another copy every minute. It sends one again only once the
    queue no longer holds it (a lost broker, a purge)."""
    import uuid

    from config import celery as broker

    tag = uuid.uuid4().hex[:8]
    settings.REDIS_URL = redis_url
    settings.CASEBOOK_BROKER_KEY_PREFIX = f"test-{tag}"
    settings.CELERY_TASK_DEFAULT_QUEUE = queue = f"test-{tag}-analysis"
    client = broker._client()
    try:
        waiting = upload(user, b"waits in the broker")
        lost = upload(user, b"its message was lost")
        Snapshot.objects.update(queued_at=timezone.now() - timedelta(hours=1))
        broker.mark_waiting(uploads.waiting_name(waiting.pk))
        client.rpush(queue, b"the waiting message")
        enqueued.clear()
        for _sweep in range(3):
            assert analysis.sweep_stale() in ([lost.pk], [])
            Snapshot.objects.update(queued_at=timezone.now() - timedelta(hours=1))
        assert enqueued == [lost.pk] * 3  # never the waiting one
        assert client.llen(queue) == 1

        uploads.taken_from_broker(snapshot_id=waiting.pk)  # a worker took it (and died, say)
        assert waiting.pk in analysis.sweep_stale()
        broker.mark_waiting(uploads.waiting_name(lost.pk))
        client.delete(queue)  # the broker lost its messages: an empty queue holds nothing
        Snapshot.objects.update(queued_at=timezone.now() - timedelta(hours=1))
        assert lost.pk in analysis.sweep_stale()
    finally:
        for key in [*client.scan_iter(match=f"test-{tag}*"), queue]:
            client.delete(key)
        client.close()


def test_lease_of_a_dead_local_process_is_taken_over_at_once(user, enqueued, fake_loader, monkeypatch):
    """The broker redelivers the message of a killed pool process at once
    (acks_late + reject_on_worker_lost): the lease names a process of this
    machine that no longer exists, so there is no need to wait for it to expire."""
    fake = RecordingEngine()
    monkeypatch.setattr(engine_run, "analyze", fake)
    snap = upload(user, b"pool child killed")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="analyzing",
        attempts=1,
        lease_owner=local_owner(dead_pid()),
        lease_expires_at=timezone.now() + timedelta(seconds=28),
    )
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == "done" and done.attempts == 2
    assert len(fake.calls) == 1


def test_lease_of_a_live_local_process_holds(user, enqueued, fake_loader, monkeypatch):
    fake = RecordingEngine()
    monkeypatch.setattr(engine_run, "analyze", fake)
    snap = upload(user, b"sibling process busy")
    sibling = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        Snapshot.objects.filter(pk=snap.pk).update(
            status="analyzing",
            attempts=1,
            lease_owner=local_owner(sibling.pid),
            lease_expires_at=timezone.now() + timedelta(seconds=28),
        )
        assert analysis.analyze_snapshot_now(snapshot_id=snap.pk).status == "analyzing"
        assert fake.calls == []
    finally:
        sibling.kill()
        sibling.wait()


def test_transient_error_gives_the_lease_back(user, enqueued, fake_loader, monkeypatch):
    from django.db import OperationalError

    monkeypatch.setattr(
        engine_run, "analyze", RecordingEngine(exc=OperationalError("server closed the connection"))
    )
    snap = upload(user, b"db blip")
    with pytest.raises(OperationalError):
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    row = Snapshot.objects.get(pk=snap.pk)
    assert row.status == "analyzing" and row.lease_expires_at <= timezone.now()
    # The task's retry starts again at once instead of waiting for the lease.
    monkeypatch.setattr(engine_run, "analyze", RecordingEngine())
    assert analysis.analyze_snapshot_now(snapshot_id=snap.pk).status == "done"


@pytest.mark.django_db(transaction=True)
def test_lease_keeper_renews_while_the_analysis_runs(user, enqueued, fake_loader, monkeypatch, settings):
    """The worker's heartbeat thread keeps extending the lease; the sweeper
    (run in the middle, as beat would) sees a live analysis and leaves it."""
    settings.CASEBOOK_LEASE_SECONDS = 1.0
    settings.CASEBOOK_LEASE_RENEW_SECONDS = 0.2
    expiries = []
    swept = []
    real = RecordingEngine()

    def slow(snapshot_facts):
        for _ in range(8):  # 1.6 s: longer than the lease
            time.sleep(0.2)
            expiries.append(Snapshot.objects.get(pk=snap.pk).lease_expires_at)
        swept.append(analysis.sweep_stale(older_than=0.5))
        return real(snapshot_facts)

    monkeypatch.setattr(engine_run, "analyze", slow)
    snap = upload(user, b"slow but alive")
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk, renew_lease=True)
    assert done.status == "done" and done.attempts == 1
    assert swept == [[]]
    assert len(set(expiries)) >= 3, expiries  # renewed several times
    assert max(expiries) > min(expiries) + timedelta(seconds=0.5)


def test_a_run_that_lost_its_lease_writes_nothing_and_announces_nothing(
    user, enqueued, fake_loader, monkeypatch
):
    """The lease expired mid-run and the sweeper's second run took it over:
    the first run's final write is fenced by its lease token."""
    from triage import signals

    announced = []

    def record(**kw):
        announced.append(kw["snapshot_id"])

    signals.analysis_finished.connect(record)
    real = RecordingEngine()

    def taken_over(snapshot_facts):
        Snapshot.objects.filter(pk=snap.pk).update(lease_owner="worker-2:1:4242:second", attempts=2)
        return real(snapshot_facts)

    monkeypatch.setattr(engine_run, "analyze", taken_over)
    snap = upload(user, b"slow")
    try:
        result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    finally:
        signals.analysis_finished.disconnect(record)
    assert result.status == "analyzing" and result.lease_owner == "worker-2:1:4242:second"
    assert not result.findings.exists() and result.facts in ({}, None)
    assert announced == []
    assert real.calls  # it ran; it wrote nothing


def test_a_run_that_lost_its_lease_does_not_record_a_failure_either(user, enqueued, fake_loader, monkeypatch):
    def taken_over_then_crash(snapshot_facts):
        Snapshot.objects.filter(pk=snap.pk).update(lease_owner="worker-2:1:4242:second")
        raise RuntimeError("parser bug")

    monkeypatch.setattr(engine_run, "analyze", taken_over_then_crash)
    snap = upload(user, b"crash")
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert result.status == "analyzing" and result.last_error == ""


@pytest.mark.django_db(transaction=True)
def test_the_lease_keeper_reconnects_after_renewals_fail(user, enqueued, fake_loader, monkeypatch, settings):
    """Renewals that fail on a broken connection drop it; the next one opens a
    new connection and the lease is renewed again (a real terminated backend:
    tests/processes/test_lease_faults.py)."""
    from django.db import OperationalError

    settings.CASEBOOK_LEASE_RENEW_SECONDS = 0.1
    snap = upload(user, b"renew me")
    owner = leases.new_lease_owner()
    Snapshot.objects.filter(pk=snap.pk).update(
        status="analyzing", lease_owner=owner, lease_expires_at=timezone.now() + timedelta(seconds=30)
    )
    real_renew = leases.renew_lease
    failures = {"left": 3}

    def flaky(**kw):
        if failures["left"]:
            failures["left"] -= 1
            raise OperationalError("terminating connection due to administrator command")
        return real_renew(**kw)

    monkeypatch.setattr(leases, "renew_lease", flaky)
    keeper = leases.LeaseKeeper(snap.pk, owner)
    keeper.start()
    try:
        deadline = time.monotonic() + 10
        while keeper.renewals < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        keeper.stop()
    assert keeper.failures == 3 and keeper.renewals >= 2 and not keeper.lost


@pytest.mark.django_db(transaction=True)
def test_a_finished_analysis_retries_its_write_instead_of_the_run(
    user, enqueued, fake_loader, monkeypatch, settings
):
    from django.db import OperationalError

    settings.CASEBOOK_WRITE_RETRY_SECONDS = 1
    settings.CASEBOOK_WRITE_RETRY_MAX_DELAY = 0.1
    engine = RecordingEngine()
    monkeypatch.setattr(engine_run, "analyze", engine)
    real_write = analysis._store_outcome
    failures = {"left": 3}

    def flaky_write(*args, **kw):
        if failures["left"]:
            failures["left"] -= 1
            raise OperationalError("the database system is starting up")
        return real_write(*args, **kw)

    monkeypatch.setattr(analysis, "_store_outcome", flaky_write)
    snap = upload(user, b"finished work")
    done = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert done.status == "done" and done.attempts == 1
    assert len(engine.calls) == 1 and failures["left"] == 0
    assert list(done.findings.values_list("rule", flat=True)) == ["numa.balancing_disabled"]


@pytest.mark.django_db(transaction=True)
def test_write_retries_are_bounded(user, enqueued, fake_loader, monkeypatch, settings):
    from django.db import OperationalError

    settings.CASEBOOK_WRITE_RETRY_SECONDS = 0.7
    settings.CASEBOOK_WRITE_RETRY_MAX_DELAY = 0.1
    attempts = []

    def down(*args, **kw):
        attempts.append(1)
        raise OperationalError("connection refused")

    monkeypatch.setattr(engine_run, "analyze", RecordingEngine())
    monkeypatch.setattr(analysis, "_store_outcome", down)
    snap = upload(user, b"db down for good")
    with pytest.raises(OperationalError):
        analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert len(attempts) == 1 + len(analysis._write_retry_delays()) == 8  # 0.1 s x 7, then up
    # the lease is given back: the task's own retry starts again at once
    assert Snapshot.objects.get(pk=snap.pk).lease_expires_at <= timezone.now()


# ------------------------------------------------------------------- time limits


def test_soft_time_limit_fails_the_snapshot_with_a_clear_reason(user, enqueued, fake_loader, monkeypatch):
    def too_slow(snapshot_facts):
        raise leases.AnalysisTimeout

    monkeypatch.setattr(engine_run, "analyze", too_slow)
    snap = upload(user, b"slow")
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    limit = django_settings.CASEBOOK_ANALYSIS_SOFT_LIMIT
    assert result.status == "failed"
    assert result.last_error == f"analysis took too long (limit {limit} s)"
    assert (result.lease_owner, result.lease_expires_at) == ("", None)
    # A redelivered message leaves the verdict alone.
    assert analysis.analyze_snapshot_now(snapshot_id=snap.pk).last_error == result.last_error


def test_time_limit_passes_through_the_loaders_safety_nets(user, enqueued, monkeypatch):
    """``load`` turns any Exception into an artifact error; the time limit
    is not an Exception and still ends the analysis."""
    from collectors import archive

    def stuck(self, path):
        raise leases.AnalysisTimeout

    monkeypatch.setattr(archive._Loader, "load_path", stuck)
    snap = upload(user, b"$ lscpu\nCPU(s): 4\n", name="t.txt")
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert result.status == "failed" and "took too long" in result.last_error


def test_celery_soft_limit_exception_is_a_time_out_too(user, enqueued, fake_loader, monkeypatch):
    from celery.exceptions import SoftTimeLimitExceeded

    monkeypatch.setattr(engine_run, "analyze", RecordingEngine(exc=SoftTimeLimitExceeded()))
    snap = upload(user, b"eager soft limit")
    assert "took too long" in analysis.analyze_snapshot_now(snapshot_id=snap.pk).last_error


def test_hard_time_limit_is_recorded_by_the_worker(user, enqueued):
    """The pool process was killed: Celery calls on_failure in the worker's
    main process, which records the reason."""
    snap = upload(user, b"killed at the hard limit")
    Snapshot.objects.filter(pk=snap.pk).update(status="analyzing", attempts=1)
    tasks.analyze_snapshot.on_failure(TimeLimitExceeded(150), "task-id", (snap.pk,), {}, None)
    row = Snapshot.objects.get(pk=snap.pk)
    assert row.status == "failed"
    assert row.last_error.startswith("analysis took too long (limit ")


def test_hard_time_limit_does_not_undo_a_finished_analysis(user, enqueued):
    snap = upload(user, b"finished just in time")
    Snapshot.objects.filter(pk=snap.pk).update(status="done")
    tasks.analyze_snapshot.on_failure(TimeLimitExceeded(150), "task-id", (snap.pk,), {}, None)
    assert Snapshot.objects.get(pk=snap.pk).status == "done"


def test_task_time_limits_come_from_the_settings():
    task = tasks.analyze_snapshot
    assert task.soft_time_limit == django_settings.CASEBOOK_ANALYSIS_SOFT_LIMIT
    assert task.time_limit == django_settings.CASEBOOK_ANALYSIS_SOFT_LIMIT + 30


def test_soft_limit_signal_raises_analysis_timeout_in_a_pool_process():
    """Inside a prefork pool process billiard raises SoftTimeLimitExceeded on
    SIGUSR1; during an analysis the task raises AnalysisTimeout instead, and
    puts billiard's handler back afterwards."""
    from billiard.pool import soft_timeout_sighandler

    previous = signal.signal(signal.SIGUSR1, soft_timeout_sighandler)
    try:
        with pytest.raises(leases.AnalysisTimeout), tasks._soft_limit_raises_analysis_timeout():
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(1)
        assert signal.getsignal(signal.SIGUSR1) is soft_timeout_sighandler
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_soft_limit_handler_is_left_alone_outside_a_pool_process():
    previous = signal.getsignal(signal.SIGUSR1)
    with tasks._soft_limit_raises_analysis_timeout():
        assert signal.getsignal(signal.SIGUSR1) is previous


# ----------------------------------------------------------------- giving up


def test_give_up_message_is_not_nested_and_keeps_the_real_cause(user, enqueued, fake_loader, monkeypatch):
    fake = RecordingEngine()
    monkeypatch.setattr(engine_run, "analyze", fake)
    snap = upload(user, b"keeps dying")
    nested = (
        "gave up after 5 attempts; last error: gave up after 5 attempts; last error: "
        "analysis took too long (limit 120 s)"
    )
    Snapshot.objects.filter(pk=snap.pk).update(
        status="queued", attempts=analysis.MAX_ATTEMPTS, last_error=nested
    )
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert result.status == "failed"
    assert result.last_error == "gave up after 5 attempts; last error: analysis took too long (limit 120 s)"
    # Every later delivery of the message leaves it as it is.
    for _ in range(3):
        assert analysis.analyze_snapshot_now(snapshot_id=snap.pk).last_error == result.last_error
    assert fake.calls == []


def test_give_up_does_not_blame_a_lost_worker_without_evidence(user, enqueued, fake_loader):
    snap = upload(user, b"no error recorded")
    Snapshot.objects.filter(pk=snap.pk).update(status="queued", attempts=analysis.MAX_ATTEMPTS)
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert result.last_error == "gave up after 5 attempts; last error: none recorded"
    assert "worker lost" not in result.last_error


def test_give_up_after_expired_leases_says_the_worker_stopped(user, enqueued, fake_loader):
    snap = upload(user, b"worker killed each time")
    Snapshot.objects.filter(pk=snap.pk).update(
        status="analyzing",
        attempts=analysis.MAX_ATTEMPTS,
        lease_owner="gone:1:1:x",
        lease_expires_at=timezone.now() - timedelta(seconds=1),
    )
    analysis.sweep_stale()
    result = analysis.analyze_snapshot_now(snapshot_id=snap.pk)
    assert result.last_error == f"gave up after 5 attempts; last error: {leases.LEASE_EXPIRED}"


# ------------------------------------------------------------------ beat queue


def test_beat_tasks_run_on_their_own_queue(settings):
    routes = settings.CELERY_TASK_ROUTES
    beat_queue = settings.CASEBOOK_BEAT_QUEUE
    assert beat_queue != settings.CELERY_TASK_DEFAULT_QUEUE
    for name, entry in settings.CELERY_BEAT_SCHEDULE.items():
        assert routes[entry["task"]] == {"queue": beat_queue}
        if name != "prune-webhook-deliveries":  # daily housekeeping
            assert entry["schedule"] <= 20
    assert tasks.analyze_snapshot.name not in routes  # analyses: the default queue


def test_enqueued_messages_carry_no_time_limits(monkeypatch):
    """The worker's own limits apply: a web process with other settings must
    not decide how long an analysis may run."""
    sent = {}
    monkeypatch.setattr(tasks.analyze_snapshot, "apply_async", lambda **kw: sent.update(kw))
    assert uploads.enqueue_analysis(snapshot_id=5)
    assert sent["args"] == [5]
    assert sent["time_limit"] is None and sent["soft_time_limit"] is None

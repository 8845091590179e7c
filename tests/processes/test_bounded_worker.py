"""Bounded work with real processes (issue 15, acceptance 1 and 2).

Each test starts its own redis-server, a gunicorn web process and Celery
workers (bench/pipeline.py ``Stack``) sharing pytest-django's PostgreSQL test
database (run with ``DATABASE_URL=postgres://postgres@127.0.0.1:5432/casebook_<name>``).
Analyses run on ``worker`` processes (default queue); the heartbeat and the
sweeper on a separate ``beat`` worker (beat queue, embedded beat), as
docker-compose.yml runs them.

(a) the 1 KB gzip upload that pinned a worker for hours (an unterminated
    ``<?`` repeated) is done, with an error on the fragment, in < 5 s;
(b) one artifact whose parsing never ends fails its snapshot with "analysis
    took too long" at the configured limit, while 20 uploads made at the same
    time are each done within 10 s and the heartbeat keeps answering;
(c) a worker killed (SIGKILL) mid-analysis: its lease expires, the sweeper
    re-queues the snapshot, which is done within 90 s of the kill and analysed
    exactly once more;
(d) an analysis running much longer than its lease (renewed by the worker) is
    never started a second time, although the sweeper runs every second.
"""

from __future__ import annotations

import gzip
import re
import time

import pytest
from django.utils import timezone

from accounts.models import WorkerHeartbeat
from bench.pipeline import WebClient
from tests.processes.harness import ZSTACK_BEFORE, statuses, wait_for
from triage.models import Snapshot

pytestmark = [
    pytest.mark.services,
    pytest.mark.worker,
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
]

# tests/processes/hang_parser.py reads artifacts starting with this line; the
# module is imported by the worker only (never here: it would register a
# never-ending parser in this process).
HANG_MARKER = "casebook-test: this artifact never finishes parsing"
HANG_ENV = {"CASEBOOK_TEST_PARSER_MODULES": "tests.processes.hang_parser"}
# Beat every second, so the tests need not wait for production's 15 s.
FAST_BEAT = {"CASEBOOK_HEARTBEAT_SECONDS": "1", "CASEBOOK_SWEEP_SECONDS": "1"}


def hostile_libvirt() -> bytes:
    """Issue 15: ~1 KB of gzip (an unterminated ``<?`` repeated 500,000 times)."""
    text = "<domain type='kvm'>\n<vcpu>32</vcpu>\n" + "<?" * 500000
    return gzip.compress(text.encode(), 9, mtime=0)


def small_transcript() -> bytes:
    """A real ``numactl -H`` of the ZStack host (seed 000), a fast analysis."""
    text = (ZSTACK_BEFORE / "zstack-9.txt").read_text()
    m = re.search(r"^.*numactl -H\n(?:(?!.*[#$] ).*\n)+", text, re.M)
    assert m, "numactl -H of the ZStack host"
    return m.group(0).encode()


def received(proc) -> int:
    """Analysis task runs a worker started (from its log)."""
    return len(re.findall(r"Task triage\.tasks\.analyze_snapshot\[[0-9a-f-]+\] received", proc.text()))


def test_hostile_1kb_libvirt_upload_is_done_in_under_5_seconds(stack, web):
    client, _ = web
    # The default parse budget: the linear fragment recovery is what keeps it fast.
    stack.start_worker("w-hostile")
    data = hostile_libvirt()
    assert len(data) < 1100
    client.csrf()
    started = time.monotonic()
    snapshot_id = WebClient.snapshot_id(client.upload(data, "domain.xml.gz", label="hostile"))
    snap = wait_for(
        lambda: Snapshot.objects.filter(pk=snapshot_id, status__in=["done", "failed"]).first(), 30
    )
    elapsed = time.monotonic() - started
    assert snap is not None, stack.procs[-1].text()[-3000:]
    assert snap.status == "done", snap.last_error
    assert elapsed < 5, f"done after {elapsed:.1f} s"
    assert any("libvirt_domain" in e["message"] for e in snap.errors), snap.errors


def test_never_ending_parse_fails_at_the_limit_while_20_uploads_proceed(stack, web):
    client, _ = web
    limit = 8
    pair = stack.start_worker(
        "w-pair",
        concurrency=2,
        # No per-artifact budget: the Celery time limit of the analysis stops it.
        CASEBOOK_PARSE_SECONDS="0",
        CASEBOOK_ANALYSIS_SOFT_LIMIT=str(limit),
        CASEBOOK_ANALYSIS_HARD_LIMIT=str(limit + 10),
        wait=False,
        **HANG_ENV,
    )
    stack.wait_ready(pair, stack.start_worker("w-beat", beat=True, queues="beat", wait=False, **FAST_BEAT))
    client.csrf()
    base = small_transcript()

    hang_started = time.monotonic()
    hang_id = WebClient.snapshot_id(client.upload(f"{HANG_MARKER}\n".encode(), "hang.txt", label="hang"))
    assert wait_for(lambda: Snapshot.objects.filter(pk=hang_id, status="analyzing").exists(), 10)

    uploaded: dict[int, float] = {}
    done_at: dict[int, float] = {}
    for i in range(20):
        sid = WebClient.snapshot_id(client.upload(base + b"\n" * (i + 1), f"numactl-{i}.txt", label=f"n{i}"))
        uploaded[sid] = time.monotonic()
    heartbeats_from = timezone.now()

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and len(done_at) < 20:
        for sid in Snapshot.objects.filter(pk__in=uploaded, status="done").values_list("pk", flat=True):
            done_at.setdefault(sid, time.monotonic())
        time.sleep(0.05)
    late = {sid: round(done_at.get(sid, float("inf")) - t, 1) for sid, t in uploaded.items()}
    assert all(v < 10 for v in late.values()), (late, statuses(list(uploaded)))

    hang = wait_for(lambda: Snapshot.objects.filter(pk=hang_id, status__in=["done", "failed"]).first(), 30)
    hang_seconds = time.monotonic() - hang_started
    assert hang is not None, pair.text()[-6000:]
    assert hang.status == "failed"
    assert hang.last_error == f"analysis took too long (limit {limit} s)"
    assert hang_seconds < limit + 5, hang_seconds
    # The heartbeat kept answering on its own worker meanwhile.
    answered = WorkerHeartbeat.objects.filter(completed_at__gte=heartbeats_from).count()
    assert answered >= 3, answered
    health = client.http.get(f"{stack.base_url}/healthz", timeout=10).json()
    assert health["status"] == "ok" and health["worker"]["recent"], health


def test_killed_worker_snapshot_is_done_within_90_s_and_analysed_once_more(stack, web):
    """Production lease timings (30 s lease renewed every 10 s, sweep every 15 s)."""
    client, _ = web
    slow = stack.start_worker("w-slow", CASEBOOK_TEST_ANALYSIS_DELAY="25", wait=False)
    stack.wait_ready(slow, stack.start_worker("w-beat", beat=True, queues="beat", wait=False))
    path = ZSTACK_BEFORE / "zstack-9.txt"
    snapshot_id = WebClient.snapshot_id(client.upload(path.read_bytes(), path.name, label="crash"))
    assert wait_for(lambda: Snapshot.objects.filter(pk=snapshot_id, status="analyzing").exists(), 30)
    first_lease = Snapshot.objects.get(pk=snapshot_id).lease_expires_at
    assert first_lease is not None
    # Kill as soon as the lease has been renewed once (10 s in production), not
    # after a fixed sleep.
    assert wait_for(
        lambda: Snapshot.objects.filter(pk=snapshot_id, lease_expires_at__gt=first_lease).exists(),
        20,
        interval=0.2,
    ), slow.text()[-3000:]
    assert Snapshot.objects.get(pk=snapshot_id).lease_expires_at > timezone.now()
    type(stack).kill(slow)
    killed_at = time.monotonic()

    fresh = stack.start_worker("w-new")
    snap = wait_for(
        lambda: Snapshot.objects.filter(pk=snapshot_id, status__in=["done", "failed"]).first(),
        95,
        interval=0.5,
    )
    recovered = time.monotonic() - killed_at
    assert snap is not None, fresh.text()[-3000:]
    assert snap.status == "done", snap.last_error
    assert recovered < 90, recovered
    assert snap.attempts == 2
    assert received(fresh) == 1, fresh.text()[-3000:]  # analysed once after the kill


def test_analysis_longer_than_its_lease_is_never_started_twice(stack, web):
    """Scaled down: a 3 s lease renewed every second, the sweeper every second,
    an analysis of 9 s (three leases long). The old fixed-age sweeper would
    have started it again after its stale age."""
    client, _ = web
    lease = {"CASEBOOK_LEASE_SECONDS": "3", "CASEBOOK_LEASE_RENEW_SECONDS": "1"}
    worker = stack.start_worker(
        "w-long",
        concurrency=2,
        CASEBOOK_TEST_ANALYSIS_DELAY="9",
        CASEBOOK_STALE_AFTER_SECONDS="2",
        wait=False,
        **lease,
    )
    beat = stack.start_worker(
        "w-beat", beat=True, queues="beat", CASEBOOK_STALE_AFTER_SECONDS="2", wait=False, **FAST_BEAT
    )
    stack.wait_ready(worker, beat)
    path = ZSTACK_BEFORE / "zstack-9.txt"
    snapshot_id = WebClient.snapshot_id(client.upload(path.read_bytes(), path.name, label="long"))
    snap = wait_for(
        lambda: Snapshot.objects.filter(pk=snapshot_id, status__in=["done", "failed"]).first(),
        60,
        interval=0.5,
    )
    assert snap is not None and snap.status == "done", worker.text()[-3000:]
    assert snap.attempts == 1
    assert received(worker) == 1, worker.text()[-3000:]
    assert "sweep_stale_snapshots" in beat.text()  # the sweeper did run meanwhile
    assert "sweeper re-enqueued" not in beat.text()


def test_hard_time_limit_kills_a_stubborn_analysis_and_says_why(stack, web):
    """A parse that swallows even the soft limit: the pool process is killed at
    the hard limit and the worker's main process records the reason."""
    client, _ = web
    worker = stack.start_worker(
        "w-hard",
        CASEBOOK_PARSE_SECONDS="0",
        CASEBOOK_ANALYSIS_SOFT_LIMIT="3",
        CASEBOOK_ANALYSIS_HARD_LIMIT="6",
        **HANG_ENV,
    )
    started = time.monotonic()
    marker = "casebook-test: this artifact ignores the soft time limit\n"
    snapshot_id = WebClient.snapshot_id(client.upload(marker.encode(), "stubborn.txt", label="stubborn"))
    snap = wait_for(
        lambda: Snapshot.objects.filter(pk=snapshot_id, status__in=["done", "failed"]).first(), 30
    )
    assert snap is not None, worker.text()[-4000:]
    assert snap.status == "failed"
    assert snap.last_error == "analysis took too long (limit 3 s)"
    assert time.monotonic() - started < 6 + 5
    assert "Hard time limit (6" in worker.text()
    # The pool process was replaced: the next upload is analysed.
    path = ZSTACK_BEFORE / "zstack-9.txt"
    next_id = WebClient.snapshot_id(client.upload(path.read_bytes(), path.name, label="after"))
    assert wait_for(lambda: Snapshot.objects.filter(pk=next_id, status="done").exists(), 60), worker.text()[
        -3000:
    ]

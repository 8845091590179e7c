"""Celery tasks of the triage app: thin wrappers over ``triage.analysis``
and ``triage.uploads``.

Every analysis is bounded in time: past ``CASEBOOK_ANALYSIS_SOFT_LIMIT`` seconds
Celery raises ``SoftTimeLimitExceeded`` in the task and the service fails the
snapshot with "analysis took too long (limit N s)"; should the task not stop
(the exception swallowed, or stuck in C code), the pool process is killed at
``CASEBOOK_ANALYSIS_HARD_LIMIT`` and :meth:`AnalysisTask.on_failure`, run by the
worker's main process, records the same reason. Inside a pool process the soft
limit raises :class:`triage.leases.AnalysisTimeout` rather than Celery's
``SoftTimeLimitExceeded`` (an ``Exception`` that the loader's safety nets would
turn into one more artifact error). The sweeper and the heartbeat are routed to
their own queue (``CASEBOOK_BEAT_QUEUE``, see config/settings.py).

Test hook: ``CASEBOOK_TEST_PARSER_MODULES`` (comma-separated module names) is
imported by every pool process at start, so integration tests can register
test-only parsers (one whose parsing never ends) in a real worker; it is never
set in production.
"""

from __future__ import annotations

import contextlib
import importlib
import logging
import os
import signal
import threading
from collections.abc import Iterator

from celery import Task, shared_task
from celery.exceptions import TimeLimitExceeded
from celery.signals import worker_process_init, worker_ready
from django.conf import settings
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerOperationalError

from collectors.parsers import load_all as load_parsers
from config.enqueue import enqueue
from engine.rules import load_all as load_rules
from triage import analysis, leases, retroscan, uploads

log = logging.getLogger(__name__)

TRANSIENT = (OperationalError, InterfaceError, BrokerOperationalError, ConnectionError, TimeoutError)


class AnalysisTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo):
        """A hard time limit kills the pool process before the task could say
        why: record it on the snapshot from the worker's main process."""
        if isinstance(exc, TimeLimitExceeded) and args:
            try:
                analysis.fail_timed_out(snapshot_id=int(args[0]))
            except Exception:
                log.exception("could not record the time-out of snapshot %s", args[0])
        super().on_failure(exc, task_id, args, kwargs, einfo)


@shared_task(
    base=AnalysisTask,
    name="triage.tasks.analyze_snapshot",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
    soft_time_limit=settings.CASEBOOK_ANALYSIS_SOFT_LIMIT,
    time_limit=settings.CASEBOOK_ANALYSIS_HARD_LIMIT,
)
def analyze_snapshot(snapshot_id: int) -> str | None:
    """Analyse one snapshot. Safe to run twice: the service is idempotent and
    a running analysis holds a lease."""
    uploads.taken_from_broker(snapshot_id=snapshot_id)
    try:
        with _soft_limit_raises_analysis_timeout():
            snapshot = analysis.analyze_snapshot_now(snapshot_id=snapshot_id)
    except leases.AnalysisTimeout:  # the limit struck outside the analysis proper
        analysis.fail_timed_out(snapshot_id=snapshot_id)
        return "failed"
    return snapshot.status if snapshot else None


@contextlib.contextmanager
def _soft_limit_raises_analysis_timeout() -> Iterator[None]:
    """In a prefork pool process (billiard's soft-limit handler on SIGUSR1),
    raise ``AnalysisTimeout`` on the soft limit for the duration of the block;
    elsewhere (eager, threads) change nothing."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGUSR1"):
        yield
        return
    previous = signal.getsignal(signal.SIGUSR1)
    if getattr(previous, "__module__", "") != "billiard.pool":
        yield
        return

    def on_soft_limit(signum, frame):
        raise leases.AnalysisTimeout

    signal.signal(signal.SIGUSR1, on_soft_limit)
    try:
        yield
    finally:
        signal.signal(signal.SIGUSR1, previous)


@shared_task(name="triage.tasks.sweep_stale_snapshots", acks_late=True)
def sweep_stale_snapshots() -> int:
    """Beat task: re-enqueue snapshots stuck ``queued`` longer than
    ``settings.CASEBOOK_STALE_AFTER_SECONDS`` and ``analyzing`` ones whose
    lease expired, and retro-scans no worker holds that stopped moving
    (``triage.retroscan.requeue_stalled``); also removes upload temp files
    nobody holds any more."""
    uploads.cleanup_temp_files()
    retroscan.requeue_stalled()
    return len(analysis.sweep_stale())


@shared_task(
    name="triage.tasks.retro_scan",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    max_retries=5,
    soft_time_limit=settings.CASEBOOK_RETRO_TASK_SECONDS + settings.CASEBOOK_RETRO_LEASE_SECONDS,
)
def retro_scan(scan_id: int) -> str:
    """Work on one retro-scan for a while; it queues its own continuation."""
    return retroscan.run_scan(scan_id=scan_id)


@shared_task(name="triage.tasks.check_rule_catalogue", acks_late=True, autoretry_for=TRANSIENT, max_retries=5)
def check_rule_catalogue() -> int:
    """Retro-scan the rules added or changed since the workers last started."""
    return len(retroscan.check_rule_catalogue())


@worker_ready.connect
def _check_rules_on_start(sender=None, **_kwargs) -> None:
    """A worker that starts may run a newly deployed rule catalogue: have
    one worker compare it with the stored one (several starting at once
    queue on its row)."""
    try:
        enqueue("triage.tasks.check_rule_catalogue")
    except Exception:
        log.warning("could not queue the rule catalogue check", exc_info=True)


@worker_process_init.connect
def _preload(**_kwargs) -> None:
    """Import the parsers and rules when a pool process starts (the archive
    loader and the engine come with ``triage.analysis``), so the first upload a
    fresh worker analyses is not slowed down by the imports."""
    load_parsers()
    load_rules()
    for name in filter(None, os.environ.get("CASEBOOK_TEST_PARSER_MODULES", "").split(",")):
        importlib.import_module(name.strip())

"""Celery tasks of the triage app: thin wrappers over ``triage.services``."""

from __future__ import annotations

from celery import shared_task
from celery.signals import worker_process_init
from django.db import InterfaceError, OperationalError
from kombu.exceptions import OperationalError as BrokerOperationalError

from triage import services

TRANSIENT = (OperationalError, InterfaceError, BrokerOperationalError, ConnectionError, TimeoutError)


@shared_task(
    name="triage.tasks.analyze_snapshot",
    acks_late=True,
    reject_on_worker_lost=True,
    autoretry_for=TRANSIENT,
    retry_backoff=2,
    retry_backoff_max=60,
    retry_jitter=True,
    max_retries=5,
)
def analyze_snapshot(snapshot_id: int) -> str | None:
    """Analyse one snapshot. Safe to run twice: the service is idempotent."""
    snapshot = services.analyze_snapshot_now(snapshot_id=snapshot_id)
    return snapshot.status if snapshot else None


@shared_task(name="triage.tasks.sweep_stale_snapshots", acks_late=True)
def sweep_stale_snapshots() -> int:
    """Beat task: re-enqueue snapshots stuck ``queued`` or ``analyzing`` longer
    than ``settings.CASEBOOK_STALE_AFTER_SECONDS``."""
    return len(services.sweep_stale())


@worker_process_init.connect
def _preload(**_kwargs) -> None:
    """Import the parsers, rules and engine when a pool process starts, so the
    first upload a fresh worker analyses is not slowed down by the imports."""
    from collectors import archive  # noqa: F401
    from collectors.parsers import load_all as load_parsers
    from triage.rules import load_all as load_rules

    load_parsers()
    load_rules()

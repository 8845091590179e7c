"""Celery task options and retry behaviour (eager; the real worker is exercised
in tests/processes/test_pipeline_worker.py)."""

from __future__ import annotations

import pytest
from django.db import OperationalError
from kombu.exceptions import OperationalError as BrokerError

from triage import analysis, tasks


def test_analyze_task_options():
    task = tasks.analyze_snapshot
    assert task.name == "triage.tasks.analyze_snapshot"
    assert task.acks_late is True
    assert task.reject_on_worker_lost is True
    assert OperationalError in task.autoretry_for and BrokerError in task.autoretry_for
    assert task.retry_backoff and task.max_retries >= 3


def test_beat_schedule_runs_the_sweeper(settings):
    entry = settings.CELERY_BEAT_SCHEDULE["sweep-stale-snapshots"]
    assert entry["task"] == tasks.sweep_stale_snapshots.name


def test_task_retries_transient_database_errors(monkeypatch):
    calls = []

    class Done:
        status = "done"

    def flaky(*, snapshot_id):
        calls.append(snapshot_id)
        if len(calls) < 3:
            raise OperationalError("server closed the connection unexpectedly")
        return Done()

    monkeypatch.setattr(analysis, "analyze_snapshot_now", flaky)
    result = tasks.analyze_snapshot.apply(args=[7])
    assert result.get() == "done"
    assert calls == [7, 7, 7]


def test_task_does_not_retry_other_errors(monkeypatch):
    calls = []

    def broken(*, snapshot_id):
        calls.append(snapshot_id)
        raise ValueError("bug")

    monkeypatch.setattr(analysis, "analyze_snapshot_now", broken)
    result = tasks.analyze_snapshot.apply(args=[8])
    with pytest.raises(ValueError):
        result.get()
    assert calls == [8]


@pytest.mark.django_db
def test_task_for_deleted_snapshot_returns_none():
    assert tasks.analyze_snapshot.apply(args=[123456]).get() is None

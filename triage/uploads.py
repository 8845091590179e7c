"""Uploads: every database write that turns a file or a pasted text into a
snapshot (or into evidence added to one), and queues its analysis.

Views, API views, Celery tasks and management commands call these functions
(keyword-only arguments) and stay thin.

Life of a snapshot::

    create_snapshot()          upload hashed, stored, fsynced; row saved ``queued``;
                               ``analyze_snapshot`` enqueued on commit
    add_artifact()             evidence added to a snapshot: stored, fsynced; the
                               snapshot ``queued`` again, its findings kept in ``history``
    analyze_snapshot_now()     (worker, :mod:`triage.analysis`) ``analyzing`` -> load
                               facts -> engine -> findings replaced atomically ->
                               ``done``/``failed``
    sweep_stale()              (beat, :mod:`triage.analysis`) re-enqueues rows left
                               ``queued`` and ``analyzing`` ones whose lease expired

:func:`enqueue_analysis` is the one place that sends the analysis task; the
sweeper and :func:`triage.analysis.reanalyze` call it through this module.
:func:`cleanup_temp_files` removes what interrupted uploads left in
``FILE_UPLOAD_TEMP_DIR``.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import logging
import os
import time
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core.files import File
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.text import get_valid_filename

from accounts.access import home_team
from collectors import archive
from triage import tasks, tickets
from triage.models import Finding, Snapshot, SnapshotArtifact, TicketRef
from triage.storage import CHUNK, local_path

log = logging.getLogger(__name__)


class UploadRejected(ValueError):
    """The upload cannot become a snapshot (empty, too large)."""


def _hash_chunks(chunks: Iterable[bytes]) -> tuple[str, int]:
    digest = hashlib.sha256()
    size = 0
    for chunk in chunks:
        digest.update(chunk)
        size += len(chunk)
    return digest.hexdigest(), size


def _checked_content(*, uploaded_file, data: bytes | None, name: str) -> tuple[File, str, int]:
    """(content rewound to its start, sha256, size) of an upload or a pasted
    text, rejected when empty or over the upload limit. Exactly one of
    ``uploaded_file`` and ``data`` is given; ``name`` names pasted data."""
    if (uploaded_file is None) == (data is None):
        raise TypeError("give exactly one of uploaded_file or data")
    if data is not None:
        content = File(io.BytesIO(data), name=name)
        sha256, size = hashlib.sha256(data).hexdigest(), len(data)
    else:
        content = uploaded_file if isinstance(uploaded_file, File) else File(uploaded_file)
        content.seek(0)
        sha256, size = _hash_chunks(content.chunks(CHUNK))
        content.seek(0)
    if size == 0:
        raise UploadRejected("the upload is empty")
    limit = settings.CASEBOOK_LIMITS["upload_bytes"]
    if size > limit:
        raise UploadRejected(f"the upload is larger than {limit} bytes")
    return content, sha256, size


def _fsync_stored(name: str) -> None:
    """Make the stored upload durable before we answer: the file's data and
    the directory entries up to the storage root. Remote storages (S3) have no
    local path; their PUT is durable when it returns."""
    path = local_path(name)
    if path is None:
        return
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
    root = os.path.realpath(default_storage.path(""))
    directory = os.path.dirname(os.path.realpath(path))
    while True:
        dfd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)
        if directory == root or len(directory) <= len(root):
            break
        directory = os.path.dirname(directory)


def _team_of(user):
    """The team a new snapshot of ``user`` belongs to (their first membership)."""
    return home_team(user)


def create_snapshot(
    *,
    owner,
    uploaded_file=None,
    data: bytes | None = None,
    filename: str = "",
    label: str = "",
    cluster: str = "",
    session=None,
) -> Snapshot:
    """Store an upload durably and queue its analysis.

    Give either ``uploaded_file`` (a Django ``UploadedFile`` or any file
    object) or ``data`` (e.g. a pasted transcript). The content is hashed,
    and an identical upload by the same owner returns the existing snapshot
    instead of a new one. Otherwise the file is written through the default
    storage and fsynced, the row is saved ``queued``, and ``analyze_snapshot``
    is enqueued once the transaction commits. A broker outage does not fail
    the upload: the sweeper enqueues it later.
    """
    content, sha256, size = _checked_content(
        uploaded_file=uploaded_file, data=data, name=filename or "pasted.txt"
    )
    if data is not None:
        filename = filename or "pasted.txt"
    else:
        filename = filename or os.path.basename(getattr(uploaded_file, "name", "") or "upload")
    head = content.read(4096)
    content.seek(0)

    existing = Snapshot.objects.filter(owner=owner, sha256=sha256).first()
    if existing is not None:
        _link_session(session, existing)
        return existing

    filename = os.path.basename(filename)[:200] or "upload"
    safe = get_valid_filename(filename) or "upload"
    stored_name = default_storage.save(f"snapshots/{owner.pk}/{sha256[:2]}/{sha256}/{safe}", content)
    _fsync_stored(stored_name)

    fields: dict[str, Any] = {
        "owner": owner,
        "label": label.strip()[:200],
        "cluster": cluster.strip()[:200],
        "kind": archive.upload_kind(filename, head),
        "original_filename": filename,
        "sha256": sha256,
        "size": size,
        "file": stored_name,
        "status": Snapshot.Status.QUEUED,
        "queued_at": timezone.now(),
        "team": _team_of(owner),
    }
    try:
        with transaction.atomic():
            snapshot = Snapshot.objects.create(**fields)
            _add_pasted_tickets(snapshot, head)
            _link_session(session, snapshot)
            transaction.on_commit(lambda: enqueue_analysis(snapshot_id=snapshot.pk))
    except IntegrityError:
        # A concurrent identical upload won the race: keep theirs.
        default_storage.delete(stored_name)
        existing = Snapshot.objects.get(owner=owner, sha256=sha256)
        _link_session(session, existing)
        return existing
    return snapshot


def _add_pasted_tickets(snapshot: Snapshot, head: bytes) -> None:
    """The ticket keys on the first lines of a text upload (its team's pattern,
    else Jira-style keys) become the snapshot's tickets."""
    if snapshot.kind not in (Snapshot.Kind.TRANSCRIPT, Snapshot.Kind.ARTIFACT) or b"\x00" in head:
        return
    pattern = snapshot.team.ticket_pattern if snapshot.team is not None else ""
    for key in tickets.keys_in(head.decode("utf-8", errors="replace"), pattern):
        TicketRef.objects.get_or_create(key=key, snapshot=snapshot, defaults={"added_by": snapshot.owner})


def _link_session(session, snapshot: Snapshot) -> None:
    """Attach the snapshot to a troubleshooting session; the sessions app owns
    the relation (a ``snapshots`` many-to-many on its model)."""
    if session is not None and hasattr(session, "snapshots"):
        session.snapshots.add(snapshot)


def enqueue_analysis(*, snapshot_id: int) -> bool:
    """Send ``analyze_snapshot`` to the broker. Returns False (and logs) when the
    broker cannot be reached; the snapshot stays ``queued`` and the sweeper
    re-enqueues it, so callers never fail because Redis is down."""
    try:
        tasks.analyze_snapshot.apply_async(
            args=[snapshot_id],  # type: ignore[arg-type]  # Celery takes any sequence
            # No limits in the message: the worker's own settings
            # (CASEBOOK_ANALYSIS_*_LIMIT) apply, whatever the sender's are.
            # (celery-types wants an int; Celery takes None as "no limit".)
            time_limit=None,  # type: ignore[arg-type]
            soft_time_limit=None,  # type: ignore[arg-type]
            retry=True,
            retry_policy={"max_retries": 1, "interval_start": 0, "interval_step": 0.2, "interval_max": 0.2},
        )
    except Exception:
        log.warning(
            "could not enqueue analysis of snapshot %s; the sweeper will retry", snapshot_id, exc_info=True
        )
        return False
    return True


MAX_HISTORY = 50  # earlier analyses kept on a snapshot


PASTED_ARTIFACT = "pasted-output.txt"


def _history_entry(snapshot: Snapshot, *, reason: str) -> dict:
    """What the analysis being replaced had found, for the report's "Earlier analyses"."""
    findings = Finding.in_report_order(snapshot.current_findings())
    return {
        "engine_version": snapshot.engine_version,
        "finished_at": snapshot.finished_at.isoformat() if snapshot.finished_at else None,
        "reason": reason,
        "checked": len(snapshot.checked or []),
        "not_checked": len(snapshot.not_checked or []),
        "findings": [
            {"rule": f.rule, "severity": f.severity, "host": f.host, "title": f.title, "title_zh": f.title_zh}
            for f in findings
        ],
    }


def add_artifact(
    *, snapshot: Snapshot, user, data: bytes | None = None, uploaded_file=None, name: str = ""
) -> SnapshotArtifact:
    """Add evidence (a pasted command output or a file) to an existing snapshot
    and queue its re-analysis: the same snapshot, its earlier findings kept in
    ``history``. The content is checked against the upload limits, stored and
    fsynced before the row exists; the analysis is enqueued once the
    transaction commits. The same content added twice is stored once (the
    existing artifact is returned and nothing is re-analysed)."""
    content, sha256, size = _checked_content(
        uploaded_file=uploaded_file, data=data, name=name or PASTED_ARTIFACT
    )
    if data is None:
        name = name or os.path.basename(getattr(uploaded_file, "name", "") or "")
    existing = SnapshotArtifact.objects.filter(snapshot=snapshot, sha256=sha256).first()
    if existing is not None:
        return existing

    name = os.path.basename((name or PASTED_ARTIFACT).replace("\\", "/"))[:200] or PASTED_ARTIFACT
    number = SnapshotArtifact.objects.filter(snapshot=snapshot).count() + 1
    # A name of its own in the host's artifact list, never the upload's.
    safe = f"added-{number}-{get_valid_filename(name) or 'artifact.txt'}"[:120]
    base = f"snapshots/{snapshot.owner_id}/{snapshot.sha256[:2]}/{snapshot.sha256}/added/{sha256}/{safe}"
    stored_name = default_storage.save(base, content)
    _fsync_stored(stored_name)
    with transaction.atomic():
        locked = Snapshot.objects.select_for_update().get(pk=snapshot.pk)
        artifact = SnapshotArtifact.objects.create(
            snapshot=locked, name=name, file=stored_name, sha256=sha256, size=size, added_by=user
        )
        if locked.status == Snapshot.Status.DONE:
            history = list(locked.history or [])
            history.append(_history_entry(locked, reason=f"added {name}"))
            locked.history = history[-MAX_HISTORY:]
        locked.status = Snapshot.Status.QUEUED
        locked.queued_at = timezone.now()
        locked.attempts = 0
        locked.last_error = ""
        locked.save(update_fields=["history", "status", "queued_at", "attempts", "last_error"])
        transaction.on_commit(lambda: enqueue_analysis(snapshot_id=locked.pk))
    snapshot.refresh_from_db()
    return artifact


# Files younger than this are never removed by the periodic cleanup: an upload
# being received keeps writing to its file, so its age stays near zero.
TEMP_FILE_GRACE_SECONDS = 600


def _files_held_open() -> set[str] | None:
    """Paths any process we can see holds open (Linux ``/proc``); None where
    that cannot be known."""
    proc = "/proc/self/fd"
    if not os.path.isdir(proc):
        return None
    held: set[str] = set()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with os.scandir(f"/proc/{pid}/fd") as fds:
                for fd in fds:
                    with contextlib.suppress(OSError):
                        held.add(os.readlink(fd.path))
        except OSError:
            continue  # gone, or another user's
    return held


def cleanup_temp_files(*, older_than: float = TEMP_FILE_GRACE_SECONDS) -> list[str]:
    """Remove what uploads left in FILE_UPLOAD_TEMP_DIR: Django's spooled
    request bodies and the API's raw-body spools are deleted when their
    request ends, but not when the process dies (a ``kill -9``, an OOM kill).

    A file is removed when it is older than ``older_than`` seconds and no
    process holds it open. The web server calls this at start-up with 0
    (config/wsgi.py); the periodic sweeper calls it with the default. Returns
    the names removed."""
    root = settings.FILE_UPLOAD_TEMP_DIR
    if not root or not os.path.isdir(root):
        return []
    held = _files_held_open()
    if held is None:  # cannot tell what is in use: only what is surely stale
        older_than = max(older_than, 24 * 3600)
    cutoff = time.time() - older_than
    removed = []
    with os.scandir(root) as entries:
        for entry in entries:
            try:
                if not entry.is_file(follow_symlinks=False) or entry.stat().st_mtime > cutoff:
                    continue
                if held is not None and os.path.realpath(entry.path) in held:
                    continue
                os.unlink(entry.path)
            except FileNotFoundError:
                continue
            removed.append(entry.name)
    if removed:
        log.info("removed %d stale upload temp file(s) from %s", len(removed), root)
    return removed

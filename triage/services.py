"""Snapshot services: every database write of the upload -> analysis pipeline.

Views, API views, Celery tasks and management commands call these functions
(keyword-only arguments) and stay thin.

Life of a snapshot::

    create_snapshot()          upload hashed, stored, fsynced; row saved ``queued``;
                               ``analyze_snapshot`` enqueued on commit
    analyze_snapshot_now()     (worker) ``analyzing`` -> load facts -> engine ->
                               findings replaced atomically -> ``done``/``failed``
    sweep_stale()              (beat) re-enqueues rows left ``queued`` and
                               ``analyzing`` ones whose lease expired

Test hook: when the environment variable ``CASEBOOK_TEST_ANALYSIS_DELAY`` holds a
number of seconds, :func:`analyze_snapshot_now` sleeps that long after marking
the snapshot ``analyzing``. The integration tests use it to kill a worker in the
middle of an analysis; it is never set in production.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import logging
import os
import re
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Iterable
from datetime import timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.files import File
from django.core.files.storage import default_storage
from django.core.validators import URLValidator
from django.db import (
    DatabaseError,
    IntegrityError,
    InterfaceError,
    OperationalError,
    connections,
    transaction,
)
from django.db.models import Q, QuerySet
from django.db.models.fields.files import FieldFile
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.text import get_valid_filename

from accounts.access import home_team, is_support, visible_teams
from collectors import archive
from collectors.decoding import decode_bytes
from collectors.derived.fleet import fleet_profile, profile_host, profile_to_json
from collectors.facts import SnapshotFacts, to_dict
from kb.similarity import QUALIFYING_SEVERITIES, prose_only, similar_cases_for, sounds_like
from triage import engine, signals, tasks
from triage.engine import ENGINE_VERSION, evidence_to_dict, is_fleet_rule
from triage.fleetview import scope_of, visible_acknowledgements
from triage.models import Acknowledgement, Finding, Snapshot, SnapshotArtifact, TicketRef
from triage.remedies import remedies_for_host
from triage.remedies.libvirt import RULES as DOMAIN_RULES
from triage.remedies.libvirt import domain_remedy
from triage.rules import Evidence, artifact_file, host_domains, running_domain_names

log = logging.getLogger(__name__)

CHUNK = 1 << 20
# A snapshot that keeps killing or failing its worker is given up after this
# many analysis attempts rather than retried forever by the sweeper.
MAX_ATTEMPTS = 5
# Hosts of one cluster analysed together with a new snapshot (most recent first).
# The fleet rules compare them through their stored fleet summaries, so a
# cluster's size costs a database read per analysis, never a parse.
MAX_CLUSTER_HOSTS = 5000
# Analyses of one cluster that finish concurrently re-run (at most this many
# times) so that the last one to write has seen every host.
CLUSTER_ROUNDS = 3
_CLUSTER_CHANGED = object()
# Database errors worth retrying: the connection dropped, a deadlock, a failover.
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)


class UploadRejected(ValueError):
    """The upload cannot become a snapshot (empty, too large)."""


# ----------------------------------------------------------------------------- upload


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


def _name(file: FieldFile) -> str:
    """The storage name of a stored file (a saved row always has one)."""
    return file.name or ""


def _local_path(name: str) -> str | None:
    """The file's path when the storage keeps it on a local disk; None for
    remote storages (S3 has no ``path()``) and path-less in-memory ones."""
    try:
        path = default_storage.path(name)
    except NotImplementedError:
        return None
    return path if os.path.exists(path) else None


def _fsync_stored(name: str) -> None:
    """Make the stored upload durable before we answer: the file's data and
    the directory entries up to the storage root. Remote storages (S3) have no
    local path; their PUT is durable when it returns."""
    path = _local_path(name)
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
            _link_session(session, snapshot)
            transaction.on_commit(lambda: enqueue_analysis(snapshot_id=snapshot.pk))
    except IntegrityError:
        # A concurrent identical upload won the race: keep theirs.
        default_storage.delete(stored_name)
        existing = Snapshot.objects.get(owner=owner, sha256=sha256)
        _link_session(session, existing)
        return existing
    return snapshot


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


# --------------------------------------------------------------------- added evidence

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


# --------------------------------------------------------------------------- analysis


def _analysis_delay() -> float:
    try:
        return max(0.0, float(os.environ.get("CASEBOOK_TEST_ANALYSIS_DELAY", "") or 0))
    except ValueError:
        return 0.0


def _load_host_facts(snapshot: Snapshot, label: str):
    """The snapshot's own host: its stored upload and the evidence added to it
    since, merged into one ``HostFacts`` (whatever hosts the prompts name)."""
    return _load_hosts_facts(snapshot, label, split=False)[0]


def _load_hosts_facts(snapshot: Snapshot, label: str, *, split: bool = True) -> list:
    """Every host of the stored upload and the evidence added to it since (a
    transcript whose prompts name other hosts gives several, see
    ``collectors.archive.load_hosts``); the first is the snapshot's own host."""
    name = snapshot.file.name
    if not name or not default_storage.exists(name):
        raise FileNotFoundError(name)

    added = [_name(a.file) for a in snapshot.added_artifacts.all() if default_storage.exists(_name(a.file))]
    path = _local_path(name)
    if not added:
        if path is not None:
            return archive.load_hosts(path, label=label) if split else [archive.load_host(path, label=label)]
        with default_storage.open(name, "rb") as fh:
            data = fh.read()
        upload = snapshot.original_filename or name
        if split:
            return archive.load_hosts_bytes(data, name=upload, label=label)
        return [archive.load_host_bytes(data, name=upload, label=label)]
    paths = [p for p in (_local_path(n) for n in [name, *added]) if p]
    if len(paths) == len(added) + 1:
        if split:
            return archive.load_hosts_files(paths, label=label)
        return [archive.load_host_files(paths, label=label)]
    # A remote storage (S3): the files are copied under their stored names.
    with tempfile.TemporaryDirectory(dir=settings.FILE_UPLOAD_TEMP_DIR) as tmp:
        copies: list[str] = []
        for n in [name, *added]:
            target = os.path.join(tmp, str(len(copies)), os.path.basename(n))
            os.makedirs(os.path.dirname(target))
            with default_storage.open(n, "rb") as src, open(target, "wb") as dst:
                for chunk in iter(lambda: src.read(CHUNK), b""):
                    dst.write(chunk)
            copies.append(target)
        if split:
            return archive.load_hosts_files(copies, label=label)
        return [archive.load_host_files(copies, label=label)]


def load_host_facts(snapshot: Snapshot):
    """The snapshot's host from its stored facts (``Snapshot.host_facts``):
    the upload is not parsed again."""
    return snapshot.host_facts()


def host_remedies(snapshot: Snapshot, rules: set[str] | None = None) -> list:
    """Host-level changes for the snapshot's current findings (sysctl.d files,
    my.cnf lines, OceanBase statements, tc, IRQ affinity ...), filled from the
    stored facts. Guests have their own patch (:func:`guest_remedy`)."""
    if rules is None:
        rules = set(snapshot.current_findings().values_list("rule", flat=True))
    host_rules = set(rules) - set(DOMAIN_RULES)
    if not host_rules or not snapshot.facts:
        return []
    return remedies_for_host(host=snapshot.host_facts(), rules=host_rules)


def guest_remedy(snapshot: Snapshot, domain: str):
    """The domain XML patch of guest ``domain`` (name or uuid), from the
    stored facts (which keep the domain XML). Raises LookupError for no such guest."""
    host = load_host_facts(snapshot)
    match = next((d for d in host.domains if domain in (d.name, d.uuid)), None)
    if match is None:
        raise LookupError(domain)
    return domain_remedy(domain_xml=match.raw_xml, host=host)


def _cluster_members(snapshot: Snapshot) -> QuerySet[Snapshot]:
    """Every snapshot (any status) of the snapshot's cluster that the same
    owner or team uploaded."""
    scope = Q(owner_id=snapshot.owner_id)
    team_id = getattr(snapshot, "team_id", None)
    if team_id:
        scope |= Q(team_id=team_id)
    return Snapshot.objects.filter(scope, cluster=snapshot.cluster)


def _cluster_siblings(snapshot: Snapshot, own_host: str | None = None) -> list[Snapshot]:
    """The other analysed snapshots of the same cluster, visible to the same
    owner (or team), newest first, one per host: older snapshots of a host
    (before/after a fix) and snapshots of ``own_host`` itself are left out."""
    if not snapshot.cluster:
        return []
    siblings = (
        _cluster_members(snapshot)
        .filter(status=Snapshot.Status.DONE)
        .exclude(pk=snapshot.pk)
        .defer("facts", "skipped", "similar_cases", "errors")
        .annotate(facts_hostname=hostname_expression())
        .order_by("-created_at", "-pk")[: MAX_CLUSTER_HOSTS * 4]
    )
    seen: set[str] = set()
    out: list[Snapshot] = []
    for sib in siblings:
        key = host_key(sib)
        if key in seen or (own_host and key == own_host):
            continue
        seen.add(key)
        out.append(sib)
        if len(out) >= MAX_CLUSTER_HOSTS - 1:
            break
    return out


def hostname_expression():
    """The hostname of a snapshot's host for ``host_key`` (annotate it as
    ``facts_hostname``): read from the small fleet profile, so listing the
    members of a large cluster does not read (on PostgreSQL, de-TOAST) every
    member's full facts; snapshots analysed before profiles were stored fall
    back to their facts."""
    return Coalesce(KT("fleet_facts__hostname"), KT("facts__hostname"))


def host_key(snapshot: Snapshot) -> str:
    """Which host a snapshot is of: its hostname, else the label it was uploaded
    with, so a re-snapshot of a host replaces the older one. Needs the
    ``facts_hostname`` annotation (``KT("facts__hostname")``); SQLite renders a
    JSON null there as the text "null"."""
    return host_key_of(getattr(snapshot, "facts_hostname", None), snapshot)


def host_key_of(hostname: str | None, snapshot: Snapshot) -> str:
    """The host key of ``snapshot`` given its facts' hostname (see :func:`host_key`)."""
    key = hostname if hostname not in (None, "", "null") else snapshot.label or f"#{snapshot.pk}"
    return str(key)[: Snapshot._meta.get_field("host_key").max_length]


def unique_labels(snapshots: list[Snapshot]) -> dict[int, str]:
    """Snapshot pk -> its host label, made unique with ``#pk`` where two clash."""
    labels: dict[int, str] = {}
    used: set[str] = set()
    for snap in snapshots:
        label = snap.host_label
        if label in used:
            label = f"{label}#{snap.pk}"
        used.add(label)
        labels[snap.pk] = label
    return labels


def _jsonable(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return to_dict(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


def _evidence_json(finding, excerpts: dict) -> list[dict]:
    out = []
    for e in finding.evidence:
        item = evidence_to_dict(e) if isinstance(e, Evidence) else _jsonable(e)
        if isinstance(item, dict):
            key = (item.get("host") or finding.host or "", item.get("artifact") or "", item.get("line"))
            if key in excerpts:
                item["excerpt"] = excerpts[key]
        out.append(item)
    return out


def _finding_rows(
    findings, *, snapshot: Snapshot, engine_version: str, excerpts: dict | None = None
) -> list[Finding]:
    rows = []
    for f in findings:
        rows.append(
            Finding(
                snapshot=snapshot,
                rule=f.rule,
                severity=f.severity,
                host=(f.host or "")[:200],
                title=(f.title or f.rule)[:300],
                title_zh=(f.title_zh or "")[:300],
                explanation=f.explanation or "",
                explanation_zh=f.explanation_zh or "",
                evidence=_evidence_json(f, excerpts or {}),
                measures=list(f.measures),
                impact=float(getattr(f, "impact", 0.0) or 0.0),
                engine_version=engine_version,
            )
        )
    return rows


def _is_fleet(finding) -> bool:
    return is_fleet_rule(finding.rule)


def _prose_symptom(snapshot: Snapshot, host) -> str:
    """The upload's text when it was read as prose only: similar cases can then
    be matched only by what it says (``kb.similarity.prose_only``)."""
    if not prose_only(SnapshotFacts(hosts=[host])):
        return ""
    return _upload_text(snapshot)


def _upload_text(snapshot: Snapshot) -> str:
    """The first 8,000 characters of a text upload, decoded as every upload is."""
    try:
        with default_storage.open(_name(snapshot.file), "rb") as fh:
            return decode_bytes(fh.read(32_000)).text[:8000]
    except OSError:
        return ""


def prose_text(text: str, reading: dict) -> str:
    """The prose of an upload: its lines outside every artifact and
    unrecognised block of ``reading`` (the stored ``facts.reading``), and
    outside the prompt line before a command's output, so command output never
    reads as words of a write-up (``"MariaDB got slow\\n$ uptime\\n 10:00 up 1 day"``
    with ``uptime`` read at line 3 -> ``"MariaDB got slow"``).
    """
    skip: set[int] = set()
    for block in [*(reading.get("artifacts") or []), *(reading.get("unrecognised") or [])]:
        if not isinstance(block, dict):
            continue
        start, end = block.get("start_line"), block.get("end_line")
        if not isinstance(start, int) or not isinstance(end, int):
            continue
        skip.update(range(start - (1 if block.get("command") else 0), end + 1))
    lines = text.splitlines()
    return "\n".join(line for n, line in enumerate(lines, start=1) if n not in skip and line.strip())


def sounds_like_cases(snapshot: Snapshot, *, language: str = "en") -> list[dict]:
    """ "Cases that sound like this" for a finished text upload (a pasted
    write-up or ticket) that no rule explains: no warning/critical finding and
    no similar case, but prose was read. Compared by its words
    (``kb.similarity.sounds_like``); empty for archives and for snapshots the
    rules or the case signatures already explain."""
    if snapshot.status != Snapshot.Status.DONE or snapshot.similar_cases:
        return []
    if snapshot.kind not in (Snapshot.Kind.TRANSCRIPT, Snapshot.Kind.ARTIFACT):
        return []
    reading = (snapshot.facts or {}).get("reading") or {}
    if not isinstance(reading, dict) or not reading.get("prose_lines"):
        return []
    if snapshot.current_findings().filter(severity__in=QUALIFYING_SEVERITIES).exists():
        return []
    text = prose_text(_upload_text(snapshot), reading)
    if not text.strip():
        return []
    try:
        return sounds_like(text, language=language)
    except TRANSIENT_DB_ERRORS:
        raise
    except Exception:
        log.exception("sounds-like lookup failed")
        return []


def _similar_cases(findings, snapshot_facts, symptom: str = "") -> list[dict]:
    """Similar past cases from the knowledge base. The knowledge base is an
    enrichment: if it fails, the analysis still completes without it."""
    try:
        cases = _jsonable(list(similar_cases_for(findings, snapshot_facts, language="en", symptom=symptom)))
        if cases:
            # Titles in both UI languages, so the report follows the reader's.
            chinese = similar_cases_for(findings, snapshot_facts, language="zh-hans", symptom=symptom)
            zh_titles = {c["slug"]: c.get("title") for c in chinese if c.get("language") == "zh"}
            for case in cases:
                if zh_titles.get(case.get("slug")):
                    case["title_zh"] = zh_titles[case["slug"]]
        return cases
    except TRANSIENT_DB_ERRORS:
        raise
    except Exception:
        log.exception("similar cases lookup failed")
        return []


def _fail(snapshot_id: int, message: str) -> None:
    Snapshot.objects.filter(pk=snapshot_id).update(
        status=Snapshot.Status.FAILED,
        last_error=message[:4000],
        finished_at=timezone.now(),
        lease_owner="",
        lease_expires_at=None,
    )
    _announce(snapshot_id)


def _announce(snapshot_id: int) -> None:
    """Webhooks and e-mails for a finished analysis (integrations listens and
    sends them after commit)."""
    signals.analysis_finished.send(sender=Snapshot, snapshot_id=snapshot_id)


def _added_ids(snapshot: Snapshot) -> list[int]:
    return list(
        SnapshotArtifact.objects.filter(snapshot_id=snapshot.pk).order_by("pk").values_list("pk", flat=True)
    )


def _split_not_checked(items, *, siblings: dict[str, int]) -> tuple[list[dict], dict[int, list[dict]]]:
    """The engine's not-checked entries as stored: those naming another host of
    the cluster run (``siblings``: label -> snapshot id) go to its snapshot;
    the rest (this upload's hosts, the cluster as a whole) stay here."""
    own: list[dict] = []
    by_sibling: dict[int, list[dict]] = {pk: [] for pk in siblings.values()}
    for item in items:
        data = _jsonable(item)
        if not isinstance(data, dict):
            continue
        entry: dict[str, Any] = {
            "rule": str(data.get("rule") or ""),
            "reason": str(data.get("reason") or ""),
            "reason_zh": str(data.get("reason_zh") or ""),
            "commands": [str(c) for c in data.get("commands") or []],
            "host": str(data.get("host") or ""),
        }
        target = siblings.get(entry["host"])
        (own if target is None else by_sibling[target]).append(entry)
    return own, by_sibling


def analyze_snapshot_now(
    *, snapshot_id: int, force: bool = False, renew_lease: bool | None = None
) -> Snapshot | None:
    """Analyse one snapshot in this process (the Celery task calls this).

    Idempotent: a snapshot already ``done`` by the current engine, ``failed``,
    or being analysed by a live worker (its lease holds) is left alone unless
    ``force``; re-running replaces the findings of this engine version in one
    transaction, so a reader never sees half a set. Transient database errors
    propagate (the task retries); the Celery soft time limit fails the snapshot
    with "analysis took too long"; any other error marks the snapshot
    ``failed`` with ``last_error``. Returns None when the snapshot no longer
    exists.

    While it runs, the snapshot holds a lease (``lease_owner``,
    ``lease_expires_at``) that a background thread renews every
    ``CASEBOOK_LEASE_RENEW_SECONDS`` (``renew_lease``; default: when tasks run
    on workers, not in-process), so the sweeper never starts a running
    analysis a second time.
    """
    owner = new_lease_owner()
    claimed = _claim(snapshot_id, owner=owner, force=force)
    if not isinstance(claimed, _Claimed):
        return claimed
    snapshot = claimed.snapshot
    if renew_lease is None:
        renew_lease = not settings.CELERY_TASK_ALWAYS_EAGER
    keeper = LeaseKeeper(snapshot_id, owner) if renew_lease else None
    if keeper:
        keeper.start()
    released = False
    try:
        result = _run_analysis(snapshot)
        released = True  # _fail / _write cleared or replaced the lease
        return result
    except (SoftTimeLimitExceeded, AnalysisTimeout):
        log.warning("analysis of snapshot %s ran past its time limit", snapshot_id)
        fail_timed_out(snapshot_id=snapshot_id)
        released = True
        return Snapshot.objects.filter(pk=snapshot_id).first()
    finally:
        if keeper:
            keeper.stop()
        _ACTIVE_LEASES.discard(owner)
        if not released:
            # A transient error: give the lease back so the retry (or the
            # sweeper) can start again at once.
            release_lease(snapshot_id=snapshot_id, owner=owner)


def _run_analysis(snapshot: Snapshot) -> Snapshot | None:
    snapshot_id = snapshot.pk
    delay = _analysis_delay()
    if delay:
        time.sleep(delay)

    for _round in range(CLUSTER_ROUNDS):
        try:
            run = _compute(snapshot)
        except (*TRANSIENT_DB_ERRORS, SoftTimeLimitExceeded):
            raise  # AnalysisTimeout is a BaseException: no handler here catches it
        except FileNotFoundError:
            _fail(snapshot_id, "the stored upload is missing from storage")
            return Snapshot.objects.filter(pk=snapshot_id).first()
        except Exception as exc:
            log.exception("analysis of snapshot %s failed", snapshot_id)
            _fail(snapshot_id, f"analysis failed: {type(exc).__name__}: {exc}")
            return Snapshot.objects.filter(pk=snapshot_id).first()
        written = _write(snapshot_id, run)
        if written is not _CLUSTER_CHANGED:
            return written
        # Another host of the cluster finished, or evidence was added, while we
        # analysed: run again so that the last analysis includes everything.
        log.info(
            "cluster %r changed while snapshot %s was analysed; running again", snapshot.cluster, snapshot_id
        )
        reloaded = Snapshot.objects.filter(pk=snapshot_id).first()
        if reloaded is None:
            return None
        snapshot = reloaded
    return _write(snapshot_id, run, force_write=True)


# -------------------------------------------------------------------------- leases


class AnalysisTimeout(BaseException):
    """The analysis ran past its soft time limit (raised by the Celery task's
    soft-limit signal handler, ``triage.tasks``). A ``BaseException`` so that
    the ``except Exception`` safety nets of the loader and the engine let it
    through to :func:`analyze_snapshot_now`."""


GAVE_UP_PREFIX = "gave up after "
LEASE_EXPIRED = "the worker analysing it stopped (its lease expired)"
# Lease tokens of the analyses running in this process right now.
_ACTIVE_LEASES: set[str] = set()


def _pid_namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "-"


def new_lease_owner() -> str:
    """``host:pid-namespace:pid:token``: which process holds a lease."""
    return f"{socket.gethostname()}:{_pid_namespace()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _owner_gone(owner: str) -> bool:
    """True when ``owner`` is a process of this machine (same host name and
    PID namespace) that no longer runs this lease: the process is gone, or it
    is this very process and the analysis that took the lease has ended. A
    pool process killed mid-analysis is so detected when the broker
    redelivers its message, without waiting for the lease to expire."""
    try:
        host, namespace, pid_text, _token = owner.rsplit(":", 3)
        pid = int(pid_text)
    except ValueError:
        return False
    if host != socket.gethostname() or namespace != _pid_namespace():
        return False
    if pid == os.getpid():
        return owner not in _ACTIVE_LEASES
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False
    return False


def lease_holds(snapshot: Snapshot, *, now=None) -> bool:
    """An ``analyzing`` snapshot whose lease is unexpired and whose holder is
    not known to be gone."""
    now = now or timezone.now()
    return (
        snapshot.status == Snapshot.Status.ANALYZING
        and snapshot.lease_expires_at is not None
        and snapshot.lease_expires_at > now
        and not _owner_gone(snapshot.lease_owner)
    )


@dataclasses.dataclass
class _Claimed:
    snapshot: Snapshot


def _give_up_message(snapshot: Snapshot) -> str:
    """ "gave up after N attempts; last error: ...", never nested: a previous
    give-up message is replaced, not quoted."""
    last = snapshot.last_error or ""
    while last.startswith(GAVE_UP_PREFIX) and "; last error: " in last:
        last = last.split("; last error: ", 1)[1]
    last = last or "none recorded"
    return f"{GAVE_UP_PREFIX}{snapshot.attempts} attempts; last error: {last}"[:4000]


def _claim(snapshot_id: int, *, owner: str, force: bool):
    """Take the snapshot's lease and mark it ``analyzing`` (one attempt more).
    Returns ``_Claimed``, or the snapshot (or None) when there is nothing to
    run: gone, finished, given up, or held by a live lease."""
    with transaction.atomic():
        snapshot = Snapshot.objects.select_for_update().filter(pk=snapshot_id).first()
        if snapshot is None:
            return None
        if not force:
            current = (
                snapshot.status == Snapshot.Status.DONE and snapshot.engine_version == engine.ENGINE_VERSION
            )
            # A failed analysis is final until someone asks again (reanalyze,
            # the retry button), which sets it ``queued`` first.
            if current or snapshot.status == Snapshot.Status.FAILED:
                return snapshot
            if lease_holds(snapshot):
                log.info(
                    "snapshot %s is being analysed by %s; not starting it twice",
                    snapshot_id,
                    snapshot.lease_owner,
                )
                return snapshot
            if snapshot.attempts >= MAX_ATTEMPTS:
                snapshot.status = Snapshot.Status.FAILED
                snapshot.finished_at = timezone.now()
                snapshot.last_error = _give_up_message(snapshot)
                snapshot.lease_owner, snapshot.lease_expires_at = "", None
                snapshot.save(
                    update_fields=["status", "finished_at", "last_error", "lease_owner", "lease_expires_at"]
                )
                _announce(snapshot.pk)
                return snapshot
        now = timezone.now()
        snapshot.status = Snapshot.Status.ANALYZING
        snapshot.started_at = now
        snapshot.attempts += 1
        snapshot.lease_owner = owner
        snapshot.lease_expires_at = now + timedelta(seconds=settings.CASEBOOK_LEASE_SECONDS)
        snapshot.save(update_fields=["status", "started_at", "attempts", "lease_owner", "lease_expires_at"])
    _ACTIVE_LEASES.add(owner)
    return _Claimed(snapshot)


def renew_lease(*, snapshot_id: int, owner: str) -> bool:
    """Extend the lease by ``CASEBOOK_LEASE_SECONDS``; False when ``owner``
    no longer holds it (finished, or taken over after it expired)."""
    expires = timezone.now() + timedelta(seconds=settings.CASEBOOK_LEASE_SECONDS)
    return bool(
        Snapshot.objects.filter(pk=snapshot_id, lease_owner=owner, status=Snapshot.Status.ANALYZING).update(
            lease_expires_at=expires
        )
    )


def release_lease(*, snapshot_id: int, owner: str) -> None:
    """Give the lease up (best effort: the database may be the reason we stop)."""
    _ACTIVE_LEASES.discard(owner)
    try:
        Snapshot.objects.filter(pk=snapshot_id, lease_owner=owner).update(lease_expires_at=timezone.now())
    except DatabaseError:
        log.warning("could not release the lease of snapshot %s", snapshot_id, exc_info=True)


class LeaseKeeper:
    """Renews a lease from a daemon thread every ``CASEBOOK_LEASE_RENEW_SECONDS``
    while the analysis runs (parsing is pure Python: the thread gets the GIL
    between bytecodes). If the process dies, renewals stop and the lease
    expires ``CASEBOOK_LEASE_SECONDS`` later."""

    def __init__(self, snapshot_id: int, owner: str):
        self.snapshot_id = snapshot_id
        self.owner = owner
        self.renewals = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"lease-{snapshot_id}", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        _ACTIVE_LEASES.discard(self.owner)

    def _run(self) -> None:
        interval = max(0.1, float(settings.CASEBOOK_LEASE_RENEW_SECONDS))
        try:
            while not self._stop.wait(interval):
                try:
                    held = renew_lease(snapshot_id=self.snapshot_id, owner=self.owner)
                except DatabaseError:
                    log.warning("could not renew the lease of snapshot %s", self.snapshot_id, exc_info=True)
                    continue
                if not held:
                    return  # finished, or another worker took over an expired lease
                self.renewals += 1
        finally:
            connections.close_all()  # this thread's connections only


def fail_timed_out(*, snapshot_id: int, limit: float | None = None) -> None:
    """Fail a snapshot whose analysis ran past the Celery time limit, unless it
    finished meanwhile."""
    limit = settings.CASEBOOK_ANALYSIS_SOFT_LIMIT if limit is None else limit
    updated = (
        Snapshot.objects.filter(pk=snapshot_id)
        .exclude(status=Snapshot.Status.DONE)
        .update(
            status=Snapshot.Status.FAILED,
            last_error=f"analysis took too long (limit {limit:g} s)",
            finished_at=timezone.now(),
            lease_owner="",
            lease_expires_at=None,
        )
    )
    if updated:
        _announce(snapshot_id)


@dataclasses.dataclass
class _Run:
    sibling_ids: list[int]
    own: list
    by_sibling: dict[int, list]
    facts: dict
    errors: list
    skipped: list
    similar: list
    version: str
    parse_seconds: float
    rules_seconds: float
    excerpts: dict = dataclasses.field(default_factory=dict)
    own_host: str | None = None
    extra_hosts: list = dataclasses.field(default_factory=list)
    checked: list = dataclasses.field(default_factory=list)
    not_checked: list = dataclasses.field(default_factory=list)
    sibling_not_checked: dict[int, list] = dataclasses.field(default_factory=dict)
    # the added artifacts the run read: one added meanwhile makes it run again
    artifact_ids: list[int] = dataclasses.field(default_factory=list)
    fleet_facts: dict = dataclasses.field(default_factory=dict)
    # members seen through their fleet summaries: only their fleet findings are replaced
    fleet_siblings: list[int] = dataclasses.field(default_factory=list)


def fleet_facts_of(host) -> dict:
    """What ``Snapshot.fleet_facts`` stores: the host's fleet profile, which
    says whether it is a guest or runs guests (which other members of its
    cluster an analysis must see in full, for the guest/host rules)."""
    hypervisor = bool(host_domains(host) or running_domain_names(host))
    return profile_to_json(fleet_profile(host, hypervisor=hypervisor))


def _related(own_hosts: list, flags: dict | None, *, hypervisors: bool) -> bool:
    """Whether a member of the cluster (its stored ``fleet_facts`` flags) is
    analysed in full with ``own_hosts``: a guest with the hosts that may run
    it, a host with the guests it may run (the hosts that run guests, else, as
    ``triage.rules.hypervisor_hosts`` picks them, every physical host:
    ``hypervisors`` says whether the cluster has any). A member without flags
    (analysed before they were stored) is, as every member was then."""
    if not flags or flags.get("guest") is None:
        return True
    if flags["guest"]:
        return any(not h.is_guest for h in own_hosts)
    own_guest = any(h.is_guest for h in own_hosts)
    return own_guest and (bool(flags.get("hypervisor")) or not hypervisors)


def _sibling_hosts(siblings: list[Snapshot], labels: dict[int, str], own_hosts: list) -> tuple[list, list]:
    """The other members of the cluster from what their analyses stored: the
    related ones (``_related``) as typed hosts from their facts, the others as
    their fleet profiles: ([(snapshot, HostFacts)], [(snapshot, FleetProfile)]).
    No upload is read."""
    if not siblings:
        return [], []
    flags = {
        pk: {"guest": guest, "hypervisor": hyper}
        for pk, guest, hyper in Snapshot.objects.filter(pk__in=[s.pk for s in siblings])
        .exclude(fleet_facts={})
        .values_list("pk", "fleet_facts__guest", "fleet_facts__hypervisor")
    }
    hypervisors = any(f["hypervisor"] for f in flags.values())
    related = {s.pk for s in siblings if _related(own_hosts, flags.get(s.pk), hypervisors=hypervisors)}
    rows = {
        s.pk: s
        for s in Snapshot.objects.filter(pk__in=related).only(
            "pk", "label", "original_filename", "cluster", "facts"
        )
    }
    rows.update(
        {
            s.pk: s
            for s in Snapshot.objects.filter(pk__in=[s.pk for s in siblings if s.pk not in related]).only(
                "pk", "label", "original_filename", "cluster", "fleet_facts"
            )
        }
    )
    full, fleet_only = [], []
    for sib in siblings:
        row = rows.get(sib.pk)
        if row is None:
            continue
        if sib.pk in related:
            host = row.host_facts()
            host.label = labels[sib.pk]
            full.append((sib, host))
        else:
            profile = row.fleet_profile()
            profile.label = labels[sib.pk]
            fleet_only.append((sib, profile))
    return full, fleet_only


def _compute(snapshot: Snapshot) -> _Run:
    """Parse the snapshot's upload (the only one read), rebuild the other done
    hosts of its cluster from their stored facts (in full the guests/hosts it
    may pair with, the others from their fleet summaries), run the engine and
    attribute each finding to the snapshot of its host. Touches no rows."""
    t0 = time.monotonic()
    artifact_ids = _added_ids(snapshot)
    host, *extra_hosts = _load_hosts_facts(snapshot, snapshot.host_label)
    if snapshot.cluster and not host.cluster:
        host.cluster = snapshot.cluster
    siblings = _cluster_siblings(snapshot, own_host=host.hostname or snapshot.label)
    labels = unique_labels([snapshot, *siblings])  # the snapshot's own label is kept as is
    # other hosts of the same paste (a guest reached by ssh) are analysed with it
    taken = set(labels.values())
    for extra in extra_hosts:
        while extra.label in taken:
            extra.label = f"{extra.label}'"
        taken.add(extra.label)
    own_hosts = [host, *extra_hosts]
    full, fleet_only = _sibling_hosts(siblings, labels, own_hosts)
    hosts = [*own_hosts, *(h for _s, h in full), *(profile_host(p) for _s, p in fleet_only)]
    loaded = [s for s, _h in full]
    summarised = [s for s, _p in fleet_only]
    parse_seconds = time.monotonic() - t0

    t1 = time.monotonic()
    result = engine.analyze(SnapshotFacts(hosts=hosts, fleet_profiles={p.label: p for _s, p in fleet_only}))
    rules_seconds = time.monotonic() - t1

    own, by_sibling = _attribute(result.findings, snapshot, loaded, labels, summarised=summarised)
    not_checked, sibling_not_checked = _split_not_checked(
        result.not_checked, siblings={labels[s.pk]: s.pk for s in [*loaded, *summarised]}
    )
    # A member known by its profile keeps what its own analysis found missing
    # (the per-host rules did not run on it here) unless the run names it.
    for sib in summarised:
        if not sibling_not_checked.get(sib.pk):
            sibling_not_checked.pop(sib.pk, None)
    excerpts = _excerpts(
        result.findings, {labels[s.pk]: s for s in [snapshot, *loaded]}, hosts={labels[snapshot.pk]: host}
    )
    return _Run(
        checked=sorted(set(result.checked)),
        not_checked=not_checked,
        sibling_not_checked=sibling_not_checked,
        artifact_ids=artifact_ids,
        own_host=host.hostname or snapshot.label,
        excerpts=excerpts,
        sibling_ids=[s.pk for s in siblings],
        own=own,
        by_sibling=by_sibling,
        fleet_siblings=[s.pk for s in summarised],
        facts=to_dict(host),
        fleet_facts=fleet_facts_of(host),
        extra_hosts=[to_dict(h) for h in extra_hosts],
        errors=[_jsonable(e) for h in (host, *extra_hosts) for e in h.errors],
        skipped=[_skipped_entry(s) for s in result.skipped],
        similar=_similar_cases(
            own, SnapshotFacts(hosts=[host, *extra_hosts]), _prose_symptom(snapshot, host)
        ),
        version=result.engine_version or engine.ENGINE_VERSION,
        parse_seconds=parse_seconds,
        rules_seconds=rules_seconds,
    )


EXCERPT_CONTEXT = 2  # lines shown before and after the cited line
EXCERPT_LINE_CHARS = 300


def _excerpts(
    findings, snapshots_by_label: dict[str, Snapshot], hosts: dict | None = None
) -> dict[tuple[str, str, int], list[dict]]:
    """The raw lines around every cited (artifact, line), read back from the
    stored uploads, so the report can show them without re-opening archives.
    ``hosts`` (label -> HostFacts) tells which file of a snapshot with added
    evidence an artifact was read from. Best effort: an unreadable source just
    has no excerpt."""
    wanted: dict[str, set[tuple[str, int]]] = {}
    for f in findings:
        for e in f.evidence:
            label = e.host or f.host or ""
            if e.artifact and isinstance(e.line, int) and e.line > 0 and label in snapshots_by_label:
                wanted.setdefault(label, set()).add((e.artifact, e.line))
    out: dict[tuple[str, str, int], list[dict]] = {}
    for label, items in wanted.items():
        try:
            texts = _cited_lines(snapshots_by_label[label], items, (hosts or {}).get(label))
        except Exception:
            log.warning("could not read excerpts of %s", label, exc_info=True)
            continue
        for artifact, line in items:
            lines = texts.get((artifact, line))
            if not lines or line > len(lines):
                continue
            first, last = max(1, line - EXCERPT_CONTEXT), min(len(lines), line + EXCERPT_CONTEXT)
            out[(label, artifact, line)] = [
                {"line": n, "text": lines[n - 1][:EXCERPT_LINE_CHARS], "hit": n == line}
                for n in range(first, last + 1)
            ]
    return out


def _source_file(host, artifact: str, line: int) -> str | None:
    """The file (base name) the cited artifact of ``host`` was read from."""
    for item in getattr(host, "artifacts", None) or []:
        if not isinstance(item, dict) or artifact not in (item.get("source"), item.get("name")):
            continue
        start, count = item.get("start_line"), item.get("lines")
        if isinstance(start, int) and isinstance(count, int) and not start <= line <= start + count:
            continue
        return artifact_file(item)
    return None


def _cited_lines(snapshot: Snapshot, items: set[tuple[str, int]], host) -> dict[tuple[str, int], list[str]]:
    """(artifact, line) -> the lines of the file it cites: the upload, or the
    added artifact it was read from."""
    added = {os.path.basename(_name(a.file)): a for a in snapshot.added_artifacts.all()}
    in_added: dict[tuple[str, int], SnapshotArtifact] = {}
    if added and host is not None:
        for artifact, line in items:
            source = _source_file(host, artifact, line)
            if source in added:
                in_added[(artifact, line)] = added[source]
    main = _artifact_lines(snapshot, {a for (a, n) in items if (a, n) not in in_added})
    out = {(a, n): main[a] for (a, n) in items if (a, n) not in in_added and a in main}
    limit = settings.CASEBOOK_LIMITS["artifact_bytes"]
    for key, added_artifact in in_added.items():
        with default_storage.open(_name(added_artifact.file), "rb") as fh:
            data = fh.read(limit + 1)
        if len(data) <= limit:
            out[key] = decode_bytes(data).text.split("\n")
    return out


def _artifact_lines(snapshot: Snapshot, names: set[str]) -> dict[str, list[str]]:
    """Lines of the named artifacts of one stored upload (``collectors.archive.artifact_lines``)."""
    with default_storage.open(_name(snapshot.file), "rb") as fh:
        return archive.artifact_lines(fh, names)


def _attribute(
    findings, snapshot: Snapshot, siblings: list[Snapshot], labels: dict[int, str], *, summarised=()
):
    """A finding belongs to the snapshot whose host it names. Fleet findings
    (and any naming no single host, e.g. ``cluster``) concern every host of
    the run and are stored on each (those of the ``summarised`` members are
    written from the own list, see ``_write``); others without a known host
    stay with the snapshot being analysed. A member seen only through its
    fleet summary keeps the per-host findings of its own analysis."""
    by_label = {labels[s.pk]: s.pk for s in [snapshot, *siblings]}
    summarised_labels = {labels[s.pk] for s in summarised}
    own: list = []
    by_sibling: dict[int, list] = {s.pk: [] for s in siblings}
    for f in findings:
        target = by_label.get(f.host or "")
        if target is None and (f.host or "") in summarised_labels:
            continue
        if target is None and _is_fleet(f):
            own.append(f)
            for items in by_sibling.values():
                items.append(f)
        elif target is None or target == snapshot.pk:
            own.append(f)
        else:
            by_sibling[target].append(f)
    return own, by_sibling


def _write(snapshot_id: int, run: _Run, *, force_write: bool = False):
    """Replace the findings of this engine version on the snapshot and on the
    other hosts of its cluster run, in one transaction."""
    with transaction.atomic():
        snapshot = Snapshot.objects.filter(pk=snapshot_id).first()
        if snapshot is None:
            return None
        # Lock the whole cluster in id order: two analyses of one cluster then
        # write one after the other (no deadlock), and the second one sees
        # the first as a sibling and runs again with it.
        members = _cluster_members(snapshot) if snapshot.cluster else Snapshot.objects.filter(pk=snapshot_id)
        locked = {s.pk: s for s in members.select_for_update().order_by("pk")}
        snapshot = locked.get(snapshot_id)
        if snapshot is None:
            return None
        current = [s.pk for s in _cluster_siblings(snapshot, own_host=run.own_host)]
        if not force_write and (current != run.sibling_ids or _added_ids(snapshot) != run.artifact_ids):
            return _CLUSTER_CHANGED
        snapshot.findings.filter(engine_version=run.version).delete()
        Finding.objects.bulk_create(
            _finding_rows(run.own, snapshot=snapshot, engine_version=run.version, excerpts=run.excerpts)
        )
        snapshot.kind = _kind_after_load(snapshot)
        snapshot.facts = run.facts
        snapshot.fleet_facts = run.fleet_facts
        snapshot.extra_hosts = run.extra_hosts
        snapshot.errors = run.errors
        snapshot.skipped = run.skipped
        snapshot.checked = run.checked
        snapshot.not_checked = run.not_checked
        snapshot.similar_cases = run.similar
        snapshot.engine_version = run.version
        snapshot.host_key = host_key_of((run.facts or {}).get("hostname"), snapshot)
        snapshot.parse_seconds = run.parse_seconds
        snapshot.rules_seconds = run.rules_seconds
        snapshot.status = Snapshot.Status.DONE
        snapshot.finished_at = timezone.now()
        snapshot.last_error = ""
        snapshot.save()
        _announce(snapshot_id)
        for sib_id, findings in run.by_sibling.items():
            sib = locked.get(sib_id)
            if sib is None or sib.status != Snapshot.Status.DONE or sib.engine_version != run.version:
                continue
            sib.findings.filter(engine_version=run.version).delete()
            Finding.objects.bulk_create(
                _finding_rows(findings, snapshot=sib, engine_version=run.version, excerpts=run.excerpts)
            )
            if sib_id in run.sibling_not_checked:
                # what the host misses, as seen with the whole cluster
                sib.not_checked = run.sibling_not_checked[sib_id]
                sib.save(update_fields=["not_checked"])
        for sib_id in run.fleet_siblings:
            if sib_id in run.sibling_not_checked and sib_id in locked:
                Snapshot.objects.filter(pk=sib_id).update(not_checked=run.sibling_not_checked[sib_id])
        _write_fleet_findings(run, [locked[pk] for pk in run.fleet_siblings if pk in locked])
    return snapshot


def _write_fleet_findings(run: _Run, members: list[Snapshot]) -> None:
    """Replace the fleet findings of this engine version on the members seen
    through their fleet summaries: one delete and one insert for the whole
    cluster, whatever its size."""
    members = [m for m in members if m.status == Snapshot.Status.DONE and m.engine_version == run.version]
    if not members:
        return
    fleet = [f for f in run.own if is_fleet_rule(f.rule)]
    Finding.objects.filter(
        snapshot_id__in=[m.pk for m in members], engine_version=run.version, rule__startswith="fleet."
    ).delete()
    rows = []
    for member in members:
        rows.extend(_finding_rows(fleet, snapshot=member, engine_version=run.version, excerpts=run.excerpts))
    Finding.objects.bulk_create(rows, batch_size=1000)


def _skipped_entry(item: Any) -> dict:
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return {"rule": str(item[0]), "reason": str(item[1])}
    if isinstance(item, dict):
        return {"rule": str(item.get("rule", "")), "reason": str(item.get("reason", ""))}
    data = _jsonable(item)
    if isinstance(data, dict):
        return {"rule": str(data.get("rule", "")), "reason": str(data.get("reason", ""))}
    return {"rule": str(item), "reason": ""}


def _kind_after_load(snapshot: Snapshot) -> str:
    if snapshot.kind not in (Snapshot.Kind.COLLECTOR, Snapshot.Kind.SOSREPORT):
        return snapshot.kind
    with default_storage.open(_name(snapshot.file), "rb") as fh:
        return archive.archive_kind(fh, snapshot.kind)


# ------------------------------------------------------------------ re-analysis, sweeping


def stale_snapshots(*, older_than: float | None = None, now=None) -> QuerySet[Snapshot]:
    """Snapshots to send to the workers again: ``queued`` for longer than
    ``older_than`` seconds (default ``settings.CASEBOOK_STALE_AFTER_SECONDS``;
    the enqueue was lost, e.g. the broker was down), and ``analyzing`` ones
    whose lease has expired (the worker is gone). A running analysis renews
    its lease, so however long it runs it is never started twice."""
    now = now or timezone.now()
    seconds = settings.CASEBOOK_STALE_AFTER_SECONDS if older_than is None else older_than
    cutoff = now - timedelta(seconds=seconds)
    return Snapshot.objects.filter(
        Q(status=Snapshot.Status.QUEUED, queued_at__lt=cutoff)
        | Q(status=Snapshot.Status.QUEUED, queued_at__isnull=True)
        | Q(status=Snapshot.Status.ANALYZING, lease_expires_at__lt=now)
        # Rows analysed before leases existed (or by an in-process run) have none.
        | Q(status=Snapshot.Status.ANALYZING, lease_expires_at__isnull=True, started_at__lt=cutoff)
    ).order_by("pk")


def sweep_stale(*, older_than: float | None = None, limit: int = 500) -> list[int]:
    """Re-queue stale snapshots and enqueue them again. The row's ``queued_at``
    is reset first so the next sweep does not enqueue it twice while it waits
    in the broker; an expired lease is recorded as the last error (the give-up
    message quotes it). Returns the ids that were enqueued."""
    ids = list(stale_snapshots(older_than=older_than).values_list("pk", flat=True)[:limit])
    enqueued = []
    for pk in ids:
        try:
            with transaction.atomic():
                row = stale_snapshots(older_than=older_than).select_for_update().filter(pk=pk).first()
                if row is None:
                    continue
                fields = {"status": Snapshot.Status.QUEUED, "queued_at": timezone.now()}
                if row.status == Snapshot.Status.ANALYZING:
                    fields.update(lease_owner="", lease_expires_at=None, last_error=LEASE_EXPIRED)
                Snapshot.objects.filter(pk=pk).update(**fields)
        except DatabaseError:
            log.warning("could not re-queue snapshot %s", pk, exc_info=True)
            continue
        if enqueue_analysis(snapshot_id=pk):
            enqueued.append(pk)
    if ids:
        log.info("sweeper re-enqueued %d of %d stale snapshots", len(enqueued), len(ids))
        _count_requeues(len(enqueued))
    return enqueued


def _count_requeues(n: int) -> None:
    """For /metrics (``casebook_sweeper_requeues_total``, counted by
    integrations, which listens); never fails the sweep."""
    try:
        signals.snapshots_requeued.send(sender=Snapshot, count=n)
    except DatabaseError:
        log.warning("could not count the sweeper's re-queues", exc_info=True)


def outdated_snapshots(*, include_current: bool = False) -> QuerySet[Snapshot]:
    """Snapshots analysed by an engine other than the current one."""
    qs = Snapshot.objects.filter(status__in=[Snapshot.Status.DONE, Snapshot.Status.FAILED])
    if not include_current:
        qs = qs.exclude(engine_version=ENGINE_VERSION)
    return qs.order_by("pk")


def reanalyze(
    *, snapshots: Iterable[Snapshot] | None = None, everything: bool = False, enqueue: bool = False
) -> int:
    """Re-run the analysis of ``snapshots`` (default: those analysed by an older
    engine; ``everything``: all finished snapshots). In-process by default;
    with ``enqueue`` the workers do it. Returns the number handled."""
    targets = (
        list(snapshots) if snapshots is not None else list(outdated_snapshots(include_current=everything))
    )
    for snap in targets:
        Snapshot.objects.filter(pk=snap.pk).update(
            status=Snapshot.Status.QUEUED, queued_at=timezone.now(), attempts=0, last_error=""
        )
        if enqueue:
            enqueue_analysis(snapshot_id=snap.pk)
        else:
            analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    return len(targets)


# ------------------------------------------------------------------------------ reading


def visible_snapshots(user) -> QuerySet[Snapshot]:
    """Snapshots a user may see: their own, and those of the teams
    ``accounts.access.visible_teams`` lets them read; support staff see all,
    team-less uploads included (as with sessions)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Snapshot.objects.none()
    if is_support(user):
        return Snapshot.objects.all()
    return Snapshot.objects.filter(Q(owner=user) | Q(team__in=visible_teams(user)))


# --------------------------------------------------------------------------- acknowledgements

MAX_REASON = 2000


class AcknowledgementRejected(ValueError):
    """The request cannot become an acknowledgement (shown to the user)."""


def _audit(*, acknowledgement, user, action: str, new: str = "", old: str = "") -> None:
    """Into the audit trail (kept by the sessions app, which listens)."""
    signals.acknowledgement_changed.send(
        sender=Acknowledgement, acknowledgement=acknowledgement, user=user, action=action, old=old, new=new
    )


@transaction.atomic
def acknowledge(
    *, user, snapshot: Snapshot, rule: str, scope: str, reason: str, expires_at=None
) -> Acknowledgement:
    """Acknowledge ``rule``'s finding on ``snapshot``'s host (``scope="host"``)
    or on every host of its cluster (``scope="cluster"``), for the snapshot's
    team. An active acknowledgement of the same rule and target is replaced
    (withdrawn, then the new one made), each step in the audit trail."""
    reason = (reason or "").strip()
    if not reason:
        raise AcknowledgementRejected("a reason is required")
    if len(reason) > MAX_REASON:
        raise AcknowledgementRejected(f"the reason is longer than {MAX_REASON} characters")
    if expires_at is not None and expires_at <= timezone.now():
        raise AcknowledgementRejected("the expiry is in the past")
    if not snapshot.current_findings().filter(rule=rule).exists():
        raise AcknowledgementRejected("this snapshot has no such finding")
    if scope == "cluster":
        if not snapshot.cluster:
            raise AcknowledgementRejected("this snapshot belongs to no cluster")
        target = {"host": "", "cluster": snapshot.cluster}
    elif scope == "host":
        if not snapshot.host_key:
            raise AcknowledgementRejected("this snapshot has not been analysed")
        target = {"host": snapshot.host_key, "cluster": ""}
    else:
        raise AcknowledgementRejected("the scope is host or cluster")
    owner_scope = scope_of(snapshot)
    for old in Acknowledgement.objects.select_for_update().filter(
        rule=rule, revoked_at__isnull=True, **target, **owner_scope
    ):
        if old.is_active():
            revoke_acknowledgement(user=user, acknowledgement=old)
    ack = Acknowledgement.objects.create(
        rule=rule,
        reason=reason,
        expires_at=expires_at,
        created_by=user,
        snapshot=snapshot,
        **target,
        **owner_scope,
    )
    until = f" (until {expires_at:%Y-%m-%d %H:%M})" if expires_at else ""
    _audit(
        acknowledgement=ack,
        user=user,
        action="acknowledge",
        new=f"{scope} {ack.scope_label}: {reason}{until}",
    )
    return ack


@transaction.atomic
def revoke_acknowledgement(*, user, acknowledgement: Acknowledgement) -> None:
    """Withdraw an acknowledgement: the finding shows again; the row stays."""
    if acknowledgement.revoked_at is not None:
        return
    acknowledgement.revoked_at = timezone.now()
    acknowledgement.revoked_by = user
    acknowledgement.save(update_fields=["revoked_at", "revoked_by"])
    _audit(
        acknowledgement=acknowledgement, user=user, action="acknowledge.revoke", old=acknowledgement.reason
    )


def visible_acknowledgement(user, pk: int) -> Acknowledgement | None:
    """The acknowledgement ``pk`` when ``user`` may read (and so withdraw) it."""
    ack = Acknowledgement.objects.filter(pk=pk).only("rule").first()
    if ack is None:
        return None
    return visible_acknowledgements(user, ack.rule).filter(pk=pk).first()


# --------------------------------------------------------------------------- tickets

TICKET_KEY = re.compile(r"^[A-Za-z0-9][\w.:#/-]{0,63}$")


class TicketRejected(ValueError):
    """Not a ticket reference Casebook accepts (shown to the user)."""


def clean_ticket(key: str, url: str = "") -> tuple[str, str]:
    """A ticket key (``OPS-123``, ``INC0012345``: no spaces, 64 characters at
    most) and an optional http(s) URL, or :class:`TicketRejected`."""
    key, url = (key or "").strip(), (url or "").strip()
    if "\x00" in url:  # PostgreSQL refuses NUL in text; URLValidator lets it through a path
        raise TicketRejected("the ticket URL must be an http(s) address")
    if not TICKET_KEY.match(key):
        raise TicketRejected("a ticket key is a word like OPS-123 (no spaces, at most 64 characters)")
    if url:
        try:
            URLValidator(schemes=["http", "https"])(url)
        except ValidationError as exc:
            raise TicketRejected("the ticket URL must be an http(s) address") from exc
        if len(url) > 500:
            raise TicketRejected("the ticket URL is longer than 500 characters")
    return key, url


def add_ticket(*, user, key: str, url: str = "", snapshot: Snapshot | None = None, session=None) -> TicketRef:
    """Link a snapshot or a session to an external ticket (idempotent per key)."""
    key, url = clean_ticket(key, url)
    owner = {"snapshot": snapshot} if snapshot is not None else {"session": session}
    ticket, created = TicketRef.objects.get_or_create(
        key=key, **owner, defaults={"url": url, "added_by": user}
    )
    if not created and url and ticket.url != url:
        ticket.url = url
        ticket.save(update_fields=["url"])
    return ticket


# --------------------------------------------------------------------------- temp files

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

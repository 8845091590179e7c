"""Analysis: running the engine on a snapshot and writing what it found.

:func:`analyze_snapshot_now` (the Celery task calls it) claims the snapshot
(a lease, :mod:`triage.leases`), parses its upload, rebuilds the other hosts
of its cluster from their stored facts, runs the engine, attributes each
finding to the snapshot of its host and replaces the findings in one
transaction. :func:`sweep_stale` (beat) re-enqueues rows left ``queued`` and
``analyzing`` ones whose lease expired; :func:`reanalyze` re-runs finished ones.

Test hooks: when the environment variable ``CASEBOOK_TEST_ANALYSIS_DELAY`` holds a
number of seconds, :func:`analyze_snapshot_now` sleeps that long after marking
the snapshot ``analyzing``, and ``CASEBOOK_TEST_WRITE_DELAY`` that long after
computing the findings, before writing them. The integration tests use them to
kill a worker in the middle of an analysis or to take the database away from a
finished one; they are never set in production.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.core.files.storage import default_storage
from django.db import DatabaseError, connection, transaction
from django.db.models import F, Q, QuerySet
from django.utils import timezone

from collectors import archive
from collectors.archive import LoadedUpload
from collectors.derived.features import prose_only
from collectors.derived.fleet import FleetProfile, FleetSummary, fleet_profile, profile_to_json
from collectors.facts import SnapshotFacts, to_dict
from config import bulk
from config import celery as broker
from engine import run as engine_run
from engine.rules import Evidence, host_domains, running_domain_names
from engine.run import ENGINE_VERSION, evidence_to_dict, is_fleet_rule
from kb.similarity import similar_cases_for
from triage import signals, uploads
from triage.cluster import no_gc_pauses
from triage.excerpts import cited_excerpts, reading_lines, stored_lines
from triage.leases import (
    ACTIVE_LEASES,
    LEASE_EXPIRED,
    AnalysisTimeout,
    LeaseKeeper,
    lease_holds,
    new_lease_owner,
    release_lease,
)
from triage.models import Finding, Snapshot, SnapshotArtifact
from triage.selectors import (
    TRANSIENT_DB_ERRORS,
    Member,
    cluster_member_rows,
    cluster_members,
    cluster_state,
    host_key_of,
    siblings_among,
    state_of,
    unique_labels,
)
from triage.storage import CHUNK, local_path, stored_name

log = logging.getLogger(__name__)


# A snapshot that keeps killing or failing its worker is given up after this
# many analysis attempts rather than retried forever by the sweeper.
MAX_ATTEMPTS = 5


# Analyses of one cluster that finish concurrently re-run (at most this many
# times) so that the last one to write has seen every host.
CLUSTER_ROUNDS = 3


_CLUSTER_CHANGED = object()
# The run no longer holds the snapshot's lease: another run took it over.
_LEASE_LOST = object()


def _analysis_delay(name: str = "CASEBOOK_TEST_ANALYSIS_DELAY") -> float:
    try:
        return max(0.0, float(os.environ.get(name, "") or 0))
    except ValueError:
        return 0.0


def _read_upload(snapshot: Snapshot, label: str, *, split: bool = True) -> LoadedUpload:
    """The one read of the stored upload and of the evidence added to it since:
    each stored file is opened once, and what the analysis needs of them later
    (cited lines, prose, the archive's kind) is kept in the :class:`LoadedUpload`.
    A transcript whose prompts name other hosts gives several hosts
    (``collectors.archive.load``); the first is the snapshot's own host."""
    name = snapshot.file.name
    if not name or not default_storage.exists(name):
        raise FileNotFoundError(name)
    names = [name]
    names += [
        stored_name(a.file)
        for a in snapshot.added_artifacts.all()
        if default_storage.exists(stored_name(a.file))
    ]
    paths = [local_path(n) for n in names]
    if all(paths):
        return archive.load([p for p in paths if p], split=split, label=label)
    if len(names) == 1:
        with default_storage.open(name, "rb") as fh:
            data = fh.read()
        return archive.load(data, name=snapshot.original_filename or name, split=split, label=label)
    # A remote storage (S3): the files are copied under their stored names.
    with tempfile.TemporaryDirectory(dir=settings.FILE_UPLOAD_TEMP_DIR) as tmp:
        copies: list[str] = []
        for n in names:
            target = os.path.join(tmp, str(len(copies)), os.path.basename(n))
            os.makedirs(os.path.dirname(target))
            with default_storage.open(n, "rb") as src, open(target, "wb") as dst:
                for chunk in iter(lambda: src.read(CHUNK), b""):
                    dst.write(chunk)
            copies.append(target)
        return archive.load(copies, split=split, label=label)


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


def _prose_symptom(reading: LoadedUpload) -> str:
    """The upload's text when it was read as prose only: similar cases can then
    be matched only by what it says (``collectors.derived.features.prose_only``)."""
    if not prose_only(SnapshotFacts(hosts=[reading.host])):
        return ""
    return reading.prose()


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


def _fail(snapshot_id: int, message: str, *, owner: str | None = None) -> None:
    """Mark the snapshot failed; with ``owner``, only while that run still
    holds the lease (a run that lost it writes nothing)."""
    rows = Snapshot.objects.filter(pk=snapshot_id)
    if owner is not None:
        rows = rows.filter(lease_owner=owner, status=Snapshot.Status.ANALYZING)
    updated = rows.update(
        status=Snapshot.Status.FAILED,
        last_error=message[:4000],
        finished_at=timezone.now(),
        lease_owner="",
        lease_expires_at=None,
    )
    if updated:
        _announce(snapshot_id)
    else:
        log.warning("snapshot %s: the lease was lost; the failure (%s) is not recorded", snapshot_id, message)


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
    claimed = _claim_snapshot(snapshot_id, owner=owner, force=force)
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
        result = _analyse_until_cluster_settles(snapshot, owner=owner, keeper=keeper)
        released = True  # _fail / _store_outcome cleared or replaced the lease
        return result
    except (SoftTimeLimitExceeded, AnalysisTimeout):
        log.warning("analysis of snapshot %s ran past its time limit", snapshot_id)
        fail_timed_out(snapshot_id=snapshot_id)
        released = True
        return Snapshot.objects.filter(pk=snapshot_id).first()
    finally:
        if keeper:
            keeper.stop()
        ACTIVE_LEASES.discard(owner)
        if not released:
            # A transient error: give the lease back so the retry (or the
            # sweeper) can start again at once.
            release_lease(snapshot_id=snapshot_id, owner=owner)


class NothingRead(Exception):
    """Nothing of the upload can be analysed: not one line could be read
    (DESIGN.md: such an upload fails with its reason, never "done"), or it
    asks for more work than its budget (``collectors.limits.Limits``:
    ``parsed_artifacts``, ``domains``) and reading stopped."""


def nothing_read(hosts: list) -> str:
    """The reason no line of ``hosts``' input was read (as an artifact, a
    prompt or prose), else ""."""
    if any(h.reading.read_lines or h.reading.prompt_lines or h.reading.prose_lines for h in hosts):
        return ""
    if any(h.reading.artifacts for h in hosts):
        return ""
    # a hostname (from a prompt or an artifact) or any fact is something read
    if any(h.hostname or any(check(h) for check in engine_run.HOST_FACT_CHECKS.values()) for h in hosts):
        return ""
    errors = [e.message for h in hosts for e in h.errors if getattr(e, "message", "")]
    why = f" ({errors[0]})" if errors else ""
    return (
        f"nothing in this upload could be read{why}: upload the command outputs as text (a pasted "
        "transcript or a .txt), or a collector or sosreport archive"
    )


def _analyse_until_cluster_settles(
    snapshot: Snapshot, *, owner: str, keeper: LeaseKeeper | None = None
) -> Snapshot | None:
    """Read, run the rules and store, again (at most ``CLUSTER_ROUNDS`` times)
    while another analysis of the cluster, or evidence added, changed what this
    one saw; the last round stores whatever it found. Precondition: the
    caller holds the snapshot's lease ``owner`` (:func:`_claim_snapshot`); a
    run that lost it stops and stores nothing."""
    snapshot_id = snapshot.pk
    delay = _analysis_delay()
    if delay:
        time.sleep(delay)

    for _round in range(CLUSTER_ROUNDS):
        try:
            # thousands of members' profiles and stand-in hosts live until the
            # rules have run: no cyclic collection walking them all meanwhile
            with no_gc_pauses():
                outcome = _read_and_run_rules(snapshot)
        except (*TRANSIENT_DB_ERRORS, SoftTimeLimitExceeded):
            raise  # AnalysisTimeout is a BaseException: no handler here catches it
        except FileNotFoundError:
            _fail(snapshot_id, "the stored upload is missing from storage", owner=owner)
            return Snapshot.objects.filter(pk=snapshot_id).first()
        except NothingRead as exc:
            _fail(snapshot_id, str(exc), owner=owner)
            return Snapshot.objects.filter(pk=snapshot_id).first()
        except Exception as exc:
            log.exception("analysis of snapshot %s failed", snapshot_id)
            _fail(snapshot_id, f"analysis failed: {type(exc).__name__}: {exc}", owner=owner)
            return Snapshot.objects.filter(pk=snapshot_id).first()
        write_delay = _analysis_delay("CASEBOOK_TEST_WRITE_DELAY")
        if write_delay:
            log.info("snapshot %s analysed; writing in %.0f s (test hook)", snapshot_id, write_delay)
            time.sleep(write_delay)
        if keeper is not None and keeper.lost:
            return _lost(snapshot_id, owner)
        written = _store_retrying(snapshot_id, outcome, owner=owner)
        if written is _LEASE_LOST:
            return _lost(snapshot_id, owner)
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
    written = _store_retrying(snapshot_id, outcome, owner=owner, force_write=True)
    return _lost(snapshot_id, owner) if written is _LEASE_LOST else written


def _lost(snapshot_id: int, owner: str) -> Snapshot | None:
    log.warning(
        "snapshot %s: run %s lost its lease (another run took over); it stops and writes nothing",
        snapshot_id,
        owner,
    )
    return Snapshot.objects.filter(pk=snapshot_id).first()


def _write_retry_delays() -> list[float]:
    """Seconds to wait before each new attempt at the final write: 1, 2, 4 ...
    doubling up to ``CASEBOOK_WRITE_RETRY_MAX_DELAY``, until their sum would
    pass ``CASEBOOK_WRITE_RETRY_SECONDS`` (0: no retry)."""
    budget = float(settings.CASEBOOK_WRITE_RETRY_SECONDS)
    cap = max(0.1, float(settings.CASEBOOK_WRITE_RETRY_MAX_DELAY))
    delays: list[float] = []
    delay = min(1.0, cap)
    while budget > 0 and sum(delays) + delay <= budget:
        delays.append(delay)
        delay = min(delay * 2, cap)
    return delays


def _store_retrying(snapshot_id: int, outcome: _Outcome, *, owner: str, force_write: bool = False):
    """:func:`_store_outcome`, tried again with back-off while the database is
    briefly unavailable (a restart, a fail-over, a terminated backend): a
    finished analysis is not thrown away for that, nor run again from the
    start. The lease keeper keeps renewing meanwhile; the fence in
    :func:`_store_outcome` still applies to every attempt."""
    delays = _write_retry_delays()
    for attempt in range(len(delays) + 1):
        try:
            return _store_outcome(snapshot_id, outcome, owner=owner, force_write=force_write)
        except TRANSIENT_DB_ERRORS:
            if attempt >= len(delays) or connection.in_atomic_block:
                raise  # given up: the task retries the whole run
            log.warning(
                "could not write the analysis of snapshot %s (attempt %d); trying again in %.0f s",
                snapshot_id,
                attempt + 1,
                delays[attempt],
                exc_info=True,
            )
            connection.close()  # the next attempt opens a new connection
            time.sleep(delays[attempt])
    raise AssertionError("unreachable")  # pragma: no cover


GAVE_UP_PREFIX = "gave up after "


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


def _claim_snapshot(snapshot_id: int, *, owner: str, force: bool):
    """Take the snapshot's lease and mark it ``analyzing`` (one attempt more).
    Returns ``_Claimed``, or the snapshot (or None) when there is nothing to
    run: gone, finished, given up, or held by a live lease."""
    with transaction.atomic():
        snapshot = Snapshot.objects.select_for_update().filter(pk=snapshot_id).first()
        if snapshot is None:
            return None
        if not force:
            current = (
                snapshot.status == Snapshot.Status.DONE
                and snapshot.engine_version == engine_run.ENGINE_VERSION
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
    ACTIVE_LEASES.add(owner)
    return _Claimed(snapshot)


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
class _Outcome:
    """What one analysis found, ready to be stored (:func:`_store_outcome`):
    computed outside any transaction, it holds everything the write needs, so
    the write does no I/O but the database."""

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
    # every fleet finding of the run, for the members known by their summary
    # (``own`` holds only those that concern the analysed host)
    fleet: list = dataclasses.field(default_factory=list)
    own_host: str | None = None
    hostname: str | None = None  # the upload's host, as its facts name it
    extra_hosts: list = dataclasses.field(default_factory=list)
    checked: list = dataclasses.field(default_factory=list)
    not_checked: list = dataclasses.field(default_factory=list)
    sibling_not_checked: dict[int, list] = dataclasses.field(default_factory=dict)
    # the added artifacts the run read: one added meanwhile makes it run again
    artifact_ids: list[int] = dataclasses.field(default_factory=list)
    fleet_facts: dict = dataclasses.field(default_factory=dict)
    # members seen through their fleet summaries: only their fleet findings are replaced
    fleet_siblings: list[int] = dataclasses.field(default_factory=list)
    # ``selectors.cluster_state`` when the run listed its siblings: a different
    # state at write time means the cluster changed meanwhile
    cluster_state: tuple = ()
    # what the upload is, as its one read found (an archive's kind from its members)
    kind: str = ""


def fleet_facts_of(host) -> dict:
    """What ``Snapshot.fleet_facts`` stores: the host's fleet profile, which
    says whether it is a guest or runs guests (which other members of its
    cluster an analysis must see in full, for the guest/host rules)."""
    hypervisor = bool(host_domains(host) or running_domain_names(host))
    return profile_to_json(fleet_profile(host, hypervisor=hypervisor))


def _related(profile: FleetProfile | None, *, own_guest: bool, own_physical: bool, hypervisors: bool) -> bool:
    """Whether a member of the cluster (its stored fleet profile) is analysed
    in full with the own hosts (``own_guest``: one of them is a guest,
    ``own_physical``: one is not): a guest with the hosts that may run it, a
    host with the guests it may run (the hosts that run guests, else, as
    ``engine.rules.hypervisor_hosts`` picks them, every physical host:
    ``hypervisors`` says whether the cluster has any). A member without a
    profile (analysed before they were stored) is, as every member was then."""
    if profile is None:
        return True
    if profile.guest:
        return own_physical
    return own_guest and (profile.hypervisor or not hypervisors)


# The analysed members of the clusters this worker process analysed last: scope
# -> (``selectors.state_of`` them, {pk: (member, host key)}). The next analysis
# of the cluster reads only the members that finished since.
_CLUSTER_ROWS: dict[tuple, tuple[tuple, dict[int, tuple[Member, str]]]] = {}
CLUSTER_ROWS_CACHED = 64


def _cluster_siblings(snapshot: Snapshot, *, own_host: str | None) -> tuple[tuple, list[Member]]:
    """(``selectors.cluster_state``, ``selectors.cluster_siblings``) of the
    snapshot, the members listed again only when what this process knows of
    the cluster plus those finished since does not add up to its state (one
    left ``done`` or was deleted, or another process listed them)."""
    state = cluster_state(snapshot)
    if not snapshot.cluster:
        return state, []
    key = (snapshot.cluster, snapshot.owner_id, getattr(snapshot, "team_id", None))
    rows: dict[int, tuple[Member, str]] | None = None
    cached = _CLUSTER_ROWS.get(key)
    if cached is not None and cached[0][2] is not None:
        rows = dict(cached[1])
        if cached[0] != state:
            rows.update((m.pk, (m, k)) for m, k in cluster_member_rows(snapshot, finished_since=cached[0][2]))
        rows.pop(snapshot.pk, None)
        if state_of(rows.values()) != state:
            rows = None
    if rows is None:
        rows = {m.pk: (m, k) for m, k in cluster_member_rows(snapshot)}
    if len(_CLUSTER_ROWS) >= CLUSTER_ROWS_CACHED:
        _CLUSTER_ROWS.clear()
    _CLUSTER_ROWS[key] = (state_of(rows.values()), rows)
    return state, siblings_among(rows.values(), own_host)


def _sibling_hosts(siblings: list[Member], labels: dict[int, str], own_hosts: list) -> tuple[list, list]:
    """The other members of the cluster from what their analyses stored: the
    related ones (``_related``) as typed hosts from their facts, the others as
    their fleet profiles (``_fleet_summary`` gives them to the fleet rules):
    ([(snapshot, HostFacts)], [(member, FleetProfile)]). No upload is read."""
    if not siblings:
        return [], []
    profiles = _stored_profiles(siblings)
    flags = {
        "own_guest": any(h.is_guest for h in own_hosts),
        "own_physical": any(not h.is_guest for h in own_hosts),
        "hypervisors": any(p.hypervisor for p in profiles.values() if p is not None),
    }
    # only members without a profile and guests can be related to own hosts
    # that are all physical: the others are not looked at one by one
    candidates = (
        profiles.items()
        if flags["own_guest"]
        else [(pk, p) for pk, p in profiles.items() if p is None or p.guest]
    )
    related = {pk for pk, profile in candidates if _related(profile, **flags)}
    rows = {
        s.pk: s
        for s in Snapshot.objects.filter(pk__in=related).only(
            "pk", "label", "original_filename", "cluster", "facts"
        )
    }
    full, fleet_only = [], []
    for sib in siblings:
        if sib.pk in related:
            row = rows.get(sib.pk)
            if row is None:
                continue
            host = row.host_facts()
            host.label = labels[sib.pk]
            full.append((row, host))
        elif (profile := profiles.get(sib.pk)) is not None:
            fleet_only.append((sib, profile))
    return full, fleet_only


# The fleet summaries of the clusters this worker process analysed last: scope
# -> the summary of the members its last analysis compared through their
# profiles. The next analysis of the cluster adds, replaces and removes the
# members that differ (usually the one that finished since), so the fleet rules
# never walk every member. An analysis takes the summary out while it uses it:
# another thread of the process starts a summary of its own meanwhile.
_SUMMARIES: dict[tuple, FleetSummary] = {}
_EPOCH = datetime(2000, 1, 1, tzinfo=UTC)


def _member_order(member: Member) -> tuple[int, ...]:
    """The member's place among the members compared through the summary: the
    newest first, as ``selectors.siblings_among`` lists them; after the hosts
    analysed in full (``FleetSummary.of`` places those at ``(0, i)``)."""
    return (1, -((member.created_at - _EPOCH) // timedelta(microseconds=1)), -member.pk)


def _fleet_summary(key: tuple, fleet_only: list, labels: dict[int, str]) -> FleetSummary:
    """The summary of the ``fleet_only`` members ([(member, profile)]) under
    their ``labels``, updated from the one this process kept for the cluster
    ``key``: a member is (re-)added only when its profile or label changed."""
    summary = _SUMMARIES.pop(key, None) or FleetSummary()
    wanted = set()
    known = summary.members
    for member, profile in fleet_only:
        wanted.add(member.pk)
        label = labels[member.pk]
        entry = known.get(member.pk)
        if entry is not None and entry.profile is profile and entry.name == label:
            continue
        if entry is not None:
            summary.remove(member.pk)
        summary.add(member.pk, _member_order(member), label, profile)
    for pk in summary.members.keys() - wanted:
        summary.remove(pk)
    return summary


# Decoded fleet profiles of cluster members, kept by the worker process between
# analyses: pk -> (version, profile, or None when the member stored none). A
# member's profile changes only when its analysis writes it, which sets
# ``finished_at``; so an analysis decodes the profiles of the members that
# finished since the previous one, not those of the whole cluster.
_PROFILE_CACHE: dict[int, tuple[tuple, Any]] = {}
PROFILE_CACHE_SIZE = 20_000


def _profile_version(member: Member) -> tuple:
    return (member.created_at, member.finished_at, member.engine_version)


def _stored_profiles(siblings: list[Member]) -> dict[int, Any]:
    """pk -> the stored fleet profile of each of ``siblings`` (None for one
    that stored none), read and decoded only for
    those not already decoded at their current version. A member gone
    meanwhile is left out."""
    out: dict[int, Any] = {}
    missing: dict[int, Member] = {}
    for sib in siblings:
        cached = _PROFILE_CACHE.get(sib.pk)
        if cached is not None and cached[0] == _profile_version(sib):
            out[sib.pk] = cached[1]
        else:
            missing[sib.pk] = sib
    if not missing:
        return out
    if len(_PROFILE_CACHE) + len(missing) > PROFILE_CACHE_SIZE:
        _PROFILE_CACHE.clear()
    for row in Snapshot.objects.filter(pk__in=list(missing)).only(
        "pk", "label", "original_filename", "cluster", "fleet_facts"
    ):
        profile = row.fleet_profile() if row.fleet_facts else None
        _PROFILE_CACHE[row.pk] = (_profile_version(missing[row.pk]), profile)
        out[row.pk] = profile
    return out


def _read_and_run_rules(snapshot: Snapshot) -> _Outcome:
    """Read the snapshot's upload once (the only one parsed), rebuild the other
    done hosts of its cluster from their stored facts (in full the
    guests/hosts it may pair with, the others from their fleet summaries), run
    the engine and attribute each finding to the snapshot of its host; the
    cited lines, the similar cases and the upload's kind come from that read.
    Writes no rows and takes no lock."""
    t0 = time.monotonic()
    artifact_ids = _added_ids(snapshot)
    reading = _read_upload(snapshot, snapshot.host_label)
    if reading.over_budget:
        raise NothingRead(reading.over_budget)
    host, *extra_hosts = reading.hosts
    unread = nothing_read([host, *extra_hosts])
    if unread:
        raise NothingRead(unread)
    if snapshot.cluster and not host.cluster:
        host.cluster = snapshot.cluster
    state, siblings = _cluster_siblings(snapshot, own_host=host.hostname or snapshot.label)
    labels = unique_labels([snapshot, *siblings])  # the snapshot's own label is kept as is
    # other hosts of the same paste (a guest reached by ssh) are analysed with it
    taken = set(labels.values())
    for extra in extra_hosts:
        while extra.label in taken:
            extra.label = f"{extra.label}'"
        taken.add(extra.label)
    own_hosts = [host, *extra_hosts]
    full, fleet_only = _sibling_hosts(siblings, labels, own_hosts)
    hosts = [*own_hosts, *(h for _s, h in full)]
    loaded = [s for s, _h in full]
    summarised = [s for s, _p in fleet_only]
    key = (snapshot.cluster, snapshot.owner_id, getattr(snapshot, "team_id", None))
    summary = _fleet_summary(key, fleet_only, labels) if fleet_only else None
    parse_seconds = time.monotonic() - t0

    t1 = time.monotonic()
    result = engine_run.analyze(SnapshotFacts(hosts=hosts, fleet_summary=summary))
    rules_seconds = time.monotonic() - t1
    if summary is not None:
        if len(_SUMMARIES) >= CLUSTER_ROWS_CACHED:
            _SUMMARIES.clear()
        _SUMMARIES[key] = summary

    own, by_sibling = _findings_by_snapshot(result.findings, snapshot, loaded, labels, summarised=summarised)
    # A member known by its profile keeps what its own analysis found missing:
    # the engine did not see it, so nothing the run found missing names it.
    not_checked, sibling_not_checked = _split_not_checked(
        result.not_checked, siblings={labels[s.pk]: s.pk for s in loaded}
    )
    excerpts = cited_excerpts(
        result.findings,
        {labels[s.pk]: stored_lines(s) for s in loaded} | {labels[snapshot.pk]: reading_lines(reading, host)},
    )
    return _Outcome(
        checked=sorted(set(result.checked)),
        not_checked=not_checked,
        sibling_not_checked=sibling_not_checked,
        artifact_ids=artifact_ids,
        own_host=host.hostname or snapshot.label,
        hostname=host.hostname,
        excerpts=excerpts,
        sibling_ids=[s.pk for s in siblings],
        own=own,
        by_sibling=by_sibling,
        fleet=[f for f in result.findings if _is_fleet(f)],
        fleet_siblings=[s.pk for s in summarised],
        cluster_state=state,
        facts=to_dict(host),
        fleet_facts=fleet_facts_of(host),
        extra_hosts=[to_dict(h) for h in extra_hosts],
        errors=_unique_errors(_jsonable(e) for h in (host, *extra_hosts) for e in h.errors),
        skipped=[_skipped_entry(s) for s in result.skipped],
        similar=_similar_cases(own, SnapshotFacts(hosts=[host, *extra_hosts]), _prose_symptom(reading)),
        kind=_kind_after_reading(snapshot, reading),
        version=result.engine_version or engine_run.ENGINE_VERSION,
        parse_seconds=parse_seconds,
        rules_seconds=rules_seconds,
    )


def _findings_by_snapshot(
    findings, snapshot: Snapshot, siblings: list[Snapshot], labels: dict[int, str], *, summarised=()
):
    """A finding belongs to the snapshot whose host it names. Fleet findings
    (and any naming no single host, e.g. ``cluster``) concern every host of
    the run and are stored on each (those of the ``summarised`` members are
    written from the own list, see ``_store_outcome``); others without a known host
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
            # a fleet finding that names the hosts it blames is stored on those
            # (the best host of a benchmark spread is its reference, not affected)
            # (one blaming only members known by their summary is none of these)
            affected = set(getattr(f, "affected", ()) or ())
            blamed = {by_label[name] for name in affected if name in by_label}
            if not affected or snapshot.pk in blamed:
                own.append(f)
            for pk, items in by_sibling.items():
                if not affected or pk in blamed:
                    items.append(f)
        elif target is None or target == snapshot.pk:
            own.append(f)
        else:
            by_sibling[target].append(f)
    return own, by_sibling


def _store_outcome(
    snapshot_id: int, outcome: _Outcome, *, owner: str | None = None, force_write: bool = False
):
    """Replace the findings of this engine version on the snapshot and on the
    other hosts of its cluster run, in one transaction that holds the cluster's
    advisory lock (:func:`_lock_cluster`) and the snapshot's row lock: it does
    no I/O but the database (the upload was read before, :func:`_read_upload`).
    Returns ``_CLUSTER_CHANGED`` (nothing written) when the cluster or the
    added evidence changed since ``outcome`` was computed, unless ``force_write``.
    Fenced: with ``owner`` (the lease token of the run), nothing is written
    unless the locked row is still ``analyzing`` under that very lease
    (``_LEASE_LOST``): a run whose lease expired and was taken over never
    overwrites the new run's work nor announces "done" a second time."""
    with transaction.atomic():
        snapshot = Snapshot.objects.filter(pk=snapshot_id).only("pk", "cluster").first()
        if snapshot is None:
            return None
        # One lock per cluster, whatever its size: two analyses of one cluster
        # write one after the other, and the second one sees that the cluster
        # changed (the first one finished) and runs again with it.
        _lock_cluster(snapshot.cluster)
        snapshot = Snapshot.objects.select_for_update().filter(pk=snapshot_id).first()
        if snapshot is None:
            return None
        if owner is not None and (
            snapshot.lease_owner != owner or snapshot.status != Snapshot.Status.ANALYZING
        ):
            return _LEASE_LOST
        changed = cluster_state(snapshot) != outcome.cluster_state
        if not force_write and (changed or _added_ids(snapshot) != outcome.artifact_ids):
            return _CLUSTER_CHANGED
        previous = _fleet_rules_of_cluster(snapshot, outcome.version) if outcome.fleet_siblings else Counter()
        snapshot.findings.filter(engine_version=outcome.version).delete()
        bulk.insert_rows(
            Finding,
            _finding_rows(
                outcome.own, snapshot=snapshot, engine_version=outcome.version, excerpts=outcome.excerpts
            ),
        )
        snapshot.kind = outcome.kind or snapshot.kind
        snapshot.facts = outcome.facts
        snapshot.fleet_facts = outcome.fleet_facts
        snapshot.extra_hosts = outcome.extra_hosts
        snapshot.errors = outcome.errors
        snapshot.skipped = outcome.skipped
        snapshot.checked = outcome.checked
        snapshot.not_checked = outcome.not_checked
        snapshot.similar_cases = outcome.similar
        snapshot.engine_version = outcome.version
        snapshot.host_key = host_key_of(outcome.hostname, snapshot)
        snapshot.parse_seconds = outcome.parse_seconds
        snapshot.rules_seconds = outcome.rules_seconds
        snapshot.status = Snapshot.Status.DONE
        snapshot.finished_at = timezone.now()
        snapshot.last_error = ""
        snapshot.save()
        _announce(snapshot_id)
        members = cluster_members(snapshot) if snapshot.cluster else Snapshot.objects.none()
        loaded = {s.pk: s for s in members.filter(pk__in=list(outcome.by_sibling))}
        for sib_id, findings in outcome.by_sibling.items():
            sib = loaded.get(sib_id)
            if sib is None or sib.status != Snapshot.Status.DONE or sib.engine_version != outcome.version:
                continue
            sib.findings.filter(engine_version=outcome.version).delete()
            bulk.insert_rows(
                Finding,
                _finding_rows(
                    findings, snapshot=sib, engine_version=outcome.version, excerpts=outcome.excerpts
                ),
            )
            if sib_id in outcome.sibling_not_checked:
                # what the host misses, as seen with the whole cluster
                sib.not_checked = outcome.sibling_not_checked[sib_id]
                sib.save(update_fields=["not_checked"])
        for sib_id in outcome.fleet_siblings:
            if sib_id in outcome.sibling_not_checked:
                members.filter(pk=sib_id).update(not_checked=outcome.sibling_not_checked[sib_id])
        if outcome.fleet_siblings:
            _store_fleet_findings(outcome, members, previous=previous)
    return snapshot


def _lock_cluster(cluster: str) -> None:
    """Serialise the writes of one cluster's analyses until the transaction
    ends: a PostgreSQL advisory lock on the cluster's name (one lock, not a
    row lock per member). SQLite serialises every write transaction anyway."""
    if not cluster or connection.vendor != "postgresql":
        return
    digest = hashlib.blake2b(f"casebook.cluster:{cluster}".encode(), digest_size=8).digest()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s)", [int.from_bytes(digest, "big", signed=True)])


# How many members ``_fleet_rules_of_cluster`` reads at a time, newest first.
FLEET_SOURCE_BATCHES = (16, 256, 4096)


def _fleet_rules_of_cluster(snapshot: Snapshot, version: str) -> Counter:
    """The fleet rules (with how many findings each) the cluster's latest
    analysis found (``Snapshot.fleet_findings_source``): what every member's
    rows say it has.

    The member is found as ``fleet_findings_source`` defines it, but without
    one statement that has the database test every member for fleet findings
    before it sorts them (which PostgreSQL does when its statistics are
    missing or old): the members are read the last analysed first, in growing
    batches, each with its fleet findings; a cluster that has any stops at the
    first batch."""
    members = (
        cluster_members(snapshot)
        .filter(status=Snapshot.Status.DONE, engine_version=version)
        .order_by(F("finished_at").desc(nulls_last=True), "-pk")
        .values_list("pk", flat=True)
    )
    start = 0
    for size in (*FLEET_SOURCE_BATCHES, None):
        batch = list(members[start:] if size is None else members[start : start + size])
        found: dict[int, Counter] = {}
        for pk, rule in Finding.objects.filter(
            snapshot_id__in=batch, engine_version=version, rule__startswith="fleet."
        ).values_list("snapshot_id", "rule"):
            found.setdefault(pk, Counter())[rule] += 1
        source = next((pk for pk in batch if pk in found), None)
        if source is not None:
            return found[source]
        if size is None or len(batch) < size:
            break
        start += size
    return Counter()


def _store_fleet_findings(outcome: _Outcome, members: QuerySet[Snapshot], *, previous: Counter) -> None:
    """Give the ``members`` of the cluster seen through their fleet summaries
    (``outcome.fleet_siblings``, those ``done`` by this engine) this run's fleet
    findings.

    What a fleet finding says changes with every member that joins ("1997 of
    2000 hosts"); readers take it from the cluster's latest analysis
    (``Snapshot.current_findings``), whose own rows the caller just wrote. A
    member's own rows say that it has the finding, and are rewritten (one
    delete, one insert for the whole cluster) only when the cluster's set of
    fleet findings changes (``previous``: the set before this run), e.g. when a
    drift appears or goes away. Every member joining writes its own rows, so
    otherwise every member holds them already and nothing is written."""
    fleet = outcome.fleet
    # a finding that names the hosts it blames changes hands as members join:
    # its rows are rewritten every time
    if Counter(f.rule for f in fleet) == previous and not any(getattr(f, "affected", None) for f in fleet):
        return
    members = members.filter(
        pk__in=outcome.fleet_siblings, status=Snapshot.Status.DONE, engine_version=outcome.version
    )
    Finding.objects.filter(
        snapshot__in=members, engine_version=outcome.version, rule__startswith="fleet."
    ).delete()
    copies = []
    for member in members.only("pk", "label", "original_filename"):
        # a finding that names the hosts it blames is theirs alone (``_findings_by_snapshot``)
        mine = [f for f in fleet if not getattr(f, "affected", None) or member.host_label in f.affected]
        copies.extend(
            _finding_rows(mine, snapshot=member, engine_version=outcome.version, excerpts=outcome.excerpts)
        )
    bulk.insert_rows(Finding, copies)


def _unique_errors(errors: Iterable[dict]) -> list[dict]:
    """Each error once, in first-seen order: the machines of one paste carry
    the paste's errors each, and a parser may report one problem several
    times; the report and the page listed every copy."""
    seen: set[str] = set()
    out = []
    for error in errors:
        key = json.dumps(error, sort_keys=True, default=str)
        if key not in seen:
            seen.add(key)
            out.append(error)
    return out


def _skipped_entry(item: Any) -> dict:
    if isinstance(item, (tuple, list)) and len(item) == 2:
        return {"rule": str(item[0]), "reason": str(item[1])}
    if isinstance(item, dict):
        return {"rule": str(item.get("rule", "")), "reason": str(item.get("reason", ""))}
    data = _jsonable(item)
    if isinstance(data, dict):
        return {"rule": str(data.get("rule", "")), "reason": str(data.get("reason", ""))}
    return {"rule": str(item), "reason": ""}


def _kind_after_reading(snapshot: Snapshot, reading: LoadedUpload) -> str:
    """An archive stored as ``collector`` or ``sosreport`` (from its name and
    first bytes) is what its first members show; any other kind stays."""
    if snapshot.kind not in (Snapshot.Kind.COLLECTOR, Snapshot.Kind.SOSREPORT):
        return snapshot.kind
    return reading.kind(snapshot.kind)


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
    """Re-queue stale snapshots and enqueue them again. A ``queued`` snapshot
    whose message still waits in the broker (no worker consumes the queue)
    is left alone: sending it again every sweep only grew the queue. The
    row's ``queued_at`` is reset first so the next sweep does not enqueue it
    twice while it waits in the broker; an expired lease is recorded as the
    last error (the give-up message quotes it). Returns the ids that were
    enqueued."""
    rows = list(stale_snapshots(older_than=older_than).values_list("pk", "status")[:limit])
    queued = [pk for pk, status in rows if status == Snapshot.Status.QUEUED]
    waiting = broker.still_waiting(
        [uploads.waiting_name(pk) for pk in queued], queue=settings.CELERY_TASK_DEFAULT_QUEUE
    )
    ids = [pk for pk, _status in rows if uploads.waiting_name(pk) not in waiting]
    if waiting:
        log.info("sweeper: %d queued snapshots still wait in the broker; not sent again", len(waiting))
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
        if uploads.enqueue_analysis(snapshot_id=pk):
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
            uploads.enqueue_analysis(snapshot_id=snap.pk)
        else:
            analyze_snapshot_now(snapshot_id=snap.pk, force=True)
    return len(targets)

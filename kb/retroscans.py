"""Retro-scans: the writes of their progress and of the hosts they match
(``RetroScan``, ``HostMatch``), the rule catalogue the workers run
(``RuleCatalogue``), and what the case and rule pages read of them.

The scan itself (visiting the newest snapshot of every stored host and
matching its stored facts) is ``triage.retroscan``: snapshots live above kb.
It calls these functions for every write, so a scan's progress and its
matches change together, in one transaction per batch, and only while the
caller holds the scan's lease (a worker that lost it writes nothing).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.db.models import F, QuerySet
from django.utils import timezone

from kb import signals
from kb.access import visible_host_matches
from kb.models import HostMatch, RetroScan, RuleCatalogue

UNFINISHED = (RetroScan.Status.QUEUED, RetroScan.Status.RUNNING)


@dataclass(frozen=True)
class FoundHost:
    """A host a batch matched: whose it is, its key and the snapshot matched."""

    team_id: int | None
    owner_id: int | None
    host_key: str
    snapshot_id: int
    snapshot_label: str
    cluster: str
    score: float | None
    reasons: dict


def host_scope(team_id: int | None, owner_id: int | None) -> str:
    """Whose host it is: its team, else (team-less) its uploader."""
    return f"t{team_id}" if team_id else f"u{owner_id}"


@transaction.atomic
def do_start_scan(*, kind: str, target: str, reason: str, hosts_total: int) -> RetroScan:
    """A scan of ``target`` waiting for a worker. A scan of the same target
    that no worker has started yet is reused (both language versions of a
    case are published at once); one already under way is stopped and its
    first finds forgotten, so the new scan reports them as its own."""
    unfinished = list(
        RetroScan.objects.select_for_update().filter(kind=kind, target=target, status__in=UNFINISHED)
    )
    for scan in unfinished:
        if scan.status == RetroScan.Status.QUEUED and scan.cursor == 0 and scan.reason == reason:
            return scan
    for scan in unfinished:
        HostMatch.objects.filter(kind=kind, target=target, first_scan_id=scan.pk).delete()
        RetroScan.objects.filter(pk=scan.pk).update(
            status=RetroScan.Status.STOPPED, finished_at=timezone.now(), lease_owner="", lease_expires_at=None
        )
    return RetroScan.objects.create(kind=kind, target=target, reason=reason, hosts_total=hosts_total)


@transaction.atomic
def claim_scan(
    *, scan_id: int, owner: str, lease_seconds: float, holder_gone: Callable[[str], bool]
) -> RetroScan | None:
    """Take the scan's lease for ``owner`` (a worker process): None when the
    scan is finished, gone, or leased to another live holder (an expired
    lease, or one whose ``holder_gone``, is taken over)."""
    scan = RetroScan.objects.select_for_update().filter(pk=scan_id).first()
    if scan is None or scan.is_finished:
        return None
    now = timezone.now()
    other = scan.lease_owner and scan.lease_owner != owner
    if other and scan.lease_expires_at and scan.lease_expires_at > now and not holder_gone(scan.lease_owner):
        return None
    scan.status = RetroScan.Status.RUNNING
    scan.lease_owner = owner
    scan.lease_expires_at = now + timedelta(seconds=lease_seconds)
    scan.started_at = scan.started_at or now
    scan.save(update_fields=["status", "lease_owner", "lease_expires_at", "started_at", "updated_at"])
    return scan


def record_batch(
    *,
    scan: RetroScan,
    owner: str,
    cursor: int,
    scanned: int,
    found: list[FoundHost],
    seconds: float,
    lease_seconds: float,
) -> bool:
    """Write one batch: the hosts it matched and the scan's progress up to
    snapshot ``cursor``, together; the lease is renewed. False, and nothing
    written, when the scan is no longer ``owner``'s or moved on meanwhile
    (a batch done twice is written once)."""
    now = timezone.now()
    with transaction.atomic():
        moved = RetroScan.objects.filter(
            pk=scan.pk, lease_owner=owner, cursor=scan.cursor, status=RetroScan.Status.RUNNING
        ).update(
            cursor=cursor,
            hosts_scanned=F("hosts_scanned") + scanned,
            hosts_matched=F("hosts_matched") + len(found),
            batches=F("batches") + 1,
            seconds=F("seconds") + seconds,
            lease_expires_at=now + timedelta(seconds=lease_seconds),
            updated_at=now,
        )
        if not moved:
            return False
        _store_matches(scan, found)
    scan.cursor = cursor
    return True


def _store_matches(scan: RetroScan, found: Iterable[FoundHost]) -> None:
    """Insert or update one row per host; ``first_scan_id`` keeps the scan
    that matched the host first."""
    rows = [
        HostMatch(
            kind=scan.kind,
            target=scan.target,
            team_id=f.team_id,
            owner_id=f.owner_id,
            scope=host_scope(f.team_id, f.owner_id),
            host_key=f.host_key,
            snapshot_id=f.snapshot_id,
            snapshot_label=f.snapshot_label[:200],
            cluster=f.cluster[:200],
            score=f.score,
            reasons=f.reasons,
            scan_id=scan.pk,
            first_scan_id=scan.pk,
        )
        for f in found
    ]
    HostMatch.objects.bulk_create(
        rows,
        update_conflicts=True,
        unique_fields=["kind", "target", "scope", "host_key"],
        update_fields=[
            "team",
            "owner",
            "snapshot_id",
            "snapshot_label",
            "cluster",
            "score",
            "reasons",
            "scan_id",
            "matched_at",
        ],
    )


def release_scan(*, scan: RetroScan, owner: str) -> bool:
    """Give the lease back after a batch, more to do: the next task takes it."""
    return bool(
        RetroScan.objects.filter(pk=scan.pk, lease_owner=owner).update(
            lease_owner="", lease_expires_at=None, updated_at=timezone.now()
        )
    )


@transaction.atomic
def finish_scan(*, scan: RetroScan, owner: str) -> bool:
    """Every host visited: the hosts the scan did not match any more are
    forgotten, and when it matched hosts no earlier scan of its target had,
    ``kb.signals.hosts_matched`` is sent (the teams are told). False when the
    scan is no longer ``owner``'s."""
    now = timezone.now()
    done = RetroScan.objects.filter(pk=scan.pk, lease_owner=owner, status=RetroScan.Status.RUNNING).update(
        status=RetroScan.Status.DONE, finished_at=now, lease_owner="", lease_expires_at=None, updated_at=now
    )
    if not done:
        return False
    HostMatch.objects.filter(kind=scan.kind, target=scan.target).exclude(scan_id=scan.pk).delete()
    scan.refresh_from_db()
    if HostMatch.objects.filter(kind=scan.kind, target=scan.target, first_scan_id=scan.pk).exists():
        signals.hosts_matched.send(sender=RetroScan, scan=scan)
    return True


def stalled_scans(*, older_than: float, now=None) -> list[int]:
    """Unfinished scans no worker holds that have not moved for
    ``older_than`` seconds: the message was lost, or the worker died (its
    lease expired). Oldest first."""
    now = now or timezone.now()
    cutoff = now - timedelta(seconds=older_than)
    rows = RetroScan.objects.filter(status__in=UNFINISHED, updated_at__lt=cutoff).exclude(
        lease_expires_at__gt=now
    )
    return list(rows.order_by("pk").values_list("pk", flat=True))


def note_requeued(*, scan_id: int) -> None:
    """The sweeper sent the scan again: the next sweep waits as long again."""
    RetroScan.objects.filter(pk=scan_id, status__in=UNFINISHED).update(updated_at=timezone.now())


# --- the rule catalogue ---------------------------------------------------------------------


def catalogue_fingerprint(digests: dict[str, str]) -> str:
    return hashlib.sha256(json.dumps(digests, sort_keys=True).encode()).hexdigest()


@transaction.atomic
def record_rule_catalogue(*, digests: dict[str, str]) -> tuple[list[str], list[str]] | None:
    """Store the rules the workers run now (rule ID -> digest) and return
    (added, changed) rule IDs since the catalogue stored before; None the
    first time, when the stored catalogue is the baseline. Several workers
    starting at once queue on the one row: the first records the change,
    the others find nothing new."""
    fingerprint = catalogue_fingerprint(digests)
    row = RuleCatalogue.objects.select_for_update().filter(pk=1).first()
    if row is None:
        try:
            with transaction.atomic():
                RuleCatalogue.objects.create(pk=1, fingerprint=fingerprint, digests=digests)
                return None
        except IntegrityError:  # another worker recorded it meanwhile
            row = RuleCatalogue.objects.select_for_update().get(pk=1)
    if row.fingerprint == fingerprint:
        return [], []
    before = row.digests or {}
    added = sorted(set(digests) - set(before))
    changed = sorted(r for r in set(digests) & set(before) if digests[r] != before[r])
    row.fingerprint, row.digests = fingerprint, digests
    row.save(update_fields=["fingerprint", "digests", "updated_at"])
    return added, changed


# --- what the pages read --------------------------------------------------------------------


def latest_scan(*, kind: str, target: str) -> RetroScan | None:
    """The newest scan of the case group or rule that was not stopped."""
    return (
        RetroScan.objects.filter(kind=kind, target=target)
        .exclude(status=RetroScan.Status.STOPPED)
        .order_by("-created_at", "-pk")
        .first()
    )


def matching_hosts(user, *, kind: str, target: str) -> QuerySet[HostMatch]:
    """The hosts the case group or rule matches that ``user`` may see, by
    team and host."""
    return (
        visible_host_matches(user)
        .filter(kind=kind, target=target)
        .select_related("team", "owner")
        .order_by("team__name", "host_key", "pk")
    )


def new_matches(scan: RetroScan) -> QuerySet[HostMatch]:
    """The hosts ``scan`` matched first (what its notification tells)."""
    return (
        HostMatch.objects.filter(kind=scan.kind, target=scan.target, first_scan_id=scan.pk)
        .select_related("team", "owner")
        .order_by("team_id", "host_key", "pk")
    )

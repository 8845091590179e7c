"""Retro-scans: new knowledge finds its hosts.

When a case is published (``kb.signals.case_published``) or a worker starts
with new or changed rules (:func:`check_rule_catalogue`), the newest
analysed snapshot of every stored host (``triage.fleetview.newest_per_host``)
is matched again, in the background, from the facts stored with it: no
upload is read again. A case matches a host its findings (the rules run
anew over the stored facts; fleet findings as stored, since they compare a
whole cluster) would be offered as a similar case, or whose versions its
stated ranges hold (``kb.similarity.CaseMatcher``); a rule matches a host on
which it fires.

The work is bounded and resumable: snapshots are visited by id, a batch
(``CASEBOOK_RETRO_BATCH``) at a time, each batch's matches and the scan's
cursor written in one transaction under the scan's lease
(``kb.retroscans``); a task works ``CASEBOOK_RETRO_TASK_SECONDS`` and queues
the next. A worker that dies mid-batch leaves the cursor at its last batch:
the broker redelivers the task (``acks_late``) or the sweeper sends the scan
again once its lease expired, and the scan goes on from there. When every
host has been visited, the teams whose hosts it matched first are told
(``kb.signals.hosts_matched``: the desk inbox, webhooks and e-mails).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, QuerySet
from django.urls import reverse

from collectors.facts import SnapshotFacts
from config.enqueue import enqueue
from engine.rules import RuleSpec, rule_title
from engine.rules import load_all as load_rules
from engine.run import analyze, is_fleet_rule, rule_digests
from kb import retroscans
from kb.models import Case, HostMatch, RetroScan
from kb.similarity import CaseMatcher
from triage import leases
from triage.fleetview import newest_per_host
from triage.models import FLEET_PREFIX, Finding, Snapshot

log = logging.getLogger(__name__)

TASK = "triage.tasks.retro_scan"
# What a scan reads of a snapshot: the facts, never the upload.
SCAN_FIELDS = (
    "owner",
    "team",
    "host_key",
    "label",
    "original_filename",
    "cluster",
    "facts",
    "extra_hosts",
    "engine_version",
)


def hosts_to_scan() -> QuerySet[Snapshot]:
    """The newest analysed snapshot of every stored host, by id."""
    return newest_per_host(Snapshot.objects.all()).order_by("pk")


def _enqueue(scan_id: int) -> None:
    try:
        enqueue(TASK, scan_id)
    except Exception:  # the broker is down: the sweeper sends it once it is back
        log.warning("could not enqueue retro-scan %s", scan_id, exc_info=True)


def start_scan(*, kind: str, target: str, reason: str) -> RetroScan:
    """Queue a scan of every stored host for case group or rule ``target``,
    sent to the workers once the caller's transaction commits."""
    scan = retroscans.do_start_scan(
        kind=kind, target=target, reason=reason, hosts_total=hosts_to_scan().count()
    )
    transaction.on_commit(lambda: _enqueue(scan.pk))
    return scan


def case_published(*, case: Case) -> RetroScan | None:
    """A case was published: scan for the hosts it matches (none to look
    for without signature rules or version ranges)."""
    if not (case.signature_rules or case.applies_to):
        return None
    return start_scan(kind=RetroScan.Kind.CASE, target=case.slug, reason=RetroScan.Reason.PUBLISHED)


def check_rule_catalogue() -> list[RetroScan]:
    """Compare the rules this worker runs with the catalogue the workers
    last started with, record it, and scan for every rule added or changed
    since. The first catalogue recorded is the baseline: nothing is new."""
    changes = retroscans.record_rule_catalogue(digests=rule_digests(load_rules()))
    if not changes:
        return []
    added, changed = changes
    scans = [
        start_scan(kind=RetroScan.Kind.RULE, target=r, reason=RetroScan.Reason.RULE_ADDED) for r in added
    ]
    scans += [
        start_scan(kind=RetroScan.Kind.RULE, target=r, reason=RetroScan.Reason.RULE_CHANGED) for r in changed
    ]
    if scans:
        log.info("rule catalogue changed: %d added, %d changed; retro-scans queued", len(added), len(changed))
    return scans


# --- matching one snapshot ------------------------------------------------------------------


def stored_facts(snapshot: Snapshot) -> SnapshotFacts:
    """The snapshot's hosts as its analysis stored them."""
    return SnapshotFacts(hosts=[snapshot.host_facts(), *snapshot.extra_host_facts()])


def _stored_fleet_findings(snapshots: list[Snapshot], rules: Iterable[str] | None = None) -> dict[int, list]:
    """Snapshot id -> its current fleet findings ({"rule", "severity"}), one query."""
    rows = Finding.objects.filter(
        snapshot_id__in=[s.pk for s in snapshots],
        rule__startswith=FLEET_PREFIX,
        engine_version=F("snapshot__engine_version"),
    )
    if rules is not None:
        rows = rows.filter(rule__in=list(rules))
    out: dict[int, list] = {}
    for snapshot_id, rule, severity in rows.values_list("snapshot_id", "rule", "severity"):
        out.setdefault(snapshot_id, []).append({"rule": rule, "severity": severity})
    return out


# (snapshot, its stored fleet findings) -> the match's (score, reasons), or None
Match = Callable[[Snapshot, list], "tuple[float | None, dict] | None"]


@dataclass
class Matcher:
    """What a scan asks of each snapshot, and which fleet findings it reads."""

    match: Match
    fleet_rules: list[str] | None  # None: every fleet rule


def case_matcher(slug: str) -> Matcher | None:
    """Matches hosts as the published case group ``slug`` would be offered
    to them: every host rule run over the stored facts, the stored fleet
    findings beside them. None when the case is not published (any more)."""
    matcher = CaseMatcher(slug)
    if not matcher.can_match:
        return None
    host_rules = {rule_id: spec for rule_id, spec in load_rules().items() if not is_fleet_rule(rule_id)}
    decisive = {rule_id: spec for rule_id, spec in host_rules.items() if rule_id in matcher.rules}

    def match(snapshot: Snapshot, fleet: list) -> tuple[float | None, dict] | None:
        facts = stored_facts(snapshot)
        # Only a host on which one of the case's rules fires can qualify: the
        # whole catalogue (what the score weighs) runs on those hosts alone.
        findings = [*analyze(facts, rules=decisive).findings, *fleet]
        if matcher.qualifies(findings):
            findings = [*analyze(facts, rules=host_rules).findings, *fleet]
        found = matcher.match(findings, facts)
        if found is None:
            return None
        return found["score"], {"rules": found["rules"], "versions": found["versions"]}

    return Matcher(match=match, fleet_rules=None)


def rule_matcher(rule_id: str) -> Matcher | None:
    """Matches hosts on which rule ``rule_id`` fires over the stored facts (a
    fleet rule: holds its finding as stored). None for a rule no longer
    registered."""
    spec: RuleSpec | None = load_rules().get(rule_id)
    if spec is None:
        return None
    if is_fleet_rule(rule_id):
        return Matcher(
            match=lambda _snapshot, fleet: (None, {"rules": [rule_id]}) if fleet else None,
            fleet_rules=[rule_id],
        )
    only = {rule_id: spec}

    def match(snapshot: Snapshot, _fleet: list) -> tuple[float | None, dict] | None:
        fired = [f for f in analyze(stored_facts(snapshot), rules=only).findings if f.rule == rule_id]
        if not fired:
            return None
        return round(max(f.impact for f in fired), 3), {"rules": [rule_id]}

    return Matcher(match=match, fleet_rules=[])


def matcher_for(scan: RetroScan) -> Matcher | None:
    return case_matcher(scan.target) if scan.kind == RetroScan.Kind.CASE else rule_matcher(scan.target)


# --- running a scan -------------------------------------------------------------------------


def next_batch(cursor: int, size: int) -> list[Snapshot]:
    """The next ``size`` snapshots to visit after snapshot id ``cursor``."""
    return list(hosts_to_scan().filter(pk__gt=cursor).only(*SCAN_FIELDS)[:size])


def match_batch(snapshots: list[Snapshot], matcher: Matcher) -> list[retroscans.FoundHost]:
    """The hosts of ``snapshots`` that ``matcher`` matches."""
    fleet = _stored_fleet_findings(snapshots, matcher.fleet_rules) if matcher.fleet_rules != [] else {}
    found = []
    for snapshot in snapshots:
        result = matcher.match(snapshot, fleet.get(snapshot.pk, []))
        if result is None:
            continue
        score, reasons = result
        found.append(
            retroscans.FoundHost(
                team_id=snapshot.team_id,
                owner_id=snapshot.owner_id,
                host_key=snapshot.host_key,
                snapshot_id=snapshot.pk,
                snapshot_label=snapshot.display_name,
                cluster=snapshot.cluster,
                score=score,
                reasons=reasons,
            )
        )
    return found


@dataclass
class Limits:
    """How much one task does: hosts per batch, seconds before handing over."""

    batch: int
    seconds: float
    lease: float

    @classmethod
    def from_settings(cls) -> Limits:
        return cls(
            batch=max(1, settings.CASEBOOK_RETRO_BATCH),
            seconds=settings.CASEBOOK_RETRO_TASK_SECONDS,
            lease=settings.CASEBOOK_RETRO_LEASE_SECONDS,
        )


def run_scan(*, scan_id: int, limits: Limits | None = None) -> str:
    """Work on scan ``scan_id`` for up to ``limits.seconds``: "done" when
    every host was visited, "continued" when the next task was queued,
    "skipped" when another worker holds it or it is finished, "lost" when
    it was taken over meanwhile."""
    limits = limits or Limits.from_settings()
    owner = leases.new_lease_owner()
    leases.ACTIVE_LEASES.add(owner)
    try:
        scan = retroscans.claim_scan(
            scan_id=scan_id, owner=owner, lease_seconds=limits.lease, holder_gone=leases.owner_gone
        )
        if scan is None:
            return "skipped"
        return _visit_hosts(scan, owner, limits)
    finally:
        leases.ACTIVE_LEASES.discard(owner)


def _visit_hosts(scan: RetroScan, owner: str, limits: Limits) -> str:
    """Batches until every host was visited or the task's time is up."""
    matcher = matcher_for(scan)
    started = time.monotonic()
    while True:
        began = time.monotonic()
        batch = next_batch(scan.cursor, limits.batch) if matcher is not None else []
        if not batch or matcher is None:  # every host visited (none: nothing to match on)
            return "done" if retroscans.finish_scan(scan=scan, owner=owner) else "lost"
        found = match_batch(batch, matcher)
        written = retroscans.record_batch(
            scan=scan,
            owner=owner,
            cursor=batch[-1].pk,
            scanned=len(batch),
            found=found,
            seconds=time.monotonic() - began,
            lease_seconds=limits.lease,
        )
        if not written:
            log.warning("retro-scan %s was taken over; this worker stops", scan.pk)
            return "lost"
        if time.monotonic() - started >= limits.seconds:
            retroscans.release_scan(scan=scan, owner=owner)
            _enqueue(scan.pk)
            return "continued"


def requeue_stalled(*, older_than: float | None = None) -> list[int]:
    """The sweeper's part: send again the scans no worker holds that have
    not moved for ``older_than`` seconds (default
    ``CASEBOOK_STALE_AFTER_SECONDS``): a lost message, a dead worker."""
    seconds = settings.CASEBOOK_STALE_AFTER_SECONDS if older_than is None else older_than
    ids = retroscans.stalled_scans(older_than=seconds)
    for scan_id in ids:
        retroscans.note_requeued(scan_id=scan_id)
        _enqueue(scan_id)
    if ids:
        log.info("sweeper re-enqueued %d stalled retro-scans", len(ids))
    return ids


def scan_now(*, scan_id: int, limits: Limits | None = None) -> str:
    """Run a scan to its end in this process (``manage.py retroscan --now``)."""
    limits = limits or Limits.from_settings()
    forever = Limits(batch=limits.batch, seconds=float("inf"), lease=limits.lease)
    return run_scan(scan_id=scan_id, limits=forever)


def describe(scan: RetroScan) -> dict[str, Any]:
    """A scan's progress as ``manage.py retroscan`` prints it."""
    return {
        "id": scan.pk,
        "kind": scan.kind,
        "target": scan.target,
        "status": scan.status,
        "hosts": f"{scan.hosts_scanned}/{scan.hosts_total}",
        "matched": scan.hosts_matched,
        "seconds": round(scan.seconds, 2),
    }


# --- what a finished scan tells -------------------------------------------------------------


@dataclass(frozen=True)
class Subject:
    """What a scan was about, as its notifications name it (in English: the
    reader-independent words of the event, like the other inbox items)."""

    title: str
    url: str  # the list of matching hosts on the case or rule page


def subject_of(scan: RetroScan) -> Subject:
    if scan.kind == RetroScan.Kind.RULE:
        title = rule_title(scan.target, False) or scan.target
        url = reverse("triage:rule_detail", args=[scan.target]) + "#retro-hosts"
        return Subject(title=f"{scan.target}: {title}", url=url)
    case = Case.objects.filter(slug=scan.target).order_by("language").only("title").first()
    url = reverse("kb:case_detail", args=[scan.target]) + "#matching-hosts"
    return Subject(title=case.title if case is not None else scan.target, url=url)


def news_by_scope(scan: RetroScan) -> list[tuple[Any, Any, list[HostMatch]]]:
    """(team, owner, hosts) of each team (or, team-less, uploader) whose hosts
    the scan matched first: one notification each."""
    grouped: dict[str, tuple[Any, Any, list[HostMatch]]] = {}
    for match in retroscans.new_matches(scan):
        team = match.team if match.team_id else None
        entry = grouped.setdefault(match.scope, (team, None if team else match.owner, []))
        entry[2].append(match)
    return list(grouped.values())

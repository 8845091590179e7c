"""A host's history: every snapshot of one host (its team and
:attr:`triage.models.Snapshot.host_key`) in time, the findings that appeared
and cleared between them, and what changed in its facts.

A finding *cleared* only when the later snapshot checked its rule and it did
not fire; a rule the later snapshot could not check is *not re-checked*, never
cleared (DESIGN.md, "What a result claims")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Prefetch, QuerySet
from django.http import Http404
from django.urls import reverse

from engine.severity import severity_rank
from triage.models import Acknowledgement, Finding, Snapshot
from triage.selectors import rechecked, visible_snapshots
from troubleshoot.access import visible_sessions
from troubleshoot.models import Session

# The team part of a host's address when its snapshots belong to no team.
NO_TEAM = "-"
# Facts too bulky or too volatile to compare line by line on the diff page.
DIFF_SKIPPED = frozenset({"reading", "sources", "errors", "cpu_usage", "processes", "interrupts", "softirqs"})
DIFF_MAX_ROWS = 400


@dataclass
class Change:
    """A rule's finding that appeared, cleared or could not be re-checked."""

    rule: str
    severity: str
    title: str

    @property
    def severity_label(self) -> str:
        return str(Finding.Severity(self.severity).label)


@dataclass
class HostSnapshot:
    """One snapshot of the host, with what changed since the one before."""

    snapshot: Snapshot
    findings: list[Finding]
    appeared: list[Change] = field(default_factory=list)
    cleared: list[Change] = field(default_factory=list)
    not_rechecked: list[Change] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        counts = {"critical": 0, "warning": 0, "info": 0}
        for f in self.findings:
            counts[f.severity] = counts.get(f.severity, 0) + 1
        return counts


@dataclass
class FactChange:
    path: str
    before: Any
    after: Any


def host_snapshots(user, *, team: str, host: str) -> QuerySet[Snapshot]:
    """The snapshots of ``host`` in ``team`` (a slug, or :data:`NO_TEAM`) that
    ``user`` may see, oldest first, with their current findings; 404 when none."""
    qs = visible_snapshots(user).filter(host_key=host)
    qs = qs.filter(team__isnull=True) if team == NO_TEAM else qs.filter(team__slug=team)
    current = Finding.objects.order_by("-impact", "rule", "id")
    qs = qs.select_related("team", "owner").prefetch_related(Prefetch("findings", queryset=current))
    qs = qs.order_by("created_at", "id")
    if not qs.exists():
        raise Http404("No such host.")
    return qs


def _current(snapshot: Snapshot) -> list[Finding]:
    """The findings of the engine version that last analysed ``snapshot``."""
    return [f for f in snapshot.findings.all() if f.engine_version == snapshot.engine_version]


def _changes(rules: set[str], by_rule: dict[str, Finding]) -> list[Change]:
    found = [by_rule[r] for r in rules]
    found.sort(key=lambda f: (severity_rank(f.severity), f.rule))
    return [Change(rule=f.rule, severity=f.severity, title=f.title) for f in found]


def history(snapshots: Iterable[Snapshot]) -> list[HostSnapshot]:
    """Each analysed snapshot with the findings that appeared, cleared or could
    not be re-checked since the analysed snapshot before it."""
    rows: list[HostSnapshot] = []
    previous: dict[str, Finding] | None = None
    for snap in snapshots:
        findings = _current(snap) if snap.status == Snapshot.Status.DONE else []
        row = HostSnapshot(snapshot=snap, findings=findings)
        if snap.status == Snapshot.Status.DONE:
            now = {f.rule: f for f in findings}
            if previous is not None:
                gone = set(previous) - set(now)
                checked = {rule for rule in gone if rechecked(rule, snap)}
                row.appeared = _changes(set(now) - set(previous), now)
                row.cleared = _changes(checked, previous)
                row.not_rechecked = _changes(gone - checked, previous)
            previous = now
        rows.append(row)
    return rows


def acknowledgements(snapshots: list[Snapshot], *, host: str) -> QuerySet[Acknowledgement]:
    """Acknowledgements covering the host: its own, and its clusters' in its team."""
    team = snapshots[-1].team
    clusters = {s.cluster for s in snapshots if s.cluster}
    qs = Acknowledgement.objects.filter(team=team).select_related("created_by")
    by_host = qs.filter(host=host)
    by_cluster = qs.filter(host="", cluster__in=clusters) if clusters else qs.none()
    return (by_host | by_cluster).order_by("-created_at")


def sessions(user, snapshots: list[Snapshot]) -> QuerySet[Session]:
    """The troubleshooting sessions, visible to ``user``, that hold one of the snapshots."""
    ids = [s.pk for s in snapshots]
    return visible_sessions(user).filter(attachments__snapshot_id__in=ids).distinct().order_by("-created_at")


def _flatten(value: Any, prefix: str, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for key in sorted(value):
            if not prefix and key in DIFF_SKIPPED:
                continue
            _flatten(value[key], f"{prefix}.{key}" if prefix else str(key), out)
    elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        for i, item in enumerate(value):
            name = item.get("name") or item.get("node") or item.get("id")
            _flatten(item, f"{prefix}[{name if name is not None else i}]", out)
    else:
        out[prefix] = value


def facts_diff(before: dict[str, Any], after: dict[str, Any]) -> list[FactChange]:
    """The facts that differ between two snapshots' stored facts, path by path
    (``numa.nodes[1].free_kb``); bulky per-line facts (the reading, processes,
    per-CPU samples) are left out. At most :data:`DIFF_MAX_ROWS` rows."""
    old: dict[str, Any] = {}
    new: dict[str, Any] = {}
    _flatten(before or {}, "", old)
    _flatten(after or {}, "", new)
    changes = [
        FactChange(path=path, before=old.get(path), after=new.get(path))
        for path in sorted(set(old) | set(new))
        if old.get(path) != new.get(path)
    ]
    return changes[:DIFF_MAX_ROWS]


def host_path(*, team_slug: str | None, host_key: str) -> str:
    """The host's page: ``/hosts/<team>/<host>/`` (``-`` for no team)."""
    return reverse("desk:host_detail", args=[team_slug or NO_TEAM, host_key])


def team_slug(snapshot: Snapshot) -> str | None:
    """The slug of the team ``snapshot`` belongs to (None without a team)."""
    return snapshot.team.slug if snapshot.team is not None else None

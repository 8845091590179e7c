"""Rules across the fleet: which hosts a rule affects now, how that changed,
and which findings are acknowledged.

A *host* is what :func:`triage.selectors.host_key` says it is (the hostname
the facts carry, else the upload's label), within the team whose snapshots
it is (a team-less snapshot: within its owner). The analysis stores that key
on the snapshot (``Snapshot.host_key``), so "the newest analysed snapshot of
each host" is a NOT EXISTS over the ``snapshot_host_newest`` index and every
query here is a fixed number of statements whatever the fleet's size.
Read-only: the writes (acknowledging, withdrawing) are in
``triage.acknowledgements``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db.models import Count, Exists, F, OuterRef, Q, QuerySet
from django.db.models.functions import TruncWeek
from django.utils import timezone

from accounts.access import is_support, visible_teams
from triage.models import Acknowledgement, Finding, Snapshot

WEEKS = 26  # the rule page's counts over time
MAX_HOSTS = 200  # affected hosts in one API answer (the count is exact; hosts_truncated says so)
HOSTS_PER_PAGE = 100  # affected hosts per page of the rule page


def newest_per_host(snapshots: QuerySet[Snapshot]) -> QuerySet[Snapshot]:
    """The analysed ``snapshots`` that no later analysed snapshot of the same
    host (same key, same team, or same owner when team-less) replaces."""
    later = Snapshot.objects.filter(status=Snapshot.Status.DONE, host_key=OuterRef("host_key")).filter(
        Q(created_at__gt=OuterRef("created_at")) | Q(created_at=OuterRef("created_at"), pk__gt=OuterRef("pk"))
    )
    same_team = later.filter(team_id=OuterRef("team_id"))
    same_owner = later.filter(team__isnull=True, owner_id=OuterRef("owner_id"))
    return (
        snapshots.filter(status=Snapshot.Status.DONE)
        .exclude(host_key="")
        .filter((Q(team__isnull=False) & ~Exists(same_team)) | (Q(team__isnull=True) & ~Exists(same_owner)))
    )


def _current(rule: str | None = None) -> QuerySet[Finding]:
    """Findings of the engine version that last analysed their snapshot."""
    qs = Finding.objects.filter(engine_version=F("snapshot__engine_version"))
    return qs.filter(rule=rule) if rule else qs


def affected_counts(visible: QuerySet[Snapshot]) -> dict[str, int]:
    """Rule ID -> how many hosts (of ``visible``) have it in their newest snapshot."""
    rows = (
        _current()
        .filter(snapshot__in=newest_per_host(visible).values("pk"))
        .values("rule")
        .annotate(n=Count("snapshot", distinct=True))
    )
    return {row["rule"]: row["n"] for row in rows}


def affected_snapshots(visible: QuerySet[Snapshot], rule: str) -> QuerySet[Snapshot]:
    """The newest snapshot of every host of ``visible`` whose findings include ``rule``."""
    has_rule = _current(rule).filter(snapshot_id=OuterRef("pk"))
    return (
        newest_per_host(visible)
        .filter(Exists(has_rule))
        .select_related("team", "owner")
        .only(*Snapshot.SUMMARY_FIELDS, "host_key", "team__name", "team__slug", "owner__username")
        .order_by("cluster", "host_key", "pk")
    )


def weekly_counts(visible: QuerySet[Snapshot], rule: str, *, weeks: int = WEEKS) -> list[tuple[object, int]]:
    """(week start, hosts whose snapshots of that week had the finding), oldest
    first, over the last ``weeks`` weeks; weeks without any are left out."""
    since = timezone.now() - timedelta(weeks=weeks)
    rows = (
        _current(rule)
        .filter(snapshot__in=visible.filter(status=Snapshot.Status.DONE, created_at__gte=since).values("pk"))
        .annotate(week=TruncWeek("snapshot__created_at"))
        .values("week")
        .annotate(n=Count("snapshot__host_key", distinct=True))
        .order_by("week")
    )
    return [(row["week"], row["n"]) for row in rows]


def _active(qs: QuerySet[Acknowledgement]) -> QuerySet[Acknowledgement]:
    now = timezone.now()
    return qs.filter(revoked_at__isnull=True).filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))


def scope_of(snapshot: Snapshot) -> dict:
    """The acknowledgement scope a snapshot belongs to: its team, or its owner when team-less."""
    if snapshot.team_id:
        return {"team_id": snapshot.team_id, "owner_id": None}
    return {"team_id": None, "owner_id": snapshot.owner_id}


def covering_acknowledgements(snapshots: list[Snapshot]) -> dict[int, dict[str, Acknowledgement]]:
    """Snapshot pk -> rule ID -> the active acknowledgement that covers the
    snapshot's host (by host key or by cluster, within its scope), the newest
    where several do. One query for the whole list."""
    hosts = {s.host_key for s in snapshots if s.host_key}
    clusters = {s.cluster for s in snapshots if s.cluster}
    if not hosts and not clusters:
        return {}
    acks = _active(Acknowledgement.objects.filter(Q(host__in=hosts) | Q(cluster__in=clusters)))
    # (scope, host or cluster) -> [acknowledgement], newest first
    by_target: dict[tuple, list[Acknowledgement]] = {}
    for ack in acks.select_related("created_by").order_by("-created_at", "-pk"):
        target = ("h", ack.host) if ack.host else ("c", ack.cluster)
        by_target.setdefault((ack.team_id, ack.owner_id, *target), []).append(ack)
    out: dict[int, dict[str, Acknowledgement]] = {}
    for snap in snapshots:
        of = scope_of(snap)
        scope = (of["team_id"], of["owner_id"])
        covering = by_target.get((*scope, "h", snap.host_key), []) + by_target.get(
            (*scope, "c", snap.cluster), []
        )
        for ack in sorted(covering, key=lambda a: (a.created_at, a.pk), reverse=True):
            out.setdefault(snap.pk, {}).setdefault(ack.rule, ack)
    return out


def acknowledgements_for(snapshot: Snapshot) -> dict[str, Acknowledgement]:
    """Rule ID -> the active acknowledgement that covers ``snapshot``'s host
    (by host key or by cluster), the newest where several do. One query."""
    return covering_acknowledgements([snapshot]).get(snapshot.pk, {})


def discount_acknowledged(snapshots: list[Snapshot]) -> None:
    """Take acknowledged findings out of the per-severity counts that
    ``triage.views`` annotates (``n_critical``, ``n_warning``, ``n_info``) and
    count them in ``n_acknowledged``: a list's badges show what is still open.
    Two queries for the whole page."""
    acks = covering_acknowledgements(snapshots)
    for snap in snapshots:
        snap.n_acknowledged = 0  # type: ignore[attr-defined]
    if not acks:
        return
    rules = {rule for by_rule in acks.values() for rule in by_rule}
    rows = Finding.objects.filter(
        snapshot__in=[s for s in snapshots if s.pk in acks],
        engine_version=F("snapshot__engine_version"),
        rule__in=rules,
    ).values_list("snapshot_id", "rule", "severity")
    by_pk = {s.pk: s for s in snapshots}
    for snapshot_id, rule, severity in rows:
        snap = by_pk[snapshot_id]
        if rule not in acks[snapshot_id]:
            continue
        name = f"n_{severity}"
        if getattr(snap, name, 0):
            setattr(snap, name, getattr(snap, name) - 1)
            snap.n_acknowledged += 1  # type: ignore[attr-defined]


def split_acknowledged(
    snapshot: Snapshot, findings: list[Finding]
) -> tuple[list[Finding], list[tuple[Finding, Acknowledgement]]]:
    """``findings`` (in their order) as (open ones, [(finding, its acknowledgement)])."""
    acks = acknowledgements_for(snapshot) if findings else {}
    open_: list[Finding] = []
    acknowledged: list[tuple[Finding, Acknowledgement]] = []
    for f in findings:
        ack = acks.get(f.rule)
        if ack is None:
            open_.append(f)
        else:
            acknowledged.append((f, ack))
    return open_, acknowledged


def visible_acknowledgements(user, rule: str) -> QuerySet[Acknowledgement]:
    """Every acknowledgement of ``rule`` (active, expired or withdrawn) in a
    scope the user may read: their teams', and their own team-less ones."""
    qs = Acknowledgement.objects.filter(rule=rule).select_related("created_by", "revoked_by", "team")
    if not is_support(user):
        qs = qs.filter(Q(team__in=visible_teams(user)) | Q(team__isnull=True, owner=user))
    return qs.order_by("-created_at", "-pk")


@dataclass
class AffectedHost:
    snapshot: Snapshot
    acknowledgement: Acknowledgement | None


def with_acknowledgements(rule: str, snapshots: list[Snapshot]) -> list[AffectedHost]:
    """Each snapshot with the active acknowledgement of ``rule`` covering it,
    read in one query for the whole list."""
    if not snapshots:
        return []
    hosts = {s.host_key for s in snapshots}
    clusters = {s.cluster for s in snapshots if s.cluster}
    acks = _active(Acknowledgement.objects.filter(rule=rule)).filter(
        Q(host__in=hosts) | Q(cluster__in=clusters)
    )
    by_key: dict[tuple, Acknowledgement] = {}
    for ack in acks.select_related("created_by", "revoked_by", "team").order_by(
        "created_at", "pk"
    ):  # newest wins
        by_key[
            (ack.team_id, ack.owner_id, "h", ack.host)
            if ack.host
            else (ack.team_id, ack.owner_id, "c", ack.cluster)
        ] = ack
    out = []
    for snap in snapshots:
        scope = scope_of(snap)
        team, owner = scope["team_id"], scope["owner_id"]
        found = by_key.get((team, owner, "h", snap.host_key))
        if found is None and snap.cluster:
            found = by_key.get((team, owner, "c", snap.cluster))
        out.append(AffectedHost(snapshot=snap, acknowledgement=found))
    return out

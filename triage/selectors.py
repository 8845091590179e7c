"""Reading snapshots: which ones a user may see, which host a snapshot is of,
the members of its cluster, the remedies and "sounds like" cases filled from
its stored facts. Nothing here writes; nothing re-parses an upload.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import InterfaceError, OperationalError
from django.db.models import Count, Max, Q, QuerySet, Sum
from django.db.models.fields.json import KT
from django.db.models.functions import Coalesce

from accounts.access import Reach, reach
from collectors.derived.citing import artifact_file
from collectors.derived.features import snapshot_features
from collectors.facts import HostFacts, Reading, SnapshotFacts, to_dict
from engine.remedies import remedies_for_host
from engine.remedies.libvirt import RULES as DOMAIN_RULES
from engine.remedies.libvirt import domain_remedy
from kb.authoring import SnapshotAnalysis, environment_of, snapshot_unusable
from kb.similarity import QUALIFYING_SEVERITIES, known_issues_for, sounds_like
from triage.models import Snapshot, host_label_of
from triage.storage import upload_text

log = logging.getLogger(__name__)


# Hosts of one cluster analysed together with a new snapshot (most recent first).
# The fleet rules compare them through their stored fleet summaries, so a
# cluster's size costs a database read per analysis, never a parse.
MAX_CLUSTER_HOSTS = 5000


# Database errors worth retrying: the connection dropped, a deadlock, a failover.
TRANSIENT_DB_ERRORS = (OperationalError, InterfaceError)


def visible_snapshots(user, *, scope: Reach | None = None) -> QuerySet[Snapshot]:
    """Snapshots a user may see: their own, and those of the teams
    ``accounts.access.visible_teams`` lets them read; support staff see all,
    team-less uploads included (as with sessions). ``scope``: the user's
    ``accounts.access.reach`` when the caller already asked it."""
    scope = scope or reach(user)
    if scope.nothing:
        return Snapshot.objects.none()
    if scope.everything:
        return Snapshot.objects.all()
    return Snapshot.objects.filter(Q(owner_id=scope.user_id) | Q(team_id__in=scope.team_ids))


def load_host_facts(snapshot: Snapshot):
    """The snapshot's host from its stored facts (``Snapshot.host_facts``):
    the upload is not parsed again."""
    return snapshot.host_facts()


def host_remedies(
    snapshot: Snapshot, rules: set[str] | None = None, *, host: HostFacts | None = None
) -> list:
    """Host-level changes for the snapshot's current findings (sysctl.d files,
    my.cnf lines, OceanBase statements, tc, IRQ affinity ...), filled from the
    stored facts (``host``: ``snapshot.host_facts()`` when the caller has it).
    Guests have their own patch (:func:`guest_remedy`)."""
    if rules is None:
        rules = set(snapshot.current_findings().values_list("rule", flat=True))
    host_rules = set(rules) - set(DOMAIN_RULES)
    if not host_rules or not snapshot.facts:
        return []
    return remedies_for_host(host=host or snapshot.host_facts(), rules=host_rules)


@dataclass(frozen=True)
class HostReading:
    """What Casebook read of one host of a snapshot: "What Casebook read" on
    the report and ``hosts`` in the API, built once by :func:`host_readings`."""

    hostname: str | None
    host: str  # the host as the report names it: its hostname, else its label
    reading: Reading
    # each of ``reading.artifacts`` as stored, with the file its block came
    # from ("file": the upload or an added artifact; line numbers are per file)
    artifacts: list[dict[str, Any]]
    # False: the snapshot holds no facts yet (the API lists no host then)
    recorded: bool = True
    # issue 25: facts this host's artifacts disagree on, why the loader split
    # this machine off a paste, and the domain XMLs the paste cut
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    split_reason: str | None = None
    cut_domains: list[dict[str, Any]] = field(default_factory=list)
    cut_tables: list[dict[str, Any]] = field(default_factory=list)


def _host_reading(host: HostFacts, name: str, *, recorded: bool = True) -> HostReading:
    files = {
        (entry.get("command"), entry.get("start_line")): artifact_file(entry)
        for entry in host.artifacts
        if entry.get("start_line")
    }
    return HostReading(
        hostname=host.hostname or None,
        host=host.hostname or host.label or name,
        reading=host.reading,
        artifacts=[
            {**to_dict(a), "file": files.get((a.command, a.start_line), "")} for a in host.reading.artifacts
        ],
        recorded=recorded,
        conflicts=[to_dict(c) for c in host.conflicts],
        split_reason=host.split_reason,
        cut_domains=[
            {"domain": d.name or d.uuid or "?", "cut_in": d.cut_in, "truncated_after": d.truncated_after}
            for d in host.domains
            if d.cut
        ],
        cut_tables=_cut_tables(host),
    )


def _cut_tables(host: HostFacts) -> list[dict[str, Any]]:
    usage = host.cpu_usage
    if usage is None or not usage.cut:
        return []
    shown = len([c for c in usage.per_cpu if c.cpu != "all"])
    return [
        {
            "table": usage.tool or "top",
            "shown": shown,
            "of": usage.of_cpus,
            "truncated_after": usage.truncated_after,
        }
    ]


def host_readings(snapshot: Snapshot, host: HostFacts | None = None) -> list[HostReading]:
    """Per host of the snapshot (the upload's host, ``host`` when the caller
    has read it, and any further host of the same paste), what Casebook read."""
    own = _host_reading(host or snapshot.host_facts(), snapshot.host_label, recorded=bool(snapshot.facts))
    return [own, *(_host_reading(extra, snapshot.host_label) for extra in snapshot.extra_host_facts())]


def guest_remedy(snapshot: Snapshot, domain: str):
    """The domain XML patch of guest ``domain`` (name or uuid), from the
    stored facts (which keep the domain XML). Raises LookupError for no such guest."""
    host = load_host_facts(snapshot)
    match = next((d for d in host.domains if domain in (d.name, d.uuid)), None)
    if match is None:
        raise LookupError(domain)
    return domain_remedy(domain_xml=match.raw_xml, host=host)


def cluster_members(snapshot: Snapshot) -> QuerySet[Snapshot]:
    """Every snapshot (any status) of the snapshot's cluster that the same
    owner or team uploaded."""
    scope = Q(owner_id=snapshot.owner_id)
    team_id = getattr(snapshot, "team_id", None)
    if team_id:
        scope |= Q(team_id=team_id)
    return Snapshot.objects.filter(scope, cluster=snapshot.cluster)


@dataclass(frozen=True, slots=True)
class Member:
    """A member of a cluster as an analysis lists it (:func:`cluster_siblings`):
    the few columns it needs, read as values; thousands of them cost a
    fraction of as many model instances."""

    pk: int
    label: str
    original_filename: str
    status: str
    engine_version: str
    created_at: datetime
    # set by every analysis: whether the member's stored profile changed
    finished_at: datetime | None
    # ``Snapshot.host_label``: computed once, read by every analysis of the cluster
    host_label: str = field(init=False, default="")

    def __post_init__(self) -> None:
        object.__setattr__(self, "host_label", host_label_of(self.label, self.original_filename, self.pk))


_MEMBER_COLUMNS = (
    "pk",
    "label",
    "original_filename",
    "status",
    "engine_version",
    "created_at",
    "finished_at",
)


def cluster_member_rows(
    snapshot: Snapshot, *, finished_since: datetime | None = None
) -> list[tuple[Member, str]]:
    """(member, its ``host_key``) of every analysed snapshot of the snapshot's
    cluster other than itself, visible to the same owner (or team); with
    ``finished_since``, only those whose analysis finished then or later."""
    if not snapshot.cluster:
        return []
    members = cluster_members(snapshot).filter(status=Snapshot.Status.DONE).exclude(pk=snapshot.pk)
    if finished_since is not None:
        members = members.filter(finished_at__gte=finished_since)
    rows = (
        members.annotate(facts_hostname=hostname_expression())
        .order_by("-created_at", "-pk")
        .values_list(*_MEMBER_COLUMNS, "facts_hostname")[: MAX_CLUSTER_HOSTS * 4]
    )
    out = []
    for *columns, hostname in rows:
        member = Member(*columns)
        out.append((member, host_key_of(hostname, member)))
    return out


def siblings_among(rows: Iterable[tuple[Member, str]], own_host: str | None = None) -> list[Member]:
    """Of ``rows`` (:func:`cluster_member_rows`), newest first, one per host:
    older snapshots of a host (before/after a fix) and snapshots of
    ``own_host`` itself are left out."""
    seen: set[str] = set()
    out: list[Member] = []
    for sib, key in sorted(rows, key=lambda r: (r[0].created_at, r[0].pk), reverse=True):
        if key in seen or (own_host and key == own_host):
            continue
        seen.add(key)
        out.append(sib)
        if len(out) >= MAX_CLUSTER_HOSTS - 1:
            break
    return out


def state_of(rows: Iterable[tuple[Member, str]]) -> tuple:
    """:func:`cluster_state` of the members ``rows`` list."""
    members = [m for m, _key in rows]
    finished = [m.finished_at for m in members if m.finished_at is not None]
    return (len(members), sum(m.pk for m in members) if members else None, max(finished, default=None))


def cluster_state(snapshot: Snapshot) -> tuple:
    """What changes when the analysed hosts of the snapshot's cluster (other
    than itself) change: one aggregate row, however large the cluster, so an
    analysis can tell whether the cluster it compared is still the cluster it
    writes into without listing the members again. A member finishing (its
    ``finished_at``), appearing, leaving ``done`` or being deleted changes it."""
    if not snapshot.cluster:
        return ()
    state = (
        cluster_members(snapshot)
        .filter(status=Snapshot.Status.DONE)
        .exclude(pk=snapshot.pk)
        .aggregate(n=Count("pk"), ids=Sum("pk"), last=Max("finished_at"))
    )
    return (state["n"], state["ids"], state["last"])


def rechecked(rule: str, snapshot: Snapshot) -> bool:
    """``snapshot`` checked ``rule``: it ran with every fact it decides on, on
    every host it applies to (``checked``), and no host is listed as lacking
    one (DESIGN.md "What a result claims": only then can a finding be cleared)."""
    lacking = any(isinstance(n, dict) and n.get("rule") == rule for n in snapshot.not_checked or [])
    return rule in (snapshot.checked or []) and not lacking


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


def host_key_of(hostname: str | None, snapshot: Snapshot | Member) -> str:
    """The host key of ``snapshot`` given its facts' hostname (see :func:`host_key`)."""
    key = hostname if hostname not in (None, "", "null") else snapshot.label or f"#{snapshot.pk}"
    return str(key)[: Snapshot._meta.get_field("host_key").max_length]


def unique_labels(snapshots: Sequence[Snapshot | Member]) -> dict[int, str]:
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


def prose_text(text: str, reading: Reading) -> str:
    """The prose of an upload (``Reading.prose``): command output never reads
    as words of a write-up."""
    return reading.prose(text)


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
    reading = snapshot.host_facts().reading
    if not reading.prose_lines:
        return []
    if snapshot.current_findings().filter(severity__in=QUALIFYING_SEVERITIES).exists():
        return []
    text = prose_text(upload_text(snapshot), reading)
    if not text.strip():
        return []
    try:
        return sounds_like(text, language=language)
    except TRANSIENT_DB_ERRORS:
        raise
    except Exception:
        log.exception("sounds-like lookup failed")
        return []


def case_snapshot_choices(user) -> list[tuple[int, str]]:
    """Analysed snapshots a user may base a new case on, newest first (the
    knowledge base's "New case" page, through ``kb.authoring.SnapshotSource``)."""
    rows = (
        visible_snapshots(user)
        .filter(status=Snapshot.Status.DONE)
        .order_by("-created_at", "-pk")
        .only("pk", "label", "original_filename")[:200]
    )
    return [(s.pk, f"#{s.pk} {s.display_name}") for s in rows]


def case_snapshot_analysis(user, snapshot_id: int) -> SnapshotAnalysis:
    """The signature and environment a visible, analysed snapshot gives a new
    case: its current findings' rules and its hosts' facts
    (``kb.authoring.CaseInputError`` for one the user may not use)."""
    snapshot = visible_snapshots(user).filter(pk=snapshot_id, status=Snapshot.Status.DONE).first()
    if snapshot is None:
        raise snapshot_unusable()
    facts = SnapshotFacts(hosts=[snapshot.host_facts(), *snapshot.extra_host_facts()])
    return SnapshotAnalysis(
        rules=sorted(set(snapshot.current_findings().values_list("rule", flat=True))),
        features=snapshot_features(facts),
        environment=environment_of(facts),
        source=f"snapshot {snapshot.pk}",
        engine_version=snapshot.engine_version,
    )


def known_issues(snapshot: Snapshot, *, language: str = "en") -> list[dict]:
    """Published cases whose stated version ranges hold this snapshot's
    kernel, database or hypervisor versions (``kb.similarity.known_issues_for``),
    read from its stored facts."""
    if snapshot.status != Snapshot.Status.DONE:
        return []
    facts = SnapshotFacts(hosts=[snapshot.host_facts(), *snapshot.extra_host_facts()])
    return known_issues_for(facts, language=language)

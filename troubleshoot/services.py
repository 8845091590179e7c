"""Everything a troubleshooting session does, as plain functions.

Views call these with keyword arguments; each write appends to the session's
audit trail in the same transaction (who, when, what, old -> new), so the
trail can never miss a change. Applying a measure is *recorded* here: the app
never runs a command on a customer host.
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Field, Max, Q, QuerySet
from django.utils import timezone, translation
from django.utils.text import capfirst, slugify
from django.utils.translation import gettext as _
from django.utils.translation import pgettext

from accounts.access import can_view_team, home_team, is_support, visible_teams
from accounts.models import Membership
from collectors.facts import SnapshotFacts
from kb.models import Case, CaseMeasure, Disruption, Measure
from kb.services import record_reuse, record_revision, save_case
from kb.similarity import NEW_PROBLEM_THRESHOLD, rank, serious_rules, snapshot_features, sounds_like
from triage.engine import ENGINE_VERSION
from triage.models import Finding, Snapshot
from triage.selectors import visible_snapshots
from triage.severity import SEVERITIES
from triage.tickets import add_ticket
from triage.uploads import create_snapshot
from troubleshoot import fill, signals
from troubleshoot.fill import PINNING, GuestPlan, fill_commands
from troubleshoot.models import (
    STEP_ORDER,
    AuditEntry,
    Comment,
    PlannedMeasure,
    Session,
    SessionSnapshot,
    Step,
)
from troubleshoot.stats import mean_interval

# A promoted draft this similar to an existing case is probably the same problem.
VERY_SIMILAR = 0.75

# --------------------------------------------------------------------------- access


def visible_sessions(user) -> QuerySet[Session]:
    """Sessions a user may read: their own, their teams' and, for support
    staff, every session (``accounts.access`` decides who is support)."""
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return Session.objects.none()
    if is_support(user):
        return Session.objects.all()
    return Session.objects.filter(Q(owner=user) | Q(team__in=visible_teams(user)))


def can_view(user, session: Session) -> bool:
    if not getattr(user, "is_authenticated", False) or not user.is_active:
        return False
    if session.owner_id == user.pk or is_support(user):
        return True
    return session.team_id is not None and can_view_team(user, session.team)


def can_edit(user, session: Session) -> bool:
    """The owner, any member of the session's team, and support staff."""
    if not can_view(user, session):
        return False
    if session.owner_id == user.pk or is_support(user):
        return True
    return (
        session.team_id is not None and Membership.objects.filter(user=user, team_id=session.team_id).exists()
    )


def _require_edit(user, session: Session) -> None:
    if not can_edit(user, session):
        raise PermissionDenied("you may not change this session")


# --------------------------------------------------------------------------- audit


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def record(
    *,
    session: Session | None = None,
    acknowledgement=None,
    user,
    action: str,
    target: str = "",
    old: Any = None,
    new: Any = None,
) -> AuditEntry:
    """One audit trail entry, of a session or of a finding acknowledgement."""
    return AuditEntry.objects.create(
        session=session,
        acknowledgement=acknowledgement,
        user=user,
        action=action,
        target=target,
        old=_text(old),
        new=_text(new),
    )


def _touch(session: Session) -> None:
    Session.objects.filter(pk=session.pk).update(updated_at=timezone.now())


# --------------------------------------------------------------------------- session


PROBLEM_FIELDS = (
    "title",
    "symptom",
    "workload",
    "platform",
    "database",
    "metric_name",
    "metric_unit",
    "metric_baseline",
    "metric_expected",
    "metric_direction",
)
CONSTRAINT_FIELDS = (
    "guest_reboot_allowed",
    "host_reboot_allowed",
    "service_restart_allowed",
    "other_workloads",
    "change_approval",
    "maintenance_window",
)
CLOSE_FIELDS = ("outcome", "root_cause", "lessons")
# Recorded measurements: the trail calls their changes "metric" so an edit
# of a recorded value is easy to find, with the old value kept.
METRIC_FIELDS = {"metric_baseline", "metric_after"}


def _team_of(user):
    return home_team(user)


@transaction.atomic
def create_session(*, owner, title: str, **problem: Any) -> Session:
    """Open a session for ``owner`` in the owner's (first) team."""
    unknown = set(problem) - set(PROBLEM_FIELDS)
    if unknown:
        raise TypeError(f"unknown problem fields: {sorted(unknown)}")
    session = Session.objects.create(owner=owner, team=_team_of(owner), title=title.strip()[:200], **problem)
    record(session=session, user=owner, action="created", new=session.title)
    for name, value in problem.items():
        if value not in (None, ""):
            record(session=session, user=owner, action=_action_for(name), target=name, new=value)
    return session


def _action_for(name: str) -> str:
    return "metric" if name in METRIC_FIELDS else "field"


@transaction.atomic
def update_session(*, session: Session, user, changes: dict[str, Any]) -> list[str]:
    """Change session fields; each real change gets its own trail entry.
    Returns the names of the fields that changed."""
    _require_edit(user, session)
    allowed = set(PROBLEM_FIELDS) | set(CONSTRAINT_FIELDS) | set(CLOSE_FIELDS) | {"metric_after"}
    unknown = set(changes) - allowed
    if unknown:
        raise TypeError(f"not editable here: {sorted(unknown)}")
    locked = Session.objects.select_for_update().get(pk=session.pk)
    changed = []
    for name, new in changes.items():
        old = getattr(locked, name)
        if old == new or (old in (None, "") and new in (None, "")):
            continue
        setattr(locked, name, new)
        changed.append(name)
        record(session=locked, user=user, action=_action_for(name), target=name, old=old, new=new)
    if changed:
        locked.save(update_fields=[*changed, "updated_at"])
        for name in changed:
            setattr(session, name, getattr(locked, name))
    return changed


@transaction.atomic
def set_step(*, session: Session, user, step: str) -> None:
    if step not in STEP_ORDER:
        raise ValueError(f"unknown step {step!r}")
    _require_edit(user, session)
    if session.step == step:
        return
    record(session=session, user=user, action="step", target="step", old=session.step, new=step)
    session.step = step
    session.save(update_fields=["step", "updated_at"])


# --------------------------------------------------------------------------- people and tickets

MAX_COMMENT = 10000


def assignable_users(session: Session):
    """Who a session can be assigned to: its owner and the members of its team."""
    users = get_user_model().objects.filter(is_active=True)
    scope = Q(pk=session.owner_id)
    if session.team_id:
        scope |= Q(memberships__team_id=session.team_id)
    return users.filter(scope).distinct().order_by("username")


@transaction.atomic
def assign_session(*, session: Session, user, assignee) -> None:
    """Give the session to ``assignee`` (None: nobody), who must be able to
    edit it; the trail records the change."""
    _require_edit(user, session)
    if assignee is not None and not assignable_users(session).filter(pk=assignee.pk).exists():
        raise PermissionDenied("the assignee cannot work on this session")
    if session.assignee_id == (assignee.pk if assignee else None):
        return
    old = session.assignee.get_username() if session.assignee is not None else ""
    record(
        session=session,
        user=user,
        action="assignee",
        target="assignee",
        old=old,
        new=assignee.get_username() if assignee else "",
    )
    session.assignee = assignee
    session.save(update_fields=["assignee", "updated_at"])


@transaction.atomic
def add_comment(*, session: Session, user, text: str) -> Comment:
    _require_edit(user, session)
    text = (text or "").strip()
    if not text:
        raise ValueError("an empty comment")
    comment = Comment.objects.create(session=session, author=user, text=text[:MAX_COMMENT])
    record(
        session=session, user=user, action="comment", target=f"comment-{comment.pk}", new=comment.text[:200]
    )
    _touch(session)
    return comment


@transaction.atomic
def add_session_ticket(*, session: Session, user, key: str, url: str = ""):
    """Link the session to an external ticket (``triage.tickets.add_ticket``)."""
    _require_edit(user, session)
    ticket = add_ticket(user=user, key=key, url=url, session=session)
    record(session=session, user=user, action="ticket", target=ticket.key, new=ticket.url)
    return ticket


def next_step(step: str) -> str:
    i = STEP_ORDER.index(step)
    return STEP_ORDER[min(i + 1, len(STEP_ORDER) - 1)]


# --------------------------------------------------------------------------- snapshots


def cluster_name(session: Session, phase: str) -> str:
    """Snapshots of one phase of a session are analysed together as a cluster,
    so rules see the guest and its host side by side."""
    return f"session-{session.pk}-{phase}"


@transaction.atomic
def attach_snapshot(
    *, session: Session, user, snapshot: Snapshot, phase: str = SessionSnapshot.Phase.BEFORE
) -> bool:
    """Attach an existing snapshot the user can see. False if already attached."""
    _require_edit(user, session)

    if not visible_snapshots(user).filter(pk=snapshot.pk).exists():
        raise PermissionDenied("snapshot not visible")
    link, created = SessionSnapshot.objects.get_or_create(
        session=session, snapshot=snapshot, defaults={"phase": phase}
    )
    if not created and link.phase != phase:
        record(
            session=session,
            user=user,
            action="snapshot",
            target=snapshot.display_name,
            old=link.phase,
            new=phase,
        )
        link.phase = phase
        link.save(update_fields=["phase"])
        return True
    if created:
        record(session=session, user=user, action="snapshot", target=snapshot.display_name, new=phase)
        _touch(session)
    return created


def startable_snapshot(user, snapshot_id) -> Snapshot | None:
    """The snapshot a new session starts from ("Start a case from this"), if the
    user can see it; None for a missing, invisible or malformed id."""
    try:
        pk = int(snapshot_id)
    except (TypeError, ValueError):
        return None
    return visible_snapshots(user).filter(pk=pk).first()


MAX_STARTING_SIBLINGS = 31  # with the snapshot itself: a 32-host cluster at most


def starting_snapshots(user, snapshot: Snapshot) -> list[Snapshot]:
    """What a session started from ``snapshot``'s report begins with: the
    snapshot and the other hosts of its cluster the user can see (analysed
    together, so the wizard sees the guest and its host side by side),
    newest first after the snapshot itself."""
    if not snapshot.cluster:
        return [snapshot]
    siblings = (
        visible_snapshots(user)
        .filter(cluster=snapshot.cluster)
        .exclude(pk=snapshot.pk)
        .only("pk", "label", "original_filename", "cluster", "status", "created_at")
        .order_by("-created_at", "-id")[:MAX_STARTING_SIBLINGS]
    )
    return [snapshot, *siblings]


@transaction.atomic
def start_from_snapshots(*, session: Session, user, snapshots: list[Snapshot]) -> None:
    """Attach the starting snapshots as before-snapshots and move the session
    on to its snapshots step ("Start troubleshooting session" on a report)."""
    for snap in snapshots:
        attach_snapshot(session=session, user=user, snapshot=snap)
    set_step(session=session, user=user, step=Step.SNAPSHOTS)


def problem_from_snapshot(snapshot: Snapshot) -> dict:
    """Initial problem fields of a session started from a snapshot's report:
    its name and its warning/critical findings as the symptom to refine."""
    findings = [f for f in snapshot.current_findings() if f.severity in ("critical", "warning")]
    symptom = "\n".join(f"- {f.title} ({f.rule}, {f.host})" for f in findings[:10])
    return {"title": snapshot.display_name[:200], "symptom": symptom}


def upload_snapshot(*, session: Session, user, uploaded_file, phase: str) -> Snapshot:
    """Store an upload through triage (which queues its analysis) and attach it.
    Each file is one host; the files of a phase form one cluster."""
    _require_edit(user, session)
    name = PurePath(getattr(uploaded_file, "name", "") or "upload").name
    snapshot = create_snapshot(
        owner=user,
        uploaded_file=uploaded_file,
        filename=name,
        label=PurePath(name).stem,
        cluster=cluster_name(session, phase),
    )
    attach_snapshot(session=session, user=user, snapshot=snapshot, phase=phase)
    return snapshot


@transaction.atomic
def detach_snapshot(*, session: Session, user, snapshot_id: int) -> None:
    _require_edit(user, session)
    link = (
        SessionSnapshot.objects.filter(session=session, snapshot_id=snapshot_id)
        .select_related("snapshot")
        .first()
    )
    if link is None:
        return
    record(
        session=session,
        user=user,
        action="snapshot",
        target=link.snapshot.display_name,
        old=link.phase,
        new="",
    )
    link.delete()


def snapshots_of(session: Session, phase: str | None = None) -> list[Snapshot]:
    links = session.attachments.select_related("snapshot")
    if phase:
        links = links.filter(phase=phase)
    return [link.snapshot for link in links]


def progress(session: Session, phase: str | None = None) -> dict:
    """Analysis progress of the attached snapshots (of one phase, or all):
    their names and states, not their facts."""
    links = session.attachments.select_related("snapshot").only(
        "phase", "session", "snapshot", *(f"snapshot__{name}" for name in Snapshot.SUMMARY_FIELDS)
    )
    if phase:
        links = links.filter(phase=phase)
    items = [(link.get_phase_display(), link.snapshot) for link in links]
    done = sum(1 for _p, s in items if s.is_finished)
    return {"items": items, "done": done, "total": len(items), "finished": done == len(items)}


# --------------------------------------------------------------------------- findings


@dataclass
class MergedFinding:
    rule: str
    severity: str
    title: str
    title_zh: str
    explanation: str
    explanation_zh: str
    hosts: list[str] = field(default_factory=list)
    measures: list[str] = field(default_factory=list)
    snapshot_ids: list[int] = field(default_factory=list)

    def localized_title(self, language: str) -> str:
        return self.title_zh if language.startswith("zh") and self.title_zh else self.title

    def localized_explanation(self, language: str) -> str:
        return self.explanation_zh if language.startswith("zh") and self.explanation_zh else self.explanation


def _current_findings(snaps: list[Snapshot]) -> list[Finding]:
    out: list[Finding] = []
    for snap in snaps:
        if snap.status == Snapshot.Status.DONE:
            out.extend(snap.current_findings())
    return out


def merged_findings(session: Session, phase: str = SessionSnapshot.Phase.BEFORE) -> list[MergedFinding]:
    """One entry per rule across the phase's snapshots, worst severity first;
    the hosts it fired on and the union of its measures are kept."""
    merged: dict[str, MergedFinding] = {}
    for f in _current_findings(snapshots_of(session, phase)):
        item = merged.get(f.rule)
        if item is None:
            item = merged[f.rule] = MergedFinding(
                rule=f.rule,
                severity=f.severity,
                title=f.title,
                title_zh=f.title_zh,
                explanation=f.explanation,
                explanation_zh=f.explanation_zh,
            )
        elif SEVERITIES.index(f.severity) < SEVERITIES.index(item.severity):
            item.severity = f.severity
        host = f.host or f.snapshot.host_label
        if host not in item.hosts:
            item.hosts.append(host)
        for slug in f.measures:
            if slug not in item.measures:
                item.measures.append(slug)
        if f.snapshot_id not in item.snapshot_ids:
            item.snapshot_ids.append(f.snapshot_id)
    return sorted(merged.values(), key=lambda m: (SEVERITIES.index(m.severity), m.rule))


def findings_by_severity(findings: list[MergedFinding]) -> list[tuple[str, list[MergedFinding]]]:
    return [
        (sev, [f for f in findings if f.severity == sev])
        for sev in SEVERITIES
        if any(f.severity == sev for f in findings)
    ]


def signature_of(session: Session, phase: str = SessionSnapshot.Phase.BEFORE) -> dict:
    """Rules and environment features of the phase's snapshots, the shape of a
    case signature (``{"rules": [...], "features": [...]}``)."""
    snaps = [s for s in snapshots_of(session, phase) if s.status == Snapshot.Status.DONE]
    rules = sorted({f.rule for f in merged_findings(session, phase)})

    features = snapshot_features(SnapshotFacts(hosts=[s.host_facts() for s in snaps]))
    return {"rules": rules, "features": features}


def similar_cases(session: Session, *, language: str = "en", limit: int = 5) -> list[dict]:
    """Published cases like the before-snapshots, best first, each with why."""
    sig = signature_of(session)
    # Only warning/critical findings (or a strong match of the symptom text)
    # qualify a case; a session whose snapshots are healthy gets none.
    serious = serious_rules(merged_findings(session, SessionSnapshot.Phase.BEFORE))
    if not serious and not session.symptom:
        return []
    return rank(
        sig["rules"],
        sig["features"],
        symptom=session.symptom,
        language="zh" if language.startswith("zh") else "en",
        limit=limit,
        threshold=NEW_PROBLEM_THRESHOLD,
        qualifying=serious,
    )


def sounds_like_cases(session: Session, *, language: str = "en") -> list[dict]:
    """ "Cases that sound like this" for a session no case explains: compared
    by the words of its title and symptom (``kb.similarity.sounds_like``, the
    same comparison as a report's pasted write-up). Empty when a warning or
    critical finding of its snapshots is there: the rules speak then."""
    text = "\n".join(t for t in (session.title, session.symptom) if t)
    if not text.strip() or serious_rules(merged_findings(session, SessionSnapshot.Phase.BEFORE)):
        return []
    return sounds_like(text, language="zh" if language.startswith("zh") else "en")


def founding_measures(session: Session, cases: list[dict]) -> list[dict]:
    """What the similar cases did for the rules this session shares with them:
    ``{"case": slug, "measure": slug, "status", "outcome", "rules": [...]}``."""
    out = []
    for case in cases:
        shared = set(case.get("shared_rules") or [])
        if not shared:
            continue
        steps = CaseMeasure.objects.filter(case__slug=case["slug"], case__language=case.get("language", "en"))
        for step in steps.select_related("measure"):
            hit = sorted(shared & set(step.measure.rules or []))
            if hit:
                out.append(
                    {
                        "case": case["slug"],
                        "measure": step.measure.slug,
                        "status": step.status,
                        "status_label": step.get_status_display(),
                        "outcome": step.outcome,
                        "rules": hit,
                    }
                )
    return out


# --------------------------------------------------------------------------- constraints


DISRUPTION_RANK: dict[str, int] = {
    Disruption.ONLINE: 0,
    Disruption.SERVICE_RESTART: 1,
    Disruption.GUEST_REBOOT: 2,
    Disruption.HOST_REBOOT: 3,
}


def blocked_reason(session: Session, measure: Measure) -> str | None:
    """Why the session's constraints forbid the measure, or None."""
    d = measure.disruption
    if d == Disruption.HOST_REBOOT and not session.host_reboot_allowed:
        return _("needs a host reboot; constraint: host reboot not allowed")
    if d == Disruption.GUEST_REBOOT and not session.guest_reboot_allowed:
        return _("needs a guest reboot; constraint: guest reboot not allowed")
    if d == Disruption.SERVICE_RESTART and not session.service_restart_allowed:
        return _("needs a service restart; constraint: service restart not allowed")
    return None


# Measures that change the whole host rather than one guest or service.
HOST_WIDE = {
    "isolate-host-cpus",
    "static-hugepages",
    "zone-reclaim-mode",
    "enable-numa-balancing",
    "rebalance-host-load",
    "irq-softirq-affinity",
    "enable-numa-in-firmware",
    "align-host-numa-config",
    "drop-caches-before-benchmark",
}


def caution(session: Session, measure: Measure) -> str | None:
    """Not forbidden, but the change needs approval or a window first, or it
    touches the other workloads sharing the host."""
    notes = []
    if session.other_workloads and measure.slug in HOST_WIDE:
        notes.append(_("changes the whole host: other workloads run there"))
    if DISRUPTION_RANK.get(measure.disruption, 0) > 0:
        if session.change_approval:
            notes.append(_("change approval needed"))
        if session.maintenance_window:
            notes.append(_("maintenance window: %(window)s") % {"window": session.maintenance_window})
    return "; ".join(notes) or None


@dataclass
class Candidate:
    measure: Measure
    rules: list[str]
    severity: str
    blocked: str | None
    caution: str | None
    tier: int
    planned: bool
    effectiveness: dict | None
    from_cases: list[str]


def candidates(session: Session, *, language: str = "en") -> list[Candidate]:
    """Measures addressing the before-findings, ranked: first tier are those
    the similar cases applied with success (or, without a case, measures for
    critical findings), then by measured effectiveness across closed sessions."""
    findings = merged_findings(session)
    by_measure: dict[str, list[MergedFinding]] = defaultdict(list)
    for f in findings:
        for slug in f.measures:
            by_measure[slug].append(f)
    cases = similar_cases(session, language=language)
    founding = founding_measures(session, cases)
    applied_in_cases: defaultdict[str, list[str]] = defaultdict(list)
    recommended_in_cases: defaultdict[str, list[str]] = defaultdict(list)
    for item in founding:
        target = applied_in_cases if item["status"] == CaseMeasure.Status.APPLIED else recommended_in_cases
        if item["case"] not in target[item["measure"]]:
            target[item["measure"]].append(item["case"])
    measures = {m.slug: m for m in Measure.objects.filter(slug__in=by_measure)}
    planned = set(session.measures.values_list("measure__slug", flat=True))
    stats = effectiveness()
    out = []
    for slug, fs in by_measure.items():
        measure = measures.get(slug)
        if measure is None:
            continue
        worst = min(SEVERITIES.index(f.severity) for f in fs)
        if applied_in_cases.get(slug):
            tier = 1
        elif recommended_in_cases.get(slug):
            tier = 2
        else:
            tier = 1 if worst == 0 and not cases else (2 if worst <= 1 else 3)
        out.append(
            Candidate(
                measure=measure,
                rules=sorted(f.rule for f in fs),
                severity=SEVERITIES[worst],
                blocked=blocked_reason(session, measure),
                caution=caution(session, measure),
                tier=tier,
                planned=slug in planned,
                effectiveness=stats.get(slug),
                from_cases=applied_in_cases.get(slug, []) + recommended_in_cases.get(slug, []),
            )
        )

    def key(c: Candidate):
        # measured effectiveness reorders only from MIN_SESSIONS sessions on
        eff = c.effectiveness["mean_improvement"] if c.effectiveness and c.effectiveness["ranks"] else -1.0
        return (c.blocked is not None, c.tier, -eff, SEVERITIES.index(c.severity), c.measure.slug)

    return sorted(out, key=key)


# --------------------------------------------------------------------------- plan


def guest_plans(session: Session) -> list[GuestPlan]:
    """The remediation planner's patch (or its "cannot help" reason) for each
    guest with placement findings on the session's before-snapshots: the
    pinning the plan step shows and fills its pinning measures from."""
    return fill.guest_plans(snapshots_of(session, SessionSnapshot.Phase.BEFORE))


@transaction.atomic
def plan_measure(*, session: Session, user, slug: str, tier: int = 1, commands: str = "") -> PlannedMeasure:
    """Add a measure to the plan. Measures the constraints forbid are refused."""
    _require_edit(user, session)
    measure = Measure.objects.get(slug=slug)
    reason = blocked_reason(session, measure)
    if reason:
        raise ValueError(reason)
    existing = session.measures.filter(measure=measure).first()
    if existing is not None:
        return existing
    last = session.measures.filter(tier=tier).aggregate(m=Max("position"))["m"]
    if not commands and slug in PINNING:
        commands = fill_commands(slug, plans=guest_plans(session))
    commands = commands or measure.commands
    pm = PlannedMeasure.objects.create(
        session=session, measure=measure, tier=tier, position=(last or 0) + 1, commands=commands
    )
    record(session=session, user=user, action="measure", target=slug, new=f"planned (tier {tier})")
    _touch(session)
    return pm


@transaction.atomic
def unplan_measure(*, session: Session, user, pm: PlannedMeasure) -> None:
    _require_edit(user, session)
    if pm.status != PlannedMeasure.Status.PLANNED:
        raise ValueError(_("only measures not yet applied can be removed from the plan"))
    record(
        session=session, user=user, action="measure", target=pm.measure.slug, old=f"planned (tier {pm.tier})"
    )
    pm.delete()


@transaction.atomic
def move_measure(*, session: Session, user, pm: PlannedMeasure, direction: str) -> None:
    """Move up/down within the plan (crossing into the neighbouring tier at its edge)."""
    _require_edit(user, session)
    ordered = list(session.measures.order_by("tier", "position", "id"))
    i = next(n for n, x in enumerate(ordered) if x.pk == pm.pk)
    j = i - 1 if direction == "up" else i + 1
    old = f"tier {pm.tier} #{i + 1}"
    if 0 <= j < len(ordered):
        other = ordered[j]
        if other.tier != pm.tier:
            pm.tier = other.tier
        ordered[i], ordered[j] = ordered[j], ordered[i]
    elif direction == "up" and pm.tier > 1:
        pm.tier -= 1
    elif direction == "down" and pm.tier < 3:
        pm.tier += 1
    else:
        return
    for n, item in enumerate(ordered, start=1):
        item.position = n
        if item.pk == pm.pk:
            item.tier = pm.tier
        item.save(update_fields=["position", "tier"])
    new_index = next(n for n, x in enumerate(ordered) if x.pk == pm.pk)
    record(
        session=session,
        user=user,
        action="measure.order",
        target=pm.measure.slug,
        old=old,
        new=f"tier {pm.tier} #{new_index + 1}",
    )


@transaction.atomic
def set_tier(*, session: Session, user, pm: PlannedMeasure, tier: int) -> None:
    _require_edit(user, session)
    if tier not in (1, 2, 3) or tier == pm.tier:
        return
    record(
        session=session,
        user=user,
        action="measure.order",
        target=pm.measure.slug,
        old=f"tier {pm.tier}",
        new=f"tier {tier}",
    )
    pm.tier = tier
    pm.position = (session.measures.filter(tier=tier).aggregate(m=Max("position"))["m"] or 0) + 1
    pm.save(update_fields=["tier", "position"])


# --------------------------------------------------------------------------- apply


@transaction.atomic
def record_application(
    *,
    session: Session,
    user,
    pm: PlannedMeasure,
    status: str | None = None,
    change_made: str | None = None,
    notes: str | None = None,
    metric_after: float | None = None,
    clear_metric: bool = False,
) -> list[str]:
    """Record what was done with a planned measure. Status, the change made,
    notes and the metric measured after it each get a trail entry; editing a
    recorded metric keeps the previous value in the trail."""
    _require_edit(user, session)
    pm = PlannedMeasure.objects.select_for_update().get(pk=pm.pk, session=session)
    slug = pm.measure.slug
    changed = []
    if status is not None and status != pm.status:
        if status not in PlannedMeasure.Status.values:
            raise ValueError(f"unknown status {status!r}")
        record(session=session, user=user, action="measure.status", target=slug, old=pm.status, new=status)
        pm.status = status
        pm.applied_by = user
        pm.applied_at = timezone.now()
        changed += ["status", "applied_by", "applied_at"]
        if status == PlannedMeasure.Status.APPLIED and pm.step is None:
            # applied on its own: a step of its own, measured on its own
            pm.step = _next_step_number(session)
            changed.append("step")
        elif status != PlannedMeasure.Status.APPLIED and pm.step is not None:
            pm.step = None
            changed.append("step")
    for name, value in (("change_made", change_made), ("notes", notes)):
        if value is not None and value != getattr(pm, name):
            record(
                session=session,
                user=user,
                action="measure." + name,
                target=slug,
                old=getattr(pm, name),
                new=value,
            )
            setattr(pm, name, value)
            changed.append(name)
    if (metric_after is not None or clear_metric) and metric_after != pm.metric_after:
        # one step, one metric: measured once after all the step's measures
        step = session.measures.filter(step=pm.step).exclude(pk=pm.pk) if pm.step is not None else None
        for member in [pm, *(step.select_related("measure") if step is not None else ())]:
            if member.metric_after == metric_after:
                continue
            record(
                session=session,
                user=user,
                action="metric",
                target=member.measure.slug,
                old=member.metric_after,
                new=metric_after,
            )
            member.metric_after = metric_after
            if member is not pm:
                member.save(update_fields=["metric_after"])
        changed.append("metric_after")
    if changed:
        pm.save(update_fields=changed)
        _touch(session)
    return changed


def _next_step_number(session: Session) -> int:
    return (session.measures.aggregate(m=Max("step"))["m"] or 0) + 1


@transaction.atomic
def apply_together(
    *,
    session: Session,
    user,
    pms: list[PlannedMeasure],
    metric_after: float | None = None,
    change_made: str = "",
    notes: str = "",
) -> int:
    """Record several planned measures as applied together, in one step with
    one metric measured after all of them (effectiveness counts the step, not
    each measure). Returns the step number."""
    _require_edit(user, session)
    pms = [PlannedMeasure.objects.select_related("measure").get(pk=pm.pk, session=session) for pm in pms]
    if not pms:
        raise ValueError(_("choose the measures that were applied together"))
    number = _next_step_number(session)
    slugs = " + ".join(pm.measure.slug for pm in pms)
    record(session=session, user=user, action="measure.step", target=slugs, new=f"step {number}")
    PlannedMeasure.objects.filter(pk__in=[pm.pk for pm in pms]).update(step=number)
    for pm in pms:
        pm.step = number
        record_application(
            session=session,
            user=user,
            pm=pm,
            status=PlannedMeasure.Status.APPLIED,
            change_made=change_made or None,
            notes=notes or None,
            metric_after=metric_after,
        )
    return number


def applied_steps(session: Session, measures: list[PlannedMeasure] | None = None) -> list[dict]:
    """The applied measures as steps, in the order applied:
    ``{"number", "slugs": [...], "metric_after"}``; a group of measures
    applied together is one step with one metric. ``measures``: the
    session's planned measures when already fetched."""
    if measures is None:
        measures = list(session.measures.select_related("measure"))
    applied = [pm for pm in measures if pm.status == PlannedMeasure.Status.APPLIED and pm.step is not None]
    steps: dict[int, dict] = {}
    for pm in sorted(applied, key=lambda pm: (pm.step, pm.tier, pm.position, pm.id)):
        assert pm.step is not None  # applied measures with a step only
        step = steps.setdefault(pm.step, {"number": pm.step, "slugs": [], "metric_after": None})
        step["slugs"].append(pm.measure.slug)
        if pm.metric_after is not None:
            step["metric_after"] = pm.metric_after
    return list(steps.values())


# --------------------------------------------------------------------------- verify


def verification(session: Session) -> dict:
    """Compare the before and after findings by rule: cleared, remaining, new.
    ``expected_clear`` lists remaining rules an applied measure should have cleared."""
    before = {f.rule: f for f in merged_findings(session, "before")}
    after = {f.rule: f for f in merged_findings(session, "after")}
    has_after = any(s.status == Snapshot.Status.DONE for s in snapshots_of(session, "after"))
    applied = session.measures.filter(status=PlannedMeasure.Status.APPLIED).select_related("measure")
    should_clear = {r for pm in applied for r in (pm.measure.rules or [])}
    return {
        "has_after": has_after,
        "cleared": [before[r] for r in sorted(before) if r not in after] if has_after else [],
        "remaining": [before[r] for r in sorted(before) if r in after],
        "new": [after[r] for r in sorted(after) if r not in before],
        "expected_clear": sorted(r for r in before if r in after and r in should_clear),
    }


def metric_series(session: Session) -> list[tuple[str, float]]:
    """Baseline, then the metric after each applied measure in plan order,
    then the verified value: the points of the before/after chart."""
    points: list[tuple[str, float]] = []
    if session.metric_baseline is not None:
        points.append((_("baseline"), session.metric_baseline))
    for step in applied_steps(session):
        if step["metric_after"] is not None:
            points.append((" + ".join(step["slugs"]), step["metric_after"]))
    if session.metric_after is not None:
        points.append((_("verified"), session.metric_after))
    return points


def final_metric(session: Session) -> float | None:
    if session.metric_after is not None:
        return session.metric_after
    values = [step["metric_after"] for step in applied_steps(session) if step["metric_after"] is not None]
    return values[-1] if values else None


def improvement(session: Session, value: float | None, *, reference: float | None = None) -> float | None:
    """Relative improvement over the baseline, or over ``reference`` (the
    value before a step), in the direction the metric improves: 0.5 = half
    the time, or 1.5x the throughput -> 0.5."""
    base = session.metric_baseline if reference is None else reference
    if base in (None, 0) or value is None:
        return None
    if session.metric_direction == Session.Direction.HIGHER:
        return (value - base) / abs(base)
    return (base - value) / abs(base)


# --------------------------------------------------------------------------- close / promote


@transaction.atomic
def close_session(*, session: Session, user, outcome: str, root_cause: str, lessons: str) -> None:
    _require_edit(user, session)
    if outcome not in Session.Outcome.values:
        raise ValueError(f"unknown outcome {outcome!r}")
    update_session(
        session=session, user=user, changes={"outcome": outcome, "root_cause": root_cause, "lessons": lessons}
    )
    if session.state != Session.State.CLOSED:
        record(
            session=session,
            user=user,
            action="state",
            target="state",
            old=session.state,
            new=Session.State.CLOSED,
        )
        session.state = Session.State.CLOSED
        session.closed_at = timezone.now()
        session.save(update_fields=["state", "closed_at", "updated_at"])
        signals.session_closed.send(sender=Session, session=session)


@transaction.atomic
def reopen_session(*, session: Session, user) -> None:
    _require_edit(user, session)
    if session.state == Session.State.CLOSED:
        record(
            session=session,
            user=user,
            action="state",
            target="state",
            old=session.state,
            new=Session.State.OPEN,
        )
        session.state = Session.State.OPEN
        session.closed_at = None
        session.save(update_fields=["state", "closed_at", "updated_at"])


def promotion_check(session: Session, *, language: str = "en") -> dict | None:
    """The most similar existing case when it is very similar (same problem)."""
    cases = similar_cases(session, language=language, limit=1)
    if cases and cases[0]["score"] >= VERY_SIMILAR:
        return cases[0]
    return None


CASE_STEP_STATUS: dict[str, str] = {
    PlannedMeasure.Status.APPLIED: CaseMeasure.Status.APPLIED,
    PlannedMeasure.Status.PLANNED: CaseMeasure.Status.RECOMMENDED,
    PlannedMeasure.Status.SKIPPED: CaseMeasure.Status.RECOMMENDED,
    PlannedMeasure.Status.FAILED: CaseMeasure.Status.REJECTED,
    PlannedMeasure.Status.ROLLED_BACK: CaseMeasure.Status.REJECTED,
}

PLATFORMS = {
    "zstack": "zstack",
    "openstack": "openstack",
    "bare": "bare-metal",
    "physical": "bare-metal",
    "物理机": "bare-metal",
    "裸金属": "bare-metal",
}


def _platform(text: str) -> str:
    low = (text or "").lower()
    for needle, value in PLATFORMS.items():
        if needle in low:
            return value
    return Case.Platform.OTHER


def _step_outcome(session: Session, pm: PlannedMeasure) -> str:
    parts = [] if pm.status == PlannedMeasure.Status.APPLIED else [str(pm.get_status_display())]
    if pm.metric_after is not None:
        unit = f" {session.metric_unit}" if session.metric_unit else ""
        parts.append(
            pgettext("case", "%(metric)s after: %(value)s")
            % {"metric": session.metric_name or _("metric"), "value": f"{_text(pm.metric_after)}{unit}"}
        )
    if pm.change_made:
        parts.append(pm.change_made)
    if pm.notes:
        parts.append(pm.notes)
    return ". ".join(p.rstrip(".") for p in parts)


def _constraints_text(session: Session) -> str:
    def shown(value):
        if isinstance(value, bool):
            return _("yes") if value else _("no")
        return _text(value)

    return ", ".join(
        f"{_verbose_name(name)}: {shown(getattr(session, name))}"
        for name in CONSTRAINT_FIELDS
        if getattr(session, name) not in ("", None)
    )


def _verbose_name(name: str) -> str:
    column = Session._meta.get_field(name)
    assert isinstance(column, Field)  # a column of the session, not a relation
    return str(column.verbose_name)


def _label(name: str) -> str:
    return capfirst(_verbose_name(name))


def _host_environment(session: Session) -> dict:
    """CPU architecture and model of the first physical host (else any host)."""
    snaps = [s for s in snapshots_of(session, "before") if s.status == Snapshot.Status.DONE]
    views = [s.host_facts() for s in snaps]
    ordered = [v for v in views if not v.is_guest] + [v for v in views if v.is_guest]
    for view in ordered:
        if view.cpu is not None:
            return {
                "cpu_architecture": (view.cpu.architecture or "")[:20],
                "cpu_model": (view.cpu.model_name or "")[:120],
                "hypervisor": "KVM" if any(v.domains or v.virsh_version for v in views) else "",
            }
    return {}


@transaction.atomic
def promote(*, session: Session, user, language: str = "en") -> Case:
    """Create a draft case from a closed session: environment, cause, measures
    with their outcomes, the metric before/after and the signature of the
    before-snapshots. A reviewer (support) publishes it."""
    _require_edit(user, session)
    if not session.is_closed:
        raise ValueError(_("close the session before promoting it"))
    if session.promoted_case is not None:
        return session.promoted_case
    lang = "zh" if language.startswith("zh") else "en"
    # Both language versions: the other one pre-filled (its generated labels in
    # its own language, the engineer's words as written) for the author to
    # translate before submitting the case for review.
    other = "en" if lang == "zh" else "zh"
    cases = {}
    for version in (lang, other):
        with translation.override("zh-hans" if version == "zh" else "en"):
            cases[version] = _draft_case(
                session=session,
                user=user,
                lang=version,
                engine_version=str(ENGINE_VERSION),
                save_case=save_case,
                pending=version != lang,
            )
    case = cases[lang]
    record(session=session, user=user, action="promote", target=case.slug, new=f"draft case {case.slug}")
    session.promoted_case = case
    session.save(update_fields=["promoted_case", "updated_at"])
    return case


def _draft_case(*, session: Session, user, lang: str, engine_version: str, save_case, pending: bool) -> Case:
    """One language version of the promoted draft, built in that language."""
    slug = f"session-{session.pk}-{slugify(session.title)[:60]}".strip("-")
    snaps = snapshots_of(session, "before")
    hosts = ", ".join(s.host_label for s in snaps)
    # Labels are looked up outside the f-strings: xgettext cannot see calls
    # inside f-string expressions, so they would never reach the catalogue.
    hosts_label = pgettext("case", "Hosts")
    applied_label = pgettext("case", "Applied")
    constraints_label = _("Constraints")
    env = [
        f"{_label('platform')}: {session.platform}" if session.platform else "",
        f"{_label('database')}: {session.database}" if session.database else "",
        f"{_label('workload')}: {session.workload}" if session.workload else "",
        f"{hosts_label}: {hosts}" if hosts else "",
        f"{constraints_label}: {_constraints_text(session)}",
    ]
    pms = list(session.measures.select_related("measure").order_by("tier", "position", "id"))
    applied = [pm.measure.slug for pm in pms if pm.status == PlannedMeasure.Status.APPLIED]
    after = final_metric(session)
    case = Case(
        slug=slug,
        language=lang,
        title=session.title,
        symptom=session.symptom or session.title,
        cause=session.root_cause,
        resolution_summary=" ".join(
            part
            for part in (
                f"{applied_label}: {', '.join(applied)}." if applied else "",
                f"{_label('outcome')}: {session.get_outcome_display()}.",
                f"{_label('lessons')}: {session.lessons}" if session.lessons else "",
            )
            if part
        ),
        environment_notes=". ".join(e for e in env if e),
        **_host_environment(session),
        platform=_platform(session.platform),
        database=(session.database or "").split()[0].lower()[:40] if session.database else "",
        state=Case.State.DRAFT,
        translation_pending=pending,
        author=user,
        signature=signature_of(session),
        signature_engine_version=engine_version,
        signature_source=f"session {session.pk}",
    )
    metrics = []
    if session.metric_name or session.metric_baseline is not None:
        metrics.append(
            {
                "name": session.metric_name or "metric",
                "before": session.metric_baseline,
                "after": after,
                "unit": session.metric_unit or "",
                "expected": session.metric_expected,
                "note": "",
            }
        )
    save_case(
        case,
        steps=[
            {
                "measure": pm.measure.slug,
                "status": CASE_STEP_STATUS[pm.status],
                "outcome": _step_outcome(session, pm),
            }
            for pm in pms
        ],
        metrics=metrics,
    )
    record_revision(case=case, user=user, action="created")
    return case


@transaction.atomic
def link_case(*, session: Session, user, case_slug: str, language: str = "en") -> Case:
    """Link the session to an existing case instead of promoting a new one."""
    _require_edit(user, session)
    lang = "zh" if language.startswith("zh") else "en"
    case = (
        Case.objects.filter(slug=case_slug, language=lang).first()
        or Case.objects.filter(slug=case_slug).first()
    )
    if case is None:
        raise Case.DoesNotExist(case_slug)
    record(
        session=session,
        user=user,
        action="link",
        target=case.slug,
        old=session.linked_case.slug if session.linked_case else "",
        new=case.slug,
    )
    session.linked_case = case
    session.save(update_fields=["linked_case", "updated_at"])
    return case


@transaction.atomic
def case_helped(*, session: Session, user, case_slug: str) -> bool:
    """ "This case helped" from the session's summary: one reuse mark per
    session and case, with an audit entry. False when already marked."""
    if not can_view(user, session):
        raise PermissionDenied("not your session")
    if not record_reuse(slug=case_slug, user=user, source="session", session=session):
        return False
    record(session=session, user=user, action="helped", target=case_slug, new=case_slug)
    return True


# --------------------------------------------------------------------------- effectiveness


# A measure's effectiveness reorders plans only once this many closed
# sessions have measured it: one session is an anecdote.
MIN_SESSIONS = 3


def _measured_steps(session: Session) -> list[tuple[tuple[str, ...], float | None]]:
    """``(measures, relative improvement)`` per step of a closed session, the
    improvement measured against the value before the step. Steps applied
    without a metric are measured with the next step that has one (the metric
    after it covers both), so every measure is credited once."""
    out: list[tuple[tuple[str, ...], float | None]] = []
    previous = session.metric_baseline
    pending: list[str] = []
    for step in applied_steps(session, list(session.measures.all())):
        pending += step["slugs"]
        value = step["metric_after"]
        if value is None:
            continue
        out.append((tuple(sorted(pending)), improvement(session, value, reference=previous)))
        previous, pending = value, []
    if pending:
        out.append((tuple(sorted(pending)), None))
    return out


def effectiveness() -> dict[str, dict]:
    """Per step across closed sessions, keyed by its measures ("a + b" for
    measures applied together): the relative improvement of the metric over
    the step (against the value before it, in the metric's good direction),
    its mean with a 95 % t interval (``troubleshoot.stats``), ``n`` sessions
    that measured it, how many sessions applied it and how many of those
    ended resolved."""
    closed = (
        Session.objects.filter(state=Session.State.CLOSED, measures__status=PlannedMeasure.Status.APPLIED)
        .distinct()
        .prefetch_related("measures__measure")
    )
    gains: dict[tuple[str, ...], list[float]] = defaultdict(list)
    sessions: dict[tuple[str, ...], int] = defaultdict(int)
    resolved: dict[tuple[str, ...], int] = defaultdict(int)
    for session in closed:
        for slugs, gain in _measured_steps(session):
            sessions[slugs] += 1
            resolved[slugs] += int(session.outcome == Session.Outcome.RESOLVED)
            if gain is not None:
                gains[slugs].append(gain)
    out = {}
    for slugs, count in sessions.items():
        values = gains[slugs]
        mean, low, high = mean_interval(values) if values else (None, None, None)
        key = " + ".join(slugs)
        out[key] = {
            "key": key,
            "slugs": list(slugs),
            "together": len(slugs) > 1,
            "sessions": count,
            "resolved": resolved[slugs],
            "resolved_rate": resolved[slugs] / count,
            "n": len(values),
            "mean_improvement": mean,
            "ci_low": low,
            "ci_high": high,
            "median_improvement": statistics.median(values) if values else None,
            "ranks": len(values) >= MIN_SESSIONS,
        }
    return out


def effectiveness_ranking() -> list[dict]:
    """Every step, those measured in enough sessions to rank first, best mean first."""
    stats = list(effectiveness().values())
    stats.sort(
        key=lambda s: (
            not s["ranks"],
            -(s["mean_improvement"] if s["mean_improvement"] is not None else -1e9),
            s["key"],
        )
    )
    return stats

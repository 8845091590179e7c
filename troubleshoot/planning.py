"""The plan step: candidate measures for the findings, ranked by the similar
cases and measured effectiveness and checked against the session's
constraints, and the plan itself (add, remove, reorder, tier)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Max
from django.utils.translation import gettext as _

from engine.severity import SEVERITIES, severity_rank
from kb.models import CaseMeasure, Disruption, Measure
from troubleshoot import fill
from troubleshoot.access import require_edit
from troubleshoot.audit import record, touch
from troubleshoot.effectiveness import effectiveness
from troubleshoot.fill import PINNING, GuestPlan, fill_commands
from troubleshoot.findings import MergedFinding, SessionFindings
from troubleshoot.models import PlannedMeasure, Session, SessionSnapshot
from troubleshoot.snapshots import snapshots_of

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


def candidates(
    session: Session, *, language: str = "en", findings: SessionFindings | None = None
) -> list[Candidate]:
    """Measures addressing the before-findings, ranked: first tier are those
    the similar cases applied with success (or, without a case, measures for
    critical findings), then by measured effectiveness across closed sessions.
    ``findings``: the session's findings when the caller has computed them."""
    if findings is None:
        findings = SessionFindings(session, language=language)
    by_measure: dict[str, list[MergedFinding]] = defaultdict(list)
    for f in findings.merged:
        for slug in f.measures:
            by_measure[slug].append(f)
    cases = findings.similar
    founding = findings.founding
    applied_in_cases: defaultdict[str, list[str]] = defaultdict(list)
    recommended_in_cases: defaultdict[str, list[str]] = defaultdict(list)
    for item in founding:
        target = applied_in_cases if item["status"] == CaseMeasure.Status.APPLIED else recommended_in_cases
        if item["case"] not in target[item["measure"]]:
            target[item["measure"]].append(item["case"])
    measures = {m.slug: m for m in Measure.objects.filter(slug__in=by_measure)}
    planned = set(session.measures.values_list("measure__slug", flat=True))
    stats = effectiveness(slugs=by_measure)
    out = []
    for slug, fs in by_measure.items():
        measure = measures.get(slug)
        if measure is None:
            continue
        worst = min(severity_rank(f.severity) for f in fs)
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
        return (c.blocked is not None, c.tier, -eff, severity_rank(c.severity), c.measure.slug)

    return sorted(out, key=key)


# --------------------------------------------------------------------------- plan


def guest_plans(session: Session, *, snapshots: list | None = None) -> list[GuestPlan]:
    """The remediation planner's patch (or its "cannot help" reason) for each
    guest with placement findings on the session's before-snapshots
    (``snapshots`` when the caller has them): the pinning the plan step shows
    and fills its pinning measures from."""
    if snapshots is None:
        snapshots = snapshots_of(session, SessionSnapshot.Phase.BEFORE)
    return fill.guest_plans(snapshots)


@transaction.atomic
def plan_measure(*, session: Session, user, slug: str, tier: int = 1, commands: str = "") -> PlannedMeasure:
    """Add a measure to the plan. Measures the constraints forbid are refused."""
    require_edit(user, session)
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
    touch(session)
    return pm


@transaction.atomic
def unplan_measure(*, session: Session, user, pm: PlannedMeasure) -> None:
    require_edit(user, session)
    if pm.status != PlannedMeasure.Status.PLANNED:
        raise ValueError(_("only measures not yet applied can be removed from the plan"))
    record(
        session=session, user=user, action="measure", target=pm.measure.slug, old=f"planned (tier {pm.tier})"
    )
    pm.delete()


@transaction.atomic
def move_measure(*, session: Session, user, pm: PlannedMeasure, direction: str) -> None:
    """Move up/down within the plan (crossing into the neighbouring tier at its edge)."""
    require_edit(user, session)
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
    require_edit(user, session)
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

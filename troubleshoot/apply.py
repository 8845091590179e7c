"""The apply step: what was done with each planned measure, recorded (the app
never runs a command on a customer host), alone or as a step of measures
applied together with one metric measured after them."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Max
from django.utils import timezone
from django.utils.translation import gettext as _

from troubleshoot.access import require_edit
from troubleshoot.audit import record, touch
from troubleshoot.models import PlannedMeasure, Session


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
    require_edit(user, session)
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
        touch(session)
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
    require_edit(user, session)
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

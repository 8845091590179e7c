"""The verify step: before and after findings compared, and the metric over
the applied steps against its baseline."""

from __future__ import annotations

from django.utils.translation import gettext as _

from triage.models import Snapshot
from troubleshoot.apply import applied_steps
from troubleshoot.findings import merged_findings
from troubleshoot.models import PlannedMeasure, Session
from troubleshoot.snapshots import snapshots_of


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

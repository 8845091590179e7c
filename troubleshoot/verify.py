"""The verify step: before and after findings compared, and the metric over
the applied steps against its baseline."""

from __future__ import annotations

from django.utils.translation import gettext as _

from engine.rules import load_all
from engine.run import commands_for
from triage.models import Snapshot
from triage.selectors import rechecked
from troubleshoot.apply import applied_steps
from troubleshoot.findings import MergedFinding, merged_findings
from troubleshoot.models import PlannedMeasure, Session
from troubleshoot.snapshots import snapshots_of


def _host_names(snap: Snapshot) -> set[str]:
    """Every name the findings of ``snap`` may give its hosts."""
    names = {snap.host_label, snap.host_key, snap.label}
    for facts in [snap.facts or {}, *(snap.extra_hosts or [])]:
        if isinstance(facts, dict):
            names.update(str(facts.get(k) or "") for k in ("hostname", "label"))
    return {n for n in names if n}


def _recheck_request(finding: MergedFinding, snaps: list[Snapshot]) -> dict:
    """What the after-snapshots lack to re-check ``finding``'s rule: the
    snapshot to add the output to, the reasons and the commands (its
    not_checked entries, else the commands of every fact the rule requires)."""
    entries = [
        (snap, n)
        for snap in snaps
        for n in snap.not_checked or []
        if isinstance(n, dict) and n.get("rule") == finding.rule
    ]
    commands: list[str] = []
    reasons: list[tuple[str, str]] = []
    for _snap, n in entries:
        reasons.append((str(n.get("reason") or ""), str(n.get("reason_zh") or "")))
        commands += [str(c) for c in n.get("commands") or [] if c and c not in commands]
    if not commands:
        spec = load_all().get(finding.rule)
        commands = commands_for(spec.requires) if spec is not None else []
    target = entries[0][0] if entries else (snaps[-1] if snaps else None)
    return {
        "finding": finding,
        "rule": finding.rule,
        "snapshot": target,
        "reasons": reasons,
        "commands": commands,
    }


def verification(session: Session) -> dict:
    """Compare the before and after findings by rule: cleared, could not be
    re-checked, remaining, new (DESIGN.md "What a result claims").

    A before finding absent from the after findings is *cleared* only when an
    after-snapshot of its host (by name; every after-snapshot when none has
    that name) checked the rule; otherwise it *could not be re-checked*
    (``unverified``: the snapshot to add evidence to, why, and the commands).
    ``expected_clear`` lists remaining rules an applied measure should have
    cleared."""
    before = {f.rule: f for f in merged_findings(session, "before")}
    after = {f.rule: f for f in merged_findings(session, "after")}
    done = [s for s in snapshots_of(session, "after") if s.status == Snapshot.Status.DONE]
    has_after = bool(done)
    applied = session.measures.filter(status=PlannedMeasure.Status.APPLIED).select_related("measure")
    should_clear = {r for pm in applied for r in (pm.measure.rules or [])}
    names = {snap.pk: _host_names(snap) for snap in done}
    cleared, unverified = [], []
    for rule in sorted(before):
        if rule in after or not has_after:
            continue
        finding = before[rule]
        ok = True
        for host in finding.hosts or [""]:
            mine = [snap for snap in done if host in names[snap.pk]] or done
            if not any(rechecked(rule, snap) for snap in mine):
                ok = False
        if ok:
            cleared.append(finding)
        else:
            unverified.append(_recheck_request(finding, done))
    return {
        "has_after": has_after,
        "cleared": cleared,
        "unverified": unverified,
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

"""What the attached snapshots found, merged across hosts per rule, the
session's signature, and the cases like it (by findings, or by its words)."""

from __future__ import annotations

from dataclasses import dataclass, field

from collectors.facts import SnapshotFacts
from config.language import content_language, in_language, reads_chinese
from kb.models import CaseMeasure
from kb.similarity import NEW_PROBLEM_THRESHOLD, rank, serious_rules, snapshot_features, sounds_like
from triage.models import Finding, Snapshot
from triage.severity import SEVERITIES, severity_rank
from troubleshoot.models import Session, SessionSnapshot
from troubleshoot.snapshots import snapshots_of


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
        return in_language(self.title, self.title_zh, reads_chinese(language))

    def localized_explanation(self, language: str) -> str:
        return in_language(self.explanation, self.explanation_zh, reads_chinese(language))


def _current_findings(snaps: list[Snapshot]) -> list[Finding]:
    return Finding.current_of(snap for snap in snaps if snap.status == Snapshot.Status.DONE)


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
        elif severity_rank(f.severity) < severity_rank(item.severity):
            item.severity = f.severity
        host = f.host or f.snapshot.host_label
        if host not in item.hosts:
            item.hosts.append(host)
        for slug in f.measures:
            if slug not in item.measures:
                item.measures.append(slug)
        if f.snapshot_id not in item.snapshot_ids:
            item.snapshot_ids.append(f.snapshot_id)
    return sorted(merged.values(), key=lambda m: (severity_rank(m.severity), m.rule))


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
        language=content_language(language),
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
    return sounds_like(text, language=content_language(language))


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

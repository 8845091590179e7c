"""What the attached snapshots found, merged across hosts per rule, the
session's signature, and the cases like it (by findings, or by its words)."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from django.db.models import F, Q

from collectors.derived.features import snapshot_features
from collectors.facts import SnapshotFacts
from config.language import content_language, in_language, reads_chinese
from engine.severity import SEVERITIES, severity_rank
from kb.models import CaseMeasure
from kb.similarity import NEW_PROBLEM_THRESHOLD, rank, serious_rules, sounds_like
from triage.models import Finding, Snapshot
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


def _merge(snaps: list[Snapshot]) -> list[MergedFinding]:
    """One entry per rule across ``snaps``, worst severity first; the hosts it
    fired on and the union of its measures are kept."""
    merged: dict[str, MergedFinding] = {}
    for f in _current_findings(snaps):
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


def merged_findings(session: Session, phase: str = SessionSnapshot.Phase.BEFORE) -> list[MergedFinding]:
    """One entry per rule across the phase's snapshots, worst severity first;
    the hosts it fired on and the union of its measures are kept."""
    return _merge(snapshots_of(session, phase))


def findings_by_severity(findings: list[MergedFinding]) -> list[tuple[str, list[MergedFinding]]]:
    return [
        (sev, [f for f in findings if f.severity == sev])
        for sev in SEVERITIES
        if any(f.severity == sev for f in findings)
    ]


def _signature(snaps: list[Snapshot], merged: list[MergedFinding]) -> dict:
    done = [s for s in snaps if s.status == Snapshot.Status.DONE]
    features = snapshot_features(SnapshotFacts(hosts=[s.host_facts() for s in done]))
    return {"rules": sorted({f.rule for f in merged}), "features": features}


def signature_of(session: Session, phase: str = SessionSnapshot.Phase.BEFORE) -> dict:
    """Rules and environment features of the phase's snapshots, the shape of a
    case signature (``{"rules": [...], "features": [...]}``)."""
    snaps = snapshots_of(session, phase)
    return _signature(snaps, _merge(snaps))


class SessionFindings:
    """What a session's before-snapshots found and the cases like it, each
    computed once: a wizard page shows the merged findings, the similar cases
    and what they did in several places, from one set of queries."""

    def __init__(self, session: Session, *, language: str = "en"):
        self.session = session
        self.language = language

    @cached_property
    def snapshots(self) -> list[Snapshot]:
        return snapshots_of(self.session, SessionSnapshot.Phase.BEFORE)

    @cached_property
    def merged(self) -> list[MergedFinding]:
        return _merge(self.snapshots)

    @cached_property
    def serious(self) -> list[str]:
        return serious_rules(self.merged)

    @cached_property
    def signature(self) -> dict:
        return _signature(self.snapshots, self.merged)

    def similar_cases(self, limit: int = 5) -> list[dict]:
        """Published cases like the before-snapshots, best first, each with why."""
        # Only warning/critical findings (or a strong match of the symptom text)
        # qualify a case; a session whose snapshots are healthy gets none.
        if not self.serious and not self.session.symptom:
            return []
        return rank(
            self.signature["rules"],
            self.signature["features"],
            symptom=self.session.symptom,
            language=content_language(self.language),
            limit=limit,
            threshold=NEW_PROBLEM_THRESHOLD,
            qualifying=self.serious,
        )

    @cached_property
    def similar(self) -> list[dict]:
        return self.similar_cases()

    @cached_property
    def sounds_like(self) -> list[dict]:
        """ "Cases that sound like this" for a session no case explains:
        compared by the words of its title and symptom
        (``kb.similarity.sounds_like``, the same comparison as a report's pasted
        write-up). Empty when a warning or critical finding of its snapshots is
        there: the rules speak then."""
        text = "\n".join(t for t in (self.session.title, self.session.symptom) if t)
        if not text.strip() or self.serious:
            return []
        return sounds_like(text, language=content_language(self.language))

    @cached_property
    def founding(self) -> list[dict]:
        return founding_measures(self.session, self.similar)


def similar_cases(session: Session, *, language: str = "en", limit: int = 5) -> list[dict]:
    """Published cases like the before-snapshots, best first, each with why."""
    return SessionFindings(session, language=language).similar_cases(limit)


def sounds_like_cases(session: Session, *, language: str = "en") -> list[dict]:
    """See :attr:`SessionFindings.sounds_like`."""
    return SessionFindings(session, language=language).sounds_like


def founding_measures(session: Session, cases: list[dict]) -> list[dict]:
    """What the similar cases did for the rules this session shares with them:
    ``{"case": slug, "measure": slug, "status", "outcome", "rules": [...]}``.
    The steps of every case are read in one query."""
    wanted = [
        (case["slug"], case.get("language", "en"), set(case.get("shared_rules") or []))
        for case in cases
        if case.get("shared_rules")
    ]
    if not wanted:
        return []
    which = Q()
    for slug, language, _shared in wanted:
        which |= Q(case__slug=slug, case__language=language)
    steps: dict[tuple[str, str], list[Any]] = defaultdict(list)
    rows = (
        CaseMeasure.objects.filter(which)
        .select_related("measure")
        .annotate(case_slug=F("case__slug"), case_language=F("case__language"))
    )
    for step in rows:
        steps[(step.case_slug, step.case_language)].append(step)
    out = []
    for slug, language, shared in wanted:
        for step in steps[(slug, language)]:
            hit = sorted(shared & set(step.measure.rules or []))
            if hit:
                out.append(
                    {
                        "case": slug,
                        "measure": step.measure.slug,
                        "status": step.status,
                        "status_label": step.get_status_display(),
                        "outcome": step.outcome,
                        "rules": hit,
                    }
                )
    return out

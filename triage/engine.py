"""Run every registered rule over the facts of one snapshot.

A rule declares the facts it needs (``requires`` names keys of
:data:`FACT_CHECKS`). When they are missing the rule is reported as skipped
with the reason (``missing <fact>``) instead of silently producing nothing, so
a report tells "checked and fine" apart from "could not check". A rule that
raises is reported in ``skipped`` with the exception type; one broken rule
never stops the analysis.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from collectors.facts import HostFacts, SnapshotFacts, to_dict
from triage.rules import SEVERITIES, Finding, RuleContext, RuleSpec, load_all

logger = logging.getLogger(__name__)

# Bump whenever a rule's behaviour changes (thresholds, new rules, evidence):
# snapshots analysed by an older version are re-analysed.
ENGINE_VERSION = "2"


def _any_host(pred: Callable[[HostFacts], Any]) -> Callable[[SnapshotFacts], bool]:
    return lambda snap: any(pred(h) for h in snap.hosts)


def _numa_nodes(h: HostFacts) -> list:
    return list(h.numa.nodes.values()) if h.numa else []


FACT_CHECKS: dict[str, Callable[[SnapshotFacts], bool]] = {
    "cpu": _any_host(lambda h: h.cpu is not None),
    "numa": _any_host(lambda h: h.numa_node_count() is not None),
    "numa_distances": _any_host(lambda h: bool(h.numa and h.numa.distances)),
    "node_meminfo": _any_host(
        lambda h: any(n.mem_total_kb() is not None and n.mem_free_kb() is not None for n in _numa_nodes(h))
    ),
    "numastat": _any_host(lambda h: any(n.numastat for n in _numa_nodes(h))),
    "meminfo": _any_host(lambda h: h.meminfo is not None),
    "hugepages": _any_host(
        lambda h: (
            h.hugepages is not None
            or (h.meminfo is not None and "HugePages_Total" in h.meminfo.values)
            or any("HugePages_Total" in n.meminfo for n in _numa_nodes(h))
            or (h.sysctl is not None and "vm.nr_hugepages" in h.sysctl.values)
        )
    ),
    "sysctl": _any_host(lambda h: h.sysctl is not None),
    "cmdline": _any_host(lambda h: h.cmdline is not None),
    "kernel": _any_host(lambda h: h.kernel is not None),
    "domains": _any_host(lambda h: bool(h.domains)),
    "virsh_list": _any_host(lambda h: h.virsh_list is not None),
    "guest": lambda snap: bool(snap.guests()),
    "database": _any_host(lambda h: h.database is not None),
    "db_variables": _any_host(lambda h: bool(h.database and h.database.variables)),
    "db_version": _any_host(lambda h: bool(h.database and h.database.version)),
    "db_events": _any_host(lambda h: bool(h.database and h.database.events)),
    "oceanbase": _any_host(lambda h: bool(h.oceanbase and h.oceanbase.parameters)),
    "odp": _any_host(lambda h: bool(h.oceanbase and h.oceanbase.proxy_config)),
    "sql_audit": _any_host(lambda h: bool(h.oceanbase and h.oceanbase.plan_type_counts)),
    "tc": _any_host(lambda h: h.tc is not None),
    "pings": _any_host(lambda h: bool(h.pings)),
    "cpu_usage": _any_host(lambda h: h.cpu_usage is not None),
    "per_cpu_usage": _any_host(
        lambda h: bool(h.cpu_usage and [c for c in h.cpu_usage.per_cpu if c.cpu != "all"])
    ),
    "softirqs": _any_host(lambda h: h.softirqs is not None),
    "disks": _any_host(lambda h: bool(h.disks and h.disks.devices)),
    "benchmarks": _any_host(lambda h: bool(h.benchmarks)),
    # all hosts of a snapshot are one cluster once it holds two physical hosts
    "cluster": lambda snap: len(snap.physical_hosts()) >= 2,
}


@dataclass
class NotChecked:
    """A rule that could not be evaluated on a host where it is relevant, and
    how to get the evidence it needs (DESIGN.md ``not_checked``)."""

    rule: str
    reason: str  # "no /proc/meminfo or HugePages_Total was read"
    reason_zh: str = ""
    commands: list[str] = field(default_factory=list)  # exact commands that produce the evidence
    host: str = ""


@dataclass
class AnalysisResult:
    findings: list[Finding] = field(default_factory=list)
    # (rule id, reason): "missing <fact>" or "error: <ExceptionType>: <message>"
    skipped: list[tuple[str, str]] = field(default_factory=list)
    engine_version: str = ENGINE_VERSION
    # rule IDs evaluated (their facts were there), and the relevant ones that were not
    checked: list[str] = field(default_factory=list)
    not_checked: list[NotChecked] = field(default_factory=list)

    @property
    def rule_ids(self) -> set[str]:
        return {f.rule for f in self.findings}


def missing_facts(spec: RuleSpec, snapshot: SnapshotFacts) -> list[str]:
    """Names of the facts ``spec`` needs that the snapshot lacks."""
    missing = []
    for name in spec.requires:
        check = FACT_CHECKS.get(name)
        if check is None:
            raise KeyError(f"rule {spec.id} requires unknown fact {name!r}")
        if not check(snapshot):
            missing.append(name)
    if spec.requires_mode == "any" and len(missing) < len(spec.requires):
        return []
    return missing


def _severity_rank(finding: Finding) -> int:
    return SEVERITIES.index(finding.severity) if finding.severity in SEVERITIES else len(SEVERITIES)


def analyze(snapshot: SnapshotFacts, rules: dict[str, RuleSpec] | None = None) -> AnalysisResult:
    """Run ``rules`` (default: the whole registry) over ``snapshot``."""
    registry = rules if rules is not None else load_all()
    ctx = RuleContext(snapshot=snapshot)
    result = AnalysisResult()
    for rule_id in sorted(registry):
        spec = registry[rule_id]
        try:
            missing = missing_facts(spec, snapshot)
            if missing:
                joiner = " or " if spec.requires_mode == "any" else ", "
                result.skipped.append((rule_id, "missing " + joiner.join(missing)))
                continue
            found = list(spec.func(ctx) or ())
        except Exception as exc:  # a broken rule must not lose the other findings
            logger.exception("rule %s failed", rule_id)
            result.skipped.append((rule_id, f"error: {type(exc).__name__}: {exc}"))
            continue
        result.checked.append(rule_id)
        result.findings.extend(found)
    result.findings.sort(key=lambda f: (_severity_rank(f), f.rule, f.host))
    return result


def finding_to_dict(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "severity": finding.severity,
        "title": finding.title,
        "title_zh": finding.title_zh,
        "explanation": finding.explanation,
        "explanation_zh": finding.explanation_zh,
        "evidence": [
            {
                "fact": e.fact,
                "value": to_dict(e.value),
                "artifact": e.artifact,
                "line": e.line,
                "host": e.host,
            }
            for e in finding.evidence
        ],
        "measures": list(finding.measures),
        "host": finding.host,
        "impact": finding.impact,
    }


def _similar_cases(
    findings: list[Finding], snapshot: SnapshotFacts, symptom: str = ""
) -> list[dict[str, Any]]:
    # The knowledge base fills this in once it exists; analysis must not
    # depend on it (no database, kb app not migrated yet, ...).
    try:
        from kb.similarity import similar_cases_for
    except ImportError:
        return []
    try:
        return list(similar_cases_for(findings, snapshot, symptom=symptom))
    except Exception:
        logger.exception("similar cases lookup failed")
        return []


def result_to_json(
    snapshot: SnapshotFacts,
    result: AnalysisResult,
    errors: list | None = None,
    *,
    similar_cases: list[dict[str, Any]] | None = None,
    symptom: str = "",
) -> dict[str, Any]:
    """The ``--json`` object of DESIGN.md (also the API's findings shape).
    ``similar_cases`` defaults to the knowledge base's answer (hook
    ``kb.similarity.similar_cases_for``, given ``symptom`` as its text); pass
    ``[]`` to keep the database out."""
    if errors is None:
        errors = snapshot.errors
    if similar_cases is None:
        similar_cases = _similar_cases(result.findings, snapshot, symptom)
    return {
        "engine_version": result.engine_version,
        "facts": {"hosts": [to_dict(h) for h in snapshot.hosts]},
        "findings": [finding_to_dict(f) for f in result.findings],
        "skipped": [{"rule": rule_id, "reason": reason} for rule_id, reason in result.skipped],
        "similar_cases": similar_cases,
        "checked": list(result.checked),
        "not_checked": [to_dict(n) for n in result.not_checked],
        "errors": [
            {
                "artifact": getattr(e, "artifact", ""),
                "message": getattr(e, "message", str(e)),
                "line": getattr(e, "line", None),
            }
            for e in errors
        ],
    }

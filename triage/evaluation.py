"""Score the engine against an evaluation set of real snapshots.

An evaluation set is a directory of snapshot directories (``tests/evaluation/``).
Each snapshot directory holds its input files, a ``SOURCE.md`` and an
``expected.json``::

    {"must_fire": ["net.netem_delay"], "must_not_fire": ["net.softirq_hotspot"],
     "top_case": "oceanbase-bmsql-tuning", "healthy": false, "notes": "..."}

A snapshot whose problem is the one of a published library case
(``kb/data/library``) names it instead of ``top_case``, with why:
``"library_case": "redis-fork-latency-xen", "library_case_why": "..."`` (the
source the snapshot and the case share, or what makes it the same problem).

Every other entry of the directory is one host, exactly as one path given to
``manage.py analyze`` (a file, or a directory of artifact files); several
entries are several hosts analysed together. Entries whose name starts with
``.`` or ``_`` are ignored, and so are directories without ``expected.json``.

Measures (``evaluate_set``):

* must-fire recall: the share of expected rule IDs that fired (any severity);
* false alarms: a ``must_not_fire`` rule firing at warning or critical (on a
  healthy snapshot: any rule), and any similar case offered on a healthy
  snapshot (a healthy host has no problem to match, issue 17);
* top-1 case: over the snapshots with a ``top_case``, the share whose best
  similar case is that case (a founding case: the acceptance threshold);
* top-1 library case: the same over the snapshots with a ``library_case``,
  reported on its own (issue 27);
* lines read: ``read_lines + prompt_lines + prose_lines + unused_lines`` over
  ``lines`` of the hosts' ``reading`` (``None`` when no host reports any line):
  the output of a command Casebook recognises but does not use is accounted
  for; ``unused_lines`` is also reported on its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from collectors.archive import load_snapshot
from engine.run import analyze
from engine.severity import severity_rank
from kb.similarity import QUALIFYING_SEVERITIES
from triage.management.commands.analyze import prose_symptom

EXPECTED = "expected.json"
SKIPPED_FILES = {EXPECTED, "SOURCE.md", "README.md"}


class EvaluationError(ValueError):
    """An evaluation set or an ``expected.json`` that cannot be used."""


@dataclass
class Expectation:
    must_fire: list[str] = field(default_factory=list)
    must_not_fire: list[str] = field(default_factory=list)
    top_case: str | None = None
    healthy: bool = False
    notes: str = ""
    library_case: str | None = None  # the published library case of the snapshot's problem
    library_case_why: str = ""  # the shared source, or what makes it the same problem


@dataclass
class SnapshotOutcome:
    """What the engine did on one snapshot, against its expectation."""

    name: str
    expected: Expectation
    fired: dict[str, str]  # rule -> highest severity
    misses: list[str]  # must_fire rules that did not fire
    false_alarms: list[str]  # "rule (severity)" or "similar case <slug> on a healthy snapshot"
    similar_cases: list[str]  # slugs, best first
    top_case_ok: bool | None  # None: the snapshot has no top_case
    lines: int
    lines_read: int
    hosts: int
    errors: list[str] = field(default_factory=list)
    lines_unused: int = 0  # of lines_read: outputs recognised but not used
    library_case_ok: bool | None = None  # None: the snapshot has no library_case


def load_expectation(path: Path) -> Expectation:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EvaluationError(f"{path}: {exc}") from exc
    if not isinstance(data, dict):
        raise EvaluationError(f"{path}: expected a JSON object")
    unknown = set(data) - {
        "must_fire", "must_not_fire", "top_case", "healthy", "notes", "library_case", "library_case_why",
    }  # fmt: skip
    if unknown:
        raise EvaluationError(f"{path}: unknown keys {sorted(unknown)}")
    exp = Expectation(
        must_fire=list(data.get("must_fire") or []),
        must_not_fire=list(data.get("must_not_fire") or []),
        top_case=data.get("top_case") or None,
        healthy=bool(data.get("healthy", False)),
        notes=str(data.get("notes") or ""),
        library_case=data.get("library_case") or None,
        library_case_why=str(data.get("library_case_why") or ""),
    )
    overlap = set(exp.must_fire) & set(exp.must_not_fire)
    if overlap:
        raise EvaluationError(f"{path}: rules both in must_fire and must_not_fire: {sorted(overlap)}")
    if exp.healthy and (exp.must_fire or exp.top_case or exp.library_case):
        raise EvaluationError(f"{path}: a healthy snapshot has no must_fire, top_case or library_case")
    if exp.library_case and not exp.library_case_why:
        raise EvaluationError(f"{path}: library_case without library_case_why (its source or justification)")
    if exp.library_case and exp.top_case:
        raise EvaluationError(f"{path}: one expected first case: top_case or library_case")
    return exp


def snapshot_dirs(root: Path) -> list[Path]:
    """The snapshot directories of an evaluation set, in name order."""
    root = Path(root)
    if (root / EXPECTED).is_file():
        return [root]
    if not root.is_dir():
        raise EvaluationError(f"{root}: not a directory")
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / EXPECTED).is_file())


def snapshot_inputs(directory: Path) -> list[Path]:
    """The hosts of one snapshot directory: every entry but the metadata files."""
    return sorted(
        p for p in directory.iterdir() if p.name not in SKIPPED_FILES and not p.name.startswith((".", "_"))
    )


SimilarFn = Callable[..., list[dict]]  # (findings, snapshot, *, symptom="") -> cases


def evaluate_snapshot(directory: Path, similar: SimilarFn | None = None) -> SnapshotOutcome:
    """Load, analyse and score one snapshot directory, as ``manage.py analyze`` would."""
    expected = load_expectation(directory / EXPECTED)
    inputs = snapshot_inputs(directory)
    if not inputs:
        raise EvaluationError(f"{directory}: no input file")
    snapshot = load_snapshot(inputs)
    result = analyze(snapshot)
    fired: dict[str, str] = {}
    for f in result.findings:
        if f.rule not in fired or severity_rank(f.severity) < severity_rank(fired[f.rule]):
            fired[f.rule] = f.severity
    if similar is not None:
        cases = list(similar(result.findings, snapshot, symptom=prose_symptom(snapshot, inputs)))
    else:
        cases = []
    slugs = [slug for c in cases if isinstance(c, dict) and (slug := c.get("slug"))]
    forbidden = list(expected.must_not_fire)
    if expected.healthy:  # a healthy snapshot forbids every warning/critical rule, listed or newer
        forbidden += sorted(r for r in fired if r not in expected.must_not_fire)
    false_alarms = [f"{r} ({fired[r]})" for r in forbidden if fired.get(r) in QUALIFYING_SEVERITIES]
    if expected.healthy:
        false_alarms += [f"similar case {s} on a healthy snapshot" for s in slugs]
    lines = read = unused = 0
    for host in snapshot.hosts:
        reading = host.reading
        lines += reading.lines
        read += reading.read_lines + reading.prompt_lines + reading.prose_lines + reading.unused_lines
        unused += reading.unused_lines
    errors = [f"{e.artifact}: {e.message}" for h in snapshot.hosts for e in h.errors]
    return SnapshotOutcome(
        name=directory.name,
        expected=expected,
        fired=dict(sorted(fired.items())),
        misses=[r for r in expected.must_fire if r not in fired],
        false_alarms=false_alarms,
        similar_cases=slugs,
        top_case_ok=_first_is(slugs, expected.top_case),
        library_case_ok=_first_is(slugs, expected.library_case),
        lines=lines,
        lines_read=read,
        lines_unused=unused,
        hosts=len(snapshot.hosts),
        errors=errors,
    )


def _first_is(slugs: list[str], expected: str | None) -> bool | None:
    """Whether the best similar case is ``expected`` (None: nothing expected)."""
    return (bool(slugs) and slugs[0] == expected) if expected else None


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def evaluate_set(root: Path, similar: SimilarFn | None = None) -> dict[str, Any]:
    """Score every snapshot of ``root``; the totals and the per-snapshot outcomes."""
    outcomes = [evaluate_snapshot(d, similar) for d in snapshot_dirs(Path(root))]
    expected_rules = sum(len(o.expected.must_fire) for o in outcomes)
    missed = sum(len(o.misses) for o in outcomes)
    with_case = [o for o in outcomes if o.top_case_ok is not None]
    with_library = [o for o in outcomes if o.library_case_ok is not None]
    lines = sum(o.lines for o in outcomes)
    totals = {
        "snapshots": len(outcomes),
        "healthy": sum(1 for o in outcomes if o.expected.healthy),
        "must_fire": expected_rules,
        "must_fire_hit": expected_rules - missed,
        "recall": _ratio(expected_rules - missed, expected_rules),
        "false_alarms": sum(len(o.false_alarms) for o in outcomes),
        "false_alarm_snapshots": sum(1 for o in outcomes if o.false_alarms),
        "similar_on_healthy": sum(1 for o in outcomes if o.expected.healthy and o.similar_cases),
        "top_case_snapshots": len(with_case),
        "top_case_hit": sum(1 for o in with_case if o.top_case_ok),
        "top1": _ratio(sum(1 for o in with_case if o.top_case_ok), len(with_case)),
        "library_case_snapshots": len(with_library),
        "library_case_hit": sum(1 for o in with_library if o.library_case_ok),
        "top1_library": _ratio(sum(1 for o in with_library if o.library_case_ok), len(with_library)),
        "lines": lines,
        "lines_read": sum(o.lines_read for o in outcomes),
        "read_share": _ratio(sum(o.lines_read for o in outcomes), lines),
        "lines_unused": sum(o.lines_unused for o in outcomes),
    }
    return {"totals": totals, "snapshots": [_outcome_dict(o) for o in outcomes]}


def _outcome_dict(o: SnapshotOutcome) -> dict[str, Any]:
    data = asdict(o)
    data["expected"] = asdict(o.expected)
    return data


def thresholds_failed(
    totals: dict[str, Any],
    *,
    min_recall: float | None = None,
    max_false_alarms: int | None = None,
    min_top1: float | None = None,
) -> list[str]:
    """Which requested thresholds the totals miss, in words (empty: all met)."""
    failed = []
    if min_recall is not None and (totals["recall"] if totals["recall"] is not None else 1.0) < min_recall:
        failed.append(f"must-fire recall {_pct(totals['recall'])} < {min_recall:.0%}")
    if max_false_alarms is not None and totals["false_alarms"] > max_false_alarms:
        failed.append(f"false alarms {totals['false_alarms']} > {max_false_alarms}")
    if min_top1 is not None and (totals["top1"] if totals["top1"] is not None else 1.0) < min_top1:
        failed.append(f"top-1 case {_pct(totals['top1'])} < {min_top1:.0%}")
    return failed


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def render_text(report: dict[str, Any]) -> str:
    """The per-snapshot misses and false alarms, then the totals."""
    out = []
    for s in report["snapshots"]:
        exp = s["expected"]
        marks = []
        if s["misses"]:
            marks.append("missed: " + ", ".join(s["misses"]))
        if s["false_alarms"]:
            marks.append("false alarms: " + ", ".join(s["false_alarms"]))
        for key, expected_key in (("top_case_ok", "top_case"), ("library_case_ok", "library_case")):
            if s.get(key) is False:
                got = s["similar_cases"][0] if s["similar_cases"] else "none"
                marks.append(f"top case {got}, expected {exp[expected_key]}")
        status = "ok" if not marks else "; ".join(marks)
        kind = "healthy" if exp["healthy"] else "problem"
        read = f"{s['lines_read']}/{s['lines']} lines read" if s["lines"] else "reading n/a"
        if s.get("lines_unused"):
            read += f" ({s['lines_unused']} unused)"
        out.append(f"{s['name']} [{kind}, {s['hosts']} host(s), {read}]: {status}")
    t = report["totals"]
    out.append("")
    out.append(f"Snapshots: {t['snapshots']} ({t['healthy']} healthy)")
    out.append(f"Must-fire recall: {_pct(t['recall'])} ({t['must_fire_hit']}/{t['must_fire']})")
    out.append(
        f"False alarms: {t['false_alarms']} on {t['false_alarm_snapshots']} snapshot(s)"
        f" (similar case on a healthy snapshot: {t['similar_on_healthy']})"
    )
    out.append(f"Top-1 case: {_pct(t['top1'])} ({t['top_case_hit']}/{t['top_case_snapshots']})")
    if t.get("library_case_snapshots"):
        out.append(
            f"Top-1 library case: {_pct(t['top1_library'])}"
            f" ({t['library_case_hit']}/{t['library_case_snapshots']})"
        )
    if t["lines"]:
        out.append(f"Lines read: {_pct(t['read_share'])} ({t['lines_read']}/{t['lines']})")
        out.append(f"  of which output recognised but not used: {t.get('lines_unused', 0)}")
    else:
        out.append("Lines read: n/a (no host reports its reading)")
    return "\n".join(out) + "\n"

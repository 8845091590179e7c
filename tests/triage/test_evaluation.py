"""``manage.py evaluate`` on the evaluation set (tests/evaluation/, issues 11, 12 and 17).

The set's expectations were committed before the command existed; these tests
check the set's layout, that the command scores it and reports its totals, and
(expected to fail until the parser and rule branches are merged) that it meets
the acceptance thresholds."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from engine.rules import load_all
from kb import services, similarity
from tests.conftest import ROOT
from triage import evaluation

SET = ROOT / "tests" / "evaluation"
_cache: dict[str, dict] = {}


@pytest.fixture
def cases(db):
    services.load_all()
    similarity.invalidate()


@pytest.fixture
def report(cases):
    """The whole set scored once per test session (the report is plain data)."""
    if "report" not in _cache:
        _cache["report"] = evaluation.evaluate_set(SET, similarity.similar_cases_for)
    return _cache["report"]


def test_set_layout_sources_and_expectations():
    dirs = evaluation.snapshot_dirs(SET)
    assert len(dirs) >= 40
    serious = {rid for rid, spec in load_all().items() if spec.severity in similarity.QUALIFYING_SEVERITIES}
    healthy = 0
    for d in dirs:
        exp = evaluation.load_expectation(d / "expected.json")
        source = (d / "SOURCE.md").read_text(encoding="utf-8")
        inputs = evaluation.snapshot_inputs(d)
        assert inputs, d
        for path in inputs:  # every input file is named in SOURCE.md
            names = [path.name] if path.is_file() else [p.name for p in path.iterdir()]
            for name in names:
                assert name in source, (d.name, name)
        if exp.healthy:
            healthy += 1
            # it lists the warning/critical rules (evaluate forbids any newer one too)
            assert len(set(exp.must_not_fire) & serious) >= 30, d.name
            assert exp.top_case is None
    assert healthy >= 12
    assert len(dirs) - healthy >= 20


def test_evaluate_command_reports_totals(cases):
    out = io.StringIO()
    call_command("evaluate", str(SET / "31-ceph-netem-transcript"), stdout=out)
    text = out.getvalue()
    assert text.startswith("31-ceph-netem-transcript [problem, 1 host(s)")
    for label in ("Must-fire recall:", "False alarms:", "Top-1 case:", "Lines read:"):
        assert label in text
    out = io.StringIO()
    call_command("evaluate", str(SET / "01-this-vm-basic-transcript"), "--json", stdout=out)
    data = json.loads(out.getvalue())
    assert data["totals"]["snapshots"] == 1 and data["totals"]["healthy"] == 1
    assert data["snapshots"][0]["expected"]["healthy"] is True


def test_whole_set_is_scored(report):
    totals = report["totals"]
    assert totals["snapshots"] == len(evaluation.snapshot_dirs(SET))
    assert totals["must_fire"] >= 30 and 0 <= totals["must_fire_hit"] <= totals["must_fire"]
    assert totals["top_case_snapshots"] >= 4
    for snap in report["snapshots"]:
        assert set(snap["misses"]) <= set(snap["expected"]["must_fire"])


def test_a_threshold_not_met_exits_non_zero(cases):
    with pytest.raises(CommandError) as err:
        call_command(
            "evaluate", str(SET / "31-ceph-netem-transcript"), "--min-recall", "1.01", stdout=io.StringIO()
        )
    assert err.value.returncode == 1
    assert "must-fire recall" in str(err.value)


def test_similar_case_on_a_healthy_snapshot_is_a_false_alarm():
    def offers_a_case(findings, snapshot, symptom=""):
        return [{"slug": "kunpeng-stream-zone-reclaim", "score": 0.4}]

    outcome = evaluation.evaluate_snapshot(SET / "19-core-i7-single-node", offers_a_case)
    assert outcome.false_alarms == ["similar case kunpeng-stream-zone-reclaim on a healthy snapshot"]


def test_any_serious_rule_on_a_healthy_snapshot_is_a_false_alarm(tmp_path):
    snap = tmp_path / "healthy"
    snap.mkdir()
    for name in ("question.txt", "SOURCE.md"):
        (snap / name).write_bytes((SET / "34-opteron-uma-prose-sockets" / name).read_bytes())
    (snap / "expected.json").write_text(json.dumps({"must_not_fire": [], "healthy": True}))
    (snap / "lscpu.txt").write_bytes((SET / "09-xeon-e5410-fsb" / "issue.txt").read_bytes())
    outcome = evaluation.evaluate_snapshot(snap)
    serious = [r for r, sev in outcome.fired.items() if sev in similarity.QUALIFYING_SEVERITIES]
    assert [a.split(" ")[0] for a in outcome.false_alarms] == serious


def test_library_case_expectations(tmp_path):
    """Issue 27: a snapshot names the library case of its problem with why;
    it is scored apart from the founding cases' top-1."""
    path = tmp_path / "expected.json"
    for bad in (
        {"library_case": "redis-fork-latency-xen"},  # no why
        {"library_case": "redis-fork-latency-xen", "library_case_why": "x", "healthy": True},
        {"library_case": "redis-fork-latency-xen", "library_case_why": "x", "top_case": "zstack-mariadb-v2v"},
    ):
        path.write_text(json.dumps(bad))
        with pytest.raises(evaluation.EvaluationError):
            evaluation.load_expectation(path)
    snap = tmp_path / "xen"
    snap.mkdir()
    for name in ("issue.txt", "SOURCE.md", "expected.json"):
        (snap / name).write_bytes((SET / "524-redis-ec2-xen-fork-981ms" / name).read_bytes())
    expected = evaluation.load_expectation(snap / "expected.json")
    assert expected.library_case == "redis-fork-latency-xen" and "issue 1154" in expected.library_case_why
    library_slugs = {p.stem for p in services.case_files(library=True)}
    for d in evaluation.snapshot_dirs(SET):  # every library case named is a case of the library
        named = evaluation.load_expectation(d / "expected.json").library_case
        assert named is None or named in library_slugs, (d.name, named)

    def similar(findings, snapshot, *, symptom=""):
        return [{"slug": "redis-fork-latency-xen"}, {"slug": "zstack-mariadb-v2v"}]

    report = evaluation.evaluate_set(snap, similar)
    assert report["snapshots"][0]["library_case_ok"] is True and report["snapshots"][0]["top_case_ok"] is None
    totals = report["totals"]
    assert (totals["library_case_hit"], totals["library_case_snapshots"]) == (1, 1)
    assert totals["top1_library"] == 1.0
    assert totals["top1"] is None and "Top-1 library case: 100.0% (1/1)" in evaluation.render_text(report)


def test_thresholds_failed_names_each_threshold():
    totals = {"recall": 0.8, "false_alarms": 2, "top1": None}
    assert evaluation.thresholds_failed(totals, min_recall=0.95, max_false_alarms=0, min_top1=0.95) == [
        "must-fire recall 80.0% < 95%",
        "false alarms 2 > 0",
    ]
    assert evaluation.thresholds_failed(totals) == []


def test_expectation_contradictions_are_rejected(tmp_path):
    (tmp_path / "expected.json").write_text(
        json.dumps({"must_fire": ["net.netem_delay"], "must_not_fire": ["net.netem_delay"]})
    )
    with pytest.raises(evaluation.EvaluationError):
        evaluation.load_expectation(tmp_path / "expected.json")


def test_acceptance_thresholds(cases):
    call_command(
        "evaluate",
        str(SET),
        "--min-recall",
        "0.95",
        "--max-false-alarms",
        "0",
        "--min-top1",
        "0.95",
        stdout=io.StringIO(),
    )

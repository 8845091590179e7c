"""Similar cases on a text-only snapshot after issue 26's blind round L
(kb.similarity ``_text_qualifies``): a symptom text qualifies a case by the
case's distinctive terms, but one term that several cases share names a topic,
not a case's problem. The snapshots are read as ``manage.py evaluate`` reads
them (``triage.evaluation``: the inputs, the findings, the prose symptom)."""

from __future__ import annotations

import pytest

from collectors.archive import load_snapshot
from engine.run import analyze
from kb import services, similarity
from tests.conftest import ROOT
from triage.evaluation import prose_symptom, snapshot_inputs

BLIND_L = ROOT / "tests" / "evaluation_blind" / "round-l"
EVALUATION = ROOT / "tests" / "evaluation"


@pytest.fixture
def library(db):
    """The founding cases and the published library, as ``manage.py evaluate``
    loads them when a round names a library case (round L does)."""
    services.load_all(library=True)
    similarity.invalidate()


def _similar(directory):
    inputs = snapshot_inputs(directory)
    snapshot = load_snapshot(inputs)
    findings = analyze(snapshot).findings
    return similarity.similar_cases_for(findings, snapshot, symptom=prose_symptom(snapshot, inputs))


def test_one_topic_term_several_cases_hold_qualifies_no_case(library):
    """Rock64 linux-build issue 200 (round L, 1631): a user who cannot enable
    transparent hugepages on an ARM board; "transparent hugepage" is every THP
    case's term, not this post's problem."""
    (directory,) = BLIND_L.glob("1631-*")
    inputs = snapshot_inputs(directory)
    symptom = prose_symptom(load_snapshot(inputs), inputs)
    assert symptom.startswith("ayufan-rock64/linux-build")  # read as prose only
    # by the coverage of its terms alone (before readl), THP cases of other problems qualified
    with pytest.MonkeyPatch.context() as patch:
        threshold = similarity.TEXT_QUALIFY_THRESHOLD
        patch.setattr(similarity, "_text_qualifies", lambda _shared, coverage, _df: coverage >= threshold)
        assert len(_similar(directory)) > 1
    # one term they all hold qualifies none
    assert _similar(directory) == []


def test_a_term_only_one_case_holds_still_qualifies_it(library):
    """OceanBase issue 818 (prose only, Chinese): cpu_quota_concurrency is the
    OceanBase case's term alone."""
    cases = _similar(EVALUATION / "36-oceanbase-cpu-quota-prose-zh")
    assert [c["slug"] for c in cases] == ["oceanbase-bmsql-tuning"]

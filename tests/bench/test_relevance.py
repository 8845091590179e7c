"""The founding-cases half of bench/relevance.py (issue 13, acceptance 2): each
support-ticket query of bench/relevance_queries.yaml must rank its case first,
top-1 >= 95 %, on the configured backend (SQLite locally, PostgreSQL in CI).
The 100k-case half is benchmark-only (docs/performance.md)."""

from __future__ import annotations

import importlib.util

import pytest

from kb import services
from tests.conftest import ROOT

FOUNDING = (
    "zstack-mariadb-v2v",
    "kunpeng-stream-zone-reclaim",
    "openstack-kvm-crm-cpu",
    "percona-numa-interleave-startup",
    "oceanbase-bmsql-tuning",
)

pytestmark = pytest.mark.django_db


def _relevance():
    spec = importlib.util.spec_from_file_location("bench_relevance", ROOT / "bench" / "relevance.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_queries_are_varied_and_name_founding_cases():
    relevance = _relevance()
    queries = relevance.load_queries()
    assert len(queries) >= 80
    assert len({q["q"].lower() for q in queries}) == len(queries)
    kinds = {q["kind"] for q in queries}
    assert kinds == {"en", "zh", "mixed", "typo", "inflection"}
    slugs = {path.stem for path in services.case_files(library=True)}
    # Every query names a founding case; `also` names library cases that answer it as well.
    assert {q["expect"] for q in queries} == set(FOUNDING)
    assert {slug for q in queries for slug in q.get("also", [])} <= slugs


def test_founding_cases_rank_first():
    """With the whole library loaded (founding and published cases): a library
    case that answers a query as well is named in the query's `also`."""
    services.load_all(library=True)
    relevance = _relevance()
    result = relevance.evaluate(relevance.load_queries())
    assert result["top1"] >= relevance.TOP1_TARGET, relevance.report(result, "founding cases")
    assert result["mrr"] >= 0.95
    for kind, summary in result["kinds"].items():
        assert summary["top1"] >= 0.8, (kind, relevance.report(result, "founding cases"))

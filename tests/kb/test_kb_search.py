"""Acceptance 2: bilingual search on SQLite (FTS5) and PostgreSQL (tsvector).

Each backend runs in-process when it is the configured database; the other one
runs the same tests in a child pytest with DATABASE_URL pointing at it (the
PostgreSQL child uses its own database, ``casebook_kb`` -> ``test_casebook_kb``).
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest
from django.db import connection

from kb import search, services
from kb.models import Case
from tests.conftest import ROOT, port_open, service_unavailable

BACKENDS = ["sqlite", "postgresql"]
CHILD_ENV = "KB_SEARCH_CHILD"

ZSTACK = "zstack-mariadb-v2v"
KUNPENG = "kunpeng-stream-zone-reclaim"
OPENSTACK = "openstack-kvm-crm-cpu"
PERCONA = "percona-numa-interleave-startup"
OCEANBASE = "oceanbase-bmsql-tuning"

# (query, language filter, slugs that must be among the results)
QUERIES = [
    ("大页", None, {ZSTACK, PERCONA}),
    ("绑核", None, {ZSTACK}),
    ("内存交织", None, {PERCONA, ZSTACK}),
    ("interleave", None, {PERCONA, ZSTACK}),
    ("zone_reclaim_mode", None, {KUNPENG}),
    ("zone reclaim", None, {KUNPENG}),
    ("软中断", None, {OCEANBASE}),
    ("softirq", None, {OCEANBASE}),
    ("host-passthrough", None, {OPENSTACK}),
    ("L3 cache", None, {OPENSTACK}),
    ("启动慢", None, {PERCONA}),
    ("slow startup buffer pool", None, {PERCONA}),
    ("create index slow", None, {ZSTACK}),
    # across languages: English words find the Chinese version and the reverse
    ("huge pages", "zh", {ZSTACK, PERCONA}),
    ("slow startup", "zh", {PERCONA}),
    ("softirq", "zh", {OCEANBASE}),
    ("绑核", "en", {ZSTACK}),
    ("启动慢", "en", {PERCONA}),
    ("软中断", "en", {OCEANBASE}),
]


def _child_database_url(backend: str, tmp: Path) -> str:
    if backend == "sqlite":
        return f"sqlite:///{tmp / 'kb_search.sqlite3'}"
    base = os.environ.get("TEST_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/postgres")
    parts = urlsplit(base)
    if not port_open(parts.hostname or "127.0.0.1", parts.port or 5432):
        service_unavailable(f"PostgreSQL is not listening on {parts.hostname}:{parts.port or 5432}")
    return urlunsplit((parts.scheme, parts.netloc, "/casebook_kb", "", ""))


_child_results: dict[str, dict[str, tuple[str, str]]] = {}


def _run_child(backend: str, tmp_path_factory) -> dict[str, tuple[str, str]]:
    """Run this file's tests for ``backend`` in a child pytest; name -> (outcome, message)."""
    if backend in _child_results:
        return _child_results[backend]
    tmp = tmp_path_factory.mktemp(f"kb-search-{backend}")
    report = tmp / "junit.xml"
    env = dict(os.environ, DATABASE_URL=_child_database_url(backend, tmp), **{CHILD_ENV: backend})
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            __file__,
            "-q",
            "-p",
            "no:cacheprovider",
            "-k",
            backend,
            f"--junitxml={report}",
        ],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    results: dict[str, tuple[str, str]] = {}
    if report.exists():
        for case in ET.parse(report).getroot().iter("testcase"):
            outcome, message = "passed", ""
            for tag in ("failure", "error", "skipped"):
                node = case.find(tag)
                if node is not None:
                    outcome, message = tag, (node.get("message") or "") + (node.text or "")
            results[case.get("name")] = (outcome, message)
    if not results:
        pytest.fail(
            f"child pytest for {backend} produced no results:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    _child_results[backend] = results
    return results


def _in_process(backend: str) -> bool:
    return connection.vendor == backend


@pytest.fixture
def founding_cases(db):
    services.load_all(use_real_engine=False)
    return Case.objects.count()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(
    ("query", "language", "expected"), QUERIES, ids=[f"{q}-{lang}" for q, lang, _ in QUERIES]
)
def test_search_finds_founding_cases(backend, query, language, expected, request, tmp_path_factory):
    if not _in_process(backend):
        if os.environ.get(CHILD_ENV):
            pytest.fail(f"child for {os.environ[CHILD_ENV]} was configured with {connection.vendor}")
        outcome, message = _run_child(backend, tmp_path_factory).get(request.node.name, ("missing", ""))
        assert outcome == "passed", f"{backend}: {outcome}: {message}"
        return
    request.getfixturevalue("founding_cases")
    filters = {"state": "published"}
    if language:
        filters["language"] = language
    results = search.search(query, filters=filters)
    found = {hit.case.slug for hit in results.hits}
    assert expected <= found, f"{query!r} on {backend}: found {sorted(found)}"
    assert not results.relaxed, "every query word must match, not just any of them"
    if language:
        assert {hit.case.language for hit in results.hits} == {language}
    for hit in results.hits:
        assert hit.score > 0
    # The best hit is one of the expected cases, and its snippet marks a match.
    assert results.hits[0].case.slug in expected
    assert "<mark>" in results.hits[0].snippet or "<mark>" in str(
        search.highlight_title(results.hits[0].case.title, results.query)
    )


@pytest.mark.django_db
@pytest.mark.parametrize("backend", BACKENDS)
def test_filters_pagination_and_escaping(backend, request, tmp_path_factory):
    if not _in_process(backend):
        outcome, message = _run_child(backend, tmp_path_factory).get(request.node.name, ("missing", ""))
        assert outcome == "passed", f"{backend}: {outcome}: {message}"
        return
    request.getfixturevalue("founding_cases")
    # platform and database filters
    assert {h.case.slug for h in search.search("numa", filters={"platform": "openstack"}).hits} == {OPENSTACK}
    assert {h.case.slug for h in search.search("", filters={"database": "oceanbase"}).hits} == {OCEANBASE}
    # pagination: 10 published versions, 3 per page
    first = search.search("", filters={"state": "published"}, page=1, page_size=3)
    last = search.search("", filters={"state": "published"}, page=4, page_size=3)
    assert (first.total, first.pages, len(first.hits), len(last.hits)) == (10, 4, 3, 1)
    assert not last.has_next
    # state filter: an archived case disappears from the published search
    case = Case.objects.get(slug=KUNPENG, language="en")
    case.state = Case.State.ARCHIVED
    services.save_case(case)
    assert KUNPENG not in {
        h.case.slug
        for h in search.search("zone_reclaim_mode", filters={"state": "published", "language": "en"}).hits
    }
    assert {h.case.slug for h in search.search("zone_reclaim_mode", filters={"state": "archived"}).hits} == {
        KUNPENG
    }
    # markup in case text is escaped, only our <mark> is HTML
    case.symptom = "<script>alert(1)</script> zone_reclaim_mode & friends"
    services.save_case(case)
    snippet = search.search("zone_reclaim_mode", filters={"state": "archived"}).hits[0].snippet
    assert "<script>" not in snippet and "&lt;script&gt;" in snippet
    assert "<mark>zone_reclaim_mode</mark>" in snippet and "&amp; friends" in snippet
    # a query with FTS syntax characters is data, not syntax
    assert search.search('"NEAR( OR AND *', filters={}).total >= 0


def test_tokenizer_keeps_identifiers_whole_and_split():
    tokens = search.tokenize("vm.zone_reclaim_mode=1, innodb_numa_interleave ON, host-passthrough")
    expected = (
        "vmzonereclaimmode zonereclaimmode zone reclaim mode innodbnumainterleave innodb numa interleave"
    )
    for token in [*expected.split(), "hostpassthrough", "host", "passthrough"]:
        assert token in tokens


def test_tokenizer_segments_chinese_with_the_domain_dictionary():
    tokens = search.tokenize("关闭规格热修改后配置绑核和大页，避免跨NUMA访问远端内存导致启动慢，软中断集中")
    for word in ("规格热修改", "绑核", "大页", "跨numa", "远端内存", "启动慢", "软中断"):
        assert word in tokens, (word, tokens)
    # a two-character word inside a longer dictionary word is indexed too
    assert "大页" in search.tokenize("静态大页")
    assert search.dictionary_version().startswith("d1-")


def test_query_expansion_crosses_languages():
    query = search.parse_query("绑核 huge pages")
    assert len(query.groups) == 2
    assert ("vcpupin",) in query.groups[0] and ("大页",) in query.groups[1]
    chinese, english = search.parse_query("内存交织").groups, search.parse_query("interleave").groups
    assert len(chinese) == len(english) == 1
    assert set(chinese[0]) == set(english[0])


@pytest.mark.django_db
@pytest.mark.parametrize("backend", BACKENDS)
def test_common_query_with_candidate_cap(backend, request, tmp_path_factory, monkeypatch):
    """PostgreSQL ranks only the newest matches of a very common query; every
    page up to the requested one still comes back, newest-first among ties."""
    if not _in_process(backend):
        outcome, message = _run_child(backend, tmp_path_factory).get(request.node.name, ("missing", ""))
        assert outcome == "passed", f"{backend}: {outcome}: {message}"
        return
    request.getfixturevalue("founding_cases")
    monkeypatch.setattr(search, "CANDIDATE_CAP", 2)
    everything = search.search("numa", filters={"state": "published"}, page_size=4)
    assert everything.total >= 8 and len(everything.hits) == 4
    second = search.search("numa", filters={"state": "published"}, page=2, page_size=4)
    assert len(second.hits) == 4
    assert not {h.case.pk for h in everything.hits} & {h.case.pk for h in second.hits}
    # A rare identifier is not capped and is counted exactly.
    exact = search.search("cpu_quota_concurrency", filters={"state": "published"})
    assert exact.total == 2 and not exact.total_capped

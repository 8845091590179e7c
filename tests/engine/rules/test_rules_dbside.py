"""Database-side rules (PostgreSQL huge pages, Oracle SGA in huge pages,
MongoDB's vm.max_map_count) on published incidents and healthy hosts
(tests/fixtures/published/dbside and hostside, sources in
tests/fixtures/published/README.md; library case fixtures in tests/fixtures/cases)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES

DBSIDE = FIXTURES / "published" / "dbside"
HOSTSIDE = FIXTURES / "published" / "hostside"
CASES = FIXTURES / "cases"


def _fired(result, rule_id: str) -> list:
    return [f for f in result.findings if f.rule == rule_id]


# ---------------------------------------------------------------- PostgreSQL


def test_pg_huge_pages_unused_fires_on_a_120gb_pool_without_huge_pages(analyze_texts):
    # thebuild.com (Linux 7.0 regression write-up): 120 GB shared buffers on 4 KiB pages
    text = (CASES / "postgresql-linux70-preemption-spinlock" / "before" / "pg17-graviton4.txt").read_text()
    result = analyze_texts(text)
    assert "postgresql.huge_pages_unused" in result.rule_ids
    (f,) = _fired(result, "postgresql.huge_pages_unused")
    assert f.severity == "warning" and f.template == "try"
    assert f.values["need"] == 61440 and f.values["have"] == 0  # the write-up's ~61,440 2 MB pages
    assert [e.fact for e in f.evidence] == ["services[postgresql].shared_buffers", "hugepages.nr_hugepages"]
    assert all(e.line for e in f.evidence)


def test_pg_huge_pages_unused_quiet_on_this_machines_default_postgresql(analyze_texts):
    # PostgreSQL 15 on this machine: shared_buffers 128MB, huge_pages try (SHOW ALL)
    result = analyze_texts((DBSIDE / "this-vm-pg15-show-all.txt").read_text())
    assert "postgresql.huge_pages_unused" not in result.rule_ids
    assert "postgresql.huge_pages_unused" in result.checked


def test_pg_huge_pages_unused_asks_for_settings_on_a_postgres_process(analyze_texts):
    # this machine's PostgreSQL seen only in ps: its settings are what the rule decides on
    result = analyze_texts((DBSIDE / "this-vm-ps-postgres.txt").read_text())
    entries = [n for n in result.not_checked if n.rule == "postgresql.huge_pages_unused"]
    assert entries and any("SHOW ALL" in c for n in entries for c in n.commands)


# ---------------------------------------------------------------- Oracle


def test_oracle_sga_not_in_huge_pages_fires_on_the_alert_logs_85_percent(analyze_texts):
    # Tanel Poder (2013): 1202 MB SGA, 512 x 2 MB large pages, 85 % in large pages
    result = analyze_texts((DBSIDE / "tanel-11203-alert-large-pages-85pct.log").read_text())
    assert "oracle.sga_not_in_huge_pages" in result.rule_ids
    (f,) = _fired(result, "oracle.sga_not_in_huge_pages")
    assert f.template == "report" and f.values["pct"] == 85
    assert f.severity == "info"  # a 1.2 GiB SGA: below the 8 GiB warning
    assert f.evidence[0].fact == "services[oracle].sga_in_large_pages_pct" and f.evidence[0].line == 16


def test_oracle_sga_not_in_huge_pages_quiet_when_the_whole_sga_is_in_large_pages(analyze_texts):
    # Oracle Exadata Recipes: 16 GB SGA, 100 % in large pages (a vendor-configured database machine)
    result = analyze_texts((DBSIDE / "exadata-recipes-alert-large-pages-100pct.txt").read_text())
    assert "oracle.sga_not_in_huge_pages" not in result.rule_ids
    assert "oracle.sga_not_in_huge_pages" in result.checked


def test_oracle_sga_not_in_huge_pages_fires_on_a_pfiles_memory_target(analyze_texts):
    # wachira90's 11.2 notes: init.ora with memory_target=3G (AMM, no HugePages), RAM not shown
    text = (FIXTURES / "published" / "roundh" / "wachira90-oracle11g-initora-memory-target.md").read_text()
    result = analyze_texts(text)
    (f,) = _fired(result, "oracle.sga_not_in_huge_pages")
    assert f.template == "amm" and f.values["target"] == "3G"
    assert f.severity == "info"  # 3 GiB: below the 8 GiB warning, the RAM is not shown
    assert f.evidence[0].fact == "services[oracle].memory_target" and f.evidence[0].line == 5


# ---------------------------------------------------------------- MongoDB


@pytest.mark.parametrize(
    "name",
    [
        "mongodb-k8s-operator-1400-startup-warnings.txt",  # mongodb-kubernetes-operator#1400
        "r-universe-509-mongodb8-warnings.txt",  # r-universe-org/help#509, MongoDB 8
    ],
)
def test_mongodb_max_map_count_low_fires_on_mongodbs_own_warning(analyze_texts, name):
    result = analyze_texts((HOSTSIDE / name).read_text())
    assert "mongodb.max_map_count_low" in result.rule_ids
    (f,) = _fired(result, "mongodb.max_map_count_low")
    assert f.template == "warned" and f.severity == "warning"
    assert f.evidence[0].fact == "services[mongodb].max_map_count" and f.evidence[0].line


def test_mongodb_max_map_count_low_reads_the_value_of_the_json_log(analyze_texts):
    # docker-library/mongo#575: MongoDB 6.0 image, the mongosh summary then the JSON log line
    result = analyze_texts((DBSIDE / "docker-mongo-575-mongodb6-max-map-count.txt").read_text())
    (f,) = _fired(result, "mongodb.max_map_count_low")
    assert f.evidence[0].value == "65530"
    assert "(65530)" in f.explanation


def test_mongodb_max_map_count_low_quiet_on_a_log_without_the_warning(analyze_texts):
    # docker-library/mongo#34: MongoDB 3.0 warns about THP, not about map counts
    result = analyze_texts((HOSTSIDE / "mongo34-thp-always.log").read_text())
    assert "mongodb.max_map_count_low" not in result.rule_ids


# ---------------------------------------------------------------- reserved huge pages nothing uses

EVALUATION = FIXTURES.parent / "evaluation"


def test_hugepages_unused_fires_on_a_free_1gib_page_of_a_postgres_node(analyze_texts):
    # CrunchyData/postgres-operator#3126: one 1 GiB page reserved on the node, free, PostgreSQL not using it
    result = analyze_texts((DBSIDE / "crunchy-3126-hugepages-1gi-free.txt").read_text())
    assert "memory.hugepages_unused" in result.rule_ids
    (f,) = _fired(result, "memory.hugepages_unused")
    assert f.severity == "info" and f.template == "size"  # no MemTotal in a grep of the Huge lines
    assert [e.fact for e in f.evidence] == ["meminfo.HugePages_Total", "meminfo.HugePages_Free"]


@pytest.mark.parametrize(
    "snapshot",
    [
        "71-exadata-hugepages-grep",  # an Exadata database node: 159427 pages, 76189 free, 153 reserved
        "105-netdata-hugepages-grep-bold",  # Oracle hosts: 53342 pages, 11904 free
    ],
)
def test_hugepages_unused_quiet_when_the_pool_is_in_use(analyze_texts, snapshot):
    result = analyze_texts((EVALUATION / snapshot / "issue.txt").read_text())
    assert "memory.hugepages_unused" not in result.rule_ids
    assert "memory.hugepages_unused" in result.checked

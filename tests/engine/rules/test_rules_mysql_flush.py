"""mysql.flush_method_buffered (engine/rules/mysql_flush.py) on published
incidents (tests/fixtures/published/dbside, sources in
tests/fixtures/published/README.md) and on vendor samples that must stay quiet."""

from __future__ import annotations

import pytest

from tests.conftest import CORPUS, FIXTURES

DBSIDE = FIXTURES / "published" / "dbside"
CORPUS_MYSQL = CORPUS / "mysql"
RULE = "mysql.flush_method_buffered"


def _fired(result) -> list:
    return [f for f in result.findings if f.rule == "mysql.flush_method_buffered"]


def test_fires_as_warning_when_a_7g_pool_fills_an_8g_host(analyze_texts):
    """Kevin Burton's Debian hosts (2007): 7 GB of pool on 8 GB, the flush method at its default."""
    result = analyze_texts((DBSIDE / "burton-2007-innodb-7g-pool-8g-swap.txt").read_text(encoding="utf-8"))
    (f,) = _fired(result)
    assert f.severity == "warning" and f.template == "share"
    assert f.values["share"] == pytest.approx(7 / 8)
    assert f.values["method"] == "fsync"
    facts = {e.fact: e.value for e in f.evidence}
    assert facts["database.variables.innodb_flush_method"] == "fsync"
    assert facts["database.variables.innodb_buffer_pool_size"] == 7 * 1024**3
    assert facts["memory.total_kb"] == 8 * 1024**2
    assert all(e.line is not None for e in f.evidence)


def test_fires_as_info_on_the_mysql57_vm_whose_pool_size_is_not_shown(analyze_texts):
    """Pythian's MySQL 5.7 VM: free -m as printed, innodb_flush_method at 5.7's default."""
    result = analyze_texts((DBSIDE / "pythian-mysql57-fsync-swapping.txt").read_text(encoding="utf-8"))
    (f,) = _fired(result)
    assert f.severity == "info" and f.template == "unsized"
    assert "printed empty: this version's default" in f.explanation
    assert {e.fact for e in f.evidence} == {"database.version", "memory.total_kb"}


@pytest.mark.parametrize(
    "path",
    [
        FIXTURES / "mysql" / "percona-toolkit_my.cnf-001.txt",  # innodb_flush_method = O_DIRECT
        # Percona Server 8.0.32 with fsync set, but a 16 MiB pool and no RAM in sight
        CORPUS_MYSQL / "percona-toolkit_pt-mysql-summary_temp_enc008_mysql-variables.txt",
    ],
)
def test_quiet_on_vendor_samples(analyze_texts, path):
    result = analyze_texts(path.read_text(encoding="utf-8"))
    assert "mysql.flush_method_buffered" in result.checked
    assert "mysql.flush_method_buffered" not in result.rule_ids


def test_not_checked_without_the_flush_method_or_the_version(analyze_texts):
    """A LIKE query for the pool alone says nothing of the flush method."""
    text = (
        "$ mysql -e \"SHOW GLOBAL VARIABLES LIKE 'innodb_buffer_pool_size'\"\n"
        "+-------------------------+------------+\n"
        "| Variable_name           | Value      |\n"
        "+-------------------------+------------+\n"
        "| innodb_buffer_pool_size | 7516192768 |\n"
        "+-------------------------+------------+\n"
    )
    result = analyze_texts(text)
    assert RULE not in result.checked
    (missing,) = [n for n in result.not_checked if n.rule == RULE]
    assert any("innodb_flush_method" in c for c in missing.commands)

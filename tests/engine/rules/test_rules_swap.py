"""memory.swap_activity and memory.page_tables_large (engine/rules/swap.py) on
published outputs (tests/fixtures/published/memory, sources in
tests/fixtures/published/README.md) and on this machine."""

from __future__ import annotations

import pytest

from collectors.archive import load
from collectors.facts import SnapshotFacts
from engine.run import analyze
from tests.conftest import FIXTURES

MEMORY = FIXTURES / "published" / "memory"
HOST = FIXTURES / "published" / "host"


def _text(name: str) -> str:
    return (MEMORY / name).read_text(encoding="utf-8")


def _fired(result, rule_id: str) -> list:
    return [f for f in result.findings if f.rule == rule_id]


@pytest.mark.parametrize(
    ("name", "moving", "mean"),
    [
        ("lkml-2003-sap-2.4.20aa1-vmstat.txt", 3, (1170 + 1153 + 2676 + 0) / 4),
        ("lkml-2003-sap-2.4.20rmap-vmstat.txt", 4, (211 + 129 + 165 + 196) / 4),
    ],
)
def test_swap_activity_fires_on_the_sap_servers_that_swap_constantly(analyze_texts, name, moving, mean):
    result = analyze_texts(_text(name))
    (f,) = _fired(result, "memory.swap_activity")
    assert f.severity == "warning"
    assert (f.values["moving"], f.values["intervals"]) == (moving, 4)
    assert f.values["mean"] == pytest.approx(mean)
    assert {e.fact for e in f.evidence} == {"vmstat.si", "vmstat.so"}
    assert all(e.line is not None for e in f.evidence)


@pytest.mark.parametrize(
    "name",
    [
        "exadata-oswatcher-vmstat.txt",  # an Exadata node: 376 KiB in swap, si = so = 0
        "serverfault-swap-used-40gb-free-vmstat.txt",  # 521 MB in swap, one 4 KiB/s swap-in
    ],
)
def test_swap_activity_quiet_when_swap_is_used_but_not_moving(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "memory.swap_activity" in result.checked
    assert "memory.swap_activity" not in result.rule_ids


def test_swap_activity_not_checked_from_cumulative_proc_vmstat(analyze_texts):
    """collectd issue 1307's /proc/vmstat: pswpin/pswpout are counts since boot,
    so the rule asks for vmstat samples instead of guessing."""
    text = (HOST / "collectd-1307-proc-vmstat.txt").read_text(encoding="utf-8")
    result = analyze_texts(text + "\npswpin 1\npswpout 1\n")
    assert "memory.swap_activity" not in result.checked
    (missing,) = [n for n in result.not_checked if n.rule == "memory.swap_activity"]
    assert "vmstat 5 6" in missing.commands


def test_page_tables_large_fires_on_the_postgresql_backends(analyze_texts):
    result = analyze_texts(_text("pg-hugepages-post-pagetables-grep.txt"))
    (f,) = _fired(result, "memory.page_tables_large")
    assert f.template == "size" and f.severity == "warning"
    assert round(f.values["gib"], 1) == 18.3
    assert f.evidence[0].fact == "meminfo.PageTables" and f.evidence[0].value == 19215332


@pytest.mark.parametrize(
    "name",
    [
        "closson-2009-hugepages-pagetables-peak.txt",  # 500 connections with the SGA in huge pages
        "pt-summary-007-memory.txt",  # a Percona support host with huge pages: 389 MB of 189 GiB
    ],
)
def test_page_tables_large_quiet_with_huge_pages(analyze_texts, name):
    result = analyze_texts(_text(name))
    assert "memory.page_tables_large" in result.checked
    assert "memory.page_tables_large" not in result.rule_ids


def test_page_tables_large_quiet_on_this_machine(analyze_texts):
    with open("/proc/meminfo", encoding="utf-8") as f:
        result = analyze_texts("$ cat /proc/meminfo\n" + f.read())
    assert "memory.page_tables_large" in result.checked
    assert "memory.page_tables_large" not in result.rule_ids


def test_swap_activity_quiet_on_a_table_without_its_unit_when_nothing_moves(analyze_texts):
    """The published `vmstat -S m 5` table without its command line: the unit
    of si/so is unknown, but every interval is 0, which is 0 in any unit."""
    text = (FIXTURES / "commands" / "vmstat_S_m_5.txt").read_text(encoding="utf-8")
    table = "\n".join(text.splitlines()[1:])
    result = analyze_texts(table)
    assert "memory.swap_activity" in result.checked
    assert "memory.swap_activity" not in result.rule_ids


def test_swap_activity_not_checked_when_moving_pages_have_no_unit(tmp_path):
    """The LKML 2.4.20aa1 samples read as if their unit were unknown (a table
    pasted without its command could be `vmstat -S M`, MB/s): the rule does
    not decide on them and asks for vmstat with its command line."""
    upload = load([str(MEMORY / "lkml-2003-sap-2.4.20aa1-vmstat.txt")])
    (host,) = upload.hosts
    assert host.vmstat.swap_unit_kb == 1.0  # procps 2.0: KiB
    host.vmstat.swap_unit_kb = None
    result = analyze(SnapshotFacts(hosts=[host]))
    assert "memory.swap_activity" not in result.checked
    assert "memory.swap_activity" not in result.rule_ids
    (missing,) = [n for n in result.not_checked if n.rule == "memory.swap_activity"]
    assert "vmstat 5 6" in missing.commands

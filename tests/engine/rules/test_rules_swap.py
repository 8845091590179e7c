"""memory.swap_activity and memory.page_tables_large (engine/rules/swap.py) on
published outputs (tests/fixtures/published/memory, sources in
tests/fixtures/published/README.md) and on this machine."""

from __future__ import annotations

import shutil
import subprocess

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


def test_swap_activity_fires_when_pages_move_in_any_unit_the_table_could_have(tmp_path):
    """The LKML 2.4.20aa1 samples read as if their unit were unknown (a table
    pasted without its command could be `vmstat -S M`, MB/s): even in the
    smallest unit -S prints (k, 1000 bytes) they move >= 100 KiB/s, so the rule
    decides, and says it read the figures as a lower bound."""
    upload = load([str(MEMORY / "lkml-2003-sap-2.4.20aa1-vmstat.txt")])
    (host,) = upload.hosts
    assert host.vmstat.swap_unit_kb == 1.0  # procps 2.0: KiB
    host.vmstat.swap_unit_kb = None
    result = analyze(SnapshotFacts(hosts=[host]))
    assert "memory.swap_activity" in result.checked
    (f,) = _fired(result, "memory.swap_activity")
    assert f.values["mean"] == pytest.approx((1170 + 1153 + 2676 + 0) / 4 * 1000 / 1024)
    assert "does not show its unit" in f.explanation
    assert "没有显示单位" in f.explanation_zh
    assert [e.value for e in f.evidence] == [1585, 1091]  # the busiest interval (2676 moved), as printed


def test_swap_activity_not_checked_when_pages_move_below_the_threshold_in_the_smallest_unit(analyze_texts):
    """The Server Fault table (521 MB in swap, one 4 KiB/s swap-in) without its
    `vmstat 1` line: pages move, but too few to decide in every unit the table
    could have (4 MB/s with -S M): not checked, vmstat with its command asked."""
    table = "\n".join(_text("serverfault-swap-used-40gb-free-vmstat.txt").splitlines()[1:])
    result = analyze_texts(table)
    assert "memory.swap_activity" not in result.checked
    assert "memory.swap_activity" not in result.rule_ids
    (missing,) = [n for n in result.not_checked if n.rule == "memory.swap_activity"]
    assert "vmstat 5 6" in missing.commands


def test_swap_activity_fires_on_round_o_two_row_table_without_its_command(analyze_texts):
    """Round O 1901: a vmstat table of two rows, no command line (si 185 so 263,
    then si 192 so 187): 379 printed, >= 370 KiB/s in any unit."""
    text = (FIXTURES / "published" / "roundo" / "ramonli-vmstat-two-rows-no-command.txt").read_text(
        encoding="utf-8"
    )
    result = analyze_texts(text)
    (f,) = _fired(result, "memory.swap_activity")
    assert (f.values["moving"], f.values["intervals"]) == (1, 1)
    assert "does not show its unit" in f.explanation


def test_swap_activity_quiet_on_this_machines_vmstat_without_its_command(analyze_texts):
    """This machine's `vmstat 1 3`, pasted without its command line: nothing
    moves (or, if it does, the rule decides in the smallest unit or is not
    checked; it never reads the figures as KiB/s without saying so)."""
    if shutil.which("vmstat") is None:
        pytest.skip("no vmstat on this machine")
    out = subprocess.run(["vmstat", "1", "3"], capture_output=True, text=True, check=True).stdout
    result = analyze_texts(out)
    if "memory.swap_activity" in result.rule_ids:
        (f,) = _fired(result, "memory.swap_activity")
        assert "does not show its unit" in f.explanation
    elif "memory.swap_activity" not in result.checked:
        assert any(n.rule == "memory.swap_activity" for n in result.not_checked)

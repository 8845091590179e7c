"""/proc/meminfo parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.meminfo import parse_meminfo
from tests.collectors.parsers.lookup import detect, for_command, for_path


def test_corpus_values(corpus):
    info = parse_meminfo((corpus / "meminfo" / "insights-core_test_meminfo_MEMINFO.txt").read_text())
    assert info.values["MemTotal"] == 8009912
    assert info.values["HugePages_Total"] == 0
    assert info.values["Hugepagesize"] == 2048
    assert info.lines["MemTotal"] == 1


def test_pt_summary_free_then_meminfo(corpus):
    info = parse_meminfo((corpus / "pt-summary" / "007" / "memory").read_text())
    assert info.values["HugePages_Total"] == 4330
    assert info.values["MemFree"] == 75624404


def test_errors():
    with pytest.raises(ParseError):
        parse_meminfo("Node 0 MemTotal: 5 kB\n")


def test_registry():
    assert for_command("cat /proc/meminfo").kind == "meminfo"
    assert for_path("proc/meminfo").kind == "meminfo"
    assert detect(Path("/proc/meminfo").read_text()).kind == "meminfo"


def test_this_machine():
    info = parse_meminfo(Path("/proc/meminfo").read_text())
    assert info.values["MemTotal"] > info.values["MemFree"] > 0
    assert "HugePages_Total" in info.values


# ------------------------------------------- parsers-mem: subsets (a grep of the file)


def test_grep_subset_this_machine():
    from tests.collectors.parsers.machine import paste, run

    out = run("grep -i huge /proc/meminfo", tool="grep")
    info = parse_meminfo(out)
    assert info.origin == "subset"
    assert "HugePages_Total" in info.values and "MemTotal" not in info.values
    assert detect(out).kind == "meminfo"
    for command in (
        "grep -i huge /proc/meminfo",
        "cat /proc/meminfo | grep -i huge",
        "sudo egrep 'Huge|Mem' /proc/meminfo",
    ):
        assert for_command(command).kind == "meminfo", command
    host = paste(("grep -i huge /proc/meminfo", out))
    assert not host.errors
    assert host.meminfo.values["HugePages_Total"] == info.values["HugePages_Total"]
    assert host.hugepages.nr_hugepages == info.values["HugePages_Total"]


def test_whole_file_is_origin_proc_and_wins_over_a_subset():
    from tests.collectors.parsers.machine import paste, run

    whole = Path("/proc/meminfo").read_text()
    assert parse_meminfo(whole).origin == "proc"
    host = paste(
        ("grep MemFree /proc/meminfo", run("grep MemFree /proc/meminfo")), ("cat /proc/meminfo", whole)
    )
    assert host.meminfo.origin == "proc"
    assert host.meminfo.values["MemTotal"] == parse_meminfo(whole).values["MemTotal"]


def test_grep_with_file_name_prefix():
    from tests.collectors.parsers.machine import run

    out = run("grep -H -i hugepages_ /proc/meminfo", tool="grep")
    assert out.startswith("/proc/meminfo:")
    info = parse_meminfo(out)
    assert set(info.values) >= {"HugePages_Total", "HugePages_Free"}


def test_other_key_value_output_is_not_meminfo():
    # lscpu-like "Key: N" lines are not /proc/meminfo
    assert detect("CPU(s):              2\nOn-line CPU(s) list: 0,1\n") is None or (
        detect("CPU(s):              2\nOn-line CPU(s) list: 0,1\n").kind != "meminfo"
    )
    with pytest.raises(ParseError):
        parse_meminfo("Foo: 12 kB\nBar: 3\n")


def test_key_cut_at_the_end_of_a_paste_is_reported():
    # performance-addon-operators issue 279 (tests/evaluation/97-*): the stored copy
    # ends inside "Hugepagesize:"
    text = (
        "HugePages_Total:       8\nHugePages_Free:        8\n"
        "HugePages_Rsvd:        0\nHugePages_Surp:        0\nHugepage\n"
    )
    info = parse_meminfo(text)
    assert info.values["HugePages_Total"] == 8 and "Hugepagesize" not in info.values
    assert [(e.line, e.message) for e in info.errors] == [(5, "meminfo: last line cut: 'Hugepage'")]


def test_a_last_word_that_is_no_meminfo_key_is_not_reported():
    assert not parse_meminfo("MemTotal:  1024 kB\nDone\n").errors

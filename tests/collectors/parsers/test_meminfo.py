"""/proc/meminfo parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers import detect, for_command, for_path
from collectors.parsers.meminfo import parse_meminfo


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

"""Huge page settings parser (THP files and nr_hugepages)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.hugepages import (
    parse_hugepages,
    parse_nr_hugepages,
    parse_thp_defrag,
    parse_thp_enabled,
)
from tests.collectors.parsers.lookup import for_command, for_path

THP = Path("/sys/kernel/mm/transparent_hugepage")


def test_single_files():
    assert parse_thp_enabled("always [madvise] never\n").thp_enabled == "madvise"
    assert parse_thp_defrag("always defer defer+madvise [madvise] never\n").thp_defrag == "madvise"
    assert parse_thp_enabled("[always] madvise never").thp_enabled == "always"
    assert parse_nr_hugepages("64\n").nr_hugepages == 64
    assert parse_nr_hugepages("vm.nr_hugepages = 128\n").nr_hugepages == 128


def test_name_hint_and_combined_dump():
    assert parse_hugepages("always [never] madvise", name="thp_defrag").thp_defrag == "never"
    dump = (
        "/sys/kernel/mm/transparent_hugepage/enabled:[always] madvise never\n"
        "/sys/kernel/mm/transparent_hugepage/defrag:always defer [madvise] never\n"
        "/sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages:16\n"
    )
    hp = parse_hugepages(dump)
    assert (hp.thp_enabled, hp.thp_defrag, hp.nr_hugepages, hp.hugepagesize_kb) == (
        "always",
        "madvise",
        16,
        1048576,
    )
    assert hp.lines == {"thp_enabled": 1, "thp_defrag": 2, "hugepagesize_kb": 3, "nr_hugepages": 3}


def test_errors():
    with pytest.raises(ParseError):
        parse_thp_enabled("always madvise never\n")  # nothing selected
    with pytest.raises(ParseError):
        parse_nr_hugepages("lots\n")
    with pytest.raises(ParseError):
        parse_hugepages("64", name="bogus")


def test_registry():
    assert for_path("sys/kernel/mm/transparent_hugepage/enabled").kind == "thp_enabled"
    assert for_path("sys/kernel/mm/redhat_transparent_hugepage/defrag").kind == "thp_defrag"
    assert for_path("proc/sys/vm/nr_hugepages").kind == "nr_hugepages"
    assert for_command("cat /sys/kernel/mm/transparent_hugepage/enabled").kind == "thp_enabled"
    # Per-size and per-node counts are not the host's default-size total.
    assert for_path("sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages") is None
    assert for_path("sys/devices/system/node/node1/hugepages/hugepages-2048kB/nr_hugepages") is None
    assert for_command("cat /sys/kernel/mm/hugepages/hugepages-1048576kB/nr_hugepages") is None


def test_this_machine():
    if not (THP / "enabled").exists():
        pytest.skip("kernel without transparent huge pages")
    assert parse_thp_enabled((THP / "enabled").read_text()).thp_enabled in ("always", "madvise", "never")
    assert parse_thp_defrag((THP / "defrag").read_text()).thp_defrag
    assert parse_nr_hugepages(Path("/proc/sys/vm/nr_hugepages").read_text()).nr_hugepages >= 0

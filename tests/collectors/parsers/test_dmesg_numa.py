"""NUMA lines of the kernel log: this machine and a 2-socket Dell R520 boot log."""

from __future__ import annotations

import pytest

from collectors.facts import ParseError
from collectors.parsers.dmesg_numa import parse_dmesg_numa
from tests.collectors.parsers.lookup import detect, for_command
from tests.collectors.parsers.machine import paste, run


def test_this_machine_single_node_vm():
    out = run("dmesg 2>/dev/null | grep -i numa", tool="dmesg", package="util-linux")
    if not out.strip():
        pytest.skip("the kernel log is not readable here")
    boot = parse_dmesg_numa(out)
    # this VM has no SRAT: the kernel says so and fakes one node
    assert boot.no_numa_config
    assert boot.srat_pxms == []
    assert detect(out).kind == "dmesg_numa"
    host = paste(("dmesg | grep -i numa", out))
    assert host.numa_boot.no_numa_config
    assert host.numa_boot.lines["no_numa_config"] == 2


def test_two_socket_srat(corpus):
    text = (corpus / "pt-summary" / "007" / "dmesg_file").read_text(errors="replace")
    numa = "\n".join(line for line in text.splitlines() if "numa" in line.lower() or "SRAT" in line)
    boot = parse_dmesg_numa(numa)
    assert boot.nodes == [0, 1]
    assert boot.srat_pxms == [1, 2]
    assert not boot.no_numa_config and not boot.fake_node


def test_commands():
    assert for_command("dmesg | grep -i numa").kind == "dmesg_numa"
    assert for_command("dmesg -T | egrep -i 'numa|srat'").kind == "dmesg_numa"
    assert for_command("grep -i numa /var/log/messages").kind == "dmesg_numa"


def test_no_numa_lines():
    with pytest.raises(ParseError):
        parse_dmesg_numa("[    0.000000] Linux version 5.1.7\n")

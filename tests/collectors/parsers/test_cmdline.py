"""Kernel command line parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.cmdline import parse_cmdline
from tests.collectors.parsers.lookup import for_command, for_path


def test_isolation_parameters():
    text = (
        "BOOT_IMAGE=/vmlinuz-4.18.0 root=/dev/mapper/rhel-root ro isolcpus=managed_irq,domain,2-15,34-47 "
        'nohz_full=2-15 default_hugepagesz=1G hugepages=64 quiet acpi_osi="!Windows 2012"\n'
    )
    cmd = parse_cmdline(text)
    assert cmd.params["ro"] is None
    assert cmd.params["hugepages"] == "64"
    assert cmd.params["acpi_osi"] == "!Windows 2012"
    assert cmd.cpulist("isolcpus") == [*range(2, 16), *range(34, 48)]
    assert cmd.cpulist("nohz_full") == list(range(2, 16))
    assert cmd.lines["raw"] == 1


def test_prompt_line_and_init_arguments():
    cmd = parse_cmdline("[root@h ~]# cat /proc/cmdline\nroot=/dev/sda1 ro quiet -- --init-flag=1\n")
    assert cmd.params == {"root": "/dev/sda1", "ro": None, "quiet": None}
    assert cmd.lines["raw"] == 2


def test_errors():
    with pytest.raises(ParseError):
        parse_cmdline("  \n")


def test_registry():
    assert for_command("cat /proc/cmdline").kind == "cmdline"
    assert for_path("proc/cmdline").kind == "cmdline"


def test_this_machine():
    cmd = parse_cmdline(Path("/proc/cmdline").read_text())
    assert cmd.params
    assert cmd.raw.split()[0].split("=")[0] in cmd.params


def test_detect_by_content():
    from tests.collectors.parsers.lookup import detect

    assert detect(Path("/proc/cmdline").read_text()).kind == "cmdline"
    assert detect("BOOT_IMAGE=/vmlinuz root=/dev/sda1 ro quiet\n").kind == "cmdline"
    assert detect("ro\nquiet\n") is None or detect("ro\nquiet\n").kind != "cmdline"

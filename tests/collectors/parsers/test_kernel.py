"""Kernel / OS release parser."""

from __future__ import annotations

import platform
import subprocess
from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.kernel import parse_kernel
from tests.collectors.parsers.lookup import for_command, for_path


def test_uname_a_and_os_release_together():
    text = (
        "Linux db01 4.18.0-305.el8.x86_64 #1 SMP Thu Apr 29 08:54:30 EDT 2021 "
        "x86_64 x86_64 x86_64 GNU/Linux\n"
        'NAME="Red Hat Enterprise Linux"\n'
        'PRETTY_NAME="Red Hat Enterprise Linux 8.4 (Ootpa)"\n'
    )
    k = parse_kernel(text)
    assert k.release == "4.18.0-305.el8.x86_64"
    assert k.os_release == "Red Hat Enterprise Linux 8.4 (Ootpa)"
    assert k.lines == {"release": 1, "os_release": 3}


def test_other_forms():
    assert parse_kernel("3.10.0-1160.el7.x86_64\n").release == "3.10.0-1160.el7.x86_64"
    assert (
        parse_kernel("Linux version 5.10.0-21-amd64 (debian-kernel@lists.debian.org) #1\n").release
        == "5.10.0-21-amd64"
    )
    assert (
        parse_kernel("CentOS Linux release 7.9.2009 (Core)\n").os_release
        == "CentOS Linux release 7.9.2009 (Core)"
    )


def test_errors():
    with pytest.raises(ParseError):
        parse_kernel("hello\n")


def test_registry():
    assert for_command("uname -a").kind == "kernel"
    assert for_path("etc/os-release").kind == "kernel"


def test_this_machine():
    uname = subprocess.run(["uname", "-a"], capture_output=True, text=True, check=True).stdout
    assert parse_kernel(uname).release == platform.release()
    assert (
        parse_kernel(subprocess.run(["uname", "-r"], capture_output=True, text=True).stdout).release
        == platform.release()
    )
    os_release = Path("/etc/os-release")
    if os_release.exists():
        assert parse_kernel(os_release.read_text()).os_release


def test_hostnamectl():
    text = (
        "   Static hostname: db01\n"
        "  Operating System: CentOS Linux 7 (Core)\n"
        "            Kernel: Linux 3.10.0-1160.el7.x86_64\n"
        "      Architecture: x86-64\n"
    )
    k = parse_kernel(text)
    assert (k.release, k.os_release) == ("3.10.0-1160.el7.x86_64", "CentOS Linux 7 (Core)")
    assert k.lines == {"os_release": 2, "release": 3}

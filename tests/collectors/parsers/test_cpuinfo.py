"""``/proc/cpuinfo``: this machine's own file (checked against its lscpu) and a
published Kunpeng 920 excerpt (tests/fixtures/published/README.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from collectors.facts import ParseError
from collectors.parsers.cpuinfo import parse_cpuinfo
from collectors.parsers.lscpu import parse_lscpu
from tests.collectors.parsers.machine import kinds, paste, run
from tests.conftest import FIXTURES

PROC_CPUINFO = Path("/proc/cpuinfo")


def test_this_machine_agrees_with_its_lscpu():
    text = PROC_CPUINFO.read_text()
    got, lscpu = parse_cpuinfo(text), parse_lscpu(run("lscpu", package="util-linux"))
    assert got.cpus == lscpu.cpus
    assert got.online_cpus == lscpu.online_cpus
    assert got.architecture == lscpu.architecture
    if lscpu.architecture == "x86_64":  # ARM's cpuinfo has no socket or core counts
        assert (got.sockets, got.cores_per_socket, got.threads_per_core) == (
            lscpu.sockets,
            lscpu.cores_per_socket,
            lscpu.threads_per_core,
        )
        assert got.model_name == lscpu.model_name
    # every cited line holds the value's key
    lines = text.splitlines()
    assert got.lines["cpus"] == 1 and lines[0].startswith("processor")


def test_a_pasted_cpuinfo_alone_is_read_and_says_guest_when_the_kernel_does():
    text = PROC_CPUINFO.read_text()
    host = paste(("cat /proc/cpuinfo", text))
    assert kinds(host) == ["cpuinfo"]
    assert host.reading.read_lines + host.reading.prompt_lines + host.reading.prose_lines == (
        host.reading.lines
    )
    assert host.cpu is not None and host.cpu.cpus == text.count("processor\t:")
    flagged = any(line.startswith("flags") and " hypervisor" in line for line in text.splitlines())
    assert host.is_guest == flagged


def test_lscpu_of_the_same_host_wins_over_cpuinfo():
    lscpu_text = run("lscpu", package="util-linux")
    host = paste(("cat /proc/cpuinfo", PROC_CPUINFO.read_text()), ("lscpu", lscpu_text))
    assert host.cpu is not None and "cpuinfo" not in host.cpu.extra
    assert host.cpu.numa_nodes == parse_lscpu(lscpu_text).numa_nodes


def test_a_published_kunpeng_excerpt_names_the_part_and_gives_no_counts():
    got = parse_cpuinfo((FIXTURES / "published" / "kunpeng920-cpuinfo-excerpt.txt").read_text())
    assert (got.vendor, got.model_name, got.architecture) == ("HiSilicon", "Kunpeng-920", "aarch64")
    assert "asimd" in got.flags
    # processors 23-26 are not the whole file: no CPU count is made up
    assert got.cpus is None and got.online_cpus == []
    assert got.lines["model_name"] == 7  # the CPU part line of the first block


def test_a_grep_of_the_model_gives_the_model_only():
    got = parse_cpuinfo("model name\t: Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz\n" * 2)
    assert got.model_name == "Intel(R) Xeon(R) CPU E5-2680 v4 @ 2.40GHz" and got.cpus is None


@pytest.mark.parametrize("text", ["32\n", "not cpuinfo at all\n", ""])
def test_text_that_is_not_cpuinfo_is_refused(text):
    with pytest.raises(ParseError):
        parse_cpuinfo(text)


def test_a_processor_count_stays_unrecognised_rather_than_misread():
    host = paste(("grep -c ^processor /proc/cpuinfo", "32"))
    assert host.cpu is None and host.reading.unrecognised_lines == 1

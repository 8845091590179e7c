"""A real sosreport made on this machine analyses like a collector archive.

Debian's ``sosreport`` package provides ``sos report``. The report is built
once per test session with the plugins that produce our artifacts (CPU, NUMA,
kernel, memory, IRQs, libvirt, network, file systems), which keeps it to a few
seconds. sos needs root; CI installs the package and runs as root, so a
missing ``sos`` fails there instead of skipping.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import tarfile
from pathlib import Path

import pytest

from tests.conftest import service_unavailable

pytestmark = pytest.mark.slow

PLUGINS = "processor,numa,kernel,memory,hardware,libvirt,networking,filesys"
# sos follows symlinks into its report as symlinks (ps -> sos_commands/...,
# proc/self -> 1234): the loader skips them and reports them in one line,
# which is not a parse error.
LINK_SKIPPED = "symbolic link(s) of the sosreport not followed"


@pytest.fixture(scope="session")
def sosreport(tmp_path_factory) -> Path:
    sos = shutil.which("sos")
    if sos is None:
        service_unavailable("sos is not installed (Debian package: sosreport)")
    if os.geteuid() != 0:
        service_unavailable("sos report needs root")
    out = tmp_path_factory.mktemp("sosreport")
    proc = subprocess.run(
        [sos, "report", "--batch", "--tmp-dir", str(out), "-o", PLUGINS],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    tarballs = [p for p in out.glob("sosreport-*.tar.*") if not p.name.endswith((".md5", ".sha256"))]
    assert len(tarballs) == 1, (tarballs, proc.stdout[-1000:])
    return tarballs[0]


@pytest.fixture(scope="session")
def sos_host(sosreport):
    from collectors.archive import load

    return load(sosreport, split=False).host


def test_sosreport_layout_is_what_the_loader_expects(sosreport):
    with tarfile.open(sosreport) as tar:
        names = tar.getnames()
    top = {n.split("/", 1)[0] for n in names}
    assert len(top) == 1 and next(iter(top)).startswith("sosreport-")
    inner = {n.split("/", 1)[1] for n in names if "/" in n}
    for path in (
        "sos_reports/manifest.json",
        "sos_commands/processor/lscpu",
        "sos_commands/numa/numactl_--hardware",
        "sos_commands/numa/numastat",
        "sos_commands/kernel/sysctl_-a",
        "sos_commands/networking/tc_-s_qdisc_show",
        "proc/meminfo",
        "proc/interrupts",
        "proc/softirqs",
        "proc/zoneinfo",
        "proc/cmdline",
        "sys/kernel/mm/transparent_hugepage/enabled",
    ):
        assert path in inner, path
    assert any(re.fullmatch(r"sys/devices/system/node/node\d+/meminfo", n) for n in inner)


def test_sosreport_analyses_without_parse_errors(sos_host):
    errors = [f"{e.artifact}: {e.message}" for e in sos_host.errors if LINK_SKIPPED not in e.message]
    assert errors == []


def test_sosreport_facts_match_this_machine(sos_host):
    lscpu = subprocess.check_output(["lscpu"], text=True)
    assert sos_host.cpu is not None
    assert sos_host.cpu.cpus == int(re.search(r"^CPU\(s\):\s+(\d+)", lscpu, re.M)[1])
    assert sos_host.cpu.architecture == os.uname().machine
    meminfo = dict(line.split(":", 1) for line in Path("/proc/meminfo").read_text().splitlines())
    assert sos_host.meminfo is not None
    assert sos_host.meminfo.values["MemTotal"] == int(meminfo["MemTotal"].split()[0])
    assert sos_host.sysctl is not None
    assert sos_host.sysctl.values["vm.swappiness"] == Path("/proc/sys/vm/swappiness").read_text().strip()
    nodes = sorted(int(p.name[4:]) for p in Path("/sys/devices/system/node").glob("node[0-9]*"))
    assert sos_host.numa is not None and sorted(sos_host.numa.nodes) == nodes
    assert sos_host.interrupts is not None and sos_host.interrupts.cpus
    assert sos_host.kernel is not None and sos_host.kernel.release == os.uname().release
    assert sos_host.hostname == socket.gethostname()


def test_sosreport_links_are_reported_not_followed(sos_host, sosreport):
    with tarfile.open(sosreport) as tar:
        links = {m.name for m in tar.getmembers() if m.issym() or m.islnk()}
    (reported,) = [e for e in sos_host.errors if LINK_SKIPPED in e.message]
    assert links and reported.message.startswith(f"{len(links)} symbolic link(s)")
    assert reported.artifact == sosreport.name


def test_sosreport_memory_commands_are_read(sos_host):
    """parsers-mem: sos's free, free -m, numastat -m and dmidecode are parsed."""
    kinds = {a["kind"] for a in sos_host.artifacts if a["parsed"]}
    assert {"free_kb", "free_mb", "numastat", "dmidecode_memory"} <= kinds
    assert sos_host.meminfo.origin == "proc"  # /proc/meminfo wins over free's rounded figures
    assert "BuffCache" in sos_host.meminfo.values  # what only free says is kept
    assert "MemTotal" in sos_host.numa.nodes[0].meminfo  # from numastat -m (or node meminfo)

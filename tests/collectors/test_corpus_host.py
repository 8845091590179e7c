"""Every host/system artifact of the shared corpus goes through its parser, and the
facts listed in ``expected.json`` (conventions in ``corpus/README.md``) come out.

The pt-summary sample is covered file by file: each file is either mapped to the
parser that reads it, or listed in ``PT_SUMMARY_NOT_OURS`` with the reason, and
then every host parser must refuse it with a ParseError (no silent skips).
"""

from __future__ import annotations

import json
import re

import pytest

from collectors.cpulist import parse_cpulist
from collectors.facts import ParseError
from collectors.parsers import load_all
from tests.conftest import CORPUS

FOLDERS = {
    "lscpu": "lscpu",
    "numactl": "numactl_hardware",
    "numastat": "node_numastat",
    "node_meminfo": "node_meminfo",
    "meminfo": "meminfo",
    "sysctl": "sysctl",
    "interrupts": "interrupts",
    "softirqs": "softirqs",
}

HOST_KINDS = (
    "lscpu",
    "numactl_hardware",
    "numastat",
    "node_numastat",
    "node_meminfo",
    "meminfo",
    "zoneinfo",
    "sysctl",
    "cmdline",
    "hugepages",
    "thp_enabled",
    "thp_defrag",
    "nr_hugepages",
    "interrupts",
    "softirqs",
    "top",
    "mpstat",
    "sar_cpu",
    "iostat",
    "df",
    "kernel",
)

# pt-summary file -> the kind that reads it
PT_SUMMARY_OURS = {
    "memory": "meminfo",  # free -b, then /proc/meminfo
    "numactl": "numactl_hardware",
    "sysctl": "sysctl",
    "processes": "top",  # the top -bn1 process list
    "uptime": "top",  # uptime's load average line
    "mounted_fs": "df",  # df -h rows + mount options
    "summary": "kernel",  # "kernel" and "release" rows
    "dmesg_file": "kernel",  # first line: "Linux version ..."
    "lspci_file": "lspci",  # the PCI devices (a Dell R520: no guest signal)
}
# pt-summary files no host parser reads, and why
PT_SUMMARY_NOT_OURS = {
    "collect.err": "stderr of the pt-summary run",
    "dmidecode": "hardware inventory; no facts model for it",
    "ip": "ip -s link counters; network interfaces are not modelled",
    "lvs": "LVM logical volumes; not modelled",
    "netstat": "socket list; not modelled",
    "network_devices": "ethtool settings; not modelled",
    "notable_procs": "OOM score adjustments; not modelled",
    "partitioning": "fdisk -l; not modelled",
    "proc_cpuinfo_copy": "/proc/cpuinfo: no cpuinfo parser in this family (lscpu is the CPU source)",
    "vgs": "LVM volume groups; not modelled",
}


def _expected() -> dict:
    path = CORPUS / "expected.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def _files() -> list[str]:
    files = []
    for folder in FOLDERS:
        files += sorted(f"{folder}/{p.name}" for p in (CORPUS / folder).glob("*") if p.is_file())
    return files


@pytest.fixture(scope="module")
def registry():
    return load_all()


def test_corpus_is_present_and_fully_listed(corpus):
    expected = _expected()
    listed = {k for k in expected if k.split("/")[0] in FOLDERS}
    assert listed, "expected.json lists no host artifacts"
    assert listed == set(_files()), "a host corpus file has no expected.json entry or vice versa"


def _check_lscpu(fact, want: dict) -> None:
    for key in ("cpus", "sockets", "cores_per_socket", "threads_per_core", "numa_nodes"):
        if key in want:
            assert getattr(fact, key) == want[key], key
    for key in ("cores_per_socket", "threads_per_core"):
        if key not in want:
            # omitted in expected.json: absent or different between core types
            assert getattr(fact, key) is None, key
    assert fact.has_l3 == want["has_l3"]
    if "numa_node_cpus" in want:
        assert fact.numa_node_cpus == {int(n): parse_cpulist(c) for n, c in want["numa_node_cpus"].items()}
    if "core_types" in want:
        got = [{k: t.get(k) for k in ("model_name", "cores_per_socket", "sockets")} for t in fact.core_types]
        assert got == want["core_types"]
    for key in ("clusters", "cores_per_cluster", "sockets_per_book", "books_per_drawer", "drawers", "books"):
        if key in want:
            assert fact.extra[key] == want[key], key


def _check_numactl(fact, want: dict) -> None:
    assert fact.available == want["nodes"]
    got = {
        str(n): {"cpu_count": len(node.cpus), "size_mb": node.size_mb, "free_mb": node.free_mb}
        for n, node in fact.nodes.items()
    }
    assert got == want["per_node"]
    assert fact.distance_nodes == want["distance_nodes"]
    assert fact.distances == want["distances"]


def _check_numastat(fact, want: dict) -> None:
    counters = fact.nodes[want["node"]]
    for key in ("numa_hit", "numa_miss", "local_node", "other_node"):
        assert counters[key] == want[key], key
    assert fact.unit == "pages"


def _check_node_meminfo(fact, want: dict) -> None:
    values = fact.nodes[want["node"]]
    assert values["MemTotal"] == want["MemTotal_kB"]
    assert values["MemFree"] == want["MemFree_kB"]
    assert values["FilePages"] == want["FilePages_kB"]


def _check_meminfo(fact, want: dict) -> None:
    assert fact.values["MemTotal"] == want["MemTotal_kB"]
    assert fact.values["MemFree"] == want["MemFree_kB"]
    assert fact.values["HugePages_Total"] == want["HugePages_Total"]
    assert fact.values["Hugepagesize"] == want["Hugepagesize_kB"]


def _check_sysctl(fact, want: dict) -> None:
    assert fact.setting_count == want["key_count"]
    for key, name in (
        ("zone_reclaim_mode", "vm.zone_reclaim_mode"),
        ("numa_balancing", "kernel.numa_balancing"),
    ):
        if key in want:
            assert int(fact.values[name]) == want[key]
        else:
            assert name not in fact.values


def _check_interrupts(fact, want: dict) -> None:
    assert len(fact.cpus) == want["cpus"]
    assert len(fact.rows) == want["irq_rows"]


def _check_softirqs(fact, want: dict) -> None:
    assert len(fact.cpus) == want["cpus"]
    assert list(fact.rows) == want["softirqs"]


CHECKS = {
    "lscpu": _check_lscpu,
    "numactl": _check_numactl,
    "numastat": _check_numastat,
    "node_meminfo": _check_node_meminfo,
    "meminfo": _check_meminfo,
    "sysctl": _check_sysctl,
    "interrupts": _check_interrupts,
    "softirqs": _check_softirqs,
}


@pytest.mark.parametrize("name", _files())
def test_corpus_file(name, corpus, registry):
    folder = name.split("/")[0]
    text = (corpus / name).read_text(encoding="utf-8")
    kwargs = {}
    if folder == "numastat":
        # the sysfs path names the node; the ingest helper passes it the same way
        kwargs["node"] = int(re.search(r"node(\d+)_numastat", name).group(1))
    fact = registry[FOLDERS[folder]].func(text, **kwargs)
    want = _expected()[name]["facts"]
    CHECKS[folder](fact, want)
    assert fact.lines, "no evidence lines recorded"
    assert all(isinstance(v, int) and v >= 1 for v in fact.lines.values())


def _pt_files() -> list[str]:
    folder = CORPUS / "pt-summary" / "007"
    return sorted(p.name for p in folder.glob("*")) if folder.is_dir() else []


def test_pt_summary_every_file_is_classified(corpus):
    assert set(_pt_files()) == set(PT_SUMMARY_OURS) | set(PT_SUMMARY_NOT_OURS)


@pytest.mark.parametrize("name", sorted(PT_SUMMARY_OURS))
def test_pt_summary_host_file(name, corpus, registry):
    text = (corpus / "pt-summary" / "007" / name).read_text(encoding="utf-8", errors="replace")
    fact = registry[PT_SUMMARY_OURS[name]].func(text)
    entry = _expected().get(f"pt-summary/007/{name}", {})
    want = entry.get("facts", {})
    if name == "memory":
        _check_meminfo(fact, want)
    elif name == "numactl":
        _check_numactl(fact, want)
    elif name == "sysctl":
        _check_sysctl(fact, want)
    elif name == "processes":
        assert len(fact.processes) == want["lines"] - 1  # minus the header
        assert fact.processes[-1].command == "victoriame+"
    elif name == "uptime":
        assert fact.load_average == (3.72, 4.25, 4.97)
        assert fact.uptime_days == 38
    elif name == "mounted_fs":
        assert len(fact.filesystems) == want["lines"]
        assert {f.mounted_on for f in fact.filesystems} >= {"/", "/boot", "/home", "/opt"}
    elif name == "summary":
        assert fact.release == "5.1.7-1.el7.elrepo.x86_64"
        assert fact.os_release == "CentOS Linux release 7.9.2009 (Core)"
    elif name == "dmesg_file":
        assert fact.release == "5.1.7-1.el7.elrepo.x86_64"
    elif name == "lspci_file":
        assert len(fact.devices) == want["lines"] and not fact.errors
        assert fact.signals.virtual is None and not fact.signals.hints


@pytest.mark.parametrize("name", sorted(PT_SUMMARY_NOT_OURS))
def test_pt_summary_file_we_cannot_use(name, corpus, registry):
    text = (corpus / "pt-summary" / "007" / name).read_text(encoding="utf-8", errors="replace")
    for kind in HOST_KINDS:
        with pytest.raises(ParseError) as info:
            registry[kind].func(text)
        assert str(info.value), f"{kind} gave an empty ParseError message for {name}"

"""Parser calls are wrapped (errors become per-artifact errors, line numbers are
shifted to the uploaded file) and results merge into one HostFacts."""

from __future__ import annotations

import logging

import pytest

from collectors import facts as f
from collectors import parsers
from collectors.assemble import HostAssembler, normalise_hypervisor, run_parser
from collectors.parsers import ParserSpec

NUMACTL = (
    "available: 2 nodes (0-1)\n"
    "node 0 cpus: 0 1\n"
    "node 0 size: 1000 MB\n"
    "node 0 free: 10 MB\n"
    "node 1 cpus: 2 3\n"
    "node 1 size: 1000 MB\n"
    "node 1 free: 900 MB\n"
    "node distances:\n"
    "node   0   1\n"
    "  0:  10  21\n"
    "  1:  21  10\n"
)


@pytest.fixture
def boom_parser(monkeypatch):
    def boom(text: str):
        raise KeyError("parser bug")

    def picky(text: str):
        raise f.ParseError("not what I expected", line=3)

    parsers.load_all()
    monkeypatch.setitem(parsers.REGISTRY, "test_boom", ParserSpec(kind="test_boom", func=boom))
    monkeypatch.setitem(parsers.REGISTRY, "test_picky", ParserSpec(kind="test_picky", func=picky))


def test_parser_exception_becomes_internal_error(boom_parser, caplog):
    with caplog.at_level(logging.ERROR, logger="collectors.assemble"):
        results, err = run_parser("test_boom", "x", artifact="proc/meminfo")
    assert results == []
    assert err == f.ArtifactError("proc/meminfo", "internal parser error: KeyError", None)
    assert "test_boom" in caplog.text


def test_parse_error_line_is_shifted_to_the_upload(boom_parser):
    _, err = run_parser("test_picky", "x", artifact="transcript:numactl -H", line_offset=100)
    assert err.line == 103 and "not what I expected" in err.message


def test_unknown_kind_is_an_error_not_an_exception():
    _, err = run_parser("no-such-kind", "x", artifact="a")
    assert "no parser" in err.message


def test_provenance_lines_are_shifted():
    parsers.load_all()
    results, err = run_parser("numactl_hardware", NUMACTL, artifact="transcript:numactl -H", line_offset=19)
    assert err is None
    hw = results[0]
    assert hw.source == f.Source("transcript:numactl -H", 20)
    assert min(hw.lines.values()) == 20


def _numactl() -> f.NumactlHardware:
    parsers.load_all()
    return run_parser("numactl_hardware", NUMACTL, artifact="numactl")[0][0]


def test_numa_sources_join_into_one_topology():
    asm = HostAssembler()
    asm.add(_numactl())
    asm.add(f.NodeMeminfo(nodes={0: {"MemTotal": 1024000, "MemFree": 10240, "FilePages": 900000}}))
    asm.add(f.Numastat(nodes={1: {"numa_hit": 5.0, "numa_miss": 50.0}}, source=f.Source("node1/numastat")))
    asm.add(f.Numastat(nodes={0: {"MemTotal": 1000.0}}, unit="MB"))
    asm.add(
        f.Zoneinfo(
            zones=[
                f.ZoneWatermarks(node=0, zone="DMA32", free_pages=10, min=1, low=2, high=3),
                f.ZoneWatermarks(node=0, zone="Normal", free_pages=100, min=10, low=20, high=30),
            ]
        )
    )
    host = asm.finish()
    numa = host.numa
    assert sorted(numa.nodes) == [0, 1]
    node0, node1 = numa.nodes[0], numa.nodes[1]
    assert node0.cpus == [0, 1] and node0.size_mb == 1000 and node0.free_mb == 10
    assert node0.meminfo["FilePages"] == 900000
    assert node0.meminfo["MemTotal"] == 1024000  # node meminfo wins over numastat -m
    assert node1.numastat == {"numa_hit": 5, "numa_miss": 50}
    assert (node0.watermark_min, node0.watermark_low, node0.watermark_high, node0.free_pages) == (
        11,
        22,
        33,
        110,
    )
    assert numa.distances == [[10, 21], [21, 10]]
    assert numa.sources["Numastat"].artifact == "node1/numastat"
    assert host.numa_node_count() == 2


@pytest.mark.parametrize(
    ("vendor", "expected"),
    [
        ("KVM", "KVM"),
        ("K VM", "KVM"),
        ("VMware", "VMware"),
        ("Microsoft", "Microsoft"),
        ("vertical", None),
        ("", None),
    ],
)
def test_hypervisor_vendors(vendor, expected):
    assert normalise_hypervisor(vendor) == expected


def test_role_from_lscpu_and_most_complete_cpu_wins():
    asm = HostAssembler()
    asm.add(f.CpuTopology(cpus=32, sockets=32, hypervisor_vendor="K VM", caches={"L1d": "32K"}))
    asm.add(f.CpuTopology(hypervisor_vendor="VMware"))  # a second machine quoted for comparison
    host = asm.finish()
    assert host.cpu.cpus == 32 and host.cpu.hypervisor_vendor == "KVM"
    assert host.role == "guest"

    bare = HostAssembler()
    bare.add(f.CpuTopology(cpus=96, hypervisor_vendor="vertical"))
    assert bare.finish().role == "physical"
    assert HostAssembler().finish().role is None


def test_cpu_usage_prefers_per_cpu_top():
    asm = HostAssembler()
    asm.add(f.CpuUsage(tool="top", overall=f.CpuUtil(cpu="all", us=29.7)))
    asm.add(f.CpuUsage(tool="sar", samples=[f.CpuUtil(cpu="all", us=20.0)]))
    asm.add(f.CpuUsage(tool="top", per_cpu=[f.CpuUtil(cpu="0", si=30.2), f.CpuUtil(cpu="1", si=25.4)]))
    assert [c.si for c in asm.finish().cpu_usage.per_cpu] == [30.2, 25.4]


def test_database_sysctl_df_and_domains_merge():
    asm = HostAssembler()
    asm.add(f.DatabaseFacts(kind="mariadb", version="10.4.14-MariaDB-log"))
    asm.add(f.DatabaseFacts(variables={"innodb_buffer_pool_size": "1024"}, log_counts={"Note": 2}))
    asm.add(f.DatabaseFacts(events=[f.DbEvent(kind="numa_policy")], log_counts={"Note": 1}))
    asm.add(f.DatabaseFacts(status={"uptime": "60"}, lines={"status.uptime": 3}))
    asm.add(f.DatabaseFacts(status={"uptime": "90", "questions": "7"}))
    asm.add(f.Sysctl(values={"vm.zone_reclaim_mode": "0"}, lines={"vm.zone_reclaim_mode": 4}))
    asm.add(f.Sysctl(values={"vm.zone_reclaim_mode": "1", "kernel.numa_balancing": "0"}))
    fs = f.Filesystem(filesystem="/dev/sda1", mounted_on="/")
    asm.add(f.DiskFree(filesystems=[fs]))
    asm.add(
        f.DiskFree(
            filesystems=[f.Filesystem(filesystem="/dev/sda1", mounted_on="/"), f.Filesystem("tmpfs", "/run")]
        )
    )
    asm.add(f.Domain(name="g", uuid="u-1"))
    asm.add(f.Domain(name="g", uuid="u-1"))
    asm.add(f.Domain(name="h", uuid="u-2"))
    asm.add(f.PingResult(rtt_avg_ms=1.07))
    asm.add(f.BenchmarkResults(results=[f.Benchmark("stream", "Triad", 6000.0, "MB/s")]))
    asm.add(f.Meminfo(values={"HugePages_Total": 64, "Hugepagesize": 2048}))
    asm.add(f.HugePages(thp_enabled="never"))
    host = asm.finish(hostname="db-01")
    db = host.database
    assert (db.kind, db.version) == ("mariadb", "10.4.14-MariaDB-log")
    assert db.variables == {"innodb_buffer_pool_size": "1024"}
    assert db.log_counts == {"Note": 3} and len(db.events) == 1
    # status counters merge like variables (the first value wins) and stay apart from them
    assert db.status == {"uptime": "60", "questions": "7"} and db.lines["status.uptime"] == 3
    assert host.sysctl.values == {"vm.zone_reclaim_mode": "0", "kernel.numa_balancing": "0"}
    assert [x.mounted_on for x in host.df.filesystems] == ["/", "/run"]
    assert [d.name for d in host.domains] == ["g", "h"]
    assert host.pings[0].rtt_avg_ms == 1.07 and host.benchmarks[0].value == 6000.0
    hp = host.hugepages
    assert (hp.thp_enabled, hp.nr_hugepages, hp.hugepagesize_kb) == ("never", 64, 2048)
    assert host.hostname == "db-01" and host.label == "db-01"


def test_unexpected_result_type_is_reported():
    asm = HostAssembler()
    asm.add(object(), kind="weird")
    assert "internal parser error" in asm.finish().errors[0].message


def test_manifest_hostname_beats_prompt_hosts():
    asm = HostAssembler()
    asm.hostname("from-prompt")
    assert asm.finish(hostname="from-manifest").hostname == "from-manifest"
    other = HostAssembler()
    other.hostname("from-prompt")
    assert other.finish(hostname="bad name\n").hostname == "from-prompt"


def test_numastat_n_counters_in_mb_stay_counters():
    """`numastat -n` prints numa_hit/numa_miss in MB: they are counters, not meminfo."""
    from collectors.parsers.numastat import parse_numastat

    text = (
        "Per-node numastat info (in MBs):\n"
        "                          Node 0          Node 1           Total\n"
        "                 --------------- --------------- ---------------\n"
        "Numa_Hit              2346254.31      1983418.21      4329672.52\n"
        "Numa_Miss                 120.18        36211.64        36331.82\n"
    )
    asm = HostAssembler()
    asm.add(_numactl())
    asm.add(parse_numastat(text))
    node1 = asm.finish().numa.nodes[1]
    assert node1.numastat == {"numa_hit": 1983418, "numa_miss": 36211}
    assert "numa_hit" not in node1.meminfo


# ----------------------------------------------------------------- parsers-mem


def test_meminfo_origin_ranks_proc_over_subset_over_free():
    from pathlib import Path

    from collectors.parsers.free import parse_free_kb
    from collectors.parsers.meminfo import parse_meminfo
    from tests.collectors.parsers.machine import run

    whole = parse_meminfo(Path("/proc/meminfo").read_text())
    subset = parse_meminfo(run("grep -i huge /proc/meminfo", tool="grep"))
    free = parse_free_kb(run("free", package="procps"))
    for order in ((free, subset, whole), (subset, free, whole), (whole, free, subset)):
        asm = HostAssembler("h")
        for part in order:
            asm.add(part)
        host = asm.finish()
        assert host.meminfo.origin == "proc"
        assert host.meminfo.values["MemTotal"] == whole.values["MemTotal"]
        assert "BuffCache" in host.meminfo.values  # only free had it: kept
    asm = HostAssembler("h")
    asm.add(free)
    asm.add(subset)
    assert asm.finish().meminfo.origin == "subset"


def test_numastat_m_hugepages_become_pages_with_the_host_page_size():
    from tests.collectors.parsers.machine import paste
    from tests.conftest import FIXTURES

    # published: numastat -m -p on a 2-node host with 400000 huge pages of 2 MB,
    # then grep Huge /proc/meminfo; numastat prints the pool in MB (400190 + 399810)
    host = paste(prose=(FIXTURES / "commands" / "numastat_m_p_hugepages_2node.txt").read_text())
    assert not host.errors, host.errors
    nodes = host.numa.nodes
    assert nodes[0].meminfo["HugePages_Total"] == 200095 and nodes[1].meminfo["HugePages_Total"] == 199905
    assert sum(n.meminfo["HugePages_Total"] for n in nodes.values()) == host.meminfo.values["HugePages_Total"]
    assert nodes[1].meminfo["HugePages_Free"] == nodes[1].meminfo["HugePages_Total"]
    assert nodes[0].meminfo["MemTotal"] == round(771710.76 * 1024)
    assert nodes[0].meminfo["FilePages"] == round(357381.12 * 1024)
    (proc,) = host.process_numa
    assert (proc.pid, proc.name, proc.categories["Huge"]) == (3635, "llama-server", {0: 385692.0, 1: 0.0})

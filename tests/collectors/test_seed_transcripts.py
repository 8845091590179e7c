"""The five founding write-ups, loaded as raw transcripts, yield the facts the
rules need (the seeds are prose with quoted command output)."""

from __future__ import annotations

import pytest

from collectors.archive import load
from tests.conftest import SEEDS


def seed(number: str):
    matches = sorted(SEEDS.glob(f"{number}_*.txt"))
    if not matches:
        pytest.fail(f"seed {number} missing under {SEEDS}")
    return load(matches[0], split=False).host


@pytest.fixture(scope="module")
def seed000():
    return seed("000")


@pytest.fixture(scope="module")
def seed002():
    return seed("002")


@pytest.fixture(scope="module")
def seed003():
    return seed("003")


@pytest.fixture(scope="module")
def seed004():
    return seed("004")


# ------------------------------------------------------------------------ 000


def test_000_node_memory(seed000):
    nodes = seed000.numa.nodes
    assert nodes[0].meminfo["MemTotal"] == 401212464
    assert nodes[0].meminfo["MemFree"] == 290726364
    assert nodes[0].meminfo["MemUsed"] == 110486100
    assert nodes[1].meminfo["MemTotal"] == 402653184
    assert nodes[1].meminfo["MemFree"] == 342521148
    assert nodes[1].meminfo["MemUsed"] == 60132036
    # evidence points at the line of the uploaded file, not of the block
    assert seed000.numa.lines["1.MemTotal"] == 123


def test_000_per_cpu_idle(seed000):
    per_cpu = [c for c in seed000.cpu_usage.per_cpu if c.cpu != "all"]
    assert len(per_cpu) == 54
    assert per_cpu[0].id == 96.1 and per_cpu[1].id == 100.0 and per_cpu[53].id == 100.0
    assert per_cpu[0].line == 65


def test_000_versions(seed000):
    assert seed000.virsh_version.libvirt_version == "4.9.0"
    assert seed000.virsh_version.hypervisor == "QEMU"
    assert seed000.virsh_version.hypervisor_version == "2.12.0"
    assert seed000.database.kind == "mariadb"
    assert seed000.database.version.startswith("10.4.14")


def test_000_domain_fragment(seed000):
    assert len(seed000.domains) == 1
    dom = seed000.domains[0]
    assert dom.recovered is True
    assert dom.iothreads == 4
    assert dom.iothreadpin == {3: [65]}
    assert dom.emulatorpin == [67]
    assert dom.memnodes[0]["mode"] == "preferred"
    assert dom.memnodes[0]["nodeset"] == [1]
    assert dom.numa_cells[0].cpus == list(range(32))
    assert dom.numa_cells[0].memory_kb == 33554432
    assert (dom.topology["sockets"], dom.topology["cores"], dom.topology["threads"]) == (1, 32, 1)
    assert dom.source.artifact.startswith("transcript:")
    assert dom.source.line == 201


def test_000_hostname_and_timing(seed000):
    assert seed000.hostname == "zstack-9"
    timings = [b for b in seed000.benchmarks if b.kind == "statement"]
    assert timings and timings[0].value == pytest.approx(58.371)
    assert seed000.errors == []


# ------------------------------------------------------------------------ 002


def test_002_numastat_table(seed002):
    nodes = seed002.numa.nodes
    assert sorted(nodes) == [0, 1, 2]
    assert [nodes[n].numastat["numa_hit"] for n in (0, 1, 2)] == [40995736, 22924791, 23705375]
    assert [nodes[n].numastat["numa_miss"] for n in (0, 1, 2)] == [53540664, 10471137, 3056956]


def test_002_kvm_guest(seed002):
    assert seed002.cpu.cpus == 32
    assert seed002.cpu.hypervisor_vendor == "KVM"
    assert seed002.role == "guest"
    assert seed002.is_guest


# ------------------------------------------------------------------------ 003


def test_003_buffer_pool(seed003):
    init = [e for e in seed003.database.events if e.kind == "buffer_pool_init"]
    assert init[0].data["size_text"] == "432G"
    assert init[0].data["instances"] == 24
    assert init[0].line == 8


def test_003_interleave_duration(seed003):
    policies = [e for e in seed003.database.events if e.kind == "numa_policy" and e.seconds is not None]
    start = next(e for e in policies if e.data["policy"] == "MPOL_INTERLEAVE")
    end = next(e for e in policies if e.data["policy"] == "MPOL_DEFAULT")
    assert start.timestamp.endswith("12:00:44") and end.timestamp.endswith("12:08:04")
    assert end.seconds - start.seconds == 440


def test_003_numa_nodes(seed003):
    nodes = seed003.numa.nodes
    assert sorted(nodes) == [0, 1]
    assert (nodes[0].size_mb, nodes[1].size_mb) == (32722, 32768)
    assert nodes[0].cpus == [0, 2, 4, 6, 8, 10]


# ------------------------------------------------------------------------ 004


def test_004_lscpu(seed004):
    cpu = seed004.cpu
    assert (cpu.cpus, cpu.sockets, cpu.numa_nodes) == (96, 2, 1)
    assert cpu.caches["L3"] == "33792K"
    # "Hypervisor vendor: vertical" on a physical host is not a hypervisor
    assert seed004.role == "physical"
    assert seed004.numa_node_count() == 1


def test_004_network(seed004):
    netem = [q for q in seed004.tc.qdiscs if q.kind == "netem"]
    assert netem[0].device == "bond0" and netem[0].delay_ms == 1.0
    assert len(seed004.pings) == 1
    assert seed004.pings[0].rtt_avg_ms == pytest.approx(1.07, abs=0.005)


def test_004_softirq_per_cpu(seed004):
    usage = {c.cpu: c for c in seed004.cpu_usage.per_cpu}
    assert usage["0"].si == 30.2 and usage["1"].si == 25.4
    assert usage["0"].line == 159


def test_004_oceanbase(seed004):
    ob = seed004.oceanbase
    assert ob.plan_type_counts == {0: 115557, 1: 1463222, 2: 1286613, 3: 8647}
    assert ob.proxy_config["server_routing_mode"] == "random"
    assert seed004.hostname == "i39g15302.eu95sqa"


@pytest.mark.parametrize("number", ["000", "001", "002", "003", "004"])
def test_every_seed_loads_without_exception(number):
    host = seed(number)
    assert host.artifacts or host.errors

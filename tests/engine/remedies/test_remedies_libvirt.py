"""The domain patch for the ZStack seed guest (seed 000), checked three ways:
the pins themselves, real libvirt accepting the XML, and the engine no longer
reporting what the patch fixes."""

from __future__ import annotations

import dataclasses

import pytest

from collectors.archive import load_host
from collectors.cpulist import parse_cpulist
from collectors.facts import HostFacts, SnapshotFacts
from collectors.parsers.libvirt import parse_domain
from engine.remedies.base import NoRemedy
from engine.remedies.libvirt import domain_remedy
from engine.remedies.topology import check_placement, host_topology
from engine.run import analyze
from tests.conftest import FIXTURES

ZSTACK = FIXTURES / "seeds" / "zstack-mariadb-v2v"

CLEARED = {
    "kvm.vcpus_unpinned",
    "kvm.emulator_unpinned",
    "kvm.iothread_unpinned",
    "kvm.guest_numa_missing",
    "kvm.memory_not_bound",
    "kvm.vcpu_hotplug_enabled",
}
NODE1 = set(range(1, 72, 2))

# Another guest of the host, pinned to the first cores of node 1: the patch
# must route around it (and around its SMT siblings 37-43).
NEIGHBOUR = """<domain type='kvm'>
  <name>neighbour</name>
  <memory unit='KiB'>8388608</memory>
  <vcpu placement='static'>4</vcpu>
  <cputune>
    <vcpupin vcpu='0' cpuset='1'/>
    <vcpupin vcpu='1' cpuset='3'/>
    <vcpupin vcpu='2' cpuset='5'/>
    <vcpupin vcpu='3' cpuset='7'/>
    <emulatorpin cpuset='9'/>
  </cputune>
  <os><type arch='x86_64'>hvm</type></os>
</domain>
"""


@pytest.fixture
def remedy(zstack_host):
    result = domain_remedy(domain_xml=zstack_host.domains[0].raw_xml, host=zstack_host)
    assert result.ok, getattr(result, "reason", "")
    return result


def test_pins_32_vcpus_to_free_cpus_of_one_node(remedy):
    d = parse_domain(remedy.patched)
    assert d.vcpus == 32 and d.vcpu_current == 32 and d.vcpu_placement == "static"
    assert sorted(d.vcpupin) == list(range(32))
    pinned = [cpu for pins in d.vcpupin.values() for cpu in pins]
    assert len(set(pinned)) == 32 and set(pinned) <= NODE1  # node 1 has the most free memory
    assert 1 in pinned  # not a copy of the sample: pins start at the node's first free core
    # SMT: vCPUs 2i and 2i+1 are the two threads of one core (siblings are c and c+36)
    for i in range(0, 32, 2):
        assert d.vcpupin[i + 1] == [d.vcpupin[i][0] + 36]
    assert d.topology == {"sockets": 1, "cores": 16, "threads": 2}
    # emulator and I/O thread on spare whole cores of the same node
    assert set(d.emulatorpin) <= NODE1 and not set(d.emulatorpin) & set(pinned)
    assert list(d.iothreadpin) == [1]
    assert set(d.iothreadpin[1]) <= NODE1 and not set(d.iothreadpin[1]) & (set(pinned) | set(d.emulatorpin))
    assert next(disk for disk in d.disks if disk.target == "vdb").iothread == 1
    assert d.numatune_memory_mode == "strict" and d.numatune_memory_nodeset == [1]
    assert d.memnodes == {0: {"mode": "strict", "nodeset": [1]}}
    assert [(c.id, c.cpus, c.memory_kb) for c in d.numa_cells] == [(0, list(range(32)), 33554432)]
    assert d.cpu_mode == "host-passthrough"


def test_diff_commands_and_rollback(remedy):
    assert remedy.diff.startswith("--- 8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80.original.xml\n+++ ")
    assert "-  <vcpu placement='static' current='32'>128</vcpu>\n+  <vcpu placement='static'>32</vcpu>\n" in (
        remedy.diff
    )
    # untouched parts stay byte for byte (namespaced metadata, devices)
    assert '<metadata xmlns:zs="http://zstack.org">' in remedy.patched
    assert "zs:zstack" not in remedy.diff
    name = "8c1f5e2a0d9b4c6e9f3a7b2d1e4c6a80"
    assert f"virsh setvcpus {name} 32 --maximum --config" in remedy.commands
    assert f"virsh vcpupin {name} 0 1 --config" in remedy.commands
    assert f"virsh numatune {name} --mode strict --nodeset 1 --config" in remedy.commands
    assert any(c.startswith(f"virsh emulatorpin {name} ") for c in remedy.commands)
    assert any(c.startswith(f"virsh iothreadpin {name} 1 ") for c in remedy.commands)
    assert f"virsh define {name}.patched.xml" in remedy.commands
    assert remedy.rollback.startswith(f"virsh define {name}.original.xml")
    assert remedy.disruption == "guest reboot"
    # the 5 running guests without XML are called out, and no huge pages are free
    assert any("5 other running guest(s)" in n for n in remedy.notes)
    assert any("hugepages-2048kB/nr_hugepages" in n for n in remedy.notes)


def test_patched_xml_is_accepted_by_libvirt(remedy, virsh_define):
    original = virsh_define(remedy.original, "original.xml")
    assert original.returncode == 0, original.stderr
    patched = virsh_define(remedy.patched, "patched.xml")
    assert patched.returncode == 0, patched.stderr


def test_engine_no_longer_reports_what_the_patch_fixes(remedy):
    host = load_host(ZSTACK / "before" / "zstack-9.txt")
    guest = load_host(ZSTACK / "before" / "infoplus-db.txt")
    before = analyze(SnapshotFacts(hosts=[host, guest])).rule_ids
    assert before >= CLEARED
    host.domains = [parse_domain(remedy.patched)]
    after = analyze(SnapshotFacts(hosts=[host, guest])).rule_ids
    assert not after & CLEARED, after & CLEARED
    assert "kvm.pinning_spans_nodes" not in after
    assert "kvm.cpu_model_hides_cache" not in after and "kvm.flat_socket_topology" not in after


def test_routes_around_another_guests_pins(zstack_host, virsh_define):
    host = dataclasses.replace(zstack_host, domains=[*zstack_host.domains, parse_domain(NEIGHBOUR)])
    result = domain_remedy(domain_xml=host.domains[0].raw_xml, host=host)
    assert result.ok, result
    d = parse_domain(result.patched)
    mine = {c for pins in d.vcpupin.values() for c in pins} | set(d.emulatorpin)
    mine |= {c for pins in d.iothreadpin.values() for c in pins}
    # the neighbour's CPUs and their SMT siblings stay out
    assert not mine & {1, 3, 5, 7, 9, 37, 39, 41, 43, 45}
    topo = host_topology(host=host, target=parse_domain(host.domains[0].raw_xml))
    assert topo.used == dict.fromkeys([1, 3, 5, 7, 9], "neighbour")
    assert virsh_define(result.patched).returncode == 0


def test_guest_larger_than_a_node_is_split_evenly(zstack_host, virsh_define):
    big = zstack_host.domains[0].raw_xml.replace(
        "<vcpu placement='static' current='32'>128</vcpu>", "<vcpu placement='static'>48</vcpu>"
    )
    result = domain_remedy(domain_xml=big, host=zstack_host)
    assert result.ok, result
    d = parse_domain(result.patched)
    assert [(c.id, c.cpus) for c in d.numa_cells] == [(0, list(range(24))), (1, list(range(24, 48)))]
    assert d.memnodes == {0: {"mode": "strict", "nodeset": [0]}, 1: {"mode": "strict", "nodeset": [1]}}
    assert d.numatune_memory_nodeset == [0, 1]
    assert d.topology == {"sockets": 2, "cores": 12, "threads": 2}
    assert all(c % 2 == 0 for v in range(24) for c in d.vcpupin[v])
    assert all(c % 2 == 1 for v in range(24, 48) for c in d.vcpupin[v])
    assert d.numa_cells[0].distances == {0: 10, 1: 21}
    assert virsh_define(result.patched).returncode == 0


def test_huge_pages_when_the_node_has_enough(zstack_host):
    host = load_host(ZSTACK / "before" / "zstack-9.txt")
    host.numa.nodes[1].meminfo["HugePages_Free"] = 20000  # 2 MiB pages: 39 GiB free
    result = domain_remedy(domain_xml=host.domains[0].raw_xml, host=host)
    d = parse_domain(result.patched)
    assert d.hugepages and "static-hugepages" in result.measures
    assert "+  <memoryBacking>\n+    <hugepages/>\n+  </memoryBacking>\n" in result.diff


@pytest.mark.parametrize(
    ("xml", "host", "reason"),
    [
        ("<domain type='qemu'><name>t</name><vcpu>2</vcpu></domain>", "zstack", "not kvm"),
        ("<domain type='kvm'><name>t</name><memory>1024</memory></domain>", "zstack", "no <vcpu>"),
        ("<domain type='kvm'><name>t</name><vcpu>2</vcpu></domain>", None, "no host facts"),
        ("<domain type='kvm'><name>t</name><vcpu>2</vcpu></domain>", "empty", "CPUs of each NUMA node"),
        ("<domain type='kvm'><name>t</name><vcpu>72</vcpu></domain>", "zstack", "not enough free CPUs"),
        ("<cputune>\n  <vcpupin vcpu='0' cpuset='1'/>\n...\n", "zstack", "pasted fragment"),
        (
            "<domstatus><domain type='kvm'><name>t</name><vcpu>2</vcpu></domain></domstatus>",
            "zstack",
            "domstatus",
        ),
        ("<domain type='kvm'><vcpu>x</vcpu></domain>", "zstack", "cannot be read"),
    ],
)
def test_no_remedy_reasons(zstack_host, xml, host, reason):
    hosts = {"zstack": zstack_host, None: None, "empty": HostFacts(hostname="bare")}
    result = domain_remedy(domain_xml=xml, host=hosts[host])
    assert isinstance(result, NoRemedy)
    assert reason in result.reason


def test_memory_that_fits_no_node_is_explained(zstack_host):
    huge = zstack_host.domains[0].raw_xml.replace("33554432", str(600 * 1024 * 1024))
    result = domain_remedy(domain_xml=huge, host=zstack_host)
    # 600 GiB fits neither node (334 / 290 GiB free) but two halves of 300 GiB do not either
    assert isinstance(result, NoRemedy)
    assert "600.0 GiB" in result.reason and "free memory" in result.reason


def test_check_placement_agrees_with_the_generated_plan(zstack_host):
    from engine.remedies.topology import plan_placement

    topo = host_topology(host=zstack_host, target=zstack_host.domains[0])
    plan = plan_placement(topology=topo, vcpus=32, memory_kb=33554432, iothread_ids=[1])
    assert check_placement(plan, topo) == []
    assert parse_cpulist("33,69") == list(plan.emulator_cpus)

"""NUMA rules on real-format transcripts (rebuilt founding snapshots, edited
where a test needs one fact flipped)."""

from __future__ import annotations

from tests.conftest import ROOT

ZSTACK = "zstack-mariadb-v2v"
KUNPENG = "kunpeng-stream-zone-reclaim"
OPENSTACK = "openstack-kvm-crm-cpu"
OCEANBASE = "oceanbase-bmsql-tuning"

SINGLE_NODE_GUEST_LSCPU = """```console
[root@small-vm ~]# lscpu
Architecture:          x86_64
CPU op-mode(s):        32-bit, 64-bit
Byte Order:            Little Endian
CPU(s):                4
On-line CPU(s) list:   0-3
Thread(s) per core:    1
Core(s) per socket:    4
Socket(s):             1
NUMA node(s):          1
Vendor ID:             GenuineIntel
Model name:            Intel(R) Xeon(R) CPU E5-2695 v4 @ 2.10GHz
Hypervisor vendor:     KVM
Virtualization type:   full
L1d cache:             32K
L1i cache:             32K
L2 cache:              4096K
L3 cache:              16384K
NUMA node0 CPU(s):     0-3
[root@small-vm ~]# sysctl -a | grep numa_balancing
kernel.numa_balancing = 0
```
"""


# ------------------------------------------------------------ single node, several sockets


def test_single_node_multi_socket_fires_on_two_sockets_one_node(analyze_texts, seed_text):
    result = analyze_texts(seed_text(OCEANBASE, "before", "obs-197.txt"))
    finding = next(f for f in result.findings if f.rule == "numa.single_node_multi_socket")
    assert {e.fact: e.value for e in finding.evidence} == {"cpu.sockets": 2, "cpu.numa_nodes": 1}


def test_single_node_multi_socket_quiet_with_one_node_per_socket(analyze_texts, seed_text):
    result = analyze_texts(seed_text(KUNPENG, "before", "gp-sdw01.txt"))
    assert "numa.single_node_multi_socket" not in result.rule_ids


def test_single_node_multi_socket_leaves_flat_guests_to_the_kvm_rules(analyze_texts, seed_text):
    result = analyze_texts(seed_text(OPENSTACK, "before", "od01crmapp05.txt"))
    assert "numa.single_node_multi_socket" not in result.rule_ids
    assert "kvm.flat_socket_topology" in result.rule_ids


# ------------------------------------------------------------ node memory imbalance


def test_node_memory_imbalance_fires_on_seed_000_node_meminfo(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt"))
    finding = next(f for f in result.findings if f.rule == "numa.node_memory_imbalance")
    assert [e.value for e in finding.evidence] == [110486100, 60132036]
    assert finding.evidence[0].artifact.endswith("node0/meminfo")


def test_node_memory_imbalance_quiet_when_nodes_are_balanced(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "after", "zstack-9.txt"))
    assert "numa.node_memory_imbalance" not in result.rule_ids


# ------------------------------------------------------------ page cache pressure


def test_pagecache_pressure_fires_at_the_watermark_with_zone_reclaim_off(analyze_texts, seed_text):
    result = analyze_texts(seed_text(KUNPENG, "before", "gp-sdw03.txt"))
    finding = next(f for f in result.findings if f.rule == "numa.local_node_pagecache_pressure")
    facts = {e.fact for e in finding.evidence}
    assert {"numa.nodes.0.watermark_low", "numa.nodes.0.free_pages", "sysctl.vm.zone_reclaim_mode"} <= facts


def test_pagecache_pressure_without_zoneinfo_uses_free_share(analyze_texts, seed_text):
    text = seed_text(KUNPENG, "before", "gp-sdw03.txt")
    head, rest = text.split("[root@gp-sdw03 ~]# cat /proc/zoneinfo", 1)
    text = head + "[root@gp-sdw03 ~]# sysctl -a" + rest.split("[root@gp-sdw03 ~]# sysctl -a", 1)[1]
    result = analyze_texts(text)
    assert "numa.local_node_pagecache_pressure" in result.rule_ids


def test_pagecache_pressure_quiet_with_zone_reclaim_on(analyze_texts, seed_text):
    text = seed_text(
        KUNPENG, "before", "gp-sdw03.txt", {"vm.zone_reclaim_mode = 0": "vm.zone_reclaim_mode = 1"}
    )
    assert "numa.local_node_pagecache_pressure" not in analyze_texts(text).rule_ids


def test_pagecache_pressure_quiet_when_free_memory_is_plentiful(analyze_texts, seed_text):
    assert (
        "numa.local_node_pagecache_pressure"
        not in analyze_texts(seed_text(KUNPENG, "before", "gp-sdw01.txt")).rule_ids
    )


# ------------------------------------------------------------ remote access


def test_remote_access_dominant_fires_on_numastat_miss_over_hit(analyze_texts, seed_text):
    result = analyze_texts(seed_text(OPENSTACK, "before", "cmp-node07.txt"))
    finding = next(f for f in result.findings if f.rule == "numa.remote_access_dominant")
    assert finding.evidence[0].fact == "numa.nodes.0.numastat.numa_miss"
    assert finding.evidence[0].artifact == "transcript:numastat"


def test_remote_access_dominant_quiet_when_local_wins(analyze_texts, seed_text):
    assert (
        "numa.remote_access_dominant"
        not in analyze_texts(seed_text(OPENSTACK, "after", "cmp-node07.txt")).rule_ids
    )


# ------------------------------------------------------------ automatic balancing


def test_balancing_disabled_fires_on_multi_node_host_with_zero(analyze_texts, seed_text):
    text = seed_text(
        ZSTACK, "before", "zstack-9.txt", {"kernel.numa_balancing = 1": "kernel.numa_balancing = 0"}
    )
    assert "numa.balancing_disabled" in analyze_texts(text).rule_ids


def test_balancing_disabled_fires_on_guest_kernel_without_balancing(analyze_texts, seed_text):
    result = analyze_texts(
        seed_text(OPENSTACK, "before", "cmp-node07.txt"), seed_text(OPENSTACK, "before", "od01crmapp05.txt")
    )
    finding = next(f for f in result.findings if f.rule == "numa.balancing_disabled")
    assert finding.host == "od01crmapp05"
    assert any(e.fact == "kernel.release" for e in finding.evidence)


def test_balancing_disabled_quiet_when_enabled(analyze_texts, seed_text):
    assert (
        "numa.balancing_disabled" not in analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt")).rule_ids
    )


def test_balancing_disabled_quiet_on_single_node_machine(analyze_texts):
    assert "numa.balancing_disabled" not in analyze_texts(SINGLE_NODE_GUEST_LSCPU).rule_ids


# ------------------------------------------------------------ remote distance


def test_high_remote_distance_fires_on_kunpeng_32_vs_10(analyze_texts, seed_text):
    result = analyze_texts(seed_text(KUNPENG, "before", "gp-sdw01.txt"))
    finding = next(f for f in result.findings if f.rule == "numa.high_remote_distance")
    assert finding.severity == "info"
    assert finding.evidence[0].value == 32


def test_high_remote_distance_from_a_cut_virsh_capabilities_fragment(analyze_texts):
    # virt-manager issue 86 (tests/evaluation/91-*): cells 3 and 4 of an 8-node
    # arm64 host, no numactl -H; cell 3's row runs 10 (itself) to 40 (node 4)
    text = (ROOT / "tests/evaluation/91-virt-manager-capabilities-8node-cut/comment.txt").read_text()
    finding = next(f for f in analyze_texts(text).findings if f.rule == "numa.high_remote_distance")
    assert (finding.values["from_node"], finding.values["to_node"], finding.values["ratio"]) == (3, 4, 4.0)
    assert finding.evidence[0].fact == "capabilities.cells[3].distances[4]"
    assert finding.evidence[0].line == 2


def test_high_remote_distance_quiet_on_two_socket_intel_21(analyze_texts, seed_text):
    assert (
        "numa.high_remote_distance" not in analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt")).rule_ids
    )


SEED_003_NUMACTL = """```console
# numactl -H
available: 2 nodes (0-1)
node 0 cpus: 0 2 4 6 8 10
node 0 size: 32722 MB
node 0 free: 24803 MB
node 1 cpus: 1 3 5 7 9 11
node 1 size: 32768 MB
node 1 free: 28378 MB
```
"""


def test_node_memory_imbalance_quiet_on_small_idle_differences(analyze_texts):
    # seed 003's example box: 7.7 vs 4.3 GiB used is kernel memory and cache, not load
    assert "numa.node_memory_imbalance" not in analyze_texts(SEED_003_NUMACTL).rule_ids


def test_single_node_multi_socket_quiet_on_one_core_sockets(analyze_texts, corpus):
    text = (corpus / "lscpu" / "util-linux_lscpu-loongarch-kvm_on_loongson_3c6000.txt").read_text()
    assert "numa.single_node_multi_socket" not in analyze_texts(text, names=["lscpu"]).rule_ids


# ------------------------------------------------------------ published outputs
# tests/fixtures/published/README.md names the source of each file.

from tests.conftest import FIXTURES  # noqa: E402

PUBLISHED = FIXTURES / "published"


def _published(name: str) -> str:
    return (PUBLISHED / name).read_text(encoding="utf-8")


def _console(command: str, output: str, host: str = "host") -> str:
    return f"```console\n[root@{host} ~]# {command}\n{output.rstrip()}\n```\n"


def test_single_node_multi_socket_quiet_on_a_front_side_bus_xeon_e5410(analyze_texts):
    # 2 sockets x 4 cores, one node: Harpertown has one memory controller for both
    # sockets (uniform memory), so there is no NUMA setting to enable
    result = analyze_texts(_console("lscpu", _published("e5410-lscpu.txt"), "e5410"))
    assert "numa.single_node_multi_socket" not in result.rule_ids
    assert "numa.single_node_multi_socket" in result.checked


def test_single_node_multi_socket_still_fires_on_a_numa_xeon_with_one_node(analyze_texts):
    # the X5650 of the same report (Westmere-EP, integrated memory controllers) with
    # its node lines folded into one, as with node interleaving on in the BIOS
    text = _published("x5650-lscpu.txt").replace("NUMA node(s):          2", "NUMA node(s):          1")
    text = text.split("NUMA node0 CPU(s):")[0] + "NUMA node0 CPU(s):     0-23\n"
    result = analyze_texts(_console("lscpu", text, "x5650"))
    assert "numa.single_node_multi_socket" in result.rule_ids


# ------------------------------------------------------------ memoryless nodes


def test_memoryless_node_fires_on_epyc_with_six_of_eight_nodes_empty(analyze_texts):
    result = analyze_texts(_console("numactl -H", _published("epyc7551-numactl-H.txt"), "epyc"))
    finding = next(f for f in result.findings if f.rule == "numa.memoryless_node")
    assert finding.severity == "warning"
    assert [e.fact for e in finding.evidence] == [f"numa.nodes.{n}.mem_total_kb" for n in (0, 2, 3, 4, 6, 7)]
    assert all(e.line for e in finding.evidence)
    assert "75%" in finding.explanation and "node 1, 5" in finding.explanation
    # the hardware cause is the DIMM population: the report asks for it
    asked = next(n for n in result.not_checked if n.rule == "memory.dimm_population_unbalanced")
    assert "sudo dmidecode -t memory" in asked.commands


def test_memoryless_node_fires_on_threadripper_nps4(analyze_texts):
    result = analyze_texts(_console("numactl -H", _published("threadripper3960x-numactl-H.txt"), "tr"))
    finding = next(f for f in result.findings if f.rule == "numa.memoryless_node")
    assert "2 of 4 nodes" in finding.explanation


def test_memoryless_node_quiet_when_every_node_has_memory(analyze_texts, seed_text):
    result = analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt"))
    assert "numa.memoryless_node" not in result.rule_ids
    assert "numa.memoryless_node" in result.checked


def test_memoryless_node_reports_a_cpu_less_memory_tier_as_info():
    from collectors.facts import HostFacts, NumaNode, NumaTopology, SnapshotFacts
    from engine.run import analyze

    # numactl -H of a host with a CXL expander: node 2 has memory and no CPUs
    numa = NumaTopology(
        nodes={
            0: NumaNode(node=0, cpus=list(range(0, 32)), size_mb=257578, free_mb=250013),
            1: NumaNode(node=1, cpus=list(range(32, 64)), size_mb=258037, free_mb=251145),
            2: NumaNode(node=2, cpus=[], size_mb=131072, free_mb=131072),
        }
    )
    result = analyze(SnapshotFacts(hosts=[HostFacts(label="cxl", role="physical", numa=numa)]))
    finding = next(f for f in result.findings if f.rule == "numa.memoryless_node")
    assert finding.severity == "info" and "node 2: 128 GiB" in finding.explanation


def test_memoryless_node_asks_for_the_cpus_when_only_numastat_lists_the_nodes(analyze_texts):
    # numastat -mc of a 9-node host (numactl issue 210): memory on nodes 0 and 1,
    # and no CPU list anywhere. Nodes 0 and 1 are not "memory without CPUs": the
    # report says their CPUs were not seen and how to get them.
    result = analyze_texts(_published("nine-node-numastat-mc.txt"))
    assert "numa.memoryless_node" not in result.rule_ids
    asked = next(n for n in result.not_checked if n.rule == "numa.memoryless_node")
    assert "numactl -H" in asked.commands and "CPUs of each NUMA node" in asked.reason


def test_numastat_m_evidence_cites_the_row_of_the_value(analyze_texts):
    # numastat -m prints one row per key for all nodes: the evidence line is the
    # MemUsed row, not the blank line before the table (issue 210's paste)
    text = _published("nine-node-numastat-mc.txt")
    result = analyze_texts(text)
    finding = next(f for f in result.findings if f.rule == "numa.node_memory_imbalance")
    rows = text.splitlines()
    assert {rows[e.line - 1].split()[0] for e in finding.evidence} == {"MemUsed"}


# ------------------------------------------------------------ imbalance without memoryless nodes

MEMORYLESS_NODE_2 = {
    "node 1 free: 334493 MB\n": (
        "node 1 free: 334493 MB\nnode 2 cpus:\nnode 2 size: 0 MB\nnode 2 free: 0 MB\n"
    ),
}


def test_node_memory_imbalance_ignores_memoryless_nodes_and_compares_the_rest(analyze_texts, seed_text):
    # seed 000's host with an empty node as numactl prints one (size 0 MB): the two
    # nodes with memory are still 110 vs 60 GiB used
    result = analyze_texts(seed_text(ZSTACK, "before", "zstack-9.txt", MEMORYLESS_NODE_2))
    finding = next(f for f in result.findings if f.rule == "numa.node_memory_imbalance")
    assert [e.value for e in finding.evidence] == [110486100, 60132036]


def test_node_memory_imbalance_quiet_on_epyc_whose_two_memory_nodes_match(analyze_texts):
    result = analyze_texts(_console("numactl -H", _published("epyc7551-numactl-H.txt"), "epyc"))
    assert "numa.node_memory_imbalance" not in result.rule_ids
    assert "numa.node_memory_imbalance" in result.checked


def test_node_memory_imbalance_share_is_of_the_compared_nodes_memory():
    from collectors.facts import HostFacts, NumaNode, NumaTopology, SnapshotFacts
    from engine.run import analyze

    # a large node 0 (512 GiB) must not set the bar for two 64 GiB nodes: 50 GiB of
    # difference between nodes 1 and 2 is 78 % of their memory, under 10 % of node 0's
    gib = 1024
    numa = NumaTopology(
        nodes={
            0: NumaNode(node=0, cpus=[0, 1], size_mb=512 * gib, free_mb=482 * gib),
            1: NumaNode(node=1, cpus=[2, 3], size_mb=64 * gib, free_mb=4 * gib),
            2: NumaNode(node=2, cpus=[4, 5], size_mb=64 * gib, free_mb=54 * gib),
        }
    )
    result = analyze(SnapshotFacts(hosts=[HostFacts(label="asym", role="physical", numa=numa)]))
    finding = next(f for f in result.findings if f.rule == "numa.node_memory_imbalance")
    assert [e.fact for e in finding.evidence] == ["numa.nodes.1.mem_used_kb", "numa.nodes.2.mem_used_kb"]


def _summit_numastat_m() -> str:
    # tests/fixtures/published/README.md: nodes 0 and 8 are the sockets, the six GPUs'
    # memory nodes 250-255 are entirely free
    return (PUBLISHED / "summit-numastat-m.txt").read_text(encoding="utf-8")


def test_node_memory_imbalance_leaves_out_untouched_memory_only_nodes(analyze_texts):
    # a GPU memory node nothing allocates on (0 MB used) is not the quiet node, and it
    # used to stop the comparison altogether; nodes 0 and 8 differ by 26.6 GiB (3.5x)
    result = analyze_texts(_summit_numastat_m())
    finding = next(f for f in result.findings if f.rule == "numa.node_memory_imbalance")
    assert [e.fact for e in finding.evidence] == ["numa.nodes.0.mem_used_kb", "numa.nodes.8.mem_used_kb"]


def test_node_memory_imbalance_quiet_when_only_one_node_is_in_use(analyze_texts):
    node_8_idle = _summit_numastat_m().replace("10730.69", "    0.00").replace("250992.88", "261723.56")
    result = analyze_texts(node_8_idle)
    assert "numa.node_memory_imbalance" not in result.rule_ids
    assert "numa.node_memory_imbalance" in result.checked


def test_memoryless_node_does_not_call_a_node_cpu_less_when_the_paste_cut_its_cpu_line(analyze_texts):
    # what-when-how.com (Oracle 12c consolidation book, as stored): numactl -H from
    # "node 0 size:" on; node 0's CPUs are unknown, not none
    text = (
        "node 0 size: 8190 MB\nnode 0 free: 1622 MB\n"
        + "".join(
            f"node {n} cpus: {' '.join(str(c) for c in range(6 * n, 6 * n + 6))}\n"
            f"node {n} size: 8192 MB\nnode {n} free: 1534 MB\n"
            for n in (1, 2, 3)
        )
        + "node distances:\nnode 0 1 2 3\n0: 10 16 16 16\n1: 16 10 16 16\n2: 16 16 10 16\n3: 16 16 16 10\n"
    )
    result = analyze_texts(text)
    assert "numa.memoryless_node" not in result.rule_ids
    # the same node with its (empty) cpus line is a memory-only node
    whole = text.replace("node 0 size:", "node 0 cpus:\nnode 0 size:", 1)
    finding = next(f for f in analyze_texts(whole).findings if f.rule == "numa.memoryless_node")
    assert finding.severity == "info" and [e.fact for e in finding.evidence] == ["numa.nodes.0.cpus"]

"""NUMA topology and placement rules."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from collectors.cpulist import format_cpulist
from collectors.derived.topology import cpus_by_node, node_cpus_unknown
from collectors.derived.workload import (
    BALANCING_OFF_WORKLOADS,
    DATABASE_WORKLOADS,
    tuned_profiles,
    tuned_setting,
    workloads,
)
from collectors.facts import CpuTopology, HostFacts, NumaNode, NumaTopology, VirshCapabilities
from engine.rules import (
    Evidence,
    Joined,
    Phrase,
    RuleContext,
    RuleFinding,
    evidence,
    finding,
    is_multinode,
    numa_evidence,
    numa_needs,
    rule,
)
from engine.rules.vm_policy import kernel_numbers

# numa.single_node_multi_socket: platforms whose sockets share one front-side bus
# and memory controller (northbridge) have uniform memory: one node is the truth
# there, not a firmware setting. Matched on lscpu's "Model name".
UNIFORM_MEMORY_CPU_MODELS = (
    # Xeon 5100/5200/5300/5400 (Woodcrest, Wolfdale-DP, Clovertown, Harpertown):
    # "Intel(R) Xeon(R) CPU           E5410  @ 2.33GHz", "Xeon(R) CPU            5130"
    r"Xeon\(R\) CPU\s+[EXL]?5[1-4]\d\d\b",
    # Xeon 7200/7300/7400 (Tigerton, Dunnington): "Xeon(R) CPU           X7460"
    r"Xeon\(R\) CPU\s+[EXL]?7[234]\d\d\b",
    # NetBurst Xeons (Nocona, Irwindale, Paxville, Dempsey): "Intel(R) Xeon(TM) CPU 3.00GHz"
    r"Xeon\(TM\)",
    # Core 2 / Pentium D based boards
    r"Core\(TM\)2",
    r"Pentium\(R\) D\b",
)
_UNIFORM_MEMORY = re.compile("|".join(UNIFORM_MEMORY_CPU_MODELS), re.I)

# numa.node_memory_imbalance
IMBALANCE_RATIO = 1.5  # busier node's used memory / quieter node's
IMBALANCE_MIN_SHARE = 0.10  # and the difference is at least this share of a node
# and at least this much: a few GiB more on node 0 is kernel memory and cache
# on any idle two-node box (seed 003's example machine: 3.4 GiB)
IMBALANCE_MIN_DIFF_KB = 4 * 1024 * 1024

# numa.local_node_pagecache_pressure
PAGECACHE_MIN_SHARE = 0.5  # FilePages / MemTotal of the node
NEAR_LOW_WATERMARK_FACTOR = 1.5  # free pages <= this x the low watermark
FREE_SHARE_WITHOUT_ZONEINFO = 0.03  # without zoneinfo: MemFree / MemTotal below this

# ... on a database host: memory placed (interleaved), cache dropped before a
# benchmark; never zone reclaim (issue 25: the PostgreSQL, Cassandra, MongoDB incidents)
DATABASE_PAGECACHE_MEASURES = ("mariadb-numactl-interleave", "drop-caches-before-benchmark")

# numa.high_remote_distance
# Two-socket Intel machines report 21 (2.1x local), the ordinary cost of a hop;
# 2.5x and more (Kunpeng 920 reports 32) is where remote bandwidth collapses.
HIGH_REMOTE_DISTANCE_RATIO = 2.5

# numa.balancing_disabled
NUMA_BALANCING_MIN_KERNEL = (3, 8)  # kernel.numa_balancing appeared in Linux 3.8
FULL_SYSCTL_DUMP_MIN_KEYS = 30  # fewer keys: a grep, absence proves nothing


def balancing_setting_known(host: HostFacts) -> bool:
    """Whether the snapshot tells kernel.numa_balancing's value or its absence:
    the key, a kernel older than the setting, or a full ``sysctl -a`` dump."""
    if host.sysctl_value("kernel.numa_balancing") is not None:
        return True
    return _kernel_predates_balancing(host) or _full_sysctl_dump(host)


def _kernel_predates_balancing(host: HostFacts) -> bool:
    kv = kernel_numbers(host.kernel.release if host.kernel else None)
    return kv is not None and kv[:2] < NUMA_BALANCING_MIN_KERNEL


def _full_sysctl_dump(host: HostFacts) -> bool:
    """A ``sysctl -a`` dump, where a missing key is missing from the kernel."""
    return bool(host.sysctl and len(host.sysctl.values) >= FULL_SYSCTL_DUMP_MIN_KEYS)


@rule(
    "numa.single_node_multi_socket",
    severity="warning",
    title="Several CPU sockets but a single NUMA node",
    title_zh="多路 CPU 却只有一个 NUMA 节点",
    condition=(
        "lscpu reports 2 or more sockets of several cores each and exactly one NUMA node: on bare metal NUMA "
        "is disabled or nodes are interleaved in firmware; in a guest there is no guest NUMA topology "
        "(sockets of "
        "1 core are a virtual layout, reported by kvm.flat_socket_topology and kvm.guest_numa_missing "
        "instead)"
    ),
    condition_zh=(
        "lscpu 报告 2 个或更多各有多个核心的插槽，且恰好只有一个 NUMA 节点：物理机上表示 NUMA 被关闭或固件中"
        "开启了节点交织；虚拟机中表示没有虚拟机 NUMA 拓扑（每个插槽 1 个核心是虚拟布局，改由 "
        "kvm.flat_socket_topology 和 kvm.guest_numa_missing 报告）"
    ),
    requires=("cpu",),
    measures=("enable-numa-in-firmware", "guest-numa-topology", "flavor-numa-topology"),
    seeds=("oceanbase-bmsql-tuning", "kunpeng-stream-zone-reclaim"),
    thresholds={"min_sockets": 2, "uniform_memory_cpu_models": list(UNIFORM_MEMORY_CPU_MODELS)},
    rationale=(
        "With one node on a NUMA machine about half of all accesses cross the socket interconnect "
        "(1.5-2x local latency, 30-50 % less bandwidth), whatever the placement: the loss is there from two "
        "sockets on. Front-side-bus platforms (Xeon 5100-5400, 7200-7400, NetBurst Xeons, Core 2 / "
        "Pentium D boards) have one memory controller for all sockets: memory is uniform, one node is "
        "correct and there is nothing to enable, so they are exempt by CPU model name."
    ),
    rationale_zh=(
        "在 NUMA 机器上只有一个节点时，无论怎样放置，约一半的访存都要跨越插槽互联（延迟为本地的 1.5-2 倍，带"
        "宽少 30-50 %）：从两个插槽起就有这种损失。前端总线平台（Xeon 5100-5400、7200-7400、NetBurst 架构的 "
        "Xeon、Core 2 / Pentium D 主板）所有插槽共用一个内存控制器：内存是均匀的，一个节点是正确的，也没有可"
        "开启的设置，因此按 CPU 型号名豁免。"
    ),
    # sockets (lscpu) against the node count; a host known to have several nodes is out of it
    relevant=lambda ctx, h: () if is_multinode(h) else ("cpu", "numa"),
    explanation=(
        "{host} has {sockets} sockets but the kernel sees one NUMA node, so it cannot keep memory next to "
        "the CPU that uses it: about half of all accesses cross the socket interconnect. On bare metal check "
        "the firmware's NUMA / node-interleaving setting."
    ),
    explanation_zh=(
        "{host} 有 {sockets} 个 CPU 插槽，但内核只看到一个 NUMA 节点，无法把内存分配在使用它的 CPU 附近，约一"
        "半的访存要跨插槽互联。物理机请检查 BIOS 中的 NUMA / 节点交织设置。"
    ),
)
def single_node_multi_socket(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        cpu = _sockets_on_one_node(host)
        if cpu is None:
            continue
        ev = [
            evidence(host, "cpu.sockets", cpu.sockets, cpu, "sockets", "Socket(s)"),
            evidence(host, "cpu.numa_nodes", 1, cpu, "numa_nodes", "NUMA node(s)"),
        ]
        yield finding(
            "numa.single_node_multi_socket",
            host,
            values={"sockets": cpu.sockets},
            evidence=ev,
        )


def _sockets_on_one_node(host: HostFacts) -> CpuTopology | None:
    """The host's CPU facts when it has several multi-core sockets of a NUMA
    platform and the kernel sees one node; None otherwise."""
    cpu = host.cpu
    if not cpu or not cpu.sockets or cpu.sockets < 2:
        return None
    if cpu.model_name and _UNIFORM_MEMORY.search(cpu.model_name):
        return None  # uniform memory: one node is the hardware's truth
    # N sockets x 1 core is a hypervisor's (or LPAR's) layout, not hardware
    return cpu if host.numa_node_count() == 1 and cpu.cores_per_socket != 1 else None


@rule(
    "numa.node_memory_imbalance",
    severity="warning",
    title="NUMA nodes are unevenly loaded",
    title_zh="各 NUMA 节点内存使用不均衡",
    condition=(
        f"on a multi-node host the busiest node uses >= {IMBALANCE_RATIO}x the memory of the quietest node "
        f"and the difference is >= {int(IMBALANCE_MIN_SHARE * 100)}% of the memory of the larger of the two "
        f"nodes and >= {IMBALANCE_MIN_DIFF_KB // 1048576} GiB; nodes without memory are left out (they are "
        "numa.memoryless_node's), and so are nodes none of whose memory is in use (a memory-only tier "
        "nothing allocates on: GPU or CXL memory), and the others compared"
    ),
    condition_zh=(
        f"在多节点主机上，最繁忙节点的内存用量 >= 最空闲节点的 {IMBALANCE_RATIO} 倍，且差值 >= 两者中较大节点"
        f"内存的 {int(IMBALANCE_MIN_SHARE * 100)}% 并且 >= {IMBALANCE_MIN_DIFF_KB // 1048576} GiB；没有内存的"
        "节点不参与比较（由 numa.memoryless_node 检查），内存完全未被使用的节点（没有任何分配落在其上的"
        "纯内存层：GPU 或 CXL 内存）也不参与，只比较其他节点"
    ),
    requires=("node_meminfo",),
    measures=("rebalance-host-load", "pin-vcpus", "numatune-memory-binding"),
    seeds=("zstack-mariadb-v2v",),
    thresholds={
        "ratio": IMBALANCE_RATIO,
        "min_share_of_node": IMBALANCE_MIN_SHARE,
        "min_difference_kb": IMBALANCE_MIN_DIFF_KB,
    },
    rationale=(
        "1.5x used memory between two nodes means work placed on the busy node runs out of local memory "
        "well before the other: new allocations spill remote at 1.5-2x latency. The difference must also be "
        "a tenth of a node and 4 GiB, because a few GiB more on node 0 is kernel memory and cache on any "
        "idle two-node box. past = ratio / 1.5."
    ),
    rationale_zh=(
        "两个节点之间已用内存相差 1.5 倍，意味着放在繁忙节点上的工作会远早于另一个节点耗尽本地内存：新分配以"
        " 1.5-2 倍的延迟溢出到远端。差值还必须达到节点的十分之一并且达到 4 GiB，因为在任何空闲的双节点机器上"
        "，节点 0 多出几 GiB 都只是内核内存和缓存。past = 比值 / 1.5。"
    ),
    relevant=lambda ctx, h: numa_needs(h, "node_meminfo"),
    explanation=(
        "Node {busy} uses {busy_gib} GiB against {quiet_gib} GiB on node {quiet} ({ratio:.1f}x). Workloads "
        "placed on node {busy} compete harder for its CPUs and memory, and new allocations spill to the "
        "remote node sooner."
    ),
    explanation_zh=(
        "节点 {busy} 已用 {busy_gib} GiB，节点 {quiet} 只用 {quiet_gib} GiB（{ratio:.1f} 倍）。运行在节点 "
        "{busy} 上的负载对 CPU 和内存的竞争更激烈，新分配也更早落到远端节点。"
    ),
)
def node_memory_imbalance(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        found = _imbalanced_nodes(host.numa) if host.numa else None
        if found is None:
            continue
        busy, quiet, used = found
        ratio = used[busy] / used[quiet]
        yield finding(
            "numa.node_memory_imbalance",
            host,
            values={
                "busy": busy,
                "quiet": quiet,
                "busy_gib": used[busy] // 1048576,
                "quiet_gib": used[quiet] // 1048576,
                "ratio": ratio,
            },
            evidence=[_used_memory_evidence(host, n, used[n]) for n in (busy, quiet)],
            past=ratio / IMBALANCE_RATIO,
        )


def _imbalanced_nodes(numa: NumaTopology) -> tuple[int, int, dict[int, int]] | None:
    """The busiest and the quietest node, and each node's used memory (kB), when
    the two differ past the thresholds (a ratio, a share of the larger node, an amount)."""
    used = _used_memory_kb(numa)  # (at most one entry per node)
    if len(used) < 2:
        return None
    busy = max(used, key=used.__getitem__)
    quiet = min(used, key=used.__getitem__)
    larger = max(numa.nodes[busy].mem_total_kb() or 0, numa.nodes[quiet].mem_total_kb() or 0)
    diff = used[busy] - used[quiet]
    if used[busy] / used[quiet] < IMBALANCE_RATIO or diff < max(
        IMBALANCE_MIN_SHARE * larger, IMBALANCE_MIN_DIFF_KB
    ):
        return None
    return busy, quiet, used


def _used_memory_kb(numa: NumaTopology) -> dict[int, int]:
    """Node -> used memory (kB), for the nodes that have memory and use some:
    memoryless nodes (CPU-only chiplets, empty sockets) have nothing to
    balance, and a node none of whose memory is in use is a memory-only tier
    nothing allocates on (GPU memory: Summit's nodes 250-255; CXL). The kernel
    always uses some of a node it runs on, so comparing against such a node
    would only ever name it as the quiet one."""
    used = {n: node.mem_used_kb() for n, node in numa.nodes.items() if node.mem_total_kb()}
    return {n: kb for n, kb in used.items() if kb is not None and kb > 0}


def _used_memory_evidence(host: HostFacts, n: int, used_kb: int) -> Evidence:
    assert host.numa is not None
    part = "NodeMeminfo" if "MemUsed" in host.numa.nodes[n].meminfo else "NumactlHardware"
    return numa_evidence(host, f"numa.nodes.{n}.mem_used_kb", used_kb, part, f"{n}.MemUsed", f"node.{n}.free")


@dataclass(frozen=True)
class _PressedNode:
    """A node whose page cache holds most of its memory while its free memory
    is near the low watermark."""

    node: int
    pct: int  # page cache, % of the node's memory
    evidence: list[Evidence]  # the page cache, then the free memory


def _pressed_nodes(host: HostFacts) -> list[_PressedNode]:
    """The nodes of a multi-node host whose page cache presses their free memory."""
    if not host.numa or len(host.numa.nodes) < 2:
        return []
    return [p for n, node in sorted(host.numa.nodes.items()) if (p := _pressed_node(host, n, node))]


def _pressed_node(host: HostFacts, n: int, node: NumaNode) -> _PressedNode | None:
    total, free = node.mem_total_kb(), node.mem_free_kb()
    cache = node.meminfo.get("FilePages")
    if not total or free is None or cache is None or cache < PAGECACHE_MIN_SHARE * total:
        return None
    near, free_ev = _near_low_watermark(host, n, node, free, total)
    if not near:
        return None
    cache_ev = numa_evidence(
        host, f"numa.nodes.{n}.meminfo.FilePages", cache, "NodeMeminfo", f"{n}.FilePages"
    )
    return _PressedNode(node=n, pct=cache * 100 // total, evidence=[cache_ev, *free_ev])


def _near_low_watermark(
    host: HostFacts, n: int, node: NumaNode, free: int, total: int
) -> tuple[bool, list[Evidence]]:
    """Whether the node's free memory is near its low watermark (zoneinfo),
    else a small share of the node (meminfo alone), with the evidence."""
    if node.free_pages is not None and node.watermark_low:
        return node.free_pages <= NEAR_LOW_WATERMARK_FACTOR * node.watermark_low, [
            numa_evidence(host, f"numa.nodes.{n}.free_pages", node.free_pages, "Zoneinfo", f"{n}.Normal"),
            numa_evidence(
                host, f"numa.nodes.{n}.watermark_low", node.watermark_low, "Zoneinfo", f"{n}.Normal"
            ),
        ]
    return free < FREE_SHARE_WITHOUT_ZONEINFO * total, [
        numa_evidence(host, f"numa.nodes.{n}.meminfo.MemFree", free, "NodeMeminfo", f"{n}.MemFree")
    ]


@rule(
    "numa.local_node_pagecache_pressure",
    severity="warning",
    title="Page cache fills a node and zone reclaim is off",
    title_zh="页缓存占满本地节点且未开启 zone reclaim",
    condition=(
        "on a multi-node host with vm.zone_reclaim_mode = 0, a node's free memory is at most "
        f"{NEAR_LOW_WATERMARK_FACTOR}x its low watermark (zoneinfo; without zoneinfo: below "
        f"{int(FREE_SHARE_WITHOUT_ZONEINFO * 100)}% of the node) while page cache (FilePages) holds >= "
        f"{int(PAGECACHE_MIN_SHARE * 100)}% of the node; on a database host (MySQL family, OceanBase, "
        "Oracle, SAP HANA, SQL Server, PostgreSQL, MongoDB seen) it advises placing the memory, never zone "
        "reclaim"
    ),
    condition_zh=(
        "在 vm.zone_reclaim_mode = 0 的多节点主机上，某节点的空闲内存至多为其 low 水位的 "
        f"{NEAR_LOW_WATERMARK_FACTOR} 倍（zoneinfo；没有 zoneinfo 时：低于节点的 "
        f"{int(FREE_SHARE_WITHOUT_ZONEINFO * 100)}%），同时页缓存（FilePages）占节点的 >= "
        f"{int(PAGECACHE_MIN_SHARE * 100)}%；在数据库主机上（见到 MySQL 系、OceanBase、Oracle、SAP HANA、"
        "SQL Server、PostgreSQL、MongoDB）建议安排内存放置，而不是开启 zone reclaim"
    ),
    requires=("node_meminfo", "sysctl"),
    measures=("zone-reclaim-mode", "drop-caches-before-benchmark", "numactl-local-alloc"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={
        "pagecache_min_share": PAGECACHE_MIN_SHARE,
        "near_low_watermark_factor": NEAR_LOW_WATERMARK_FACTOR,
        "free_share_without_zoneinfo": FREE_SHARE_WITHOUT_ZONEINFO,
        "zone_reclaim_mode": 0,
    },
    rationale=(
        "The low watermark is where kswapd starts; with zone_reclaim_mode = 0 an allocation that finds the "
        "local node at its watermark is served remote instead of reclaiming clean cache. Page cache holding "
        "half the node is what keeps it there (seed 001: STREAM 15000 -> 6000 MB/s at distance 32). 1.5x the "
        "watermark catches a node that will hit it under the next burst; without zoneinfo 3 % free is about "
        "the same point on common node sizes."
    ),
    rationale_zh=(
        "low 水位是 kswapd 开始回收的位置；zone_reclaim_mode = 0 时，发现本地节点已到水位的分配会改从远端获"
        "取内存，而不是回收干净的缓存。占据半个节点的页缓存正是让节点停在水位附近的原因（奠基案例 001：距离"
        "为 32 时 STREAM 15000 -> 6000 MB/s）。水位的 1.5 倍能发现下一次突发就会触及水位的节点；没有 "
        "zoneinfo 时，在常见的节点容量上 3 % 空闲大致是同一位置。"
    ),
    # free memory per node, the page cache per node (free's total says nothing of
    # where it sits) and the setting itself
    relevant=lambda ctx, h: numa_needs(h, "node_meminfo", "node_pagecache", "zone_reclaim_mode"),
    explanations={
        "general": (
            "Page cache fills {nodes} and free memory there is down at the reclaim watermark. With "
            "vm.zone_reclaim_mode = 0 the kernel does not reclaim that cache for a new allocation: it takes "
            "memory from the remote node instead, so memory-bound work (STREAM, a benchmark) runs at remote "
            "bandwidth. Turning zone reclaim on follows the kernel's vm.zone_reclaim_mode documentation for "
            "work that fits a node (seed 001, tuned hpc-compute); a file server whose cache matters more "
            "than remote access keeps 0.{tuned}",
            "页缓存占满了{nodes}，其空闲内存已降到回收水位附近。vm.zone_reclaim_mode = 0 时内核不会为新分配回"
            "收本节点的缓存，而是直接从远端节点拿内存，内存密集型负载（STREAM、基准测试）只能得到远端带宽。开"
            "启 zone reclaim 依据内核 vm.zone_reclaim_mode 文档，适用于可放进单个节点的负载（奠基案例 001，"
            "tuned hpc-compute）；缓存比远端访问更重要的文件服务器应保持 0。{tuned}",
        ),
        "tuned_sets_zone_reclaim": (
            " The active TuneD profile {profile} sets it to {value}: the running 0 overrides tuned's "
            "(check `tuned-adm verify`).",
            "当前的 TuneD 配置 {profile} 将其设为 {value}：运行中的 0 覆盖了 tuned 的设置（请检查 "
            "`tuned-adm verify`）。",
        ),
        "tuned_leaves_zone_reclaim": (
            " The active TuneD profile ({profile}) leaves it at the kernel's default; hpc-compute is the "
            "profile that turns it on.",
            "当前的 TuneD 配置（{profile}）保持内核默认值；开启它的是 hpc-compute 配置。",
        ),
        "tuned_unknown_zone_reclaim": (
            " No TuneD profile was in the snapshot (`tuned-adm active`); hpc-compute is the profile that "
            "turns it on.",
            "快照中没有 TuneD 配置（`tuned-adm active`）；开启它的是 hpc-compute 配置。",
        ),
        "database": (
            "Page cache fills {nodes} and free memory there is down at the reclaim watermark, so new "
            "allocations go to the remote node. This host runs a database ({workloads}): there a full page "
            "cache is normal and turning zone reclaim on caused the PostgreSQL, Cassandra and MongoDB "
            "incidents (local reclaim stalls and evicts the cache the database reads), so leave "
            "vm.zone_reclaim_mode at 0 and place the database's memory instead (interleave it across the "
            "nodes), and drop the cache before a memory benchmark.",
            "页缓存占满了{nodes}，其空闲内存已降到回收水位附近，新的分配会转到远端节点。本主机运行数据库（"
            "{workloads}）：页缓存占满在这里是常态，PostgreSQL、Cassandra 和 MongoDB 的事故正是开启 zone "
            "reclaim 引起的（本地回收造成停顿并逐出数据库要读的缓存），因此请保持 vm.zone_reclaim_mode 为 0，"
            "改为安排数据库的内存放置（跨节点交织），并在内存基准测试前清理缓存。",
        ),
        "node_share": ("node {node} ({pct}%)", "节点 {node}（{pct}%）"),
        "node_sep": (", ", "、"),
    },
)
def local_node_pagecache_pressure(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        zrm = host.sysctl_value("vm.zone_reclaim_mode")
        if zrm is None or zrm.strip() != "0":
            continue
        pressed = _pressed_nodes(host)
        if not pressed:
            continue
        ev = [e for p in pressed for e in p.evidence]
        ev.append(evidence(host, "sysctl.vm.zone_reclaim_mode", zrm, host.sysctl, "vm.zone_reclaim_mode"))
        nodes = Joined(
            "node_sep", tuple(Phrase("node_share", {"node": p.node, "pct": p.pct}) for p in pressed)
        )
        yield _pagecache_finding(host, nodes, ev)


def _pagecache_finding(host: HostFacts, nodes: Joined, ev: list[Evidence]) -> RuleFinding:
    """On a database host zone reclaim on is the cause there, not the cure:
    place the memory and drop the cache; elsewhere, turn it on (in the TuneD
    profile when one sets it)."""
    databases = sorted(workloads(host) & DATABASE_WORKLOADS)
    if databases:
        return finding(
            "numa.local_node_pagecache_pressure",
            host,
            "database",
            values={"nodes": nodes, "workloads": ", ".join(databases)},
            evidence=ev,
            measures=DATABASE_PAGECACHE_MEASURES,
        )
    setting = tuned_setting(host, "vm.zone_reclaim_mode")
    return finding(
        "numa.local_node_pagecache_pressure",
        host,
        "general",
        values={"nodes": nodes, "tuned": _tuned_phrase(host, setting, "zone_reclaim")},
        evidence=[*ev, *_tuned_evidence(host)],
    )


@rule(
    "numa.remote_access_dominant",
    severity="warning",
    title="Most memory allocations land on a remote node",
    title_zh="多数内存分配落在远端节点",
    condition="numastat on any node: numa_miss > numa_hit, or other_node > local_node",
    condition_zh="任一节点的 numastat：numa_miss > numa_hit，或 other_node > local_node",
    requires=("numastat",),
    measures=("guest-numa-topology", "enable-numa-balancing", "numatune-memory-binding", "pin-vcpus"),
    seeds=("openstack-kvm-crm-cpu",),
    thresholds={"miss_over_hit": 1.0, "other_over_local": 1.0},
    rationale=(
        "numastat counts since boot: more misses than hits means most memory a task ever got came from a "
        "remote node, so most accesses pay the interconnect (1.5-3x latency); below parity the local share "
        "still dominates."
    ),
    rationale_zh=(
        "numastat 是自开机以来的累计计数：未命中多于命中，意味着任务获得的内存大多来自远端节点，因此多数访存"
        "要经过互联（延迟为 1.5-3 倍）；低于持平时本地访问仍占多数。"
    ),
    relevant=lambda ctx, h: numa_needs(h, "numastat"),
    explanation=(
        "numastat counts more allocations served from a remote node than from the local one. Threads run far "
        "from their memory, so every cache miss pays the interconnect latency."
    ),
    explanation_zh=(
        "numastat 显示从远端节点分配的内存多于本地节点。线程运行的位置远离其内存，每次缓存未命中都要付出跨节"
        "点互联的延迟。"
    ),
)
def remote_access_dominant(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        if not host.numa:
            continue
        ev = [e for n, node in sorted(host.numa.nodes.items()) for e in _remote_over_local(host, n, node)]
        if ev:
            yield finding(
                "numa.remote_access_dominant",
                host,
                values={},
                evidence=ev,
            )


# numastat's (remote, local) counter pairs: remote above local on a node is the rule's condition
REMOTE_LOCAL_COUNTERS = (("numa_miss", "numa_hit"), ("other_node", "local_node"))


def _remote_over_local(host: HostFacts, n: int, node: NumaNode) -> list[Evidence]:
    """Both counters of each pair in which the node's remote count is larger than its local one."""
    st = node.numastat
    ev = []
    for bad, good in REMOTE_LOCAL_COUNTERS:
        if bad in st and good in st and st[bad] > st[good]:
            ev.append(numa_evidence(host, f"numa.nodes.{n}.numastat.{bad}", st[bad], "Numastat", bad))
            ev.append(numa_evidence(host, f"numa.nodes.{n}.numastat.{good}", st[good], "Numastat", good))
    return ev


@rule(
    "numa.balancing_disabled",
    severity="warning",
    title="Automatic NUMA balancing is off or unsupported",
    title_zh="自动 NUMA 平衡未开启或不支持",
    condition=(
        "a multi-node system with kernel.numa_balancing = 0, or without that sysctl (kernel older "
        "than "
        f"{NUMA_BALANCING_MIN_KERNEL[0]}.{NUMA_BALANCING_MIN_KERNEL[1]}, or absent from a full sysctl -a "
        "dump "
        f"of >= {FULL_SYSCTL_DUMP_MIN_KEYS} keys); a single-node machine or guest has nothing to balance; a "
        "host running Oracle, SAP HANA, SQL Server or OceanBase (their vendors require it off) is exempt"
    ),
    condition_zh=(
        "多节点系统的 "
        f"kernel.numa_balancing = 0，或没有该 sysctl（内核低于 {NUMA_BALANCING_MIN_KERNEL[0]}"
        f".{NUMA_BALANCING_MIN_KERNEL[1]}，或在 >= {FULL_SYSCTL_DUMP_MIN_KEYS} 个键的完整 sysctl -a 输出中不"
        "存在）；单节点的机器或虚拟机没有可平衡的对象；运行 Oracle、SAP HANA、SQL Server 或 OceanBase 的主机"
        "（其厂商要求关闭）除外"
    ),
    requires=("sysctl", "kernel"),
    requires_mode="any",
    measures=("enable-numa-balancing",),
    seeds=("openstack-kvm-crm-cpu",),
    thresholds={
        "numa_balancing": 0,
        "min_kernel": "{}.{}".format(*NUMA_BALANCING_MIN_KERNEL),
        "full_sysctl_dump_min_keys": FULL_SYSCTL_DUMP_MIN_KEYS,
    },
    rationale=(
        "Without automatic balancing, pages and tasks that drift apart stay apart for the life of the "
        "process; on any multi-node host that is a slow, permanent move towards remote access (seed 002: "
        "numa_miss > numa_hit). It is a yes/no setting, so there is no magnitude beyond being multi-node."
    ),
    rationale_zh=(
        "没有自动平衡时，彼此分离的页面和任务在进程整个生命周期内都会保持分离；在任何多节点主机上，这都是缓"
        "慢而持久地走向远端访问（奠基案例 002：numa_miss > numa_hit）。这是一个是/否设置，除了是否多节点之外"
        "没有程度之分。"
    ),
    relevant=lambda ctx, h: numa_needs(h, "numa_balancing"),
    explanations={
        "": (
            "On {host} {reason}: nothing moves pages or tasks back together once they drift apart, so "
            "long-running processes end up accessing remote memory. This follows the kernel's default for "
            "general workloads; Oracle, SAP HANA, SQL Server and OceanBase require balancing off (tuned "
            "profiles oracle, sap-hana, mssql; SAP's check 2200_numa_balancing; obdiag), and none of them "
            "was seen on this host: if it runs one, leave it off.{tuned}",
            "{host} 上{reason}：进程与其内存分离后没有机制把它们重新放到一起，长时间运行的进程会越来越多地访"
            "问远端内存。此建议依据内核对通用负载的默认设置；Oracle、SAP HANA、SQL Server 和 OceanBase 要求关"
            "闭自动平衡（tuned 的 oracle、sap-hana、mssql 配置，SAP 检查 2200_numa_balancing，obdiag），"
            "本主机上未见到它们：如果运行的是其中之一，请保持关闭。{tuned}",
        ),
        "tuned_sets_balancing": (
            " The active TuneD profile {profile} sets it to {value}: the running value overrides tuned's "
            "(check `tuned-adm verify`).",
            "当前的 TuneD 配置 {profile} 将其设为 {value}：运行中的值覆盖了 tuned 的设置（请检查 "
            "`tuned-adm verify`）。",
        ),
        "tuned_leaves_balancing": (
            " The active TuneD profile ({profile}) does not turn it off.",
            "当前的 TuneD 配置（{profile}）并未关闭它。",
        ),
        "tuned_unknown_balancing": (
            " No TuneD profile was in the snapshot (`tuned-adm active`): the profiles oracle, mssql, "
            "sap-hana, hpc-compute and network-latency turn it off on purpose.",
            "快照中没有 TuneD 配置（`tuned-adm active`）：oracle、mssql、sap-hana、hpc-compute 和 "
            "network-latency 配置会有意关闭它。",
        ),
        "balancing_off": ("kernel.numa_balancing is 0", "kernel.numa_balancing 为 0"),
        "balancing_unsupported": ("the kernel has no automatic NUMA balancing", "内核不支持自动 NUMA 平衡"),
    },
)
def balancing_disabled(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        nodes = host.numa_node_count()
        # One node (a guest without guest NUMA too): there is nothing to
        # balance between; the missing guest topology is kvm.guest_numa_missing's.
        if nodes is None or nodes < 2:
            continue
        profile = tuned_setting(host, "kernel.numa_balancing")
        if _balancing_off_on_purpose(host, profile):
            continue
        off = _balancing_off(host)
        if off is None:
            continue
        reason, reason_ev = off
        yield finding(
            "numa.balancing_disabled",
            host,
            values={"reason": reason, "tuned": _tuned_phrase(host, profile, "balancing")},
            evidence=[_node_count_evidence(host, nodes), reason_ev, *_tuned_evidence(host)],
        )


def _balancing_off_on_purpose(host: HostFacts, profile: tuple[str, str] | None) -> bool:
    """Whether balancing is off as a workload's vendor requires (tuned profiles,
    SAP's check, obdiag) or as the host's TuneD ``profile`` sets it
    (hpc-compute, network-latency ...)."""
    if workloads(host) & BALANCING_OFF_WORKLOADS:
        return True
    return profile is not None and profile[0] == "0"


def _node_count_evidence(host: HostFacts, nodes: int) -> Evidence:
    """The evidence of the host's NUMA node count: numactl -H, else lscpu."""
    if host.numa:
        return numa_evidence(host, "numa_nodes", nodes, "NumactlHardware", "available")
    return evidence(host, "cpu.numa_nodes", nodes, host.cpu, "numa_nodes")


def _balancing_off(host: HostFacts) -> tuple[Phrase, Evidence] | None:
    """Why the host runs without automatic NUMA balancing (the rule's phrase
    and its evidence): kernel.numa_balancing = 0, or a kernel without the
    setting (older than it, or a full sysctl dump that lacks it)."""
    value = host.sysctl_value("kernel.numa_balancing")
    if value is not None:
        if value.strip() != "0":
            return None
        ev = evidence(host, "sysctl.kernel.numa_balancing", value, host.sysctl, "kernel.numa_balancing")
        return Phrase("balancing_off"), ev
    if _kernel_predates_balancing(host):
        release = host.kernel.release if host.kernel else None
        return Phrase("balancing_unsupported"), evidence(
            host, "kernel.release", release, host.kernel, "release"
        )
    if _full_sysctl_dump(host):
        return Phrase("balancing_unsupported"), evidence(
            host, "sysctl.kernel.numa_balancing", None, host.sysctl
        )
    return None


def _tuned_phrase(host: HostFacts, setting: tuple[str, str] | None, what: str) -> Phrase:
    """Which TuneD guidance the finding follows: the profile that sets the
    value (and was overridden), the active profile that leaves it alone, or
    none seen (``what``: "balancing", "zone_reclaim")."""
    profiles = tuned_profiles(host)
    if setting is not None:
        return Phrase(f"tuned_sets_{what}", {"profile": setting[1], "value": setting[0]})
    if profiles:
        return Phrase(f"tuned_leaves_{what}", {"profile": " ".join(profiles)})
    return Phrase(f"tuned_unknown_{what}")


def _tuned_evidence(host: HostFacts) -> list[Evidence]:
    tuned = host.tuned
    if tuned is None or not tuned.profiles:
        return []
    return [evidence(host, "tuned.profiles", " ".join(tuned.profiles), tuned, "profiles")]


@rule(
    "numa.high_remote_distance",
    severity="info",
    title="Remote NUMA access is expensive on this machine",
    title_zh="本机跨 NUMA 访问代价很高",
    condition=(
        f"the largest remote/local NUMA distance is >= {HIGH_REMOTE_DISTANCE_RATIO} (e.g. 32 vs 10); context "
        "for the placement rules"
    ),
    condition_zh=(
        f"最大的远端/本地 NUMA 距离比 >= {HIGH_REMOTE_DISTANCE_RATIO}（例如 32 对 10）；作为放置类规则的背景"
        "信息"
    ),
    requires=("numa_distances",),
    measures=("numactl-local-alloc", "zone-reclaim-mode"),
    relevant=lambda ctx, h: numa_needs(h, "numa_distances"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={"remote_local_ratio": HIGH_REMOTE_DISTANCE_RATIO},
    rationale=(
        "SLIT distances approximate latency ratios: 21 (2.1x) is the ordinary cost of one hop on two-socket "
        "x86; from 2.5x (Kunpeng 920: 32, multi-hop EPYC: 32) remote bandwidth collapses and placement "
        "mistakes show as large differences. Context only (info)."
    ),
    rationale_zh=(
        "SLIT 距离近似于延迟比：21（2.1 倍）是双路 x86 上一跳的常见代价；从 2.5 倍起（Kunpeng 920：32，多跳 "
        "EPYC：32），远端带宽急剧下降，放置错误会表现为很大的差异。仅作背景信息（提示）。"
    ),
    explanation=(
        "The firmware reports distance {remote} from node {from_node} to node {to_node} against {local} "
        "locally ({ratio:.1f}x): memory that ends up on the wrong node costs a lot here, so placement "
        "problems show as large performance differences."
    ),
    explanation_zh=(
        "固件报告节点 {from_node} 到节点 {to_node} 的距离为 {remote}，本地为 {local}（{ratio:.1f} 倍）：内存"
        "落在错误节点上的代价很高，放置问题会表现为明显的性能差异。"
    ),
)
def high_remote_distance(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        numa = host.numa
        if not numa or not numa.distances:
            yield from _high_capabilities_distance(host)
            continue
        worst = _worst_distance(_numactl_rows(numa))
        if worst is None or worst[0] < HIGH_REMOTE_DISTANCE_RATIO:
            continue
        ratio, i, j, local, remote = worst
        a, b = _distance_node(numa, i), _distance_node(numa, j)
        yield finding(
            "numa.high_remote_distance",
            host,
            values={"remote": remote, "local": local, "from_node": a, "to_node": b, "ratio": ratio},
            evidence=[
                numa_evidence(host, f"numa.distances[{a}][{b}]", remote, "NumactlHardware", "distances")
            ],
        )


def _worst_distance(
    rows: Iterable[tuple[int, int | None, Iterable[tuple[int, int]]]],
) -> tuple[float, int, int, int, int] | None:
    """(remote / local, node, other node, local, remote) of the largest ratio
    (the first of equal ones) in distance rows, each ``(node, its distance to
    itself, (other node, distance) pairs)``; rows without a local distance
    are skipped."""
    pairs = (
        (remote / local, node, other, local, remote)
        for node, local, row in rows
        if local
        for other, remote in row
        if other != node
    )
    return max(pairs, key=lambda pair: pair[0], default=None)


def _numactl_rows(numa: NumaTopology) -> Iterator[tuple[int, int | None, Iterable[tuple[int, int]]]]:
    """The rows of numactl -H's distance table, as :func:`_worst_distance` reads
    them (by row and column index; None for a row cut before its own column)."""
    for i, row in enumerate(numa.distances):
        yield i, row[i] if i < len(row) else None, enumerate(row)


def _distance_node(numa: NumaTopology, index: int) -> int:
    """The node of the ``index``-th row or column of the distance table."""
    return numa.distance_nodes[index] if index < len(numa.distance_nodes) else index


def _high_capabilities_distance(host: HostFacts) -> Iterator[RuleFinding]:
    """numa.high_remote_distance from ``virsh capabilities`` cells (each with its
    row of distances) when the host has no numactl -H distance table."""
    caps = host.capabilities
    worst = _worst_distance(_capabilities_rows(caps)) if caps is not None else None
    if caps is None or worst is None or worst[0] < HIGH_REMOTE_DISTANCE_RATIO:
        return
    ratio, a, b, local, remote = worst
    yield finding(
        "numa.high_remote_distance",
        host,
        values={"remote": remote, "local": local, "from_node": a, "to_node": b, "ratio": ratio},
        evidence=[evidence(host, f"capabilities.cells[{a}].distances[{b}]", remote, caps, f"cells[{a}]")],
    )


def _capabilities_rows(
    caps: VirshCapabilities,
) -> Iterator[tuple[int, int | None, Iterable[tuple[int, int]]]]:
    """The distance rows of ``virsh capabilities``' cells, as :func:`_worst_distance` reads them."""
    for node, cell in caps.cells.items():
        distances = cell.get("distances") or {}
        yield node, distances.get(node), distances.items()


# numa.memoryless_node
MEMORYLESS_CPU_SHARE_WARN = 0.25  # share of the host's CPUs on memoryless nodes


def _memoryless_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return numa_needs(host, "node_meminfo", "node_cpus")


@rule(
    "numa.memoryless_node",
    severity="warning",
    title="NUMA nodes without memory (or without CPUs)",
    title_zh="存在没有内存（或没有 CPU）的 NUMA 节点",
    condition=(
        "a node with CPUs and 0 kB of memory (numactl -H size 0 MB, node meminfo MemTotal 0): warning when "
        f">= {MEMORYLESS_CPU_SHARE_WARN:.0%} of the CPUs sit on such nodes, else info; a node with memory "
        "and no CPUs (a CXL or PMEM tier, GPU/HBM memory) is info; a node whose numactl -H 'cpus:' line "
        "the paste cut off has unknown CPUs, not none"
    ),
    condition_zh=(
        "有 CPU 但内存为 0 kB 的节点（numactl -H size 0 MB，节点 meminfo MemTotal 0）：当 >= "
        f"{MEMORYLESS_CPU_SHARE_WARN:.0%} 的 CPU 位于此类节点时为警告，否则为提示；有内存但没有 CPU 的节点（"
        "CXL 或 PMEM 层、GPU/HBM 内存）为提示；numactl -H 的 'cpus:' 行被粘贴截掉的节点，"
        "其 CPU 未知，而不是没有"
    ),
    requires=("node_meminfo",),
    measures=("numatune-memory-binding", "pin-vcpus", "numactl-local-alloc"),
    thresholds={"memoryless_cpu_share_warning": MEMORYLESS_CPU_SHARE_WARN},
    rationale=(
        "Every access from a CPU on a memoryless node is remote (one hop at best: 16 vs 10 within an EPYC "
        "socket, 32 across sockets), and numactl --membind / libvirt numatune cannot name such a node. A "
        "quarter of the CPUs in that state is a host-wide loss (an EPYC with DIMMs on 2 of 8 dies: 6 of 8 "
        "nodes); one node of many is worth knowing (info). A CPU-less memory node is a slower tier that the "
        "default policy uses only when the local nodes are full: context for placement (info). past = CPU "
        "share / 25 %."
    ),
    rationale_zh=(
        "无内存节点上的 CPU 的每次访存都是远端访问（最好也要一跳：EPYC 插槽内 16 对 10，跨插槽 32），且 "
        "numactl --membind / libvirt numatune 无法指定这样的节点。四分之一的 CPU 处于这种状态就是全机范围的"
        "损失（8 个 die 中只有 2 个装了内存条的 EPYC：8 个节点中有 6 个）；多个节点中有一个则值得知道（提示"
        "）。没有 CPU 的内存节点是较慢的一层，默认策略只在本地节点用满时才使用它：作为放置的背景信息（提示）"
        "。past = CPU 占比 / 25 %。"
    ),
    relevant=_memoryless_relevant,
    explanations={
        "cpus_without_memory": (
            "{count} of {nodes} nodes of {host} have CPUs but no memory (node {cpu_only}; CPUs {cpus}, "
            "{share:.0%} of the host): every access from those CPUs is remote, to node {with_memory}. "
            "numactl --membind and libvirt numatune cannot name a memoryless node, so pin memory-bound work "
            "(a database, large guests) to CPUs of the nodes with memory and bind its memory there; populate "
            "DIMMs on every socket and channel (dmidecode -t memory) to give each node its own memory.",
            "{host} 的 {nodes} 个节点中有 {count} 个有 CPU 但没有内存（节点 {cpu_only}；CPU {cpus}，占全部 "
            "CPU 的 {share:.0%}）：这些 CPU 的每次访存都是远端访问（到节点 {with_memory}）。numactl "
            "--membind 和 libvirt numatune 无法指定无内存节点，应把内存密集型负载（数据库、大规格虚拟机）绑定"
            "到有内存节点的 CPU 并把内存绑定在那里；并在每个插槽、每个通道安装内存条（见 dmidecode -t memory"
            "），让每个节点都有本地内存。",
        ),
        "memory_without_cpus": (
            "{host} has memory-only nodes without CPUs ({sizes}): a CXL, PMEM or device memory tier. The "
            "default policy uses it only when the CPU nodes are full, so a buffer pool or guest that "
            "outgrows its node lands there at tier latency; bind latency-sensitive memory to the CPU nodes "
            "(numatune / numactl --membind) and keep the tier for cold data.",
            "{host} 有不带 CPU 的纯内存节点（{sizes}）：CXL、PMEM 或设备内存层。默认策略只在 CPU 节点用尽时才"
            "使用它，缓冲池或虚拟机超出本节点后会落到这一层，延迟更高；应把延迟敏感的内存绑定到 CPU 节点（"
            "numatune / numactl --membind），把这一层留给冷数据。",
        ),
        # the node lists read the same in both languages
        "node_sep": (", ", ", "),
        "node_size": ("node {node}: {gib} GiB", "node {node}: {gib} GiB"),
    },
)
def memoryless_node(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        if not host.numa or len(host.numa.nodes) < 2:
            continue
        kinds = _node_kinds(host, host.numa)
        if kinds.cpu_only and kinds.with_both:
            all_cpus = sum(len(cpus) for cpus in cpus_by_node(host).values())
            yield _cpus_without_memory(host, kinds.node_cpus, kinds.cpu_only, kinds.with_both, all_cpus)
        if kinds.mem_only:
            yield _memory_without_cpus(host, kinds.mem_only)


@dataclass(frozen=True)
class _NodeKinds:
    """A host's NUMA nodes by what they have: CPUs only, memory only, both."""

    node_cpus: dict[int, list[int]]
    cpu_only: list[int]
    mem_only: list[int]
    with_both: list[int]


def _node_kinds(host: HostFacts, numa: NumaTopology) -> _NodeKinds:
    by_node = cpus_by_node(host)
    node_cpus = {n: by_node.get(n, []) for n in numa.nodes}
    has_memory = {n for n, node in numa.nodes.items() if node.mem_total_kb()}
    # a node is "without CPUs" only when an artifact says so; numastat -m alone
    # lists no CPUs (not_checked asks for them)
    return _NodeKinds(
        node_cpus=node_cpus,
        cpu_only=sorted(n for n, node in numa.nodes.items() if node_cpus[n] and node.mem_total_kb() == 0),
        mem_only=sorted(n for n in has_memory if not node_cpus[n] and not node_cpus_unknown(host, n)),
        with_both=sorted(n for n in has_memory if node_cpus[n]),
    )


def _cpus_without_memory(
    host: HostFacts, node_cpus: dict[int, list[int]], cpu_only: list[int], with_both: list[int], all_cpus: int
) -> RuleFinding:
    """Nodes whose CPUs have no local memory, beside nodes that have both."""
    assert host.numa is not None
    nodes = host.numa.nodes
    stranded = sum(len(node_cpus[n]) for n in cpu_only)
    share = stranded / all_cpus
    severity = "warning" if share >= MEMORYLESS_CPU_SHARE_WARN else "info"
    cpus = format_cpulist(sorted(c for n in cpu_only for c in node_cpus[n]))
    return finding(
        "numa.memoryless_node",
        host,
        "cpus_without_memory",
        values={
            "count": len(cpu_only),
            "nodes": len(nodes),
            "cpu_only": Joined("node_sep", tuple(cpu_only)),
            "cpus": cpus,
            "share": share,
            "with_memory": Joined("node_sep", tuple(with_both)),
        },
        evidence=[_no_memory_evidence(host, n, nodes[n]) for n in cpu_only],
        severity=severity,
        past=share / MEMORYLESS_CPU_SHARE_WARN if share else 1.0,
    )


def _no_memory_evidence(host: HostFacts, n: int, node: NumaNode) -> Evidence:
    """The evidence that node ``n`` has no memory: its node meminfo, else numactl -H."""
    part = "NodeMeminfo" if "MemTotal" in node.meminfo else "NumactlHardware"
    return numa_evidence(
        host, f"numa.nodes.{n}.mem_total_kb", 0, part, f"{n}.MemTotal", f"node.{n}.size", f"node.{n}.cpus"
    )


def _memory_without_cpus(host: HostFacts, mem_only: list[int]) -> RuleFinding:
    """Nodes with memory and no CPUs (an artifact lists their CPUs as none)."""
    assert host.numa is not None
    nodes = host.numa.nodes
    sizes = Joined(
        "node_sep",
        tuple(
            Phrase("node_size", {"node": n, "gib": (nodes[n].mem_total_kb() or 0) // 1048576})
            for n in mem_only
        ),
    )
    return finding(
        "numa.memoryless_node",
        host,
        "memory_without_cpus",
        values={"sizes": sizes},
        evidence=[
            numa_evidence(
                host,
                f"numa.nodes.{n}.cpus",
                [],
                "NumactlHardware",
                f"node.{n}.cpus",
                f"{n}.MemTotal",
            )
            for n in mem_only
        ],
        severity="info",
    )

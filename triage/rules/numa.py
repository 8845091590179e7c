"""NUMA topology and placement rules."""

from __future__ import annotations

from triage.rules import (
    RuleContext,
    evidence,
    finding,
    guest_bound_to_one_node,
    host_name,
    host_of_guest,
    numa_evidence,
    rule,
)

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

# numa.high_remote_distance
# Two-socket Intel machines report 21 (2.1x local), the ordinary cost of a hop;
# 2.5x and more (Kunpeng 920 reports 32) is where remote bandwidth collapses.
HIGH_REMOTE_DISTANCE_RATIO = 2.5

# numa.balancing_disabled
NUMA_BALANCING_MIN_KERNEL = (3, 8)  # kernel.numa_balancing appeared in Linux 3.8
FULL_SYSCTL_DUMP_MIN_KEYS = 30  # fewer keys: a grep, absence proves nothing


def _kernel_tuple(release: str | None) -> tuple[int, int] | None:
    if not release:
        return None
    parts = release.split(".")
    try:
        return int(parts[0]), int("".join(ch for ch in parts[1] if ch.isdigit()) or 0)
    except (ValueError, IndexError):
        return None


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
    requires=("cpu",),
    measures=("enable-numa-in-firmware", "guest-numa-topology", "flavor-numa-topology"),
    seeds=("oceanbase-bmsql-tuning", "kunpeng-stream-zone-reclaim"),
    thresholds={"min_sockets": 2},
)
def single_node_multi_socket(ctx: RuleContext):
    for host in ctx.hosts:
        cpu = host.cpu
        if not cpu or not cpu.sockets or cpu.sockets < 2:
            continue
        nodes = host.numa_node_count()
        if nodes != 1:
            continue
        if cpu.cores_per_socket == 1:
            continue  # N sockets x 1 core is a hypervisor's (or LPAR's) layout, not hardware
        ev = [
            evidence(host, "cpu.sockets", cpu.sockets, cpu, "sockets", "Socket(s)"),
            evidence(host, "cpu.numa_nodes", nodes, cpu, "numa_nodes", "NUMA node(s)"),
        ]
        yield finding(
            "numa.single_node_multi_socket",
            host,
            f"{host_name(host)} has {cpu.sockets} sockets but the kernel sees one NUMA node, so it cannot "
            "keep "
            "memory next to the CPU that uses it: about half of all accesses cross the socket interconnect. "
            "On bare metal check the firmware's NUMA / node-interleaving setting.",
            f"{host_name(host)} 有 {cpu.sockets} 个 CPU 插槽，但内核只看到一个 NUMA 节点，无法把内存分配在"
            "使用它的 CPU "
            "附近，约一半的访存要跨插槽互联。物理机请检查 BIOS 中的 NUMA / 节点交织设置。",
            evidence=ev,
        )


@rule(
    "numa.node_memory_imbalance",
    severity="warning",
    title="NUMA nodes are unevenly loaded",
    title_zh="各 NUMA 节点内存使用不均衡",
    condition=(
        f"on a multi-node host the busiest node uses >= {IMBALANCE_RATIO}x the memory of the quietest node "
        f"and the difference is >= {int(IMBALANCE_MIN_SHARE * 100)}% of a node's memory and >= "
        f"{IMBALANCE_MIN_DIFF_KB // 1048576} GiB"
    ),
    requires=("node_meminfo",),
    measures=("rebalance-host-load", "pin-vcpus", "numatune-memory-binding"),
    seeds=("zstack-mariadb-v2v",),
    thresholds={
        "ratio": IMBALANCE_RATIO,
        "min_share_of_node": IMBALANCE_MIN_SHARE,
        "min_difference_kb": IMBALANCE_MIN_DIFF_KB,
    },
)
def node_memory_imbalance(ctx: RuleContext):
    for host in ctx.hosts:
        if not host.numa or len(host.numa.nodes) < 2:
            continue
        used = {
            n: node.mem_used_kb() for n, node in host.numa.nodes.items() if node.mem_used_kb() is not None
        }
        totals = [node.mem_total_kb() for node in host.numa.nodes.values() if node.mem_total_kb()]
        if len(used) < 2 or not totals:
            continue
        busy = max(used, key=used.get)
        quiet = min(used, key=used.get)
        if used[quiet] <= 0:
            continue
        ratio = used[busy] / used[quiet]
        diff = used[busy] - used[quiet]
        if ratio < IMBALANCE_RATIO or diff < max(IMBALANCE_MIN_SHARE * max(totals), IMBALANCE_MIN_DIFF_KB):
            continue
        ev = [
            numa_evidence(
                host,
                f"numa.nodes.{n}.mem_used_kb",
                used[n],
                "NodeMeminfo" if "MemUsed" in host.numa.nodes[n].meminfo else "NumactlHardware",
                f"{n}.MemUsed",
                f"node.{n}.free",
            )
            for n in (busy, quiet)
        ]
        yield finding(
            "numa.node_memory_imbalance",
            host,
            f"Node {busy} uses {used[busy] // 1048576} GiB against {used[quiet] // 1048576} GiB on node "
            f"{quiet} "
            f"({ratio:.1f}x). Workloads placed on node {busy} compete harder for its CPUs and memory, and "
            "new "
            "allocations spill to the remote node sooner.",
            f"节点 {busy} 已用 {used[busy] // 1048576} GiB，节点 {quiet} 只用 {used[quiet] // 1048576} GiB"
            f"（{ratio:.1f} 倍）。运行在节点 {busy} 上的负载对 CPU 和内存的竞争更激烈，新分配也更早落到远端"
            "节点。",
            evidence=ev,
        )


@rule(
    "numa.local_node_pagecache_pressure",
    severity="warning",
    title="Page cache fills a node and zone reclaim is off",
    title_zh="页缓存占满本地节点且未开启 zone reclaim",
    condition=(
        "on a multi-node host with vm.zone_reclaim_mode = 0, a node's free memory is at most "
        f"{NEAR_LOW_WATERMARK_FACTOR}x its low watermark (zoneinfo; without zoneinfo: below "
        f"{int(FREE_SHARE_WITHOUT_ZONEINFO * 100)}% of the node) while page cache (FilePages) holds >= "
        f"{int(PAGECACHE_MIN_SHARE * 100)}% of the node"
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
)
def local_node_pagecache_pressure(ctx: RuleContext):
    for host in ctx.hosts:
        if not host.numa or len(host.numa.nodes) < 2:
            continue
        zrm = host.sysctl_value("vm.zone_reclaim_mode")
        if zrm is None or zrm.strip() != "0":
            continue
        ev, pressed = [], []
        for n, node in sorted(host.numa.nodes.items()):
            total, free = node.mem_total_kb(), node.mem_free_kb()
            cache = node.meminfo.get("FilePages")
            if not total or free is None or cache is None or cache < PAGECACHE_MIN_SHARE * total:
                continue
            if node.free_pages is not None and node.watermark_low:
                near = node.free_pages <= NEAR_LOW_WATERMARK_FACTOR * node.watermark_low
                free_ev = [
                    numa_evidence(
                        host, f"numa.nodes.{n}.free_pages", node.free_pages, "Zoneinfo", f"{n}.Normal"
                    ),
                    numa_evidence(
                        host, f"numa.nodes.{n}.watermark_low", node.watermark_low, "Zoneinfo", f"{n}.Normal"
                    ),
                ]
            else:
                near = free < FREE_SHARE_WITHOUT_ZONEINFO * total
                free_ev = [
                    numa_evidence(
                        host, f"numa.nodes.{n}.meminfo.MemFree", free, "NodeMeminfo", f"{n}.MemFree"
                    )
                ]
            if not near:
                continue
            pressed.append((n, cache * 100 // total))
            ev.append(
                numa_evidence(
                    host, f"numa.nodes.{n}.meminfo.FilePages", cache, "NodeMeminfo", f"{n}.FilePages"
                )
            )
            ev.extend(free_ev)
        if not pressed:
            continue
        ev.append(evidence(host, "sysctl.vm.zone_reclaim_mode", zrm, host.sysctl, "vm.zone_reclaim_mode"))
        nodes = ", ".join(f"node {n} ({pct}%)" for n, pct in pressed)
        nodes_zh = "、".join(f"节点 {n}（{pct}%）" for n, pct in pressed)
        yield finding(
            "numa.local_node_pagecache_pressure",
            host,
            f"Page cache fills {nodes} and free memory there is down at the reclaim watermark. With "
            "vm.zone_reclaim_mode = 0 the kernel does not reclaim that cache for a new allocation: it "
            "takes memory "
            "from the remote node instead, so memory-bound work (STREAM, a database buffer pool) runs at "
            "remote "
            "bandwidth.",
            f"页缓存占满了{nodes_zh}，其空闲内存已降到回收水位附近。vm.zone_reclaim_mode = 0 时内核不会为新"
            "分配回收"
            "本节点的缓存，而是直接从远端节点拿内存，内存密集型负载（STREAM、数据库缓冲池）只能得到远端带宽"
            "。",
            evidence=ev,
        )


@rule(
    "numa.remote_access_dominant",
    severity="warning",
    title="Most memory allocations land on a remote node",
    title_zh="多数内存分配落在远端节点",
    condition="numastat on any node: numa_miss > numa_hit, or other_node > local_node",
    requires=("numastat",),
    measures=("guest-numa-topology", "enable-numa-balancing", "numatune-memory-binding", "pin-vcpus"),
    seeds=("openstack-kvm-crm-cpu",),
    thresholds={"miss_over_hit": 1.0, "other_over_local": 1.0},
)
def remote_access_dominant(ctx: RuleContext):
    for host in ctx.hosts:
        if not host.numa:
            continue
        ev = []
        for n, node in sorted(host.numa.nodes.items()):
            st = node.numastat
            for bad, good in (("numa_miss", "numa_hit"), ("other_node", "local_node")):
                if bad in st and good in st and st[bad] > st[good]:
                    ev.append(numa_evidence(host, f"numa.nodes.{n}.numastat.{bad}", st[bad], "Numastat", bad))
                    ev.append(
                        numa_evidence(host, f"numa.nodes.{n}.numastat.{good}", st[good], "Numastat", good)
                    )
        if ev:
            yield finding(
                "numa.remote_access_dominant",
                host,
                "numastat counts more allocations served from a remote node than from the local one. "
                "Threads run "
                "far from their memory, so every cache miss pays the interconnect latency.",
                "numastat 显示从远端节点分配的内存多于本地节点。线程运行的位置远离其内存，每次缓存未命中都"
                "要付出跨节点"
                "互联的延迟。",
                evidence=ev,
            )


@rule(
    "numa.balancing_disabled",
    severity="warning",
    title="Automatic NUMA balancing is off or unsupported",
    title_zh="自动 NUMA 平衡未开启或不支持",
    condition=(
        "a multi-node system (or a single-node guest without guest NUMA on a multi-node host, which will "
        "need "
        "it once it gets guest NUMA) with kernel.numa_balancing = 0, or without that sysctl (kernel older "
        "than "
        f"{NUMA_BALANCING_MIN_KERNEL[0]}.{NUMA_BALANCING_MIN_KERNEL[1]}, or absent from a full sysctl -a "
        "dump "
        f"of >= {FULL_SYSCTL_DUMP_MIN_KEYS} keys); guests pinned within one host node are exempt"
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
)
def balancing_disabled(ctx: RuleContext):
    for host in ctx.hosts:
        nodes = host.numa_node_count()
        if nodes is None:
            continue
        if nodes < 2:
            if not host.is_guest or guest_bound_to_one_node(ctx, host):
                continue
            hv = host_of_guest(ctx, host)
            if hv is None or (hv.numa_node_count() or 0) < 2:
                continue
        else:
            hv = None
        value = host.sysctl_value("kernel.numa_balancing")
        ev = []
        if value is not None:
            if value.strip() != "0":
                continue
            ev.append(
                evidence(host, "sysctl.kernel.numa_balancing", value, host.sysctl, "kernel.numa_balancing")
            )
            reason_en, reason_zh = "kernel.numa_balancing is 0", "kernel.numa_balancing 为 0"
        else:
            release = host.kernel.release if host.kernel else None
            kv = _kernel_tuple(release)
            if kv is not None and kv < NUMA_BALANCING_MIN_KERNEL:
                ev.append(evidence(host, "kernel.release", release, host.kernel, "release"))
            elif host.sysctl and len(host.sysctl.values) >= FULL_SYSCTL_DUMP_MIN_KEYS:
                ev.append(evidence(host, "sysctl.kernel.numa_balancing", None, host.sysctl))
            else:
                continue
            reason_en, reason_zh = "the kernel has no automatic NUMA balancing", "内核不支持自动 NUMA 平衡"
        ev.insert(
            0,
            (
                numa_evidence(host, "numa_nodes", nodes, "NumactlHardware", "available")
                if host.numa
                else evidence(host, "cpu.numa_nodes", nodes, host.cpu, "numa_nodes")
            ),
        )
        if hv is not None:
            ev.append(
                numa_evidence(hv, "host.numa_nodes", hv.numa_node_count(), "NumactlHardware", "available")
            )
        yield finding(
            "numa.balancing_disabled",
            host,
            f"On {host_name(host)} {reason_en}: nothing moves pages or tasks back together once they drift "
            "apart, "
            "so long-running processes end up accessing remote memory.",
            f"{host_name(host)} 上{reason_zh}：进程与其内存分离后没有机制把它们重新放到一起，长时间运行的进"
            "程会越来越多地"
            "访问远端内存。",
            evidence=ev,
        )


@rule(
    "numa.high_remote_distance",
    severity="info",
    title="Remote NUMA access is expensive on this machine",
    title_zh="本机跨 NUMA 访问代价很高",
    condition=(
        f"the largest remote/local NUMA distance is >= {HIGH_REMOTE_DISTANCE_RATIO} (e.g. 32 vs 10); context "
        "for the placement rules"
    ),
    requires=("numa_distances",),
    measures=("numactl-local-alloc", "zone-reclaim-mode"),
    seeds=("kunpeng-stream-zone-reclaim",),
    thresholds={"remote_local_ratio": HIGH_REMOTE_DISTANCE_RATIO},
)
def high_remote_distance(ctx: RuleContext):
    for host in ctx.hosts:
        numa = host.numa
        if not numa or not numa.distances:
            continue
        worst = None
        for i, row in enumerate(numa.distances):
            if i >= len(row) or not row[i]:
                continue
            for j, d in enumerate(row):
                if j != i and (worst is None or d / row[i] > worst[0]):
                    worst = (d / row[i], i, j, row[i], d)
        if worst is None or worst[0] < HIGH_REMOTE_DISTANCE_RATIO:
            continue
        ratio, i, j, local, remote = worst
        a = numa.distance_nodes[i] if i < len(numa.distance_nodes) else i
        b = numa.distance_nodes[j] if j < len(numa.distance_nodes) else j
        yield finding(
            "numa.high_remote_distance",
            host,
            f"The firmware reports distance {remote} from node {a} to node {b} against {local} locally "
            f"({ratio:.1f}x): memory that ends up on the wrong node costs a lot here, so placement "
            "problems show "
            "as large performance differences.",
            f"固件报告节点 {a} 到节点 {b} 的距离为 {remote}，本地为 {local}（{ratio:.1f} 倍）：内存落在错误"
            "节点上的代价很高，"
            "放置问题会表现为明显的性能差异。",
            evidence=[
                numa_evidence(host, f"numa.distances[{a}][{b}]", remote, "NumactlHardware", "distances")
            ],
        )

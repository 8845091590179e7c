"""KVM / libvirt guest configuration rules.

Domain XMLs are usually collected on the hypervisor host, so the host's NUMA
topology (same snapshot) tells whether a guest is larger than a node and which
node its pins land on. A guest's own lscpu (a separate host in the snapshot)
is used when no XML is available.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from collectors.cpulist import format_cpulist
from collectors.derived.libvirt import CpuSharing
from collectors.facts import CpuTopology, Domain, DomainDisk, HostFacts, KernelCmdline, ProcessInfo
from engine.partial import cut_hides
from engine.rules import (
    Evidence,
    Phrase,
    RuleContext,
    RuleFinding,
    cpu_node_map,
    domain_host_nodes,
    domain_is_pinned,
    domain_label,
    domain_memory_bound,
    domain_of_guest,
    domain_pinned_cpus,
    domain_vcpus,
    evidence,
    finding,
    guest_disks,
    host_domains,
    host_name,
    host_of_guest,
    is_collector_process,
    is_multinode,
    is_qemu_process,
    kvm_host_needs_domains,
    looks_like_kvm_host,
    node_cpu_counts,
    node_mem_totals_kb,
    rule,
    running_domain_names,
)

LARGE_GUEST_VCPUS = 8  # pinning/binding matters from this size on
VNUMA_GUEST_VCPUS = 16  # a guest this large should see NUMA cells
FLAT_TOPOLOGY_MIN_VCPUS = 4  # 2 sockets x 1 core is a harmless small VM
BUSY_PROCESS_CPU_PCT = 50.0  # a host process using more than half a CPU
HIDING_CPU_MODES = ("host-model", "custom")

DOMAIN_FACTS = ("domains",)


def _domains(ctx: RuleContext) -> Iterator[tuple[HostFacts, Domain]]:
    """(host, domain) for every real guest (libvirt's test driver domains are not)."""
    for host in ctx.hosts:
        for domain in host_domains(host):
            yield host, domain


def _needs_domains_or_guest_cpu(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """A KVM host needs its domain XMLs; a guest decides from its own lscpu."""
    if looks_like_kvm_host(host):
        return ("domains",)
    return ("cpu",) if host.is_guest else ()


def _pinned_domains_need(*facts: str) -> Callable[[RuleContext, HostFacts], tuple[str, ...]]:
    def relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
        return facts if any(d.vcpupin or d.vcpu_cpuset for d in host_domains(host)) else ()

    return relevant


def _says_nothing_of(domain: Domain, shown: bool, rule_id: str = "") -> bool:
    """A pasted fragment (``<vcpu>`` or ``<cputune>`` alone) says nothing of the
    elements it does not show: rules that fire on a missing element skip it
    unless ``shown`` (the element's part of the XML is there). A document cut
    by the paste says nothing of the elements after the cut
    (``engine.partial.cut_hides``): the run lists ``rule_id`` as not checked."""
    return (domain.fragment and not shown) or cut_hides(domain, rule_id)


def _large_or_pinned(domain: Domain) -> bool:
    return domain_vcpus(domain) >= LARGE_GUEST_VCPUS or bool(domain.vcpupin)


def _dom_ev(host: HostFacts, domain: Domain, fact: str, value: Any, *keys: str) -> Evidence:
    return evidence(host, f"domains[{domain_label(domain)}].{fact}", value, domain, *keys or (fact,))


@rule(
    "kvm.vcpu_hotplug_enabled",
    severity="warning",
    title="CPU/memory hot-plug is enabled on the guest",
    title_zh="虚拟机开启了 CPU/内存热插拔",
    condition="a domain's <vcpu current> is below its maximum, or <maxMemory> is set",
    condition_zh="某个域的 <vcpu current> 小于其最大值，或设置了 <maxMemory>",
    requires=DOMAIN_FACTS,
    measures=("disable-cpu-hotplug",),
    seeds=("zstack-mariadb-v2v",),
    rationale=(
        "Hot-plug is a yes/no property: any spare vCPU slot or maxMemory forbids a fixed vNUMA layout and "
        "pinning in advance (seed 000). No magnitude applies."
    ),
    rationale_zh=(
        "热插拔是一个是/否属性：只要有空闲的 vCPU 槽位或设置了 maxMemory，就无法预先设定固定的 vNUMA 布局和"
        "绑核（奠基案例 000）。不涉及程度。"
    ),
    relevant=kvm_host_needs_domains,
    explanation=(
        "Guest {guest} is defined for hot-plug (spare vCPU slots or maxMemory). Hot-pluggable CPUs and "
        "memory cannot be described in a fixed guest NUMA topology or pinned in advance, so hot-plug blocks "
        "the NUMA measures; platforms such as ZStack call it online spec change."
    ),
    explanation_zh=(
        "虚拟机 {guest} 按热插拔方式定义（预留 vCPU 槽位或 maxMemory）。可热插的 CPU 和内存无法写入固定的"
        "虚拟 NUMA 拓扑，也无法预先绑核，因此会妨碍 NUMA 相关优化（ZStack 中称为规格热修改）。"
    ),
)
def vcpu_hotplug_enabled(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        ev = []
        if d.vcpus and d.vcpu_current and d.vcpu_current < d.vcpus:
            ev.append(_dom_ev(host, d, "vcpu_current", d.vcpu_current, "vcpu"))
            ev.append(_dom_ev(host, d, "vcpus", d.vcpus, "vcpu"))
        if d.max_memory_kb:
            ev.append(_dom_ev(host, d, "max_memory_kb", d.max_memory_kb, "maxMemory", "max_memory_kb"))
        if ev:
            yield finding(
                "kvm.vcpu_hotplug_enabled",
                host,
                values={"guest": domain_label(d)},
                evidence=ev,
            )


@rule(
    "kvm.vcpus_unpinned",
    severity="warning",
    title="Large guest with unpinned vCPUs",
    title_zh="大规格虚拟机未绑定 vCPU",
    condition=(
        f"a domain with >= {LARGE_GUEST_VCPUS} vCPUs where not every vCPU has a vcpupin (or <vcpu cpuset>)"
    ),
    condition_zh=f"vCPU 数 >= {LARGE_GUEST_VCPUS} 的域中，并非每个 vCPU 都有 vcpupin（或 <vcpu cpuset>）",
    requires=DOMAIN_FACTS,
    measures=("pin-vcpus", "guest-numa-topology"),
    seeds=("zstack-mariadb-v2v",),
    thresholds={"min_vcpus": LARGE_GUEST_VCPUS},
    rationale=(
        "From 8 vCPUs a guest spans several host cores and L3 slices and, on common 2-socket hosts with "
        "8-32 cores per node, can straddle nodes; below that the scheduler keeps it together well enough. "
        "past = vCPUs / 8."
    ),
    rationale_zh=(
        "从 8 个 vCPU 起，虚拟机会跨越多个宿主机核心和 L3 切片；在常见的每节点 8-32 核的 2 路宿主机上还可能"
        "横跨多个节点。低于这个规模，调度器基本能把它放在一起。past = vCPU 数 / 8。"
    ),
    relevant=kvm_host_needs_domains,
    explanation=(
        "Guest {guest} has {vcpus} vCPUs and {pinned} of them pinned: the host scheduler moves the vCPU "
        "threads across all host CPUs and nodes, away from the guest's memory and its caches."
    ),
    explanation_zh=(
        "虚拟机 {guest} 有 {vcpus} 个 vCPU，仅 {pinned} 个绑定：宿主机调度器会把 vCPU 线程调度到所有 CPU 和节"
        "点上，远离虚拟机的内存和缓存。"
    ),
)
def vcpus_unpinned(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        n = domain_vcpus(d)
        if n < LARGE_GUEST_VCPUS or domain_is_pinned(d) or _says_nothing_of(d, False, "kvm.vcpus_unpinned"):
            continue
        yield finding(
            "kvm.vcpus_unpinned",
            host,
            values={"guest": domain_label(d), "vcpus": n, "pinned": len(d.vcpupin)},
            evidence=[
                _dom_ev(host, d, "vcpus", n, "vcpu"),
                _dom_ev(host, d, "vcpupin", len(d.vcpupin), "cputune", "vcpupin"),
            ],
        )


@rule(
    "kvm.emulator_unpinned",
    severity="warning",
    title="QEMU emulator threads are not pinned",
    title_zh="QEMU 模拟器线程未绑定",
    condition=(
        f"no <emulatorpin> (nor <vcpu cpuset>) on a pinned guest or one with >= {LARGE_GUEST_VCPUS} vCPUs"
    ),
    condition_zh=(
        f"已绑核或 vCPU 数 >= {LARGE_GUEST_VCPUS} 的虚拟机没有 <emulatorpin>（也没有 <vcpu cpuset>）"
    ),
    requires=DOMAIN_FACTS,
    measures=("pin-emulator",),
    seeds=("zstack-mariadb-v2v",),
    thresholds={"min_vcpus": LARGE_GUEST_VCPUS},
    rationale=(
        "The emulator thread runs device emulation and the main loop; on a pinned or >= 8 vCPU guest it "
        "steals time from the pinned vCPUs and touches memory from any node. A yes/no setting once the "
        "guest is that size."
    ),
    rationale_zh=(
        "模拟器线程负责设备模拟和主循环；在已绑核或 >= 8 个 vCPU 的虚拟机上，它会抢占已绑定 vCPU 的时间，并"
        "从任意节点访问内存。虚拟机达到这一规模后，这是一个是/否设置。"
    ),
    relevant=kvm_host_needs_domains,
    explanation=(
        "Guest {guest} has no emulatorpin: QEMU's main loop and device emulation float over every host CPU, "
        "steal time from pinned vCPUs and touch guest memory from remote nodes."
    ),
    explanation_zh=(
        "虚拟机 {guest} 未配置 emulatorpin：QEMU 主循环和设备模拟线程在所有宿主机 CPU 上漂移，会抢占已绑定 "
        "vCPU 的时间，并从远端节点访问虚拟机内存。"
    ),
)
def emulator_unpinned(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        if (
            not _large_or_pinned(d)
            or d.emulatorpin
            or d.vcpu_cpuset
            or _says_nothing_of(d, bool(d.vcpupin), "kvm.emulator_unpinned")
        ):
            continue
        yield finding(
            "kvm.emulator_unpinned",
            host,
            values={"guest": domain_label(d)},
            evidence=[_dom_ev(host, d, "emulatorpin", None, "cputune", "emulatorpin")],
        )


def _unpinned_iothreads(d: Domain, disks: list[DomainDisk]) -> list[int]:
    """The iothreads some disk uses that have no <iothreadpin> (idle ones do not count)."""
    used = sorted({disk.iothread for disk in disks if disk.iothread is not None})
    return [i for i in used if i not in d.iothreadpin]


def _data_disks_without_iothread(disks: list[DomainDisk]) -> list[DomainDisk]:
    """The disks after the first (the boot disk) that the QEMU main loop serves."""
    return [disk for disk in disks[1:] if disk.iothread is None]


def _iothread_gaps(host: HostFacts, d: Domain) -> list[Evidence]:
    """Evidence of the disks' iothreads left unpinned, then of each data disk without one."""
    disks = guest_disks(d)
    unpinned = _unpinned_iothreads(d, disks)
    ev = [_dom_ev(host, d, "iothreads_unpinned", unpinned, "iothreadpin", "iothreads")] if unpinned else []
    ev += [
        _dom_ev(host, d, f"disks[{disk.target}].iothread", None, f"disk.{disk.target}", "disks")
        for disk in _data_disks_without_iothread(disks)
    ]
    return ev


@rule(
    "kvm.iothread_unpinned",
    severity="warning",
    title="Disk I/O threads are missing or unpinned",
    title_zh="磁盘 I/O 线程缺失或未绑定",
    condition=(
        "on a pinned guest or one with >= 8 vCPUs: an iothread used by a disk has no <iothreadpin>, or a "
        "data "
        "disk (any disk after the first) has no iothread; idle iothreads that no disk uses are ignored"
    ),
    condition_zh=(
        "在已绑核或 vCPU 数 >= 8 的虚拟机上：某个被磁盘使用的 iothread 没有 <iothreadpin>，或某块数据盘（第"
        "一块之后的任何磁盘）没有 iothread；没有磁盘使用的空闲 iothread 不计"
    ),
    requires=DOMAIN_FACTS,
    measures=("pin-iothreads",),
    seeds=("zstack-mariadb-v2v",),
    thresholds={"min_vcpus": LARGE_GUEST_VCPUS},
    rationale=(
        "Data disks served by the QEMU main loop or by floating iothreads add latency under I/O on guests "
        "large enough to be pinned (>= 8 vCPUs); the boot disk alone is not worth a dedicated thread."
    ),
    rationale_zh=(
        "在大到需要绑核（>= 8 个 vCPU）的虚拟机上，由 QEMU 主循环或未绑定的 iothread 处理的数据盘会在 I/O 压"
        "力下增加延迟；只有系统盘时不值得为它配专用线程。"
    ),
    relevant=kvm_host_needs_domains,
    explanation=(
        "Guest {guest}: data disks without a dedicated iothread are served by the QEMU main loop, and "
        "iothreads without iothreadpin run on any host CPU; both add latency and disturb pinned vCPUs under "
        "I/O load."
    ),
    explanation_zh=(
        "虚拟机 {guest}：没有专用 iothread 的数据盘由 QEMU 主循环处理，没有 iothreadpin 的 iothread 可在任意"
        "宿主机 CPU 上运行；在 I/O 压力下两者都会增加延迟并干扰已绑定的 vCPU。"
    ),
)
def iothread_unpinned(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        if not _large_or_pinned(d) or _says_nothing_of(
            d, bool(d.disks or d.iothreads), "kvm.iothread_unpinned"
        ):
            continue
        ev = _iothread_gaps(host, d)
        if ev:
            yield finding("kvm.iothread_unpinned", host, values={"guest": domain_label(d)}, evidence=ev)


def _single_spanning_cell(d: Domain) -> bool:
    """One guest NUMA cell holding every vCPU: a flat guest in NUMA clothing
    (libvirt requires a cell for memory hot-plug, so hot-plug guests get one)."""
    if len(d.numa_cells) != 1:
        return False
    return len(set(d.numa_cells[0].cpus)) >= max(domain_vcpus(d), 1)


@rule(
    "kvm.guest_numa_missing",
    severity="warning",
    title="Guest has no NUMA topology",
    title_zh="虚拟机没有虚拟 NUMA 拓扑",
    condition=(
        f"a domain without <numa> cells that has >= {VNUMA_GUEST_VCPUS} vCPUs, or more vCPUs or memory "
        "than one "
        "node of its host; a domain whose only <numa> cell holds all its vCPUs (the cell memory hot-plug "
        "requires) while it has more vCPUs or memory than one host node; or a guest's lscpu shows one NUMA "
        "node (and its XML, if any, no cells or one such cell) while its host (same snapshot) has "
        f"several and the guest has >= {VNUMA_GUEST_VCPUS} vCPUs, or more CPUs or memory (MemTotal) than a "
        "host node"
    ),
    condition_zh=(
        f"满足以下任一条件：没有 <numa> 单元的域，vCPU 数 >= {VNUMA_GUEST_VCPUS}，或 vCPU 数或内存多于其宿主"
        "机的一个节点；域唯一的 <numa> 单元包含全部 vCPU（内存热插拔所要求的单元），而其 vCPU 数或内存多于宿"
        "主机的一个节点；或虚拟机的 lscpu 显示一个 NUMA 节点（如有 XML，其中没有单元或只有一个这样的单元），"
        f"而其宿主机（同一快照中）有多个节点，且虚拟机 vCPU 数 >= {VNUMA_GUEST_VCPUS}，或 CPU 数或内存（"
        "MemTotal）多于宿主机的一个节点"
    ),
    requires=("domains", "guest"),
    requires_mode="any",
    measures=("guest-numa-topology", "flavor-numa-topology", "numatune-memory-binding"),
    seeds=("zstack-mariadb-v2v", "openstack-kvm-crm-cpu"),
    thresholds={"min_vcpus": VNUMA_GUEST_VCPUS},
    rationale=(
        "From 16 vCPUs, or as soon as the guest is larger than one host node (CPUs or memory), its memory "
        "spreads over several host nodes; without guest NUMA cells, or with a single cell holding every "
        "vCPU (the cell libvirt requires for memory hot-plug), the guest kernel cannot keep threads next to "
        "their memory (seeds 000, 002). past = vCPUs / 16."
    ),
    rationale_zh=(
        "从 16 个 vCPU 起，或只要虚拟机大于宿主机的一个节点（CPU 或内存），其内存就会分散在宿主机的多个节点"
        "上；没有虚拟机 NUMA 单元，或只有一个包含全部 vCPU 的单元（libvirt 为内存热插拔要求的单元）时，虚拟"
        "机内核无法让线程靠近其内存（奠基案例 000、002）。past = vCPU 数 / 16。"
    ),
    relevant=_needs_domains_or_guest_cpu,
    explanations={
        "": (
            "Guest {guest} ({vcpus} vCPUs) {layout}, so its kernel and database see one flat node and cannot "
            "keep threads next to their memory, while the host spreads it over nodes.",
            "虚拟机 {guest}（{vcpus} 个 vCPU）{layout}，虚拟机内核和数据库只看到一个节点，无法让线程靠近其内"
            "存，而宿主机却把它分散在多个节点上。",
        ),
        "single_cell": (
            "has a single guest NUMA cell holding all {vcpus} vCPUs while it is larger than a host node",
            "只有一个包含全部 {vcpus} 个 vCPU 的虚拟 NUMA 节点，而其规格大于宿主机的一个节点",
        ),
        "no_cells": ("has no guest NUMA cells", "没有虚拟 NUMA 节点"),
        "guest_view": (
            "The guest sees one NUMA node with {cpus} CPUs while its host {hypervisor} has {host_nodes} "
            "nodes: the guest cannot place memory near its vCPUs.",
            "虚拟机只看到一个 NUMA 节点（{cpus} 个 CPU），而宿主机 {hypervisor} 有 {host_nodes} 个节点：虚拟"
            "机无法把内存放在其 vCPU 附近。",
        ),
    },
)
def guest_numa_missing(ctx: RuleContext) -> Iterator[RuleFinding]:
    yield from _guest_numa_missing_in_xml(ctx)
    yield from _guest_numa_missing_inside(ctx)


def _guest_numa_missing_in_xml(ctx: RuleContext) -> Iterator[RuleFinding]:
    """Guests whose domain XML has no NUMA cells (or one cell spanning a guest
    larger than a host node)."""
    for host, d in _domains(ctx):
        one_cell = _single_spanning_cell(d)
        if (d.numa_cells and not one_cell) or _says_nothing_of(
            d, bool(d.numa_cells), "kvm.guest_numa_missing"
        ):
            continue
        n = domain_vcpus(d)
        layout = _flat_layout(host, d, n, one_cell)
        if layout is None:
            continue
        reasons, phrase = layout
        yield finding(
            "kvm.guest_numa_missing",
            host,
            values={"guest": domain_label(d), "vcpus": n, "layout": phrase},
            evidence=reasons,
            past=n / VNUMA_GUEST_VCPUS,
        )


def _smallest_node(host: HostFacts) -> tuple[int | None, int | None]:
    """The CPUs and the memory (KiB) of the host's smallest NUMA node (None: not known)."""
    cpus = node_cpu_counts(host).values()
    mem_kb = node_mem_totals_kb(host).values()
    return min(cpus, default=None), min(mem_kb, default=None)


def _above(value: int | None, limit: int | None) -> bool:
    """Both known, and ``value`` beyond ``limit``."""
    return value is not None and limit is not None and value > limit


def _larger_than_a_node(host: HostFacts, d: Domain, n: int) -> list[Evidence]:
    """Evidence that the guest has more vCPUs or memory than the host's smallest node."""
    node_cpus, node_mem = _smallest_node(host)
    mem = d.current_memory_kb or d.memory_kb
    larger = []
    if _above(n, node_cpus):
        larger.append(evidence(host, "cpus_per_host_node", node_cpus, host.numa or host.cpu))
    if _above(mem, node_mem):
        larger.append(_dom_ev(host, d, "memory_kb", mem, "memory"))
    return larger


def _flat_layout(host: HostFacts, d: Domain, n: int, one_cell: bool) -> tuple[list[Evidence], Phrase] | None:
    """The evidence and the layout phrase of a guest that should see NUMA; None
    when its layout is right for its size."""
    larger = _larger_than_a_node(host, d, n)
    if one_cell:
        # one cell is the right layout for a guest that fits a host node (seed 000's
        # fix: one cell, pinned to node 1); it is flat only once the guest outgrows one
        if not larger:
            return None
        cell_cpus = len(set(d.numa_cells[0].cpus))
        reasons = [_dom_ev(host, d, "vcpus", n, "vcpu"), *larger]
        reasons.append(_dom_ev(host, d, "numa_cells[0].cpus", cell_cpus, "cpu", "numa"))
        return reasons, Phrase("single_cell", {"vcpus": n})
    reasons = [_dom_ev(host, d, "vcpus", n, "vcpu")] if n >= VNUMA_GUEST_VCPUS else []
    reasons.extend(larger)
    if not reasons:
        return None
    reasons.append(_dom_ev(host, d, "numa_cells", 0, "cpu", "numa"))
    return reasons, Phrase("no_cells")


def _guest_numa_missing_inside(ctx: RuleContext) -> Iterator[RuleFinding]:
    """Guests that see one NUMA node from inside (lscpu) on a multi-node hypervisor."""
    for guest in ctx.guests():
        cpu = guest.cpu
        hv = _hypervisor_hiding_numa(ctx, guest)
        if cpu is None or hv is None:
            continue
        cpus = guest.logical_cpus() or 0
        yield finding(
            "kvm.guest_numa_missing",
            guest,
            "guest_view",
            values={"cpus": cpus, "hypervisor": host_name(hv), "host_nodes": hv.numa_node_count()},
            evidence=[
                evidence(guest, "cpu.numa_nodes", 1, cpu, "numa_nodes", "NUMA node(s)"),
                evidence(guest, "cpu.cpus", cpus, cpu, "cpus", "CPU(s)"),
                evidence(hv, "numa_nodes", hv.numa_node_count(), hv.numa or hv.cpu, "available"),
            ],
        )


def _hypervisor_hiding_numa(ctx: RuleContext, guest: HostFacts) -> HostFacts | None:
    """The multi-node hypervisor of a guest that sees one NUMA node (lscpu, its
    XML not judging) although it is large enough to be shown cells; else None."""
    if guest.numa_node_count() != 1 or _flat_in_its_xml(ctx, guest):
        return None
    hv = _multinode_hypervisor(ctx, guest)
    if hv is None or not _should_see_numa(guest, hv, guest.logical_cpus() or 0):
        return None
    return hv


def _flat_in_its_xml(ctx: RuleContext, guest: HostFacts) -> bool:
    """The guest's domain XML has no NUMA cells or one spanning cell: judged from the XML."""
    domain = domain_of_guest(ctx, guest)
    return domain is not None and (not domain.numa_cells or _single_spanning_cell(domain))


def _multinode_hypervisor(ctx: RuleContext, guest: HostFacts) -> HostFacts | None:
    """The guest's host when the snapshot names it and it has two NUMA nodes or more."""
    hv = host_of_guest(ctx, guest)
    return hv if hv is not None and is_multinode(hv) else None


def _should_see_numa(guest: HostFacts, hv: HostFacts, cpus: int) -> bool:
    """A guest of ``cpus`` CPUs large enough to be shown NUMA cells."""
    return cpus >= VNUMA_GUEST_VCPUS or _guest_larger_than_a_node(guest, hv, cpus)


def _guest_larger_than_a_node(guest: HostFacts, hv: HostFacts, cpus: int) -> bool:
    """The guest (its lscpu and MemTotal) has more CPUs or memory than the host's smallest node."""
    node_cpus, node_mem = _smallest_node(hv)
    guest_mem = guest.meminfo.values.get("MemTotal") if guest.meminfo else None
    return _above(cpus, node_cpus) or _above(guest_mem, node_mem)


@rule(
    "kvm.memory_not_bound",
    severity="warning",
    title="Guest memory is not bound to host nodes",
    title_zh="虚拟机内存未绑定宿主机节点",
    condition=f"no <numatune> memory or memnode on a pinned guest or one with >= {LARGE_GUEST_VCPUS} vCPUs",
    condition_zh=f"已绑核或 vCPU 数 >= {LARGE_GUEST_VCPUS} 的虚拟机没有 <numatune> memory 或 memnode",
    requires=DOMAIN_FACTS,
    measures=("numatune-memory-binding",),
    seeds=("zstack-mariadb-v2v",),
    thresholds={"min_vcpus": LARGE_GUEST_VCPUS},
    rationale=(
        "Without numatune the memory of a pinned or >= 8 vCPU guest lands wherever the faulting vCPU ran; "
        "once vCPUs are pinned this is the only thing keeping memory local."
    ),
    rationale_zh=(
        "没有 numatune 时，已绑核或 >= 8 个 vCPU 的虚拟机的内存落在触发缺页的 vCPU 当时运行的节点上；vCPU 绑"
        "定之后，这是唯一能让内存保持本地的手段。"
    ),
    relevant=kvm_host_needs_domains,
    explanation=(
        "Guest {guest} has no numatune: its memory is allocated wherever the faulting vCPU happened to run, "
        "so it ends up spread over all host nodes regardless of where the vCPUs are pinned."
    ),
    explanation_zh=(
        "虚拟机 {guest} 没有 numatune：内存分配在触发缺页的 vCPU 当时所在的节点上，最终分散在宿主机所有节点，"
        "与 vCPU 绑定在哪里无关。"
    ),
)
def memory_not_bound(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        if (
            not _large_or_pinned(d)
            or domain_memory_bound(d)
            or _says_nothing_of(d, False, "kvm.memory_not_bound")
        ):
            continue
        yield finding(
            "kvm.memory_not_bound",
            host,
            values={"guest": domain_label(d)},
            evidence=[_dom_ev(host, d, "numatune", None, "numatune")],
        )


@rule(
    "kvm.pinning_spans_nodes",
    severity="warning",
    title="vCPU pins and memory binding disagree with the host topology",
    title_zh="vCPU 绑定与内存绑定和宿主机拓扑不一致",
    condition=(
        "pinned vCPUs land on more host nodes than the guest has NUMA cells, or the numatune/memnode nodeset "
        "differs from the nodes of the pinned CPUs (needs the host's NUMA CPU lists)"
    ),
    condition_zh=(
        "已绑定的 vCPU 所在的宿主机节点多于虚拟机的 NUMA 单元数，或 numatune/memnode 的 nodeset 与所绑 CPU "
        "所在的节点不同（需要宿主机的 NUMA CPU 列表）"
    ),
    requires=("domains", "numa"),
    measures=("pin-vcpus", "guest-numa-topology", "numatune-memory-binding"),
    seeds=("zstack-mariadb-v2v",),
    rationale=(
        "Any pin on a node the guest's memory is not bound to makes that vCPU's accesses remote: a mismatch "
        "of one node is already the whole effect."
    ),
    rationale_zh=(
        "只要某个 vCPU 绑在虚拟机内存未绑定的节点上，它的访存就是远端访问：错开一个节点就已是全部影响。"
    ),
    relevant=_pinned_domains_need("numa"),
    explanations={
        "": (
            "Guest {guest} is pinned to CPUs of host node(s) {nodes} but its guest NUMA cells / memory "
            "binding ({binding}) do not match: vCPUs on one node use memory on another.",
            "虚拟机 {guest} 的 vCPU 绑定在宿主机节点 {nodes} 上，但虚拟 NUMA 节点或内存绑定（{binding}）与之"
            "不符：一个节点上的 vCPU 在使用另一个节点的内存。",
        ),
        "no_binding": ("none", "无"),
    },
)
def pinning_spans_nodes(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        if not d.vcpupin or cut_hides(d, "kvm.pinning_spans_nodes"):
            continue
        nodes = domain_host_nodes(d, host)
        if not nodes:
            continue
        bound = _memory_nodes(d)
        ev = [*_pins_outnumber_cells(host, d, nodes), *_memory_bound_elsewhere(host, d, nodes, bound)]
        if ev:
            yield finding(
                "kvm.pinning_spans_nodes",
                host,
                values={
                    "guest": domain_label(d),
                    "nodes": sorted(nodes),
                    "binding": sorted(bound) or Phrase("no_binding"),
                },
                evidence=ev,
            )


def _memory_nodes(d: Domain) -> set[int]:
    """The host nodes <numatune> binds the guest's memory to (<memory> and every <memnode>)."""
    bound = set(d.numatune_memory_nodeset or [])
    for memnode in d.memnodes.values():
        bound.update(memnode.get("nodeset") or [])
    return bound


def _pins_outnumber_cells(host: HostFacts, d: Domain, nodes: set[int]) -> list[Evidence]:
    """Evidence when the pinned vCPUs land on more host nodes than the guest has NUMA cells."""
    if len(nodes) <= max(len(d.numa_cells), 1):
        return []
    return [
        _dom_ev(host, d, "vcpupin_host_nodes", sorted(nodes), "cputune", "vcpupin"),
        _dom_ev(host, d, "numa_cells", len(d.numa_cells), "numa"),
    ]


def _memory_bound_elsewhere(host: HostFacts, d: Domain, nodes: set[int], bound: set[int]) -> list[Evidence]:
    """Evidence when <numatune> binds the memory to other nodes than those of the pinned CPUs."""
    if not bound or bound == nodes:
        return []
    return [
        _dom_ev(host, d, "numatune_nodeset", sorted(bound), "numatune"),
        _dom_ev(host, d, "vcpupin_host_nodes", sorted(nodes), "cputune", "vcpupin"),
    ]


@rule(
    "kvm.cpu_model_hides_cache",
    severity="warning",
    title="Guest CPU model hides the host's cache topology",
    title_zh="虚拟机 CPU 模型隐藏了宿主机缓存拓扑",
    condition=(
        "a domain's <cpu mode> is host-model or custom (or a KVM domain has no <cpu>, i.e. QEMU's default "
        "model), or "
        "a KVM guest's lscpu lists caches but no L3"
    ),
    condition_zh=(
        "域的 <cpu mode> 为 host-model 或 custom（或 KVM 域没有 <cpu>，即 QEMU 的默认型号），或 KVM 虚拟机的"
        " lscpu 列出了缓存但没有 L3"
    ),
    requires=("domains", "guest"),
    requires_mode="any",
    measures=("cpu-mode-host-passthrough",),
    seeds=("openstack-kvm-crm-cpu",),
    thresholds={"modes": list(HIDING_CPU_MODES)},
    rationale=(
        "host-model and custom CPU models drop the L3 description; the guest scheduler then migrates tasks "
        "across all vCPUs (seed 002: 70 % vs 10 % CPU). A yes/no property of the model."
    ),
    rationale_zh=(
        "host-model 和 custom CPU 型号去掉了 L3 的描述；虚拟机调度器随后会在所有 vCPU 之间迁移任务（奠基案例"
        " 002：CPU 70 % 对 10 %）。这是 CPU 型号的是/否属性。"
    ),
    relevant=_needs_domains_or_guest_cpu,
    explanations={
        "": (
            "Guest {guest} uses CPU mode {mode}: the guest gets a generic CPU model without the host's L3 "
            "cache description, so its scheduler treats every vCPU as cache-unrelated and migrates tasks "
            "freely, which shows up as high CPU usage for the same load.",
            "虚拟机 {guest} 使用 CPU 模式 {mode}：虚拟机得到一个通用 CPU 型号，看不到宿主机的 L3 缓存，调度器"
            "认为各 vCPU 之间不共享缓存而随意迁移任务，同样的负载下 CPU 使用率更高。",
        ),
        # the mode is libvirt's term, left untranslated
        "default_model": ("(none: QEMU default model)", "(none: QEMU default model)"),
        "guest_view": (
            "This KVM guest's lscpu shows no L3 cache: the virtual CPU model hides the host's cache "
            "topology, so the guest scheduler migrates tasks between vCPUs as if they shared nothing.",
            "此 KVM 虚拟机的 lscpu 中没有 L3 缓存：虚拟 CPU 模型隐藏了宿主机的缓存拓扑，虚拟机调度器会像 "
            "vCPU 之间不共享任何缓存一样随意迁移任务。",
        ),
    },
)
def cpu_model_hides_cache(ctx: RuleContext) -> Iterator[RuleFinding]:
    yield from _cpu_model_hides_cache_in_xml(ctx)
    yield from _cpu_model_hides_cache_inside(ctx)


def _model_hides_cache(d: Domain) -> bool:
    """<cpu mode> host-model or custom, or no <cpu> at all (QEMU's default model)."""
    return d.cpu_mode is None or d.cpu_mode in HIDING_CPU_MODES


def _default_model_outside_kvm(d: Domain) -> bool:
    """No <cpu> on a domain not of type kvm: TCG guests (type='qemu') are emulated anyway."""
    return d.cpu_mode is None and d.domain_type != "kvm"


def _cpu_model_hides_cache_in_xml(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        if (
            not _model_hides_cache(d)
            or _says_nothing_of(d, d.cpu_mode is not None, "kvm.cpu_model_hides_cache")
            or _default_model_outside_kvm(d)
        ):
            continue
        yield finding(
            "kvm.cpu_model_hides_cache",
            host,
            values={"guest": domain_label(d), "mode": d.cpu_mode or Phrase("default_model")},
            evidence=[_dom_ev(host, d, "cpu_mode", d.cpu_mode, "cpu")],
        )


def _kvm_caches_without_l3(cpu: CpuTopology) -> bool:
    """A KVM guest's lscpu that lists caches but no L3."""
    return (cpu.hypervisor_vendor or "").upper() == "KVM" and bool(cpu.caches) and not cpu.has_l3


def _seen_inside_only(
    ctx: RuleContext, inside: Callable[[CpuTopology], bool], in_xml: Callable[[Domain], bool]
) -> Iterator[tuple[HostFacts, CpuTopology]]:
    """Each guest whose own lscpu shows a problem (``inside``) that its domain
    XML does not show (``in_xml``: that one is reported from the XML), with
    its lscpu."""
    for guest in ctx.guests():
        cpu = guest.cpu
        if cpu is None or not inside(cpu):
            continue
        domain = domain_of_guest(ctx, guest)
        if domain is None or not in_xml(domain):
            yield guest, cpu


def _cpu_model_hides_cache_inside(ctx: RuleContext) -> Iterator[RuleFinding]:
    for guest, cpu in _seen_inside_only(ctx, _kvm_caches_without_l3, _model_hides_cache):
        yield finding(
            "kvm.cpu_model_hides_cache",
            guest,
            "guest_view",
            values={},
            evidence=[evidence(guest, "cpu.caches", dict(cpu.caches), cpu, "caches", "L2 cache")],
        )


@rule(
    "kvm.flat_socket_topology",
    severity="warning",
    title="Guest CPUs are N sockets x 1 core",
    title_zh="虚拟机 CPU 拓扑为 N 路单核",
    condition=(
        f"a domain with >= {FLAT_TOPOLOGY_MIN_VCPUS} vCPUs whose <topology> is sockets=N cores=1 threads=1 "
        "(or "
        "has no <topology>, which QEMU presents the same way), or a guest's lscpu showing such a topology"
    ),
    condition_zh=(
        f"vCPU 数 >= {FLAT_TOPOLOGY_MIN_VCPUS} 的域，其 <topology> 为 sockets=N cores=1 threads=1（或没有 "
        "<topology>，QEMU 以同样方式呈现），或虚拟机的 lscpu 显示这种拓扑"
    ),
    requires=("domains", "guest"),
    requires_mode="any",
    measures=("flavor-numa-topology", "guest-numa-topology"),
    seeds=("openstack-kvm-crm-cpu",),
    thresholds={"min_vcpus": FLAT_TOPOLOGY_MIN_VCPUS},
    rationale=(
        "From 4 vCPUs the guest sees N unrelated packages: no shared cache, and per-socket licensed or "
        "NUMA-aware software sizes itself wrongly; 2 sockets x 1 core is a harmless small VM."
    ),
    rationale_zh=(
        "从 4 个 vCPU 起，虚拟机看到 N 个互不相关的封装：没有共享缓存，按插槽授权或感知 NUMA 的软件会按错误"
        "的规模配置自己；2 路 x 1 核是无害的小虚拟机。"
    ),
    relevant=_needs_domains_or_guest_cpu,
    explanations={
        "": (
            "Guest {guest} presents its {vcpus} vCPUs as {sockets} single-core sockets. The guest believes "
            "no two vCPUs share a cache or a package, and per-socket licensed or NUMA-aware software sizes "
            "itself wrongly.",
            "虚拟机 {guest} 把 {vcpus} 个 vCPU 呈现为 {sockets} 个单核插槽。虚拟机认为任意两个 vCPU 都不共享"
            "缓存或封装，按插槽授权或感知 NUMA 的软件会按错误的规模配置自己。",
        ),
        "guest_view": (
            "The guest's lscpu shows {sockets} sockets x 1 core: the virtual topology does not resemble the "
            "host and hides shared caches from the guest scheduler.",
            "虚拟机 lscpu 显示 {sockets} 路 x 1 核：虚拟拓扑与宿主机不符，向虚拟机调度器隐藏了共享缓存。",
        ),
    },
)
def flat_socket_topology(ctx: RuleContext) -> Iterator[RuleFinding]:
    yield from _flat_topology_in_xml(ctx)
    yield from _flat_topology_inside(ctx)


def _xml_shows_flat_topology(d: Domain) -> bool:
    """A domain with enough vCPUs whose XML shows them as single-core sockets."""
    return (
        (d.vcpus or 0) >= FLAT_TOPOLOGY_MIN_VCPUS
        and not _says_nothing_of(d, bool(d.topology), "kvm.flat_socket_topology")
        and _flat_in_xml(d.topology)
    )


def _flat_topology_in_xml(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, d in _domains(ctx):
        if not _xml_shows_flat_topology(d):
            continue
        n = d.vcpus or 0
        t = d.topology
        yield finding(
            "kvm.flat_socket_topology",
            host,
            values={"guest": domain_label(d), "vcpus": n, "sockets": t.get("sockets", n)},
            evidence=[_dom_ev(host, d, "topology", dict(t) or None, "topology", "cpu")],
        )


def _flat_topology_inside(ctx: RuleContext) -> Iterator[RuleFinding]:
    for guest, cpu in _seen_inside_only(ctx, _flat_inside, _xml_shows_flat_topology):
        yield finding(
            "kvm.flat_socket_topology",
            guest,
            "guest_view",
            values={"sockets": cpu.sockets},
            evidence=[
                evidence(guest, "cpu.sockets", cpu.sockets, cpu, "sockets", "Socket(s)"),
                evidence(guest, "cpu.cores_per_socket", cpu.cores_per_socket, cpu, "cores_per_socket"),
            ],
        )


def _flat_in_xml(t: dict[str, int]) -> bool:
    """No <topology> (one socket per vCPU), or several sockets of one core and one thread each."""
    return (t.get("sockets", 0) >= 2 and t.get("cores", 1) == 1 and t.get("threads", 1) == 1) if t else True


def _flat_inside(cpu: CpuTopology) -> bool:
    """A guest's lscpu: a hypervisor, many sockets of one core and one thread each."""
    return bool(
        cpu.hypervisor_vendor
        and cpu.sockets
        and cpu.sockets >= FLAT_TOPOLOGY_MIN_VCPUS
        and (cpu.cores_per_socket or 0) == 1
        and (cpu.threads_per_core or 0) == 1
    )


def _process_samples(host: HostFacts) -> int:
    """How many samples the process list holds: ``top -bn3`` lists every process
    once per iteration (``top -bn1``: one instant, not a trend)."""
    return max(Counter(p.pid for p in _top_processes(host)).values(), default=0)


def _top_processes(host: HostFacts) -> list[ProcessInfo]:
    """top's process list, every sample of it (none without one)."""
    return host.cpu_usage.processes if host.cpu_usage else []


def _mean_cpu_per_process(host: HostFacts) -> Iterator[tuple[ProcessInfo, float]]:
    """Each process of top's list once: its last sample and its mean %CPU over the samples."""
    by_pid: dict[int, list[ProcessInfo]] = defaultdict(list)
    for p in _top_processes(host):
        by_pid[p.pid].append(p)
    for samples in by_pid.values():
        yield samples[-1], sum(p.cpu_pct or 0 for p in samples) / len(samples)


def _is_other_load(command: str, d: Domain) -> bool:
    """Not guest ``d``'s own QEMU, not another QEMU (counted as guests), not a
    command that collected the snapshot."""
    return (
        not (d.name and d.name in command)
        and not is_qemu_process(command)
        and not is_collector_process(command)
    )


def _other_load(host: HostFacts, d: Domain) -> list[ProcessInfo]:
    """Processes of ``host`` whose mean %CPU over the samples is above the busy
    threshold and that are other load for guest ``d``. One entry per process
    (its last sample, with the mean)."""
    return [
        replace(last, cpu_pct=round(mean, 1))
        for last, mean in _mean_cpu_per_process(host)
        if mean >= BUSY_PROCESS_CPU_PCT and _is_other_load(last.command, d)
    ]


@rule(
    "kvm.host_contention",
    severity="warning",
    title="Other guests or processes share the guest's host CPUs",
    title_zh="其他虚拟机或进程与该虚拟机共享宿主机 CPU",
    condition=(
        "on a host with a guest of interest (a domain XML): other running domains (virsh list, other domain "
        "XMLs) that are not provably pinned to CPUs disjoint from the guest's, or host processes above "
        f"{BUSY_PROCESS_CPU_PCT:.0f}% CPU in top; without any XML, a virsh list with 2+ running domains"
    ),
    condition_zh=(
        "在有目标虚拟机（有域 XML）的宿主机上：其他运行中的域（virsh list、其他域 XML）未被证明绑定在与该虚"
        f"拟机不相交的 CPU 上，或 top 中有 CPU 占用高于 {BUSY_PROCESS_CPU_PCT:.0f}% 的宿主机进程；没有任何 "
        "XML 时，virsh list 中有 2 个及以上运行中的域"
    ),
    requires=("domains", "virsh_list"),
    requires_mode="any",
    measures=("isolate-host-cpus", "rebalance-host-load", "pin-vcpus"),
    seeds=("zstack-mariadb-v2v",),
    thresholds={"busy_process_cpu_pct": BUSY_PROCESS_CPU_PCT},
    rationale=(
        "Other running guests that are not pinned away from the guest share its CPUs (warning). A host "
        "process above half a CPU is load, but a single top sample is one instant (info until a second "
        "sample or mpstat/sar confirms it); the collecting commands (top, ps, sos, collect.sh, the mysql "
        "client, virsh, numastat ...) and QEMU's own threads are not other load. past = busiest process / "
        "50 %."
    ),
    rationale_zh=(
        "未被绑离该虚拟机 CPU 的其他运行中虚拟机与它共享 CPU（警告）。超过半个 CPU 的宿主机进程是负载，但单"
        "次 top 采样只是一个瞬间（在第二次采样或 mpstat/sar 确认之前为提示）；采集用的命令（top、ps、sos、"
        "collect.sh、mysql 客户端、virsh、numastat ……）和 QEMU 自身的线程不算其他负载。past = 最繁忙进程 / "
        "50 %。"
    ),
    relevant=kvm_host_needs_domains,
    explanations={
        "": (
            "Guest {guest} shares the CPUs of {host} with {others} other running guest(s) and {procs} busy "
            "process(es){sample}. Their load shifts from node to node and makes the guest's performance "
            "depend on what its neighbours do.",
            "虚拟机 {guest} 与宿主机 {host} 上另外 {others} 台运行中的虚拟机和 {procs} 个繁忙进程共享 "
            "CPU{sample}。邻居的负载在节点间变化，使该虚拟机的性能取决于邻居的行为。",
        ),
        "one_sample": (
            " (one top sample: confirm with a few more before acting)",
            "（仅一次 top 采样：请多采样几次确认）",
        ),
        "running_guests": (
            "{guests} guests run on {host} without isolation from each other.",
            "{host} 上运行着 {guests} 台虚拟机，彼此之间没有隔离。",
        ),
    },
)
def host_contention(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        yield from _guests_sharing_cpus(host, host_domains(host))  # (no XML: the virsh list decides)


def _running_guests_without_xml(host: HostFacts) -> Iterator[RuleFinding]:
    """Without any domain XML, a virsh list with two or more running guests."""
    running = running_domain_names(host)
    if len(running) >= 2:
        yield finding(
            "kvm.host_contention",
            host,
            "running_guests",
            values={"guests": len(running)},
            evidence=[evidence(host, "virsh_list.running", running, host.virsh_list)],
        )


def _guests_sharing_cpus(host: HostFacts, domains: list[Domain]) -> Iterator[RuleFinding]:
    """Each guest of a domain XML that shares its CPUs with other running guests
    or busy processes. A guest known from its QEMU command line only is not
    judged (its pinning is not on the command line), but it counts as another
    guest that may share a judged guest's CPUs; with no other guest to judge,
    the virsh list decides as if no XML were there."""
    judged = [d for d in domains if not cut_hides(d, "kvm.host_contention")]
    if not judged:
        yield from _running_guests_without_xml(host)
        return
    sharing = CpuSharing(domains, running=running_domain_names(host), listed=host.virsh_list is not None)
    for d in judged:
        n_others, others = _other_guests_named(sharing, d)
        procs = _other_load(host, d)
        if n_others or procs:
            yield _contention_finding(host, d, n_others, others, procs)


def _contention_finding(
    host: HostFacts, d: Domain, n_others: int, others: list[str], procs: list[ProcessInfo]
) -> RuleFinding:
    """kvm.host_contention for guest ``d``: ``n_others`` other guests (named
    ``others``) and the busy processes ``procs`` share its CPUs."""
    severity = _contention_severity(host, n_others)
    busiest = max((p.cpu_pct or 0 for p in procs), default=0.0)
    return finding(
        "kvm.host_contention",
        host,
        values={
            "guest": domain_label(d),
            "others": n_others,
            "procs": len(procs),
            "sample": Phrase("one_sample") if severity == "info" else "",
        },
        evidence=_contention_evidence(host, d, others, procs),
        severity=severity,
        past=max(n_others, busiest / BUSY_PROCESS_CPU_PCT, 1.0),
    )


def _other_guests_named(sharing: CpuSharing, d: Domain) -> tuple[int, list[str]]:
    """How many other running guests share ``d``'s CPUs, and their names (the
    ones not named counted as ``(+N more)``)."""
    n_others, others = sharing.others(d)
    if n_others > len(others):
        others = [*others, f"(+{n_others - len(others)} more)"]
    return n_others, others


def _contention_severity(host: HostFacts, n_others: int) -> str:
    """One top sample is one instant: busy processes alone are worth a look
    (info), not a verdict; other running guests are there all the time (warning)."""
    return "warning" if n_others or _process_samples(host) >= 2 else "info"


def _contention_evidence(
    host: HostFacts, d: Domain, others: list[str], procs: list[ProcessInfo]
) -> list[Evidence]:
    """The other running guests, then the first five busy processes."""
    ev = [evidence(host, "virsh_list.running", others, host.virsh_list or d)] if others else []
    ev += [
        evidence(host, f"cpu_usage.processes[{p.pid}].cpu_pct", p.cpu_pct, host.cpu_usage, line=p.line)
        for p in procs[:5]
    ]
    return ev


@rule(
    "kvm.no_cpu_isolation",
    severity="info",
    title="Pinned guests run on CPUs the host does not isolate",
    title_zh="已绑核的虚拟机所用 CPU 未在宿主机上隔离",
    condition=(
        "a host with pinned domains whose kernel command line lacks isolcpus/nohz_full covering the pinned "
        "CPUs"
    ),
    condition_zh="宿主机上有已绑核的域，但其内核命令行中没有覆盖所绑 CPU 的 isolcpus/nohz_full",
    requires=("domains", "cmdline"),
    measures=("isolate-host-cpus",),
    seeds=("zstack-mariadb-v2v",),
    rationale=(
        "Pinned guests share their CPUs with host kthreads and interrupts unless those are isolated; the "
        "cost is jitter rather than throughput, so it is advice (info)."
    ),
    rationale_zh=(
        "除非加以隔离，已绑核的虚拟机会与宿主机内核线程和中断共享 CPU；代价是抖动而非吞吐量，因此只作建议（"
        "提示）。"
    ),
    relevant=_pinned_domains_need("cmdline"),
    explanations={
        "": (
            "vCPUs are pinned to host CPUs {cpus}, but the host kernel still schedules its own threads, "
            "kworkers and interrupts there. Isolating those CPUs gives the pinned guests the CPUs to "
            "themselves.",
            "vCPU 绑定在宿主机 CPU {cpus} 上，但宿主机内核仍会在这些 CPU 上调度自身线程、kworker 和中断。隔离"
            "这些 CPU 可以让已绑核的虚拟机独占它们。",
        ),
        # the Chinese sentence names the CPUs only
        "cpus_on_nodes": ("{cpus} (node {nodes})", "{cpus}"),
    },
)
def no_cpu_isolation(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        domains = host_domains(host)
        if not host.cmdline or not domains:
            continue
        uncovered = sorted(_vcpupin_cpus(domains) - _isolated_cpus(host.cmdline))
        if not uncovered:
            continue
        yield finding(
            "kvm.no_cpu_isolation",
            host,
            values={"cpus": _cpus_and_nodes(host, uncovered)},
            evidence=[
                evidence(host, "cmdline.isolcpus", host.cmdline.params.get("isolcpus"), host.cmdline),
                evidence(host, "domains.pinned_cpus", format_cpulist(uncovered), domains[0]),
            ],
        )


def _vcpupin_cpus(domains: list[Domain]) -> set[int]:
    """The host CPUs the guests' <vcpupin>s name."""
    return {cpu for d in domains if d.vcpupin for cpu in domain_pinned_cpus(d)}


def _isolated_cpus(cmdline: KernelCmdline) -> set[int]:
    """The CPUs the kernel command line keeps from the scheduler (isolcpus) or the tick (nohz_full)."""
    return set(cmdline.cpulist("isolcpus")) | set(cmdline.cpulist("nohz_full"))


def _cpus_and_nodes(host: HostFacts, cpus: list[int]) -> str | Phrase:
    """The CPU list, with the host nodes it lies on when the host's NUMA map is known."""
    cpu_map = cpu_node_map(host)
    nodes = sorted({cpu_map[c] for c in cpus if c in cpu_map})
    if not nodes:
        return format_cpulist(cpus)
    return Phrase("cpus_on_nodes", {"cpus": format_cpulist(cpus), "nodes": nodes})

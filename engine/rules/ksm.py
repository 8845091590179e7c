"""Kernel same-page merging (KSM) on a hypervisor."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.host_tuning import is_hypervisor
from collectors.facts import HostFacts, KsmState
from engine.rules import Evidence, Phrase, RuleContext, RuleFinding, evidence, finding, rule

PAGE_KB = 4


def _ksm_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return ("ksm",) if host.ksm is not None or is_hypervisor(host) else ()


@rule(
    "kvm.ksm_active",
    severity="warning",
    title="Kernel same-page merging is merging memory on a hypervisor",
    title_zh="宿主机上内核同页合并（KSM）正在合并内存",
    condition=(
        "/sys/kernel/mm/ksm: run = 1 and pages_sharing > 0 (ksmd is scanning and has merged pages: QEMU "
        "marks guest memory mergeable); warning on a host that runs guests (domains, virsh, QEMU "
        "processes), info where the snapshot shows none; the explanation says when merge_across_nodes = 1 "
        "on a multi-node host"
    ),
    condition_zh=(
        "/sys/kernel/mm/ksm：run = 1 且 pages_sharing > 0（ksmd 正在扫描并已合并页面：QEMU 会把云主机内存"
        "标记为可合并）；运行云主机的主机（domain、virsh、QE"
        "MU 进程）为 warning，快照中看不到云主机时为 info；"
        "多节点主机上 merge_across_nodes = 1 时在说明中指出"
    ),
    requires=("ksm",),
    relevant=_ksm_relevant,
    measures=("disable-ksm",),
    thresholds={"run": 1, "pages_sharing_above": 0},
    rationale=(
        "A yes/no condition: ksmd costs host CPU while it scans, every write to a merged page takes a "
        "copy-on-write fault in the guest, and the memory it saved comes back at once when the guests "
        "diverge, which is how CERN's batch hypervisors swapped with 2 GB left to the host (KSM off was "
        "one of their optimisations). Red Hat's virtualization tuning guide (9.4), tuned's "
        "realtime-virtual-host, risu's ksm-disabled-on-nfv and SAP's check 2400 all want it off for "
        "latency-sensitive guests; with merge_across_nodes = 1 a merged page serves guests on both nodes "
        "from one, so half of them read it remotely. Info when no guest is in sight: the merged pages "
        "then belong to some other process that asked for merging."
    ),
    rationale_zh=(
        "是/否条件：ksmd 扫描时消耗宿主机 CPU，云主机每次写入被合并的页都会触发写时复制缺页，而云主机内容一旦"
        "分化，省下的内存会一下子全部要回来，CERN 的批处理宿主机在给系统留了 2 GB 的情况下仍然换页就是这样"
        "（关闭 KSM 是他们的优化之一）。Red Hat 虚拟化调优指南（9.4）、tuned 的 realtime-virtual-host、risu "
        "的 ksm-disabled-on-nfv 和 SAP 的 2400 检查都要求对延迟敏感的云主机关闭它；merge_across_nodes = 1 时"
        "一个被合并的页同时服务两个节点上的云主机，其中一半要跨节点读取。看不到云主机时为 info：被合并的页属"
        "于其他请求合并的进程。"
    ),
    peer=(
        "RH virtualization tuning guide 9.4 (NUMA-aware KSM); tuned realtime-virtual-host (ksm run=2); "
        "risu `openstack/ksm-disabled-on-nfv`; SAP arp142 `2400`"
    ),
    explanations={
        "guests": (
            "{host} runs guests and KSM is merging their memory: run = 1, {sharing:,} page references "
            "share {shared:,} pages (about {saved_mb:,.0f} MB saved){across}. ksmd scans on the host's "
            "CPUs, every guest write to a merged page is a copy-on-write fault, and the saved memory is "
            "needed back at once when the guests' pages diverge.",
            "{host} 运行着云主机，KSM 正在合并它们的内存：run = 1，{sharing:,} 个页引用共享 {shared:,} 个页"
            "（约省下 {saved_mb:,.0f} MB）{across}。ksmd 在宿主机的 CPU 上扫描，云主机每次写入被合并的页都是"
            "一次写时复制缺页，而云主机的页面一旦分化，省下的内存会一下子全部要回来。",
        ),
        "no_guests": (
            "{host}: KSM is merging memory: run = 1, {sharing:,} page references share {shared:,} pages "
            "(about {saved_mb:,.0f} MB saved){across}. No guest is in the snapshot; QEMU marks guest memory "
            "mergeable, so check what runs there.",
            "{host}：KSM 正在合并内存：run = 1，{sharing:,} 个页引用共享 {shared:,} 个页（约省下 "
            "{saved_mb:,.0f} MB）{across}。快照中没"
            "有云主机；QEMU 会把云主机内存标记为可合并，请确认那里运行着"
            "什么。",
        ),
        "across": (
            ", merging across the {nodes} NUMA nodes (merge_across_nodes = 1): a merged page is remote for "
            "the guests of the other nodes",
            "，并且跨 {nodes} 个 NUMA 节点合并（merge_ac"
            "ross_nodes = 1）：对其他节点上的云主机来说，被合并的页"
            "是远端内存",
        ),
        "within": (", merge_across_nodes = {value}", "，merge_across_nodes = {value}"),
    },
)
def ksm_active(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        ksm = host.ksm
        if ksm is None or ksm.values.get("run") != 1:
            continue
        sharing = ksm.values.get("pages_sharing", 0)
        if sharing <= 0:
            continue
        nodes = host.numa_node_count() or 0
        across = ksm.values.get("merge_across_nodes") == 1 and nodes >= 2
        template, severity = ("guests", "warning") if is_hypervisor(host) else ("no_guests", "info")
        yield finding(
            "kvm.ksm_active",
            host,
            template,
            values={
                "sharing": sharing,
                "shared": ksm.values.get("pages_shared", 0),
                "saved_mb": sharing * PAGE_KB / 1024,
                "across": _merging(ksm, nodes, across),
            },
            evidence=_ksm_evidence(host, ksm, sharing, across=across),
            severity=severity,
        )


def _ksm_evidence(host: HostFacts, ksm: KsmState, sharing: int, *, across: bool) -> list[Evidence]:
    """The evidence of KSM running and sharing pages, then of its merging across nodes when it does."""
    ev = [
        evidence(host, "ksm.run", 1, ksm, "ksm.run"),
        evidence(host, "ksm.pages_sharing", sharing, ksm, "ksm.pages_sharing"),
    ]
    if across:
        ev.append(evidence(host, "ksm.merge_across_nodes", 1, ksm, "ksm.merge_across_nodes"))
    return ev


def _merging(ksm: KsmState, nodes: int, across: bool) -> Phrase:
    """The rule's phrase for where KSM merges pages: across the host's nodes, or within each."""
    if across:
        return Phrase("across", {"nodes": nodes})
    return Phrase("within", {"value": ksm.values.get("merge_across_nodes", "?")})

"""Memory reclaim and compaction stalls seen in ``/proc/vmstat``."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.host_tuning import counter_sum
from collectors.facts import HostFacts, ProcVmstat
from engine.rules import Evidence, Phrase, RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import tuning_checks

ALLOCSTALL_MIN = 10_000
DIRECT_SCAN_SHARE = 0.10
COMPACT_STALL_MIN = 10_000


def _reclaim_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return tuning_checks(host, "proc_vmstat", host.proc_vmstat is not None)


@rule(
    "memory.direct_reclaim_stalls",
    severity="warning",
    title="Allocations stall in direct reclaim or compaction",
    title_zh="内存分配卡在直接回收或内存规整中",
    condition=(
        f"/proc/vmstat: >= {ALLOCSTALL_MIN} direct-reclaim e"
        f"ntries since boot (allocstall, summed over zones) "
        f"with direct reclaim doing >= {DIRECT_SCAN_SHARE:.0%} of the page scans (pgscan_direct against "
        f"pgscan_kswapd; not known: the count alone), or >= {COMPACT_STALL_MIN} compaction stalls "
        "(compact_stall)"
    ),
    condition_zh=(
        f"/proc/vmstat：开机以来进入直接回收 >= {ALLOCSTALL_MIN} 次（allocstall，各 zone 相加），且直接回收"
        f"承担了 >= {DIRECT_SCAN_SHARE:.0%} 的页扫描（pgscan_direct 对 pgscan_kswapd；未知时只看次数）；或"
        f"内存规整停顿 >= {COMPACT_STALL_MIN} 次（compact_stall）"
    ),
    requires=("proc_vmstat",),
    relevant=_reclaim_relevant,
    measures=("watermark-scale-factor", "thp-defrag-never"),
    thresholds={
        "allocstall_min": ALLOCSTALL_MIN,
        "direct_scan_share": DIRECT_SCAN_SHARE,
        "compact_stall_min": COMPACT_STALL_MIN,
    },
    rationale=(
        "Every allocstall is a thread that stopped to reclaim memory itself because kswapd had not kept the "
        "free pages above the low watermark; every compact_stall is a thread that stopped to defragment "
        "memory for a huge or high-order page. A healthy host shows none (this machine: 0); the upstream "
        "commit that made the watermarks scale with memory (795ae7a0de6b) names a high allocstall rate as "
        "the sign that kswapd's buffer is too small, and the collectd report (Linux 4.2.3) shows 3.3 million "
        "reclaim and 6.6 million compaction stalls on a host where 99.9 % of compactions failed. The "
        "counters run since boot, so 10,000 keeps the odd stall of a long uptime quiet; a tenth of the "
        "scanning done by the allocating threads themselves is reclaim that kswapd no longer hides. "
        "past = count / 10,000."
    ),
    rationale_zh=(
        "每一次 allocstall 都是一个线程因为 kswapd 没"
        "能把空闲页保持在 low 水位以上而停下来自己回收内存；每一次 "
        "compact_stall 都是一个线程为了大页或高阶页停下来整理内存。健康主机上两者都是 0（本机：0）；让水位随"
        "内存大小缩放的上游提交（795ae7a0de6b）把 allocstall 的高频率作为 kswapd 缓冲过小的信号，collectd 的"
        "报告（Linux 4.2.3）中一台主机有 330 万次回收停顿和 660 万次规整停顿，其中 99.9 % 的规整失败。计数从"
        "开机起累计，所以 10,000 次可以让长时间运行中偶尔的停顿不被报告；分配线程自己完成十分之一的扫描，说明"
        "回收已不再由 kswapd 在后台完成。past = 次数 / 10,000。"
    ),
    peer=(
        "none as a check (sar -B %vmeff, Datadog system.mem.allocstall and PCP mem.vmstat only collect the "
        "counters); upstream commit 795ae7a0de6b names allocstall as the signal"
    ),
    explanations={
        "reclaim": (
            "{host}: {stalls:,} allocations stalled in direct reclaim since boot{share}. Threads that "
            "allocate memory (a query, a guest's vCPU) stop and reclaim pages themselves because kswapd "
            "does not keep enough free memory ahead of the bursts.",
            "{host}：开机以来有 {stalls:,} 次内存分配卡在直接回收中{share}。分配内存的线程（一条查询、一个"
            "云主机的 vCPU）因为 kswapd 没能在突发之前保留足够的空闲内存，只能停下来自己回收页面。",
        ),
        "share": (
            ", and they did {pct:.0f}% of the page scanning",
            "，并且承担了 {pct:.0f}% 的页扫描",
        ),
        "no_share": (
            " (the page-scan counters were not in the output)",
            "（输出中没有页扫描计数）",
        ),
        "compaction": (
            "{host}: {stalls:,} allocations stalled in memory compaction since boot ({failed:.0f}% of them "
            "failed). Each waits while the kernel moves pages to build a huge or high-order page: with "
            "transparent huge pages set to defragment on fault, page faults of the database or the guests "
            "wait on it.",
            "{host}：开机以来有 {stalls:,} 次内存分配卡在内"
            "存规整中（其中 {failed:.0f}% 失败）。每次都要等内核"
            "搬动页面凑出大页或高阶页：透明大页设置为缺页时整理时，数据库或云主机的缺页都要等它。",
        ),
    },
)
def direct_reclaim_stalls(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        vm = host.proc_vmstat
        if vm is None:
            continue
        for stalled in (_reclaim_stalls(host, vm), _compaction_stalls(host, vm)):
            if stalled is not None:
                yield stalled


def _direct_scan_share(vm: ProcVmstat) -> float | None:
    """The share of scanned pages that allocating tasks scanned themselves
    (None: a counter is missing, or nothing was scanned)."""
    direct, kswapd = counter_sum(vm, "pgscan_direct"), counter_sum(vm, "pgscan_kswapd")
    scanned = (direct or 0) + (kswapd or 0)
    return direct / scanned if direct is not None and kswapd is not None and scanned else None


def _reclaim_stalls(host: HostFacts, vm: ProcVmstat) -> RuleFinding | None:
    """Allocations stalled in direct reclaim, when direct scanning is a real
    share of the scanning (or the share is unknown)."""
    stalls = counter_sum(vm, "allocstall")
    share = _direct_scan_share(vm)
    if stalls is None or stalls < ALLOCSTALL_MIN or (share is not None and share < DIRECT_SCAN_SHARE):
        return None
    part = Phrase("share", {"pct": share * 100}) if share is not None else Phrase("no_share")
    return finding(
        "memory.direct_reclaim_stalls",
        host,
        "reclaim",
        values={"stalls": stalls, "share": part},
        evidence=_stall_evidence(host, vm, stalls, share),
        past=stalls / ALLOCSTALL_MIN,
    )


def _stall_evidence(host: HostFacts, vm: ProcVmstat, stalls: int, share: float | None) -> list[Evidence]:
    """The evidence of the direct reclaim stalls (cited at the first allocstall
    counter), then of direct scanning's share when known."""
    key = next((k for k in vm.values if k.startswith("allocstall")), "allocstall")
    ev = [evidence(host, "proc_vmstat.allocstall", stalls, vm, f"{key}")]
    if share is not None:
        ev.append(evidence(host, "proc_vmstat.pgscan_direct_share", round(share, 3), vm, "pgscan_direct"))
    return ev


def _compaction_stalls(host: HostFacts, vm: ProcVmstat) -> RuleFinding | None:
    """Allocations stalled compacting memory for a large page."""
    compact, failed = vm.values.get("compact_stall"), vm.values.get("compact_fail")
    if compact is None or compact < COMPACT_STALL_MIN:
        return None
    return finding(
        "memory.direct_reclaim_stalls",
        host,
        "compaction",
        values={"stalls": compact, "failed": (failed or 0) / compact * 100},
        evidence=[evidence(host, "proc_vmstat.compact_stall", compact, vm, "compact_stall")],
        past=compact / COMPACT_STALL_MIN,
    )

"""Memory the host is short of: pages moving to and from swap now, and page
tables grown large by many processes mapping the same shared memory."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.facts import HostFacts, Meminfo, Vmstat, VmstatSample
from engine.rules import Evidence, Phrase, RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import stores_of

# memory.swap_activity: si + so of one vmstat interval (KiB/s, vmstat's unit)
SWAP_RATE_KB_S = 100
# ... in at least this share of the intervals (the since-boot first row left out)
SWAP_SUSTAINED_SHARE = 0.5
# the smallest unit vmstat -S prints (k: 1000 bytes; K is 1024, m 10^6, M 2^20), in KiB:
# figures of a table whose unit is not shown are at least this many KiB each
SMALLEST_SWAP_UNIT_KB = 1000 / 1024


def _swap_in_sight(host: HostFacts) -> bool:
    """The host has swap, or has used it: what makes its activity a question."""
    meminfo = host.meminfo.values if host.meminfo else {}
    counters = host.proc_vmstat.values if host.proc_vmstat else {}
    return bool(meminfo.get("SwapTotal") or counters.get("pswpout") or counters.get("pswpin"))


def swap_rate_known(host: HostFacts) -> bool:
    """vmstat's si/so decide the rule: their unit is known (the command line
    or the output says which ``-S`` it had), or every interval is 0, which is 0
    in any unit, or they move enough pages even read in the smallest unit
    ``-S`` can print (so in any unit).

    >>> from collectors.facts import Vmstat, VmstatSample
    >>> rows = [VmstatSample(si=185, so=263), VmstatSample(si=192, so=187)]  # no -S shown
    >>> swap_rate_known(HostFacts(vmstat=Vmstat(samples=rows)))
    True
    >>> swap_rate_known(HostFacts(vmstat=Vmstat(samples=[rows[0], VmstatSample(si=40, so=50)])))
    False
    """
    vm: Vmstat | None = host.vmstat
    if vm is None:
        return False
    if vm.swap_unit_kb is not None or all(not s.si and not s.so for s in vm.interval_samples):
        return True
    return len(vm.samples) >= 2 and bool(_sustained_swapping(vm))


def _kib_per_figure(vm: Vmstat) -> float:
    """KiB in one si/so figure: 1 once converted from a known unit, else at
    least the smallest unit's."""
    return 1.0 if vm.swap_unit_kb is not None else SMALLEST_SWAP_UNIT_KB


def _sustained_swapping(vm: Vmstat) -> list[VmstatSample]:
    """The intervals that move pages to or from swap (read in the smallest unit
    when the unit is not shown), when they are at least SWAP_SUSTAINED_SHARE of
    the intervals; else none."""
    scale = _kib_per_figure(vm)
    intervals = vm.interval_samples
    moving = [s for s in intervals if _swap_kb_s(s) * scale >= SWAP_RATE_KB_S]
    return moving if intervals and len(moving) >= SWAP_SUSTAINED_SHARE * len(intervals) else []


def _swap_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """vmstat's samples, in a known unit, on a host with a vmstat, with swap in
    sight or with a data store; /proc/vmstat's pswpin/pswpout run since boot and
    cannot say whether pages move now, so they only put the host in scope."""
    in_scope = host.vmstat is not None or _swap_in_sight(host) or stores_of(host)
    return ("vmstat", "vmstat_swap_unit") if in_scope else ()


def _swap_kb_s(sample: VmstatSample) -> int:
    """Pages swapped in and out in an interval, as printed (KiB/s once the unit is known)."""
    return (sample.si or 0) + (sample.so or 0)


@rule(
    "memory.swap_activity",
    severity="warning",
    title="The host is swapping now",
    title_zh="主机正在换页（swap 进出）",
    condition=(
        f"vmstat: swap-in plus swap-out (si + so) >= {SWAP_RATE_KB_S} KiB/s in at least "
        f"{SWAP_SUSTAINED_SHARE:.0%} of the intervals (the first row, averages since boot, left out). Swap "
        "that is used but not moving (swpd > 0, si = so = 0) is not this rule; /proc/vmstat's pswpin/pswpout "
        "count since boot and cannot show current activity: without vmstat samples the rule is not checked. "
        "When the samples do not say their unit (a table pasted without its command line could be "
        "vmstat -S M), si and so are read in the smallest unit -S can print (k, 1000 bytes): the rule "
        "fires when even that lower bound reaches the threshold, and is not checked when pages move below it"
    ),
    condition_zh=(
        f"vmstat：至少 {SWAP_SUSTAINED_SHARE:.0%} 的采样间隔中换入加换出（si + so）>= {SWAP_RATE_KB_S} KiB/s"
        "（第一行是开机以来的平均值，不计）。swap 被占用但没有流动（swpd > 0，si = so = 0）不属于本规则；"
        "/proc/vmstat 的 pswpin/pswpout 从开机起累计，看不出当前是否在换页：没有 vmstat 采样时本规则不检查。"
        "采样看不出单位时（没有命令行的表格可能来自 vmstat -S M），"
        "si 和 so 按 -S 能输出的最小单位（k，1000 字节）读取："
        "即使按这个下限也达到阈值时触发，有换页但低于阈值时不检查"
    ),
    requires=("vmstat",),
    relevant=_swap_relevant,
    measures=("reduce-memory-demand", "disable-swap-for-db"),
    thresholds={"swap_rate_kb_s": SWAP_RATE_KB_S, "sustained_share": SWAP_SUSTAINED_SHARE},
    rationale=(
        "Used swap is not a problem: pages of idle processes sit there harmlessly (an Exadata database node "
        "keeps 376 KiB in swap with si = so = 0 in every sample). Pages moving is: every swap-in is a "
        "thread waiting for a disk read of memory it already owned. The LKML report of two SAP application "
        "servers (Linux 2.4.20, 2003) moved 100-200 KiB/s out in every sample on one host and 400-2,700 "
        "KiB/s on the other, and its SAP work processes stalled in the D state. 100 KiB/s (25 pages/s) keeps "
        "the odd page of a sample quiet (a host with 40 GB free showed a single 4 KiB/s swap-in), and half "
        "the intervals makes it sustained, not one burst. past = mean (si + so) / 100 KiB/s."
    ),
    rationale_zh=(
        "swap 被占用本身不是问题：空闲进程的页待在那里无害（一台 Exadata 数据库节点在 swap 中有 376 KiB，"
        "每个采样 si = so = 0）。页面在流动才是问题：每次换入都是一个线程在等磁盘读回它本来就拥有的内存。"
        "LKML 上两台 SAP 应用服务器的报告（Linux 2.4.20，2003 年）中，一台每个采样换出 100-200 KiB/s，另一台 "
        "400-2,700 KiB/s，SAP 工作进程卡在 D 状态。100 KiB/s（每秒 25 页）让采样中偶尔的一页不被报告（一台有 "
        "40 GB 空闲内存的主机只出现过一次 4 KiB/s 的换入"
        "），一半的采样间隔说明是持续换页而不是一次突发。past = "
        "平均 (si + so) / 100 KiB/s。"
    ),
    peer=(
        "risu `swap-usage-high` and obdiag `swapon` (swap used, not its movement); sar -W pswpin/s pswpout/s "
        "and Craig Shallahamer's 'so should nearly always be zero' (Oracle Performance Firefighting)"
    ),
    explanations={
        "": (
            "{host} is swapping: si + so was >= {rate} KiB/s in {moving} of {intervals} vmstat intervals "
            "(on average {mean:,.0f} KiB/s swapped in and out, {swpd:,.0f} KiB in swap){unit}. "
            "Processes wait for disk reads of their own memory; the host needs more memory than it has for "
            "what runs on it.",
            "{host} 正在换页：{intervals} 个 vmstat 采样间隔中有 {moving} "
            "个 si + so >= {rate} KiB/s（平均每秒换入"
            "换出 {mean:,.0f} KiB，swap 中有 {swpd:,.0f} KiB）{unit}。"
            "进程要等磁盘读回自己的内存；主机上运行的负载需要的内存超过了它拥有的内存。",
        ),
        "unit_not_shown": (
            "; the table does not show its unit (no command line), so its figures are read in the smallest "
            "unit vmstat -S prints (k, 1000 bytes): these rates are at least what moved",
            "；表格没有显示单位（没有命令行），数字按 vmstat -S 能输出的最小单位（k，1000 字节）读取："
            "实际换页速率至少是这些值",
        ),
    },
)
def swap_activity(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        vm = host.vmstat
        if vm is None or len(vm.samples) < 2 or not swap_rate_known(host):
            continue
        moving = _sustained_swapping(vm)
        if not moving:
            continue
        yield _swapping_finding(host, vm, vm.interval_samples, moving)


def _swapping_finding(
    host: HostFacts, vm: Vmstat, intervals: list[VmstatSample], moving: list[VmstatSample]
) -> RuleFinding:
    """memory.swap_activity: the mean swap rate over ``intervals`` and the most
    swap used, citing the busiest of the ``moving`` intervals (read as at least
    so many KiB when the unit is not shown)."""
    scale = _kib_per_figure(vm)
    known = vm.swap_unit_kb is not None
    mean = sum(_swap_kb_s(s) for s in intervals) * scale / len(intervals)
    peak = max(moving, key=_swap_kb_s)
    swpd = max((s.swpd_kb or 0) for s in intervals) * scale
    return finding(
        "memory.swap_activity",
        host,
        values={
            "rate": SWAP_RATE_KB_S,
            "moving": len(moving),
            "intervals": len(intervals),
            "mean": mean,
            "swpd": swpd,
            "unit": "" if known else Phrase("unit_not_shown"),
        },
        # the figures as printed (KiB/s once the unit is known; the explanation says when it is not)
        evidence=[
            evidence(host, "vmstat.si", peak.si, vm, line=peak.line),
            evidence(host, "vmstat.so", peak.so, vm, line=peak.line),
        ],
        past=mean / SWAP_RATE_KB_S,
    )


# memory.page_tables_large: "a few hundred MB: huge pages are not your problem;
# several GB: worth the migration" (the PostgreSQL huge-pages post cited below)
PAGE_TABLES_WARN_KB = 2 * 1024 * 1024
# on a small host, a tenth of RAM (our choice: no vendor states a share), from 512 MiB
PAGE_TABLES_SHARE = 0.10
PAGE_TABLES_SHARE_MIN_KB = 512 * 1024


def _page_tables_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """The PageTables line of a whole /proc/meminfo or of a grep that printed
    it, and on a data store host (where it matters most) in any case."""
    meminfo = host.meminfo
    if stores_of(host) or (
        meminfo is not None and (meminfo.origin == "proc" or "PageTables" in meminfo.values)
    ):
        return ("page_tables",)
    return ()


@rule(
    "memory.page_tables_large",
    severity="warning",
    title="Page tables take gigabytes of memory",
    title_zh="页表占用了数 GB 内存",
    condition=(
        f"/proc/meminfo: PageTables >= {PAGE_TABLES_WARN_KB // 1024**2} "
        f"GiB, or >= {PAGE_TABLES_SHARE:.0%} of "
        f"MemTotal and >= {PAGE_TABLES_SHARE_MIN_KB // 1024} MiB "
        "(a grep of the PageTables line alone is judged "
        "on the size)"
    ),
    condition_zh=(
        f"/proc/meminfo：PageTables >= {PAGE_TABLES_WARN_KB // 1024**2} GiB，或 >= MemTotal 的 "
        f"{PAGE_TABLES_SHARE:.0%} 且 >= {PAGE_TABLES_SHARE_MIN_KB // 1024} "
        "MiB（只 grep 了 PageTables 一行时只看"
        "大小）"
    ),
    requires=("page_tables",),
    relevant=_page_tables_relevant,
    measures=("static-hugepages", "postgresql-huge-pages", "oracle-sga-huge-pages"),
    thresholds={
        "warning_kb": PAGE_TABLES_WARN_KB,
        "share_of_ram": PAGE_TABLES_SHARE,
        "share_min_kb": PAGE_TABLES_SHARE_MIN_KB,
    },
    rationale=(
        "Every process that maps shared memory with 4 KiB pages keeps its own page-table entries for it, 8 "
        "bytes per 4 KiB touched, so a multi-process database (Oracle dedicated servers, PostgreSQL "
        "backends) pays for its shared memory once per connection: Oracle's installation guide (Configuring "
        "Large Memory Optimization) gives the arithmetic, Kevin "
        "Closson measured about 7 GB of page tables for "
        "500 connections to an 8000M Oracle SGA against a 265 MB peak with huge pages, and a PostgreSQL "
        "huge-pages post shows 18.3 GB (PageTables 19215332 kB) for 602 backends on a 32 GB shared_buffers, "
        "judging 'a few hundred MB' harmless and 'several GB' worth the migration. 2 GiB is the low end of "
        "'several GB', above the healthy hosts seen (a Percona support host with huge pages: 389 MB on 189 "
        "GiB); the tenth of RAM for small hosts is our choice. past = PageTables / 2 GiB (or share / 10 %)."
    ),
    rationale_zh=(
        "每个以 4 KiB 页映射共享内存的进程都要为它维护自己的页表项，每触及 4 KiB 需 8 字节，所以多进程数据库"
        "（Oracle 专用服务器进程、PostgreSQL 后端进程）要为共享内存按连接数重复付出页表：Oracle 安装指南"
        "（Configuring Large Memory Optimization）给出了算法，Kevin Closson 测得 500 个连接访问 8000M 的 "
        "Oracle SGA 时页表约 7 GB，使用大页后峰值 265 MB；一篇 PostgreSQL 大页文章中 602 个后端、32 GB "
        "shared_buffers 的服务器页表为 18.3 GB（PageTables 19215332 kB），并认为“几百 MB”无碍、“数 GB”值得"
        "迁移。2 GiB 是“数 GB”的下限，高于见到的健康主机（一台使"
        "用大页的 Percona 支持主机：189 GiB 内存中 389 "
        "MB）；小主机上内存的十分之一是我们自己的选择。past = PageTables / 2 GiB（或占比 / 10 %）。"
    ),
    peer=(
        "pgcluu (reports PageTables, no threshold); Red Hat solution 406773 (PageTables grows with processes "
        "attached to one shared memory segment); Oracle MOS 361323.1 (HugePages)"
    ),
    explanations={
        "share": (
            "{host}: page tables take {gib:.1f} GiB, {share:.0%} of its {ram_gib:.0f} GiB of RAM. Processes "
            "that map the same shared memory with 4 KiB pages (database connections) each keep their own "
            "entries for it; with huge pages the shared memory needs 512 times fewer.",
            "{host}：页表占用 {gib:.1f} GiB，占 {ram_gib:.0f} "
            "GiB 内存的 {share:.0%}。以 4 KiB 页映射同一块共享"
            "内存的进程（数据库连接）各自为它维护页表项；使用大页时共享内存所需的页表项少 512 倍。",
        ),
        "size": (
            "{host}: page tables take {gib:.1f} GiB (PageTables in /proc/meminfo; MemTotal was not in the "
            "output). Processes that map the same shared memory with 4 KiB pages (database connections) each "
            "keep their own entries for it; with huge pages the shared memory needs 512 times fewer.",
            "{host}：页表占用 {gib:.1f} GiB（/proc/meminfo "
            "的 PageTables；输出中没有 MemTotal）。以 4 KiB 页映射"
            "同一块共享内存的进程（数据库连接）各自为它维护页表项；使用大页时共享内存所需的页表项少 512 倍。",
        ),
    },
)
def page_tables_large(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        meminfo = host.meminfo
        if meminfo is None or "PageTables" not in meminfo.values:
            continue
        kb = meminfo.values["PageTables"]
        ram_kb = meminfo.values.get("MemTotal", 0)
        share = kb / ram_kb if ram_kb else None
        if _page_tables_too_large(kb, share):
            yield _page_tables_finding(host, meminfo, kb, ram_kb, share)


def _page_tables_finding(
    host: HostFacts, meminfo: Meminfo, kb: int, ram_kb: int, share: float | None
) -> RuleFinding:
    """memory.page_tables_large for ``kb`` of page tables: as a ``share`` of
    the RAM when known, else as a size."""
    return finding(
        "memory.page_tables_large",
        host,
        "share" if share is not None else "size",
        values={"gib": kb / 1024**2, "share": share or 0, "ram_gib": ram_kb / 1024**2},
        evidence=_page_tables_evidence(host, meminfo, kb, ram_kb),
        past=max(kb / PAGE_TABLES_WARN_KB, (share or 0) / PAGE_TABLES_SHARE),
    )


def _page_tables_evidence(host: HostFacts, meminfo: Meminfo, kb: int, ram_kb: int) -> list[Evidence]:
    """The evidence of the page tables' size, then of the RAM when meminfo tells it."""
    ev = [evidence(host, "meminfo.PageTables", kb, meminfo, "PageTables")]
    if ram_kb:
        ev.append(evidence(host, "meminfo.MemTotal", ram_kb, meminfo, "MemTotal"))
    return ev


def _page_tables_too_large(kb: int, share: float | None) -> bool:
    """Page tables of PAGE_TABLES_WARN_KB, or PAGE_TABLES_SHARE of RAM from PAGE_TABLES_SHARE_MIN_KB."""
    by_share = share is not None and share >= PAGE_TABLES_SHARE and kb >= PAGE_TABLES_SHARE_MIN_KB
    return kb >= PAGE_TABLES_WARN_KB or by_share

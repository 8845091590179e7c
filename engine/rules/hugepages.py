"""Static huge pages against what uses them: reserved and unused."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.memory import DEFAULT_HUGEPAGE_KB, hugepage_size_kb, static_hugepages
from collectors.facts import HostFacts
from engine.rules import Evidence, RuleContext, RuleFinding, evidence, finding, host_ram_kb, rule
from engine.rules.memory import GIB

# memory.hugepages_unused: reserved huge pages nothing has taken or reserved
UNUSED_WARN_SHARE = 0.10  # of RAM
UNUSED_INFO_SHARE = 0.02
UNUSED_MIN_KB = 512 * 1024

# without the RAM (a grep of the HugePages lines): a pool this large is worth a look
UNUSED_INFO_KB_WITHOUT_RAM = 1024 * 1024


def _meminfo(host: HostFacts) -> dict[str, int]:
    return host.meminfo.values if host.meminfo else {}


def _unused_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    count, _parsed, _path = static_hugepages(host)
    return ("hugepages_usage",) if count else ()


def _unused_severity(pool_kb: int, ram_kb: int | None) -> tuple[str | None, float]:
    """(severity or None, past) of a reserved pool nothing uses."""
    if not ram_kb:
        return (
            ("info", pool_kb / UNUSED_INFO_KB_WITHOUT_RAM)
            if pool_kb >= UNUSED_INFO_KB_WITHOUT_RAM
            else (None, 1)
        )
    share = pool_kb / ram_kb
    if share >= UNUSED_WARN_SHARE:
        return "warning", share / UNUSED_WARN_SHARE
    if share >= UNUSED_INFO_SHARE and pool_kb >= UNUSED_MIN_KB:
        return "info", share / UNUSED_INFO_SHARE
    return None, 1.0


@rule(
    "memory.hugepages_unused",
    severity="warning",
    title="Static huge pages are reserved but nothing uses them",
    title_zh="预留了静态大页却无人使用",
    condition=(
        "/proc/meminfo: HugePages_Free = HugePages_Total > 0 and HugePages_Rsvd = 0 (no page taken or "
        f"promised), the pool holding >= {UNUSED_WARN_SHARE:.0%} of RAM (warning) or >= "
        f"{UNUSED_INFO_SHARE:.0%} and >= {UNUSED_MIN_KB // 1024} MiB (info); without the RAM (a grep of the "
        f"HugePages lines) a pool of >= {UNUSED_INFO_KB_WITHOUT_RAM // 1024**2} GiB is info"
    ),
    condition_zh=(
        "/proc/meminfo：HugePages_Free = HugePages_To"
        "tal > 0 且 HugePages_Rsvd = 0（没有任何大页被占用或预订），"
        f"大页池占内存 >= {UNUSED_WARN_SHARE:.0%}（警告），或 >= {UNUSED_INFO_SHARE:.0%} 且 >= "
        f"{UNUSED_MIN_KB // 1024} MiB（提示）；不知道内存总量时（只 grep 了 HugePages 行），大页池 >= "
        f"{UNUSED_INFO_KB_WITHOUT_RAM // 1024**2} GiB 为提示"
    ),
    requires=("hugepages_usage",),
    measures=("size-hugepages-to-use",),
    thresholds={
        "warning_share_of_ram": UNUSED_WARN_SHARE,
        "info_share_of_ram": UNUSED_INFO_SHARE,
        "min_kb": UNUSED_MIN_KB,
        "info_kb_without_ram": UNUSED_INFO_KB_WITHOUT_RAM,
    },
    rationale=(
        "Reserved huge pages are taken out of the memory every other allocation can use, page cache "
        "included, and only MAP_HUGETLB/hugetlbfs users can have them. All free and none reserved means "
        "the database, pod or guest they were reserved for does not use them (PostgreSQL huge_pages off or "
        "a try that failed, Oracle AMM, a pod that never requested hugepages-1Gi): the memory is lost and "
        "the database runs on 4 KiB pages anyway; Oracle's documentation warns that excess unused "
        "HugePages can run the system out of memory. A tenth of RAM lost is a warning; from 2 % (at least "
        "512 MiB) info; without the RAM, 1 GiB is info. A snapshot taken while the user is stopped shows "
        "the same thing, hence no more than that. past = share / 10 % (info: / 2 %, or pool / 1 GiB)."
    ),
    rationale_zh=(
        "预留的大页从其他所有分配（包括页缓存）可用的内存中扣除，只有 "
        "MAP_HUGETLB/hugetlbfs 的使用者能用。全部"
        "空闲且无预订，说明为之预留的数据库、Pod 或虚拟机并没有用它们（Po"
        "stgreSQL huge_pages 为 off 或 try 失败、"
        "Oracle AMM、从未申请 hugepages-1Gi 的 Pod）"
        "：这部分内存白白损失，数据库照样使用 4 KiB 小页；Oracle 文档"
        "提醒，多余未用的 HugePages 可能使系统内存耗尽。损失"
        "十分之一内存为警告；2 %（至少 512 MiB）起为提示；不"
        "知道内存总量时 1 GiB 起为提示。使用者恰好停止时采集的"
        "快照也会这样，因此不报得更重。past = 占比 / 10 %"
        "（提示：/ 2 %，或大页池 / 1 GiB）。"
    ),
    relevant=_unused_relevant,
    peer="postgresqltuner (vm.nr_hugepages sizing); Oracle alert log 'Large Pages unused system wide'",
    explanations={
        "share": (
            "{host} reserves {total} huge pages of {size_kb} kB ({gib:.1f} GiB, {share:.0%} of RAM) and all "
            "of them are free, none reserved: nothing uses that memory, and nothing else can.",
            "{host} 预留了 {total} 个 {size_kb} kB 的大页（{gib:.1f} GiB，占内存 {share:.0%}），全部空闲且无"
            "预订：没有程序使用这部分内存，其他程序也无法使用。",
        ),
        "size": (
            "{host} reserves {total} huge pages of {size_kb} kB ({gib:.1f} GiB) and all of them are free, "
            "none reserved: nothing uses that memory, and nothing else can.",
            "{host} 预留了 {total} 个 {size_kb} kB 的"
            "大页（{gib:.1f} GiB），全部空闲且无预订：没有程序使用这部分"
            "内存，其他程序也无法使用。",
        ),
    },
)
def hugepages_unused(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        total = _idle_pool_pages(host)
        if total is None:
            continue
        size_kb = hugepage_size_kb(host) or DEFAULT_HUGEPAGE_KB
        pool_kb = total * size_kb
        ram_kb = host_ram_kb(host)
        severity, past = _unused_severity(pool_kb, ram_kb)
        if severity is None:
            continue
        gib = pool_kb * 1024 / GIB
        yield finding(
            "memory.hugepages_unused",
            host,
            "share" if ram_kb else "size",
            values={
                "total": total,
                "size_kb": size_kb,
                "gib": gib,
                "share": pool_kb / ram_kb if ram_kb else 0,
            },
            evidence=_unused_pool_evidence(host, total, ram_kb),
            severity=severity,
            past=past,
        )


def _idle_pool_pages(host: HostFacts) -> int | None:
    """The number of static huge pages when there are some, all free and none
    reserved; else None."""
    values = _meminfo(host)
    total = values.get("HugePages_Total")
    if not total or values.get("HugePages_Free") != total or values.get("HugePages_Rsvd", 0):
        return None
    return total


def _unused_pool_evidence(host: HostFacts, total: int, ram_kb: int | None) -> list[Evidence]:
    """The evidence of a pool of ``total`` huge pages all free, then of the RAM when meminfo tells it."""
    meminfo = host.meminfo
    ev = [
        evidence(host, "meminfo.HugePages_Total", total, meminfo, "HugePages_Total"),
        evidence(host, "meminfo.HugePages_Free", total, meminfo, "HugePages_Free"),
    ]
    if ram_kb:
        ev.append(evidence(host, "meminfo.MemTotal", ram_kb, meminfo, "MemTotal"))
    return ev

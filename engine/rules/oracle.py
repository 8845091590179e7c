"""Oracle Database: the SGA and the host's huge pages (HugePages)."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.database import oracle_settings
from collectors.facts import HostFacts, ServiceLog
from engine.rules import Evidence, RuleContext, RuleFinding, evidence, finding, rule, size_bytes
from engine.rules._hostside import stores_of
from engine.rules.memory import GIB, HUGEPAGES_POOL_WARN_BYTES, pool_severity

FULL_PCT = 100


def _bytes(log: ServiceLog, name: str) -> int | None:
    value = log.settings.get(name)
    return size_bytes(value) if value else None


def _sga_bytes(log: ServiceLog) -> int | None:
    """The SGA: the alert log's size, else sga_max_size / sga_target, else
    memory_target (AMM: SGA and PGA together)."""
    for name in ("sga_size", "sga_max_size", "sga_target", "memory_max_target", "memory_target"):
        size = _bytes(log, name)
        if size:
            return size
    return None


def _oracle_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    log = oracle_settings(host)
    if log is None:
        return ("oracle_settings",) if stores_of(host, {"oracle"}) else ()
    return ("oracle_settings",)


def _problem(log: ServiceLog) -> tuple[str, dict[str, object], list[str]] | None:
    """(template, values, the settings that show it) of what keeps the SGA out
    of huge pages, None when nothing does (or nothing says)."""
    pct = log.settings.get("sga_in_large_pages_pct")
    if pct is not None and pct.isdigit() and int(pct) < FULL_PCT:
        return "report", {"pct": int(pct)}, ["sga_in_large_pages_pct", "large_pages_configured"]
    if pct is not None:
        return None  # the alert log says the whole SGA is in large pages
    memory_target = _bytes(log, "memory_target")
    if memory_target:
        return "amm", {"target": log.settings["memory_target"]}, ["memory_target"]
    if (log.settings.get("use_large_pages") or "").upper() == "FALSE":
        return "off", {}, ["use_large_pages"]
    return None


def _evidence(host: HostFacts, log: ServiceLog, names: list[str]) -> list[Evidence]:
    return [
        evidence(host, f"services[oracle].{name}", log.settings[name], log, line=log.lines.get(name))
        for name in names
        if name in log.settings
    ]


@rule(
    "oracle.sga_not_in_huge_pages",
    severity="warning",
    title="Oracle's SGA is not (all) in huge pages",
    title_zh="Oracle 的 SGA 没有（全部）使用大页",
    condition=(
        "the alert log's Large Pages Information says less than 100 % of the SGA is in large pages; or, "
        "without that report, the instance runs Automatic Memory Management (memory_target > 0, which "
        "cannot use HugePages) or use_large_pages = FALSE. Warning from an SGA of "
        f"{HUGEPAGES_POOL_WARN_BYTES // GIB} GiB (or a quarter of RAM from 2 GiB), info below"
    ),
    condition_zh=(
        "告警日志的 Large Pages Information 显示 SGA 使用大页的比例低于 100 %；或在没有该报告时，实例使用自动"
        "内存管理（memory_target > 0，无法使用 HugePages）或 use_large_pages = FALSE。SGA 达到 "
        f"{HUGEPAGES_POOL_WARN_BYTES // GIB} GiB（或 2 GiB 起占内存四分之一）为警告，更小为提示"
    ),
    requires=("oracle_settings",),
    measures=("oracle-sga-huge-pages",),
    thresholds={"sga_in_large_pages_pct_below": FULL_PCT},
    rationale=(
        "Every Oracle server process maps the whole SGA: on 4 KiB pages each one keeps its own page tables "
        "for it (Closson: about 7 GB of page tables for 500 connections to an 8000M SGA, 265 MB with huge "
        "pages; Pythian: 70-77 % kernel CPU), and the SGA can be paged out. Oracle reports the share of the "
        "SGA it got in large pages at every start-up; from 11.2.0.3 a shortfall leaves the rest on small "
        "pages silently. AMM (memory_target) and HugePages exclude each other. Severity follows "
        "memory.hugepages_absent's pool calibration applied to the SGA; past likewise."
    ),
    rationale_zh=(
        "每个 Oracle 服务进程都映射整个 SGA：使用 4 KiB "
        "小页时，每个进程都要为它维护自己的页表（Closson：500 个"
        "连接访问 8000M 的 SGA，页表约 7 GB，用大页后为 265 M"
        "B；Pythian：内核态 CPU 70-77 %），且 SGA 可能被换"
        "出。Oracle 每次启动都会报告 SGA 有多少比例落在大页"
        "中；从 11.2.0.3 起，大页不足时其余部分会悄悄使用小页"
        "。AMM（memory_target）与 HugePages 互斥。严重程度沿用 memory.hugepages_absent 对缓冲池的校准，用于 "
        "SGA；past 同理。"
    ),
    relevant=_oracle_relevant,
    peer="Oracle alert log RECOMMENDATION (Large Pages Information, 11.2.0.3+); Oracle CVU HugePages checks",
    explanations={
        "report": (
            "{host}: Oracle's alert log says {pct}% of the "
            "{sga_gib:.1f} GiB SGA is in large pages: the rest is "
            "on 4 KiB pages, mapped with their own page tables by every server process.",
            "{host}：Oracle 告警日志显示 {sga_gib:.1f} Gi"
            "B 的 SGA 只有 {pct}% 使用大页：其余部分是 4 KiB 小页，"
            "每个服务进程都要为其维护自己的页表。",
        ),
        "amm": (
            "{host}: Oracle runs Automatic Memory Management (memory_target = {target}), which cannot use "
            "HugePages: the {sga_gib:.1f} GiB of SGA and PGA are on 4 KiB pages, with page tables in every "
            "server process.",
            "{host}：Oracle 使用自动内存管理（memory_target = {target}"
            "），它无法使用 HugePages：{sga_gib:.1f} GiB "
            "的 SGA 和 PGA 都是 4 KiB 小页，每个服务进程都要维护页表。",
        ),
        "off": (
            "{host}: Oracle runs with use_large_pages = FALSE: its {sga_gib:.1f} GiB SGA is on 4 KiB pages, "
            "with page tables in every server process.",
            "{host}：Oracle 设置了 use_large_pages = FALSE："
            "{sga_gib:.1f} GiB 的 SGA 使用 4 KiB 小页，每个服务进程"
            "都要维护页表。",
        ),
    },
)
def sga_not_in_huge_pages(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        log = oracle_settings(host)
        if log is None:
            continue
        problem = _problem(log)
        sga = _sga_bytes(log)
        if problem is None or not sga:
            continue
        template, values, names = problem
        severity, past = pool_severity(host, sga)
        yield finding(
            "oracle.sga_not_in_huge_pages",
            host,
            template,
            values={**values, "sga_gib": sga / GIB},
            evidence=_evidence(host, log, [*names, "sga_size"]),
            severity=severity or "info",
            past=past,
        )

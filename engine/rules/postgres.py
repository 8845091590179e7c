"""PostgreSQL: its shared memory and the host's huge pages."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.database import pg_setting_bytes, pg_settings
from collectors.derived.memory import DEFAULT_HUGEPAGE_KB, hugepage_size_kb, static_hugepages
from collectors.derived.values import as_int
from collectors.derived.workload import version_tuple
from collectors.facts import HostFacts, ServiceLog
from engine.rules import Evidence, RuleContext, RuleFinding, evidence, finding, rule
from engine.rules._hostside import stores_of
from engine.rules.memory import (
    GIB,
    HUGEPAGES_POOL_INFO_BYTES,
    HUGEPAGES_POOL_SHARE_MIN_BYTES,
    HUGEPAGES_POOL_WARN_BYTES,
    HUGEPAGES_POOL_WARN_SHARE,
    pool_severity,
)

# huge_pages exists from PostgreSQL 9.4 (before it, shared memory always used 4 KiB pages)
PG_HUGE_PAGES_FROM = (9, 4)
# huge_pages = off, as PostgreSQL reads a boolean
OFF_MODES = ("off", "false", "0", "no")


def _shared_buffers(log: ServiceLog) -> int | None:
    return pg_setting_bytes(log.settings, "shared_buffers")


def _mode(log: ServiceLog) -> str:
    """huge_pages as the server runs it (``try`` is the default when not shown)."""
    return (log.settings.get("huge_pages") or "try").strip().strip("'").lower()


def _supports_huge_pages(log: ServiceLog) -> bool:
    version = version_tuple(log.version)
    return version is None or version >= PG_HUGE_PAGES_FROM


def _huge_pages_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    log = pg_settings(host)
    if log is None:
        return ("pg_settings",) if stores_of(host, {"postgresql"}) else ()
    pool = _shared_buffers(log)
    if pool is None or pool < HUGEPAGES_POOL_INFO_BYTES or not _supports_huge_pages(log):
        return ()
    if _mode(log) in OFF_MODES:
        return ("pg_settings",)
    return ("pg_settings", "hugepages")


def _needed_pages(log: ServiceLog, pool: int, page_kb: int) -> int:
    """Huge pages the server's shared memory needs: PostgreSQL 15's own
    figure when shown, else shared_buffers in pages."""
    told = as_int(log.settings.get("shared_memory_size_in_huge_pages"))
    if told is not None and told > 0:
        return told
    return -(-pool // (page_kb * 1024))


def _page_kb(host: HostFacts) -> int:
    return hugepage_size_kb(host) or DEFAULT_HUGEPAGE_KB


def _setting_evidence(host: HostFacts, log: ServiceLog, name: str, value: object) -> Evidence:
    return evidence(host, f"services[postgresql].{name}", value, log, line=log.lines.get(name))


@rule(
    "postgresql.huge_pages_unused",
    severity="warning",
    title="PostgreSQL shared memory is not in huge pages",
    title_zh="PostgreSQL 共享内存没有使用大页",
    condition=(
        "PostgreSQL >= 9.4 (SHOW ALL or postgresql.conf) with shared_buffers >= "
        f"{HUGEPAGES_POOL_WARN_BYTES // GIB} GiB or >= {HUGEPAGES_POOL_WARN_SHARE:.0%} of RAM (from "
        f"{HUGEPAGES_POOL_SHARE_MIN_BYTES // GIB} GiB; info from {HUGEPAGES_POOL_INFO_BYTES // GIB} GiB) and "
        "huge_pages = off, or huge_pages = try (the default) while the host has fewer static huge pages "
        "(HugePages_Total) than its shared memory needs (shared_memory_size_in_huge_pages from "
        "PostgreSQL 15, else shared_buffers): try then falls back to 4 KiB pages for all of it"
    ),
    condition_zh=(
        "PostgreSQL >= 9.4（SHOW ALL 或 postgresql.conf），shared_buffers >= "
        f"{HUGEPAGES_POOL_WARN_BYTES // GIB} GiB 或 >= 内存的 {HUGEPAGES_POOL_WARN_SHARE:.0%}（"
        f"{HUGEPAGES_POOL_SHARE_MIN_BYTES // GIB} GiB 起；{HUGEPAGES_POOL_INFO_BYTES // GIB} GiB 起为提示），"
        "且 huge_pages = off，或 huge_pages = try（默认值）而主机的静态大页（HugePages_Total）少于其共享内存"
        "所需（PostgreSQL 15 起为 shared_memory_size_in_huge_pages，否则按 shared_buffers 计）：此时 try "
        "会让整块共享内存退回 4 KiB 小页"
    ),
    requires=("pg_settings",),
    measures=("postgresql-huge-pages",),
    thresholds={
        "pool_warning_bytes": HUGEPAGES_POOL_WARN_BYTES,
        "pool_warning_share_of_ram": HUGEPAGES_POOL_WARN_SHARE,
        "pool_share_min_bytes": HUGEPAGES_POOL_SHARE_MIN_BYTES,
        "pool_info_bytes": HUGEPAGES_POOL_INFO_BYTES,
        "huge_pages_from": "9.4",
    },
    rationale=(
        "memory.hugepages_absent's calibration for a buffer pool, applied to shared_buffers: from a few GiB "
        "of shared memory the page walks and page tables of 4 KiB pages cost 5-15 % (pgtune turns "
        "huge_pages on from 2 GiB; postgresqltuner advises it), and every backend maps the whole region, "
        "so page tables grow with connections. huge_pages = try falls back "
        "to 4 KiB pages for the whole region, silently, when the reserved pages are short by one. past = "
        "shared_buffers / 8 GiB or its share of RAM / 25 %."
    ),
    rationale_zh=(
        "沿用 memory.hugepages_absent 对缓冲池的校准，用于 shared_buffers：共享内存达到几 GiB 起，4 KiB 小页"
        "的页表遍历和页表本身会带来 5-15 % 的开销（pgtune 从 2 GiB 起开启 huge_pages，postgresqltuner 也如此"
        "建议），且每个后端进程都映射整块共享内存，页表随连接数增长。预留的大页哪"
        "怕少一页，huge_pages = try 也会悄悄让整块共享内存退回 4 KiB 小页。past = shared_buffers / 8 GiB 或其"
        "占内存比例 / 25 %。"
    ),
    relevant=_huge_pages_relevant,
    peer=(
        "postgresqltuner (huge_pages advice, vm.nr_hugepages sizing); pgtune (huge_pages = try from 2 GB); "
        "check_pgactivity #296 (try without huge pages)"
    ),
    explanations={
        "off": (
            "{host}: PostgreSQL runs with shared_buffers = "
            "{pool_gib:.1f} GiB and huge_pages = off: its shared "
            "memory is mapped with 4 KiB pages by every backend, so each connection carries its own page "
            "tables for all of it and every access risks a TLB miss.",
            "{host}：PostgreSQL 的 shared_buffers = {pool_gib:.1f} GiB，huge_pages = off：每个后端进程都以 "
            "4 KiB 小页映射共享内存，每个连接都为整块内存维护自己的页表，每次访问都可能 TLB 未命中。",
        ),
        "try": (
            "{host}: PostgreSQL has shared_buffers = {pool_gib:.1f} "
            "GiB and huge_pages = {mode}, but the host "
            "reserves {have} huge pages where its shared memory needs {need}: PostgreSQL then falls back to "
            "4 KiB pages for the whole region without failing, so every backend carries page tables for "
            "all of it.",
            "{host}：PostgreSQL 的 shared_buffers = {pool_gib:.1f} GiB，huge_pages = {mode}，但主机只预留了 "
            "{have} 个大页，而其共享内存需要 {need} 个：PostgreSQL 会不报错地让整块共享内存退回 4 KiB 小页，"
            "每个后端进程都要为它维护页表。",
        ),
    },
)
def huge_pages_unused(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        log = pg_settings(host)
        if log is None or not _supports_huge_pages(log):
            continue
        pool = _shared_buffers(log)
        if pool is None:
            continue
        severity, past = pool_severity(host, pool)
        unused = _small_pages_cause(host, log, pool) if severity is not None else None
        if unused is None:
            continue
        template, values, ev = unused
        pool_ev = _setting_evidence(host, log, "shared_buffers", log.settings["shared_buffers"])
        yield finding(
            "postgresql.huge_pages_unused",
            host,
            template,
            values={"pool_gib": pool / GIB, **values},
            evidence=[pool_ev, *ev],
            severity=severity,
            past=past,
        )


def _small_pages_cause(
    host: HostFacts, log: ServiceLog, pool: int
) -> tuple[str, dict[str, object], list[Evidence]] | None:
    """Why the shared memory is in 4 KiB pages (the template, its values and its
    evidence besides shared_buffers): huge_pages off, or try with fewer huge
    pages reserved than it needs; None when neither (on: no start without them)."""
    mode = _mode(log)
    if mode in OFF_MODES:
        return "off", {}, [_setting_evidence(host, log, "huge_pages", mode)]
    short = _pages_short(host, log, pool) if mode == "try" else None
    if short is None:
        return None
    have, need, pages_ev = short
    mode_ev = [_setting_evidence(host, log, "huge_pages", mode)] if "huge_pages" in log.settings else []
    return "try", {"mode": mode, "have": have, "need": need}, [*mode_ev, pages_ev]


def _pages_short(host: HostFacts, log: ServiceLog, pool: int) -> tuple[int, int, Evidence] | None:
    """(reserved, needed, the reservation's evidence) when fewer static huge
    pages are reserved than shared memory needs; None when enough, or unknown."""
    have, parsed, path = static_hugepages(host)
    if have is None:
        return None
    need = _needed_pages(log, pool, _page_kb(host))
    if have >= need:
        return None
    return (
        have,
        need,
        evidence(host, path, have, parsed, "HugePages_Total", "nr_hugepages", "vm.nr_hugepages"),
    )

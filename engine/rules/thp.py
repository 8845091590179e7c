"""Transparent huge pages on data store hosts, aware of the store and its
version: Redis, PostgreSQL, Oracle, MySQL and MongoDB up to 7.0 want THP off
(``never``, or ``madvise`` where the store never asks for huge pages);
MongoDB 8.0 reverses the advice and wants ``always``."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.workload import Datastore, Setting, service_warning, thp_setting
from collectors.facts import HostFacts
from engine.rules import Evidence, Joined, RuleContext, RuleFinding, finding, rule
from engine.rules._hostside import (
    at_least,
    redis_warning,
    setting_evidence,
    store_evidence,
    store_label,
    stores_of,
    warning_evidence,
)

# stores whose vendors ask for THP off (MongoDB only before 8.0)
THP_AVERSE = {"redis", "mongodb", "postgresql", "oracle", "mysql"}
MONGODB_WANTS_THP = (8, 0)
# Redis warns about THP whenever it is not [never] before 6.0.8 (redis#3058,
# fixed by #7381/#7771); from 6.0.8 the warning means "always"
REDIS_WARNS_ONLY_ON_ALWAYS = (6, 0, 8)


def _is_mongo8(host: HostFacts, store: Datastore) -> bool:
    """MongoDB 8.0 or later: by its version, or by the THP warning only 8.0 prints."""
    return store.kind == "mongodb" and _mongodb_generation(host, store) is True


def _mongodb_generation(host: HostFacts, store: Datastore) -> bool | None:
    """Whether the MongoDB is 8.0 or later; None when neither its version nor
    its start-up warnings tell (7.0 and earlier warn "enabled is 'always'",
    8.0 asks to change a sysfsFile)."""
    newer = at_least(store, MONGODB_WANTS_THP)
    if newer is not None:
        return newer
    if service_warning(host, "thp_sysfs") is not None:
        return True
    old_style = {"thp_enabled", "thp_defrag"}
    if any(w.code in old_style for log in host.services if log.kind == "mongodb" for w in log.warnings):
        return False
    return None


def mongodb_generation_known(host: HostFacts) -> bool:
    """The host shows MongoDB and every MongoDB of it has a known generation
    (see :func:`_mongodb_generation`); False on a host without MongoDB, where
    no such fact was read."""
    stores = stores_of(host, {"mongodb"})
    return bool(stores) and all(_mongodb_generation(host, s) is not None for s in stores)


def _averse_stores(host: HostFacts) -> list[Datastore]:
    return [s for s in stores_of(host, THP_AVERSE) if not _is_mongo8(host, s)]


def _thp_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return ("thp",) if _averse_stores(host) else ()


@rule(
    "memory.thp_on_latency_db",
    severity="warning",
    title="Transparent huge pages always on under a latency-sensitive data store",
    title_zh="对延迟敏感的数据库主机上透明大页设为 always",
    condition=(
        "THP enabled = always (/sys/kernel/mm/transparent_hugepage/enabled, or the store's own start-up "
        "warning) on a host running Redis, PostgreSQL, Oracle Database, MySQL/MariaDB or MongoDB before "
        f"{MONGODB_WANTS_THP[0]}.0; or Redis LATENCY DOCTOR reports anonymous huge pages in the process. "
        "madvise is not flagged (those stores never madvise their heap); MongoDB >= 8.0 is the opposite "
        "rule (memory.thp_off_for_mongodb_tcmalloc)"
    ),
    condition_zh=(
        "运行 Redis、PostgreSQL、Oracle、MySQL/MariaDB 或 8.0 之前的 MongoDB 的主机上 THP enabled = always"
        "（/sys/kernel/mm/transparent_hugepage/enabled，或数据库自身的启动警告）；或 Redis LATENCY DOCTOR "
        "报告"
        "进程使用了匿名大页。madvise 不报（这些数据库不会对堆调用 madvise）；MongoDB >= 8.0 见相反的规则 "
        "memory.thp_off_for_mongodb_tcmalloc"
    ),
    requires=("datastore",),
    measures=("disable-thp",),
    thresholds={"mongodb_wants_thp_from": "8.0", "redis_warns_only_on_always_from": "6.0.8"},
    rationale=(
        "A yes/no condition. With THP always, a fork (Redis BGSAVE, PostgreSQL/Oracle server processes) "
        "copies 2 MiB pages on write instead of 4 KiB ones, and page faults stall in direct compaction; "
        "Redis, MongoDB up to 7.0, PostgreSQL (EDB, tuned's postgresql profile), Oracle (PRVE-00024) and "
        "Percona all ask for THP off. Only `always` is flagged: `madvise` applies THP to regions a program "
        "asks for, which these stores do not (Redis accepts it from 6.0.8). A Redis warning without the "
        "value is read as `always` only from Redis 6.0.8."
    ),
    rationale_zh=(
        "是/否条件。THP 为 always 时，fork（Redis BGSAVE、PostgreSQL/Oracle 服务进程）写时复制的是 2 MiB 的页"
        "而不是 4 KiB，缺页还会卡在直接内存规整里；Redis、7.0 及以前的 MongoDB、PostgreSQL（EDB、tuned 的 "
        "postgresql 配置）、Oracle（PRVE-00024）和 Percona 都要求关闭 THP。只报 always：madvise 只对程序主动"
        "申请的区域使用大页，这些数据库不会申请（Redis 从 6.0.8 起接受 madvise）。Redis 的警告不带取值时，"
        "只有 6.0.8 及以后版本才视为 always。"
    ),
    relevant=_thp_relevant,
    peer=(
        "Redis start-up warning and LATENCY DOCTOR (`src/latency.c` THPIsEnabled, "
        "THPGetAnonHugePagesSize); MongoDB startup_warnings_mongod.cpp; obdiag "
        "`system/dependent_software.py`; SAP arp142 `2000`; Oracle CVU PRVE-00024; tuned "
        "postgresql/oracle profiles"
    ),
    explanations={
        "setting": (
            "{host} runs {stores} with transparent huge pages set to `{thp}`: forks copy 2 MiB pages on "
            "write and page faults stall in compaction, the latency spikes and memory growth these stores' "
            "vendors warn about.",
            "{host} 运行 {stores}，透明大页为 `{thp}`：fork 后写时复制的是 2 MiB 的页，缺页会卡在内存规整里，"
            "正是这些数据库厂商警告的延迟尖刺和内存膨胀。",
        ),
        "in_use": (
            "{host}: Redis LATENCY DOCTOR reports anonymous huge pages in the Redis process: THP is on for "
            "its heap, so every fork copies 2 MiB pages.",
            "{host}：Redis LATENCY DOCTOR 报告 Redis 进程使用了匿名大页：其堆启用了 THP，每次 fork 都要复制 "
            "2 MiB 的页。",
        ),
        "and": (", ", "、"),
    },
)
def thp_on_latency_db(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        stores = _averse_stores(host)
        if not stores:
            continue
        # what shows THP on, most direct first: the setting, Redis's warning, pages in use
        for shown in (_thp_set_always, _redis_warned_always, _huge_pages_in_use):
            found = shown(host, stores)
            if found is not None:
                yield found
                break


def _stores_phrase(stores: list[Datastore]) -> Joined:
    return Joined("and", tuple(store_label(s) for s in stores))


def _thp_set_always(host: HostFacts, stores: list[Datastore]) -> RuleFinding | None:
    setting = thp_setting(host)
    if setting is None or setting.value != "always":
        return None
    return finding(
        "memory.thp_on_latency_db",
        host,
        "setting",
        values={"stores": _stores_phrase(stores), "thp": setting.value},
        evidence=[setting_evidence(host, setting), *(store_evidence(host, s) for s in stores)],
    )


def _redis_warned_always(host: HostFacts, stores: list[Datastore]) -> RuleFinding | None:
    """No setting read, but a Redis that warns only when THP is always did."""
    redis = next((s for s in stores if s.kind == "redis"), None)
    warned = redis_warning(host, "thp_enabled")
    if thp_setting(host) is not None or redis is None or warned is None:
        return None
    if not at_least(redis, REDIS_WARNS_ONLY_ON_ALWAYS):
        return None
    return finding(
        "memory.thp_on_latency_db",
        host,
        "setting",
        values={"stores": _stores_phrase(stores), "thp": "always"},
        evidence=[warning_evidence(host, warned, "redis", "always"), store_evidence(host, redis)],
    )


def _huge_pages_in_use(host: HostFacts, stores: list[Datastore]) -> RuleFinding | None:
    in_use = service_warning(host, "anon_huge_pages")
    if in_use is None:
        return None
    return finding(
        "memory.thp_on_latency_db",
        host,
        "in_use",
        values={},
        evidence=[warning_evidence(host, in_use, "redis", True)],
    )


def _defrag_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """The enabled mode and the defrag mode; defrag says nothing once THP is never."""
    if not stores_of(host):
        return ()
    enabled = thp_setting(host)
    return ("thp",) if enabled is not None and enabled.value == "never" else ("thp", "thp_defrag")


@rule(
    "memory.thp_defrag_always",
    severity="warning",
    title="THP defrag = always: page faults stall in direct compaction",
    title_zh="THP defrag = always：缺页时同步做内存规整导致停顿",
    condition=(
        "/sys/kernel/mm/transparent_hugepage/defrag = always while THP enabled is always or madvise, on a "
        "host running a data store (warning when enabled = always, info with madvise)"
    ),
    condition_zh=(
        "运行数据库的主机上 /sys/kernel/mm/transparent_hugepage/defrag = always，且 THP enabled 为 always 或 "
        "madvise（enabled = always 时为 warning，madvise 时为 info）"
    ),
    requires=("datastore", "thp"),
    measures=("thp-defrag-defer",),
    thresholds={},
    rationale=(
        "A yes/no condition. defrag = always makes every THP-eligible fault compact memory synchronously "
        "when no 2 MiB page is free: on a host whose memory is full of page cache that is a stall of "
        "milliseconds to seconds in the faulting thread (MongoDB warns about it; Go and JuiceFS reported "
        "100 ms+ stalls and kcompactd hangs). With enabled = madvise only regions that asked for huge pages "
        "compact, so the finding is info there."
    ),
    rationale_zh=(
        "是/否条件。defrag = always 时，只要没有空闲的 2 MiB 页，每次可用大页的缺页都会同步做内存规整：在内存"
        "被页缓存占满的主机上，缺页线程会停顿数毫秒到数秒（MongoDB 对此告警；Go 和 JuiceFS 报告过 100 ms 以上"
        "的停顿和 kcompactd 挂起）。enabled = madvise 时只有申请了大页的区域才会规整，因此为 info。"
    ),
    relevant=_defrag_relevant,
    peer=(
        "MongoDB startup_warnings_mongod.cpp (defrag 'always'); SAP arp142 "
        "`2010_transparent_hugepages_defrag`"
    ),
    explanation=(
        "{host} runs {stores} with THP enabled = `{enabled}` and defrag = `always`: a fault that finds no "
        "free 2 MiB page compacts memory synchronously, in the database's own thread."
    ),
    explanation_zh=(
        "{host} 运行 {stores}，THP enabled = `{enabled}` 且 defrag = `always`：缺页找不到空闲的 2 MiB 页时会"
        "同步做内存规整，停顿发生在数据库自己的线程里。"
    ),
)
def thp_defrag_always(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        stores = stores_of(host)
        if not stores:
            continue
        defrag = thp_setting(host, "defrag")
        enabled = thp_setting(host)
        if defrag is None or defrag.value != "always":
            continue
        mode = _enabled_mode(enabled, defrag)
        if mode in ("always", "madvise"):
            yield _defrag_always_finding(host, stores, mode, _thp_settings_evidence(host, defrag, enabled))


def _defrag_always_finding(
    host: HostFacts, stores: list[Datastore], mode: str, settings_ev: list[Evidence]
) -> RuleFinding:
    """memory.thp_defrag_always for the data stores of a host whose THP is
    ``mode`` (always: a warning; madvise: info), after the settings' evidence."""
    return finding(
        "memory.thp_defrag_always",
        host,
        values={"stores": ", ".join(store_label(s) for s in stores), "enabled": mode},
        evidence=[*settings_ev, *(store_evidence(host, s) for s in stores)],
        severity="warning" if mode == "always" else "info",
    )


def _thp_settings_evidence(host: HostFacts, defrag: Setting, enabled: Setting | None) -> list[Evidence]:
    """The evidence of THP's defrag setting, then of its enabled one when read."""
    ev = [setting_evidence(host, defrag)]
    if enabled is not None:
        ev.append(setting_evidence(host, enabled))
    return ev


def _enabled_mode(enabled: Setting | None, defrag: Setting) -> str | None:
    """THP's enabled mode: the setting read, else "always" when the defrag
    setting came from MongoDB's warning (printed only when enabled is always)."""
    if enabled is not None:
        return enabled.value
    return "always" if defrag.from_log else None


def _mongo8(host: HostFacts) -> list[Datastore]:
    return [s for s in stores_of(host, {"mongodb"}) if _is_mongo8(host, s)]


def _mongo8_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """The THP mode of a MongoDB 8.0 host; of a MongoDB of unknown generation,
    its version too, unless THP is already what 8.0 wants."""
    if _mongo8(host):
        return ("thp",)
    unknown = [s for s in stores_of(host, {"mongodb"}) if _mongodb_generation(host, s) is None]
    setting = thp_setting(host)
    if not unknown or (setting is not None and setting.value == "always"):
        return ()
    return ("thp", "mongodb_version")


@rule(
    "memory.thp_off_for_mongodb_tcmalloc",
    severity="warning",
    title="MongoDB 8.0 runs with transparent huge pages off",
    title_zh="MongoDB 8.0 在关闭透明大页的主机上运行",
    condition=(
        f"MongoDB >= {MONGODB_WANTS_THP[0]}.0 and THP enabled is never or madvise, or its start-up warning "
        "asks to change a THP sysfs file"
    ),
    condition_zh=(
        f"MongoDB >= {MONGODB_WANTS_THP[0]}.0 且 THP enabled 为 never 或 madvise，或其启动警告要求修改 THP "
        "的 sysfs 文件"
    ),
    requires=("datastore",),
    measures=("enable-thp-mongodb8",),
    thresholds={"mongodb_wants_thp_from": "8.0"},
    rationale=(
        "A yes/no condition. MongoDB 8.0 moved to the per-CPU-cache TCMalloc, which is designed around huge "
        "pages: its documentation (tcmalloc-performance) asks for THP `always`, defrag `defer+madvise` and "
        "`khugepaged/max_ptes_none` 0, the reverse of the advice for 7.0 and earlier. The host-level tuning "
        "left from older versions (THP never) costs 8.0 its allocator's TLB gains."
    ),
    rationale_zh=(
        "是/否条件。MongoDB 8.0 改用按 CPU 缓存的 TCMalloc，它依赖大页设计：官方文档（tcmalloc-performance）"
        "要求 THP 为 always、defrag 为 defer+madvise、khugepaged/max_ptes_none 为 0，与 7.0 及以前的建议相"
        "反。"
        "沿用旧版本的主机调优（THP never）会让 8.0 失去其分配器在 TLB 上的收益。"
    ),
    relevant=_mongo8_relevant,
    peer=(
        "MongoDB 8.0 start-up warnings (sysfsFile / TCMalloc); docs tcmalloc-performance; none among the "
        "host checkers"
    ),
    explanation=(
        "{host} runs {store} with THP `{thp}`: MongoDB 8.0's TCMalloc expects THP always (the opposite of t"
        "he "
        "advice for 7.0 and earlier)."
    ),
    explanation_zh=(
        "{host} 运行 {store}，THP 为 `{thp}`：MongoDB 8.0 的 TCMalloc 需要 THP 为 always（与 7.0 及以前的建议"
        "相反）。"
    ),
)
def thp_off_for_mongodb_tcmalloc(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for store in _mongo8(host):
            off = _thp_not_always(host)
            if off is not None:
                thp, thp_ev = off
                yield finding(
                    "memory.thp_off_for_mongodb_tcmalloc",
                    host,
                    values={"store": store_label(store), "thp": thp},
                    evidence=[thp_ev, store_evidence(host, store)],
                )


def _thp_not_always(host: HostFacts) -> tuple[str, Evidence] | None:
    """THP's mode when the host shows it is not ``always`` (the setting never
    or madvise, else MongoDB 8.0's warning), with its evidence; else None."""
    setting = thp_setting(host)
    if setting is not None and setting.value in ("never", "madvise"):
        return setting.value, setting_evidence(host, setting)
    warned = service_warning(host, "thp_sysfs")
    if warned is None:
        return None
    w = warned[1]
    return w.value or "not always", warning_evidence(host, warned, "mongodb", w.value or w.message)

"""Virtual-memory policy on data store hosts: zone reclaim, swappiness, swap
activity, overcommit, the listen backlog, and where a store's memory lives."""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.derived.workload import (
    Datastore,
    Setting,
    service_warning,
    sysctl_setting,
    tuned_profiles,
    tuned_setting,
)
from collectors.facts import HostFacts, ProcessNuma
from engine.rules import (
    Evidence,
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
from engine.rules._hostside import (
    redis_warning,
    setting_evidence,
    store_evidence,
    store_label,
    stores_of,
    warning_evidence,
)


def _zone_reclaim_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """The setting, on a data store host not known to have one node (a store's
    own zone reclaim warning says the node count without a numactl)."""
    return ("zone_reclaim",) if stores_of(host) and host.numa_node_count() != 1 else ()


@rule(
    "numa.zone_reclaim_on_cache_host",
    severity="warning",
    title="Zone reclaim is on for a database or cache host",
    title_zh="数据库或缓存主机开启了 zone reclaim",
    condition=(
        "vm.zone_reclaim_mode has bit 1 set (from sysctl, or MongoDB's start-up warning) on a host running a "
        "data store (database output, a Redis/MongoDB log, or its process in ps/top). A host without a store "
        "in sight is not judged: zone reclaim is right for memory-bandwidth jobs that fit a node (founding "
        "case kunpeng-stream-zone-reclaim, tuned hpc-compute)"
    ),
    condition_zh=(
        "运行数据库的主机（数据库输出、Redis/MongoDB 日志或 ps/top 中的进程）上 vm.zone_reclaim_mode 的第 1"
        " 位"
        "被置位（来自 sysctl 或 MongoDB 启动警告）。未见数据库的主机不做判断：对能放进一个节点的内存带宽型"
        "任务，"
        "zone reclaim 是对的（奠基案例 kunpeng-stream-zone-reclaim、tuned hpc-compute）"
    ),
    requires=("zone_reclaim",),
    measures=("zone-reclaim-off",),
    thresholds={},
    rationale=(
        "A yes/no condition: with zone reclaim on, an allocation on a full node first reclaims that node's "
        "page cache (and with bits 2/4 writes and swaps) instead of using the other node, so a database's "
        "cache is confined to one node and its threads stall in reclaim (PostgreSQL, Cassandra, MongoDB, "
        "LinkedIn's GraphDB incidents; MongoDB, obdiag and SAP all require 0). Kernels before 3.16 turned it "
        "on at boot when a node distance exceeds 20. Only hosts with a data store are judged: for a "
        "memory-bandwidth job that fits a node (the founding STREAM case, tuned's hpc-compute) 1 is right."
    ),
    rationale_zh=(
        "是/否条件：开启 zone reclaim 后，节点满时分配会先回收本节点的页缓存（第 2/4 位还会回写和换出），而"
        "不是"
        "使用另一个节点，于是数据库的缓存被限制在一个节点上，线程卡在回收里（PostgreSQL、Cassandra、MongoDB、"
        "LinkedIn GraphDB 的事故；MongoDB、obdiag 和 SAP 都要求为 0）。3.16 之前的内核在节点距离大于 20 时"
        "开机"
        "即开启它。只判断运行数据库的主机：对能放进一个节点的内存带宽型任务（奠基的 STREAM 案例、tuned 的 "
        "hpc-compute），1 是对的。"
    ),
    relevant=_zone_reclaim_relevant,
    peer=(
        "MongoDB startup_warnings_mongod.cpp (zone_reclaim_mode != 0); obdiag `system/parameter.py` "
        "(vm.zone_reclaim_mode = 0); SAP arp142 `2315_vm_zone_reclaim_mode`; DataStax zoneReclaimMode"
    ),
    explanations={
        "store": (
            "{host} runs {stores} with vm.zone_reclaim_mode = {mode}: a full node reclaims its own page cac"
            "he "
            "before using the other node's memory, so the database's cache shrinks to one node and its "
            "threads stall in reclaim.{tuned}",
            "{host} 运行 {stores}，vm.zone_reclaim_mode = {mode}：节点满时先回收本节点的页缓存，而不是使用"
            "另一"
            "节点的内存，数据库的缓存被压缩到一个节点，线程卡在回收里。{tuned}",
        ),
        "tuned_sets": (
            " The value comes from the active TuneD profile {profile}: set 0 in a custom profile that "
            "includes it (or choose another profile), or tuned sets it again.",
            "该值来自当前的 TuneD 配置 {profile}：请在包含它的自定义配置中设为 0（或换用其他配置），否则 "
            "tuned 会再次设置它。",
        ),
        "tuned_other": (
            " The active TuneD profile ({profile}) does not set it: a sysctl.d file or the kernel's boot "
            "default (before 3.16) does.",
            "当前的 TuneD 配置（{profile}）并未设置它：来自 sysctl.d 文件或内核的开机默认值（3.16 之前）。",
        ),
        "tuned_unknown": (
            " If a TuneD profile is active (`tuned-adm active`; hpc-compute sets 1), change it there too.",
            "如果启用了 TuneD 配置（`tuned-adm active`；hpc-compute 会设为 1），也请在其中修改。",
        ),
    },
)
def zone_reclaim_on_cache_host(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        setting = sysctl_setting(host, "vm.zone_reclaim_mode")
        if setting is None or not setting.value.isdigit() or not int(setting.value) & 1:
            continue
        stores = stores_of(host)
        if stores:
            yield _zone_reclaim_finding(host, setting, stores)


def _zone_reclaim_finding(host: HostFacts, setting: Setting, stores: list[Datastore]) -> RuleFinding:
    """numa.zone_reclaim_on_cache_host for the data stores ``stores`` of a host
    whose zone reclaim ``setting`` is on, naming what sets it."""
    return finding(
        "numa.zone_reclaim_on_cache_host",
        host,
        "store",
        values={
            "stores": ", ".join(store_label(s) for s in stores),
            "mode": setting.value,
            "tuned": _tuned_source(host),
        },
        evidence=[setting_evidence(host, setting), *(store_evidence(host, s) for s in stores)],
    )


def _tuned_source(host: HostFacts) -> Phrase:
    """Whether the host's TuneD profile is what sets zone reclaim (then the
    change belongs in the profile)."""
    setting = tuned_setting(host, "vm.zone_reclaim_mode")
    if setting is not None and setting[0] != "0":
        return Phrase("tuned_sets", {"profile": setting[1]})
    profiles = tuned_profiles(host)
    if profiles:
        return Phrase("tuned_other", {"profile": " ".join(profiles)})
    return Phrase("tuned_unknown")


# ---------------------------------------------------------------- swappiness


def kernel_numbers(release: str | None) -> tuple[int, ...] | None:
    """(major, minor, patch, build) of a kernel release: "2.6.32-358.el6.x86_64"
    -> (2, 6, 32, 358); "5.15.0-91-generic" -> (5, 15, 0, 91).

    >>> kernel_numbers("2.6.32-358.el6.x86_64"), kernel_numbers("3.10.0"), kernel_numbers("x")
    ((2, 6, 32, 358), (3, 10, 0), None)
    """
    if not release:
        return None
    m = re.match(r"\s*(\d{1,3})\.(\d{1,3})(?:\.(\d{1,4}))?(?:-(\d{1,6}))?", release)
    if m is None:
        return None
    return tuple(int(g) for g in m.groups() if g is not None)


# mm: avoid swapping out with swappiness==0 (fe35004fbf9e, Linux 3.5; RHEL 6 from 2.6.32-303)
SWAPPINESS_ZERO_STRICT_FROM = (3, 5)
SWAPPINESS_ZERO_RHEL6_FROM_BUILD = 303


def swappiness_zero_is_strict(release: str | None) -> bool | None:
    """Whether swappiness = 0 means "never swap anonymous memory" on this
    kernel (None: unknown release).

    >>> swappiness_zero_is_strict("2.6.32-358"), swappiness_zero_is_strict("2.6.32-279.el6")
    (True, False)
    """
    numbers = kernel_numbers(release)
    if numbers is None:
        return None
    if numbers[:2] >= SWAPPINESS_ZERO_STRICT_FROM:
        return True
    if numbers[:3] == (2, 6, 32) and len(numbers) == 4:
        return numbers[3] >= SWAPPINESS_ZERO_RHEL6_FROM_BUILD
    return False


@rule(
    "memory.swappiness_zero_oom",
    severity="warning",
    title="vm.swappiness = 0 on a kernel where it invites the OOM killer",
    title_zh="vm.swappiness = 0：在新内核上会招来 OOM killer",
    condition=(
        "vm.swappiness = 0 on Linux >= 3.5 or a RHEL 6 kernel >= 2.6.32-303 (the change of fe35004fbf9e), "
        "on a host running a data store (warning) or any host (info); an unknown kernel is info"
    ),
    condition_zh=(
        "Linux >= 3.5 或 RHEL 6 内核 >= 2.6.32-303（fe35004fbf9e 的改动）上 vm.swappiness = 0：运行数据库的"
        "主机为 warning，其他主机为 info；内核版本未知时为 info"
    ),
    requires=("swappiness",),
    measures=("swappiness-one",),
    thresholds={"strict_from": "3.5", "rhel6_strict_from": "2.6.32-303"},
    rationale=(
        "A yes/no condition. Since Linux 3.5 (backported to RHEL 6 at 2.6.32-303) swappiness = 0 stops the "
        "kernel from swapping anonymous memory until page cache is almost gone, so under pressure the OOM "
        "killer picks the largest process, the database, while swap is still free (Percona: mysqld "
        "OOM-killed on CentOS 6.4, 2.6.32-358). 1 keeps swap as the last resort; MySQLTuner and tuned's "
        "profiles use 1-10."
    ),
    rationale_zh=(
        "是/否条件。自 Linux 3.5 起（RHEL 6 在 2.6.32-303 回移），swappiness = 0 会让内核在页缓存几乎耗尽前都"
        "不换出匿名内存，于是内存紧张时 OOM killer 会在交换区仍空闲时杀掉最大的进程，也就是数据库（Percona："
        "CentOS 6.4、2.6.32-358 上 mysqld 被 OOM 杀掉）。设为 1 可以把交换保留为最后手段；MySQLTuner 和 tun"
        "ed "
        "的配置使用 1-10。"
    ),
    # every host: 0 is judged on any host (info without a data store or a kernel
    # release); the release only sets the severity
    relevant=lambda ctx, host: ("swappiness",),
    peer=(
        "MySQLTuner (`vm.swappiness > 10`, the opposite direction); obdiag `system/parameter.py` "
        "(requires 0: conflicts); SAP arp142 `2325`; Percona blog 'OOM relation to vm.swappiness=0'"
    ),
    explanations={
        "strict": (
            "{host} has vm.swappiness = 0 on kernel {kernel}, where 0 means anonymous memory is never swapp"
            "ed "
            "while page cache remains: under pressure the OOM killer takes {target} with swap still free.",
            "{host} 的 vm.swappiness = 0，内核为 {kernel}，在该内核上 0 表示只要还有页缓存就绝不换出匿名内"
            "存："
            "内存紧张时 OOM killer 会在交换区仍空闲时杀掉{target}。",
        ),
        "unknown_kernel": (
            "{host} has vm.swappiness = 0; on any kernel since 3.5 (RHEL 6 since 2.6.32-303) that invites t"
            "he "
            "OOM killer before swap is used. The kernel release was not in the snapshot.",
            "{host} 的 vm.swappiness = 0；自 3.5 起的内核（RHEL 6 自 2.6.32-303）上这会让 OOM killer 先于交换"
            "出手。快照中没有内核版本。",
        ),
        "the_db": ("the database ({stores})", "数据库（{stores}）"),
        "largest": ("the largest process", "最大的进程"),
    },
)
def swappiness_zero_oom(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        setting = sysctl_setting(host, "vm.swappiness")
        if setting is None or setting.value != "0":
            continue
        release = host.kernel.release if host.kernel else None
        strict = swappiness_zero_is_strict(release)
        if strict is not False:
            yield _swappiness_zero_finding(host, setting, release, strict=strict)


def _swappiness_zero_finding(
    host: HostFacts, setting: Setting, release: str | None, *, strict: bool | None
) -> RuleFinding:
    """The finding for vm.swappiness = 0: on a kernel where it never swaps
    (``strict``), a warning when data stores run there; info when the kernel's
    behaviour is unknown (``strict`` None)."""
    stores = stores_of(host)
    ev = [setting_evidence(host, setting), *(store_evidence(host, s) for s in stores)]
    if strict is None:
        return finding(
            "memory.swappiness_zero_oom", host, "unknown_kernel", values={}, evidence=ev, severity="info"
        )
    ev.insert(1, evidence(host, "kernel.release", release, host.kernel, "release"))
    return finding(
        "memory.swappiness_zero_oom",
        host,
        "strict",
        values={"kernel": release, "target": _oom_target(stores)},
        evidence=ev,
        severity="warning" if stores else "info",
    )


def _oom_target(stores: list[Datastore]) -> Phrase:
    """Whom the OOM killer picks: the data stores, else the largest process."""
    if not stores:
        return Phrase("largest")
    return Phrase("the_db", {"stores": ", ".join(store_label(s) for s in stores)})


# ---------------------------------------------------------------- overcommit


def _overcommit_stores(host: HostFacts) -> list[Datastore]:
    return stores_of(host, {"redis", "mongodb"})


def _overcommit_problem(host: HostFacts, store: Datastore) -> tuple[str, str | None] | None:
    """(explanation template, mode) when the store's overcommit requirement is
    not met; the mode is None when only the store's warning says so."""
    setting = sysctl_setting(host, "vm.overcommit_memory")
    mode = setting.value if setting is not None else None
    if store.kind == "mongodb":
        return ("mongodb", mode) if mode == "2" else None
    return _redis_overcommit_problem(host, mode) if store.kind == "redis" else None


def _redis_overcommit_problem(host: HostFacts, mode: str | None) -> tuple[str, str | None] | None:
    """("redis", mode) when Redis's overcommit requirement (1) is not met: the
    setting read (``mode``) decides, else Redis's own warning."""
    if mode is not None:
        return ("redis", mode) if mode != "1" else None
    return ("redis", None) if redis_warning(host, "overcommit_memory") is not None else None


@rule(
    "memory.overcommit_policy",
    severity="warning",
    title="Overcommit policy breaks the data store's fork or journal",
    title_zh="内存超分配策略妨碍数据库的 fork 或日志",
    condition=(
        "Redis with vm.overcommit_memory != 1 (0 or 2; Redis 7's warning says only 'not 1'), or MongoDB with "
        "vm.overcommit_memory = 2 (from sysctl, or the store's own start-up warning)"
    ),
    condition_zh=(
        "Redis 且 vm.overcommit_memory != 1（0 或 2；Redis 7 的警告只说明不是 1），或 MongoDB 且 "
        "vm.overcommit_memory = 2（来自 sysctl，或数据库自身的启动警告）"
    ),
    requires=("datastore",),
    measures=("overcommit-for-store",),
    thresholds={},
    rationale=(
        "A yes/no condition. Redis forks for BGSAVE and replication: under mode 0 the heuristic refuses a "
        "fork the size of a large dataset, under 2 jemalloc's mappings exhaust the commit limit, and the sa"
        "ve "
        "fails (Redis warns at start; redis#11357). MongoDB warns that journaling works best with 0 or 1. "
        "PostgreSQL's own advice (2, to keep the OOM killer off the postmaster) is not flagged here: the "
        "other modes are safe for it when memory is sized."
    ),
    rationale_zh=(
        "是/否条件。Redis 在 BGSAVE 和复制时 fork：模式 0 的启发式会拒绝与大数据集同样大小的 fork，模式 2 下 "
        "jemalloc 的映射会耗尽提交上限，保存因此失败（Redis 启动时即告警；redis#11357）。MongoDB 警告日志在"
        " 0 "
        "或 1 下工作最好。PostgreSQL 自己的建议（2，避免 OOM killer 杀 postmaster）此处不报：内存规划得当时"
        "其他"
        "模式对它也安全。"
    ),
    relevant=lambda ctx, host: ("overcommit",) if _overcommit_stores(host) else (),
    peer=(
        "Redis start-up warning (`overcommit_memory`); MongoDB startup_warnings_mongod.cpp; postgresqltuner "
        "(wants 2: the opposite, for PostgreSQL); obdiag (requires 0); SAP arp142 `2320`"
    ),
    explanations={
        "redis": (
            "{host} runs {store} with vm.overcommit_memory {mode}: a background save or replica sync forks "
            "the whole dataset, and the kernel may refuse that fork, so the save fails.",
            "{host} 运行 {store}，vm.overcommit_memory {mode}：后台保存或副本同步会 fork 整个数据集，内核可能"
            "拒绝这次 fork，保存因此失败。",
        ),
        "mongodb": (
            "{host} runs {store} with vm.overcommit_memory {mode}: strict accounting makes the journal's "
            "mappings fail under load (MongoDB asks for 0 or 1).",
            "{host} 运行 {store}，vm.overcommit_memory {mode}：严格记账会让日志的内存映射在负载下失败（Mong"
            "oDB "
            "要求 0 或 1）。",
        ),
        "is": ("= {mode}", "= {mode}"),
        "not_one": ("!= 1 (Redis's own warning)", "!= 1（Redis 自身的警告）"),
    },
)
def overcommit_policy(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for store in _overcommit_stores(host):
            problem = _overcommit_problem(host, store)
            if problem is None:
                continue
            template, mode = problem
            yield finding(
                "memory.overcommit_policy",
                host,
                template,
                values={
                    "store": store_label(store),
                    "mode": Phrase("is", {"mode": mode}) if mode is not None else Phrase("not_one"),
                },
                evidence=[*_overcommit_evidence(host, mode), store_evidence(host, store)],
            )


def _overcommit_evidence(host: HostFacts, mode: str | None) -> list[Evidence]:
    """The setting when its mode was read, else the store's warning about it."""
    setting = sysctl_setting(host, "vm.overcommit_memory")
    if mode is not None and setting is not None:
        return [setting_evidence(host, setting)]
    warned = service_warning(host, "overcommit_memory")
    if warned is None:
        return []
    return [warning_evidence(host, warned, "redis", warned[1].value or "!= 1")]


# ---------------------------------------------------------------- listen backlog

REDIS_TCP_BACKLOG = 511  # Redis's default tcp-backlog


@rule(
    "net.somaxconn_low",
    severity="warning",
    title="net.core.somaxconn caps the data store's listen backlog",
    title_zh="net.core.somaxconn 限制了数据库的监听队列",
    condition=(
        f"a host running Redis with net.core.somaxconn < {REDIS_TCP_BACKLOG} (Redis's default tcp-backlog), "
        "from sysctl or Redis's own start-up warning"
    ),
    condition_zh=(
        f"运行 Redis 的主机上 net.core.somaxconn < {REDIS_TCP_BACKLOG}（Redis 默认的 tcp-backlog），来自 sy"
        "sctl "
        "或 Redis 自身的启动警告"
    ),
    requires=("datastore",),
    measures=("raise-somaxconn",),
    thresholds={"redis_tcp_backlog": REDIS_TCP_BACKLOG},
    rationale=(
        "The kernel silently truncates a listen backlog to somaxconn (128 before Linux 5.4): a burst of "
        "connections beyond it is dropped or retried after a 1 s SYN timeout, a latency spike at the "
        "client. Redis asks for 511 and warns when it cannot have it; tuned's throughput-performance sets "
        "at least 2048. past = 511 / somaxconn."
    ),
    rationale_zh=(
        "内核会把监听队列悄悄截断为 somaxconn（Linux 5.4 之前默认 128）：超出的突发连接会被丢弃，或在 1 秒 "
        "SYN "
        "超时后重试，客户端看到的是延迟尖刺。Redis 需要 511，拿不到时会告警；tuned 的 throughput-performance "
        "至少设为 2048。past = 511 / somaxconn。"
    ),
    relevant=lambda ctx, host: ("somaxconn",) if stores_of(host, {"redis"}) else (),
    peer=(
        "Redis start-up warning (TCP backlog vs somaxconn); obdiag `system/parameter.py` "
        "(net.core.somaxconn); tuned throughput-performance"
    ),
    explanation=(
        "{host} runs {store} with net.core.somaxconn = {somaxconn}, below its listen backlog of {backlog}: "
        "connection bursts beyond {somaxconn} are dropped and retried after a SYN timeout."
    ),
    explanation_zh=(
        "{host} 运行 {store}，net.core.somaxconn = {somaxconn}，低于其监听队列 {backlog}：超过 {somaxconn} 的"
        "突发连接会被丢弃，待 SYN 超时后重试。"
    ),
)
def somaxconn_low(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        for store in stores_of(host, {"redis"}):
            setting = sysctl_setting(host, "net.core.somaxconn")
            if setting is None or not setting.value.isdigit() or int(setting.value) >= REDIS_TCP_BACKLOG:
                continue
            value = int(setting.value)
            yield finding(
                "net.somaxconn_low",
                host,
                values={"store": store_label(store), "somaxconn": value, "backlog": REDIS_TCP_BACKLOG},
                evidence=[setting_evidence(host, setting), store_evidence(host, store)],
                past=REDIS_TCP_BACKLOG / max(value, 1),
            )


# ---------------------------------------------------------------- placement

# numa.process_placement: a store's memory this concentrated on one node ...
PLACEMENT_ONE_NODE_SHARE = 0.90
# ... while it is this large a share of that node
PLACEMENT_NODE_FILL = 0.50


def _placement_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """A store's placement (its per-node memory, or MongoDB's own reading of
    it); the node count and sizes too unless MongoDB's warning said it."""
    if not [s for s in stores_of(host) if s.kind != "mysql"]:
        return ()
    if service_warning(host, "numa_interleave") is not None:
        return ("process_numa",)
    return numa_needs(host, "process_numa", "node_meminfo")


@rule(
    "numa.process_placement",
    severity="warning",
    title="A data store's memory is not spread over the NUMA nodes",
    title_zh="数据库进程的内存没有分布到各 NUMA 节点",
    condition=(
        "MongoDB warns 'You are running on a NUMA machine' (it read its own numa_maps: not interleaved on a "
        f"multi-node host); or numastat -p / numa_maps of a data store process shows >= "
        f"{PLACEMENT_ONE_NODE_SHARE:.0%} of its memory on one node of a multi-node host while it fills >= "
        f"{PLACEMENT_NODE_FILL:.0%} of that node"
    ),
    condition_zh=(
        "MongoDB 警告 “You are running on a NUMA machine”（它读取了自身的 numa_maps：在多节点主机上未交错分"
        "配）；"
        f"或 numastat -p / numa_maps 显示数据库进程 >= {PLACEMENT_ONE_NODE_SHARE:.0%} 的内存在多节点主机的"
        "一个"
        f"节点上，且占满该节点 >= {PLACEMENT_NODE_FILL:.0%}"
    ),
    requires=("datastore",),
    measures=("interleave-db-memory",),
    thresholds={"one_node_share": PLACEMENT_ONE_NODE_SHARE, "node_fill": PLACEMENT_NODE_FILL},
    rationale=(
        "Local allocation puts a large cache where its first touches ran: once it fills that node the kernel "
        "reclaims or swaps there while the other node is free (Jeremy Cole's swap insanity; MongoDB, "
        "Percona's MongoDB practices). 90 % on one node is a placement, not chance; a process using half a "
        "node is large enough to push that node into reclaim. MySQL/MariaDB are covered by "
        "memory.db_exceeds_node and mysql.numa_interleave_unavailable. past = share / 90 %."
    ),
    rationale_zh=(
        "本地分配会把大缓存放在首次访问它的节点上：占满该节点后，内核在那里回收或换出，而另一个节点还空着"
        "（Jeremy Cole 的 swap insanity；MongoDB、Percona 的 MongoDB 最佳实践）。90 % 集中在一个节点是放置"
        "的结果"
        "而非偶然；占用半个节点的进程已足以把该节点推入回收。MySQL/MariaDB 由 memory.db_exceeds_node 和 "
        "mysql.numa_interleave_unavailable 处理。past = 比例 / 90 %。"
    ),
    relevant=_placement_relevant,
    peer=(
        "MongoDB startup_warnings_mongod.cpp (numa_maps not interleaved); MySQLTuner 'Task 6' "
        "(innodb_numa_interleave, MySQL only)"
    ),
    explanations={
        "warned": (
            "{host}: MongoDB reports it runs on a NUMA machine without interleaving (its own numa_maps): its "
            "cache fills the node it first touched and that node reclaims while the others stay free.",
            "{host}：MongoDB 报告它在 NUMA 机器上运行却没有交错分配（读取自身 numa_maps）：它的缓存会占满首次"
            "访问的节点，该节点开始回收，而其他节点仍然空闲。",
        ),
        "measured": (
            "{host}: {store} ({process}) has {share:.0%} of its {total_gib:.1f} GiB on node {node}, "
            "{fill:.0%} of that node: it will reclaim or swap there while other nodes are free.",
            "{host}：{store}（{process}）{total_gib:.1f} GiB 内存中的 {share:.0%} 在节点 {node} 上，占该节"
            "点的 "
            "{fill:.0%}：该节点会先回收或换出，而其他节点仍有空闲。",
        ),
    },
)
def process_placement(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        yield from _host_placement(host)


def _host_placement(host: HostFacts) -> Iterator[RuleFinding]:
    """The data stores (not MySQL) of one host placed on one node: their own
    warning, else each process's NUMA usage."""
    stores = [s for s in stores_of(host) if s.kind != "mysql"]
    if not stores:
        return
    warned = service_warning(host, "numa_interleave")
    if warned is not None:
        yield finding(
            "numa.process_placement",
            host,
            "warned",
            values={},
            evidence=[warning_evidence(host, warned, "mongodb", False)],
        )
        return
    if is_multinode(host):
        yield from _measured_placements(host, stores)


def _measured_placements(host: HostFacts, stores: list[Datastore]) -> Iterator[RuleFinding]:
    """The stores' processes whose NUMA usage shows them on one node."""
    totals = {n.node: n.mem_total_kb() for n in host.numa.nodes.values()} if host.numa else {}
    for pn in host.process_numa:
        store = _store_of_process(stores, pn)
        placed = _placed_on_one_node(host, store, pn, totals) if store is not None and pn.node_mb else None
        if placed is not None:
            yield placed


def _store_of_process(stores: list[Datastore], pn: ProcessNuma) -> Datastore | None:
    """The data store seen through process ``pn``'s NUMA usage, if any."""
    return next((s for s in stores if s.fact == f"process_numa[{pn.name}]"), None)


def _placed_on_one_node(
    host: HostFacts, store: Datastore, pn: ProcessNuma, totals: dict[int, int | None]
) -> RuleFinding | None:
    """The finding when process ``pn`` (of ``store``) has most of its memory
    on one node and fills much of that node, else None."""
    total = pn.total_mb or sum(pn.node_mb.values())
    node, mb = max(pn.node_mb.items(), key=lambda kv: kv[1])
    node_kb = totals.get(node)
    if not total or not node_kb:
        return None
    share, fill = mb / total, mb * 1024 / node_kb
    if share < PLACEMENT_ONE_NODE_SHARE or fill < PLACEMENT_NODE_FILL:
        return None
    return finding(
        "numa.process_placement",
        host,
        "measured",
        values={
            "store": store_label(store),
            "process": pn.name or pn.pid,
            "share": share,
            "total_gib": total / 1024,
            "node": node,
            "fill": fill,
        },
        evidence=[
            evidence(host, f"process_numa[{pn.name or pn.pid}].node_mb.{node}", mb, None, line=pn.line),
            numa_evidence(host, f"numa.nodes.{node}.MemTotal", node_kb, "NodeMeminfo", f"{node}.MemTotal"),
        ],
        past=share / PLACEMENT_ONE_NODE_SHARE,
    )

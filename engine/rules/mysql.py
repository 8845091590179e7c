"""MySQL / MariaDB / Percona Server rules."""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.facts import DatabaseFacts, DbEvent, HostFacts
from engine.rules import (
    Evidence,
    RuleContext,
    RuleFinding,
    as_bool,
    evidence,
    finding,
    guest_bound_to_one_node,
    host_of_guest,
    is_multinode,
    numa_needs,
    rule,
    size_bytes,
)

LARGE_POOL_BYTES = 16 * 1024**3  # dump/load and large pages pay off from here
POPULATE_SLOW_SECONDS = 60  # MPOL_INTERLEAVE -> MPOL_DEFAULT gap in the error log
FULL_VARIABLES_MIN = 20  # fewer variables: a LIKE query, absence proves little
# innodb_numa_interleave appeared in MySQL 5.6.27 / 5.7.9
MYSQL_INTERLEAVE_SINCE = {(5, 6): (5, 6, 27), (5, 7): (5, 7, 9)}
# PS-3967: Percona pre-faults the pool with MAP_POPULATE from these builds on
PERCONA_POPULATE_SINCE = {(5, 6): ((5, 6, 40), 83.2), (5, 7): ((5, 7, 22), 22.0)}


def _version(db: DatabaseFacts) -> str:
    return db.version or db.variables.get("version") or ""


def _flavour(db: DatabaseFacts) -> str:
    text = " ".join(
        [
            db.kind or "",
            _version(db),
            db.variables.get("version_comment", ""),
            db.variables.get("version_suffix", ""),
        ]
    ).lower()
    if "mariadb" in text:
        return "mariadb"
    if "percona" in text:
        return "percona"
    return "mysql"


def _parse_version(text: str) -> tuple[tuple[int, int, int], float | None] | None:
    """``"5.7.22-22-log"`` -> ((5, 7, 22), 22.0); ``"5.6.40-83.2"`` -> ((5, 6, 40), 83.2)."""
    m = re.match(r"\s*(\d+)\.(\d+)\.(\d+)(?:-(\d+(?:\.\d+)?))?", text or "")
    if not m:
        return None
    build = float(m.group(4)) if m.group(4) else None
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))), build


def _db_on_multinode(ctx: RuleContext, host: HostFacts) -> bool:
    """The database's memory can land on several host nodes."""
    if is_multinode(host):
        return True
    if not host.is_guest or guest_bound_to_one_node(ctx, host):
        return False
    hv = host_of_guest(ctx, host)
    return hv is not None and is_multinode(hv)


def _interleave_missing(db: DatabaseFacts) -> bool:
    """Whether the server lacks innodb_numa_interleave: a full list of its
    variables without it, else a version built without it."""
    if "innodb_numa_interleave" in db.variables:
        return False
    # a full list of the server's own variables (a my.cnf names only what was configured)
    live = [name for name in db.variables if db.variable_sources.get(name, "server") == "server"]
    return len(live) >= FULL_VARIABLES_MIN or _version_lacks_interleave(db)


def _version_lacks_interleave(db: DatabaseFacts) -> bool:
    """Whether the server's version has no innodb_numa_interleave: MariaDB,
    a MySQL or Percona older than the release that added it (False when the
    version is unknown)."""
    if _flavour(db) == "mariadb":
        # MariaDB's packages are built without libnuma support (MDEV-18860)
        return bool(_version(db))
    parsed = _parse_version(_version(db))
    if parsed is None:
        return False
    since = MYSQL_INTERLEAVE_SINCE.get(parsed[0][:2])
    return (since is not None and parsed[0] < since) or parsed[0][:2] < (5, 6)


@rule(
    "mysql.numa_interleave_unavailable",
    severity="warning",
    title="The database cannot interleave its buffer pool",
    title_zh="数据库无法交织分配缓冲池",
    condition=(
        "MySQL/MariaDB on a multi-node host (or in a guest on one, not pinned within one node) without the "
        f"innodb_numa_interleave variable: absent from a full variable list (>= {FULL_VARIABLES_MIN}), or a "
        "MariaDB build (MDEV-18860), or MySQL older than 5.6.27 / 5.7.9"
    ),
    condition_zh=(
        "多节点主机上（或在这样的主机上、未绑定在单个节点内的虚拟机中）的 MySQL/MariaDB 没有 "
        f"innodb_numa_interleave 变量：完整变量列表（>= {FULL_VARIABLES_MIN} 个）中没有该变量，或为 MariaDB "
        "构建（MDEV-18860），或 MySQL 低于 5.6.27 / 5.7.9"
    ),
    requires=("database",),
    measures=("mariadb-numactl-interleave", "guest-numa-topology", "numatune-memory-binding"),
    seeds=("zstack-mariadb-v2v",),
    thresholds={"full_variables_min": FULL_VARIABLES_MIN},
    rationale=(
        "Without the variable the only interleave is numactl around mysqld; on a multi-node host the pool "
        "otherwise fills the node of the thread that allocates it (seed 000: MariaDB 10.4, MDEV-18860). A "
        "yes/no property of the build; a variable list shorter than 20 is a LIKE query and proves nothing."
    ),
    rationale_zh=(
        "没有该变量时，唯一的交织方式是用 numactl 启动 mysqld；否则在多节点主机上，缓冲池会填满分配它的线程"
        "所在的节点（奠基案例 000：MariaDB 10.4，MDEV-18860）。这是构建版本的是/否属性；少于 20 个变量的列表"
        "来自 LIKE 查询，什么也证明不了。"
    ),
    # the variable list, and on a host its node count (a guest answers for its host's)
    relevant=lambda ctx, h: (
        () if h.database is None else ("db_variables",) if h.is_guest else numa_needs(h, "db_variables")
    ),
    explanation=(
        "{server} on {host} has no innodb_numa_interleave, and its memory can land on several NUMA nodes: "
        "the buffer pool fills whichever node the allocating thread runs on. Start mysqld under numactl "
        "--interleave=all, or bind the guest to one node."
    ),
    explanation_zh=(
        "{host} 上的 {server} 没有 innodb_numa_interleave 参数，而其内存可能分布在多个 NUMA 节点：缓冲池会集"
        "中"
        "在分配线程所在的节点。可用 numactl --interleave=all 启动 mysqld，或把虚拟机绑定到一个节点。"
    ),
)
def numa_interleave_unavailable(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        db = host.database
        if not db or not _interleave_missing(db) or not _db_on_multinode(ctx, host):
            continue
        yield finding(
            "mysql.numa_interleave_unavailable",
            host,
            values={"server": _version(db) or _flavour(db)},
            evidence=[
                evidence(host, "database.version", _version(db), db, "version"),
                evidence(
                    host, "database.variables.innodb_numa_interleave", None, db, "innodb_numa_interleave"
                ),
            ],
        )


def _populate_events(db: DatabaseFacts) -> list[tuple[DbEvent, DbEvent]]:
    """(interleave event, default event) pairs from the error log / syslog."""
    start = None
    pairs: list[tuple[DbEvent, DbEvent]] = []
    for event in db.events:
        text = f"{event.data.get('policy', '')} {event.message}".upper()
        if "MPOL_INTERLEAVE" in text:
            start = event
        elif "MPOL_DEFAULT" in text and start is not None:
            pairs.append((start, event))
            start = None
    return pairs


@rule(
    "mysql.numa_interleave_populate_startup",
    severity="warning",
    title="Start-up pre-faults the whole buffer pool",
    title_zh="启动时预分配整个缓冲池",
    condition=(
        "Percona Server >= 5.6.40-83.2 / >= 5.7.22-22 with innodb_numa_interleave = ON and large_pages not "
        "ON "
        "(PS-3967: the pool is mapped with MAP_POPULATE, about 1 s per GB at start-up); or the error log "
        "shows "
        f"MPOL_INTERLEAVE -> MPOL_DEFAULT taking >= {POPULATE_SLOW_SECONDS} s"
    ),
    condition_zh=(
        "Percona Server >= 5.6.40-83.2 / >= 5.7.22-22，innodb_numa_interleave = ON 且 large_pages 不为 ON（"
        "PS-3967：缓冲池以 MAP_POPULATE 映射，启动时约每 GB 1 s）；或错误日志显示 MPOL_INTERLEAVE -> "
        f"MPOL_DEFAULT 耗时 >= {POPULATE_SLOW_SECONDS} s"
    ),
    requires=("db_variables", "db_events"),
    requires_mode="any",
    # the build and its settings; an error log that shows the slow start decides alone
    relevant=lambda ctx, h: ("db_version", "db_variables") if h.database is not None else (),
    measures=("shrink-buffer-pool", "disable-numa-interleave", "buffer-pool-dump-load", "mysql-large-pages"),
    seeds=("percona-numa-interleave-startup",),
    thresholds={
        "slow_seconds": POPULATE_SLOW_SECONDS,
        "percona_since": {"5.6": "5.6.40-83.2", "5.7": "5.7.22-22"},
    },
    references=("https://jira.percona.com/browse/PS-3967",),
    rationale=(
        "PS-3967: MAP_POPULATE faults the whole pool in at start-up, about 1 s per GB (432 GB: ~440 s). 60 "
        "s in the error log between MPOL_INTERLEAVE and MPOL_DEFAULT is where a restart or fail-over "
        "becomes an outage of its own."
    ),
    rationale_zh=(
        "PS-3967：MAP_POPULATE 在启动时通过缺页预先载入整个缓冲池，约每 GB 1 s（432 GB：约 440 s）。错误日志"
        "中 MPOL_INTERLEAVE 与 MPOL_DEFAULT 之间相隔 60 s 时，重启或故障切换本身就会变成一次停机。"
    ),
    explanations={
        "sized": (
            "With innodb_numa_interleave this Percona build touches every page of the {pool_gib} GiB buffer "
            "pool while starting (MAP_POPULATE, PS-3967), roughly one second per GB: restarts and fail-overs "
            "take minutes.",
            "开启 innodb_numa_interleave 后，此 Percona 版本在启动时会逐页预分配 {pool_gib} GiB 缓冲池（"
            "MAP_POPULATE，PS-3967），约每 GB 一秒：重启和切换要耗时数分钟。",
        ),
        "unsized": (
            "With innodb_numa_interleave this Percona build touches every page of the buffer pool while "
            "starting (MAP_POPULATE, PS-3967), roughly one second per GB: restarts and fail-overs take "
            "minutes.",
            "开启 innodb_numa_interleave 后，此 Percona 版本在启动时会逐页预分配 缓冲池（MAP_POPULATE，PS-396"
            "7"
            "），"
            "约每 GB 一秒：重启和切换要耗时数分钟。",
        ),
    },
)
def numa_interleave_populate_startup(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        db = host.database
        if not db:
            continue
        ev = _slow_populate_evidence(host, db) + _populating_version_evidence(host, db)
        if not ev:
            continue
        pool = size_bytes(db.variables.get("innodb_buffer_pool_size"))
        yield finding(
            "mysql.numa_interleave_populate_startup",
            host,
            "sized" if pool else "unsized",
            values={"pool_gib": pool // 1024**3} if pool else {},
            evidence=ev,
        )


def _slow_populate_evidence(host: HostFacts, db: DatabaseFacts) -> list[Evidence]:
    """The log's MPOL_INTERLEAVE -> MPOL_DEFAULT pairs at least
    POPULATE_SLOW_SECONDS apart, and how long each took."""
    ev = []
    for start, end in _populate_events(db):
        if (
            start.seconds is None
            or end.seconds is None
            or end.seconds - start.seconds < POPULATE_SLOW_SECONDS
        ):
            continue
        ev.append(evidence(host, "database.events.numa_policy", start.message, db, line=start.line))
        ev.append(evidence(host, "database.events.numa_policy", end.message, db, line=end.line))
        ev.append(evidence(host, "database.startup_populate_seconds", end.seconds - start.seconds, db))
    return ev


def _populating_version_evidence(host: HostFacts, db: DatabaseFacts) -> list[Evidence]:
    """The version and the setting, when a Percona server that pre-faults the
    interleaved pool (PERCONA_POPULATE_SINCE) runs with innodb_numa_interleave
    ON. With large pages the pool comes from the huge page pool (shmget), not
    from an mmap(MAP_POPULATE) that faults every page in."""
    interleave = as_bool(db.variables.get("innodb_numa_interleave"))
    large_pages = as_bool(db.variables.get("large_pages"))
    if not interleave or large_pages or not _percona_populates(db):
        return []
    return [
        evidence(host, "database.version", _version(db), db, "version"),
        evidence(host, "database.variables.innodb_numa_interleave", "ON", db, "innodb_numa_interleave"),
    ]


def _percona_populates(db: DatabaseFacts) -> bool:
    """Whether the server is a Percona release that pre-faults an interleaved
    buffer pool (PERCONA_POPULATE_SINCE)."""
    parsed = _parse_version(_version(db))
    if not parsed or _flavour(db) != "percona":
        return False
    since = PERCONA_POPULATE_SINCE.get(parsed[0][:2])
    return since is not None and (parsed[0], parsed[1] or 0.0) >= since


def _large_pools(ctx: RuleContext) -> Iterator[tuple[HostFacts, DatabaseFacts, int]]:
    """Each host whose server has a buffer pool of LARGE_POOL_BYTES or more,
    with its server and the pool's size in bytes."""
    for host in ctx.hosts:
        db = host.database
        pool = size_bytes(db.variables.get("innodb_buffer_pool_size")) if db else None
        if db and pool and pool >= LARGE_POOL_BYTES:
            yield host, db, pool


@rule(
    "mysql.buffer_pool_not_persisted",
    severity="warning",
    title="Large buffer pool is not dumped and reloaded",
    title_zh="大缓冲池未开启导出与加载",
    condition=(
        f"innodb_buffer_pool_size >= {LARGE_POOL_BYTES // 1024**3} GiB with "
        "innodb_buffer_pool_dump_at_shutdown "
        "or innodb_buffer_pool_load_at_startup OFF"
    ),
    condition_zh=(
        f"innodb_buffer_pool_size >= {LARGE_POOL_BYTES // 1024**3} GiB，且 "
        "innodb_buffer_pool_dump_at_shutdown 或 innodb_buffer_pool_load_at_startup 为 OFF"
    ),
    requires=("db_variables",),
    measures=("buffer-pool-dump-load",),
    seeds=("percona-numa-interleave-startup",),
    thresholds={"large_pool_bytes": LARGE_POOL_BYTES},
    rationale=(
        "A cold pool is refilled by reads at disk speed: from 16 GiB that is tens of minutes to hours of "
        "slow queries after every restart, while dump/load costs seconds. Smaller pools warm within "
        "minutes. past = pool / 16 GiB."
    ),
    rationale_zh=(
        "冷缓冲池要靠读取以磁盘速度重新填满：从 16 GiB 起，每次重启后会有几十分钟到几小时的慢查询，而导出/加"
        "载只需几秒。更小的缓冲池几分钟内就能预热。past = 缓冲池 / 16 GiB。"
    ),
    relevant=lambda ctx, h: ("db_variables",) if h.database is not None else (),
    explanation=(
        "The {pool_gib} GiB buffer pool starts cold after every restart: {off} is OFF, so warming it up "
        "again takes hours of slow queries."
    ),
    explanation_zh="{pool_gib} GiB 的缓冲池每次重启后都是冷的：{off} 为 OFF，重新预热需要数小时的慢查询。",
)
def buffer_pool_not_persisted(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, db, pool in _large_pools(ctx):
        off = [
            k
            for k in ("innodb_buffer_pool_dump_at_shutdown", "innodb_buffer_pool_load_at_startup")
            if as_bool(db.variables.get(k)) is False
        ]
        if not off:
            continue
        yield finding(
            "mysql.buffer_pool_not_persisted",
            host,
            values={"pool_gib": pool // 1024**3, "off": ", ".join(off)},
            evidence=[evidence(host, f"database.variables.{k}", "OFF", db, k) for k in off],
            past=pool / LARGE_POOL_BYTES,
        )


@rule(
    "mysql.large_pages_off",
    severity="warning",
    title="Large buffer pool without large pages",
    title_zh="大缓冲池未使用大页",
    condition=f"innodb_buffer_pool_size >= {LARGE_POOL_BYTES // 1024**3} GiB and large_pages = OFF",
    condition_zh=f"innodb_buffer_pool_size >= {LARGE_POOL_BYTES // 1024**3} GiB 且 large_pages = OFF",
    requires=("db_variables",),
    measures=("mysql-large-pages", "static-hugepages"),
    seeds=("percona-numa-interleave-startup",),
    thresholds={"large_pool_bytes": LARGE_POOL_BYTES},
    rationale=(
        "From 16 GiB the pool's 4 KiB page tables alone are tens of MiB per process and TLB misses dominate "
        "random access; with NUMA interleave the start-up also faults every page in (PS-3967). past = pool "
        "/ 16 GiB."
    ),
    rationale_zh=(
        "从 16 GiB 起，仅缓冲池的 4 KiB 页表每个进程就有几十 MiB，TLB 未命中主导随机访问；开启 NUMA 交织时，"
        "启动过程还会对每一页触发缺页载入（PS-3967）。past = 缓冲池 / 16 GiB。"
    ),
    relevant=lambda ctx, h: ("db_variables",) if h.database is not None else (),
    explanation=(
        "The {pool_gib} GiB buffer pool uses 4 KiB pages: millions of page-table entries, frequent TLB "
        "misses, and with NUMA interleave a start-up that faults every page in."
    ),
    explanation_zh=(
        "{pool_gib} GiB 的缓冲池使用 4 KiB 页：页表项数以百万计，TLB 未命中频繁，开启 NUMA 交织时启动还要逐页"
        "缺页。"
    ),
)
def large_pages_off(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host, db, pool in _large_pools(ctx):
        if as_bool(db.variables.get("large_pages")) is not False:
            continue
        yield finding(
            "mysql.large_pages_off",
            host,
            values={"pool_gib": pool // 1024**3},
            evidence=[evidence(host, "database.variables.large_pages", "OFF", db, "large_pages")],
            past=pool / LARGE_POOL_BYTES,
        )

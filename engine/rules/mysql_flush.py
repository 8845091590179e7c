"""InnoDB data files read and written through the kernel's page cache.

With ``innodb_flush_method`` = fsync (or O_DSYNC, or the default that means
fsync on the server's version: MySQL and Percona up to 8.0, MariaDB before
10.6), every page InnoDB reads into its buffer pool is also kept in the page
cache, and every page it writes passes through it: the same data twice in RAM.
With a pool that is a large share of RAM the kernel then has to choose between
the two copies, and it regularly evicts the pool (swaps mysqld out) to keep the
cache; on a NUMA host the cache fills the node mysqld allocates on and its
pages go remote or to swap.

Severity. The setting alone is **info**: it is MySQL's own default through 8.0,
the MySQL manual presents O_DIRECT as an option whose benefit depends on the
hardware and workload, and NetApp measured fsync faster than O_DIRECT over NFS;
MariaDB changed its default to O_DIRECT only in 10.6 (MDEV-24854). It is a
**warning** when the facts show a buffer pool of at least half the host's RAM:
then the pool and its page-cache copy cannot both fit, which is the shape of the
published incidents (a 7 GB pool on an 8 GB Debian host that "swapped
constantly"; a 16 GB MySQL 5.7 VM swapping with 4.9 GB in the page cache). A
pool the facts show to be small (under half of RAM, or under 1 GiB when RAM is
not known) is not reported.
"""

from __future__ import annotations

from collections.abc import Iterator

from collectors.derived.database import FlushMethod, innodb_flush_method
from collectors.facts import HostFacts
from engine.rules import (
    Evidence,
    Phrase,
    RuleContext,
    RuleFinding,
    db_pool_bytes,
    evidence,
    finding,
    host_ram_kb,
    is_multinode,
    rule,
)

RULE_ID = "mysql.flush_method_buffered"
# the pool is a sizeable share of RAM from here: it and its page-cache copy no longer fit
POOL_SHARE_WARN = 0.5
# with RAM unknown, a pool under this leaves room on any current server
SMALL_POOL_BYTES = 1024**3


def _needs_flush_method(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    return ("db_flush_method",) if host.database is not None else ()


def _template(share: float | None, host: HostFacts) -> str:
    if share is None:
        return "unsized"
    return "share_numa" if is_multinode(host) else "share"


def _how(flush: FlushMethod) -> str:
    if flush.how != "default":
        return "how_set"
    return "how_default" if flush.variable == "version" else "how_empty"


def _judged(pool: int | None, ram_kb: int | None) -> tuple[bool, float | None]:
    """(report it, the pool's share of RAM when both are known)."""
    if pool is not None and ram_kb:
        share = pool / (ram_kb * 1024)
        return share >= POOL_SHARE_WARN, share
    return pool is None or pool >= SMALL_POOL_BYTES, None


def _evidence(host: HostFacts, flush: FlushMethod, pool: int | None, ram_kb: int | None) -> list[Evidence]:
    db = host.database
    if flush.how == "default" and flush.variable == "version":
        ev = [evidence(host, "database.version", db.version if db else None, db, "version")]
    else:
        ev = [evidence(host, f"database.variables.{flush.variable}", flush.method, db, flush.variable)]
    if pool is not None:
        ev.append(
            evidence(host, "database.variables.innodb_buffer_pool_size", pool, db, "innodb_buffer_pool_size")
        )
    if ram_kb:
        ev.append(evidence(host, "memory.total_kb", ram_kb, host.meminfo, "MemTotal"))
    return ev


_BODY_EN = (
    "InnoDB on {host} opens its data files with innodb_fl"
    "ush_method = {method}{how}: every page of the buffer "
    "pool is kept a second time in the kernel's page cache."
)
_BODY_ZH = (
    "{host} 上的 InnoDB 以 innodb_flush_method = {method}{how} 打开数据文件："
    "缓冲池的每一页都在内核页缓存中再存一份。"
)


@rule(
    RULE_ID,
    severity="warning",
    title="InnoDB data pages are cached twice (buffer pool and page cache)",
    title_zh="InnoDB 数据页被缓存两次（缓冲池和页缓存）",
    condition=(
        "MySQL/MariaDB/Percona: innodb_flush_method is fsync, "
        "fdatasync or O_DSYNC, or printed empty (MySQL/Percona "
        "5.x print their default, fsync, so; MariaDB 11's in"
        "nodb_data_file_buffering = ON likewise); a variable "
        "list that does not show it leaves the rule not checked; warning when innodb_buffer_pool_size >= "
        f"{POOL_SHARE_WARN:.0%} of RAM, info when the facts do not show both; not reported when the pool is "
        f"under {POOL_SHARE_WARN:.0%} of RAM, or under {SMALL_POOL_BYTES // 1024**3} GiB with RAM unknown"
    ),
    condition_zh=(
        "MySQL/MariaDB/Percona：innodb_flush_method 为 fsy"
        "nc、fdatasync 或 O_DSYNC，或显示为空（MySQL/Percona 5.x "
        "以空值显示其默认值 fsync；MariaDB 11 的 innodb_data"
        "_file_buffering = ON 同理）；变量列表中没有它时本规则不检查；"
        f"innodb_buffer_pool_size >= 内存的 {POOL_SHARE_WARN:.0%}"
        f" 时为 warning，事实中看不到两者时为 info；缓冲池小于"
        f"内存的 {POOL_SHARE_WARN:.0%}，或内存未知而缓冲池小于 {SMALL_POOL_BYTES // 1024**3} GiB 时不报告"
    ),
    requires=("db_flush_method",),
    relevant=_needs_flush_method,
    measures=("innodb-flush-method-o-direct", "disable-swap-for-db"),
    thresholds={"pool_share_warning": POOL_SHARE_WARN, "small_pool_bytes": SMALL_POOL_BYTES},
    references=(
        "https://dev.mysql.com/doc/refman/8.0/en/innodb-parameters.html#sysvar_innodb_flush_method",
        "https://mariadb.com/kb/en/innodb-flush-method/",
        "https://blog.pythian.com/mysql-swapping-with-fsync/",
    ),
    rationale=(
        "With fsync InnoDB's reads and writes go through the page cache, so the pages of the buffer pool are "
        "held twice. Half of RAM is where the pool and its c"
        "opy stop fitting side by side and the kernel starts "
        "evicting one to keep the other: Kevin Burton's Deb"
        "ian hosts (7 GB pool, 8 GB RAM) swapped constantly "
        "until O_DIRECT, and Pythian's MySQL 5.7 VM (16 GB, default fsync) swapped 821 MB with 4.9 GB in the "
        "page cache. The setting alone stays info: it is MySQL's default through 8.0, the manual ties "
        "O_DIRECT's benefit to the hardware, and NetApp fou"
        "nd fsync faster over NFS. past = pool share / 50 %."
    ),
    rationale_zh=(
        "使用 fsync 时 InnoDB 的读写都经过页缓存，缓冲池"
        "中的页被存了两份。内存的一半是缓冲池与其副本无法并存、内核开始"
        "为保留一份而驱逐另一份的分界：Kevin Burton 的 Debian"
        " 主机（7 GB 缓冲池，8 GB 内存）在改用 O_DIRECT 之前"
        "不停地换页，Pythian 的 MySQL 5.7 虚拟机（16 GB，默"
        "认 fsync）页缓存占 4.9 GB 时换出了 821 MB。仅有该设置时"
        "只报 info：它是 MySQL 至 8.0 的默认值，官方手册说 O_D"
        "IRECT 的收益取决于硬件，NetApp 在 NFS 上测得 fsync "
        "更快。past = 缓冲池占比 / 50 %。"
    ),
    peer=(
        "MySQLTuner (innodb_flush_method recommendation: O_D"
        "IRECT on Linux); pt-variable-advisor has no check; "
        "Percona's and MariaDB's tuning guides (O_DIRECT)"
    ),
    explanations={
        "share": (
            _BODY_EN
            + " The {pool_gib:.1f} GiB pool is {share:.0%} of the {ram_gib:.1f} GiB of RAM, so the pool "
            "and its copy cannot both stay in memory: the kerne"
            "l evicts one, and mysqld's own memory goes to swap.",
            _BODY_ZH
            + "{pool_gib:.1f} GiB 的缓冲池占 {ram_gib:.1f} GiB 内存的 {share:.0%}，缓冲池与其副本无法同时"
            "留在内存中：内核会驱逐其一，mysqld 自己的内存被换出。",
        ),
        "share_numa": (
            _BODY_EN
            + " The {pool_gib:.1f} GiB pool is {share:.0%} of the {ram_gib:.1f} GiB of RAM, so the pool "
            "and its copy cannot both stay in memory, and on th"
            "is NUMA host the page cache fills the node mysqld "
            "allocates on: its pages go to the remote node or to swap.",
            _BODY_ZH
            + "{pool_gib:.1f} GiB 的缓冲池占 {ram_gib:.1f} GiB 内存的 {share:.0%}，缓冲池与其副本无法同时"
            "留在内存中；在这台 NUMA 主机上，页缓存会占满 m"
            "ysqld 分配内存的节点：其页面落到远端节点或被换出。",
        ),
        "unsized": (
            _BODY_EN
            + " The facts do not show the pool's share of RAM; with a pool of half the RAM or more the two "
            "copies no longer fit and mysqld is swapped out.",
            _BODY_ZH
            + "事实中看不到缓冲池占内存的比例；缓冲池达到内存一半或以上时两份副本放不下，mysqld 会被换出。",
        ),
        "how_default": (" (printed empty: this version's default)", "（显示为空：该版本的默认值）"),
        "how_set": (" (as set)", "（按所设）"),
        "how_empty": (
            " (printed empty: MySQL 5.x's default, which is fsync)",
            "（显示为空：MySQL 5.x 的默认值，即 fsync）",
        ),
    },
)
def flush_method_buffered(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        flush = innodb_flush_method(host.database)
        if flush is None or not flush.buffered:
            continue
        pool, ram_kb = db_pool_bytes(host), host_ram_kb(host)
        report, share = _judged(pool, ram_kb)
        if report:
            yield _buffered_finding(host, flush, pool, ram_kb, share)


def _buffered_finding(
    host: HostFacts, flush: FlushMethod, pool: int | None, ram_kb: int | None, share: float | None
) -> RuleFinding:
    """The finding for a buffered flush method: a warning when the pool's
    ``share`` of the RAM is known, else info."""
    return finding(
        RULE_ID,
        host,
        _template(share, host),
        values={
            "method": flush.method,
            "how": Phrase(_how(flush)),
            "pool_gib": (pool or 0) / 1024**3,
            "share": share or 0.0,
            "ram_gib": (ram_kb or 0) / 1024**2,
        },
        evidence=_evidence(host, flush, pool, ram_kb),
        severity="warning" if share is not None else "info",
        past=(share or 0.0) / POOL_SHARE_WARN,
    )

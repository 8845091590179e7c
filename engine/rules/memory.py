"""Memory policy rules: static huge pages, database memory versus node size,
DIMM population."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from collectors.derived.memory import static_hugepages
from collectors.facts import Dimm, Domain, HostFacts, MemoryDevices
from engine.rules import (
    Evidence,
    Joined,
    Phrase,
    RuleContext,
    RuleFinding,
    as_bool,
    db_pool_bytes,
    domain_label,
    evidence,
    finding,
    host_domains,
    host_of_guest,
    host_ram_kb,
    is_multinode,
    is_vm_host,
    node_mem_totals_kb,
    numa_evidence,
    rule,
)
from engine.severity import severity_rank

__all__ = ["static_hugepages"]  # derived, re-exported

# memory.db_exceeds_node: ignore pools that are a small share of a node anyway
DB_EXCEEDS_NODE_RATIO = 1.0  # buffer pool / smallest node memory


# memory.hugepages_absent: with 4 KiB pages a pool of P bytes needs P/4096 page-table
# entries; a second-level TLB (1.5-2k entries) covers 6-8 MiB of it. From a few GiB
# on, page walks are a measurable share of every buffer-pool access (5-10 % in
# published MySQL/Oracle large-page measurements); below 1 GiB they are noise.
HUGEPAGES_POOL_WARN_BYTES = 8 * 1024**3
HUGEPAGES_POOL_WARN_SHARE = 0.25  # of the host's RAM ...
HUGEPAGES_POOL_SHARE_MIN_BYTES = 2 * 1024**3  # ... for a pool of at least this much
HUGEPAGES_POOL_INFO_BYTES = 1024**3
HUGEPAGES_GUEST_WARN_KB = 16 * 1024**2  # the largest guest's memory
HUGEPAGES_GUEST_INFO_KB = 4 * 1024**2

GIB = 1024**3


def _largest_guest_kb(host: HostFacts) -> tuple[int, Domain] | None:
    """(memory in KiB, domain) of the guest with the most memory, the first of equals."""
    sized = [(mem, d) for d in host_domains(host) if (mem := d.current_memory_kb or d.memory_kb)]
    return max(sized, key=lambda s: s[0], default=None)


def _db_host(host: HostFacts) -> bool:
    """A database host. Its huge pages are this rule's question whatever MySQL's
    large_pages says: with no pages reserved, large_pages=ON falls back to 4 KiB
    pages (mysql.large_pages_off covers the database's own setting)."""
    return host.database is not None


def _hugepages_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    if is_vm_host(host):
        return ("hugepages", "domains")
    if _db_host(host):
        pool = db_pool_bytes(host)
        if pool is None:
            return ("db_variables", "hugepages")
        if pool >= HUGEPAGES_POOL_INFO_BYTES:
            return ("hugepages", "meminfo")
    return ()


@dataclass(frozen=True)
class _Sized:
    """What makes huge pages matter on a host (its largest guest, or its
    database's buffer pool): how much, with the rule's phrase for it."""

    severity: str
    past: float  # how far past the threshold of that severity
    evidence: Evidence
    why: Phrase  # the rule's phrase "vm", "db" or "db_share"


def _largest_guest_size(host: HostFacts) -> _Sized | None:
    """The largest guest of a VM host, when it is large enough to matter."""
    largest = _largest_guest_kb(host) if is_vm_host(host) else None
    if largest is None or largest[0] < HUGEPAGES_GUEST_INFO_KB:
        return None
    mem, d = largest
    warn = mem >= HUGEPAGES_GUEST_WARN_KB
    return _Sized(
        severity="warning" if warn else "info",
        past=mem / (HUGEPAGES_GUEST_WARN_KB if warn else HUGEPAGES_GUEST_INFO_KB),
        evidence=evidence(host, f"domains[{domain_label(d)}].memory_kb", mem, d, "currentMemory", "memory"),
        why=Phrase("vm", {"guest": domain_label(d), "guest_gib": mem / 1024**2}),
    )


def ram_share(host: HostFacts, pool: int) -> float:
    """``pool`` bytes as a share of the host's RAM (0.0: RAM unknown)."""
    ram_kb = host_ram_kb(host)
    return pool / (ram_kb * 1024) if ram_kb else 0.0


def pool_severity(host: HostFacts, pool: int) -> tuple[str | None, float]:
    """(severity, past) for huge pages of a memory pool of ``pool`` bytes on
    ``host`` (a buffer pool, shared_buffers, an SGA); (None, 1.0) below the
    info threshold."""
    share = ram_share(host, pool)
    if pool >= HUGEPAGES_POOL_WARN_BYTES or (
        pool >= HUGEPAGES_POOL_SHARE_MIN_BYTES and share >= HUGEPAGES_POOL_WARN_SHARE
    ):
        return "warning", max(pool / HUGEPAGES_POOL_WARN_BYTES, share / HUGEPAGES_POOL_WARN_SHARE)
    if pool >= HUGEPAGES_POOL_INFO_BYTES:
        return "info", pool / HUGEPAGES_POOL_INFO_BYTES
    return None, 1.0


def _buffer_pool_size(host: HostFacts) -> _Sized | None:
    """The buffer pool of a database host, when it is large enough to matter."""
    pool = db_pool_bytes(host) if _db_host(host) else None
    if not pool:
        return None
    severity, past = pool_severity(host, pool)
    if severity is None:
        return None
    share = ram_share(host, pool)
    return _Sized(
        severity=severity,
        past=past,
        evidence=evidence(
            host, "database.variables.innodb_buffer_pool_size", pool, host.database, "innodb_buffer_pool_size"
        ),
        why=Phrase("db_share" if share else "db", {"pool_gib": pool / GIB, "share": share}),
    )


def _sizes_that_matter(host: HostFacts) -> list[_Sized]:
    """The host's largest guest and its buffer pool, those large enough for huge pages to matter."""
    return [s for s in (_largest_guest_size(host), _buffer_pool_size(host)) if s is not None]


def _static_hugepages_evidence(host: HostFacts, path: str, count: int, parsed: object) -> Evidence:
    """The fact that says no static huge page is reserved: per node, or the host's."""
    if path.startswith("numa."):
        nodes = host.numa.nodes if host.numa else ()
        return numa_evidence(host, path, count, "NodeMeminfo", *(f"{n}.HugePages_Total" for n in nodes))
    return evidence(host, path, count, parsed, "HugePages_Total", "nr_hugepages", "vm.nr_hugepages")


@rule(
    "memory.hugepages_absent",
    severity="warning",
    title="No static huge pages on a VM or database host",
    title_zh="虚拟化或数据库主机未配置静态大页",
    condition=(
        "0 static huge pages (HugePages_Total / vm.nr_hugepages) and no guest uses memoryBacking hugepages, "
        f"on a VM host whose largest guest has >= {HUGEPAGES_GUEST_WARN_KB // 1024**2} GiB, or a database "
        f"host whose buffer pool is >= {HUGEPAGES_POOL_WARN_BYTES // GIB} GiB or >= "
        f"{HUGEPAGES_POOL_WARN_SHARE:.0%} of RAM (pools from {HUGEPAGES_POOL_SHARE_MIN_BYTES // GIB} GiB); "
        f"info from a {HUGEPAGES_GUEST_INFO_KB // 1024**2} GiB guest or a "
        f"{HUGEPAGES_POOL_INFO_BYTES // GIB} GiB pool; nothing below. Domains of libvirt's test driver are "
        "not guests; the database's own large_pages setting is mysql.large_pages_off's"
    ),
    condition_zh=(
        "静态大页为 0（HugePages_Total / vm.nr_hugepages）且没有虚拟机使用 memoryBacking hugepages，所在主机"
        f"为最大虚拟机内存 >= {HUGEPAGES_GUEST_WARN_KB // 1024**2} GiB 的虚拟化主机，或缓冲池 >= "
        f"{HUGEPAGES_POOL_WARN_BYTES // GIB} GiB 或 >= 内存 {HUGEPAGES_POOL_WARN_SHARE:.0%}（缓冲池 "
        f"{HUGEPAGES_POOL_SHARE_MIN_BYTES // GIB} GiB 起）的数据库主机；虚拟机从 "
        f"{HUGEPAGES_GUEST_INFO_KB // 1024**2} GiB、缓冲池从 {HUGEPAGES_POOL_INFO_BYTES // GIB} GiB 起为提示"
        "；更小则不报。libvirt test 驱动的域不算虚拟机；数据库自身的 large_pages 设置由 "
        "mysql.large_pages_off 检查"
    ),
    requires=("hugepages",),
    measures=("static-hugepages", "mysql-large-pages"),
    seeds=("zstack-mariadb-v2v", "percona-numa-interleave-startup"),
    thresholds={
        "static_hugepages": 0,
        "pool_warning_bytes": HUGEPAGES_POOL_WARN_BYTES,
        "pool_warning_share_of_ram": HUGEPAGES_POOL_WARN_SHARE,
        "pool_share_min_bytes": HUGEPAGES_POOL_SHARE_MIN_BYTES,
        "pool_info_bytes": HUGEPAGES_POOL_INFO_BYTES,
        "guest_warning_kb": HUGEPAGES_GUEST_WARN_KB,
        "guest_info_kb": HUGEPAGES_GUEST_INFO_KB,
    },
    rationale=(
        "With 4 KiB pages a second-level TLB (1.5-2k entries) maps 6-8 MiB; every access beyond that "
        "may walk four page-table levels. Published large-page measurements for InnoDB, Oracle SGA and KVM "
        "guests show 5-15 % throughput from a few GiB of hot memory on, and THP can be split or compacted at "
        "any time. A 128 MiB default pool fits in the caches and gains nothing worth a reserved pool. "
        "Warning from an 8 GiB pool (or a quarter of RAM, from 2 GiB) or a 16 GiB guest; info from 1 GiB / "
        "4 GiB, where the gain is real but small. past = pool / 8 GiB, share / 25 % or guest / 16 GiB."
    ),
    rationale_zh=(
        "使用 4 KiB 页时，二级 TLB（1.5-2k 个条目）只能映射 6-8 MiB；超出部分的每次访问都可能要遍历四级页表"
        "。已发表的 InnoDB、Oracle SGA 和 KVM 虚拟机大页测量显示，热内存从几 GiB 起可提升 5-15 % 吞吐量，而 "
        "THP 随时可能被拆分或规整。128 MiB 的默认缓冲池放得进缓存，不值得为它预留大页池。缓冲池 8 GiB 起（或"
        " 2 GiB 起占内存四分之一）或虚拟机 16 GiB 起为警告；1 GiB / 4 GiB 起为提示，此时收益真实但不大。past"
        " = 缓冲池 / 8 GiB、占比 / 25 % 或虚拟机内存 / 16 GiB。"
    ),
    relevant=_hugepages_relevant,
    explanations={
        "": (
            "{host} {why} but has no static huge pages. That memory is then backed by 4 KiB pages (or "
            "transparent huge pages that can be split and compacted at any time): more TLB misses and "
            "page-table walks, and no guarantee the memory stays on one node.",
            "{host} {why}，但没有配置静态大页。这些内存只能用 4 KiB 页（或随时可能被拆分、整理的透明大页），"
            "TLB 未命中和页表遍历更多，也无法保证内存固定在一个节点上。",
        ),
        "vm": (
            "runs virtual machines (the largest, {guest}, has {guest_gib:.0f} GiB)",
            "运行虚拟机（最大的 {guest} 有 {guest_gib:.0f} GiB 内存）",
        ),
        "db": (
            "runs a database with a {pool_gib:.1f} GiB buffer pool",
            "运行缓冲池为 {pool_gib:.1f} GiB 的数据库",
        ),
        "db_share": (
            "runs a database with a {pool_gib:.1f} GiB buffer pool, {share:.0%} of its RAM",
            "运行缓冲池为 {pool_gib:.1f} GiB 的数据库",
        ),
        "and": (" and ", "，并"),
    },
)
def hugepages_absent(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        sizes = _sizes_that_matter(host)
        if not sizes or any(d.hugepages for d in host_domains(host)):
            continue
        count, parsed, path = static_hugepages(host)
        if count is not None and count <= 0:
            yield _hugepages_absent_finding(
                host, sizes, _static_hugepages_evidence(host, path, count, parsed)
            )


def _hugepages_absent_finding(host: HostFacts, sizes: list[_Sized], pool_ev: Evidence) -> RuleFinding:
    """memory.hugepages_absent for what makes huge pages matter (``sizes``),
    after the evidence of the empty pool (``pool_ev``): the worst severity of
    them, a VM host's measure or a database's."""
    return finding(
        "memory.hugepages_absent",
        host,
        values={"why": Joined("and", tuple(s.why for s in sizes))},
        evidence=[pool_ev, *(s.evidence for s in sizes)],
        measures=["static-hugepages"] if is_vm_host(host) else ["mysql-large-pages", "static-hugepages"],
        severity=min((s.severity for s in sizes), key=severity_rank),
        past=max(1.0, *(s.past for s in sizes)),
    )


def _nodes_of(ctx: RuleContext, host: HostFacts) -> tuple[HostFacts, dict[int, int]]:
    """The host whose NUMA nodes ``host``'s memory comes from, with their
    memory (kB): the host itself, or the hypervisor of a guest that shows
    fewer than two nodes of its own (when the snapshot names it)."""
    totals = node_mem_totals_kb(host)
    hv = host_of_guest(ctx, host) if len(totals) < 2 and host.is_guest else None
    return (hv, node_mem_totals_kb(hv)) if hv is not None else (host, totals)


@rule(
    "memory.db_exceeds_node",
    severity="warning",
    title="Database buffer pool is larger than one NUMA node",
    title_zh="数据库缓冲池大于单个 NUMA 节点",
    condition=(
        "innodb_buffer_pool_size > the memory of the smallest NUMA node of the host it runs on (a guest: its "
        "own nodes, else its host's) and innodb_numa_interleave is not ON"
    ),
    condition_zh=(
        "innodb_buffer_pool_size 大于其所在主机最小 NUMA 节点的内存（虚拟机：其自身的节点，否则为其宿主机的"
        "节点），且 innodb_numa_interleave 不为 ON"
    ),
    requires=("db_variables", "node_meminfo"),
    measures=("disable-numa-interleave", "mariadb-numactl-interleave", "shrink-buffer-pool"),
    seeds=("percona-numa-interleave-startup",),
    thresholds={"pool_over_node": DB_EXCEEDS_NODE_RATIO},
    rationale=(
        "A pool that fits in one node can be placed there and every access stays local; one byte more "
        "and the default policy fills the local node to its watermark, after which that node swaps or "
        "allocates remotely for everything else. past = pool / smallest node."
    ),
    rationale_zh=(
        "放得进一个节点的缓冲池可以整个放在该节点上，所有访问都保持本地；只要多出一个字节，默认策略就会把本"
        "地节点填到水位，之后该节点对其他一切分配都要换出或远端分配。past = 缓冲池 / 最小节点。"
    ),
    relevant=lambda ctx, h: (
        ("db_variables", "node_meminfo") if h.database is not None and is_multinode(h) else ()
    ),
    explanation=(
        "The buffer pool ({pool_gib} GiB) does not fit in one NUMA node ({node_gib} GiB) and is allocated "
        "with the default policy: it fills the local node first, then spills, leaving one node exhausted "
        "(swapping or remote allocations for everything else there)."
    ),
    explanation_zh=(
        "缓冲池（{pool_gib} GiB）放不进单个 NUMA 节点（{node_gib} GiB），又按默认策略分配：先占满本地节点再溢"
        "出，"
        "使该节点内存耗尽，其他进程只能换页或远端分配。"
    ),
)
def db_exceeds_node(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        db, pool = host.database, db_pool_bytes(host)
        if db is None or not pool or as_bool(db.variables.get("innodb_numa_interleave")):
            continue
        topo_host, totals = _nodes_of(ctx, host)
        if len(totals) < 2:
            continue
        smallest = min(totals.values()) * 1024
        if pool <= DB_EXCEEDS_NODE_RATIO * smallest:
            continue
        yield finding(
            "memory.db_exceeds_node",
            host,
            values={"pool_gib": pool // 1024**3, "node_gib": smallest // 1024**3},
            evidence=[
                evidence(
                    host, "database.variables.innodb_buffer_pool_size", pool, db, "innodb_buffer_pool_size"
                ),
                evidence(topo_host, "numa.smallest_node_kb", smallest // 1024, topo_host.numa),
            ],
            past=pool / smallest,
        )


# memory.dimm_population_unbalanced
DIMM_SOCKET_RATIO_WARN = 1.25  # one socket holds this much more memory than another
DIMM_EMPTY_CHANNEL_SHARE_WARN = 0.25  # this share of a socket's channels hold no DIMM


def _dimm_groups(dimms: list[Dimm]) -> tuple[dict[int, int], dict[int, dict[str, list[int]]]]:
    """(socket -> populated MB, socket -> channel -> sizes of its populated DIMMs);
    channels named by empty slots only are kept with no sizes."""
    per_socket: dict[int, int] = defaultdict(int)
    channels: dict[int, dict[str, list[int]]] = defaultdict(lambda: defaultdict(list))
    for d in dimms:
        socket = d.socket if d.socket is not None else 0
        if d.size_mb:
            per_socket[socket] += d.size_mb
        if d.channel:
            sizes = channels[socket][d.channel]
            if d.size_mb:
                sizes.append(d.size_mb)
        elif d.size_mb is None and d.socket is not None:
            per_socket.setdefault(socket, 0)
    return per_socket, channels


def _cpu_nodes_uneven(host: HostFacts) -> bool:
    """A node with CPUs has no memory, or two of them differ by the socket ratio."""
    totals = [n.mem_total_kb() for n in host.numa.nodes.values() if n.cpus] if host.numa else []
    sized = [t for t in totals if t]
    return 0 in totals or (len(sized) >= 2 and max(sized) >= DIMM_SOCKET_RATIO_WARN * min(sized))


def _dimm_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """The hardware cause matters when nodes differ in size or have no memory."""
    if host.is_guest or not is_multinode(host):
        return ()
    return ("memory_devices",) if _cpu_nodes_uneven(host) else ()


def _socket_problem(per_socket: dict[int, int]) -> tuple[str, float, Phrase] | None:
    """(severity, past, the rule's phrase) when the sockets hold different
    amounts of memory."""
    if len(per_socket) < 2:
        return None
    sizes = sorted(per_socket.items())
    big, small = max(per_socket.values()), min(per_socket.values())
    listing = Joined(
        "socket_sep", tuple(Phrase("socket_size", {"socket": s, "gib": v // 1024}) for s, v in sizes)
    )
    if small == 0 or big >= DIMM_SOCKET_RATIO_WARN * small:
        past = big / small / DIMM_SOCKET_RATIO_WARN if small else 9.9
        return "warning", past, Phrase("sockets_differ", {"listing": listing})
    if big != small:
        return "info", 1.0, Phrase("sockets_differ_slightly", {"listing": listing})
    return None


def _channel_problems(socket: int, chans: dict[str, list[int]]) -> Iterator[tuple[str, float, Phrase]]:
    """(severity, past, the rule's phrase) for a socket's empty channels and
    for channels holding different sizes."""
    empty = sorted(c for c, sizes in chans.items() if not sizes)
    if empty:
        yield _empty_channels_problem(socket, empty, len(chans))
    totals = {c: sum(sizes) for c, sizes in chans.items() if sizes}
    if len(set(totals.values())) > 1:
        sizes_text = ", ".join(f"{c}: {v // 1024} GiB" for c, v in sorted(totals.items()))
        yield "info", 1.0, Phrase("channels_differ", {"socket": socket, "sizes": sizes_text})


def _empty_channels_problem(socket: int, empty: list[str], channels: int) -> tuple[str, float, Phrase]:
    """(severity, past, the rule's phrase) for the ``empty`` channels of a
    socket of ``channels``: a warning from DIMM_EMPTY_CHANNEL_SHARE_WARN of them."""
    share = len(empty) / channels
    values = {"socket": socket, "empty": len(empty), "channels": channels, "names": ", ".join(empty)}
    severity = "warning" if share >= DIMM_EMPTY_CHANNEL_SHARE_WARN else "info"
    return severity, share / DIMM_EMPTY_CHANNEL_SHARE_WARN, Phrase("channels_empty", values)


def _dimm_problems(
    per_socket: dict[int, int], channels: dict[int, dict[str, list[int]]]
) -> list[tuple[str, float, Phrase]]:
    """(severity, past, the rule's phrase) for each unevenness found: between
    sockets, then within each populated socket of two channels or more."""
    between = _socket_problem(per_socket)
    within = [
        problem
        for socket, chans in sorted(channels.items())
        if len(chans) >= 2 and per_socket.get(socket)
        for problem in _channel_problems(socket, chans)
    ]
    return [between, *within] if between else within


def _dimm_evidence(
    host: HostFacts,
    md: MemoryDevices,
    per_socket: dict[int, int],
    channels: dict[int, dict[str, list[int]]],
) -> list[Evidence]:
    """Memory per socket (cited at the first populated DIMM), then DIMMs per channel of each socket."""
    populated = [d for d in md.dimms if d.size_mb]
    first = populated[0] if populated else md.dimms[0]
    per_socket_mb = {str(s): v for s, v in sorted(per_socket.items())}
    return [
        evidence(host, "memory_devices.per_socket_mb", per_socket_mb, md, line=first.line),
        *(
            evidence(host, f"memory_devices.channels[{s}]", {c: len(v) for c, v in sorted(ch.items())}, md)
            for s, ch in sorted(channels.items())
            if ch
        ),
    ]


@rule(
    "memory.dimm_population_unbalanced",
    severity="warning",
    title="Memory DIMMs are populated unevenly",
    title_zh="内存条安装不均衡",
    condition=(
        "dmidecode -t memory: the sockets hold different amounts of memory (warning from "
        f"{DIMM_SOCKET_RATIO_WARN}x, or a socket without any DIMM), or >= "
        f"{DIMM_EMPTY_CHANNEL_SHARE_WARN:.0%} of a "
        "socket's channels are empty while others are populated (warning); any other difference in DIMM "
        "count or size between sockets or channels is info"
    ),
    condition_zh=(
        f"dmidecode -t memory：各插槽的内存容量不同（从 {DIMM_SOCKET_RATIO_WARN} 倍起，或某个插槽没有任何内存"
        f"条，为警告），或某个插槽 >= {DIMM_EMPTY_CHANNEL_SHARE_WARN:.0%} 的通道为空而其他通道已安装（警告）"
        "；插槽或通道之间内存条数量或容量的其他差异为提示"
    ),
    requires=("memory_devices",),
    measures=("rebalance-host-load", "numatune-memory-binding"),
    thresholds={
        "socket_ratio_warning": DIMM_SOCKET_RATIO_WARN,
        "empty_channel_share_warning": DIMM_EMPTY_CHANNEL_SHARE_WARN,
    },
    rationale=(
        "Each socket's memory is its NUMA node: a socket with 1.25x the memory of another makes the "
        "nodes differ by a fifth, so an even workload fills the smaller node first and spills remote "
        "(the hardware cause of numa.node_memory_imbalance), and a socket without DIMMs makes every "
        "node it serves memoryless. Memory bandwidth scales with populated channels: a quarter of them "
        "empty costs a quarter of the socket's bandwidth. Mixed DIMM sizes within balanced totals only "
        "change interleaving (info). past = largest / smallest socket, or the empty share / 25 %."
    ),
    rationale_zh=(
        "每个插槽的内存就是它的 NUMA 节点：一个插槽的内存是另一个的 1.25 倍，节点之间就相差五分之一，均匀的"
        "负载会先填满较小的节点并溢出到远端（numa.node_memory_imbalance 的硬件原因）；没有内存条的插槽会使它"
        "服务的每个节点都成为无内存节点。内存带宽随已安装的通道数增长：四分之一的通道为空，就损失该插槽四分"
        "之一的带宽。总量均衡时混用不同容量的内存条只改变交织方式（提示）。past = 最大 / 最小插槽，或空通道"
        "占比 / 25 %。"
    ),
    relevant=_dimm_relevant,
    explanations={
        "": (
            "On {host} {problems}. Each socket's DIMMs are its NUMA node's memory and its channels its "
            "bandwidth: uneven population makes the nodes unequal (one fills and spills to the other) or "
            "leaves bandwidth unused. Populate every socket and channel alike (same count and size); until "
            "then, place the largest workloads on the node with most memory.",
            "{host} 上{problems}。每个插槽的内存条就是其 NUMA 节点的内存，通道决定带宽：安装不均会使节点大小"
            "不等"
            "（一个先占满再溢出到另一个）或浪费带宽。应让每个插槽、每个通道安装相同数量和容量的内存条；在此之"
            "前，把最大的负载放在内存最多的节点上。",
        ),
        "problem_sep": ("; ", "；"),
        "sockets_differ": (
            "the sockets hold different amounts of memory ({listing})",
            "各插槽内存容量不同（{listing}）",
        ),
        "sockets_differ_slightly": (
            "the sockets differ slightly ({listing})",
            "各插槽内存容量略有差异（{listing}）",
        ),
        "socket_size": ("socket {socket}: {gib} GiB", "插槽 {socket}：{gib} GiB"),
        "socket_sep": (", ", "，"),
        "channels_empty": (
            "socket {socket} has {empty} of {channels} channels empty ({names})",
            "插槽 {socket} 的 {channels} 个通道中有 {empty} 个未装内存（{names}）",
        ),
        "channels_differ": (
            "socket {socket}'s channels hold different sizes ({sizes})",
            "插槽 {socket} 各通道容量不同（{sizes}）",
        ),
    },
)
def dimm_population_unbalanced(ctx: RuleContext) -> Iterator[RuleFinding]:
    for host in ctx.hosts:
        md = host.memory_devices
        if not md:
            continue
        per_socket, channels = _dimm_groups(md.dimms)
        problems = _dimm_problems(per_socket, channels)
        if not problems:
            continue
        yield finding(
            "memory.dimm_population_unbalanced",
            host,
            values={"problems": Joined("problem_sep", tuple(p[2] for p in problems))},
            evidence=_dimm_evidence(host, md, per_socket, channels),
            severity=min((p[0] for p in problems), key=severity_rank),
            past=max(p[1] for p in problems),
        )

"""Memory policy rules: static huge pages, database memory versus node size,
DIMM population."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator

from collectors.derived.memory import static_hugepages
from collectors.facts import Dimm, Domain, HostFacts
from engine.rules import (
    SEVERITIES,
    Evidence,
    Finding,
    Joined,
    Phrase,
    RuleContext,
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
    size_bytes,
)

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
    best: tuple[int, Domain] | None = None
    for d in host_domains(host):
        mem = d.current_memory_kb or d.memory_kb
        if mem and (best is None or mem > best[0]):
            best = (mem, d)
    return best


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


def _hugepages_magnitude(host: HostFacts) -> tuple[str | None, float, list[Evidence], Joined]:
    """(severity or None, how far past the threshold, evidence, why: the
    rule's phrases "vm" and "db" / "db_share")."""
    severity, past, ev, why = None, 1.0, [], []
    if is_vm_host(host):
        largest = _largest_guest_kb(host)
        if largest is not None and largest[0] >= HUGEPAGES_GUEST_INFO_KB:
            mem, d = largest
            warn = mem >= HUGEPAGES_GUEST_WARN_KB
            severity = "warning" if warn else "info"
            past = mem / (HUGEPAGES_GUEST_WARN_KB if warn else HUGEPAGES_GUEST_INFO_KB)
            ev.append(
                evidence(host, f"domains[{domain_label(d)}].memory_kb", mem, d, "currentMemory", "memory")
            )
            why.append(Phrase("vm", {"guest": domain_label(d), "guest_gib": mem / 1024**2}))
    if _db_host(host):
        pool = db_pool_bytes(host)
        ram_kb = host_ram_kb(host)
        share = pool / (ram_kb * 1024) if pool and ram_kb else 0.0
        db_sev, db_past = None, 1.0
        if pool and (
            pool >= HUGEPAGES_POOL_WARN_BYTES
            or (pool >= HUGEPAGES_POOL_SHARE_MIN_BYTES and share >= HUGEPAGES_POOL_WARN_SHARE)
        ):
            db_sev = "warning"
            db_past = max(pool / HUGEPAGES_POOL_WARN_BYTES, share / HUGEPAGES_POOL_WARN_SHARE)
        elif pool and pool >= HUGEPAGES_POOL_INFO_BYTES:
            db_sev, db_past = "info", pool / HUGEPAGES_POOL_INFO_BYTES
        if db_sev is not None and pool:
            db = host.database
            ev.append(
                evidence(
                    host, "database.variables.innodb_buffer_pool_size", pool, db, "innodb_buffer_pool_size"
                )
            )
            if severity is None or SEVERITIES.index(db_sev) < SEVERITIES.index(severity):
                severity = db_sev
            past = max(past, db_past)
            why.append(Phrase("db_share" if share else "db", {"pool_gib": pool / GIB, "share": share}))
    return severity, past, ev, Joined("and", tuple(why))


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
def hugepages_absent(ctx: RuleContext) -> Iterator[Finding]:
    for host in ctx.hosts:
        if not (is_vm_host(host) or _db_host(host)):
            continue
        if any(d.hugepages for d in host_domains(host)):
            continue
        count, parsed, path = static_hugepages(host)
        if count is None or count > 0:
            continue
        severity, past, sized_ev, why = _hugepages_magnitude(host)
        if severity is None:
            continue
        vm_host = is_vm_host(host)
        count_ev = (
            numa_evidence(
                host,
                path,
                count,
                "NodeMeminfo",
                *(f"{n}.HugePages_Total" for n in (host.numa.nodes if host.numa else ())),
            )
            if path.startswith("numa.")
            else evidence(host, path, count, parsed, "HugePages_Total", "nr_hugepages", "vm.nr_hugepages")
        )
        yield finding(
            "memory.hugepages_absent",
            host,
            values={"why": why},
            evidence=[count_ev, *sized_ev],
            measures=["static-hugepages"] if vm_host else ["mysql-large-pages", "static-hugepages"],
            severity=severity,
            past=past,
        )


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
def db_exceeds_node(ctx: RuleContext) -> Iterator[Finding]:
    for host in ctx.hosts:
        db = host.database
        if not db:
            continue
        pool = size_bytes(db.variables.get("innodb_buffer_pool_size"))
        if not pool:
            continue
        topo_host = host
        totals = node_mem_totals_kb(host)
        if len(totals) < 2 and host.is_guest:
            hv = host_of_guest(ctx, host)
            if hv is not None:
                topo_host, totals = hv, node_mem_totals_kb(hv)
        if len(totals) < 2:
            continue
        smallest = min(totals.values()) * 1024
        if pool <= DB_EXCEEDS_NODE_RATIO * smallest:
            continue
        if as_bool(db.variables.get("innodb_numa_interleave")):
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


def _dimm_relevant(ctx: RuleContext, host: HostFacts) -> tuple[str, ...]:
    """The hardware cause matters when nodes differ in size or have no memory."""
    if host.is_guest or not is_multinode(host) or not host.numa:
        return ()
    totals = [n.mem_total_kb() for n in host.numa.nodes.values() if n.cpus]
    if any(t == 0 for t in totals):
        return ("memory_devices",)
    sized = [t for t in totals if t]
    if len(sized) >= 2 and max(sized) >= DIMM_SOCKET_RATIO_WARN * min(sized):
        return ("memory_devices",)
    return ()


def _dimm_problems(
    per_socket: dict[int, int], channels: dict[int, dict[str, list[int]]]
) -> list[tuple[str, float, Phrase]]:
    """(severity, past, the rule's phrase) for each unevenness found."""
    out = []
    if len(per_socket) >= 2:
        sizes = sorted(per_socket.items())
        big, small = max(v for _, v in sizes), min(v for _, v in sizes)
        listing = Joined(
            "socket_sep", tuple(Phrase("socket_size", {"socket": s, "gib": v // 1024}) for s, v in sizes)
        )
        if small == 0 or big >= DIMM_SOCKET_RATIO_WARN * small:
            past = big / small / DIMM_SOCKET_RATIO_WARN if small else 9.9
            out.append(("warning", past, Phrase("sockets_differ", {"listing": listing})))
        elif big != small:
            out.append(("info", 1.0, Phrase("sockets_differ_slightly", {"listing": listing})))
    for socket, chans in sorted(channels.items()):
        if len(chans) < 2 or not per_socket.get(socket):
            continue
        empty = sorted(c for c, sizes in chans.items() if not sizes)
        totals = {c: sum(sizes) for c, sizes in chans.items() if sizes}
        if empty:
            share = len(empty) / len(chans)
            values = {
                "socket": socket,
                "empty": len(empty),
                "channels": len(chans),
                "names": ", ".join(empty),
            }
            out.append(
                (
                    "warning" if share >= DIMM_EMPTY_CHANNEL_SHARE_WARN else "info",
                    share / DIMM_EMPTY_CHANNEL_SHARE_WARN,
                    Phrase("channels_empty", values),
                )
            )
        if len(set(totals.values())) > 1:
            sizes_text = ", ".join(f"{c}: {v // 1024} GiB" for c, v in sorted(totals.items()))
            out.append(("info", 1.0, Phrase("channels_differ", {"socket": socket, "sizes": sizes_text})))
    return out


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
def dimm_population_unbalanced(ctx: RuleContext) -> Iterator[Finding]:
    for host in ctx.hosts:
        md = host.memory_devices
        if not md or not md.dimms:
            continue
        per_socket, channels = _dimm_groups(md.dimms)
        problems = _dimm_problems(per_socket, channels)
        if not problems:
            continue
        severity = min((p[0] for p in problems), key=SEVERITIES.index)
        past = max(p[1] for p in problems)
        if severity is None:
            continue
        populated = [d for d in md.dimms if d.size_mb]
        first = populated[0] if populated else md.dimms[0]
        yield finding(
            "memory.dimm_population_unbalanced",
            host,
            values={"problems": Joined("problem_sep", tuple(p[2] for p in problems))},
            evidence=[
                evidence(
                    host,
                    "memory_devices.per_socket_mb",
                    {str(s): v for s, v in sorted(per_socket.items())},
                    md,
                    line=first.line,
                ),
                *(
                    evidence(
                        host, f"memory_devices.channels[{s}]", {c: len(v) for c, v in sorted(ch.items())}, md
                    )
                    for s, ch in sorted(channels.items())
                    if ch
                ),
            ],
            severity=severity,
            past=past,
        )

"""Memory policy rules: static huge pages, database memory versus node size."""

from __future__ import annotations

from triage.rules import (
    RuleContext,
    as_bool,
    evidence,
    finding,
    host_name,
    host_of_guest,
    node_mem_totals_kb,
    numa_evidence,
    rule,
    size_bytes,
)

# memory.db_exceeds_node: ignore pools that are a small share of a node anyway
DB_EXCEEDS_NODE_RATIO = 1.0  # buffer pool / smallest node memory


def static_hugepages(host) -> tuple[int | None, object, str]:
    """(configured static huge pages, parsed fact, fact path), None when unknown."""
    if host.hugepages and host.hugepages.nr_hugepages is not None:
        return host.hugepages.nr_hugepages, host.hugepages, "hugepages.nr_hugepages"
    if host.meminfo and "HugePages_Total" in host.meminfo.values:
        return host.meminfo.values["HugePages_Total"], host.meminfo, "meminfo.HugePages_Total"
    if host.numa and any("HugePages_Total" in n.meminfo for n in host.numa.nodes.values()):
        total = sum(n.meminfo.get("HugePages_Total", 0) for n in host.numa.nodes.values())
        return total, host.numa, "numa.nodes.*.meminfo.HugePages_Total"
    value = host.sysctl_value("vm.nr_hugepages")
    if value is not None and value.strip().isdigit():
        return int(value), host.sysctl, "sysctl.vm.nr_hugepages"
    return None, None, ""


def _is_vm_host(host) -> bool:
    return bool(host.domains or (host.virsh_list and host.virsh_list.domains)) and not host.is_guest


@rule(
    "memory.hugepages_absent",
    severity="warning",
    title="No static huge pages on a VM or database host",
    title_zh="虚拟化或数据库主机未配置静态大页",
    condition=(
        "a VM host (domain XMLs or a virsh list) or a database host has 0 static huge pages "
        "(HugePages_Total / vm.nr_hugepages) and no guest uses memoryBacking hugepages; MySQL hosts whose "
        "large_pages variable is known are left to mysql.large_pages_off"
    ),
    requires=("hugepages",),
    measures=("static-hugepages", "mysql-large-pages"),
    seeds=("zstack-mariadb-v2v", "percona-numa-interleave-startup"),
    thresholds={"static_hugepages": 0},
)
def hugepages_absent(ctx: RuleContext):
    for host in ctx.hosts:
        db = host.database
        vm_host = _is_vm_host(host)
        db_host = db is not None and "large_pages" not in db.variables
        if not (vm_host or db_host):
            continue
        if any(d.hugepages for d in host.domains):
            continue
        count, parsed, path = static_hugepages(host)
        if count is None or count > 0:
            continue
        role_en = "runs virtual machines" if vm_host else "runs a database"
        role_zh = "运行虚拟机" if vm_host else "运行数据库"
        yield finding(
            "memory.hugepages_absent",
            host,
            f"{host_name(host)} {role_en} but has no static huge pages. Guest or buffer-pool memory is then "
            "backed by 4 KiB pages (or transparent huge pages that can be split and compacted at any time): "
            "more TLB misses and page-table walks, and no guarantee the memory stays on one node.",
            f"{host_name(host)} {role_zh}，但没有配置静态大页。虚拟机或缓冲池内存只能用 4 KiB 页（或随时可"
            "能被拆分、"
            "整理的透明大页），TLB 未命中和页表遍历更多，也无法保证内存固定在一个节点上。",
            evidence=[
                numa_evidence(
                    host, path, count, "NodeMeminfo", *(f"{n}.HugePages_Total" for n in host.numa.nodes)
                )
                if path.startswith("numa.")
                else evidence(host, path, count, parsed, "HugePages_Total", "nr_hugepages", "vm.nr_hugepages")
            ],
            measures=["static-hugepages"] if vm_host else ["mysql-large-pages", "static-hugepages"],
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
    requires=("db_variables", "node_meminfo"),
    measures=("disable-numa-interleave", "mariadb-numactl-interleave", "shrink-buffer-pool"),
    seeds=("percona-numa-interleave-startup",),
    thresholds={"pool_over_node": DB_EXCEEDS_NODE_RATIO},
)
def db_exceeds_node(ctx: RuleContext):
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
            f"The buffer pool ({pool // 1024**3} GiB) does not fit in one NUMA node ({smallest // 1024**3} "
            "GiB) "
            "and is allocated with the default policy: it fills the local node first, then spills, leaving "
            "one "
            "node exhausted (swapping or remote allocations for everything else there).",
            f"缓冲池（{pool // 1024**3} GiB）放不进单个 NUMA 节点（{smallest // 1024**3} GiB），又按默认策"
            "略分配："
            "先占满本地节点再溢出，使该节点内存耗尽，其他进程只能换页或远端分配。",
            evidence=[
                evidence(
                    host, "database.variables.innodb_buffer_pool_size", pool, db, "innodb_buffer_pool_size"
                ),
                evidence(topo_host, "numa.smallest_node_kb", smallest // 1024, topo_host.numa),
            ],
        )

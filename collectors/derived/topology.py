"""NUMA topology derived from whichever artifacts a host has: CPU -> node,
CPUs and memory per node, total RAM."""

from __future__ import annotations

from collections.abc import Iterator

from collectors.facts import HostFacts


def cpu_node_map(host: HostFacts) -> dict[int, int]:
    """Host CPU id -> NUMA node id, from numactl/sysfs, lscpu or ``virsh capabilities``."""
    for node_cpus in _node_cpu_lists(host):
        out = {cpu: node_id for node_id, cpus in node_cpus for cpu in cpus}
        if out:
            return out
    return {}


def _node_cpu_lists(host: HostFacts) -> Iterator[list[tuple[int, list[int]]]]:
    """(node, its CPUs) as each artifact lists them, in the order they are trusted
    (an artifact listing none gives an empty list: the caller goes on)."""
    if host.numa:
        yield [(node_id, node.cpus) for node_id, node in host.numa.nodes.items()]
    if host.cpu:
        yield list(host.cpu.numa_node_cpus.items())
    if host.capabilities:
        yield [(node_id, cell.get("cpus") or []) for node_id, cell in host.capabilities.cells.items()]


def cpus_by_node(host: HostFacts) -> dict[int, list[int]]:
    """NUMA node id -> its host CPU ids (sorted); nodes without a listed CPU are absent."""
    out: dict[int, list[int]] = {}
    for cpu, node in sorted(cpu_node_map(host).items()):
        out.setdefault(node, []).append(cpu)
    return out


def node_cpus_unknown(host: HostFacts, node: int) -> bool:
    """Whether no artifact says which CPUs ``node`` has (as opposed to saying it
    has none): no artifact lists any node's CPUs (``numastat -m`` alone), or a
    numactl -H pasted from below its header has the node's size line but not its
    "cpus:" line (which numactl prints, empty, for a CPU-less node) and lscpu
    does not list it either."""
    if not cpu_node_map(host):
        return True
    lines = host.numa.lines if host.numa else {}
    listed_by_lscpu = bool(host.cpu and node in host.cpu.numa_node_cpus)
    return f"node.{node}.size" in lines and f"node.{node}.cpus" not in lines and not listed_by_lscpu


def node_cpu_counts(host: HostFacts) -> dict[int, int]:
    return {node: len(cpus) for node, cpus in cpus_by_node(host).items()}


def node_mem_totals_kb(host: HostFacts) -> dict[int, int]:
    """Memory of each host NUMA node, from numactl/sysfs, else ``virsh capabilities``."""
    return _numa_mem_totals_kb(host) or _cells_mem_totals_kb(host)


def _numa_mem_totals_kb(host: HostFacts) -> dict[int, int]:
    """Node -> its memory in kB as numactl or sysfs give it (nodes without a size left out)."""
    out = {}
    for node_id, node in (host.numa.nodes if host.numa else {}).items():
        total = node.mem_total_kb()
        if total:
            out[node_id] = total
    return out


def _cells_mem_totals_kb(host: HostFacts) -> dict[int, int]:
    """Node -> its memory in kB as the cells of ``virsh capabilities`` give it."""
    cells = host.capabilities.cells if host.capabilities else {}
    return {node_id: cell["memory_kb"] for node_id, cell in cells.items() if cell.get("memory_kb")}


def host_ram_kb(host: HostFacts) -> int | None:
    """Total RAM of the host in kB: /proc/meminfo, else the nodes, else top."""
    if host.meminfo and host.meminfo.values.get("MemTotal"):
        return host.meminfo.values["MemTotal"]
    totals = node_mem_totals_kb(host)
    if totals:
        return sum(totals.values())
    if host.cpu_usage and host.cpu_usage.mem_total_kb:
        return host.cpu_usage.mem_total_kb
    return None


def is_multinode(host: HostFacts) -> bool:
    return (host.numa_node_count() or 0) >= 2

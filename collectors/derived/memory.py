"""Memory values derived from several artifacts."""

from __future__ import annotations

from collections.abc import Callable

from collectors.facts import HostFacts

# the huge page size of x86_64 (and of most distributions' arm64 kernels with 4 KiB pages)
DEFAULT_HUGEPAGE_KB = 2048


def hugepage_size_kb(host: HostFacts) -> int | None:
    """The host's huge page size in KiB as read (the hugepages fact, else
    /proc/meminfo's Hugepagesize), None when no output said it."""
    if host.hugepages and host.hugepages.hugepagesize_kb:
        return host.hugepages.hugepagesize_kb
    size = host.meminfo.values.get("Hugepagesize") if host.meminfo else None
    return size or None


def static_hugepages(host: HostFacts) -> tuple[int | None, object, str]:
    """(configured static huge pages, parsed fact, fact path), None when unknown:
    from the first artifact of ``_HUGEPAGE_COUNTS`` that says it."""
    for count in _HUGEPAGE_COUNTS:
        found = count(host)
        if found is not None:
            return found
    return None, None, ""


def _sysfs_hugepages(host: HostFacts) -> tuple[int, object, str] | None:
    if host.hugepages and host.hugepages.nr_hugepages is not None:
        return host.hugepages.nr_hugepages, host.hugepages, "hugepages.nr_hugepages"
    return None


def _meminfo_hugepages(host: HostFacts) -> tuple[int, object, str] | None:
    if host.meminfo and "HugePages_Total" in host.meminfo.values:
        return host.meminfo.values["HugePages_Total"], host.meminfo, "meminfo.HugePages_Total"
    return None


def _node_hugepages(host: HostFacts) -> tuple[int, object, str] | None:
    """The sum of the nodes' ``HugePages_Total`` (node meminfo)."""
    if host.numa and any("HugePages_Total" in n.meminfo for n in host.numa.nodes.values()):
        total = sum(n.meminfo.get("HugePages_Total", 0) for n in host.numa.nodes.values())
        return total, host.numa, "numa.nodes.*.meminfo.HugePages_Total"
    return None


def _sysctl_hugepages(host: HostFacts) -> tuple[int, object, str] | None:
    value = host.sysctl_value("vm.nr_hugepages")
    if value is not None and value.strip().isdigit():
        return int(value), host.sysctl, "sysctl.vm.nr_hugepages"
    return None


# where the static huge page count is read, in the order the artifacts are trusted
_HUGEPAGE_COUNTS: tuple[Callable[[HostFacts], tuple[int, object, str] | None], ...] = (
    _sysfs_hugepages,
    _meminfo_hugepages,
    _node_hugepages,
    _sysctl_hugepages,
)

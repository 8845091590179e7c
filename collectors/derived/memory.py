"""Memory values derived from several artifacts."""

from __future__ import annotations

from collectors.facts import HostFacts


def static_hugepages(host: HostFacts) -> tuple[int | None, object, str]:
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

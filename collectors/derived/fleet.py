"""A host's fleet profile: what the fleet rules and the cluster page compare
across the members of a cluster, computed once when the host is analysed and
stored with its snapshot (``Snapshot.fleet_facts``).

A cluster of thousands of hosts is compared from these profiles (a few hundred
bytes each): no upload is parsed again and no member's full facts are rebuilt.
Every value keeps the artifact and line it was read from, so findings built
from a stored profile cite exactly what findings built from the parsed host do.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

from collectors.derived.citing import cited_artifact, first_artifact_of_kind, line_of
from collectors.derived.memory import static_hugepages
from collectors.facts import HostFacts, from_dict, to_dict

# The settings fleet.numa_config_drift compares, in its order.
DRIFT_KEYS = (
    "numa_nodes",
    "vm.zone_reclaim_mode",
    "kernel.numa_balancing",
    "static_hugepages",
    "thp",
    "kernel",
)


@dataclass
class Cited:
    """A value and where it was read."""

    value: Any
    artifact: str = ""
    line: int | None = None


@dataclass
class BenchmarkResult:
    kind: str
    name: str
    unit: str
    value: float
    line: int | None = None
    host: str | None = None  # the tested host, when the report names it (gpcheckperf)
    artifact: str = ""  # the first artifact of ``kind`` the host was read from


@dataclass
class FleetProfile:
    label: str = ""
    hostname: str | None = None
    role: str | None = None
    guest: bool = False
    # runs guests (real domain XMLs or a virsh list): the members a guest's
    # analysis must see in full
    hypervisor: bool = False
    # DRIFT_KEYS -> the host's value (keys it does not report are absent)
    drift: dict[str, Cited] = field(default_factory=dict)
    # the cluster page's settings columns -> raw value (None: unknown)
    settings: dict[str, Any] = field(default_factory=dict)
    # the cluster page's measure columns -> [shown, value]
    measures: dict[str, list[Any]] = field(default_factory=dict)
    benchmarks: list[BenchmarkResult] = field(default_factory=list)


def _drift(host: HostFacts) -> dict[str, Cited]:
    """Comparable NUMA-related settings, each cited as the rules cite it."""
    out: dict[str, Cited] = {}

    def cite(key: str, value: Any, parsed: Any) -> None:
        line = line_of(parsed, key)
        out[key] = Cited(value, cited_artifact(host, parsed, line), line)

    nodes = host.numa_node_count()
    if nodes is not None:
        cite("numa_nodes", nodes, host.numa or host.cpu)
    for key in ("vm.zone_reclaim_mode", "kernel.numa_balancing"):
        value = host.sysctl_value(key)
        if value is not None:
            cite(key, value.strip(), host.sysctl)
    count, parsed, _ = static_hugepages(host)
    if count is not None:
        cite("static_hugepages", count, parsed)
    if host.hugepages and host.hugepages.thp_enabled:
        cite("thp", host.hugepages.thp_enabled, host.hugepages)
    if host.kernel and host.kernel.release:
        cite("kernel", host.kernel.release, host.kernel)
    return out


def _gib(kb: float) -> float:
    return round(kb / 1024 / 1024, 1)


def memory_per_node(host: HostFacts) -> tuple[str, float | None]:
    """Node sizes as shown ("251.4 GiB", "251.4 / 502.9 GiB") and their median."""
    if not host.numa:
        return "—", None
    totals = [
        total for _id, node in sorted(host.numa.nodes.items()) if (total := node.mem_total_kb()) is not None
    ]
    if not totals:
        return "—", None
    shown = sorted({f"{_gib(t):g}" for t in totals})
    return " / ".join(shown) + " GiB", _gib(statistics.median(totals))


def page_cache_share(host: HostFacts) -> tuple[str, float | None]:
    """The largest share of a node's memory held by page cache (FilePages):
    seed 001's slow hosts had it on the node STREAM allocated from."""
    shares = []
    if host.numa:
        for node_id, node in sorted(host.numa.nodes.items()):
            total, cache = node.mem_total_kb(), node.meminfo.get("FilePages")
            if total and cache is not None:
                shares.append((100.0 * cache / total, node_id))
    if shares:
        share, node_id = max(shares)
        return f"{share:.0f}% (node {node_id})", share
    if host.meminfo and host.meminfo.values.get("MemTotal") and "Cached" in host.meminfo.values:
        share = 100.0 * host.meminfo.values["Cached"] / host.meminfo.values["MemTotal"]
        return f"{share:.0f}%", share
    return "—", None


def fleet_profile(host: HostFacts, *, hypervisor: bool = False) -> FleetProfile:
    """The profile of ``host`` (``hypervisor``: whether it runs guests, which
    the caller knows from the libvirt facts)."""
    return FleetProfile(
        label=host.label,
        hostname=host.hostname,
        role=host.role,
        guest=host.is_guest,
        hypervisor=hypervisor,
        drift=_drift(host),
        settings={
            "numa_nodes": host.numa_node_count(),
            "zone_reclaim_mode": host.sysctl_value("vm.zone_reclaim_mode"),
            "numa_balancing": host.sysctl_value("kernel.numa_balancing"),
            "thp": host.hugepages.thp_enabled if host.hugepages else None,
            "hugepages": static_hugepages(host)[0],
            "kernel": host.kernel.release if host.kernel else None,
            "cpu_model": host.cpu.model_name if host.cpu else None,
        },
        measures={
            "memory_per_node": list(memory_per_node(host)),
            "page_cache_share": list(page_cache_share(host)),
        },
        benchmarks=[
            BenchmarkResult(
                kind=b.kind,
                name=b.name,
                unit=b.unit,
                value=b.value,
                line=b.line,
                host=b.host,
                artifact=first_artifact_of_kind(host, b.kind),
            )
            for b in host.benchmarks
        ],
    )


def profile_to_json(profile: FleetProfile) -> dict[str, Any]:
    data: dict[str, Any] = to_dict(profile)
    return data


def profile_from_json(data: dict[str, Any]) -> FleetProfile:
    """The profile ``profile_to_json`` stored (built field by field: a cluster
    page reads thousands)."""
    if not isinstance(data, dict):
        return FleetProfile()
    try:
        return FleetProfile(
            label=data.get("label") or "",
            hostname=data.get("hostname"),
            role=data.get("role"),
            guest=bool(data.get("guest")),
            hypervisor=bool(data.get("hypervisor")),
            drift={k: Cited(**v) for k, v in (data.get("drift") or {}).items()},
            settings=dict(data.get("settings") or {}),
            measures=dict(data.get("measures") or {}),
            benchmarks=[BenchmarkResult(**b) for b in data.get("benchmarks") or []],
        )
    except TypeError:  # stored by another version of the profile
        profile: FleetProfile = from_dict(FleetProfile, data)
        return profile


def profile_host(profile: FleetProfile) -> HostFacts:
    """A stand-in host for a member known only by its profile: its identity
    and role, so the engine can place it (physical or guest); the fleet rules
    read the profile itself."""
    return HostFacts(
        label=profile.label,
        hostname=profile.hostname,
        role=profile.role or ("guest" if profile.guest else None),
    )

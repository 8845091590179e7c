"""What a snapshot is, in a few words the knowledge base matches cases on:
its environment features (architecture, role, database, ...) and whether it
is prose alone."""

from __future__ import annotations

from collections.abc import Callable

from collectors.facts import CpuTopology, HostFacts, SnapshotFacts


def snapshot_features(snapshot: SnapshotFacts) -> list[str]:
    """Environment features of a SnapshotFacts, e.g. ``["arch:aarch64", "role:physical"]``."""
    features: set[str] = set()
    hosts = list(getattr(snapshot, "hosts", None) or [])
    if len(hosts) > 1:
        features.add("hosts:multiple")
    for host in hosts:
        for read in _HOST_FEATURES:
            features.update(read(host))
    return sorted(features)


def _role_features(host: HostFacts) -> list[str]:
    """``role:guest`` or ``role:physical``, when the host's role is known."""
    if host.is_guest:
        return ["role:guest"]
    if host.role == "physical" or (host.cpu and host.cpu.hypervisor_vendor is None):
        return ["role:physical"]
    return []


def _cpu_features(host: HostFacts) -> list[str]:
    """Architecture, hypervisor, CPU vendor and sockets (none without lscpu's facts)."""
    cpu = host.cpu
    if cpu is None:
        return []
    return [feature for read in _CPU_FEATURES if (feature := read(cpu))]


def _arch_feature(cpu: CpuTopology) -> str | None:
    """``arch:<architecture>`` (Debian's names made the kernel's), or None."""
    arch = (cpu.architecture or "").lower()
    return "arch:" + {"arm64": "aarch64", "amd64": "x86_64"}.get(arch, arch) if arch else None


def _guest_of_feature(cpu: CpuTopology) -> str | None:
    """``guest-of:<hypervisor>``, or None on a machine that names no hypervisor."""
    return "guest-of:" + cpu.hypervisor_vendor.lower() if cpu.hypervisor_vendor else None


# a CPU model's words -> the vendor feature, the first found
_CPU_VENDORS = (("kunpeng", "kunpeng"), ("hisilicon", "kunpeng"), ("intel", "intel"), ("amd", "amd"))


def _cpu_vendor_feature(cpu: CpuTopology) -> str | None:
    """``cpu:<vendor>`` of the CPU's vendor and model name, or None."""
    model = " ".join(filter(None, (cpu.vendor, cpu.model_name))).lower()
    vendor = next((name for needle, name in _CPU_VENDORS if needle in model), None)
    return "cpu:" + vendor if vendor else None


def _sockets_feature(cpu: CpuTopology) -> str | None:
    """``sockets:multiple`` on a machine of two sockets or more, else None."""
    return "sockets:multiple" if (cpu.sockets or 0) >= 2 else None


_CPU_FEATURES: tuple[Callable[[CpuTopology], str | None], ...] = (
    _arch_feature,
    _guest_of_feature,
    _cpu_vendor_feature,
    _sockets_feature,
)


def _numa_features(host: HostFacts) -> list[str]:
    """``numa:multi-node`` or ``numa:single-node``, when the node count is known."""
    nodes = host.numa_node_count()
    if not nodes:
        return []
    return ["numa:multi-node" if nodes > 1 else "numa:single-node"]


def _kvm_features(host: HostFacts) -> list[str]:
    """``hypervisor:kvm`` on a host that shows libvirt's domains, version or capabilities."""
    return ["hypervisor:kvm"] if host.domains or host.virsh_version or host.capabilities else []


def _database_features(host: HostFacts) -> list[str]:
    """``db:<kind>`` (and ``db:mysql-family``) of the host's database, ``db:oceanbase``."""
    features: list[str] = []
    if host.database is not None and host.database.kind:
        kind = host.database.kind.lower()
        features.append("db:" + kind)
        if kind in ("mysql", "mariadb", "percona"):
            features.append("db:mysql-family")
    if host.oceanbase is not None:
        features.append("db:oceanbase")
    return features


def _bench_features(host: HostFacts) -> list[str]:
    """``bench:<kind>`` of each benchmark the host ran."""
    return ["bench:" + bench.kind.lower() for bench in host.benchmarks]


# what each host adds to its snapshot's features
_HOST_FEATURES: tuple[Callable[[HostFacts], list[str]], ...] = (
    _role_features,
    _cpu_features,
    _numa_features,
    _kvm_features,
    _database_features,
    _bench_features,
)


def prose_only(snapshot_facts: SnapshotFacts) -> bool:
    """Every host of the snapshot is prose: lines were read, none into an artifact.
    Such a snapshot has no finding; only its text can match a case."""
    hosts = list(getattr(snapshot_facts, "hosts", None) or [])
    readings = [getattr(h, "reading", None) for h in hosts]
    return bool(hosts) and all(r is not None and r.prose_lines and not r.artifacts for r in readings)

"""What a snapshot is, in a few words the knowledge base matches cases on:
its environment features (architecture, role, database, ...) and whether it
is prose alone."""

from __future__ import annotations

from collectors.facts import CpuTopology, HostFacts, SnapshotFacts


def snapshot_features(snapshot: SnapshotFacts) -> list[str]:
    """Environment features of a SnapshotFacts, e.g. ``["arch:aarch64", "role:physical"]``."""
    features: set[str] = set()
    hosts = list(getattr(snapshot, "hosts", None) or [])
    if len(hosts) > 1:
        features.add("hosts:multiple")
    for host in hosts:
        if host.is_guest:
            features.add("role:guest")
        elif host.role == "physical" or (host.cpu and host.cpu.hypervisor_vendor is None):
            features.add("role:physical")
        if host.cpu is not None:
            features |= _cpu_features(host.cpu)
        features |= _host_features(host)
    return sorted(features)


# a CPU model's words -> the vendor feature, the first found
_CPU_VENDORS = (("kunpeng", "kunpeng"), ("hisilicon", "kunpeng"), ("intel", "intel"), ("amd", "amd"))


def _cpu_features(cpu: CpuTopology) -> set[str]:
    """Architecture, hypervisor, CPU vendor and sockets."""
    features: set[str] = set()
    arch = (cpu.architecture or "").lower()
    if arch:
        features.add("arch:" + {"arm64": "aarch64", "amd64": "x86_64"}.get(arch, arch))
    if cpu.hypervisor_vendor:
        features.add("guest-of:" + cpu.hypervisor_vendor.lower())
    model = " ".join(filter(None, (cpu.vendor, cpu.model_name))).lower()
    vendor = next((name for needle, name in _CPU_VENDORS if needle in model), None)
    if vendor:
        features.add("cpu:" + vendor)
    if (cpu.sockets or 0) >= 2:
        features.add("sockets:multiple")
    return features


def _host_features(host: HostFacts) -> set[str]:
    """NUMA, KVM, databases and benchmarks."""
    features: set[str] = set()
    nodes = host.numa_node_count()
    if nodes:
        features.add("numa:multi-node" if nodes > 1 else "numa:single-node")
    if host.domains or host.virsh_version or host.capabilities:
        features.add("hypervisor:kvm")
    if host.database is not None and host.database.kind:
        features.add("db:" + host.database.kind.lower())
        if host.database.kind.lower() in ("mysql", "mariadb", "percona"):
            features.add("db:mysql-family")
    if host.oceanbase is not None:
        features.add("db:oceanbase")
    for bench in host.benchmarks:
        features.add("bench:" + bench.kind.lower())
    return features


def prose_only(snapshot_facts: SnapshotFacts) -> bool:
    """Every host of the snapshot is prose: lines were read, none into an artifact.
    Such a snapshot has no finding; only its text can match a case."""
    hosts = list(getattr(snapshot_facts, "hosts", None) or [])
    readings = [getattr(h, "reading", None) for h in hosts]
    return bool(hosts) and all(r is not None and r.prose_lines and not r.artifacts for r in readings)

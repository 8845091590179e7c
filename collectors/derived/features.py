"""What a snapshot is, in a few words the knowledge base matches cases on:
its environment features (architecture, role, database, ...) and whether it
is prose alone."""

from __future__ import annotations

from collectors.facts import SnapshotFacts


def snapshot_features(snapshot: SnapshotFacts) -> list[str]:
    """Environment features of a SnapshotFacts, e.g. ``["arch:aarch64", "role:physical"]``."""
    features: set[str] = set()
    hosts = list(getattr(snapshot, "hosts", None) or [])
    if len(hosts) > 1:
        features.add("hosts:multiple")
    for host in hosts:
        cpu = host.cpu
        if host.is_guest:
            features.add("role:guest")
        elif host.role == "physical" or (cpu and cpu.hypervisor_vendor is None):
            features.add("role:physical")
        if cpu is not None:
            arch = (cpu.architecture or "").lower()
            if arch:
                features.add("arch:" + {"arm64": "aarch64", "amd64": "x86_64"}.get(arch, arch))
            if cpu.hypervisor_vendor:
                features.add("guest-of:" + cpu.hypervisor_vendor.lower())
            model = f"{cpu.vendor or ''} {cpu.model_name or ''}".lower()
            for needle, name in (
                ("kunpeng", "kunpeng"),
                ("hisilicon", "kunpeng"),
                ("intel", "intel"),
                ("amd", "amd"),
            ):
                if needle in model:
                    features.add("cpu:" + name)
                    break
            if (cpu.sockets or 0) >= 2:
                features.add("sockets:multiple")
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
        for bench in host.benchmarks or []:
            features.add("bench:" + bench.kind.lower())
    return sorted(features)


def prose_only(snapshot_facts: SnapshotFacts) -> bool:
    """Every host of the snapshot is prose: lines were read, none into an artifact.
    Such a snapshot has no finding; only its text can match a case."""
    hosts = list(getattr(snapshot_facts, "hosts", None) or [])
    readings = [getattr(h, "reading", None) for h in hosts]
    return bool(hosts) and all(r is not None and r.prose_lines and not r.artifacts for r in readings)

"""Fill a catalogued measure in for the hosts of a session.

Works on the stored facts JSON of the before-snapshots (``collectors.facts.to_dict``
of ``HostFacts``). Only what the facts determine is filled in: for the pinning
family, the ``<cputune>``/``<numatune>``/``<cpu><numa>`` block placing the largest
guest on the free CPUs of the host node with the most free memory, checked
against the other guests' pins. Anything else falls back to the catalogue text.
"""

from __future__ import annotations

from typing import Any

from collectors.cpulist import format_cpulist

PINNING = {"pin-vcpus", "pin-emulator", "pin-iothreads", "numatune-memory-binding", "guest-numa-topology"}


def _vm_host(facts: list[dict]) -> dict | None:
    hosts = [f for f in facts if f and f.get("domains") and (f.get("numa") or {}).get("nodes")]
    return hosts[0] if hosts else None


def _largest_domain(host: dict) -> dict | None:
    domains = [d for d in host.get("domains") or [] if d.get("vcpus")]
    return max(domains, key=lambda d: d.get("vcpu_current") or d.get("vcpus") or 0, default=None)


def placement(facts: list[dict]) -> dict | None:
    """``{"domain", "node", "vcpus", "cpus", "emulator", "iothread", "memory_kb"}``
    or None when the facts do not say enough (no VM host with NUMA nodes)."""
    host = _vm_host(facts)
    if host is None:
        return None
    domain = _largest_domain(host)
    if domain is None:
        return None
    vcpus = domain.get("vcpu_current") or domain.get("vcpus")
    busy: set[int] = set()
    for other in host.get("domains") or []:
        if other is domain:
            continue
        for cpus in (other.get("vcpupin") or {}).values():
            busy.update(cpus)
        busy.update(other.get("emulatorpin") or [])
    nodes: dict[str, Any] = host["numa"]["nodes"]

    def free_kb(node: dict) -> int:
        meminfo = node.get("meminfo") or {}
        if "MemFree" in meminfo:
            return meminfo["MemFree"]
        return (node.get("free_mb") or 0) * 1024

    # The node with the most free memory is the quieter one (seed 000 chose node 1).
    ranked = sorted(nodes.values(), key=lambda n: (-free_kb(n), n.get("node", 0)))
    for node in ranked:
        free = [c for c in node.get("cpus") or [] if c not in busy]
        if len(free) >= vcpus + 2:
            return {
                "domain": domain.get("name") or "guest",
                "node": node.get("node"),
                "vcpus": vcpus,
                "cpus": free[:vcpus],
                "iothread": free[vcpus],
                "emulator": free[vcpus + 1],
                "memory_kb": domain.get("memory_kb"),
            }
    return None


def fill_commands(measure, *, facts: list[dict]) -> str:
    """The measure's configuration for these hosts, or "" when not derivable."""
    if measure.slug not in PINNING:
        return ""
    place = placement(facts)
    if place is None:
        return ""
    node = place["node"]
    lines = [f"<!-- virsh edit {place['domain']}: vCPUs on host node {node}, free CPUs only -->"]
    if measure.slug in ("pin-vcpus", "pin-emulator", "pin-iothreads"):
        lines.append("<cputune>")
        if measure.slug == "pin-vcpus":
            lines += [f"  <vcpupin vcpu='{i}' cpuset='{cpu}'/>" for i, cpu in enumerate(place["cpus"])]
        if measure.slug in ("pin-iothreads",):
            lines.append(f"  <iothreadpin iothread='1' cpuset='{place['iothread']}'/>")
        if measure.slug in ("pin-emulator",):
            lines.append(f"  <emulatorpin cpuset='{place['emulator']}'/>")
        lines.append("</cputune>")
        if measure.slug == "pin-iothreads":
            lines += [
                "<iothreads>1</iothreads>",
                "<!-- data disk: <driver name='qemu' type='raw' iothread='1'/> -->",
            ]
    elif measure.slug == "numatune-memory-binding":
        lines += ["<numatune>", f"  <memnode cellid='0' mode='preferred' nodeset='{node}'/>", "</numatune>"]
    elif measure.slug == "guest-numa-topology":
        memory = place["memory_kb"] or 0
        lines += [
            "<cpu mode='host-passthrough' check='none'>",
            f"  <topology sockets='1' cores='{place['vcpus']}' threads='1'/>",
            "  <numa>",
            f"    <cell id='0' cpus='0-{place['vcpus'] - 1}' memory='{memory}' unit='KiB'/>",
            "  </numa>",
            "</cpu>",
        ]
    lines.append(f"<!-- host CPUs used: {format_cpulist(sorted(place['cpus']))} -->")
    return "\n".join(lines)

"""Host-level remedies: sysctl.d files, netem removal, IRQ and RPS affinity."""

from __future__ import annotations

import re
import shlex

from django.utils.translation import gettext as _

from collectors.cpulist import format_cpulist
from engine.remedies.base import Remedy, require_names

_SYSCTL_KEY = re.compile(r"^[a-z0-9_]+(\.[a-z0-9_\-]+)+$")
_DEVICE = re.compile(r"^[A-Za-z0-9_.:@-]{1,15}$")  # IFNAMSIZ is 16 with the NUL
_DROP_IN = re.compile(r"[0-9A-Za-z_-]+\Z")
# sysctl -> the catalogue's measure that sets it, in the order measures are listed
SYSCTL_MEASURES = {
    "vm.zone_reclaim_mode": "zone-reclaim-mode",
    "kernel.numa_balancing": "enable-numa-balancing",
}


def cpu_mask(cpus: list[int] | set[int] | tuple[int, ...]) -> str:
    """The hex mask ``smp_affinity``/``rps_cpus`` expect (32-bit groups, comma-separated).

    >>> cpu_mask([0, 1]), cpu_mask([2, 3]), cpu_mask([32])
    ('3', 'c', '1,00000000')
    """
    value = 0
    for cpu in cpus:
        value |= 1 << cpu
    digits = f"{value:x}"
    groups: list[str] = []
    while digits:
        groups.insert(0, digits[-8:])
        digits = digits[:-8]
    return ",".join([groups[0]] + [g.zfill(8) for g in groups[1:]]) if groups else "0"


def sysctl_file(
    *, settings: dict[str, str | int], previous: dict[str, str | None] | None = None, name: str = "90-numa"
) -> Remedy:
    """A ``/etc/sysctl.d`` drop-in that survives reboots, applied with ``sysctl -p``.

    ``previous`` (the values read from the snapshot) makes the rollback exact.

    >>> r = sysctl_file(settings={"vm.zone_reclaim_mode": 1}, previous={"vm.zone_reclaim_mode": "0"})
    >>> print(r.text, end="")
    # Casebook: NUMA memory policy
    vm.zone_reclaim_mode = 1
    >>> print(r.rollback)
    rm -f /etc/sysctl.d/90-numa.conf
    sysctl -w vm.zone_reclaim_mode=0
    """
    require_names(_SYSCTL_KEY, settings, "not a sysctl name")
    require_names(_DROP_IN, (name,), "bad drop-in name")
    path = f"/etc/sysctl.d/{name}.conf"
    text = "# Casebook: NUMA memory policy\n" + "".join(f"{k} = {v}\n" for k, v in settings.items())
    known = {k: str(v) for k, v in (previous or {}).items() if v is not None}
    return Remedy(
        key=f"sysctl:{name}",
        title=_("Persistent kernel settings in %(path)s") % {"path": path},
        text=text,
        path=path,
        rollback="\n".join([f"rm -f {path}", *(f"sysctl -w {k}={shlex.quote(v)}" for k, v in known.items())]),
        commands=(f"cat > {path} <<'EOF'\n{text}EOF", f"sysctl -p {path}"),
        measures=tuple(slug for key, slug in SYSCTL_MEASURES.items() if key in settings),
        data={"settings": {k: str(v) for k, v in settings.items()}, "previous": known},
        rules=("numa.local_node_pagecache_pressure", "numa.balancing_disabled", "fleet.numa_config_drift"),
    )


def remove_netem(*, device: str, qdisc_line: str = "") -> Remedy:
    """Delete a test ``netem`` root qdisc; the device falls back to its default qdisc.

    >>> r = remove_netem(device="eth0", qdisc_line="qdisc netem 8001: root refcnt 2 limit 1000 delay 1.0ms")
    >>> r.text, r.rollback
    ('tc qdisc del dev eth0 root', 'tc qdisc add dev eth0 root netem limit 1000 delay 1.0ms')
    """
    require_names(_DEVICE, (device,), "not a network device name")
    # rebuild the add command from what `tc qdisc show` printed, so rollback restores the same delay
    # (`tc qdisc show` without a device names it: "qdisc netem 8004: dev bond0 root refcnt 17 ...")
    params = re.sub(r"^.*?\bnetem\s+\S+\s+(dev\s+\S+\s+)?root\s+(refcnt\s+\d+\s+)?", "", qdisc_line).split()
    # the parameters come from the upload: quoted, so a pasted rollback runs only tc
    add = f"tc qdisc add dev {device} root netem {' '.join(shlex.quote(p) for p in params)}".rstrip()
    if not params:
        add += "  # parameters unknown: re-enter the delay you had"
    return Remedy(
        key=f"tc:{device}",
        title=_("Remove the netem delay on %(device)s") % {"device": device},
        text=f"tc qdisc del dev {device} root",
        rollback=add,
        commands=(f"tc qdisc del dev {device} root", f"tc qdisc show dev {device}"),
        measures=("remove-netem",),
        rules=("net.netem_delay",),
        data={"device": device, "netem": params},
    )


def irq_affinity(
    *, irqs: list[int], cpus: list[int], device: str | None = None, rx_queues: int = 0
) -> Remedy:
    """Spread NIC interrupts round-robin over ``cpus`` and steer receive
    packet processing (RPS) to the same CPUs.

    irqbalance would move the IRQs back, so it is stopped first.

    >>> r = irq_affinity(irqs=[40, 41], cpus=[2, 3], device="eth0", rx_queues=1)
    >>> print(r.text)
    systemctl stop irqbalance
    echo 4 > /proc/irq/40/smp_affinity
    echo 8 > /proc/irq/41/smp_affinity
    echo c > /sys/class/net/eth0/queues/rx-0/rps_cpus
    """
    if not cpus:
        raise ValueError("no CPUs to spread the interrupts over")
    if device is not None:
        require_names(_DEVICE, (device,), "not a network device name")
    # file under /proc or /sys -> (the mask written to it, the value that undoes it)
    masks = _irq_masks(irqs, cpus) | (_rps_masks(device, rx_queues, cpus) if device else {})
    writes = {path: mask for path, (mask, _undo) in masks.items()}
    lines = ["systemctl stop irqbalance", *(f"echo {mask} > {path}" for path, mask in writes.items())]
    rollback = [
        *(f"echo {undo} > {path}" for path, (_mask, undo) in masks.items()),
        "systemctl start irqbalance",
    ]
    return Remedy(
        key=f"irq:{device or 'irqs'}",
        title=_spread_title(device, format_cpulist(cpus)),
        text="\n".join(lines),
        rollback="\n".join(rollback),
        commands=tuple(lines),
        measures=("irq-softirq-affinity",),
        rules=("net.softirq_hotspot",),
        data={"writes": writes, "service": "irqbalance"},
        notes=(_("not persistent: put the commands in a oneshot unit or the NIC's udev rule once verified"),),
    )


def _irq_masks(irqs: list[int], cpus: list[int]) -> dict[str, tuple[str, str]]:
    """Each interrupt's ``smp_affinity``: the CPUs in turn, undone with the default affinity."""
    undo = "$(cat /proc/irq/default_smp_affinity)"
    return {
        f"/proc/irq/{int(irq)}/smp_affinity": (cpu_mask([cpus[i % len(cpus)]]), undo)
        for i, irq in enumerate(irqs)
    }


def _rps_masks(device: str, rx_queues: int, cpus: list[int]) -> dict[str, tuple[str, str]]:
    """Each receive queue's ``rps_cpus``: all the CPUs, undone with 0 (no steering)."""
    return {
        f"/sys/class/net/{device}/queues/rx-{q}/rps_cpus": (cpu_mask(cpus), "0") for q in range(rx_queues)
    }


def _spread_title(device: str | None, cpu_list: str) -> str:
    """The title of spreading ``device``'s interrupts (any NIC's without one) over ``cpu_list``."""
    if device:
        return _("Spread %(device)s interrupts over CPUs %(cpus)s") % {"device": device, "cpus": cpu_list}
    return _("Spread the NIC interrupts over CPUs %(cpus)s") % {"cpus": cpu_list}

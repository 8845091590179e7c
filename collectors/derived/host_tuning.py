"""Host tuning views shared by the reclaim, KSM, I/O scheduler, CPU power and
IRQ rules: the reclaim counters of ``/proc/vmstat`` summed over the kernel's
spellings, what makes a host latency-sensitive (a data store, or guests), and
the NIC queue interrupts of ``/proc/interrupts``."""

from __future__ import annotations

import re
from dataclasses import dataclass

from collectors.derived.libvirt import is_qemu_process, looks_like_kvm_host
from collectors.derived.workload import datastores, process_rows
from collectors.facts import HostFacts, Interrupts, ProcVmstat


def counter_sum(vmstat: ProcVmstat, *prefixes: str) -> int | None:
    """The sum of the counters named ``prefix`` or ``prefix_<zone>`` (kernels
    before 4.8 count ``allocstall`` and ``pgscan_direct_normal`` per zone,
    later ones ``allocstall_normal`` and ``pgscan_direct``); None when the
    output shows none of them.

    >>> v = ProcVmstat(values={"allocstall_normal": 3, "allocstall_movable": 1, "pgscan_direct": 9})
    >>> counter_sum(v, "allocstall"), counter_sum(v, "pgscan_direct"), counter_sum(v, "compact_stall")
    (4, 9, None)
    """
    counted = [
        value for name, value in vmstat.values.items() for prefix in prefixes if _counts(name, value, prefix)
    ]
    return sum(counted) if counted else None


def _counts(name: str, value: int, prefix: str) -> bool:
    """Whether the counter ``name`` (at ``value``) is ``prefix`` or one zone's ``prefix_<zone>``."""
    if name == prefix:
        return True
    return name.startswith(prefix + "_") and name[len(prefix) + 1 :] in _ZONES and value >= 0


_ZONES = {"dma", "dma32", "normal", "movable", "high", "device"}


def is_hypervisor(host: HostFacts) -> bool:
    """The host runs KVM guests (domains, virsh, QEMU processes in top or ps)."""
    if looks_like_kvm_host(host):
        return True
    if host.is_guest or host.processes is None:
        return False
    return any(is_qemu_process(p.command) for p in host.processes.processes)


def latency_sensitive(host: HostFacts) -> str | None:
    """Why a host's latency matters ("runs MySQL/MariaDB", "runs KVM guests"),
    or None when its facts show neither a data store nor guests."""
    stores = datastores(host)
    if stores:
        return ", ".join(s.kind for s in stores)
    if is_hypervisor(host):
        return "kvm"
    return None


# NIC queue interrupts: "eth0-TxRx-0", "ens1f0-rx-3", "mlx5_comp12@pci:...",
# "i40e-eth2-TxRx-7", "virtio2-input.0", "iavf-ens5-TxRx-1", "enp3s0-1", vmxnet3's "ens192-rxtx-0"
_NIC_QUEUE = re.compile(
    r"(?:^|\s)((?:[\w.\-]+-)?(?:TxRx|txrx|rxtx|rx|tx|Rx|Tx|input|output)[-.]\d+|mlx\d_comp\d+\S*|"
    r"(?:eth|ens|enp|eno|em|p\d)\w*-\d+)(?:\s|$)"
)


@dataclass(frozen=True)
class NicQueueIrq:
    irq: str
    name: str
    counts: tuple[int, ...]


def nic_queue_irqs(host: HostFacts) -> list[NicQueueIrq]:
    """The NIC queue interrupts of ``/proc/interrupts`` (their per-CPU counts)."""
    interrupts = host.interrupts
    if interrupts is None:
        return []
    out: list[NicQueueIrq] = []
    for irq, counts in interrupts.rows.items():
        name = _nic_queue_name(interrupts, irq) if irq.isdigit() and counts else None
        if name is not None:
            out.append(NicQueueIrq(irq, name, tuple(counts)))
    return out


def _nic_queue_name(interrupts: Interrupts, irq: str) -> str | None:
    """The NIC queue that interrupt ``irq`` serves, as its description names it
    (or as the grep that kept its row does, its name cut); None: not a NIC queue."""
    m = _NIC_QUEUE.search(interrupts.descriptions.get(irq, ""))
    if m is not None:
        return m.group(1)
    word = interrupts.named_by_grep.get(irq)
    if word is not None and _nic_word(word):
        return f"{word}-? (name cut; the command greps {word})"
    return None


def _nic_word(word: str) -> bool:
    """Whether ``word`` (what a grep of /proc/interrupts kept rows of) names a
    NIC whose vectors are its queues: ``ens192``, ``eth0-TxRx``, ``virtio2-input``."""
    return _NIC_QUEUE.search(word) is not None or _NIC_QUEUE.search(f"{word}-0") is not None


_IRQBALANCE = re.compile(r"(^|/)irqbalance(\s|$)")


def irqbalance_running(host: HostFacts) -> bool | None:
    """Whether a process list shows irqbalance (None: no process list)."""
    rows = process_rows(host)
    if not rows:
        return None
    return any(_IRQBALANCE.search(p.command.strip()) for p in rows)

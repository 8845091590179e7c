"""The typed facts model: the contract between collectors (parsers) and rules.

Parsers turn one artifact's text into one of the ``*Facts`` dataclasses below.
``collectors.assemble`` merges those into a :class:`HostFacts` per host, and a
snapshot analysed together (a guest and its host, the hosts of a cluster) is a
:class:`SnapshotFacts` holding several hosts.

Every parsed object carries a :class:`Source` (artifact name and 1-based line)
so rules can cite evidence. ``lines`` maps a field name (or a key such as a
sysctl name) to the line it was read from, relative to the artifact.

Units are in the field names where they are not obvious: ``*_kb`` (KiB),
``*_mb`` (MiB), ``*_bytes``, ``*_ms``, ``*_s``. Percentages are 0-100 floats.
See ``docs/facts.md`` for every field and the artifact it comes from.

Rules never mutate facts. Fields default to "unknown" (``None`` or empty), and
rules must treat unknown as "cannot tell", never as "zero".
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from typing import Any

from collectors.cpulist import parse_cpulist


class ParseError(ValueError):
    """Raised by a parser when the text is not the artifact it expects.

    ``line`` is 1-based within the artifact text when known. A parser that
    read part of its input (a table cut short) passes what is complete as
    ``partial``: it is kept, and the message says what is missing.
    """

    def __init__(self, message: str, *, line: int | None = None, partial: Any = None):
        super().__init__(message)
        self.message = message
        self.line = line
        self.partial = partial


@dataclass
class Source:
    """Where a fact was read: artifact name (path in archive, or transcript block
    label such as ``transcript:numactl -H``) and 1-based line."""

    artifact: str = ""
    line: int | None = None


@dataclass
class Parsed:
    """Base class of every parser result."""

    source: Source = field(default_factory=Source)
    # field or key -> 1-based line within the artifact (for evidence)
    lines: dict[str, int] = field(default_factory=dict)
    # A partial parse: what the parser skipped while keeping the rest ("variables:
    # 3 lines not in NAME<TAB>VALUE form"). ``line`` is 1-based in the artifact;
    # ``collectors.assemble`` stamps ``artifact`` and moves these into
    # ``HostFacts.errors``.
    errors: list[ArtifactError] = field(default_factory=list)


# --------------------------------------------------------------------------- CPU


@dataclass
class CpuTopology(Parsed):
    """From ``lscpu`` (text or ``-J``)."""

    architecture: str | None = None
    vendor: str | None = None
    model_name: str | None = None
    cpus: int | None = None
    online_cpus: list[int] = field(default_factory=list)
    sockets: int | None = None
    cores_per_socket: int | None = None
    threads_per_core: int | None = None
    numa_nodes: int | None = None
    # NUMA node id -> list of CPU ids
    numa_node_cpus: dict[int, list[int]] = field(default_factory=dict)
    # "L1d", "L1i", "L2", "L3" -> size string as printed (e.g. "33792K", "32 MiB")
    caches: dict[str, str] = field(default_factory=dict)
    hypervisor_vendor: str | None = None  # "KVM", "VMware", ... ; None on bare metal
    virtualization_type: str | None = None  # "full", "para", "container"
    flags: list[str] = field(default_factory=list)
    # heterogeneous CPUs (ARM big.LITTLE): one dict per core type
    core_types: list[dict[str, Any]] = field(default_factory=list)
    # anything else numeric we read (clusters, books, drawers ...)
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def has_l3(self) -> bool:
        return any(k.upper().startswith("L3") for k in self.caches)


@dataclass
class CpuUtil:
    """Utilisation of one CPU (or ``cpu="all"``) in percent."""

    cpu: str  # "0", "1", ... or "all"
    us: float | None = None
    sy: float | None = None
    ni: float | None = None
    id: float | None = None
    wa: float | None = None
    hi: float | None = None
    si: float | None = None
    st: float | None = None
    line: int | None = None


@dataclass
class ProcessInfo:
    pid: int
    user: str | None = None
    cpu_pct: float | None = None
    mem_pct: float | None = None
    command: str = ""
    line: int | None = None
    # added by parsers-mem: the CPU the task last ran on (``ps -o psr``)
    psr: int | None = None


@dataclass
class ProcessList(Parsed):
    """``ps -eo pid,psr,pcpu,comm`` (and variants with user, args, %mem): the
    process list with the CPU each task last ran on."""

    tool: str = "ps"
    processes: list[ProcessInfo] = field(default_factory=list)


@dataclass
class TaskAffinity(Parsed):
    """``taskset -cp PID`` (or ``taskset -p PID``, a hex mask): a task's CPU affinity."""

    pid: int | None = None
    cpus: list[int] = field(default_factory=list)
    mask: str | None = None  # hex mask as printed by ``taskset -p`` without ``-c``


@dataclass
class CpuUsage(Parsed):
    """From ``top -bn1`` (header, per-CPU lines, process list), ``mpstat -P ALL``
    or ``sar -u``. For time series (sar, mpstat intervals) ``per_cpu`` holds the
    average and ``samples`` the series of the "all" line."""

    tool: str = ""  # "top", "mpstat", "sar"
    per_cpu: list[CpuUtil] = field(default_factory=list)
    overall: CpuUtil | None = None
    samples: list[CpuUtil] = field(default_factory=list)
    load_average: tuple[float, float, float] | None = None
    uptime_days: int | None = None
    tasks_total: int | None = None
    mem_total_kb: int | None = None
    mem_free_kb: int | None = None
    mem_used_kb: int | None = None
    mem_cache_kb: int | None = None
    # added by parsers-host: top printed a memory figure too wide for its column
    # as "79179116+": the digits are kept and are a lower bound ("at least")
    mem_truncated: bool = False
    processes: list[ProcessInfo] = field(default_factory=list)
    # the per-CPU table shows fewer CPUs than the host has (lscpu, numactl -H):
    # the paste cut it; ``truncated_after`` is the last CPU row shown ("53"),
    # ``of_cpus`` the host's CPU count. What the rows not shown held is unknown
    cut: bool = False
    truncated_after: str | None = None
    of_cpus: int | None = None


# -------------------------------------------------------------------------- NUMA


@dataclass
class NumaNode:
    node: int
    cpus: list[int] = field(default_factory=list)
    size_mb: int | None = None  # numactl -H
    free_mb: int | None = None  # numactl -H
    # /sys/devices/system/node/nodeN/meminfo, keys as printed ("MemTotal",
    # "FilePages", "HugePages_Total" ...), values in kB except HugePages_* (pages)
    meminfo: dict[str, int] = field(default_factory=dict)
    # numastat counters: numa_hit, numa_miss, numa_foreign, interleave_hit,
    # local_node, other_node (pages)
    numastat: dict[str, int] = field(default_factory=dict)
    # /proc/zoneinfo watermarks summed over the node's zones, in pages
    watermark_min: int | None = None
    watermark_low: int | None = None
    watermark_high: int | None = None
    free_pages: int | None = None

    def _kb(self, key: str, mb: int | None) -> int | None:
        """The node meminfo's ``key``, else ``mb`` (numactl's figure) in kB."""
        if key in self.meminfo:
            return self.meminfo[key]
        return mb * 1024 if mb is not None else None

    def mem_total_kb(self) -> int | None:
        return self._kb("MemTotal", self.size_mb)

    def mem_free_kb(self) -> int | None:
        return self._kb("MemFree", self.free_mb)

    def mem_used_kb(self) -> int | None:
        if "MemUsed" in self.meminfo:
            return self.meminfo["MemUsed"]
        total, free = self.mem_total_kb(), self.mem_free_kb()
        return total - free if total is not None and free is not None else None


@dataclass
class NumaTopology(Parsed):
    """Joined from ``numactl -H``, node meminfo, numastat and zoneinfo."""

    nodes: dict[int, NumaNode] = field(default_factory=dict)
    # row-major, distances[i][j] between the i-th and j-th entry of distance_nodes
    distance_nodes: list[int] = field(default_factory=list)
    distances: list[list[int]] = field(default_factory=list)
    # added by ingest: the artifact each joined source came from, keyed by the
    # parser result type ("NumactlHardware", "NodeMeminfo", "Numastat", "Zoneinfo")
    sources: dict[str, Source] = field(default_factory=dict)

    def node(self, node_id: int) -> NumaNode:
        if node_id not in self.nodes:
            self.nodes[node_id] = NumaNode(node=node_id)
        return self.nodes[node_id]


@dataclass
class NumactlHardware(Parsed):
    """``numactl -H`` / ``numactl --hardware``."""

    available: int | None = None
    nodes: dict[int, NumaNode] = field(default_factory=dict)
    distance_nodes: list[int] = field(default_factory=list)
    distances: list[list[int]] = field(default_factory=list)
    # numactl --show, when present in the same text
    policy: str | None = None


@dataclass
class NumaPolicy(Parsed):
    """``numactl --show``: the NUMA policy and binding of the shell that ran it."""

    policy: str | None = None  # "default", "bind", "interleave", "preferred"
    preferred_node: str | None = None  # a node id or "current"
    physcpubind: list[int] = field(default_factory=list)
    cpubind: list[int] = field(default_factory=list)  # nodes
    nodebind: list[int] = field(default_factory=list)
    membind: list[int] = field(default_factory=list)


@dataclass
class NodeMeminfo(Parsed):
    """One or more ``/sys/devices/system/node/nodeN/meminfo`` files."""

    # node -> key -> value (kB, HugePages_* in pages)
    nodes: dict[int, dict[str, int]] = field(default_factory=dict)


@dataclass
class Numastat(Parsed):
    """``numastat`` (table), ``numastat -m`` or sysfs ``nodeN/numastat``."""

    # node -> counter -> value (pages for the default table; MB for -m)
    nodes: dict[int, dict[str, float]] = field(default_factory=dict)
    unit: str = "pages"  # "pages" or "MB" (numastat -m)


@dataclass
class ProcessNuma:
    """Memory of one process per NUMA node, in MiB."""

    pid: int | None
    name: str | None = None  # command name when printed ("mysqld")
    node_mb: dict[int, float] = field(default_factory=dict)
    total_mb: float | None = None
    # per-category rows of ``numastat -p PID`` ("Huge", "Heap", "Stack", "Private") -> node -> MiB
    categories: dict[str, dict[int, float]] = field(default_factory=dict)
    tool: str = "numastat"  # "numastat" (numastat -p) or "numa_maps" (/proc/PID/numa_maps)
    line: int | None = None


@dataclass
class ProcessNumaUsage(Parsed):
    """``numastat -p PID|NAME`` or a summarised ``/proc/PID/numa_maps``."""

    processes: list[ProcessNuma] = field(default_factory=list)


@dataclass
class NumaBootMessages(Parsed):
    """NUMA lines of the kernel log (``dmesg | grep -i numa``, ``journalctl -k``)."""

    # "No NUMA configuration found" (firmware gave no SRAT / NUMA off in the BIOS)
    no_numa_config: bool = False
    # "NUMA turned off" / "numa=off" on the command line
    numa_off: bool = False
    # "Faking a node at [mem ...]": the kernel made one node of all memory
    fake_node: bool = False
    # numa=fake=N / "Faking node N at" (emulated nodes)
    emulated_nodes: int | None = None
    # nodes named by SRAT / "NUMA: Node N" / "Initmem setup node N" lines
    nodes: list[int] = field(default_factory=list)
    # proximity domains of SRAT lines ("SRAT: PXM 1 -> APIC 0x20 -> Node 1")
    srat_pxms: list[int] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)  # the matching lines, as printed


@dataclass
class ZoneWatermarks:
    node: int
    zone: str
    free_pages: int | None = None
    min: int | None = None
    low: int | None = None
    high: int | None = None


@dataclass
class Zoneinfo(Parsed):
    zones: list[ZoneWatermarks] = field(default_factory=list)


# ------------------------------------------------------------------------ memory


@dataclass
class Meminfo(Parsed):
    """``/proc/meminfo``: keys as printed, kB (HugePages_* are page counts)."""

    values: dict[str, int] = field(default_factory=dict)
    # added by parsers-mem: "proc" (the whole file), "subset" (some of its lines,
    # e.g. ``grep -i huge /proc/meminfo``) or "free" (``free``: MemTotal, MemFree,
    # Buffers, Cached, MemAvailable, SwapTotal, SwapFree, rounded to its unit)
    origin: str = "proc"


@dataclass
class VmstatSample:
    """One ``vmstat`` row. Memory in kB (``-S M`` rows are converted), swap-in
    and swap-out in KiB/s when ``Vmstat.swap_unit_kb`` is known (converted from
    the ``-S`` unit) and as printed otherwise, block I/O per second as printed,
    CPU in percent."""

    r: int | None = None  # run queue
    b: int | None = None  # blocked (uninterruptible)
    swpd_kb: int | None = None
    free_kb: int | None = None
    buff_kb: int | None = None
    cache_kb: int | None = None
    si: int | None = None  # swapped in from disk (KiB/s; as printed when the unit is unknown)
    so: int | None = None  # swapped out
    bi: int | None = None
    bo: int | None = None
    interrupts: int | None = None  # "in"
    cs: int | None = None
    us: float | None = None
    sy: float | None = None
    id: float | None = None
    wa: float | None = None
    st: float | None = None
    line: int | None = None


@dataclass
class Vmstat(Parsed):
    """``vmstat [-w] [-t] [-S unit] [delay [count]]``. The first row reports
    averages since boot; ``samples[1:]`` are the intervals (see ``interval_samples``)."""

    samples: list[VmstatSample] = field(default_factory=list)
    # KiB per unit of the si/so columns as printed (1 by default, 1024 with -S M,
    # 976.5625 with -S m); None when the output does not say which -S it had:
    # si/so are then left as printed
    swap_unit_kb: float | None = None

    @property
    def interval_samples(self) -> list[VmstatSample]:
        return self.samples[1:] if len(self.samples) > 1 else list(self.samples)


@dataclass
class HugePages(Parsed):
    """Transparent and static huge pages settings."""

    thp_enabled: str | None = None  # "always", "madvise", "never" (the [selected] one)
    thp_defrag: str | None = None
    nr_hugepages: int | None = None
    hugepagesize_kb: int | None = None


@dataclass
class Sysctl(Parsed):
    """``sysctl -a`` or a sysctl.conf file: key -> raw string value."""

    values: dict[str, str] = field(default_factory=dict)
    # added by parsers-host: number of ``key = value`` lines read, duplicates
    # included (``sysctl -a`` repeats multi-valued keys such as dev.cdrom.info)
    setting_count: int = 0


@dataclass
class TunedProfile(Parsed):
    """The TuneD profile of a host (``tuned-adm active``/``list``,
    ``/etc/tuned/active_profile``). ``profiles``: the selected profiles in
    order (TuneD merges several, the last one winning a conflict);
    ``applied``: True when tuned-adm says they are active, False when it says
    the daemon is not running (only a preset), None when only the file named
    them."""

    profiles: list[str] = field(default_factory=list)
    applied: bool | None = None
    available: list[str] = field(default_factory=list)


@dataclass
class KernelCmdline(Parsed):
    raw: str = ""
    params: dict[str, str | None] = field(default_factory=dict)

    def cpulist(self, name: str) -> list[int]:
        """CPUs named by ``isolcpus=``/``nohz_full=`` style parameters."""
        value = self.params.get(name) or ""
        parts = [p for p in value.split(",") if p and not p[0].isalpha()]
        try:
            return parse_cpulist(",".join(parts))
        except ValueError:
            return []


@dataclass
class KernelVersion(Parsed):
    release: str | None = None  # uname -r
    os_release: str | None = None  # PRETTY_NAME


# ---------------------------------------------------------------------- network


@dataclass
class Qdisc:
    kind: str  # "netem", "mq", "fq_codel" ...
    device: str
    handle: str | None = None
    parent: str | None = None  # "root" or the parent handle
    delay_ms: float | None = None
    jitter_ms: float | None = None
    loss_pct: float | None = None
    raw: str = ""
    line: int | None = None


@dataclass
class NetDevRate:
    """One interface of ``sar -n DEV`` (the Average row, else the mean of the rows)."""

    iface: str
    rxpck_s: float | None = None
    txpck_s: float | None = None
    rxkb_s: float | None = None
    txkb_s: float | None = None
    rxcmp_s: float | None = None
    txcmp_s: float | None = None
    rxmcst_s: float | None = None
    ifutil_pct: float | None = None
    line: int | None = None


@dataclass
class NetDevStats(Parsed):
    """``sar -n DEV``: per-interface packet and byte rates."""

    interfaces: list[NetDevRate] = field(default_factory=list)


@dataclass
class TcQdiscs(Parsed):
    qdiscs: list[Qdisc] = field(default_factory=list)


@dataclass
class PingResult(Parsed):
    target: str | None = None
    # the numeric address the replies came from ("PING name (10.0.0.2)", "bytes from
    # 10.0.0.2", "Reply from 10.0.0.2"); None when the output shows only a name
    address: str | None = None
    # the host the ping ran on, where the output names it ("crdb1a to 1d rtt ..."
    # of a mesh script); None: the host the input belongs to
    from_host: str | None = None
    transmitted: int | None = None
    received: int | None = None
    loss_pct: float | None = None
    rtt_min_ms: float | None = None
    rtt_avg_ms: float | None = None
    rtt_max_ms: float | None = None
    rtt_mdev_ms: float | None = None
    # per reply times when there is no summary (or in addition)
    replies_ms: list[float] = field(default_factory=list)
    # the bounds of the replies that said "time<1ms" (Windows counts whole
    # milliseconds), when the RTT figures rest on the replies (no statistics line):
    # they are in ``replies_ms`` as 1, but measured anything below it
    replies_below_ms: list[float] = field(default_factory=list)


@dataclass
class Softirqs(Parsed):
    """``/proc/softirqs``: row name -> per-CPU counts."""

    cpus: list[str] = field(default_factory=list)  # "CPU0", ...
    rows: dict[str, list[int]] = field(default_factory=dict)
    # the paste cut the table (see ``TableCut``): the rows it cut are not in ``rows``
    cut: TableCut | None = None


@dataclass
class TableCut:
    """How a paste cut a per-CPU counter table (/proc/interrupts,
    /proc/softirqs): ``rows`` the rows with fewer counts than the header's
    CPUs (a row cut short, or wrapped by a terminal onto the next line),
    ``wrapped`` the lines that only continue a row or the header,
    ``truncated_after`` the last row shown when the table stops before its
    last row, ``line`` the first cut line (1-based). What the cut rows held is
    unknown: the rules that judge the table do not decide on it."""

    rows: list[str] = field(default_factory=list)
    shown: dict[str, int] = field(default_factory=dict)  # cut row -> the counts it shows
    lines: dict[str, int] = field(default_factory=dict)  # cut row -> its line
    wrapped: int = 0
    truncated_after: str | None = None
    line: int | None = None


@dataclass
class NicChannels(Parsed):
    """``ethtool -l DEV``: queue (channel) counts of one NIC."""

    device: str | None = None
    # "rx", "tx", "other", "combined" -> count (None when ethtool prints "n/a")
    maximum: dict[str, int | None] = field(default_factory=dict)  # "Pre-set maximums"
    current: dict[str, int | None] = field(default_factory=dict)  # "Current hardware settings"


@dataclass
class IrqAffinity(Parsed):
    """``/proc/irq/N/smp_affinity_list`` (or ``smp_affinity`` masks) of many IRQs,
    as a shell loop or ``grep . /proc/irq/*/smp_affinity_list`` prints them."""

    cpus: dict[str, list[int]] = field(default_factory=dict)  # irq ("24") -> CPUs it may use
    effective: dict[str, list[int]] = field(default_factory=dict)  # effective_affinity[_list]
    # irq -> action name when the path names it (/proc/irq/68/idpf-eth1-TxRx-1/../)
    names: dict[str, str] = field(default_factory=dict)


@dataclass
class Interrupts(Parsed):
    """``/proc/interrupts``: irq -> per-CPU counts plus description."""

    cpus: list[str] = field(default_factory=list)
    rows: dict[str, list[int]] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    # the paste cut the table: the rows it cut are not in ``rows``
    cut: TableCut | None = None
    # rows of a grepped table (``cat /proc/interrupts | grep ens192``) the paste
    # cut before their name: row -> the word every printed row holds. Such a row
    # is in ``rows`` with the counts it shows (the first CPUs') and in ``cut``
    named_by_grep: dict[str, str] = field(default_factory=dict)


@dataclass
class ProcVmstat(Parsed):
    """``/proc/vmstat`` (or some of its lines): counter name -> value. The
    event counters (``allocstall_*``, ``pgscan_*``, ``compact_*``, ``pswp*``)
    count since boot; the ``nr_*`` lines are gauges."""

    values: dict[str, int] = field(default_factory=dict)


@dataclass
class KsmState(Parsed):
    """``/sys/kernel/mm/ksm/*``: file name (``run``, ``pages_sharing``,
    ``merge_across_nodes`` ...) -> integer value."""

    values: dict[str, int] = field(default_factory=dict)


@dataclass
class IdleState:
    """One CPU idle state (``cpupower idle-info``, cpuidle sysfs)."""

    name: str  # "POLL", "C1", "C6" ...
    latency_us: int | None = None  # exit latency
    disabled: bool = False
    line: int | None = None


@dataclass
class CpuPower(Parsed):
    """CPU frequency scaling and idle states: ``scaling_governor`` per CPU
    (sysfs), ``cpupower frequency-info`` (driver and policy) and ``cpupower
    idle-info`` (idle driver and states)."""

    governors: dict[str, str] = field(default_factory=dict)  # "cpu0" (or "policy") -> governor
    driver: str | None = None  # scaling driver: intel_pstate, acpi-cpufreq, amd-pstate ...
    idle_driver: str | None = None  # intel_idle, acpi_idle, haltpoll ...
    idle_states: list[IdleState] = field(default_factory=list)


# ------------------------------------------------------------------------- disks


@dataclass
class IoSchedulers(Parsed):
    """``/sys/block/<device>/queue/scheduler``: device -> the selected
    scheduler (the bracketed one) and the ones offered; ``rotational`` from
    ``queue/rotational`` where shown (True: a spinning disk)."""

    active: dict[str, str] = field(default_factory=dict)
    available: dict[str, list[str]] = field(default_factory=dict)
    rotational: dict[str, bool] = field(default_factory=dict)


@dataclass
class DiskStat:
    device: str
    r_await_ms: float | None = None
    w_await_ms: float | None = None
    await_ms: float | None = None
    util_pct: float | None = None
    line: int | None = None


@dataclass
class DiskStats(Parsed):
    """``iostat -x`` (last report) or tsar-style per-device columns."""

    devices: list[DiskStat] = field(default_factory=list)


@dataclass
class Filesystem:
    filesystem: str
    mounted_on: str
    size_kb: int | None = None
    used_kb: int | None = None
    available_kb: int | None = None
    use_pct: float | None = None


@dataclass
class DiskFree(Parsed):
    filesystems: list[Filesystem] = field(default_factory=list)


# ------------------------------------------------------------------------ libvirt


@dataclass
class GuestNumaCell:
    id: int | None
    cpus: list[int] = field(default_factory=list)
    memory_kb: int | None = None
    mem_access: str | None = None
    distances: dict[int, int] = field(default_factory=dict)


@dataclass
class DomainDisk:
    target: str | None = None  # "vda"
    device: str = "disk"  # "disk", "cdrom" ...
    bus: str | None = None
    source: str | None = None
    iothread: int | None = None
    # <driver cache='...' io='...'>: None when the attribute is absent (libvirt
    # then passes no cache/aio option and the hypervisor's default applies);
    # ``driver_shown`` is False when the <disk> has no <driver> element at all
    cache: str | None = None
    io: str | None = None
    driver_shown: bool = False


@dataclass
class DomainInterface:
    """A guest NIC of a libvirt domain (``<interface>``)."""

    model: str | None = None  # "virtio", "e1000" ...
    queues: int | None = None  # <driver queues='N'>; None: not set (one queue pair)
    kind: str | None = None  # the interface type: "bridge", "network", "direct", "vhostuser" ...
    mac: str | None = None
    # <driver name='...'>: "vhost" or "qemu" (userspace virtio); None when not set
    # (libvirt then uses vhost-net when /dev/vhost-net is available). From a QEMU
    # command line: "qemu" for a tap netdev without vhost, "vhost" with it
    driver: str | None = None
    # the QEMU option that backs the NIC ("-netdev tap,fd=26,id=hostnet0"):
    # command lines only (collectors.parsers.qemu_cmdline)
    netdev: str | None = None


@dataclass
class Domain(Parsed):
    """One libvirt domain XML (``virsh dumpxml`` or ``/etc/libvirt/qemu/*.xml``),
    or the guest of a QEMU command line (``origin`` "qemu_cmdline": only what the
    command line states; what libvirt sets outside it is in ``unseen``)."""

    xml_root: str = "domain"  # "domain" or "domstatus"; "qemu_cmdline" for a command line
    origin: str = "xml"  # "xml" or "qemu_cmdline"
    name: str | None = None
    uuid: str | None = None
    domain_type: str | None = None  # "kvm", "qemu"
    vcpus: int | None = None  # <vcpu> text: the maximum
    vcpu_current: int | None = None  # current attribute, == vcpus when absent
    vcpu_placement: str | None = None  # "static" / "auto"
    vcpu_cpuset: list[int] | None = None  # <vcpu cpuset=...>
    memory_kb: int | None = None
    current_memory_kb: int | None = None
    max_memory_kb: int | None = None  # <maxMemory>
    max_memory_slots: int | None = None
    cpu_mode: str | None = None  # "host-passthrough", "host-model", "custom"; None: no <cpu>
    cpu_model: str | None = None
    cpu_check: str | None = None
    # sockets, dies, clusters, cores, threads as given
    topology: dict[str, int] = field(default_factory=dict)
    numa_cells: list[GuestNumaCell] = field(default_factory=list)
    vcpupin: dict[int, list[int]] = field(default_factory=dict)  # vcpu -> host cpus
    emulatorpin: list[int] | None = None
    iothreads: int = 0
    iothread_ids: list[int] = field(default_factory=list)
    iothreadpin: dict[int, list[int]] = field(default_factory=dict)
    numatune_memory_mode: str | None = None  # strict (default), preferred, interleave, restrictive
    numatune_memory_nodeset: list[int] | None = None
    numatune_memory_placement: str | None = None
    # memnode cellid -> {"mode": ..., "nodeset": [...]}
    memnodes: dict[int, dict[str, Any]] = field(default_factory=dict)
    hugepages: bool = False
    hugepage_sizes_kb: list[int] = field(default_factory=list)
    disks: list[DomainDisk] = field(default_factory=list)
    interfaces: list[DomainInterface] = field(default_factory=list)
    # the XML was a pasted fragment that we completed ("recovered") to parse it
    recovered: bool = False
    # only part of a domain is known: elements quoted without their <domain>
    # (``<vcpu current='4'>16</vcpu>``), or live ``virsh vcpupin``/``vcpuinfo``/
    # ``emulatorpin``/``numatune`` output of a domain whose XML is not in the
    # snapshot. An element missing from a fragment is unknown, not absent.
    fragment: bool = False
    # the document was cut by the paste (its root never closes): ``cut_in`` is
    # the top-level element the text ends inside ("cputune"), None when it ends
    # between elements; ``truncated_after`` the last element read whole
    # ("vcpupin vcpu='23'"); ``unseen`` the elements (libvirt's order) the cut
    # part could hold: "emulatorpin", "iothreadpin", "numatune", "cpu",
    # "devices" ... An element in ``unseen`` is unknown, not absent. A QEMU
    # command line (``origin``) lists there what it never shows (vcpupin,
    # emulatorpin, iothreadpin, numatune ...) and what it does not show.
    cut: bool = False
    cut_in: str | None = None
    truncated_after: str | None = None
    unseen: list[str] = field(default_factory=list)
    # the cloud manager that writes this XML ("openstack": <nova:instance>
    # metadata or an instance-XXXXXXXX name; "zstack": ZStack's <zs:zstack>
    # metadata): it regenerates the domain, so a `virsh define` does not last
    manager: str | None = None
    raw_xml: str = ""


@dataclass
class VirshVersion(Parsed):
    libvirt_version: str | None = None  # "Using library"
    api_version: str | None = None
    hypervisor: str | None = None  # "QEMU"
    hypervisor_version: str | None = None  # "Running hypervisor: QEMU 2.12.0"


@dataclass
class VirshDomainState:
    id: int | None
    name: str
    state: str


@dataclass
class VirshList(Parsed):
    domains: list[VirshDomainState] = field(default_factory=list)

    def running(self) -> list[VirshDomainState]:
        return [d for d in self.domains if d.state == "running"]


@dataclass
class VcpuInfo:
    """One vCPU in ``virsh vcpuinfo``."""

    vcpu: int
    cpu: int | None = None  # host CPU it last ran on
    state: str | None = None  # "running", "offline" ...
    cpu_time_s: float | None = None
    affinity: list[int] = field(default_factory=list)  # host CPUs it may run on
    line: int | None = None


@dataclass
class VirshDomainTuning(Parsed):
    """Live placement of one domain from ``virsh vcpuinfo``, ``vcpupin``,
    ``emulatorpin`` or ``numatune`` (one command per result). ``collectors.assemble``
    copies it onto the :class:`Domain` of the same name (or a ``fragment`` Domain)."""

    command: str = ""  # "vcpuinfo", "vcpupin", "emulatorpin", "numatune"
    domain: str | None = None  # the domain the command named; None when not known
    vcpus: list[VcpuInfo] = field(default_factory=list)  # vcpuinfo
    # vCPU -> host CPUs it may run on (vcpupin; vcpuinfo's CPU Affinity)
    affinity: dict[int, list[int]] = field(default_factory=dict)
    emulator_affinity: list[int] | None = None  # emulatorpin
    numa_mode: str | None = None  # numatune numa_mode: strict, preferred, interleave, restrictive
    numa_nodeset: list[int] | None = None  # numatune numa_nodeset (None when empty)
    # host CPUs an affinity is out of ("yyyy----" length, "0-7 (out of 8)")
    host_cpus: int | None = None


@dataclass
class VirshMemoryStats(Parsed):
    """``virsh dommemstat DOM``: the balloon statistics of one domain. Reading only."""

    domain: str | None = None  # from the command line; None without a prompt
    # name -> value as printed: actual, unused, available, usable, rss, disk_caches,
    # swap_in, swap_out in KiB; major_fault, minor_fault, hugetlb_pgalloc,
    # hugetlb_pgfail counts; last_update seconds since the epoch
    stats: dict[str, int] = field(default_factory=dict)


@dataclass
class XenVcpu:
    """One row of Xen ``xl vcpu-list``."""

    domain: str
    domid: int
    vcpu: int
    cpu: int | None = None  # physical CPU it runs on; None when "-" (offline)
    state: str = ""  # "r--" running, "-b-" blocked, "--p" paused ...
    time_s: float | None = None
    hard_affinity: list[int] | None = None  # None: "all"
    soft_affinity: list[int] | None = None  # None: "all"
    line: int | None = None


@dataclass
class XenVcpuList(Parsed):
    """Xen ``xl vcpu-list``: where each vCPU of each domain runs and may run.
    Reading only: no rule uses it (the kvm.* rules are for libvirt domains)."""

    vcpus: list[XenVcpu] = field(default_factory=list)

    def domains(self) -> list[str]:
        return list(dict.fromkeys(v.domain for v in self.vcpus))


@dataclass
class VirshNodeInfo(Parsed):
    """``virsh nodeinfo``: the hypervisor host's CPUs and memory as libvirt sees them."""

    cpu_model: str | None = None  # as printed: the architecture ("x86_64", "aarch64")
    cpus: int | None = None
    mhz: int | None = None
    # libvirt's "CPU socket(s)" is per NUMA cell when there are several cells
    sockets_per_cell: int | None = None
    sockets: int | None = None  # sockets_per_cell x numa_cells
    cores_per_socket: int | None = None
    threads_per_core: int | None = None
    numa_cells: int | None = None
    memory_kb: int | None = None


@dataclass
class VirshFreecell(Parsed):
    """``virsh freecell --all`` (per NUMA cell) or ``virsh freecell [CELL]``."""

    free_kb: dict[int, int] = field(default_factory=dict)  # cell -> free KiB
    total_kb: int | None = None


@dataclass
class VirshCapabilities(Parsed):
    """``virsh capabilities``: the host's NUMA cells as libvirt sees them."""

    cpu_arch: str | None = None
    cpu_model: str | None = None
    topology: dict[str, int] = field(default_factory=dict)
    cells: dict[int, dict[str, Any]] = field(default_factory=dict)  # id -> {cpus, memory_kb, distances}
    iommu: bool | None = None


# ----------------------------------------------------------------------- database


@dataclass
class DbEvent:
    """An event from a mysqld error log or syslog line."""

    kind: str  # "buffer_pool_init", "numa_policy", "completed_buffer_pool", "version", "error"
    timestamp: str | None = None  # ISO-ish as read; see ``seconds`` for arithmetic
    seconds: float | None = None  # seconds since an arbitrary epoch, comparable within one log
    message: str = ""
    data: dict[str, Any] = field(default_factory=dict)  # e.g. {"policy": "MPOL_INTERLEAVE"}
    line: int | None = None


@dataclass
class DatabaseFacts(Parsed):
    """MySQL / MariaDB / Percona: variables, version, error-log events."""

    kind: str | None = None  # "mysql", "mariadb", "percona"
    version: str | None = None  # "10.4.14-MariaDB-log"
    variables: dict[str, str] = field(default_factory=dict)  # lower-case names
    # variable -> "server" (SHOW VARIABLES, mysqladmin variables, SELECT @@x) or
    # "config" (my.cnf); a server value always wins over a configured one
    variable_sources: dict[str, str] = field(default_factory=dict)
    # settings of the server's option-file sections as written (names normalised:
    # lower case, "_" for "-", no "loose-"); ``variables`` holds sizes in bytes
    config: dict[str, str] = field(default_factory=dict)
    # SHOW GLOBAL STATUS counters (lower-case names: "innodb_buffer_pool_pages_total");
    # never variables, so they say nothing about which variables the server has
    status: dict[str, str] = field(default_factory=dict)
    events: list[DbEvent] = field(default_factory=list)
    log_counts: dict[str, int] = field(default_factory=dict)  # "Warning"/"Note"/"ERROR" -> count


@dataclass
class ServiceWarning:
    """A warning a data store printed about the host it runs on (Redis, MongoDB
    start-up warnings): what it names and the value it read, when it says."""

    # "thp_enabled", "thp_defrag", "overcommit_memory", "somaxconn", "numa_interleave", "zone_reclaim" ...
    code: str
    value: str | None = None  # the setting as the service read it ("always", "0", "128"); None: not said
    message: str = ""
    line: int | None = None


@dataclass
class ServiceLog(Parsed):
    """A data store's start-up log or start-up warnings (Redis, MongoDB): which
    store, its version, and the warnings it printed about the host's kernel
    settings (read by the store itself from /proc and /sys)."""

    kind: str = ""  # "redis", "mongodb"
    version: str | None = None  # "3.0.7", "4.4.6"
    warnings: list[ServiceWarning] = field(default_factory=list)
    # Redis INFO fields as printed ("latest_fork_usec" -> "981432", "used_memory" -> ...)
    settings: dict[str, str] = field(default_factory=dict)
    # Redis background saves in a log: milliseconds from "Saving..." to "Background
    # saving started by pid" (the fork), with the line of the second
    forks: list[tuple[float, int]] = field(default_factory=list)


@dataclass
class OceanBaseFacts(Parsed):
    parameters: dict[str, str] = field(default_factory=dict)  # name -> value
    proxy_config: dict[str, str] = field(default_factory=dict)
    # gv$sql_audit: plan_type -> count (1 local, 2 remote, 3 distributed)
    plan_type_counts: dict[int, int] = field(default_factory=dict)


# ---------------------------------------------------------------------- benchmarks


@dataclass
class Benchmark:
    kind: str  # "stream", "tpmc", "statement"
    name: str  # "Triad", "tpmTOTAL", "create index ..."
    value: float
    unit: str  # "MB/s", "tpm", "s"
    line: int | None = None
    # added by parsers-mem: the host the result is for when the report covers
    # several hosts (gpcheckperf); None: the host of the snapshot
    host: str | None = None


@dataclass
class BenchmarkResults(Parsed):
    results: list[Benchmark] = field(default_factory=list)


# ------------------------------------------------------------------ memory devices


@dataclass
class Dimm:
    """One ``dmidecode -t memory`` "Memory Device" record (an empty slot has no size)."""

    locator: str  # "DIMM_A1", "CPU1_DIMM_A0", "PROC 1 DIMM 3"
    bank: str | None = None  # "P0 CHANNEL A", "NODE 1", "BANK 0"
    size_mb: int | None = None  # None: "No Module Installed"
    socket: int | None = None  # from the locator or bank when they name it (CPU1, P0, NODE 1)
    channel: str | None = None  # "A", "B" ... when the locator or bank names it
    type: str | None = None  # "DDR4"
    speed_mts: int | None = None
    configured_speed_mts: int | None = None
    line: int | None = None


@dataclass
class GuestSignals(Parsed):
    """What a machine's firmware and devices say of it being a virtual machine:
    the DMI system record (``dmidecode -t system``, ``/sys/class/dmi/id``),
    ``systemd-detect-virt``, paravirtual devices (a ``virtio_net`` driver in
    ``ethtool -i``, ``/sys/bus/virtio/devices``, a ``vda`` disk, lspci's virtio
    devices) and the PCI devices only a hypervisor emulates. ``virtual`` is
    True when one of them names a hypervisor, False when one says "physical"
    (``systemd-detect-virt`` printing ``none``) and None when they say nothing."""

    dmi_vendor: str | None = None
    dmi_product: str | None = None
    detected_virt: str | None = None
    # one line per paravirtual device seen ("driver: virtio_net", "virtio0", "vda",
    # "00:03.0 Red Hat, Inc. Virtio network device" from lspci)
    virtio: list[str] = field(default_factory=list)
    # PCI devices (lspci) only a hypervisor presents: QEMU's 440FX host bridge,
    # QXL, VMware SVGA II, Hyper-V's VGA ("00:00.0 Intel Corporation 440FX -
    # 82441FX PMC [Natoma]"); like ``virtio`` they make the machine virtual
    emulated: list[str] = field(default_factory=list)
    # PCI devices seen in guests that physical machines have too (a Q35 "82G33"
    # host bridge, a Cirrus GD 5446, Amazon's ENA): kept, never deciding alone
    hints: list[str] = field(default_factory=list)
    virtual: bool | None = None


@dataclass
class PciDevice:
    """One device of ``lspci`` (plain, ``-nn``, ``-n``, ``-v``/``-k``, ``-mm``, ``-vmm``)."""

    address: str  # "00:03.0" or, with -D, "0000:00:03.0"
    name: str  # vendor and device as printed ("Red Hat, Inc. Virtio network device")
    class_name: str | None = None  # "Ethernet controller"
    class_id: str | None = None  # "0200" (-nn, -n)
    vendor_id: str | None = None  # "1af4" (-nn, -n, -vmmn)
    device_id: str | None = None  # "1000"
    subsystem: str | None = None  # -v/-k: "Red Hat, Inc. QEMU Virtual Machine"
    driver: str | None = None  # -k: "Kernel driver in use: virtio-pci"
    line: int | None = None


@dataclass
class PciDevices(Parsed):
    """``lspci``: the PCI devices, and what they say of the machine being a
    virtual machine (``signals``, read by ``collectors.parsers.lspci``)."""

    devices: list[PciDevice] = field(default_factory=list)
    signals: GuestSignals = field(default_factory=GuestSignals)


@dataclass
class MemoryDevices(Parsed):
    """``dmidecode -t memory`` / ``dmidecode -t 17``: every DIMM slot."""

    dimms: list[Dimm] = field(default_factory=list)


# ------------------------------------------------------------------------- reading


@dataclass
class ReadArtifact:
    """One artifact read from the input: its kind and where it is."""

    kind: str | None  # parser kind; None when nothing recognised it
    start_line: int  # 1-based, inclusive, in the uploaded file (0 for archive members)
    end_line: int
    parsed: bool
    name: str = ""  # file, member or transcript block label
    command: str | None = None


@dataclass
class UnrecognisedBlock:
    """Lines that no parser recognised and that are not prose (DESIGN.md ``reading``)."""

    start_line: int
    end_line: int
    first_line: str  # the block's first line, cut to 200 characters
    name: str = ""  # the file or member it is in


@dataclass
class UnusedBlock:
    """The output of a command Casebook recognises but does not read
    (``collectors.unused``: ``systemctl``, ``sysbench``, an SQL result grid)."""

    start_line: int
    end_line: int
    what: str  # the catalogue's name of the output
    name: str = ""  # the file or member it is in


@dataclass
class Reading:
    """What Casebook read of a host's input. Every input line is counted once:
    ``read_lines + prompt_lines + prose_lines + unused_lines + unrecognised_lines
    == lines`` (blank lines count with the block or prose they are in)."""

    lines: int = 0
    read_lines: int = 0  # lines of artifacts' output
    prompt_lines: int = 0  # prompt / command lines (with SQL continuation lines)
    prose_lines: int = 0  # prose, blank lines between blocks, fences and markup
    unrecognised_lines: int = 0
    artifacts: list[ReadArtifact] = field(default_factory=list)
    unrecognised: list[UnrecognisedBlock] = field(default_factory=list)
    unused_lines: int = 0  # outputs recognised but not read (``unused``)
    unused: list[UnusedBlock] = field(default_factory=list)

    def prose(self, text: str) -> str:
        r"""The prose of ``text`` (the input this reading is of): its lines
        outside every artifact and unrecognised block, and outside the prompt
        line before a command's output, so command output never reads as words
        of a write-up.

        >>> r = Reading(artifacts=[ReadArtifact("uptime", 3, 3, True, command="uptime")])
        >>> r.prose("MariaDB got slow\n$ uptime\n 10:00 up 1 day")
        'MariaDB got slow'
        """
        skip = self._not_prose()
        lines = text.splitlines()
        return "\n".join(line for n, line in enumerate(lines, start=1) if n not in skip and line.strip())

    def _not_prose(self) -> set[int]:
        """The 1-based lines that are not prose: the artifacts' (with the prompt
        line before a command's output) and the unrecognised blocks'."""
        skip: set[int] = set()
        for artifact in self.artifacts:
            skip.update(range(artifact.start_line - (1 if artifact.command else 0), artifact.end_line + 1))
        for block in self.unrecognised:
            skip.update(range(block.start_line, block.end_line + 1))
        return skip


# ---------------------------------------------------------------------- host & snapshot


@dataclass
class ArtifactError:
    artifact: str
    message: str
    line: int | None = None


@dataclass
class FactConflict:
    """Two artifacts of one host disagree on a fact (``numactl -H`` says 1 node,
    a second ``numactl -H`` 4): the paste may hold two machines. ``fact`` is a
    key of the engine's fact checks ("numa", "numa_distances", "cpu",
    "meminfo", "database"); ``values`` are what each artifact says, in the
    order read, with ``artifacts`` and ``lines`` (1-based, None when unknown)
    at the same index. ``reason`` says in English what disagrees."""

    fact: str
    values: list[str] = field(default_factory=list)
    artifacts: list[str] = field(default_factory=list)
    lines: list[int | None] = field(default_factory=list)
    reason: str = ""


@dataclass
class HostFacts:
    """Everything known about one host (physical machine or guest)."""

    label: str = ""  # snapshot label or hostname
    hostname: str | None = None
    role: str | None = None  # "physical", "guest"; None when unknown
    cluster: str | None = None
    cpu: CpuTopology | None = None
    numa: NumaTopology | None = None
    meminfo: Meminfo | None = None
    hugepages: HugePages | None = None
    sysctl: Sysctl | None = None
    cmdline: KernelCmdline | None = None
    kernel: KernelVersion | None = None
    tuned: TunedProfile | None = None
    cpu_usage: CpuUsage | None = None
    softirqs: Softirqs | None = None
    interrupts: Interrupts | None = None
    irq_affinity: IrqAffinity | None = None
    nic_channels: list[NicChannels] = field(default_factory=list)
    tc: TcQdiscs | None = None
    pings: list[PingResult] = field(default_factory=list)
    disks: DiskStats | None = None
    df: DiskFree | None = None
    domains: list[Domain] = field(default_factory=list)
    virsh_version: VirshVersion | None = None
    virsh_list: VirshList | None = None
    capabilities: VirshCapabilities | None = None
    nodeinfo: VirshNodeInfo | None = None
    freecell: VirshFreecell | None = None
    # live placement read per domain (also copied onto ``domains``)
    domain_tuning: list[VirshDomainTuning] = field(default_factory=list)
    database: DatabaseFacts | None = None
    # Redis / MongoDB start-up logs (added by rules)
    services: list[ServiceLog] = field(default_factory=list)
    oceanbase: OceanBaseFacts | None = None
    benchmarks: list[Benchmark] = field(default_factory=list)
    memory_devices: MemoryDevices | None = None
    # DMI, systemd-detect-virt, virtio and emulated PCI devices (collectors.parsers.virt, .lspci)
    guest_signals: GuestSignals | None = None
    pci_devices: PciDevices | None = None  # lspci
    # added by parsers-mem
    vmstat: Vmstat | None = None
    proc_vmstat: ProcVmstat | None = None
    ksm: KsmState | None = None
    io_schedulers: IoSchedulers | None = None
    cpu_power: CpuPower | None = None
    process_numa: list[ProcessNuma] = field(default_factory=list)
    numa_boot: NumaBootMessages | None = None
    net_dev: NetDevStats | None = None
    processes: ProcessList | None = None
    affinities: list[TaskAffinity] = field(default_factory=list)
    numa_policy: NumaPolicy | None = None
    xen_vcpus: XenVcpuList | None = None  # xl vcpu-list (reading only)
    domain_memstats: list[VirshMemoryStats] = field(default_factory=list)  # virsh dommemstat (reading only)
    # how much of the input was read, line by line (DESIGN.md ``reading``)
    reading: Reading = field(default_factory=Reading)
    # facts on which this host's artifacts disagree (collectors.machines): the
    # rules that decide on them are not checked
    conflicts: list[FactConflict] = field(default_factory=list)
    # the loader split this host off a paste that showed several machines
    # without a prompt naming them: why, in English ("a second, different
    # numactl -H at line 14")
    split_reason: str | None = None
    # artifacts that were read, in order, and what they were recognised as
    artifacts: list[dict[str, Any]] = field(default_factory=list)
    errors: list[ArtifactError] = field(default_factory=list)

    @property
    def is_guest(self) -> bool:
        if self.role:
            return self.role == "guest"
        return bool(self.cpu and self.cpu.hypervisor_vendor)

    def numa_node_count(self) -> int | None:
        if self.numa and self.numa.nodes:
            return len(self.numa.nodes)
        if self.cpu and self.cpu.numa_nodes:
            return self.cpu.numa_nodes
        if self.capabilities and self.capabilities.cells:  # only ``virsh capabilities`` was given
            return len(self.capabilities.cells)
        return None

    def logical_cpus(self) -> int | None:
        if self.cpu and self.cpu.cpus:
            return self.cpu.cpus
        # numactl -H lists every CPU; a pasted top may be cut short
        return _numa_cpu_count(self.numa) or _per_cpu_rows(self.cpu_usage)

    def sysctl_value(self, key: str) -> str | None:
        return self.sysctl.values.get(key) if self.sysctl else None


def _numa_cpu_count(numa: NumaTopology | None) -> int | None:
    """How many CPUs the NUMA nodes list (None: none listed)."""
    if numa and any(n.cpus for n in numa.nodes.values()):
        return sum(len(n.cpus) for n in numa.nodes.values())
    return None


def _per_cpu_rows(usage: CpuUsage | None) -> int | None:
    """How many CPUs a per-CPU usage table shows (None: no per-CPU table)."""
    if usage and usage.per_cpu:
        return len([c for c in usage.per_cpu if c.cpu != "all"])
    return None


@dataclass
class SnapshotFacts:
    """Several hosts analysed together: a guest and its host, or a cluster."""

    hosts: list[HostFacts] = field(default_factory=list)
    # label -> ``collectors.derived.fleet.FleetProfile`` of the hosts given for
    # the fleet rules only (the other members of a cluster, known by their
    # stored profiles; their ``hosts`` entry holds only their identity): the
    # per-host rules do not run on them
    fleet_profiles: dict[str, Any] = field(default_factory=dict)
    # the other members of a cluster as one ``collectors.derived.fleet.FleetSummary``
    # (kept by the analysis from their stored profiles), for the fleet rules
    # only: not in ``hosts`` at all
    fleet_summary: Any = None
    # what the rules derive once per analysis and share (e.g. the fleet
    # rules' summary of the hosts above): not facts, never stored
    derived: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def labels(self) -> list[str]:
        """The labels of every host analysed together: those in ``hosts``,
        then the members of the fleet summary, in the order the fleet rules
        list them."""
        members: list[str] = self.fleet_summary.names() if self.fleet_summary is not None else []
        return [h.label for h in self.hosts] + members

    @property
    def fleet_only(self) -> frozenset[str]:
        return frozenset(self.fleet_profiles)

    @property
    def errors(self) -> list[ArtifactError]:
        return [e for h in self.hosts for e in h.errors]

    def physical_hosts(self) -> list[HostFacts]:
        return [h for h in self.hosts if not h.is_guest]

    def guests(self) -> list[HostFacts]:
        return [h for h in self.hosts if h.is_guest]


_SCALARS = frozenset({str, int, float, bool, type(None)})


_FIELDS_OF: dict[type, tuple[str, ...] | None] = {}


def _fields_of(cls: type) -> tuple[str, ...] | None:
    """Field names of a dataclass type (None for any other type), looked up once per type."""
    if cls not in _FIELDS_OF:
        _FIELDS_OF[cls] = (
            tuple(fld.name for fld in dataclasses.fields(cls)) if dataclasses.is_dataclass(cls) else None
        )
    return _FIELDS_OF[cls]


def to_dict(obj: Any) -> Any:
    """JSON-ready form of any fact (dataclasses, dicts with int keys, tuples)."""
    cls = type(obj)
    if cls in _SCALARS:
        return obj
    names = _fields_of(cls)
    if names is not None:
        # everything, the domain XML included: stored facts are the one source
        # of a host after its analysis (remedies edit the XML)
        return {name: to_dict(getattr(obj, name)) for name in names}
    if isinstance(obj, dict):
        return _dict_to_dict(obj)
    if isinstance(obj, (list, tuple)):
        return _list_to_dict(obj)
    return obj


def _dict_to_dict(obj: dict[Any, Any]) -> dict[str, Any]:
    """JSON-ready form of a dict: its keys made strings, its values :func:`to_dict`'s."""
    # a dict of strings to scalars (sysctl, variables) is copied at C speed
    if set(map(type, obj)) <= {str} and set(map(type, obj.values())) <= _SCALARS:
        return dict(obj)
    return {str(k): to_dict(v) for k, v in obj.items()}


def _list_to_dict(obj: list[Any] | tuple[Any, ...]) -> list[Any]:
    """JSON-ready form of a list or a tuple: a list of its items' :func:`to_dict`."""
    if set(map(type, obj)) <= _SCALARS:
        return list(obj)  # scalars alone: copied at C speed
    return [to_dict(v) for v in obj]


def _decode(hint: Any, value: Any) -> Any:
    """``value`` (JSON as ``to_dict`` wrote it) converted back to ``hint``."""
    return _decoder(hint)(value)


def _identity(value: Any) -> Any:
    return value


@functools.cache
def _decoder(hint: Any) -> typing.Callable[[Any], Any]:
    """The function that turns JSON written by ``to_dict`` back into ``hint``,
    built once per type (resolving type hints per value is what made
    ``from_dict`` slow)."""
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return _optional_decoder(hint)
    if dataclasses.is_dataclass(hint):
        fact_type = typing.cast(type, hint)
        return lambda value: from_dict(fact_type, value) if isinstance(value, dict) else None
    container = _CONTAINER_DECODERS.get(origin)
    return container(hint) if container is not None else _identity


def _optional_decoder(hint: Any) -> typing.Callable[[Any], Any]:
    options = [a for a in typing.get_args(hint) if a is not type(None)]
    # Every optional field of the model is ``X | None`` with a single X.
    inner = _decoder(options[0]) if len(options) == 1 else _identity
    return lambda value: None if value is None else inner(value)


def _list_decoder(hint: Any) -> typing.Callable[[Any], Any]:
    (item,) = typing.get_args(hint) or (Any,)
    decode_item = _decoder(item)
    return lambda value: (
        None if value is None else [decode_item(v) for v in value] if isinstance(value, list) else []
    )


def _tuple_decoder(hint: Any) -> typing.Callable[[Any], Any]:
    return lambda value: tuple(value) if isinstance(value, list) else value


def _dict_decoder(hint: Any) -> typing.Callable[[Any], Any]:
    key_t, value_t = typing.get_args(hint) or (Any, Any)
    decode_value = _decoder(value_t)

    def decode_dict(value: Any) -> Any:
        if value is None:
            return None
        if not isinstance(value, dict):
            return {}
        out = {}
        for k, v in value.items():
            try:
                key = int(k) if key_t is int else k  # JSON made int keys (NUMA nodes) strings
            except ValueError:
                key = k
            out[key] = decode_value(v)
        return out

    return decode_dict


# the origin of a container type hint (``list[int]`` -> list) -> its decoder's builder
_CONTAINER_DECODERS: dict[Any, typing.Callable[[Any], typing.Callable[[Any], Any]]] = {
    list: _list_decoder,
    tuple: _tuple_decoder,
    dict: _dict_decoder,
}


def from_dict(cls: type, data: dict[str, Any]) -> Any:
    """Rebuild a fact dataclass from ``to_dict`` output (the JSON stored on a
    snapshot), so rules can run again over stored facts without re-parsing the
    upload. Unknown keys are ignored and missing ones take their defaults, so
    facts stored by an older model still load."""
    kwargs = {}
    for name, hint in _init_fields(cls):
        if name in data:
            kwargs[name] = _decode(hint, data[name])
    return cls(**kwargs)


@functools.cache
def _init_fields(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, resolved type) of the fields ``cls(...)`` takes: resolving the
    annotations is most of the cost of :func:`from_dict`, and a cluster page
    rebuilds thousands of hosts."""
    hints = typing.get_type_hints(cls)
    return tuple((f.name, hints[f.name]) for f in dataclasses.fields(cls) if f.init)

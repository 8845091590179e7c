"""Host CPU/memory inventory and the vCPU placement planner.

:func:`host_topology` condenses a :class:`~collectors.facts.HostFacts` into what
placement needs: the CPUs of each NUMA node grouped into physical cores (SMT
siblings), free memory and free huge pages per node, the CPUs other guests are
pinned to and the ``isolcpus`` set. :func:`plan_placement` then picks host
CPUs for a guest and :func:`check_placement` re-verifies any plan against the
inventory (the generator runs it on its own output, and the tests on random
hosts).

Sample::

    >>> topo = HostTopology(nodes={0: (0, 1, 2, 3), 1: (4, 5, 6, 7)},
    ...                     cores=((0, 2), (1, 3), (4, 6), (5, 7)))
    >>> plan = plan_placement(topology=topo, vcpus=2, memory_kb=1048576)
    >>> [(c.node, c.host_cpus) for c in plan.cells], plan.emulator_cpus
    ([(1, (4, 6))], (5, 7))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from django.utils.translation import gettext as _

from collectors.cpulist import format_cpulist
from collectors.derived.topology import cpu_node_map
from collectors.facts import Domain, HostFacts
from engine.remedies.base import NoRemedy

MIB_KB = 1024
# The core holding CPU 0 runs host timers, housekeeping kthreads and most
# unaffined interrupts, and CPU 0 can never be isolated: keep it for the host.
HOUSEKEEPING_CPU = 0


@dataclass(frozen=True)
class HostTopology:
    """What the planner knows about one hypervisor host.

    ``cores`` are groups of SMT siblings (one tuple per physical core; one CPU
    per tuple on a host without SMT). ``used`` maps CPUs pinned by other guests
    to the guest's name. ``free_kb`` / ``hugepages_free`` are per node; None
    means unknown, never zero.
    """

    nodes: dict[int, tuple[int, ...]]
    cores: tuple[tuple[int, ...], ...] = ()
    free_kb: dict[int, int | None] = field(default_factory=dict)
    hugepage_kb: int | None = None
    hugepages_free: dict[int, int | None] = field(default_factory=dict)
    isolated: frozenset[int] = frozenset()
    used: dict[int, str] = field(default_factory=dict)
    distances: dict[tuple[int, int], int] = field(default_factory=dict)
    unknown_guests: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.cores:
            # no SMT information: every CPU is its own core
            object.__setattr__(self, "cores", tuple((c,) for cpus in self.nodes.values() for c in cpus))

    @property
    def node_of(self) -> dict[int, int]:
        return {cpu: node for node, cpus in self.nodes.items() for cpu in cpus}

    @property
    def smt(self) -> int:
        return max((len(c) for c in self.cores), default=1)

    def node_cores(self, node: int) -> list[tuple[int, ...]]:
        mine = set(self.nodes.get(node, ()))
        return [c for c in self.cores if c and set(c) <= mine]


@dataclass(frozen=True)
class CellPlan:
    """One guest NUMA cell: guest vCPUs ``vcpus[i]`` run on ``host_cpus[i]``."""

    cell: int
    node: int
    vcpus: tuple[int, ...]
    host_cpus: tuple[int, ...]
    memory_kb: int


@dataclass(frozen=True)
class Placement:
    cells: tuple[CellPlan, ...]
    emulator_cpus: tuple[int, ...]
    iothread_cpus: dict[int, tuple[int, ...]]
    sockets: int
    cores: int
    threads: int
    hugepages: bool = False
    notes: tuple[str, ...] = ()

    @property
    def nodes(self) -> list[int]:
        return sorted({c.node for c in self.cells})

    @property
    def vcpupin(self) -> dict[int, int]:
        return {v: h for cell in self.cells for v, h in zip(cell.vcpus, cell.host_cpus, strict=True)}


# ------------------------------------------------------------------ inventory


def _infer_cores(
    host: HostFacts, nodes: dict[int, tuple[int, ...]]
) -> tuple[tuple[tuple[int, ...], ...], str]:
    """Group CPUs into SMT sibling sets from lscpu's counts.

    Linux enumerates the first thread of every core before the second ones on
    x86 (siblings are ``c`` and ``c + CPUs/threads``); some ARM/POWER firmware
    numbers siblings next to each other. A grouping is accepted only when every
    group lies inside one node; otherwise each CPU is its own core and a note
    says the siblings are unknown.
    """
    all_cpus = sorted(c for cpus in nodes.values() for c in cpus)
    threads = (host.cpu.threads_per_core if host.cpu else None) or 1
    if threads <= 1 or not all_cpus:
        return tuple((c,) for c in all_cpus), ""
    node_of = {c: n for n, cpus in nodes.items() for c in cpus}
    total = len(all_cpus)
    present = set(all_cpus)
    candidates = []
    if total % threads == 0 and all_cpus == list(range(total)):
        stride = total // threads
        candidates.append([tuple(c + k * stride for k in range(threads)) for c in range(stride)])
        candidates.append([tuple(range(c, c + threads)) for c in range(0, total, threads)])
    for groups in candidates:
        if all(set(g) <= present and len({node_of[c] for c in g}) == 1 for g in groups):
            return tuple(groups), ""
    return (
        tuple((c,) for c in all_cpus),
        f"lscpu reports {threads} threads per core but the SMT siblings could not be inferred; "
        "each CPU is treated as a core (check /sys/devices/system/cpu/cpu*/topology/thread_siblings_list)",
    )


def _other_pins(domain: Domain) -> set[int]:
    cpus: set[int] = set()
    for pins in domain.vcpupin.values():
        cpus.update(pins)
    for pins in domain.iothreadpin.values():
        cpus.update(pins)
    cpus.update(domain.emulatorpin or [])
    cpus.update(domain.vcpu_cpuset or [])
    return cpus


def _same_domain(a: Domain, b: Domain | None) -> bool:
    if b is None:
        return False
    if a is b:
        return True
    return bool((a.uuid and a.uuid == b.uuid) or (a.name and a.name == b.name))


def host_topology(*, host: HostFacts | None, target: Domain | None = None) -> HostTopology | NoRemedy:
    """Build the inventory of ``host``; ``target`` (the guest being placed) is
    left out of the "used by other guests" set.

    Returns :class:`NoRemedy` when the host's NUMA CPU lists are unknown.
    """
    if host is None:
        return NoRemedy(key="host", reason="no host facts: upload the hypervisor's numactl -H and lscpu")
    by_node: dict[int, list[int]] = {}
    for cpu, node_id in cpu_node_map(host).items():  # numactl/sysfs, else lscpu
        by_node.setdefault(node_id, []).append(cpu)
    nodes = {n: tuple(sorted(by_node[n])) for n in sorted(by_node)}
    if not nodes:
        return NoRemedy(
            key="host",
            reason=f"the CPUs of each NUMA node of {host.hostname or host.label or 'the host'} are unknown "
            "(numactl -H or lscpu is needed)",
        )
    cores, note = _infer_cores(host, nodes)
    notes = [note] if note else []

    free_kb: dict[int, int | None] = {}
    huge_free: dict[int, int | None] = {}
    for n in nodes:
        node = host.numa.nodes.get(n) if host.numa else None
        free_kb[n] = node.mem_free_kb() if node else None
        huge_free[n] = node.meminfo.get("HugePages_Free") if node else None
    hugepage_kb = host.hugepages.hugepagesize_kb if host.hugepages else None
    if hugepage_kb is None and host.meminfo:
        hugepage_kb = host.meminfo.values.get("Hugepagesize")
    arch = (host.cpu.architecture if host.cpu else None) or ""
    if hugepage_kb is None and arch == "x86_64" and any(v is not None for v in huge_free.values()):
        hugepage_kb = 2048  # the x86_64 default size; node meminfo counts pages without their size

    used: dict[int, str] = {}
    for other in host.domains:
        if target is not None and _same_domain(other, target):
            continue
        for cpu in _other_pins(other):
            used.setdefault(cpu, other.name or other.uuid or "another guest")

    isolated = frozenset(host.cmdline.cpulist("isolcpus")) if host.cmdline else frozenset()

    known = {d.name for d in host.domains} | {d.uuid for d in host.domains}
    target_ids = {target.name, target.uuid} if target else set()
    running = [s.name for s in host.virsh_list.running()] if host.virsh_list else []
    unknown = tuple(n for n in running if n not in known and n not in target_ids)

    distances: dict[tuple[int, int], int] = {}
    if host.numa and host.numa.distances:
        ids = host.numa.distance_nodes
        for i, row in enumerate(host.numa.distances):
            for j, value in enumerate(row):
                if i < len(ids) and j < len(ids):
                    distances[(ids[i], ids[j])] = value

    return HostTopology(
        nodes=nodes,
        cores=cores,
        free_kb=free_kb,
        hugepage_kb=hugepage_kb,
        hugepages_free=huge_free,
        isolated=isolated,
        used=used,
        distances=distances,
        unknown_guests=unknown,
        notes=tuple(notes),
    )


# ------------------------------------------------------------------- planning


def _gib(kb: int | None) -> str:
    return "unknown" if kb is None else f"{kb / 1024 / 1024:.1f} GiB"


def _free_cores(topo: HostTopology, node: int) -> list[tuple[int, ...]]:
    """Cores of ``node`` no other guest touches (a core shared with another
    guest would split SMT siblings between guests), CPU 0's core excluded."""
    used = set(topo.used)
    return [c for c in topo.node_cores(node) if not (set(c) & used) and HOUSEKEEPING_CPU not in c]


def _split(total: int, parts: int, *, align: int = 1) -> list[int]:
    """``total`` in ``parts`` near-equal aligned pieces, the remainder on the last.

    >>> _split(10, 3), _split(33554432, 2, align=1024)
    ([3, 3, 4], [16777216, 16777216])
    """
    base = (total // parts) // align * align
    return [base] * (parts - 1) + [total - base * (parts - 1)]


def plan_placement(
    *,
    topology: HostTopology,
    vcpus: int,
    memory_kb: int | None,
    iothread_ids: list[int] | tuple[int, ...] = (),
) -> Placement | NoRemedy:
    """Choose host CPUs and nodes for a guest of ``vcpus`` vCPUs and ``memory_kb``.

    One node when the guest fits (most free memory first, then most free
    cores); otherwise the smallest number of nodes that divides the vCPUs
    evenly. Consecutive vCPUs fill the SMT siblings of one core, so the guest
    topology can say ``threads=2`` like the host. Emulator and I/O threads get
    spare whole cores of the same node(s).

    >>> topo = HostTopology(nodes={0: (0, 1), 1: (2, 3)})
    >>> plan_placement(topology=topo, vcpus=8, memory_kb=None).reason[:40]
    'not enough free CPUs: the guest needs 8 '
    """
    key = "placement"
    if vcpus < 1:
        return NoRemedy(key=key, reason="the guest has no vCPUs")
    t_host = topology.smt
    free = {n: _free_cores(topology, n) for n in sorted(topology.nodes)}
    if topology.isolated:
        # vCPUs first on isolated cores (reserved for guests), housekeeping last
        for cores in free.values():
            cores.sort(key=lambda c: (not set(c) <= topology.isolated, c))
    notes: list[str] = list(topology.notes)

    chosen: list[int] | None = None
    sizes: list[int] = []
    mems: list[int | None] = []
    for k in range(1, len(free) + 1):
        if vcpus % k or vcpus < k:
            continue
        sizes = [vcpus // k] * k
        need_cores = -(-sizes[0] // t_host)
        mems = list(_split(memory_kb, k, align=MIB_KB)) if memory_kb else [None] * k
        need_mem = max((m for m in mems if m is not None), default=None)
        candidates = [
            n
            for n, cores in free.items()
            if len(cores) >= need_cores
            and (need_mem is None or (free_kb := topology.free_kb.get(n)) is None or free_kb >= need_mem)
        ]
        if len(candidates) < k:
            continue
        candidates.sort(key=lambda n: (-(topology.free_kb.get(n) or 0), -len(free[n]), n))
        chosen = sorted(candidates[:k])
        break
    if chosen is None:
        best = max(free, key=lambda n: (len(free[n]), topology.free_kb.get(n) or 0))
        cpus_free = sum(len(c) for c in free[best])
        if sum(len(c) for cores in free.values() for c in cores) < vcpus:
            return NoRemedy(
                key=key,
                reason=f"not enough free CPUs: the guest needs {vcpus} and the host has "
                f"{sum(len(c) for cores in free.values() for c in cores)} CPUs that no other guest is pinned "
                f"to (CPU {HOUSEKEEPING_CPU}'s core is kept for the host)",
            )
        return NoRemedy(
            key=key,
            reason=f"no balanced placement: {vcpus} vCPUs and {_gib(memory_kb)} do not fit one node "
            f"(node {best} has {cpus_free} free CPUs and {_gib(topology.free_kb.get(best))} free memory) "
            "nor an even split over several nodes",
        )

    cells: list[CellPlan] = []
    spare: dict[int, list[tuple[int, ...]]] = {}
    next_vcpu = 0
    for index, (node, size, mem) in enumerate(zip(chosen, sizes, mems, strict=True)):
        cores = list(free[node])
        host_cpus: list[int] = []
        leftover: list[int] = []
        while len(host_cpus) < size:
            core = cores.pop(0)
            take = min(len(core), size - len(host_cpus))
            host_cpus.extend(core[:take])
            leftover.extend(core[take:])
        if topology.isolated:
            # emulator/iothreads belong on housekeeping CPUs, isolated ones last
            cores.sort(key=lambda c: (set(c) <= topology.isolated, c))
        # a half-used core's idle sibling already belongs to this guest: use it first
        spare[node] = ([tuple(leftover)] if leftover else []) + cores
        vcpu_ids = tuple(range(next_vcpu, next_vcpu + size))
        next_vcpu += size
        cells.append(
            CellPlan(cell=index, node=node, vcpus=vcpu_ids, host_cpus=tuple(host_cpus), memory_kb=mem or 0)
        )
        if mem is not None and topology.free_kb.get(node) is None:
            notes.append(f"free memory of node {node} is unknown: check numactl -H before applying")

    first = chosen[0]
    pool = [c for n in chosen for c in spare[n]]
    if spare[first]:
        emulator = spare[first][0]
        pool.remove(emulator)
    elif pool:
        emulator = pool.pop(0)
    else:
        emulator = tuple(cells[0].host_cpus)
        notes.append(
            "no spare CPU is left in the chosen node(s): the emulator and I/O threads share the guest's own "
            "CPUs (shrink the guest by one core to give them a CPU of their own)"
        )
    iothreads: dict[int, tuple[int, ...]] = {}
    for i, io_id in enumerate(sorted(iothread_ids)):
        iothreads[io_id] = tuple(pool[i % len(pool)]) if pool else tuple(emulator)

    threads = t_host if all(s % t_host == 0 for s in sizes) else 1
    if t_host > 1 and threads == 1:
        notes.append(
            f"{vcpus} vCPUs cannot be described as {t_host} threads per core: the guest topology says "
            "threads=1 while the pins still keep SMT siblings within this guest"
        )
    cores_per_socket = sizes[0] // threads

    hugepages = False
    if memory_kb and topology.hugepage_kb:
        size_kb = topology.hugepage_kb
        hugepages = all(
            c.memory_kb % size_kb == 0 and (topology.hugepages_free.get(c.node) or 0) * size_kb >= c.memory_kb
            for c in cells
        )
        if not hugepages:
            pages = {c.node: -(-c.memory_kb // size_kb) for c in cells}
            notes.append(
                _("not enough free huge pages for the guest: reserve them first, e.g.")
                + " "
                + "; ".join(
                    f"echo {p} > /sys/devices/system/node/node{n}/hugepages/"
                    f"hugepages-{size_kb}kB/nr_hugepages"
                    for n, p in pages.items()
                )
                + ", then add <memoryBacking><hugepages/></memoryBacking>"
            )
    if topology.unknown_guests:
        notes.append(
            _(
                "%(n)s other running guest(s) have no domain XML in the snapshot (%(guests)s): "
                "their pins could not be checked"
            )
            % {"n": len(topology.unknown_guests), "guests": ", ".join(topology.unknown_guests[:6])}
        )
    return Placement(
        cells=tuple(cells),
        emulator_cpus=tuple(sorted(emulator)),
        iothread_cpus={k: tuple(sorted(v)) for k, v in iothreads.items()},
        sockets=len(cells),
        cores=cores_per_socket,
        threads=threads,
        hugepages=hugepages,
        notes=tuple(notes),
    )


def check_placement(placement: Placement, topology: HostTopology) -> list[str]:
    """Every rule a placement must satisfy; an empty list means valid.

    >>> topo = HostTopology(nodes={0: (0, 1, 2, 3)}, used={3: "db2"})
    >>> bad = Placement(cells=(CellPlan(0, 0, (0,), (3,), 0),), emulator_cpus=(9,),
    ...                 iothread_cpus={}, sockets=1, cores=1, threads=1)
    >>> check_placement(bad, topo)
    ['CPU 3 of vCPU 0 is pinned by db2', 'emulator CPUs 9 do not exist on the host']
    """
    problems: list[str] = []
    node_of = topology.node_of
    core_of = {cpu: core for core in topology.cores for cpu in core}
    seen: dict[int, int] = {}
    guest_cpus: set[int] = set()
    for cell in placement.cells:
        if len(cell.vcpus) != len(cell.host_cpus):
            problems.append(f"cell {cell.cell}: vCPU and CPU counts differ")
        for vcpu, cpu in zip(cell.vcpus, cell.host_cpus, strict=False):
            if cpu not in node_of:
                problems.append(f"CPU {cpu} of vCPU {vcpu} does not exist on the host")
                continue
            if cpu in topology.used:
                problems.append(f"CPU {cpu} of vCPU {vcpu} is pinned by {topology.used[cpu]}")
            if node_of[cpu] != cell.node:
                problems.append(f"CPU {cpu} of vCPU {vcpu} is not on node {cell.node}")
            if cpu in seen:
                problems.append(f"CPU {cpu} is given to vCPUs {seen[cpu]} and {vcpu}")
            seen[cpu] = vcpu
            guest_cpus.add(cpu)
    extra = [("emulator", placement.emulator_cpus)] + [
        (f"iothread {k}", v) for k, v in placement.iothread_cpus.items()
    ]
    for what, cpus in extra:
        missing = [c for c in cpus if c not in node_of]
        if missing:
            problems.append(f"{what} CPUs {format_cpulist(missing)} do not exist on the host")
        taken = [c for c in cpus if c in topology.used]
        if taken:
            problems.append(f"{what} CPUs {format_cpulist(taken)} are pinned by another guest")
        off_node = [c for c in cpus if c in node_of and node_of[c] not in placement.nodes]
        if off_node:
            problems.append(f"{what} CPUs {format_cpulist(off_node)} are outside the guest's nodes")
        guest_cpus.update(cpus)
    # SMT: a core touched by this guest is not shared with another guest (the
    # CPU itself being taken is reported above) ...
    for cpu in sorted(guest_cpus):
        core = core_of.get(cpu, (cpu,))
        shared = [c for c in core if c != cpu and c in topology.used]
        if shared:
            problems.append(f"CPU {cpu} shares its core with {topology.used[shared[0]]} (CPU {shared[0]})")
    # ... and when the guest says threads=N, vCPUs N*i..N*i+N-1 are one host core
    if placement.threads > 1:
        pins = placement.vcpupin
        for first in range(0, len(pins), placement.threads):
            group = [pins.get(v) for v in range(first, first + placement.threads)]
            cores = {core_of.get(c) for c in group if c is not None}
            if len(cores) != 1 or None in cores:
                last = first + placement.threads - 1
                problems.append(f"vCPUs {first}-{last} are not SMT siblings: {group}")
    total = sum(len(c.vcpus) for c in placement.cells)
    if placement.sockets * placement.cores * placement.threads != total:
        problems.append(
            f"topology {placement.sockets}x{placement.cores}x{placement.threads} != {total} vCPUs"
        )
    return problems

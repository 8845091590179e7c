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
from collectors.derived.memory import DEFAULT_HUGEPAGE_KB, hugepage_size_kb
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
    node_of = {c: n for n, cpus in nodes.items() for c in cpus}
    all_cpus = sorted(node_of)
    singles = tuple((c,) for c in all_cpus)
    threads = (host.cpu.threads_per_core if host.cpu else None) or 1
    if threads <= 1:
        return singles, ""
    layouts = _sibling_layouts(all_cpus, threads)
    groups = next((g for g in layouts if _each_inside_one_node(g, node_of)), None)
    if groups is not None:
        return tuple(groups), ""
    return singles, _siblings_unknown_note(threads)


def _siblings_unknown_note(threads: int) -> str:
    """The note that each CPU is treated as a core, lscpu's ``threads`` per core notwithstanding."""
    return _(
        "lscpu reports %(threads)s threads per core but the SMT siblings could not be inferred; each "
        "CPU is treated as a core (check /sys/devices/system/cpu/cpu*/topology/thread_siblings_list)"
    ) % {"threads": threads}


def _each_inside_one_node(groups: list[tuple[int, ...]], node_of: dict[int, int]) -> bool:
    """Every group is made of CPUs the host has, all on one node."""
    return all(set(g) <= node_of.keys() and len({node_of[c] for c in g}) == 1 for g in groups)


def _sibling_layouts(all_cpus: list[int], threads: int) -> list[list[tuple[int, ...]]]:
    """The SMT groupings to try for CPUs ``0..n-1``: x86's (``c``, ``c + n/threads``)
    first, then siblings numbered next to each other; none for other numberings."""
    total = len(all_cpus)
    if total % threads or all_cpus != list(range(total)):
        return []
    stride = total // threads
    return [
        [tuple(c + k * stride for k in range(threads)) for c in range(stride)],
        [tuple(range(c, c + threads)) for c in range(0, total, threads)],
    ]


def _other_pins(domain: Domain) -> set[int]:
    """Every host CPU the domain's vCPUs, I/O threads and emulator are pinned to."""
    pin_lists = [
        *domain.vcpupin.values(),
        *domain.iothreadpin.values(),
        domain.emulatorpin or [],
        domain.vcpu_cpuset or [],
    ]
    return {cpu for pins in pin_lists for cpu in pins}


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
        return NoRemedy(key="host", reason=_("no host facts: upload the hypervisor's numactl -H and lscpu"))
    nodes = _node_cpus(host)
    if not nodes:
        return NoRemedy(
            key="host",
            reason=_("the CPUs of each NUMA node of %(host)s are unknown (numactl -H or lscpu is needed)")
            % {"host": host.hostname or host.label or _("the host")},
        )
    cores, note = _infer_cores(host, nodes)
    free_kb, huge_free = _node_memory(host, nodes)
    return HostTopology(
        nodes=nodes,
        cores=cores,
        free_kb=free_kb,
        hugepage_kb=_hugepage_size(host, huge_free),
        hugepages_free=huge_free,
        isolated=frozenset(host.cmdline.cpulist("isolcpus")) if host.cmdline else frozenset(),
        used=_pinned_by_others(host, target),
        distances=_node_distances(host),
        unknown_guests=_unknown_guests(host, target),
        notes=(note,) if note else (),
    )


def _node_cpus(host: HostFacts) -> dict[int, tuple[int, ...]]:
    """node -> its CPUs (numactl/sysfs, else lscpu)."""
    by_node: dict[int, list[int]] = {}
    for cpu, node_id in cpu_node_map(host).items():
        by_node.setdefault(node_id, []).append(cpu)
    return {n: tuple(sorted(by_node[n])) for n in sorted(by_node)}


def _node_memory(
    host: HostFacts, nodes: dict[int, tuple[int, ...]]
) -> tuple[dict[int, int | None], dict[int, int | None]]:
    """node -> free memory (KiB), and node -> free huge pages (None: unknown)."""
    free_kb: dict[int, int | None] = {}
    huge_free: dict[int, int | None] = {}
    for n in nodes:
        node = host.numa.nodes.get(n) if host.numa else None
        free_kb[n] = node.mem_free_kb() if node else None
        huge_free[n] = node.meminfo.get("HugePages_Free") if node else None
    return free_kb, huge_free


def _hugepage_size(host: HostFacts, huge_free: dict[int, int | None]) -> int | None:
    """The huge page size in KiB, from hugepages or meminfo; 2048 on an x86_64
    host whose node meminfo counts pages without saying their size."""
    hugepage_kb = hugepage_size_kb(host)
    arch = (host.cpu.architecture if host.cpu else None) or ""
    if hugepage_kb is None and arch == "x86_64" and any(v is not None for v in huge_free.values()):
        hugepage_kb = DEFAULT_HUGEPAGE_KB  # node meminfo counts pages without their size
    return hugepage_kb


def _pinned_by_others(host: HostFacts, target: Domain | None) -> dict[int, str]:
    """CPU -> the other guest pinned to it (``target`` left out)."""
    used: dict[int, str] = {}
    for other in host.domains:
        if _same_domain(other, target):
            continue
        for cpu in _other_pins(other):
            used.setdefault(cpu, other.name or other.uuid or "another guest")
    return used


def _unknown_guests(host: HostFacts, target: Domain | None) -> tuple[str, ...]:
    """Running guests (virsh list) whose domain XML the snapshot lacks."""
    known = {name for d in host.domains for name in (d.name, d.uuid)}
    if target:
        known |= {target.name, target.uuid}
    running = [s.name for s in host.virsh_list.running()] if host.virsh_list else []
    return tuple(n for n in running if n not in known)


def _node_distances(host: HostFacts) -> dict[tuple[int, int], int]:
    """(node, node) -> the distance numactl -H prints."""
    if host.numa is None:
        return {}
    ids = host.numa.distance_nodes
    # a row or column past the node ids is left out (zip stops at the shorter)
    return {
        (a, b): value
        for a, row in zip(ids, host.numa.distances, strict=False)
        for b, value in zip(ids, row, strict=False)
    }


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
        return NoRemedy(key=key, reason=_("the guest has no vCPUs"))
    free = _free_by_node(topology)
    notes: list[str] = list(topology.notes)
    split = _choose_nodes(topology, free, vcpus, memory_kb)
    if split is None:
        return _no_placement(topology, free, vcpus, memory_kb)
    chosen, sizes, _mems = split
    cells, spare = _fill_cells(topology, free, split, notes)
    emulator, iothreads = _side_threads(chosen, spare, cells, iothread_ids, notes)
    threads = _guest_threads(topology.smt, sizes, vcpus, notes)
    hugepages = _hugepages_fit(topology, memory_kb, cells, notes)
    notes.extend(_unknown_guests_note(topology))
    return Placement(
        cells=tuple(cells),
        emulator_cpus=tuple(sorted(emulator)),
        iothread_cpus={k: tuple(sorted(v)) for k, v in iothreads.items()},
        sockets=len(cells),
        cores=sizes[0] // threads,
        threads=threads,
        hugepages=hugepages,
        notes=tuple(notes),
    )


def _unknown_guests_note(topology: HostTopology) -> list[str]:
    """The note naming the running guests whose pins could not be checked (none without any)."""
    if not topology.unknown_guests:
        return []
    return [
        _(
            "%(n)s other running guest(s) have no domain XML in the snapshot (%(guests)s): "
            "their pins could not be checked"
        )
        % {"n": len(topology.unknown_guests), "guests": ", ".join(topology.unknown_guests[:6])}
    ]


Cores = list[tuple[int, ...]]
# (the nodes chosen, the vCPUs of each, the memory of each in KiB)
_Split = tuple[list[int], list[int], list[int | None]]


def _free_by_node(topology: HostTopology) -> dict[int, Cores]:
    """node -> its free cores (:func:`_free_cores`); with isolated CPUs, those
    first (they are reserved for guests) and housekeeping cores last."""
    free = {n: _free_cores(topology, n) for n in sorted(topology.nodes)}
    if topology.isolated:
        for cores in free.values():
            cores.sort(key=lambda c: (not set(c) <= topology.isolated, c))
    return free


def _choose_nodes(
    topology: HostTopology, free: dict[int, Cores], vcpus: int, memory_kb: int | None
) -> _Split | None:
    """The fewest nodes that divide the vCPUs evenly and each hold their share
    of cores and memory (most free memory first, then most free cores)."""
    for k in range(1, len(free) + 1):
        if vcpus % k or vcpus < k:
            continue
        sizes = [vcpus // k] * k
        mems: list[int | None] = list(_split(memory_kb, k, align=MIB_KB)) if memory_kb else [None] * k
        candidates = _nodes_holding(topology, free, -(-sizes[0] // topology.smt), mems)
        if len(candidates) < k:
            continue
        candidates.sort(key=lambda n: (-(topology.free_kb.get(n) or 0), -len(free[n]), n))
        return sorted(candidates[:k]), sizes, mems
    return None


def _nodes_holding(
    topology: HostTopology, free: dict[int, Cores], need_cores: int, mems: list[int | None]
) -> list[int]:
    """The nodes with ``need_cores`` free cores and the largest memory share free
    (a node whose free memory is unknown is taken on trust)."""
    need_mem = max((m for m in mems if m is not None), default=None)
    return [n for n, cores in free.items() if len(cores) >= need_cores and _may_hold(topology, n, need_mem)]


def _may_hold(topology: HostTopology, node: int, need_kb: int | None) -> bool:
    """Whether ``node`` has ``need_kb`` free, or its free memory or the need is unknown."""
    free_kb = topology.free_kb.get(node)
    return need_kb is None or free_kb is None or free_kb >= need_kb


def _no_placement(
    topology: HostTopology, free: dict[int, Cores], vcpus: int, memory_kb: int | None
) -> NoRemedy:
    best = max(free, key=lambda n: (len(free[n]), topology.free_kb.get(n) or 0))
    cpus_free = sum(len(c) for c in free[best])
    all_free = sum(len(c) for cores in free.values() for c in cores)
    if all_free < vcpus:
        return NoRemedy(
            key="placement",
            reason=_(
                "not enough free CPUs: the guest needs %(vcpus)s and the host has %(free)s CPUs that "
                "no other guest is pinned to (CPU %(housekeeping)s's core is kept for the host)"
            )
            % {
                "vcpus": vcpus,
                "free": all_free,
                "housekeeping": HOUSEKEEPING_CPU,
            },
        )
    return NoRemedy(
        key="placement",
        reason=_(
            "no balanced placement: %(vcpus)s vCPUs and %(memory)s do not fit one node (node %(node)s "
            "has %(free)s free CPUs and %(free_memory)s free memory) nor an even split over several nodes"
        )
        % {
            "vcpus": vcpus,
            "memory": _gib(memory_kb),
            "node": best,
            "free": cpus_free,
            "free_memory": _gib(topology.free_kb.get(best)),
        },
    )


def _take_cores(cores: Cores, size: int) -> tuple[list[int], list[int]]:
    """``size`` CPUs from the first ``cores`` (whole cores, SMT siblings together),
    popped from the list, and the unused siblings of the last core taken."""
    host_cpus: list[int] = []
    leftover: list[int] = []
    while len(host_cpus) < size:
        core = cores.pop(0)
        take = min(len(core), size - len(host_cpus))
        host_cpus.extend(core[:take])
        leftover.extend(core[take:])
    return host_cpus, leftover


def _fill_cells(
    topology: HostTopology, free: dict[int, Cores], split: _Split, notes: list[str]
) -> tuple[list[CellPlan], dict[int, Cores]]:
    """One guest NUMA cell per chosen node, consecutive vCPUs on SMT siblings;
    and node -> the cores left for the emulator and I/O threads."""
    cells: list[CellPlan] = []
    spare: dict[int, Cores] = {}
    next_vcpu = 0
    for index, (node, size, mem) in enumerate(zip(*split, strict=True)):
        cores = list(free[node])
        host_cpus, leftover = _take_cores(cores, size)
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
            notes.append(
                _("free memory of node %(node)s is unknown: check numactl -H before applying")
                % {"node": node}
            )
    return cells, spare


def _side_threads(
    chosen: list[int],
    spare: dict[int, Cores],
    cells: list[CellPlan],
    iothread_ids: list[int] | tuple[int, ...],
    notes: list[str],
) -> tuple[tuple[int, ...], dict[int, tuple[int, ...]]]:
    """The emulator's CPUs (a spare core of the first node, else of another)
    and each I/O thread's (the other spare cores in turn)."""
    pool = [c for n in chosen for c in spare[n]]
    if spare[chosen[0]]:
        emulator = spare[chosen[0]][0]
        pool.remove(emulator)
    elif pool:
        emulator = pool.pop(0)
    else:
        emulator = tuple(cells[0].host_cpus)
        notes.append(
            _(
                "no spare CPU is left in the chosen node(s): the emulator and I/O threads share the guest's "
                "own CPUs (shrink the guest by one core to give them a CPU of their own)"
            )
        )
    iothreads = {
        io_id: tuple(pool[i % len(pool)]) if pool else tuple(emulator)
        for i, io_id in enumerate(sorted(iothread_ids))
    }
    return emulator, iothreads


def _guest_threads(t_host: int, sizes: list[int], vcpus: int, notes: list[str]) -> int:
    """Threads per core of the guest topology: the host's when every cell's
    vCPUs fill whole cores, else 1 (with a note)."""
    threads = t_host if all(s % t_host == 0 for s in sizes) else 1
    if t_host > 1 and threads == 1:
        notes.append(
            _(
                "%(vcpus)s vCPUs cannot be described as %(threads)s threads per core: the guest topology "
                "says threads=1 while the pins still keep SMT siblings within this guest"
            )
            % {"vcpus": vcpus, "threads": t_host}
        )
    return threads


def _hugepages_fit(
    topology: HostTopology, memory_kb: int | None, cells: list[CellPlan], notes: list[str]
) -> bool:
    """Whether every cell's memory is whole huge pages that its node has free;
    when not, a note says how many to reserve where."""
    if not (memory_kb and topology.hugepage_kb):
        return False
    size_kb = topology.hugepage_kb
    fits = all(
        c.memory_kb % size_kb == 0 and (topology.hugepages_free.get(c.node) or 0) * size_kb >= c.memory_kb
        for c in cells
    )
    if not fits:
        notes.append(_reserve_hugepages_note(cells, size_kb))
    return fits


def _reserve_hugepages_note(cells: list[CellPlan], size_kb: int) -> str:
    """The note with the commands that reserve each cell's memory as huge pages of ``size_kb`` on its node."""
    pages = {c.node: -(-c.memory_kb // size_kb) for c in cells}
    reserve = "; ".join(
        f"echo {p} > /sys/devices/system/node/node{n}/hugepages/hugepages-{size_kb}kB/nr_hugepages"
        for n, p in pages.items()
    )
    return _(
        "not enough free huge pages for the guest: reserve them first, e.g. %(commands)s, "
        "then add <memoryBacking><hugepages/></memoryBacking>"
    ) % {"commands": reserve}


def check_placement(placement: Placement, topology: HostTopology) -> list[str]:
    """Every rule a placement must satisfy; an empty list means valid.

    >>> topo = HostTopology(nodes={0: (0, 1, 2, 3)}, used={3: "db2"})
    >>> bad = Placement(cells=(CellPlan(0, 0, (0,), (3,), 0),), emulator_cpus=(9,),
    ...                 iothread_cpus={}, sockets=1, cores=1, threads=1)
    >>> check_placement(bad, topo)
    ['CPU 3 of vCPU 0 is pinned by db2', 'emulator CPUs 9 do not exist on the host']
    """
    core_of = {cpu: core for core in topology.cores for cpu in core}
    guest_cpus: set[int] = set()
    problems = _vcpu_pin_problems(placement, topology, guest_cpus)
    problems += _side_thread_problems(placement, topology, guest_cpus)
    problems += _smt_problems(placement, topology, guest_cpus, core_of)
    total = sum(len(c.vcpus) for c in placement.cells)
    if placement.sockets * placement.cores * placement.threads != total:
        problems.append(
            f"topology {placement.sockets}x{placement.cores}x{placement.threads} != {total} vCPUs"
        )
    return problems


def _vcpu_pin_problems(placement: Placement, topology: HostTopology, guest_cpus: set[int]) -> list[str]:
    """Each vCPU's CPU exists, is free, is on its cell's node and is no other
    vCPU's; the CPUs are added to ``guest_cpus``."""
    problems: list[str] = []
    node_of = topology.node_of
    seen: dict[int, int] = {}
    for cell in placement.cells:
        if len(cell.vcpus) != len(cell.host_cpus):
            problems.append(f"cell {cell.cell}: vCPU and CPU counts differ")
        for vcpu, cpu in zip(cell.vcpus, cell.host_cpus, strict=False):
            if cpu not in node_of:
                problems.append(f"CPU {cpu} of vCPU {vcpu} does not exist on the host")
                continue
            problems += _pin_problems(vcpu, cpu, node_of[cpu], cell.node, topology.used, seen)
            seen[cpu] = vcpu
            guest_cpus.add(cpu)
    return problems


def _pin_problems(
    vcpu: int, cpu: int, cpu_node: int, node: int, used: dict[int, str], seen: dict[int, int]
) -> list[str]:
    """What is wrong with pinning ``vcpu`` to host ``cpu`` (on ``cpu_node``) for
    a cell on ``node``: another guest's CPU (``used``), another node's, another
    vCPU's (``seen``: CPU -> vCPU)."""
    problems = []
    if cpu in used:
        problems.append(f"CPU {cpu} of vCPU {vcpu} is pinned by {used[cpu]}")
    if cpu_node != node:
        problems.append(f"CPU {cpu} of vCPU {vcpu} is not on node {node}")
    if cpu in seen:
        problems.append(f"CPU {cpu} is given to vCPUs {seen[cpu]} and {vcpu}")
    return problems


def _side_thread_problems(placement: Placement, topology: HostTopology, guest_cpus: set[int]) -> list[str]:
    """The emulator's and each I/O thread's CPUs exist, are free and are on the
    guest's nodes; they are added to ``guest_cpus``."""
    problems: list[str] = []
    extra = [("emulator", placement.emulator_cpus)] + [
        (f"iothread {k}", v) for k, v in placement.iothread_cpus.items()
    ]
    for what, cpus in extra:
        problems += _thread_cpu_problems(what, cpus, placement, topology)
        guest_cpus.update(cpus)
    return problems


def _thread_cpu_problems(
    what: str, cpus: tuple[int, ...], placement: Placement, topology: HostTopology
) -> list[str]:
    """What is wrong with the CPUs of one side thread (``what``): missing on
    the host, pinned by another guest, outside the guest's nodes."""
    node_of = topology.node_of
    wrong = {
        "do not exist on the host": [c for c in cpus if c not in node_of],
        "are pinned by another guest": [c for c in cpus if c in topology.used],
        "are outside the guest's nodes": [
            c for c in cpus if c in node_of and node_of[c] not in placement.nodes
        ],
    }
    return [f"{what} CPUs {format_cpulist(found)} {problem}" for problem, found in wrong.items() if found]


def _smt_problems(
    placement: Placement, topology: HostTopology, guest_cpus: set[int], core_of: dict[int, tuple[int, ...]]
) -> list[str]:
    """A core the guest touches is shared with no other guest (the CPU itself
    being taken is reported apart), and with threads=N, vCPUs N*i..N*i+N-1
    are one host core."""
    problems: list[str] = []
    for cpu in sorted(guest_cpus):
        core = core_of.get(cpu, (cpu,))
        shared = [c for c in core if c != cpu and c in topology.used]
        if shared:
            problems.append(f"CPU {cpu} shares its core with {topology.used[shared[0]]} (CPU {shared[0]})")
    return problems + _sibling_problems(placement, core_of)


def _sibling_problems(placement: Placement, core_of: dict[int, tuple[int, ...]]) -> list[str]:
    """With threads=N, each group of N vCPUs (N*i..N*i+N-1) is pinned to one host core."""
    problems: list[str] = []
    if placement.threads <= 1:
        return problems
    pins = placement.vcpupin
    for first in range(0, len(pins), placement.threads):
        group = [pins.get(v) for v in range(first, first + placement.threads)]
        cores = {core_of.get(c) for c in group if c is not None}
        if len(cores) != 1 or None in cores:
            last = first + placement.threads - 1
            problems.append(f"vCPUs {first}-{last} are not SMT siblings: {group}")
    return problems

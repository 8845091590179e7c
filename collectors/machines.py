"""One paste, several machines: telling them apart, and saying where facts disagree.

A transcript's prompts name the host they run on (``[root@db01 ~]#``), and
``collectors.transcript`` starts a new host where a prompt names another one.
Pastes without such prompts still show several machines: two servers'
``numactl -H`` one after the other (a manual page, a comparison), a
hypervisor's outputs followed by its guest's ``lscpu`` (``Hypervisor vendor:
KVM``) and database. Merged into one host, the first ``numactl -H`` gave the
distances and the second the nodes, and a guest's database was the
hypervisor's.

:func:`machine_segments` refines a transcript's segments: a block of a
whole-machine command (``numactl -H``, ``lscpu``) that disagrees with what the
current machine already showed (another node count, CPU count or distance
matrix, a guest's ``lscpu`` after a physical one or the reverse) starts a new
machine; the same output twice (a command run again) does not.

:func:`find_conflicts` is the fallback where nothing is split (an archive, or
:func:`collectors.archive.load_host`, which merges everything into one host):
artifacts of one host that disagree on a fact are listed as
:class:`~collectors.facts.FactConflict`, and the engine does not decide on
that fact (``engine.partial``).
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from collectors import facts as f
from collectors import parsers

# outputs that say whether the machine is virtual (collectors.parsers.virt,
# .lspci): DMI "QEMU", a virtio NIC, QEMU's 440FX or "kvm" after a physical
# lscpu is another machine
GUEST_SIGNAL_KINDS = (
    "dmi_system",
    "dmi_sys_vendor",
    "dmi_product_name",
    "systemd_detect_virt",
    "ethtool_driver",
    "virtio_devices",
    "lsblk_virtio",
    "lspci",
    "pci_sysfs",
)
# the kinds whose output describes a whole machine: a second, different one is
# another machine
WHOLE_MACHINE_KINDS = ("numactl_hardware", "lscpu", *GUEST_SIGNAL_KINDS)
# a block larger than this is not parsed twice to look for a machine boundary
MAX_PROBE_CHARS = 256 << 10
# outputs of one command in one block that are told apart, and machines split
# off one paste: a ticket shows a few; more is generated text, read as it is
MAX_OUTPUTS = 16
MAX_MACHINES = 16
# MemTotal and the nodes' sizes are not compared: one real guest (this set's
# build VM) shows 23.5 GiB in /proc/meminfo and a 5 GiB node in numactl -H


# the first line of one whole output of a whole-machine command: two of them in
# one block (pasted without a prompt between) are two outputs
_OUTPUT_START = {
    "numactl_hardware": re.compile(r"^[ \t]*available:\s*\d+\s+nodes?\b", re.M),
    # util-linux's own samples have no Architecture line: CPU op-mode(s) opens them
    "lscpu": re.compile(r"^[ \t]*(?:Architecture|CPU op-mode\(s\)):", re.M),
}


def _output_starts(kind: str | None, text: str) -> list[int]:
    """0-based first lines of each whole output of ``kind`` in ``text``."""
    pattern = _OUTPUT_START.get(kind or "")
    firsts: list[int] = []
    if pattern is None:
        return firsts
    line, last = 0, 0
    for m in pattern.finditer(text):
        line += text.count("\n", last, m.start())  # counted once per character
        last = m.start()
        if not firsts or line - firsts[-1] > 2:  # Architecture, then CPU op-mode(s): one output
            firsts.append(line)
            if len(firsts) > MAX_OUTPUTS:
                return []  # generated or hostile: read as the splitter cut it
    return firsts


def repeats_output(kind: str | None, text: str) -> bool:
    """Whether ``text`` holds several outputs of the whole-machine command ``kind``."""
    return len(_output_starts(kind, text)) > 1


def split_repeated_outputs(blocks: list[Any], parsed: dict[int, Any]) -> list[Any]:
    """``blocks`` with every block that holds several outputs of one
    whole-machine command (two ``available: N nodes`` lines) cut into one block
    per output; ``parsed`` (block index -> result) is re-keyed in place."""
    out: list[Any] = []
    moved: dict[int, Any] = {}
    for index, block in enumerate(blocks):
        firsts = [] if block.prose else _output_starts(block.kind, block.text)
        if len(firsts) < 2:
            if index in parsed:
                moved[len(out)] = parsed[index]
            out.append(block)
            continue
        out.extend(_cut_at(block, firsts))
        out[-1].end_line = max(out[-1].end_line, block.end_line)
    parsed.clear()
    parsed.update(moved)
    return out


def _cut_at(block: Any, firsts: list[int]) -> list[Any]:
    """``block`` cut into one block per output, each starting at one of the
    ``firsts`` (0-based lines of the block; the first output starts the block)."""
    lines = block.text.split("\n")
    firsts[0] = 0
    ends = [*firsts[1:], len(lines)]
    spans = enumerate(zip(firsts, ends, strict=True))
    return [_output_block(block, lines, first, last, k == 0) for k, (first, last) in spans]


def _output_block(block: Any, lines: list[str], first: int, last: int, opening: bool) -> Any:
    """The block of ``lines[first:last]`` of ``block`` (the opening one keeps its command)."""
    origins = block.origins[first:last] if block.origins else None
    return dataclasses.replace(
        block,
        text="\n".join(lines[first:last]),
        start_line=origins[0] if origins else block.start_line + first,
        end_line=origins[-1] if origins else min(block.start_line + last - 1, block.end_line),
        origins=origins,
        command=block.command if opening else None,
    )


@dataclass
class MachineView:
    """What one whole-machine output says of its machine (None: not said)."""

    kind: str
    line: int
    nodes: int | None = None
    cpus: int | None = None
    guest: bool | None = None
    distances: tuple[tuple[int, ...], ...] | None = None
    node_cpus: tuple[tuple[int, ...], ...] | None = None

    def differs(self, other: MachineView) -> str | None:
        """Why ``other`` cannot be the machine this output described (None: it can)."""
        checks: list[tuple[str, Any, Any]] = [
            ("NUMA nodes", self.nodes, other.nodes),
            ("CPUs", self.cpus, other.cpus),
            ("guest/physical", self.guest, other.guest),
        ]
        if self.kind == other.kind == "numactl_hardware":
            checks.append(("node distances", self.distances, other.distances))
            checks.append(("node CPU lists", self.node_cpus, other.node_cpus))
        for what, mine, theirs in checks:
            if mine is not None and theirs is not None and mine != theirs:
                return what
        return None


def view_of(kind: str, result: Any, line: int) -> MachineView | None:
    """The machine a parsed whole-machine output describes."""
    if kind in GUEST_SIGNAL_KINDS:
        return _signals_view(kind, result, line)
    if kind == "numactl_hardware" and isinstance(result, f.NumactlHardware) and result.nodes:
        return _numactl_view(result, line)
    if kind == "lscpu" and isinstance(result, f.CpuTopology):
        return _lscpu_view(result, line)
    return None


def _numactl_view(result: f.NumactlHardware, line: int) -> MachineView:
    cpu_lists = [tuple(n.cpus) for _i, n in sorted(result.nodes.items())]
    listed = all(cpu_lists)
    return MachineView(
        kind="numactl_hardware",
        line=line,
        nodes=len(result.nodes),
        cpus=sum(len(c) for c in cpu_lists) if listed else None,
        distances=tuple(tuple(r) for r in result.distances) or None,
        node_cpus=tuple(cpu_lists) if listed else None,
    )


def cpu_map_only(cpu: f.CpuTopology) -> bool:
    """Whether ``cpu`` is a CPU map alone (``lscpu -e`` / ``-p``: rows, no summary)."""
    return "cpu_map_rows" in cpu.extra and not (cpu.model_name or cpu.architecture)


def _lscpu_view(result: f.CpuTopology, line: int) -> MachineView | None:
    if cpu_map_only(result):
        return None  # not the summary
    if result.cpus is None and result.numa_nodes is None:
        return None
    return MachineView(
        kind="lscpu",
        line=line,
        nodes=result.numa_nodes,
        cpus=result.cpus,
        guest=bool(result.hypervisor_vendor and result.hypervisor_vendor.strip()),
    )


def _signals_view(kind: str, result: Any, line: int) -> MachineView | None:
    """DMI, systemd-detect-virt or a virtio device: virtual or physical, nothing more."""
    if isinstance(result, f.PciDevices):
        result = result.signals  # a virtio or emulated device; no device list says "physical"
    if isinstance(result, f.GuestSignals) and result.virtual is not None:
        return MachineView(kind=kind, line=line, guest=result.virtual)
    return None


@dataclass
class Boundary:
    """A new machine starts at ``start`` (0-based line) of the transcript."""

    start: int
    line: int  # 1-based, for messages
    reason: str
    # the name the new machine shows (a database's own hostname), and the one
    # the prompts before it named, which its blocks inherit and which is not its own
    hostname: str | None = None
    previous: str | None = None


def _probe(kind: str, text: str) -> Any:
    if len(text) > MAX_PROBE_CHARS:
        return None
    spec = parsers.REGISTRY.get(kind)
    if spec is None:
        return None
    try:
        return parsers.parse(spec, text)
    except Exception:  # a probe never fails the upload: the block is parsed again later
        return None


def _first(result: Any) -> Any:
    return next(iter(result), None) if isinstance(result, list | tuple) else result


@dataclass
class _Walk:
    """Where :func:`machine_boundaries` is in the transcript: the boundaries
    found, the whole-machine outputs seen since the last one, and the host the
    current machine's prompts named."""

    out: list[Boundary] = field(default_factory=list)
    seen: list[MachineView] = field(default_factory=list)
    named: str | None = None

    def remember(self, view: MachineView) -> None:
        """Keep ``view`` to compare the next outputs with (the same output again adds nothing)."""
        if all(_key(view) != _key(v) for v in self.seen[-4:]) and len(self.seen) < MAX_OUTPUTS:
            self.seen.append(view)

    def split(self, boundary: Boundary, named: str | None) -> None:
        if len(self.out) < MAX_MACHINES:
            self.out.append(boundary)
        self.seen, self.named = [], named


def _database_boundary(walk: _Walk, block: Any, server: str | None, lines: Sequence[str] | None) -> None:
    """A ``SHOW VARIABLES`` whose server names another host than the prompt did."""
    named = walk.named
    if not server or not named or _short(server) == _short(named):
        return
    # a prompt that itself names the host (``[root@db01 ~]# mysql -h db02``)
    # may run a client of another server, or an alias: a conflict, no split
    if _prompt_names(lines, block, named) or len(walk.out) >= MAX_MACHINES:
        return
    reason = (
        f"the database at line {block.start_line} runs on {server}, "
        f"not on {named} whose prompt the paste showed before it"
    )
    boundary = Boundary(
        start=block.start_line - 1, line=block.start_line, reason=reason, hostname=server, previous=named
    )
    walk.split(boundary, server)


def _output_boundary(walk: _Walk, block: Any, view: MachineView) -> None:
    """A whole-machine output (numactl -H, lscpu) that disagrees with one seen before."""
    why = next((w for v in walk.seen if (w := v.differs(view))), None)
    if why is not None and len(walk.out) < MAX_MACHINES:
        reason = (
            f"the {block.label or block.kind} at line {block.start_line} shows another machine "
            f"({why} differ from line {walk.seen[0].line})"
        )
        walk.split(
            Boundary(start=block.start_line - 1, line=block.start_line, reason=reason, previous=walk.named),
            walk.named,
        )
    walk.remember(view)


def _parsed(index: int, block: Any, parsed: dict[int, Any], probe: Callable[[str, str], Any]) -> Any:
    """The block's parse result, probed once and kept in ``parsed``."""
    if index not in parsed:
        result = probe(block.kind, block.text)
        if result is None:
            return None
        parsed[index] = result
    return parsed[index]


def machine_boundaries(
    blocks: Sequence[Any],
    segment_starts: Sequence[int],
    parsed: dict[int, Any],
    probe: Callable[[str, str], Any] = _probe,
    *,
    lines: Sequence[str] | None = None,
    segment_hosts: Sequence[str | None] | None = None,
) -> list[Boundary]:
    """Where a new machine starts inside the transcript's segments.

    ``blocks`` are ``collectors.transcript.Block``s, ``segment_starts`` the
    0-based first lines of the segments the prompts made, ``parsed`` the
    results the splitter already has (block index -> result); a probe's result
    is stored there so the block is not parsed twice. ``lines`` (the
    transcript's) tell a prompt that names its host from one that inherits
    the name of an earlier prompt (``# `` after ``[root@zstack-9 ~]#``)."""
    hosts = list(segment_hosts) if segment_hosts is not None else [None] * len(segment_starts)
    walk = _Walk(named=_host_of(hosts, 0))
    segment = 0
    for index, block in enumerate(blocks):
        now = _segment_of(block.start_line - 1, segment, segment_starts)
        if now != segment:
            # a prompt named another host: that one starts afresh
            segment = now
            walk.seen, walk.named = [], _host_of(hosts, segment)
        if block.host and walk.named is None:
            walk.named = block.host
        if not block.prose:
            _read_block(walk, index, block, parsed, probe, lines)
    return walk.out


def _host_of(hosts: Sequence[str | None], segment: int) -> str | None:
    """The host the prompts of ``segment`` named (None: none, or not known)."""
    return hosts[segment] if segment < len(hosts) else None


def _read_block(
    walk: _Walk,
    index: int,
    block: Any,
    parsed: dict[int, Any],
    probe: Callable[[str, str], Any],
    lines: Sequence[str] | None,
) -> None:
    """A boundary before a database whose server or an output whose machine is
    another one than the walk's."""
    if block.kind == "mysql_variables":
        if walk.named:
            _database_boundary(walk, block, _server_hostname(index, block, parsed, probe), lines)
        return
    if block.kind not in WHOLE_MACHINE_KINDS:
        return
    result = _parsed(index, block, parsed, probe)
    view = view_of(block.kind, _first(result), block.start_line)  # (None for no result)
    if view is not None:
        _output_boundary(walk, block, view)


def _segment_of(line: int, segment: int, segment_starts: Sequence[int]) -> int:
    """The segment (from ``segment`` on) that holds the 0-based ``line``."""
    while segment + 1 < len(segment_starts) and line >= segment_starts[segment + 1]:
        segment += 1
    return segment


def _prompt_names(lines: Sequence[str] | None, block: Any, host: str) -> bool:
    """Whether the command line of ``block`` shows a prompt naming ``host``."""
    index = block.start_line - 2  # the line before the output: the prompt and command
    if not lines or not block.command or not 0 <= index < len(lines):
        return False
    return _short(host) in lines[index].lower()


def _key(view: MachineView) -> tuple[Any, ...]:
    return (view.kind, view.nodes, view.cpus, view.guest, view.distances, view.node_cpus)


def _short(name: str) -> str:
    return name.strip().lower().split(".", 1)[0]


def _server_hostname(
    index: int, block: Any, parsed: dict[int, Any], probe: Callable[[str, str], Any]
) -> str | None:
    """The ``hostname`` server variable a ``SHOW VARIABLES`` block shows."""
    result = parsed.get(index)
    if result is None:
        result = probe(block.kind, block.text)
        if result is None:
            return None
        parsed[index] = result
    db = _first(result)
    return (_server_name(db) if isinstance(db, f.DatabaseFacts) else "") or None


def _server_name(db: f.DatabaseFacts) -> str:
    """The database server's own ``hostname`` variable ("" when it does not show it)."""
    return db.variables.get("hostname", "").strip()


# ------------------------------------------------------------------- conflicts


def _where(part: f.Parsed, key: str | None = None) -> tuple[str, int | None]:
    line = part.lines.get(key) if key else None
    return part.source.artifact, line if line is not None else part.source.line


def _conflict(fact: str, reason: str, entries: Sequence[tuple[str, f.Parsed, str | None]]) -> f.FactConflict:
    conflict = f.FactConflict(fact=fact, reason=reason)
    for value, part, key in entries:
        artifact, line = _where(part, key)
        conflict.values.append(value)
        conflict.artifacts.append(artifact)
        conflict.lines.append(line)
    return conflict


def _distinct(entries: Sequence[tuple[str, f.Parsed, str | None]]) -> bool:
    return len({value for value, _p, _k in entries}) > 1


Values = list[tuple[str, f.Parsed, str | None]]


def _summaries(cpu_candidates: Sequence[f.CpuTopology]) -> list[f.CpuTopology]:
    """The CPU facts that describe the whole machine (lscpu's summary, not its
    CPU map rows alone nor /proc/cpuinfo)."""
    return [c for c in cpu_candidates if not cpu_map_only(c) and "cpuinfo" not in c.extra]


def _node_counts(numactl: list[f.NumactlHardware], summaries: list[f.CpuTopology]) -> Values:
    nodes: Values = [(str(len(p.nodes)), p, "available") for p in numactl]
    return nodes + [(str(c.numa_nodes), c, "numa_nodes") for c in summaries if c.numa_nodes]


def _cpu_counts(numactl: list[f.NumactlHardware], summaries: list[f.CpuTopology]) -> Values:
    cpus: Values = [(str(c.cpus), c, "cpus") for c in summaries if c.cpus]
    return cpus + [
        (str(sum(len(n.cpus) for n in p.nodes.values())), p, None)
        for p in numactl
        if all(n.cpus for n in p.nodes.values())
    ]


def find_conflicts(
    host: f.HostFacts, numa_parts: Sequence[f.Parsed], cpu_candidates: Sequence[f.CpuTopology]
) -> list[f.FactConflict]:
    """Facts on which one host's artifacts disagree (see the module docstring)."""
    numactl = [p for p in numa_parts if isinstance(p, f.NumactlHardware) and p.nodes]
    summaries = _summaries(cpu_candidates)
    found = (
        _node_count_conflict(numactl, summaries),
        _distances_conflict(numactl),
        _cpu_conflict(host, numactl, summaries),
        _database_conflict(host),
    )
    return [conflict for conflict in found if conflict is not None]


def _node_count_conflict(
    numactl: list[f.NumactlHardware], summaries: list[f.CpuTopology]
) -> f.FactConflict | None:
    """numactl and lscpu count the NUMA nodes differently."""
    nodes = _node_counts(numactl, summaries)
    if not _distinct(nodes):
        return None
    return _conflict("numa", "the NUMA node count differs between artifacts", nodes)


def _distances_conflict(numactl: list[f.NumactlHardware]) -> f.FactConflict | None:
    """Two numactl outputs show different node distance matrices."""
    distances: Values = [(str(p.distances), p, "distances") for p in numactl if p.distances]
    if not _distinct(distances):
        return None
    return _conflict("numa_distances", "the node distance matrices differ", distances)


def _cpu_conflict(
    host: f.HostFacts, numactl: list[f.NumactlHardware], summaries: list[f.CpuTopology]
) -> f.FactConflict | None:
    """The CPU counts differ, or an lscpu and the guest signals disagree on
    whether the machine is virtual."""
    cpus = _cpu_counts(numactl, summaries)
    roles = {bool(c.hypervisor_vendor) for c in summaries}
    signals = host.guest_signals
    if signals is not None and signals.virtual is not None:
        if summaries:
            roles.add(signals.virtual)  # DMI or virtio devices against a physical lscpu
        if len(roles) > 1:
            cpus = [*cpus, ("a virtual machine" if signals.virtual else "a physical machine", signals, None)]
    if _distinct(cpus) or len(roles) > 1:
        return _conflict("cpu", "the CPU count or the guest/physical role differs between artifacts", cpus)
    return None


def _database_conflict(host: f.HostFacts) -> f.FactConflict | None:
    """The server's own ``hostname`` variable names another machine."""
    db = host.database
    if db is None:
        return None
    name = _server_name(db)
    if not name or not host.hostname:
        return None
    if name.lower().split(".", 1)[0] == host.hostname.lower().split(".", 1)[0]:
        return None
    conflict = _conflict(
        "database",
        "the database server names another host than the one its output was pasted with",
        [(name, db, "hostname")],
    )
    conflict.values.append(host.hostname)
    conflict.artifacts.append("(prompt)")
    conflict.lines.append(None)
    return conflict

"""QEMU command lines -> :class:`Domain` (what the command line itself states).

Where a guest's configuration is published, it is most often as the command
line QEMU was started with, not as libvirt's XML: ``ps aux | grep qemu`` on a
hypervisor, the ``/var/log/libvirt/qemu/<guest>.log`` libvirt writes at each
start (sosreports carry it), CI logs. libvirt's log form, one argument per
line (libvirt's own tests/qemuxml2argvdata/net-virtio.args)::

    LC_ALL=C \\
    PATH=/bin \\
    QEMU_AUDIO_DRV=none \\
    /usr/bin/qemu-system-i386 \\
    -name QEMUGuest1 \\
    -machine pc,accel=tcg,usb=off,dump-guest-core=off \\
    -m 214 \\
    -smp 1,sockets=1,cores=1,threads=1 \\
    -drive file=/dev/HostVG/QEMUGuest1,format=raw,if=none,id=drive-ide0-0-0 \\
    -device ide-hd,bus=ide.0,unit=0,drive=drive-ide0-0-0,id=ide0-0-0,bootindex=1 \\
    -netdev user,id=hostnet0 \\
    -device virtio-net-pci,netdev=hostnet0,id=net0,mac=00:11:22:33:44:55,bus=pci.0,addr=0x3

The same arguments also come on one line (a ``ps`` row, a hand-written
command), with ``-blockdev``/``-netdev``/``-device`` given as JSON (newer
libvirt) or as ``key=value`` lists.

What is read, each only as the command line states it: the name (``-name
guest=X`` or ``-name X``), the UUID, the accelerator (``domain_type`` "kvm" for
``-enable-kvm``, ``accel=kvm`` or ``-accel kvm``; "qemu" for TCG; None when the
command line names none), vCPUs and topology (``-smp``; a bare ``-smp N``
leaves the topology to the QEMU version, so it is unknown), memory (``-m``),
the CPU model (``-cpu host`` is libvirt's host-passthrough, ``-cpu max`` its
maximum mode, a named model is custom), guest NUMA cells (``-numa node``),
huge pages (``-mem-path``, ``memory-backend-file``/``memfd`` with huge pages),
NICs (``-netdev``/``-device``, ``-nic``, the older ``-net nic``/``-net tap``
pairs) and disks with their cache mode (``-drive``, or ``-blockdev`` with the
``write-cache`` of its ``-device``).

A tap netdev uses vhost-net only when asked: QEMU's ``vhost=on|off`` option
("use vhost=on to enable experimental in kernel accelerator") is off unless
given, and QEMU turns it on by itself when ``vhostfd``/``vhostfds`` or
``vhostforce=on`` are passed. A virtio NIC on a tap without it is run by the
QEMU process, which is what libvirt's ``<driver name='qemu'/>`` means, so the
NIC's ``driver`` is "qemu" (else "vhost").

What libvirt sets outside the command line (vCPU, emulator and iothread
affinity, numatune: cgroups and sched_setaffinity) is not in it, and neither is
whatever a paste cut off the end of a long line: those elements are listed in
``Domain.unseen`` (unknown, not absent), and so are ``devices`` when a "..."
stands for elided arguments, ``cpu``, ``numa`` and
``topology`` when the line does not show them, and ``l3-cache`` for a named or
absent CPU model (whether it shows an L3 depends on the QEMU version and
machine type). ``Domain.origin`` is "qemu_cmdline".
"""

from __future__ import annotations

import bisect
import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from collectors.cpulist import parse_cpulist
from collectors.facts import Domain, DomainDisk, DomainInterface, GuestNumaCell, ParseError, ProcessList
from collectors.numbers import ascii_digits
from collectors.parsers import register
from collectors.sizes import kib

# The QEMU binaries: qemu-system-<arch>, RHEL's qemu-kvm (/usr/libexec), and
# Debian's old /usr/bin/kvm wrapper (only with a path: "kvm" alone is a word).
# collectors.derived.libvirt builds its process-name pattern from this too.
QEMU_BINARY = r"qemu-system-[\w.-]+|qemu-kvm"
_BINARY = re.compile(
    rf"(?<![\w.-])(?:[\w./-]*/)?(?:{QEMU_BINARY})(?![\w.-])|(?<![\w.-])/[\w./-]*/kvm(?![\w.-])"
)
# the binary is followed by an option (a "\\"-newline between them in libvirt's log)
_FIRST_OPTION = re.compile(r"[ \t]+(?:\\[ \t]*\r?\n[ \t]*)?-{1,2}[A-Za-z]")
# ... and the command line holds one of these (not a sentence naming a binary and a flag)
_GUEST_WORDS = (
    "name machine M enable-kvm accel m smp cpu uuid netdev net nic drive blockdev device numa mem-path"
)
_GUEST_OPTIONS = frozenset((*_GUEST_WORDS.split(), "hda", "kernel"))
# A command line is read up to this many characters (a guest with hundreds of
# devices is ~50 KiB).
MAX_COMMAND_CHARS = 1 << 20

# Elements a command line never shows: libvirt applies them through cgroups
# and affinity calls, not arguments. (Names of libvirt's XML elements, as
# Domain.unseen holds them, and "cpu-affinity": where the guest's threads may
# run at all, which no XML element alone says.)
NEVER_SHOWN = ("cputune", "vcpupin", "emulatorpin", "iothreadpin", "numatune", "memnode", "cpu-affinity")

# the implied first key of an option's key=value list (QEMU's "implied key")
_IMPLIED = {
    "name": "guest",
    "netdev": "type",
    "net": "type",
    "nic": "type",
    "device": "driver",
    "machine": "type",
    "M": "type",
    "accel": "accel",
    "smp": "cpus",
    "m": "size",
    "cpu": "model",
    "numa": "type",
    "object": "qom-type",
    "blockdev": "driver",
}
_VIRTIO_NET = re.compile(r"^virtio-net(-pci|-ccw|-device|-pci-non-transitional|-pci-transitional)?$")
_TAP_TYPES = ("tap", "bridge")  # a bridge netdev is a tap set up by qemu-bridge-helper
_CDROM_DEVICES = ("ide-cd", "scsi-cd", "usb-cd")
_DISK_DEVICES = re.compile(
    r"^(virtio-blk(-pci|-ccw|-device|-pci-non-transitional|-pci-transitional)?"
    r"|ide-hd|ide-drive|scsi-hd|scsi-disk|scsi-block|usb-storage|nvme)$"
)
_SIZE = re.compile(r"^(\d+(?:\.\d+)?)([KMGTP]?)(?:i?B)?$", re.I)
_HUGE_SIZE = re.compile(r"hugepages-?(\d+)([kMG])B?", re.I)


@dataclass
class _Option:
    name: str  # without the dash: "netdev"
    value: str | None
    line: int  # 1-based line of the option in the text
    args: dict[str, list[str]] = field(default_factory=dict)

    def get(self, key: str) -> str | None:
        values = self.args.get(key)
        return values[-1] if values else None

    def text(self, key: str) -> str:
        """The value of ``key``, "" when the option does not give it."""
        return self.get(key) or ""


@dataclass
class _CommandLine:
    options: list[_Option]
    line: int  # line of the binary
    elided: bool = False  # a "..." stands for arguments the paste left out


def looks_like_qemu_command(text: str) -> bool:
    """A QEMU binary followed by QEMU options (``qemu-system-x86_64 -name ...``)."""
    return next(_command_lines(text), None) is not None


def _detect(head: str) -> bool:
    return ("qemu" in head or "kvm" in head) and looks_like_qemu_command(head)


@register(
    "qemu_cmdline",
    commands=(
        r"(^|/)(qemu-system-[\w.-]+|qemu-kvm)\s+-",
        r"^(cat|tail|head|less|more)\b.*\blog/libvirt/qemu/\S+\.log\b",
    ),
    paths=(r"var/log/libvirt/qemu/[^/]+\.log$",),
    detect=_detect,
    priority=7,
)
def parse_qemu_cmdline(text: str) -> list[Domain]:
    """The guests of the QEMU command lines in ``text``, one Domain per guest
    name (a libvirt log holds one command line per start: the last one is kept).

    >>> (d,) = parse_qemu_cmdline("qemu-system-x86_64 -enable-kvm -smp 4 -netdev tap,id=n0 "
    ...                           "-device virtio-net-pci,netdev=n0")
    >>> d.domain_type, d.vcpus, d.interfaces[0].driver, d.unseen[:2]
    ('kvm', 4, 'qemu', ['cputune', 'vcpupin'])
    """
    text = text[:MAX_COMMAND_CHARS]
    found: dict[str, Domain] = {}
    for i, command in enumerate(_command_lines(text)):
        domain = _domain(command)
        found.pop(domain.name or f"#{i}", None)
        found[domain.name or f"#{i}"] = domain
    if not found:
        raise ParseError("no QEMU command line (qemu-system-*/qemu-kvm followed by options) found")
    return list(found.values())


def domain_of_command(command: str, line: int = 1) -> Domain | None:
    """The guest of one command (a ``ps`` row's COMMAND, already joined), or
    None when it is no QEMU command line."""
    commands = list(_command_lines(command[:MAX_COMMAND_CHARS]))
    if not commands:
        return None
    domain = _domain(commands[0])
    domain.lines = dict.fromkeys(domain.lines, line)
    return domain


def domains_of_processes(processes: ProcessList) -> list[Domain]:
    """The guests of the QEMU rows of a process list (``ps aux | grep qemu``),
    each cited at its row."""
    out = []
    for process in processes.processes:
        domain = domain_of_command(process.command, process.line or 1)
        if domain is not None:
            domain.source = processes.source
            out.append(domain)
    return out


# ------------------------------------------------------------------ splitting


def _command_lines(text: str) -> Iterator[_CommandLine]:
    """Each QEMU command line of ``text``: from its binary to the end of its
    logical line (``\\``-newline continuations; indented lines starting with an
    option, as a terminal wraps a ``ps`` row). One pass: a binary inside a
    command line already read is an argument of it."""
    pos, line, counted = 0, 1, 0
    while True:
        m = _BINARY.search(text, pos)
        if m is None:
            return
        if not _FIRST_OPTION.match(text, m.end()):
            pos = m.end()
            continue
        line += text.count("\n", counted, m.start())
        counted = m.start()
        end = _logical_end(text, m.end())
        options = list(_options(text, m.end(), end, line))
        if any(o.name in _GUEST_OPTIONS for o in options):
            yield _CommandLine(options=options, line=line, elided=bool(_ELISION.search(text, m.end(), end)))
        pos = max(end, m.end())


# "ps aux" rows quoted with their arguments elided: "-name guest=vm -S -object ..."
_ELISION = re.compile(r"(?<!\S)(?:\.{3,}|\u2026)(?!\S)")


def _logical_end(text: str, start: int) -> int:
    pos = start
    while True:
        nl = text.find("\n", pos)
        if nl < 0:
            return len(text)
        before = text[pos:nl].rstrip()
        after = text[nl + 1 : nl + 200]
        if before.endswith("\\") or re.match(r"[ \t]+-{1,2}[A-Za-z]", after):
            pos = nl + 1
            continue
        return nl


# a shell word: '...' (libvirt's log quotes JSON so), "..." (a hand-written
# command: ``-netdev "tap,id=n0,vhost=on"``), or a bare word
_TOKEN = re.compile(r"'([^']*)'?|\"([^\"]*)\"?|(\S+)")
_CONTINUATION = re.compile(r"\\[ \t]*\r?\n")


def _options(text: str, start: int, end: int, line: int) -> Iterator[_Option]:
    """The options between ``start`` and ``end`` with their values and lines.
    A backslash-newline is removed as the shell does (libvirt's test files wrap
    long arguments that way: ``id=drive-ide0-0-0,\\`` then ``cache=writeback``)."""
    segment, joined_at = _joined(text[start:end])
    current, counted = None, 0
    for m in _TOKEN.finditer(segment):
        token = _token_text(m)
        line += segment.count("\n", counted, m.start())
        counted = m.start()
        at = line + bisect.bisect_right(joined_at, m.start())
        if m.group(3) is not None and re.match(r"^-{1,2}[A-Za-z]", token):
            if current is not None:
                yield current
            current = _Option(name=token.lstrip("-"), value=None, line=at)
        elif current is not None and current.value is None:
            current.value = token
            current.args = _args(current.name, token)
            yield current
            current = None
    if current is not None:
        yield current


def _token_text(m: re.Match[str]) -> str:
    """The word a ``_TOKEN`` match stands for, without its quotes."""
    for group in (3, 1, 2):
        if m.group(group) is not None:
            return m.group(group)
    return ""


def _joined(segment: str) -> tuple[str, list[int]]:
    """``segment`` without its backslash-newlines, and where each was (offsets in the result)."""
    parts, joined_at, last, removed = [], [], 0, 0
    for m in _CONTINUATION.finditer(segment):
        parts.append(segment[last : m.start()])
        removed += m.end() - m.start()
        joined_at.append(m.start() - (removed - (m.end() - m.start())))
        last = m.end()
    parts.append(segment[last:])
    return "".join(parts), joined_at


def _args(name: str, value: str) -> dict[str, list[str]]:
    """An option's value as key -> values (a key may repeat: ``cpus=0-1,cpus=4-5``)."""
    from_json = _json_args(value) if value.startswith("{") else None
    if from_json is not None:
        return from_json
    out: dict[str, list[str]] = {}
    for i, part in enumerate(re.split(r"(?<!,),(?!,)", value)):
        part = part.replace(",,", ",")
        if "=" in part:
            key, _, val = part.partition("=")
            out.setdefault(key, []).append(val)
        elif i == 0 and name in _IMPLIED:
            out.setdefault(_IMPLIED[name], []).append(part)
        elif part.startswith(("+", "-")) or not part:
            continue
        else:
            out.setdefault(part, []).append("on")  # a bare flag ("server", "nowait"), or a cut key
    return out


def _json_args(value: str) -> dict[str, list[str]] | None:
    """A JSON option value (``-blockdev {"driver":"file",...}``) as key -> [value];
    None when it is no JSON object."""
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return {str(k): [_json_value(v)] for k, v in parsed.items()} if isinstance(parsed, dict) else None


def _json_value(value: object) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, dict):
        return json.dumps(value, sort_keys=True)
    return str(value)


# ------------------------------------------------------------------- reading


def _domain(command: _CommandLine) -> Domain:
    d = Domain(origin="qemu_cmdline", xml_root="qemu_cmdline")
    by_name: dict[str, list[_Option]] = {}
    for option in command.options:
        by_name.setdefault(option.name, []).append(option)
    d.lines["name"] = command.line
    _read_identity(d, by_name)
    _read_accelerator(d, by_name)
    _read_smp(d, by_name)
    _read_memory(d, by_name)
    _read_cpu(d, by_name)
    _read_numa(d, by_name)
    _read_nics(d, by_name)
    _read_disks(d, by_name)
    _read_iothreads(d, by_name)
    d.unseen = _unseen(d, command, by_name)
    return d


def _unseen(d: Domain, command: _CommandLine, by_name: dict[str, list[_Option]]) -> list[str]:
    """The elements the command line leaves unknown: those it never shows and
    those this one does not (``Domain.unseen``)."""
    l3_unknown = d.cpu_mode not in ("host-passthrough", "maximum") and not _l3_cache_off(by_name)
    missing = {
        "devices": command.elided,  # the disks and NICs among the elided arguments are unknown
        "cpu": d.cpu_mode is None,
        "l3-cache": l3_unknown,
        "numa": not d.numa_cells,
        "topology": not d.topology,
    }
    return [*NEVER_SHOWN, *(name for name, unknown in missing.items() if unknown)]


def _first(by_name: dict[str, list[_Option]], *names: str) -> _Option | None:
    return next((o for n in names for o in by_name.get(n, []) if o.value is not None), None)


def _read_identity(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    name = _first(by_name, "name")
    if name is not None:
        d.name = name.get("guest") or None
        d.lines["name"] = name.line
    uuid = _first(by_name, "uuid")
    if uuid is not None:
        d.uuid = uuid.value


def _read_accelerator(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    """kvm for -enable-kvm, accel=kvm, -accel kvm; qemu for TCG; None when not named,
    or when several are (``-accel kvm -accel tcg``, ``accel=kvm:tcg``: a fallback chain)."""
    accels = [
        o.get("accel") for o in by_name.get("accel", []) + by_name.get("machine", []) + by_name.get("M", [])
    ]
    named = set(filter(None, accels)) | ({"kvm"} if "enable-kvm" in by_name else set())
    if len(named) > 1:
        return  # "-accel kvm -accel tcg": QEMU takes the first that works, which the line does not say
    if named == {"kvm"}:
        d.domain_type = "kvm"
    elif named == {"tcg"}:
        d.domain_type = "qemu"


def _l3_cache_off(by_name: dict[str, list[_Option]]) -> bool:
    """-cpu MODEL,l3-cache=off: the one statement of a hidden L3 a command line makes
    (QEMU's default depends on its version and machine type)."""
    cpu = _first(by_name, "cpu")
    return cpu is not None and cpu.get("l3-cache") == "off"


def _int(value: str | None) -> int | None:
    return int(value) if value is not None and ascii_digits(value) else None


def _read_smp(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    smp = _first(by_name, "smp")
    if smp is None:
        return
    d.topology.update({key: level for key in _SMP_LEVELS if (level := _int(smp.get(key))) is not None})
    d.vcpus, d.vcpu_current = _smp_counts(_int(smp.get("cpus")), _int(smp.get("maxcpus")), d.topology)
    d.lines["vcpu"] = d.lines["topology"] = smp.line


_SMP_LEVELS = ("sockets", "dies", "clusters", "cores", "threads")


def _smp_counts(
    cpus: int | None, maxcpus: int | None, topology: dict[str, int]
) -> tuple[int | None, int | None]:
    """(vcpus, current vcpus) of ``-smp``: maxcpus when given, else cpus, else
    the product of the topology's levels (QEMU counts an omitted level as 1)."""
    if cpus is None and maxcpus is None and topology:
        cpus = math.prod(topology.values())  # "-smp sockets=1,cores=2,threads=1"
    vcpus = maxcpus or cpus
    return vcpus, (cpus if maxcpus and cpus and cpus < maxcpus else vcpus)


def _kib(value: str | None, default_unit: str = "M") -> int | None:
    m = _SIZE.match(value or "")
    return int(kib(float(m.group(1)), m.group(2) or None, default=default_unit)) if m else None


def _read_memory(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    m = _first(by_name, "m")
    if m is not None:
        d.memory_kb = d.current_memory_kb = _kib(m.get("size"))
        d.max_memory_kb = _kib(m.get("maxmem"))
        d.max_memory_slots = _int(m.get("slots"))
        d.lines["memory"] = m.line
        if d.max_memory_kb:
            d.lines["max_memory_kb"] = m.line
    _read_hugepages(d, by_name)


def _read_hugepages(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    """Huge pages from a hugetlb memfd backend or a backing file under a hugetlbfs
    mount, with the page sizes they name."""
    memfds = _hugetlb_memfds(by_name.get("object", []))
    huge_paths = [path for path in _backing_paths(by_name) if "huge" in path.lower()]
    if memfds or huge_paths:
        d.hugepages = True
    d.hugepage_sizes_kb = _hugepage_sizes(memfds, huge_paths)


def _hugetlb_memfds(objects: list[_Option]) -> list[_Option]:
    """The ``memory-backend-memfd`` objects with ``hugetlb=on``."""
    return [o for o in objects if o.get("qom-type") == "memory-backend-memfd" and o.get("hugetlb") == "on"]


def _backing_paths(by_name: dict[str, list[_Option]]) -> list[str]:
    """The files guest memory is mapped from: ``-mem-path`` and ``memory-backend-file`` objects."""
    paths = [o.value for o in by_name.get("mem-path", [])]
    paths += [
        o.get("mem-path") for o in by_name.get("object", []) if o.get("qom-type") == "memory-backend-file"
    ]
    return list(filter(None, paths))


def _hugepage_sizes(memfds: list[_Option], huge_paths: list[str]) -> list[int]:
    """The huge page sizes (KiB, sorted, once each) the memfds and paths name."""
    sizes = [_kib(o.get("hugetlbsize"), "B") for o in memfds] + [_named_hugepage_kib(p) for p in huge_paths]
    return sorted({size for size in sizes if size})


def _named_hugepage_kib(path: str) -> int | None:
    """The page size a hugetlbfs path names (``/dev/hugepages-1G``), in KiB; None when none."""
    named = _HUGE_SIZE.search(path)
    return int(kib(float(named.group(1)), named.group(2))) if named else None


def _read_cpu(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    cpu = _first(by_name, "cpu")
    if cpu is None:
        return
    model = cpu.text("model")
    d.cpu_mode = {"host": "host-passthrough", "max": "maximum"}.get(model, "custom")
    d.cpu_model = None if d.cpu_mode != "custom" else model
    d.lines["cpu"] = cpu.line


def _cpus(values: list[str]) -> list[int]:
    out: list[int] = []
    for value in values:
        try:
            out.extend(parse_cpulist(value))
        except ValueError:
            continue
    return sorted(set(out))


def _read_numa(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    sizes = {o.get("id"): _kib(o.get("size"), "B") for o in by_name.get("object", [])}
    for numa in by_name.get("numa", []):
        kind = numa.get("type")
        if kind == "node":
            d.numa_cells.append(_numa_cell(numa, sizes, len(d.numa_cells)))
            d.lines.setdefault("numa", numa.line)
        elif kind == "dist":
            _add_numa_distance(d.numa_cells, numa)


def _numa_cell(numa: _Option, backend_sizes: dict[str | None, int | None], index: int) -> GuestNumaCell:
    """The guest cell of ``-numa node``: its memory from ``mem=`` or its ``memdev``
    backend; its id ``nodeid``, else its position."""
    memory = _kib(numa.get("mem")) if numa.get("mem") else backend_sizes.get(numa.get("memdev"))
    node = _int(numa.get("nodeid"))
    return GuestNumaCell(
        id=node if node is not None else index,
        cpus=_cpus(numa.args.get("cpus", [])),
        memory_kb=memory,
    )


def _add_numa_distance(cells: list[GuestNumaCell], numa: _Option) -> None:
    """Record ``-numa dist,src=A,dst=B,val=N`` on cell A (ignored when A is no cell)."""
    src, dst, val = _int(numa.get("src")), _int(numa.get("dst")), _int(numa.get("val"))
    source = next((c for c in cells if c.id == src), None)
    if source is not None and dst is not None and val is not None:
        source.distances[dst] = val


def _read_nics(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    """-netdev + -device pairs, -nic, and the older -net nic / -net tap pairs (by vlan)."""
    netdevs = {o.get("id"): o for o in by_name.get("netdev", [])}
    for device in by_name.get("device", []):
        backend = netdevs.get(device.get("netdev"))
        if backend is None:
            continue
        _add_nic(d, device.text("driver"), device.get("mac"), backend, device.line)
    for nic in by_name.get("nic", []):
        if nic.get("type") != "none":  # -nic none: no NIC at all
            _add_nic(d, nic.text("model"), nic.get("mac"), nic, nic.line)
    _read_legacy_nics(d, by_name.get("net", []), netdevs)


def _read_legacy_nics(d: Domain, legacy: list[_Option], netdevs: dict[str | None, _Option]) -> None:
    """-net nic paired with -net tap/user/... of its vlan, or with the -netdev it names."""
    backends = _legacy_backends(legacy)
    for nic in (o for o in legacy if o.get("type") == "nic"):
        # -net nic,netdev=ID (libvirt's form for NIC models that are no -device) or by vlan
        backend = netdevs.get(nic.get("netdev")) or backends.get(nic.get("vlan") or "0")
        if backend is not None:
            _add_nic(d, nic.text("model"), nic.get("macaddr"), backend, nic.line)


def _legacy_backends(legacy: list[_Option]) -> dict[str, _Option]:
    """vlan -> the first ``-net`` backend (tap, user, ...) on it (vlan 0 when none is named)."""
    backends: dict[str, _Option] = {}
    for o in legacy:
        if o.get("type") != "nic":
            backends.setdefault(o.get("vlan") or "0", o)
    return backends


def _add_nic(d: Domain, model: str, mac: str | None, backend: _Option, line: int) -> None:
    kind = backend.get("type")
    nic = DomainInterface(
        model="virtio" if model == "virtio" or _VIRTIO_NET.match(model) else (model or None),
        queues=_queues(backend),
        kind={"vhost-user": "vhostuser"}.get(backend.text("type"), kind),
        mac=mac,
        driver=_backend_driver(backend) if kind in _TAP_TYPES else None,
        netdev=f"-{backend.name} {backend.value}",
    )
    d.interfaces.append(nic)
    d.lines[f"interfaces[{len(d.interfaces) - 1}]"] = backend.line if nic.driver else line


# QEMU's spellings of a boolean option (qapi/qobject-input-visitor.c)
_ON, _OFF = ("on", "true", "yes", "y"), ("off", "false", "no", "n")


def _backend_driver(tap: _Option) -> str | None:
    """ "vhost" or "qemu": QEMU's vhost option is off unless given, and on when
    vhost file descriptors or vhostforce are passed (net/tap.c). None when the
    value is no boolean QEMU knows (``vhost=3Don`` of a quoted-printable mail)."""
    vhost = tap.get("vhost")
    if vhost is not None:
        return "vhost" if vhost in _ON else "qemu" if vhost in _OFF else None
    if tap.get("vhostfd") or tap.get("vhostfds") or tap.get("vhostforce") in _ON:
        return "vhost"
    return "qemu"


def _queues(tap: _Option) -> int | None:
    queues = _int(tap.get("queues"))
    if queues is None and tap.get("fds"):
        queues = len(tap.text("fds").split(":"))
    return queues


def _read_disks(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    used = _device_disks(d, by_name)
    for drive in by_name.get("drive", []):
        interface = drive.get("if") or "ide"
        if drive.get("id") in used or interface in _NO_DISK_INTERFACES:
            continue
        kind = "cdrom" if drive.get("media") == "cdrom" else "disk"
        disk = _drive_disk(drive, kind, drive.get("id") or drive.get("file") or f"{interface}{len(d.disks)}")
        disk.bus = interface
        _add_disk(d, disk, drive.line)


def _read_iothreads(d: Domain, by_name: dict[str, list[_Option]]) -> None:
    """The number of ``-object iothread`` the guest has."""
    d.iothreads = sum(1 for o in by_name.get("object", []) if o.get("qom-type") == "iothread")


# -drive if=... of no guest disk (a backend for a -device, firmware flash, SD card)
_NO_DISK_INTERFACES = ("none", "pflash", "mtd", "sd")


def _device_disks(d: Domain, by_name: dict[str, list[_Option]]) -> set[str]:
    """The disks of ``-device`` options that name a ``-drive`` or ``-blockdev``;
    the ids of the drives they used (the other drives are disks of their own)."""
    drives = {o.get("id"): o for o in by_name.get("drive", []) if o.get("id")}
    blockdevs = {o.get("node-name"): o for o in by_name.get("blockdev", [])}
    used: set[str] = set()
    for device in by_name.get("device", []):
        disk = _device_disk(device, drives, blockdevs)
        if disk is None:
            continue
        if device.get("drive") in drives:
            used.add(device.text("drive"))
        _add_disk(d, disk, device.line)
    return used


def _device_disk(
    device: _Option, drives: dict[str | None, _Option], blockdevs: dict[str | None, _Option]
) -> DomainDisk | None:
    """The disk a ``-device`` attaches from the ``-drive`` or ``-blockdev`` it names;
    None when it is no disk device or names neither."""
    driver, ref = device.text("driver"), device.get("drive")
    kind = _disk_kind(driver)
    if ref is None or kind is None:
        return None
    target = device.get("id") or ref
    if ref in drives:
        disk = _drive_disk(drives[ref], kind, target)
    elif ref in blockdevs:
        disk = _blockdev_disk(blockdevs, ref, device, kind, target)
    else:
        return None
    disk.bus = "virtio" if driver.startswith("virtio") else driver.split("-")[0]
    disk.iothread = _iothread_number(device.get("iothread"))
    return disk


def _iothread_number(iothread: str | None) -> int | None:
    """The number of an ``iothread=iothread2`` reference (2); None when none is given."""
    return _int(re.sub(r"^\D*", "", iothread)) if iothread else None


def _disk_kind(driver: str) -> str | None:
    """What a ``-device`` driver attaches: "cdrom", "disk", or None (no drive)."""
    if driver in _CDROM_DEVICES:
        return "cdrom"
    return "disk" if _DISK_DEVICES.match(driver) else None


def _add_disk(d: Domain, disk: DomainDisk, line: int) -> None:
    d.disks.append(disk)
    d.lines.setdefault(f"disks[{disk.target}]", line)
    d.lines.setdefault("disks", line)


def _drive_disk(drive: _Option, kind: str, target: str) -> DomainDisk:
    return DomainDisk(
        target=target,
        device=kind,
        source=drive.get("file"),
        cache=drive.get("cache") or _drive_dotted_mode(drive),
        io=drive.get("aio"),
        driver_shown=True,
    )


def _dotted_cache(node: _Option) -> str | None:
    """The ``cache.direct=on,cache.no-flush=off`` of a key=value -blockdev, as its JSON form."""
    flags = {
        key: node.get(f"cache.{key}") == "on" for key in ("direct", "no-flush") if node.get(f"cache.{key}")
    }
    return json.dumps(flags) if flags else None


def _drive_dotted_mode(drive: _Option) -> str | None:
    """The cache mode of a ``-drive`` given as ``cache.direct=on`` (``cache.no-flush``,
    ``cache.writeback``: QEMU's ``-drive`` cache options, writeback on unless off)."""
    flags = _dotted_cache(drive)
    if flags is None:
        return None
    parsed = json.loads(flags)
    writeback = drive.get("cache.writeback") != "off"
    return _CACHE_MODES.get((parsed.get("direct", False), parsed.get("no-flush", False), writeback))


# (direct, no-flush, write-cache) -> libvirt's cache mode (qemuDomainDiskCacheModes)
_CACHE_MODES = {
    (True, False, True): "none",
    (True, False, False): "directsync",
    (False, False, True): "writeback",
    (False, False, False): "writethrough",
    (False, True, True): "unsafe",
}


def _blockdev_disk(
    blockdevs: dict[str | None, _Option], ref: str, device: _Option, kind: str, target: str
) -> DomainDisk:
    """A -blockdev disk: its node chain's ``cache`` object and the device's
    ``write-cache`` give the cache mode; neither: the default."""
    cache, source = _node_chain(blockdevs, ref)
    mode = _blockdev_cache_mode(cache, device.get("write-cache") != "off") if cache else None
    return DomainDisk(target=target, device=kind, source=source, cache=mode, driver_shown=True)


def _node_chain(blockdevs: dict[str | None, _Option], ref: str) -> tuple[str | None, str | None]:
    """(cache, filename): the first of each along the chain of -blockdev nodes
    from ``ref`` down through their ``file`` children (a loop is followed once)."""
    node, cache, source, seen = blockdevs.get(ref), None, None, set()
    while node is not None and node.get("node-name") not in seen:
        seen.add(node.get("node-name"))
        cache = cache or node.get("cache") or _dotted_cache(node)
        source = source or node.get("filename")
        node = blockdevs.get(node.get("file"))
    return cache, source


def _blockdev_cache_mode(cache: str, write_cache: bool) -> str | None:
    """libvirt's cache mode of a -blockdev ``cache`` object (JSON) and the device's write cache."""
    try:
        flags = json.loads(cache)
    except ValueError:
        flags = {}
    return _CACHE_MODES.get((bool(flags.get("direct")), bool(flags.get("no-flush")), write_cache))

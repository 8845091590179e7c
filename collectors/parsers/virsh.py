"""``virsh version``, ``list --all``, ``capabilities``, ``nodeinfo``, ``freecell`` and
the live placement of a domain (``vcpuinfo``, ``vcpupin``, ``emulatorpin``,
``numatune``; each function's docstring shows its output).

``virsh version``::

    Compiled against library: libvirt 4.9.0
    Using library: libvirt 4.9.0
    Using API: QEMU 4.9.0
    Running hypervisor: QEMU 2.12.0

``virsh list --all``::

     Id   Name        State
    ----------------------------
     1    db01        running
     -    old-guest   shut off

``virsh capabilities`` is XML (``<capabilities><host>...<topology><cells>``); it is
parsed with the same defused parser as domain XML.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from collectors.cpulist import parse_cpulist
from collectors.facts import (
    ArtifactError,
    ParseError,
    VcpuInfo,
    VirshCapabilities,
    VirshDomainState,
    VirshDomainTuning,
    VirshFreecell,
    VirshList,
    VirshMemoryStats,
    VirshNodeInfo,
    VirshVersion,
)
from collectors.parsers import UnreadLines, register
from collectors.parsers.libvirt import (
    MAX_RECOVERY_BYTES,
    element_text,
    lines_by_value,
    mark_line,
    refuse_hostile,
    safe_fromstring,
    to_kib,
)

_VERSION_LINE = re.compile(
    r"^\s*(Compiled against library|Using library|Using API|Running hypervisor)\s*:\s*(\S+)\s+(\S+)\s*$"
)


# a line of virsh version -> the version it gives
_VERSION_LABELS = {
    "Using library": "libvirt_version",
    "Compiled against library": "libvirt_version",
    "Using API": "api_version",
    "Running hypervisor": "hypervisor_version",
}


@register(
    "virsh_version",
    commands=(r"^virsh\b.*\bversion\b",),
    paths=(r"sos_commands/virsh/virsh_-r_version$",),
    detect=lambda head: bool(
        ("Running hypervisor:" in head or "Using library: libvirt" in head)
        and re.search(r"^[ \t]*Running hypervisor:|^[ \t]*Using library: libvirt", head, re.M)
    ),
    priority=10,
)
def parse_virsh_version(text: str) -> VirshVersion:
    """Library, API and hypervisor versions from ``virsh version``.

    >>> v = parse_virsh_version("Using library: libvirt 4.9.0\\nRunning hypervisor: QEMU 2.12.0")
    >>> (v.libvirt_version, v.hypervisor, v.hypervisor_version)
    ('4.9.0', 'QEMU', '2.12.0')
    """
    out = VirshVersion()
    for number, line in enumerate(text.splitlines(), 1):
        m = _VERSION_LINE.match(line)
        if not m:
            continue
        label, product, version = m.groups()
        name = _version_field(label, out)
        if name is None:
            continue
        setattr(out, name, version)
        out.lines[name] = number
        if label == "Running hypervisor":
            out.hypervisor = product
    if out.libvirt_version is None and out.hypervisor_version is None:
        raise ParseError("no 'Using library' or 'Running hypervisor' line: not virsh version output")
    return out


def _version_field(label: str, out: VirshVersion) -> str | None:
    """The VirshVersion field a line's label sets; None for an unknown label, and for
    "Compiled against library" once the library is known (it is only a fallback:
    the library actually loaded is what "Using library" says)."""
    if label == "Compiled against library" and out.libvirt_version is not None:
        return None
    return _VERSION_LABELS.get(label)


_LIST_HEADER = re.compile(r"^\s*Id\s+Name\s+State\s*$")
_LIST_ROW = re.compile(r"^\s*(\d+|-)\s+(\S+)\s+(\S.*?)\s*$")


@register(
    "virsh_list",
    commands=(r"^virsh\b.*\blist\b",),
    paths=(r"sos_commands/virsh/virsh_-r_list_--all$",),
    detect=lambda head: any(_LIST_HEADER.match(ln) for ln in head.lstrip("\n").split("\n", 3)[:3]),
    priority=10,
)
def parse_virsh_list(text: str) -> VirshList:
    """Domains and their state from ``virsh list [--all]``.

    >>> parse_virsh_list(" Id   Name   State\\n----------------\\n 1    test   running\\n").running()[0].name
    'test'
    """
    out = VirshList()
    for number, line in _rows_under(text, _LIST_HEADER, "no 'Id Name State' header: not virsh list output"):
        m = _LIST_ROW.match(line)
        if not m:
            _end_list(out, line, number)
            break
        dom_id, name, state = m.groups()
        out.domains.append(
            VirshDomainState(id=None if dom_id == "-" else int(dom_id), name=name, state=state)
        )
        out.lines[f"domains[{name}]"] = number
    return out


def _rows_under(text: str, header: re.Pattern[str], missing: str) -> list[tuple[int, str]]:
    """(1-based number, line) of the lines under a table's ``header`` line, rule
    and blank lines left out; ParseError(``missing``) when no line is the header."""
    lines = text.splitlines()
    start = next((i for i, ln in enumerate(lines) if header.match(ln)), None)
    if start is None:
        raise ParseError(missing)
    # (a rule line, or a blank one, is no row)
    return [
        (n, line) for n, line in enumerate(lines[start + 1 :], start + 2) if not set(line.strip()) <= {"-"}
    ]


def _end_list(out: VirshList, line: str, number: int) -> None:
    """A line that is no row ends the table: reported as not read (what follows is
    prose run into the output), or refused when no row came before it."""
    if not out.domains:
        raise ParseError(f"unexpected virsh list row: {line.strip()[:80]!r}", line=number)
    out.errors.append(ArtifactError("", f"text after the table not read: {line.strip()[:80]!r}", number))


# ``virsh domstats``: "Domain: 'name'" then indented "group.field=value" lines
_DOMSTATS_DOMAIN = re.compile(r"^Domain:\s+'([^'\n]{1,256})'\s*$")
_DOMSTATS_FIELD = re.compile(r"^\s+([A-Za-z][\w.-]{0,200})=(.*)$")
# virDomainState as virsh list prints it
_DOMAIN_STATES = {
    "0": "no state",
    "1": "running",
    "2": "idle",
    "3": "paused",
    "4": "in shutdown",
    "5": "shut off",
    "6": "crashed",
    "7": "pmsuspended",
}


def _detect_domstats(head: str) -> bool:
    return (
        "Domain: '" in head and re.search(r"^Domain:\s+'[^'\n]+'\s*\n\s+\w+\.[\w.]+=", head, re.M) is not None
    )


@register(
    "virsh_domstats",
    commands=(r"^virsh\b.*\bdomstats\b",),
    detect=_detect_domstats,
    priority=10,
)
def parse_virsh_domstats(text: str) -> VirshList:
    """The domains and their state from ``virsh domstats`` (``state.state``, a
    virDomainState number); a stats line cut before its ``=`` is reported.

    Sample input::

        Domain: 'win11'
          state.state=1
          state.reason=1
          vcpu.current=4
          vcpu.maximum=4

    >>> parse_virsh_domstats("Domain: 'win11'\\n  state.state=1\\n").running()[0].name
    'win11'
    """
    out = VirshList()
    current: VirshDomainState | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _DOMSTATS_DOMAIN.match(line)
        if m:
            current = VirshDomainState(id=None, name=m.group(1), state="no state")
            out.domains.append(current)
            out.lines[f"domains[{current.name}]"] = number
        elif current is not None and line.strip():
            _read_stats_line(out, current, line, number)
    if not out.domains:
        raise ParseError("no \"Domain: 'name'\" line: not virsh domstats output")
    return out


def _read_stats_line(out: VirshList, domain: VirshDomainState, line: str, number: int) -> None:
    """One ``group.field=value`` line of ``domain``: ``state.state`` sets its state;
    a line cut before its ``=`` is reported."""
    field_match = _DOMSTATS_FIELD.match(line)
    if field_match is None:
        out.errors.append(
            ArtifactError("", f"stats line without '=' not read: {line.strip()[:80]!r}", number)
        )
    elif field_match.group(1) == "state.state":
        domain.state = _DOMAIN_STATES.get(field_match.group(2).strip(), "no state")


def _cell_entry(cell: Any) -> dict[str, Any]:
    """A capabilities cell as {"cpus", "memory_kb", "distances"}; ParseError on a bad number."""
    mem = cell.find("memory")
    memory_kb = to_kib(mem.text, mem.get("unit")) if mem is not None else None
    cpus = _cell_cpus(cell)
    try:
        distances = _sibling_distances(cell)
    except ValueError:
        raise ParseError("bad NUMA distance in capabilities") from None
    return {"cpus": cpus, "memory_kb": memory_kb, "distances": distances}


def _cell_cpus(cell: Any) -> list[int]:
    """The sorted ids of a cell's ``<cpus><cpu id=>``; ParseError on one that is no number."""
    cpus = []
    for cpu in cell.findall("cpus/cpu"):
        try:
            cpus.append(int(cpu.get("id", "")))
        except ValueError:
            raise ParseError(f"bad cpu id {cpu.get('id')!r} in capabilities") from None
    return sorted(cpus)


def _sibling_distances(cell: Any) -> dict[int, int]:
    """A cell's ``<distances>``: sibling id -> distance (ValueError on one that is no number)."""
    return {int(s.get("id", "")): int(s.get("value", "")) for s in cell.findall("distances/sibling")}


# Elements only ``virsh capabilities`` prints (a domain's guest <cell> carries its
# CPUs as a cpus= attribute, never <cpus num=> or <cpu id= socket_id=>): a paste
# quoted from inside <topology> is recognised by them.
_CAPS_FRAGMENT = re.compile(r"<cells\s+num=|<cpus\s+num=|<cpu\s+id=['\"]\d+['\"]\s+socket_id=")
_CAPS_TAG = re.compile(r"<(/?)([A-Za-z_][\w.:-]*)\b[^<>]*?(/?)>")
# the elements that enclose a NUMA cell, outermost first
_CAPS_WRAPPERS = ("capabilities", "host", "topology", "cells", "cell")


def _looks_like_capabilities(head: str) -> bool:
    if "<capabilities>" in head:
        return True
    return "<domain" not in head and bool(_CAPS_FRAGMENT.search(head))


def _balance_capabilities(text: str) -> tuple[str, int]:
    """A fragment of ``virsh capabilities`` made a whole document, and the
    1-based line where the fragment starts.

    A closing tag whose element started before the paste (``</cell>`` of a cell
    quoted from its middle) gets its opening tag at the start; elements left open
    where the paste was cut are closed; a tag cut short at the end is dropped; the
    result is wrapped in the elements that enclose a cell as far as it lacks them.
    The opened cell carries no ``id``: :func:`_cell_id` infers it from the cell's
    distances.
    """
    if len(text) > MAX_RECOVERY_BYTES:
        raise ParseError(f"capabilities fragment of {len(text)} characters is too large to recover")
    start = text.find("<")
    end = text.rfind(">")
    body = text[start : end + 1]
    balanced, openers = _close_elements(body)
    doc = "".join(f"<{name}>" for name in openers) + balanced
    first = _CAPS_TAG.search(body)
    outer = openers[0] if openers else (first.group(2) if first else "")
    return _wrap_for_cell(doc, outer), text.count("\n", 0, start) + 1


def _close_elements(body: str) -> tuple[str, list[str]]:
    """``body`` with its stray ``<`` escaped, the tags :func:`_keep_capabilities_tag`
    drops left out and the elements left open closed; and the elements closed in
    it but opened before it (their opening tags still missing)."""
    openers: list[str] = []  # elements closed in the fragment but opened before it
    stack: list[str] = []
    out: list[str] = []
    pos = 0
    for m in _CAPS_TAG.finditer(body):
        out.append(body[pos : m.start()].replace("<", "&lt;"))
        pos = m.end()
        if _keep_capabilities_tag(m, stack, openers, out):
            out.append(m.group(0))
    out.append(body[pos:].replace("<", "&lt;"))
    out.extend(f"</{name}>" for name in reversed(stack))
    return "".join(out), openers


def _wrap_for_cell(doc: str, outer: str) -> str:
    """``doc`` inside the elements that enclose its outermost element ``outer``
    (loose children of a cell, ``<memory>``, ``<distances>``, ``<cpus>``, get every wrapper)."""
    wrappers = _CAPS_WRAPPERS[: _CAPS_WRAPPERS.index(outer)] if outer in _CAPS_WRAPPERS else _CAPS_WRAPPERS
    return "".join(f"<{w}>" for w in wrappers) + doc + "".join(f"</{w}>" for w in reversed(wrappers))


def _keep_capabilities_tag(m: re.Match[str], stack: list[str], openers: list[str], out: list[str]) -> bool:
    """Whether a tag of a capabilities fragment is kept: an opening tag goes on
    ``stack``; a closing one closes the elements opened after its own (into
    ``out``), or, with nothing open, needs an opening tag before the fragment
    (``openers``); one that closes nothing open is dropped."""
    closing, name, empty = m.group(1), m.group(2), m.group(3)
    if not closing:
        if not empty:
            stack.append(name)
        return True
    if name in stack:
        while stack and stack[-1] != name:
            out.append(f"</{stack.pop()}>")
        stack.pop()
        return True
    if not stack:
        openers.insert(0, name)
        return True
    return False


def _cell_id(cell: Any) -> int | None:
    """A cell's id; for a cell quoted without its opening tag, the sibling at the
    local distance (the one smallest value of its row), else ``None``."""
    if cell.get("id") is not None:
        try:
            return int(cell.get("id"))
        except ValueError:
            raise ParseError(f"bad cell id {cell.get('id')!r}") from None
    try:
        values = _sibling_distances(cell)
    except ValueError:
        return None
    return _local_sibling(values)


def _local_sibling(values: dict[int, int]) -> int | None:
    """The one sibling at the smallest distance of a row (the cell itself); None when
    the row is empty or several share it."""
    if not values:
        return None
    local = min(values.values())
    own = [node for node, value in values.items() if value == local]
    return own[0] if len(own) == 1 else None


def _capabilities_root(text: str) -> tuple[Any, int | None]:
    """The parsed ``<capabilities>`` document and, for a fragment quoted from
    inside it, the line where the fragment starts (``None`` for a whole one)."""
    start = text.find("<capabilities")
    end = text.rfind("</capabilities>")
    if start >= 0:
        doc = text[start : end + len("</capabilities>")] if end > start else text[start:]
        return safe_fromstring(doc), None
    if not _CAPS_FRAGMENT.search(text):
        raise ParseError("no <capabilities> element")
    doc, fragment_line = _balance_capabilities(text)
    return safe_fromstring(doc), fragment_line


@register(
    "virsh_capabilities",
    commands=(r"^virsh\b.*\bcapabilities\b",),
    paths=(r"sos_commands/virsh/virsh_-r_capabilities$",),
    detect=_looks_like_capabilities,
    priority=20,
)
def parse_virsh_capabilities(text: str) -> VirshCapabilities:
    """Host CPU, topology, NUMA cells and IOMMU support from ``virsh capabilities``.

    ``topology`` holds the ``<cpu><topology>`` attributes when libvirt prints them;
    otherwise sockets/cores/threads are counted from the cells' ``<cpu socket_id=
    core_id=>`` entries (only when the counts divide evenly).

    >>> caps = parse_virsh_capabilities("<capabilities><host><iommu support='no'/></host></capabilities>")
    >>> caps.iommu
    False
    """
    host, fragment_line = _capabilities_host(text)
    out = VirshCapabilities()
    _read_host_cpu(host, text, out)
    _read_iommu(host, text, out)
    threads = _read_cells(host, text, fragment_line, out)
    if not out.topology and threads:
        out.topology = _topology_of_threads(threads)
    if out.cpu_arch is None and not out.cells and out.iommu is None:
        raise ParseError("<capabilities> has no host CPU, NUMA cells or IOMMU information")
    if fragment_line is not None:
        out.errors.append(
            ArtifactError(
                "",
                f"a part of the output quoted from inside <capabilities> (cells {sorted(out.cells)} read)",
                fragment_line,
            )
        )
    return out


def _capabilities_host(text: str) -> tuple[Any, int | None]:
    """The ``<host>`` of the document (a fragment made whole) and the line
    where a fragment starts; ParseError on unsafe XML or another document."""
    refuse_hostile(text)
    root, fragment_line = _capabilities_root(text)
    if root.tag != "capabilities":
        raise ParseError(f"not virsh capabilities: root element <{root.tag}>")
    host = root.find("host")
    if host is None:
        raise ParseError("<capabilities> without <host>")
    return host, fragment_line


def _read_iommu(host: Any, text: str, out: VirshCapabilities) -> None:
    iommu = host.find("iommu")
    if iommu is None:
        return
    out.iommu = iommu.get("support") == "yes"
    mark_line(out.lines, "iommu", text, r"<iommu\b")


def _read_host_cpu(host: Any, text: str, out: VirshCapabilities) -> None:
    """The host CPU's architecture, model and ``<topology>`` attributes."""
    cpu = host.find("cpu")
    if cpu is None:
        return
    out.cpu_arch = element_text(cpu.find("arch"))
    out.cpu_model = element_text(cpu.find("model"))
    topo = cpu.find("topology")
    if topo is not None:
        try:
            out.topology = {k: int(v) for k, v in topo.attrib.items()}
        except ValueError:
            raise ParseError("non-numeric host <topology> attribute") from None
        mark_line(out.lines, "topology", text, r"<topology\s")


def _read_cells(
    host: Any, text: str, fragment_line: int | None, out: VirshCapabilities
) -> set[tuple[str, str, str]]:
    """The NUMA cells into ``out.cells``; the (socket, core, cpu) of every CPU
    the cells list with its socket and core."""
    threads: set[tuple[str, str, str]] = set()
    cell_lines = lines_by_value(text, r"<cell\s+id=['\"](\d+)['\"]")
    for index, cell in enumerate(host.findall("topology/cells/cell")):
        cell_id = _cell_id(cell) if fragment_line is not None else _whole_cell_id(cell, index)
        if cell_id is None:
            out.errors.append(
                ArtifactError(
                    "",
                    "a cell quoted without its id (and no distances to tell it) is left out",
                    fragment_line,
                )
            )
            continue
        out.cells[cell_id] = _cell_entry(cell)
        ln = cell_lines.get(str(cell_id)) or fragment_line
        if ln:
            out.lines[f"cells[{cell_id}]"] = ln
        threads.update(_cell_threads(cell))
    return threads


def _cell_threads(cell: Any) -> set[tuple[str, str, str]]:
    """The (socket, core, cpu) of every CPU a cell lists with its socket and core."""
    return {
        (c.get("socket_id", ""), c.get("core_id", ""), c.get("id", ""))
        for c in cell.findall("cpus/cpu[@socket_id][@core_id]")
    }


def _topology_of_threads(threads: set[tuple[str, str, str]]) -> dict[str, int]:
    """Sockets, cores per socket and threads per core counted from the cells'
    CPUs; empty when the counts do not divide evenly."""
    sockets = {s for s, _, _ in threads}
    cores = {(s, c) for s, c, _ in threads}
    if len(cores) % len(sockets) or len(threads) % len(cores):
        return {}
    return {
        "sockets": len(sockets),
        "cores": len(cores) // len(sockets),
        "threads": len(threads) // len(cores),
    }


def _whole_cell_id(cell: Any, index: int) -> int:
    try:
        return int(cell.get("id", index))
    except ValueError:
        raise ParseError(f"bad cell id {cell.get('id')!r}") from None


# ------------------------------------------------------- live domain placement

# "Label words: value"; words are separated by single spaces, so the patterns
# stay linear on lines of hostile whitespace (values are stripped afterwards)
_FIELD = re.compile(r"^\s*([A-Za-z][\w()]*(?: [\w()]+)*)\s*:(.*)$")
# "yyyy----" (one character per host CPU), or "--pretty": "2,4-5 (out of 8)"
_PRETTY_AFFINITY = re.compile(r"^(.*)\(out of (\d+)\)$")
_TUNING_COMMANDS = ("vcpuinfo", "vcpupin", "emulatorpin", "numatune")
# commands whose first argument is the domain
_DOMAIN_COMMANDS = (*_TUNING_COMMANDS, "dommemstat")
_VALUED_OPTIONS = {"--vcpu", "--cpulist", "--mode", "--nodeset", "-c", "--connect", "--period"}


def domain_from_command(command: str) -> str | None:
    """The domain a ``virsh vcpuinfo|vcpupin|emulatorpin|numatune|dommemstat`` command names.

    >>> domain_from_command("sudo virsh -c qemu:///system vcpupin --live db01")
    'db01'
    """
    m = re.search(rf"\bvirsh\b(.*?)\b({'|'.join(_DOMAIN_COMMANDS)})\b(.*)$", command)
    if not m:
        return None
    return _domain_argument(m.group(3).split("|")[0].split())


def _domain_argument(args: list[str]) -> str | None:
    """The domain among a virsh command's arguments: ``--domain X``/``-d X``,
    ``--domain=X``, or the first argument that is no option (nor an option's value)."""
    i = 0
    while i < len(args):
        arg = args[i]
        if arg in ("--domain", "-d") and i + 1 < len(args):
            return args[i + 1].strip("'\"")
        if arg.startswith("--domain="):
            return arg.split("=", 1)[1].strip("'\"")
        if arg.startswith("-"):
            i += 2 if arg in _VALUED_OPTIONS else 1
            continue
        return arg.strip("'\"") or None
    return None


def _affinity(value: str, number: int) -> tuple[list[int], int | None]:
    """CPU ids and the host CPU count from a vcpuinfo ``CPU Affinity`` value."""
    value = value.strip()
    if value and set(value) <= {"y", "-"}:
        return [i for i, c in enumerate(value) if c == "y"], len(value)
    m = _PRETTY_AFFINITY.match(value)
    cpus_text, total = (m.group(1), int(m.group(2))) if m else (value, None)
    try:
        return parse_cpulist(cpus_text), total
    except ValueError:
        raise ParseError(f"CPU Affinity is not a CPU map or list: {value!r}", line=number) from None


def _cpu_list(value: str, what: str, number: int) -> list[int]:
    try:
        return parse_cpulist(value.strip())
    except ValueError:
        raise ParseError(f"{what} is not a CPU list: {value.strip()!r}", line=number) from None


def _set_vcpu_affinity(out: VirshDomainTuning, vcpu: VcpuInfo, value: str, number: int) -> None:
    """A ``CPU Affinity`` line: the vCPU's host CPUs, and the host's CPU count when it shows it."""
    vcpu.affinity, total = _affinity(value, number)
    out.affinity[vcpu.vcpu] = vcpu.affinity
    out.lines[f"affinity[{vcpu.vcpu}]"] = number
    out.host_cpus = total if total is not None else out.host_cpus


def _start_vcpu(out: VirshDomainTuning, value: str, number: int) -> VcpuInfo:
    """A ``VCPU: N`` line starts the next vCPU's record."""
    try:
        vcpu = VcpuInfo(vcpu=int(value), line=number)
    except ValueError:
        raise ParseError(f"VCPU is not a number: {value!r}", line=number) from None
    out.vcpus.append(vcpu)
    out.lines[f"vcpus[{vcpu.vcpu}]"] = number
    return vcpu


def _set_vcpu_cpu(vcpu: VcpuInfo, value: str) -> None:
    vcpu.cpu = int(value) if value.isdigit() else None


def _set_vcpu_state(vcpu: VcpuInfo, value: str) -> None:
    vcpu.state = value or None


def _set_vcpu_time(vcpu: VcpuInfo, value: str) -> None:
    try:
        vcpu.cpu_time_s = float(value.rstrip("s"))
    except ValueError:
        vcpu.cpu_time_s = None


# the lower-cased key of a vcpuinfo line -> what it sets of the current vCPU
_VCPU_FIELDS: dict[str, Callable[[VcpuInfo, str], None]] = {
    "cpu": _set_vcpu_cpu,
    "state": _set_vcpu_state,
    "cpu time": _set_vcpu_time,
}


@register(
    "virsh_vcpuinfo",
    commands=(r"\bvirsh\b.*\bvcpuinfo\b",),
    detect=lambda head: bool("VCPU:" in head and re.search(r"^VCPU:\s+\d+\s*\nCPU:\s+\S+", head, re.M)),
    priority=10,
)
def parse_virsh_vcpuinfo(text: str) -> VirshDomainTuning:
    """Per-vCPU placement from ``virsh vcpuinfo DOM`` (``--pretty`` too)::

        VCPU:           0
        CPU:            2
        State:          running
        CPU time:       179545.2s
        CPU Affinity:   --y-----

    >>> t = parse_virsh_vcpuinfo("VCPU: 0\\nCPU: 2\\nState: running\\nCPU Affinity: --y-----\\n")
    >>> (t.affinity, t.host_cpus, t.vcpus[0].cpu)
    ({0: [2]}, 8, 2)
    """
    out = VirshDomainTuning(command="vcpuinfo")
    current: VcpuInfo | None = None
    for number, line in enumerate(text.splitlines(), 1):
        m = _FIELD.match(line)
        if not m:
            continue
        key, value = m.group(1).lower(), m.group(2).strip()
        if key == "vcpu":
            current = _start_vcpu(out, value, number)
        elif current is None:
            continue
        elif key == "cpu affinity":
            _set_vcpu_affinity(out, current, value, number)
        elif key in _VCPU_FIELDS:
            _VCPU_FIELDS[key](current, value)
    if not out.vcpus:
        raise ParseError("no 'VCPU:' records: not virsh vcpuinfo output")
    return out


_PIN_HEADER = re.compile(r"^\s*VCPU:?\s+CPU Affinity\s*$")
_PIN_ROW = re.compile(r"^\s*(\d+)(?:\s*:\s*|\s+)(\d(?:[\d,\-^ ]*\d)?)\s*$")


@register(
    "virsh_vcpupin",
    commands=(r"\bvirsh\b.*\bvcpupin\b",),
    detect=lambda head: any(_PIN_HEADER.match(ln) for ln in head.lstrip("\n").split("\n", 3)[:3]),
    priority=10,
    prose_lines=(r"VCPU:?\s+CPU Affinity",),
)
def parse_virsh_vcpupin(text: str) -> VirshDomainTuning:
    """vCPU -> host CPUs from ``virsh vcpupin DOM`` (either layout)::

         VCPU   CPU Affinity
        ----------------------
         0      2
         1      3,5

    (older virsh: ``VCPU: CPU Affinity`` and rows ``   0: 2``).

    >>> parse_virsh_vcpupin(" VCPU   CPU Affinity\\n------\\n 0      2\\n 1      3,5\\n").affinity
    {0: [2], 1: [3, 5]}
    """
    out = VirshDomainTuning(command="vcpupin")
    for number, line in _rows_under(
        text, _PIN_HEADER, "no 'VCPU  CPU Affinity' header: not virsh vcpupin output"
    ):
        m = _PIN_ROW.match(line)
        if not m:
            out.errors.append(ArtifactError("", f"vcpupin: row not read: {line.strip()[:60]!r}", number))
            continue
        vcpu = int(m.group(1))
        out.affinity[vcpu] = _cpu_list(m.group(2), f"vCPU {vcpu} affinity", number)
        out.lines[f"affinity[{vcpu}]"] = number
    if not out.affinity:
        raise ParseError("virsh vcpupin output without vCPU rows")
    return out


@register(
    "virsh_emulatorpin",
    commands=(r"\bvirsh\b.*\bemulatorpin\b",),
    detect=lambda head: bool(
        "emulator:" in head and re.search(r"^[ \t]*emulator:[ \t]+CPU Affinity[ \t]*$", head, re.M)
    ),
    priority=10,
)
def parse_virsh_emulatorpin(text: str) -> VirshDomainTuning:
    """The emulator threads' host CPUs from ``virsh emulatorpin DOM``::

        emulator: CPU Affinity
        ----------------------------------
               *: 4-5

    >>> parse_virsh_emulatorpin("emulator: CPU Affinity\\n----\\n       *: 4-5\\n").emulator_affinity
    [4, 5]
    """
    out = VirshDomainTuning(command="emulatorpin")
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*\*:\s*(\S.*?)\s*$", line)
        if m:
            out.emulator_affinity = _cpu_list(m.group(1), "emulator affinity", number)
            out.lines["emulator_affinity"] = number
            return out
    raise ParseError("no '*: CPUS' row: not virsh emulatorpin output")


@register(
    "virsh_numatune",
    commands=(r"\bvirsh\b.*\bnumatune\b",),
    detect=lambda head: bool(
        "numa_mode" in head and re.search(r"^numa_mode\s*:\s*\w+\s*\nnuma_nodeset\s*:", head, re.M)
    ),
    priority=10,
    prose_lines=(r"numa_nodeset\s*:",),
)
def parse_virsh_numatune(text: str) -> VirshDomainTuning:
    """Memory policy of a domain from ``virsh numatune DOM``::

        numa_mode      : interleave
        numa_nodeset   : 1

    An empty ``numa_nodeset`` (a domain without ``<numatune>``) is ``None``.

    >>> t = parse_virsh_numatune("numa_mode      : strict\\nnuma_nodeset   : 0-1\\n")
    >>> (t.numa_mode, t.numa_nodeset)
    ('strict', [0, 1])
    """
    out = VirshDomainTuning(command="numatune")
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(numa_mode|numa_nodeset)\s*:\s*(.*?)\s*$", line)
        if not m:
            continue
        if m.group(1) == "numa_mode":
            out.numa_mode = m.group(2) or None
        elif m.group(2):
            out.numa_nodeset = _cpu_list(m.group(2), "numa_nodeset", number)
        out.lines[m.group(1)] = number
    if "numa_mode" not in out.lines:
        raise ParseError("no 'numa_mode :' line: not virsh numatune output")
    return out


_NODEINFO_KEYS = {
    "cpu model": "cpu_model",
    "cpu(s)": "cpus",
    "cpu frequency": "mhz",
    "cpu socket(s)": "sockets_per_cell",
    "core(s) per socket": "cores_per_socket",
    "thread(s) per core": "threads_per_core",
    "numa cell(s)": "numa_cells",
    "memory size": "memory_kb",
}


def _set_nodeinfo_field(out: VirshNodeInfo, name: str, key: str, value: str, number: int) -> None:
    """The CPU model as written; any other field a number (its unit dropped)."""
    if name == "cpu_model":
        out.cpu_model = value or None
        return
    digits = re.match(r"\d+", value)
    if digits is None:
        raise ParseError(f"{key} is not a number: {value!r}", line=number)
    setattr(out, name, int(digits.group(0)))


@register(
    "virsh_nodeinfo",
    commands=(r"\bvirsh\b.*\bnodeinfo\b",),
    paths=(r"sos_commands/virsh/virsh_-r_nodeinfo$",),
    detect=lambda head: bool(
        "CPU model:" in head and re.search(r"^CPU model:\s+\S+\s*\nCPU\(s\):\s+\d+", head, re.M)
    ),
    priority=10,
)
def parse_virsh_nodeinfo(text: str) -> VirshNodeInfo:
    """The host's CPUs and memory from ``virsh nodeinfo``::

        CPU model:           x86_64
        CPU(s):              16
        CPU frequency:       1400 MHz
        CPU socket(s):       2
        Core(s) per socket:  2
        Thread(s) per core:  2
        NUMA cell(s):        2
        Memory size:         3145728 KiB

    libvirt's ``CPU socket(s)`` counts sockets per NUMA cell (virNodeInfo), so
    ``sockets`` is that times the cells.

    >>> n = parse_virsh_nodeinfo("CPU model: x86_64\\nCPU(s): 16\\nCPU socket(s): 2\\nNUMA cell(s): 2\\n")
    >>> (n.cpus, n.sockets)
    (16, 4)
    """
    out = VirshNodeInfo()
    for number, line in enumerate(text.splitlines(), 1):
        m = _FIELD.match(line)
        if not m or m.group(1).lower() not in _NODEINFO_KEYS:
            continue
        name = _NODEINFO_KEYS[m.group(1).lower()]
        _set_nodeinfo_field(out, name, m.group(1), m.group(2).strip(), number)
        out.lines[name] = number
    if out.cpus is None:
        raise ParseError("no 'CPU(s):' line: not virsh nodeinfo output")
    _count_sockets(out)
    return out


def _count_sockets(out: VirshNodeInfo) -> None:
    """The host's sockets: libvirt's sockets per NUMA cell times the cells (one when not printed)."""
    if out.sockets_per_cell is not None:
        out.sockets = out.sockets_per_cell * (out.numa_cells or 1)
        out.lines["sockets"] = out.lines["sockets_per_cell"]


@register(
    "virsh_freecell",
    commands=(r"\bvirsh\b.*\bfreecell\b",),
    detect=lambda head: bool(
        "Total:" in head
        and re.search(r"^[ \t]*\d+:[ \t]+\d+[ \t]+KiB[ \t]*$", head, re.M)
        and re.search(r"^[ \t]*Total:[ \t]+\d+[ \t]+KiB", head, re.M)
    ),
    priority=10,
)
def parse_virsh_freecell(text: str) -> VirshFreecell:
    """Free memory per NUMA cell from ``virsh freecell --all`` (or one cell, or
    the total alone from ``virsh freecell``)::

            0:       2048 KiB
            1:       4096 KiB
        --------------------
        Total:       6144 KiB

    >>> parse_virsh_freecell("    0:  2048 KiB\\n    1:  4096 KiB\\n---\\nTotal: 6144 KiB\\n").free_kb
    {0: 2048, 1: 4096}
    """
    out = VirshFreecell()
    for number, line in enumerate(text.splitlines(), 1):
        m = re.match(r"^\s*(\d+|Total):\s+(\d+)\s*KiB\s*$", line)
        if not m:
            continue
        if m.group(1) == "Total":
            out.total_kb = int(m.group(2))
            out.lines["total_kb"] = number
        else:
            out.free_kb[int(m.group(1))] = int(m.group(2))
            out.lines[f"free_kb[{m.group(1)}]"] = number
    if not out.free_kb and out.total_kb is None:
        raise ParseError("no 'N: SIZE KiB' lines: not virsh freecell output")
    return out


# what virsh dommemstat prints (virDomainMemoryStatTags as virsh names them)
_MEMSTAT_KEYS = frozenset(
    {
        "swap_in",
        "swap_out",
        "major_fault",
        "minor_fault",
        "unused",
        "available",
        "actual",
        "rss",
        "usable",
        "last_update",
        "disk_caches",
        "hugetlb_pgalloc",
        "hugetlb_pgfail",
    }
)
_MEMSTAT_LINE = re.compile(r"^\s*([a-z][a-z_]{1,40})\s+(\d{1,20})\s*$")


def _detect_dommemstat(head: str) -> bool:
    if "actual " not in head and "rss " not in head:
        return False
    keys = []
    for line in head.lstrip("\n").split("\n", 4)[:4]:
        m = _MEMSTAT_LINE.match(line)
        if m is None:
            break
        keys.append(m.group(1))
    return len(keys) >= 2 and set(keys) <= _MEMSTAT_KEYS and bool({"actual", "rss"} & set(keys))


@register(
    "virsh_dommemstat",
    commands=(r"\bvirsh\b.*\bdommemstat\b",),
    detect=_detect_dommemstat,
    priority=10,
)
def parse_virsh_dommemstat(text: str) -> VirshMemoryStats:
    """Balloon statistics of a domain from ``virsh dommemstat DOM`` (values as
    printed: KiB, fault counts, ``last_update`` in epoch seconds)::

        actual 4194304
        swap_in 0
        unused 3729588
        available 3881812
        last_update 1581406529
        rss 2969400

    A line that is not ``name number`` is reported and skipped.

    >>> parse_virsh_dommemstat("actual 8388608\\nlast_update 0\\nrss 8168560\\n").stats["rss"]
    8168560
    """
    out = VirshMemoryStats()
    unread = UnreadLines("dommemstat line not read")
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        m = _MEMSTAT_LINE.match(line)
        if m is None:
            unread.add(number, line)
            continue
        out.stats[m.group(1)] = int(m.group(2))
        out.lines[f"stats.{m.group(1)}"] = number
    if not out.stats:
        raise ParseError("no 'name value' lines: not virsh dommemstat output")
    out.errors = unread.errors()
    return out

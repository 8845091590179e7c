"""``virsh version``, ``virsh list --all`` and ``virsh capabilities``.

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
from typing import Any

from collectors.facts import ParseError, VirshCapabilities, VirshDomainState, VirshList, VirshVersion
from collectors.parsers import register
from collectors.parsers.libvirt import _HOSTILE, line_of, lines_by_value, safe_fromstring, to_kib

_VERSION_LINE = re.compile(
    r"^\s*(Compiled against library|Using library|Using API|Running hypervisor)\s*:\s*(\S+)\s+(\S+)\s*$"
)


@register(
    "virsh_version",
    commands=(r"^virsh\b.*\bversion\b",),
    paths=(r"sos_commands/virsh/virsh_-r_version$",),
    detect=lambda head: bool(re.search(r"^\s*Running hypervisor:|^\s*Using library: libvirt", head, re.M)),
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
        if label == "Using library":
            out.libvirt_version = version
            out.lines["libvirt_version"] = number
        elif label == "Compiled against library" and out.libvirt_version is None:
            # only a fallback: the library actually loaded is what "Using library" says
            out.libvirt_version = version
            out.lines["libvirt_version"] = number
        elif label == "Using API":
            out.api_version = version
            out.lines["api_version"] = number
        elif label == "Running hypervisor":
            out.hypervisor, out.hypervisor_version = product, version
            out.lines["hypervisor_version"] = number
    if out.libvirt_version is None and out.hypervisor_version is None:
        raise ParseError("no 'Using library' or 'Running hypervisor' line: not virsh version output")
    return out


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
    lines = text.splitlines()
    header = next((i for i, ln in enumerate(lines) if _LIST_HEADER.match(ln)), None)
    if header is None:
        raise ParseError("no 'Id Name State' header: not virsh list output")
    for number, line in enumerate(lines[header + 1 :], header + 2):
        if not line.strip() or set(line.strip()) <= {"-"}:
            continue
        m = _LIST_ROW.match(line)
        if not m:
            raise ParseError(f"unexpected virsh list row: {line.strip()[:80]!r}", line=number)
        dom_id, name, state = m.groups()
        out.domains.append(
            VirshDomainState(id=None if dom_id == "-" else int(dom_id), name=name, state=state)
        )
        out.lines[f"domains[{name}]"] = number
    return out


def _cell_entry(cell: Any) -> dict[str, Any]:
    entry: dict[str, Any] = {"cpus": [], "memory_kb": None, "distances": {}}
    mem = cell.find("memory")
    if mem is not None:
        entry["memory_kb"] = to_kib(mem.text, mem.get("unit"))
    cpus = []
    for cpu in cell.findall("cpus/cpu"):
        try:
            cpus.append(int(cpu.get("id", "")))
        except ValueError:
            raise ParseError(f"bad cpu id {cpu.get('id')!r} in capabilities") from None
    entry["cpus"] = sorted(cpus)
    for sibling in cell.findall("distances/sibling"):
        try:
            entry["distances"][int(sibling.get("id", ""))] = int(sibling.get("value", ""))
        except ValueError:
            raise ParseError("bad NUMA distance in capabilities") from None
    return entry


@register(
    "virsh_capabilities",
    commands=(r"^virsh\b.*\bcapabilities\b",),
    paths=(r"sos_commands/virsh/virsh_-r_capabilities$",),
    detect=lambda head: "<capabilities>" in head,
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
    if _HOSTILE.search(text):
        raise ParseError("refused unsafe XML: document type or entity declarations are not allowed")
    start = text.find("<capabilities")
    end = text.rfind("</capabilities>")
    if start < 0:
        raise ParseError("no <capabilities> element")
    root = safe_fromstring(text[start : end + len("</capabilities>")] if end > start else text[start:])
    if root.tag != "capabilities":
        raise ParseError(f"not virsh capabilities: root element <{root.tag}>")
    host = root.find("host")
    if host is None:
        raise ParseError("<capabilities> without <host>")
    out = VirshCapabilities()
    cpu = host.find("cpu")
    if cpu is not None:
        out.cpu_arch = (cpu.findtext("arch") or "").strip() or None
        out.cpu_model = (cpu.findtext("model") or "").strip() or None
        topo = cpu.find("topology")
        if topo is not None:
            try:
                out.topology = {k: int(v) for k, v in topo.attrib.items()}
            except ValueError:
                raise ParseError("non-numeric host <topology> attribute") from None
            ln = line_of(text, r"<topology\s")
            if ln:
                out.lines["topology"] = ln
    iommu = host.find("iommu")
    if iommu is not None:
        out.iommu = iommu.get("support") == "yes"
        ln = line_of(text, r"<iommu\b")
        if ln:
            out.lines["iommu"] = ln
    threads: set[tuple[str, str, str]] = set()
    cell_lines = lines_by_value(text, r"<cell\s+id=['\"](\d+)['\"]")
    for index, cell in enumerate(host.findall("topology/cells/cell")):
        try:
            cell_id = int(cell.get("id", index))
        except ValueError:
            raise ParseError(f"bad cell id {cell.get('id')!r}") from None
        out.cells[cell_id] = _cell_entry(cell)
        ln = cell_lines.get(str(cell_id))
        if ln:
            out.lines[f"cells[{cell_id}]"] = ln
        for c in cell.findall("cpus/cpu"):
            if c.get("socket_id") is not None and c.get("core_id") is not None:
                threads.add((c.get("socket_id", ""), c.get("core_id", ""), c.get("id", "")))
    if not out.topology and threads:
        sockets = {s for s, _, _ in threads}
        cores = {(s, c) for s, c, _ in threads}
        if len(cores) % len(sockets) == 0 and len(threads) % len(cores) == 0:
            out.topology = {
                "sockets": len(sockets),
                "cores": len(cores) // len(sockets),
                "threads": len(threads) // len(cores),
            }
    if out.cpu_arch is None and not out.cells and out.iommu is None:
        raise ParseError("<capabilities> has no host CPU, NUMA cells or IOMMU information")
    return out

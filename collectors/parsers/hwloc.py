"""``hwloc-ls`` / ``lstopo-no-graphics`` / ``lstopo --of console`` text
-> :class:`CpuTopology` and :class:`NumaTopology`.

Sample input (hwloc 2.x: the NUMA node is a memory child of its package)::

    Machine (128GB total)
      Package L#0
        NUMANode L#0 (P#0 64GB)
        L3 L#0 (35MB)
          L2 L#0 (256KB) + L1d L#0 (32KB) + L1i L#0 (32KB) + Core L#0
            PU L#0 (P#0)
            PU L#1 (P#28)

and hwloc 1.x, where the NUMA node holds its package (``Socket`` before 1.9),
objects with a single child are joined by ``+`` on one line::

    Machine (31GB)
      NUMANode L#0 (P#0 16GB)
        Socket L#0 + L3 L#0 (15MB)
          L2 L#0 (256KB) + L1d L#0 (32KB) + L1i L#0 (32KB) + Core L#0 + PU L#0 (P#0)
      NUMANode L#1 (P#1 16GB) + Socket L#1 + L3 L#1 (15MB)
        L2 L#6 (256KB) + L1d L#6 (32KB) + L1i L#6 (32KB) + Core L#6 + PU L#6 (P#1)

``lstopo -v`` attributes (``NUMANode L#0 (P#0 local=16GiB total=16GiB)``,
``L3Cache L#0 (size=4096KiB ...)``) are read too. A node's CPUs are the PUs
(``P#`` = the OS CPU number) under it (1.x) or under its parent (2.x); a PU
goes to the first node that covers it, so a second node of the same parent
(MCDRAM, a GPU's memory) has none, as in ``numactl -H``. I/O objects (PCI,
Net, Block) and the ``depth N:`` summary are skipped. A paste cut mid-tree
(a last object without its ``L#`` or closing parenthesis, nodes holding less
memory than the Machine line says) raises :class:`ParseError` with what was
read as ``partial``; an unclosed object followed by more of the tree is a
wrapped line, not a cut. ``lines`` keys: ``cpus``, ``sockets``, ``cores_per_socket``,
``threads_per_core``, ``numa_nodes``, ``numa_node_cpus.N`` (CpuTopology);
``node.N.size``, ``distances`` (NumaTopology: ``lstopo -v``'s ``Relative
latency matrix ... between N NUMANodes ... by logical indexes``, 1.x's
``relative latency matrix between NUMANodes ...``, relabelled
with the nodes' ``P#``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from collectors.facts import CpuTopology, NumaNode, NumaTopology, ParseError
from collectors.parsers import register
from collectors.sizes import mb

# "Package L#0", "NUMANode L#1 (P#1 16GB)", "L2Cache L#3 (size=1024KiB ...)", "Group0 L#0"
_TRACKED = re.compile(r"^(Machine|Package|Socket|NUMANode|Group\d*|Die|Core|PU|L\d[diu]?(?:Cache)?)\b")
_OBJECT = re.compile(r"^(\w+)(?:\([\w-]{1,40}\))?(?:\s+L#(\d{1,7}))?(?:\s+\((.*)\))?\s*$")
# an object whose attributes run past the line: a terminal or mail wrap, or the paste's end
_OPEN = re.compile(r"^(\w+)(?:\([\w-]{1,40}\))?(?:\s+L#(\d{1,7}))?\s+\((.*)$")
_TREE_LINE = re.compile(
    r"^\s*(?:Machine(?:\s+\(|\s*$)"
    r"|(?:Package|Socket|NUMANode|Group\d*|Die|Core|PU|L\d[diu]?(?:Cache)?)(?:\([\w-]{1,40}\))?(?:\s+L#\d|\s*$))"
)
_PU = re.compile(r"^\s*(?:.*\+\s*)?PU\s+L#\d{1,7}\s+\(P#\d{1,7}\)", re.M)
_SIZE = re.compile(r"(?:^|[\s=])(\d{1,12}(?:\.\d+)?)\s?([KMGT]i?B)\b")


@dataclass(eq=False)
class _Obj:
    kind: str
    line: int
    indent: int
    logical: int | None = None
    attrs: str = ""
    parent: _Obj | None = None
    children: list[_Obj] = field(default_factory=list)

    @property
    def os_index(self) -> int | None:
        m = re.match(r"P#(\d{1,7})", self.attrs)
        return int(m.group(1)) if m else None

    def pus(self) -> list[_Obj]:
        out: list[_Obj] = []
        stack = [self]
        while stack:
            obj = stack.pop()
            if obj.kind == "PU":
                out.append(obj)
            stack.extend(obj.children)
        return out


def _kind(name: str) -> str:
    if name == "Socket":
        return "Package"
    if name.startswith("Group"):
        return "Group"
    m = re.fullmatch(r"(L\d[diu]?)(?:Cache)?", name)
    return m.group(1) if m else name


def _size_mb(attrs: str) -> int | None:
    """``P#0 16GB`` / ``P#0 local=16GiB total=16GiB`` / ``size=1024KiB`` -> MB."""
    m = _SIZE.search(attrs)
    if not m:
        return None
    return int(mb(float(m.group(1)), m.group(2)))


def _detect(head: str) -> bool:
    if len(_PU.findall(head)) < 2:
        return False
    if re.search(r"^\s*Machine\s*\(", head, re.M) is not None:
        return True
    return len(re.findall(r"\bCore L#\d", head)) >= 2


def _is_named(m: re.Match[str] | None) -> bool:
    """An object match with its ``L#`` (the Machine has none)."""
    return m is not None and (m.group(1) == "Machine" or m.group(2) is not None)


def _match_piece(piece: str) -> tuple[re.Match[str] | None, bool]:
    """The match of an object's piece of a line and whether the piece is cut short
    (``PU L#13 (P#20``); None when not even its kind and ``L#`` are there."""
    m = _OBJECT.match(piece)
    if _is_named(m):
        return m, False
    m = _OPEN.match(piece)
    return (m if _is_named(m) else None), True


def _open_parent(stack: list[_Obj], indent: int) -> _Obj | None:
    """The parent of a line at ``indent``: the last open object indented less
    (``stack`` popped down to it); None at the top of the tree."""
    while stack and stack[-1].indent >= indent:
        stack.pop()
    return stack[-1] if stack else None


class _Tree:
    """The objects of the tree, with the problems met while reading it."""

    def __init__(self) -> None:
        self.objects: list[_Obj] = []
        self.machine: _Obj | None = None
        self.cut: list[str] = []
        self.cut_line: int | None = None  # the first line cut short
        self.last_line = 0
        self._unfinished: list[tuple[int, str, _Obj | None]] = []

    def read(self, text: str) -> None:
        stack: list[_Obj] = []  # the last object of each open line, by indent
        for idx, raw in enumerate(text.splitlines(), start=1):
            if not _TREE_LINE.match(raw):
                continue
            indent = len(raw) - len(raw.lstrip())
            self.last_line = idx
            last = self._read_line(raw, idx, indent, _open_parent(stack, indent))
            if last is not None and (not stack or last is not stack[-1]):
                stack.append(last)
        self._drop_cut_pieces()

    def _read_line(self, raw: str, idx: int, indent: int, parent: _Obj | None) -> _Obj | None:
        """The objects of one line (``a + b + c``: each the parent of the next)
        under ``parent``; the last one read (``parent`` when none was)."""
        for piece in raw.strip().split(" + "):
            obj = self._object(piece.strip(), idx, indent)
            if obj is None:
                break
            obj.parent = parent
            if parent is not None:
                parent.children.append(obj)
            self.objects.append(obj)
            parent = obj
        return parent

    def _drop_cut_pieces(self) -> None:
        """A piece cut short on the last line of the tree is where the paste ends;
        one followed by more of the tree is a line wrapped by a terminal or a mail."""
        for idx, piece, obj in self._unfinished:
            if idx != self.last_line:
                continue
            self.cut.append(f"cut short at {piece!r}")
            self.cut_line = self.cut_line or idx
            if obj is not None:  # "PU L#13 (P#20" may have lost digits: not kept
                self.objects.remove(obj)
                if obj.parent is not None:
                    obj.parent.children.remove(obj)

    def _object(self, piece: str, idx: int, indent: int) -> _Obj | None:
        if not _TRACKED.match(piece):
            return None  # an I/O object ("PCI 8086:8d66", "HostBridge L#0")
        m, unfinished = _match_piece(piece)
        if m is None:
            self._unfinished.append((idx, piece, None))
            return None
        obj = _Obj(kind=_kind(m.group(1)), line=idx, indent=indent, attrs=m.group(3) or "")
        if unfinished:
            self._unfinished.append((idx, piece, obj))
        obj.logical = int(m.group(2)) if m.group(2) is not None else None
        if obj.kind == "Machine" and self.machine is None:
            self.machine = obj
        return obj

    def of(self, kind: str) -> list[_Obj]:
        return [o for o in self.objects if o.kind == kind]


def _numa(tree: _Tree) -> tuple[NumaTopology, dict[int, list[int]], dict[int, int]]:
    """Nodes with their CPUs and memory; the CPU lists and each node's line."""
    topo = NumaTopology()
    node_cpus: dict[int, list[int]] = {}
    node_lines: dict[int, int] = {}
    taken: set[int] = set()
    for obj in tree.of("NUMANode"):
        node_id = obj.os_index if obj.os_index is not None else obj.logical
        if node_id is None or node_id in topo.nodes:
            continue
        cpus = sorted(_node_cpus(obj) - taken)
        taken.update(cpus)
        node = NumaNode(node=node_id, cpus=cpus, size_mb=_size_mb(obj.attrs))
        topo.nodes[node_id] = node
        node_cpus[node_id] = cpus
        node_lines[node_id] = obj.line
        topo.lines[f"node.{node_id}.size"] = obj.line
    return topo, node_cpus, node_lines


def _node_cpus(node: _Obj) -> set[int]:
    """The CPU numbers of a NUMANode: hwloc 1.x lists its PUs under the node, 2.x under its parent."""
    scope = node if node.children or node.parent is None else node.parent
    return {pu.os_index for pu in scope.pus() if pu.os_index is not None}


_MATRIX = re.compile(
    r"^\s*relative latency matrix\b.*\bbetween (?:\d{1,6} )?NUMANodes\b.*\bby (logical|physical|os) ind",
    re.I,
)
_MATRIX_ROW = re.compile(r"^\s*(\d{1,6})((?:\s+\d{1,6}(?:\.\d+)?)+)\s*$")


def _distances(text: str, tree: _Tree, topo: NumaTopology) -> list[str]:
    """``lstopo -v``'s NUMA latency matrix (by logical indexes: mapped to node
    numbers through the tree) into ``distances``; a cut table is reported."""
    lines = text.splitlines()
    for idx, line in enumerate(lines):
        m = _MATRIX.match(line)
        if m:
            return _read_matrix(lines, idx, tree, topo, logical=m.group(1).lower() == "logical")
    return []


def _read_matrix(lines: list[str], idx: int, tree: _Tree, topo: NumaTopology, *, logical: bool) -> list[str]:
    """The matrix whose title is at ``idx`` (its header follows: hwloc 2.x
    "between 8 NUMANodes (depth -3)", 1.x "between NUMANodes (depth 1)")."""
    header = lines[idx + 1].split() if idx + 1 < len(lines) else []
    size = len(header) - 1
    by_logical = {o.logical: o.os_index for o in tree.of("NUMANode")} if logical else None
    labels, rows = _matrix_rows(lines[idx + 2 : idx + 2 + size], by_logical)
    if not _is_whole_matrix(size, labels, rows):
        return [f"distance table incomplete: {len(rows)} of {size} rows"]
    topo.distance_nodes, topo.distances = labels, rows
    topo.lines["distances"] = idx + 1
    return []


def _is_whole_matrix(size: int, labels: list[int], rows: list[list[int]]) -> bool:
    """Whether the matrix has all its ``size`` rows, each of ``size`` distances and a known node."""
    return size >= 1 and len(rows) >= size and all(len(row) == size for row in rows) and -1 not in labels


def _matrix_rows(
    row_lines: list[str], by_logical: dict[int | None, int | None] | None
) -> tuple[list[int], list[list[int]]]:
    """The node of each row (-1 when unknown) and its distances, up to the first
    line that is no row; a row's label is a logical index when ``by_logical``
    maps them to node numbers."""
    rows: list[list[int]] = []
    labels: list[int] = []
    for row_line in row_lines:
        r = _MATRIX_ROW.match(row_line)
        if not r:
            break
        label = int(r.group(1))
        node = by_logical.get(label) if by_logical is not None else label
        labels.append(node if node is not None else -1)
        rows.append([round(float(v)) for v in r.group(2).split()])
    return labels, rows


def _cpu(tree: _Tree, node_cpus: dict[int, list[int]], node_lines: dict[int, int]) -> CpuTopology:
    cpu = CpuTopology()
    _count_cpus(cpu, tree)
    if node_cpus:
        _read_node_cpus(cpu, node_cpus, node_lines)
    _read_caches(cpu, tree)
    _read_identity(cpu, tree)
    cpu.extra["hwloc"] = True
    return cpu


def _read_node_cpus(cpu: CpuTopology, node_cpus: dict[int, list[int]], node_lines: dict[int, int]) -> None:
    """The NUMA node count and each node's CPU list, cited at the nodes' lines."""
    cpu.numa_nodes = len(node_cpus)
    cpu.lines["numa_nodes"] = min(node_lines.values())
    cpu.numa_node_cpus = {n: list(c) for n, c in sorted(node_cpus.items())}
    for node_id, line in node_lines.items():
        cpu.lines[f"numa_node_cpus.{node_id}"] = line


def _read_caches(cpu: CpuTopology, tree: _Tree) -> None:
    """The size of each cache level (the first object of a level that shows one)."""
    for obj in tree.objects:
        if re.fullmatch(r"L\d[diu]?", obj.kind) and obj.kind not in cpu.caches:
            size = re.search(r"\d[\d.]*\s?[KMGT]i?B", obj.attrs)
            if size:
                cpu.caches[obj.kind] = size.group(0)


def _count_cpus(cpu: CpuTopology, tree: _Tree) -> None:
    """CPUs, sockets, cores per socket and threads per core."""
    pus = [pu.os_index for pu in tree.of("PU") if pu.os_index is not None]
    cores, packages = tree.of("Core"), tree.of("Package")
    if pus:
        cpu.cpus = len(set(pus))
        cpu.online_cpus = sorted(set(pus))
        cpu.lines["cpus"] = tree.of("PU")[0].line
    if packages:
        cpu.sockets = len(packages)
        cpu.lines["sockets"] = packages[0].line
        if cores:
            cpu.cores_per_socket = len(cores) // len(packages)
            cpu.lines["cores_per_socket"] = cores[0].line
    if cores:
        cpu.threads_per_core = max(len(c.pus()) for c in cores)
        cpu.lines["threads_per_core"] = cores[0].line


def _read_identity(cpu: CpuTopology, tree: _Tree) -> None:
    """Model, vendor and architecture from ``lstopo -v``'s attributes."""
    packages = tree.of("Package")
    packages_attrs = " ".join(p.attrs for p in packages)
    m = re.search(r'CPUModel="([^"]{1,200})"', packages_attrs)
    if m:
        cpu.model_name = m.group(1).strip()
        cpu.lines["model_name"] = packages[0].line
    m = re.search(r"CPUVendor=(\w{1,40})", packages_attrs)
    if m:
        cpu.vendor = m.group(1)
    m = re.search(r"Architecture=(\w{1,20})", tree.machine.attrs if tree.machine else "")
    if m:
        cpu.architecture = m.group(1)


def _cuts(tree: _Tree, topo: NumaTopology) -> list[str]:
    """What a paste cut mid-tree lost."""
    missing = list(tree.cut) + _nodes_incomplete(tree, topo)
    if not missing:
        missing += _last_package_cut(tree)
    return missing


def _nodes_incomplete(tree: _Tree, topo: NumaTopology) -> list[str]:
    """The nodes' memory falling short of the Machine's total (nodes lost to the cut)."""
    total = _size_mb(tree.machine.attrs) if tree.machine else None
    sizes = [n.size_mb for n in topo.nodes.values() if n.size_mb is not None]
    if total and sizes and sum(sizes) < 0.9 * total:
        return [f"nodes incomplete: {len(sizes)} node(s) with {sum(sizes)} MB of the Machine's {total} MB"]
    return []


def _last_package_cut(tree: _Tree) -> list[str]:
    """The last package listing fewer PUs than the first, where the tree ends."""
    packages = tree.of("Package")
    if len(packages) < 2:
        return []
    first, last = len(packages[0].pus()), len(packages[-1].pus())
    if last < first and tree.last_line == _last_tree_object_line(packages[-1]):
        return [f"last package cut: {last} of {first} PUs listed"]
    return []


def _last_tree_object_line(obj: _Obj) -> int:
    line = obj.line
    stack = list(obj.children)
    while stack:
        child = stack.pop()
        line = max(line, child.line)
        stack.extend(child.children)
    return line


@register(
    "hwloc_ls",
    commands=(r"^(hwloc-ls|lstopo-no-graphics|lstopo)\b(?!.*--of\s+(?!console)\S)",),
    paths=(r"(^|/)(hwloc-ls|lstopo(-no-graphics)?)(\.txt)?$",),
    detect=_detect,
    needles=("(P#",),
    priority=10,
    # the I/O objects of the tree ("PCI 8086:8d66", 'Net L#1 "eth2"') read like prose
    prose_lines=(
        r"(?:HostBridge|PCIBridge)(?: L#\d{1,7})?",
        r"PCI [0-9a-fA-F]{4}:[0-9a-fA-F]{4}(?: \(\w{1,20}\))?",
        r"(?:Net|Block|GPU|OpenFabrics|CoProc|DMA|OS|Misc)(?:\([\w ]{1,20}\))? L#\d{1,7} \"[^\"]{0,80}\"",
    ),
)
def parse_hwloc_ls(text: str) -> list[CpuTopology | NumaTopology]:
    """Parse the text tree of ``hwloc-ls`` / ``lstopo-no-graphics``.

    Sample input (``lstopo -v``)::

        Machine (P#0 total=16GiB)
          NUMANode L#0 (P#0 local=16GiB total=16GiB)
          Package L#0 (P#0 CPUModel="Intel(R) Xeon(TM) CPU 2.60GHz")
            L3Cache L#0 (size=4096KiB linesize=64 ways=16)
              L2Cache L#0 (size=1024KiB linesize=64 ways=8)
                L1dCache L#0 (size=16KiB linesize=64 ways=8)
                  Core L#0 (P#0)
                    PU L#0 (P#0)
                    PU L#1 (P#8)

    Returns a :class:`CpuTopology` and, when the tree shows NUMA nodes, a
    :class:`NumaTopology`.
    """
    tree = _Tree()
    tree.read(text)
    if not tree.of("PU"):
        if tree.of("Core"):  # "lstopo --ignore PU": the cores are there, their CPU numbers not
            raise ParseError("lstopo tree without its PU objects (--ignore PU): no CPU numbers to read")
        raise ParseError("not hwloc-ls / lstopo output (no 'PU L#n (P#n)' object)")
    topo, node_cpus, node_lines = _numa(tree)
    cpu = _cpu(tree, node_cpus, node_lines)
    results: list[CpuTopology | NumaTopology] = [cpu]
    if topo.nodes:
        results.append(topo)
    missing = _distances(text, tree, topo) + _cuts(tree, topo)
    if missing:
        raise ParseError("; ".join(missing), line=tree.cut_line or tree.last_line, partial=results)
    return results

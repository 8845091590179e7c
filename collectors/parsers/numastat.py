"""``numastat`` in its three printed forms and the sysfs counters file -> :class:`Numastat`.

Default table (counters in pages)::

                               node0           node1
    numa_hit              1386436009      1158049958
    numa_miss               87498458        30245356
    numa_foreign            30245356        87498458
    interleave_hit             47366           47250
    local_node            1386374283      1157919578
    other_node              87560184        30375736

``numastat -m`` / ``numastat -n`` (MB; a ``Total`` column that we drop)::

    Per-node system memory usage (in MBs):
                              Node 0          Node 1           Total
                     --------------- --------------- ---------------
    MemTotal                 4826.20         4826.20         9652.40

``numastat -p PID`` (one process: rows per kind of memory) and ``numastat -p NAME``
(every matching process, one row each), MB -> :class:`ProcessNumaUsage`::

    Per-node process memory usage (in MBs) for PID 14175 (bash)
                               Node 0           Total
                      --------------- ---------------
    Huge                         0.00            0.00
    Private                      3.70            3.70
    ----------------  --------------- ---------------
    Total                        3.91            3.91

    Per-node process memory usage (in MBs)
    PID                        Node 0           Total
    ----------------  --------------- ---------------
    4180 (bash)                  4.07            4.07

``-c`` (compact: integers, narrow columns) parses like the wide forms. numastat
also prints lines such as ``Token SwapCached not in hash table.`` on stderr
(newer kernels' meminfo keys it does not know); they are skipped.

sysfs ``/sys/devices/system/node/node0/numastat`` (pages, one node per file)::

    numa_hit 193460335812
    numa_miss 12624528

The sysfs file does not name its node, and a pure parser never sees the file
name: pass ``node=N`` (the ingest helper does so for the ``node_numastat`` kind,
whose path regex captures ``node(\\d+)``). Without it the counters are stored
under node 0, which is harmless for per-node ratios but says nothing about which
node it was.

Row names of ``numastat -n`` (``Numa_Hit``) are lower-cased so rules read
``numa_hit``/``numa_miss`` whatever the form; ``unit`` tells pages from MB.
``lines`` keys: ``<counter>`` (the row, table forms) or ``<counter>`` in the
sysfs form, and ``header``.
"""

from __future__ import annotations

import re

from collectors.facts import ArtifactError, Numastat, ParseError, ProcessNuma, ProcessNumaUsage
from collectors.parsers import register

_ROW_NAME = re.compile(r"^[A-Za-z][\w()]*$")
_NUMBER = re.compile(r"^-?\d{1,20}(\.\d{1,6})?$")
_KV = re.compile(r"^\s*([a-z_]{3,40})\s+(\d{1,20})\s*$")
NUMASTAT_COUNTERS = {"numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node"}


def _num(token: str) -> float | None:
    return float(token) if _NUMBER.match(token) else None


def _header_nodes(line: str) -> tuple[list[int], bool] | None:
    """Node ids of a table header (``node0 node1``, ``Node 0 Node 1 Total``,
    ``PID Node 0 Total``) and whether it starts with ``PID`` (numastat -p NAME)."""
    tokens = line.split()
    if not tokens:
        return None
    if all(re.fullmatch(r"node\d{1,6}", t) for t in tokens):
        return [int(t[4:]) for t in tokens], False
    return _node_total_header(line)


def _node_total_header(line: str) -> tuple[list[int], bool] | None:
    """Node ids of ``Node 0 Node 1 Total`` (``-m``, ``-n``) or ``PID Node 0 Total``
    (``-p``), and whether it starts with ``PID``; None for another line."""
    found = re.findall(r"\bNode (\d{1,6})\b", line)
    rest = re.sub(r"\bNode \d{1,6}\b", "", line).split()
    pid = rest[:1] == ["PID"]
    if pid:
        rest = rest[1:]
    if found and all(t == "Total" for t in rest):
        return [int(n) for n in found], pid
    return None


_PROC_TITLE = re.compile(r"Per-node process memory usage \(in MBs\)(?: for PID (\d{1,10}) \((.{0,200})\))?")
# "4391 (qemu-syste   8373 ...": -c cuts the name, closing parenthesis included
_PROC_ROW = re.compile(r"^\s*(\d{1,10})\s+\(([^)]{0,200}?)\)?\s+(-?\d[\d.\s-]*)$")


def _parse(text: str, node: int | None) -> list[Numastat | ProcessNumaUsage]:
    lines = text.splitlines()
    last = max((i for i, line in enumerate(lines, start=1) if line.strip()), default=0)
    reader = _Reader(node, last)
    for idx, line in enumerate(lines, start=1):
        stripped = line.strip()
        if stripped and not set(stripped) <= set("- "):
            reader.read(idx, line, stripped)
    return reader.results()


class _Reader:
    """numastat's output, line by line: the counter tables (default, -n, -m)
    and the per-process tables (-p)."""

    def __init__(self, node: int | None, last: int) -> None:
        self.node = node  # the node of a sysfs numastat file, if known
        self.last = last  # the number of the last non-blank line
        self.out = Numastat()
        self.procs = ProcessNumaUsage()
        self.current: ProcessNuma | None = None  # numastat -p PID: the one process of the table
        self.mode = "counters"  # "counters" or "process"
        self.header: list[int] | None = None
        self.pid_table = False
        self.kv_seen = False

    def read(self, idx: int, line: str, stripped: str) -> None:
        """Read line ``idx``: the first of the readers that takes it."""
        for reader in (self.title, self.unit_line, self.header_line, self.process_line):
            if reader(idx, line, stripped):
                return
        self.counter_line(idx, line, stripped)

    def title(self, idx: int, line: str, stripped: str) -> bool:
        """``Per-node process memory usage (in MBs) [for PID N (name)]``."""
        title = _PROC_TITLE.search(stripped)
        if not title:
            return False
        self.mode, self.header, self.current = "process", None, None
        self.procs.lines.setdefault("header", idx)
        if title.group(1):
            self.current = ProcessNuma(pid=int(title.group(1)), name=title.group(2), line=idx)
            self.procs.processes.append(self.current)
        return True

    def unit_line(self, idx: int, line: str, stripped: str) -> bool:
        """The title of a counter table in MB (``-m``, ``-n``)."""
        if "(in MBs)" not in stripped:
            return False
        self.out.unit = "MB"
        self.mode, self.header = "counters", None
        return True

    def header_line(self, idx: int, line: str, stripped: str) -> bool:
        """A table header naming the nodes."""
        parsed_header = _header_nodes(line)
        if parsed_header is None:
            return False
        self.header, self.pid_table = parsed_header
        if self.mode == "counters":
            if stripped.endswith("Total"):
                self.out.unit = "MB"  # -m / -n: only the MB forms print a Total column
            self.out.lines.setdefault("header", idx)
            for n in self.header:
                self.out.nodes.setdefault(n, {})
        return True

    def process_line(self, idx: int, line: str, stripped: str) -> bool:
        if self.mode != "process":
            return False
        _process_row(stripped, self.header, self.pid_table, self.current, self.procs, idx)
        return True

    def counter_line(self, idx: int, line: str, stripped: str) -> None:
        """A row of a counter table, or a ``counter value`` line of a sysfs file."""
        if self.header is None and not self.kv_seen:
            self.header = _implied_header(stripped, self.out)
        if self.header is not None and _counter_row(
            self.out, stripped.split(), self.header, idx, last=idx == self.last
        ):
            return
        if self.header is None:
            self.sysfs_line(idx, line)

    def sysfs_line(self, idx: int, line: str) -> None:
        """A ``counter value`` line of a node's sysfs numastat file (of node 0 when unknown)."""
        m = _KV.match(line)
        if m and m.group(1) in NUMASTAT_COUNTERS:
            target = 0 if self.node is None else self.node
            self.out.nodes.setdefault(target, {})[m.group(1)] = float(int(m.group(2)))
            self.out.lines[m.group(1)] = idx
            self.kv_seen = True

    def results(self) -> list[Numastat | ProcessNumaUsage]:
        """The counters and the processes read; ParseError when neither was."""
        results = [found for found in (self.counters(), self.processes()) if found is not None]
        if not results:
            raise ParseError("no numastat counters or per-process rows found")
        return results

    def counters(self) -> Numastat | None:
        """The counter tables read (in pages when from sysfs lines); None when no node has one."""
        if not any(self.out.nodes.values()):
            return None
        if self.kv_seen:
            self.out.unit = "pages"
        return self.out

    def processes(self) -> ProcessNumaUsage | None:
        """The processes with a figure read; None when there is none."""
        procs = self.procs
        procs.processes = [p for p in procs.processes if p.node_mb or p.total_mb is not None]
        return procs if procs.processes else None


def _implied_header(row: str, out: Numastat) -> list[int] | None:
    """Node ids for a table pasted without its header, from its first row: the
    default form's lower-case counters have one value per node; ``-n``'s and
    ``-m``'s capitalised rows end with a Total column (in MB). The ids are then
    assumed to be 0..N-1, and an error says so."""
    m = _BODY_ROW.match(row)
    if not m:
        return None
    name, values = m.group(1), m.group(2).split()
    if name in NUMASTAT_COUNTERS:
        count, fewest = len(values), 2  # "numa_hit 193460335812" is the sysfs file of one node
    elif _is_table_row_name(name):
        count, fewest = len(values) - 1, 1
        out.unit = "MB"
    else:
        return None
    if count < fewest:
        return None
    out.errors.append(ArtifactError("", f"no node header: nodes assumed to be 0-{count - 1}", None))
    out.lines.setdefault("header", 0)
    for n in range(count):
        out.nodes.setdefault(n, {})
    return list(range(count))


def _counter_row(
    out: Numastat, tokens: list[str], header: list[int], idx: int, *, last: bool = False
) -> bool:
    """A ``name v v ...`` row under the node header, read into ``out``; a row cut
    mid-paste ("Inactive   4650.94   17.62" under nine columns, or the paste's
    ``last`` line cut in its name: "Mapp") is reported."""
    got = _values(tokens[1:], header)
    if got is not None:
        name = tokens[0]
        if name.lower() in NUMASTAT_COUNTERS:
            name = name.lower()
        for n, v in got[0].items():
            out.nodes[n][name] = v
        out.lines[name] = idx
        return True
    if _is_cut_row(tokens, header, last=last):
        out.errors.append(
            ArtifactError("", f"row {tokens[0]} cut: {len(tokens) - 1} of {len(header)} nodes", idx)
        )
        return True
    return False


def _is_cut_row(tokens: list[str], header: list[int], *, last: bool) -> bool:
    """A named row with fewer numbers than nodes (a name alone only on the paste's
    last line); a meminfo line after the table ("HugePages_Total:   400000") is none."""
    if _ROW_NAME.match(tokens[0]) is None:  # (a line read is never blank)
        return False
    return (
        (last or len(tokens) > 1)
        and len(tokens) <= len(header)
        and all(_num(t) is not None for t in tokens[1:])
    )


def _values(cells: list[str], header: list[int]) -> tuple[dict[int, float], float | None] | None:
    """A row's value for each node of the header, and the total after them;
    None unless it has a value for every node."""
    values = [_num(t) for t in cells]
    node_values = [v for v in values[: len(header)] if v is not None]
    if len(node_values) < len(header):
        return None
    per_node = {n: float(v) for n, v in zip(header, node_values, strict=True)}
    total = values[len(header)] if len(values) > len(header) else None
    return per_node, total


def _process_row(
    stripped: str,
    header: list[int] | None,
    pid_table: bool,
    current: ProcessNuma | None,
    procs: ProcessNumaUsage,
    idx: int,
) -> None:
    if header is None:
        return
    if pid_table:
        _pid_row(stripped, header, procs, idx)
    elif current is not None:
        _category_row(stripped, header, current, idx)


def _pid_row(stripped: str, header: list[int], procs: ProcessNumaUsage, idx: int) -> None:
    """A row of ``numastat -p``'s per-process table: ``PID (name) MB MB ... total``."""
    m = _PROC_ROW.match(stripped)
    got = _values(m.group(3).split(), header) if m else None
    if m and got:
        procs.processes.append(
            ProcessNuma(pid=int(m.group(1)), name=m.group(2), node_mb=got[0], total_mb=got[1], line=idx)
        )


def _category_row(stripped: str, header: list[int], current: ProcessNuma, idx: int) -> None:
    """A row of one process's table (``Huge``, ``Heap`` ... ``Total``)."""
    tokens = stripped.split()
    got = _values(tokens[1:], header)  # (a name alone has no value for the nodes)
    if not got:
        return
    if tokens[0] == "Total":
        current.node_mb, current.total_mb = got
        current.line = idx
    else:
        current.categories[tokens[0]] = got[0]


# numastat's tables without the lines above them: the "Node 0 Node 1 Total" header
# of -m/-n, or the body alone (-n's "Numa_Hit 85806.66 637699.93 723506.59", -m's
# "MemTotal 490303 97280 587583", the default's "numa_hit 1386436009 1158049958")
_NODE_HEADER = re.compile(r"^[ \t]*(?:PID[ \t]+)?(?:Node[ \t]+\d{1,6}[ \t]+){1,256}Total[ \t]*$", re.M)
_BODY_ROW = re.compile(r"^[ \t]*([A-Za-z][\w()]{1,40})((?:[ \t]+-?\d{1,20}(?:\.\d{1,6})?){1,257})[ \t]*$")
_BODY_ROWS = re.compile(_BODY_ROW.pattern, re.M)
_MEMINFO_ROWS = frozenset({"MemTotal", "MemFree", "MemUsed", "FilePages", "AnonPages", "HugePages_Total"})


def _is_table_row_name(name: str) -> bool:
    """Whether ``name`` starts a row of numastat's tables: a counter (any case) or a meminfo row of ``-m``."""
    return name.lower() in NUMASTAT_COUNTERS or name in _MEMINFO_ROWS


def _body_rows(head: str) -> int:
    """How many of the first rows of ``head`` are numastat counter or meminfo
    rows of one width (0 when the first row is not one)."""
    width, count = None, 0
    for line in head.splitlines()[:12]:
        if set(line.strip()) <= set("- "):  # (a blank line too)
            continue
        m = _BODY_ROW.match(line)
        if not m:
            break
        name, values = m.group(1), m.group(2).split()
        if count == 0 and not _is_table_row_name(name):
            return 0
        if width is not None and len(values) != width:
            break
        width, count = len(values), count + 1
    return count


# the first line of each of numastat's tables
_TITLES = ("Per-node numastat info", "Per-node system memory usage", "Per-node process memory usage")


def _detect(head: str) -> bool:
    if "Total" in head and _NODE_HEADER.search(head) and _BODY_ROWS.search(head.split("Total", 1)[-1]):
        return True
    if _body_rows(head) >= 3:
        return True
    return ("numa_hit" in head or "Per-node" in head) and _counters_or_title(head)


def _counters_or_title(head: str) -> bool:
    """The default form's numa_hit and numa_miss lines, or one of the tables' titles."""
    if re.search(r"^Node\s+\d+,\s*zone\s", head, re.M):
        return False  # /proc/zoneinfo repeats numa_hit/numa_miss in its per-node stats
    if re.search(r"^\s*numa_hit\s+\d", head, re.M) and re.search(r"^\s*numa_miss\s+\d", head, re.M):
        return True
    return any(title in head for title in _TITLES)


@register(
    "numastat",
    commands=(r"^numastat(\s|$)",),
    paths=(r"^(?!.*node\d+/numastat$).*numastat(_-?\w+)?(\.txt)?$",),
    detect=_detect,
    priority=10,
    prose_lines=(
        r"Per-node (?:system memory usage|numastat info|process memory usage) \(in MBs\).{0,300}",
        r"Token \S{1,60} not in hash table\.",
        r"Can't read /proc/\d+/numa_maps.{0,200}",
    ),
)
def parse_numastat(
    text: str, *, node: int | None = None
) -> Numastat | ProcessNumaUsage | list[Numastat | ProcessNumaUsage]:
    """Parse any numastat form; ``node`` names the node of a sysfs counters file.
    Returns a :class:`Numastat` for counter and meminfo tables, a
    :class:`ProcessNumaUsage` for ``-p`` tables, a list of both when the text holds both.

    Sample input (default table; ``-m``/``-n``/``-p`` and sysfs forms in the module docstring)::

                       node0       node1
        numa_hit    40995736    22924791
        numa_miss   53540664    10471137
    """
    results = _parse(text, node)
    return results[0] if len(results) == 1 else results


@register("node_numastat", paths=(r"node/node(\d+)/numastat$",))
def parse_node_numastat(text: str, *, node: int | None = None) -> Numastat:
    """``/sys/devices/system/node/nodeN/numastat``; the ingest helper passes ``node=N``
    taken from the path (``node(\\d+)``).

    Sample input::

        numa_hit 193460335812
        numa_miss 12624528
        local_node 193454780853
        other_node 18179487
    """
    results = [r for r in _parse(text, node) if isinstance(r, Numastat)]
    if not results:
        raise ParseError("no numastat counters found")
    return results[0]

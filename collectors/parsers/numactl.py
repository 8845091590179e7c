"""``numactl -H`` / ``numactl --hardware`` (optionally followed by ``numactl --show``)
-> :class:`NumactlHardware`.

Sample input::

    available: 2 nodes (0-1)
    node 0 cpus: 0 2 4 6 8 10
    node 0 size: 32722 MB
    node 0 free: 24803 MB
    node 1 cpus: 1 3 5 7 9 11
    node 1 size: 32768 MB
    node 1 free: 28378 MB
    node distances:
    node   0   1
      0:  10  20
      1:  20  10
    policy: default
    preferred node: current

The distance table is also read when it is pasted alone, with or without its
``node distances:`` line (the question is often only about distances)::

    node   0   1   2   3
      0:  10  40  40  40
      1:  40  10  40  40

Lines that are none of these (a shell prompt, prose around a pasted block) are
ignored. ``lines`` keys: ``available``, ``node.N.cpus``, ``node.N.size``,
``node.N.free``, ``distances``, ``policy``.
"""

from __future__ import annotations

import re

from collectors.facts import NumactlHardware, NumaNode, NumaPolicy, ParseError
from collectors.numbers import ascii_digits
from collectors.parsers import register
from collectors.sizes import mb

_AVAILABLE = re.compile(r"^\s*available:\s*(\d{1,6})\s+nodes?\b")
# values are stripped in code: a lazy group before "\s*$" backtracks quadratically on long blank runs
_NODE = re.compile(r"^\s*node\s+(\d{1,6})\s+(cpus|size|free):(.*)$")
_MEM = re.compile(r"^(\d{1,15})\s*(kB|KB|MB|GB)?$")
_DIST_HEADER = re.compile(r"^\s*node(\s+\d{1,6})+\s*$")
_DIST_ROW = re.compile(r"^\s*(\d{1,6}):((\s+\d{1,6})+)\s*$")
_POLICY = re.compile(r"^\s*policy:\s*(\S+)")


def _mb(value: str) -> int | None:
    m = _MEM.match(value)
    if not m:
        return None
    return int(mb(int(m.group(1)), m.group(2)))


_NODE_LINES = re.compile(r"^\s*node\s+\d{1,6}\s+(?:cpus|size|free):", re.M)


def _ids(value: str) -> list[int]:
    """The node or CPU ids of a space-separated list (numbers of up to six digits)."""
    return [int(tok) for tok in value.split() if ascii_digits(tok) and len(tok) <= 6]


def _distance_table_alone(head: str) -> bool:
    """A ``node 0 1 ...`` header followed by at least two ``N: d d ...`` rows as
    wide as the header: numactl's distance matrix without the lines above it."""
    lines = head.splitlines()
    for i, line in enumerate(lines[:8]):
        if not _DIST_HEADER.match(line):
            continue
        width = len(line.split()) - 1
        return width >= 2 and _rows_of_width(lines[i + 1 : i + 4], width) >= 2
    return False


def _rows_of_width(lines: list[str], width: int) -> int:
    """How many of ``lines``, from the first, are ``N: d d ...`` rows of ``width`` distances."""
    rows = 0
    for row in lines:
        m = _DIST_ROW.match(row)
        if not m or len(m.group(2).split()) != width:
            break
        rows += 1
    return rows


def _detect(head: str) -> bool:
    if "available:" in head and re.search(r"^available:\s*\d+\s+nodes?\b", head, re.M) is not None:
        return True
    # a paste that starts below the header ("node 0 size: 8190 MB" first): node lines
    # of at least two nodes, or of one node with its distance table
    if "node " not in head:
        return False
    return _distance_table_alone(head) or _node_lines_below_header(head)


def _node_lines_below_header(head: str) -> bool:
    """Node lines of at least two nodes, or of one node with its distance table."""
    nodes = {m.group(0).split()[1] for m in _NODE_LINES.finditer(head)}
    return len(nodes) >= 2 or (len(nodes) == 1 and "node distances:" in head)


def _incomplete(out: NumactlHardware) -> list[str]:
    """What a torn paste lost; a distance table that cannot be kept square is dropped."""
    alone = out.available is None and not out.nodes and bool(out.distances)
    missing = _square_distances(out)
    if alone:
        return missing  # the distance table pasted alone: nothing above it was meant
    return missing + _missing_nodes(out)


def _square_distances(out: NumactlHardware) -> list[str]:
    """Keeps the distance matrix square and labelled (a torn paste is better dropped
    than misread); what it lost."""
    if not out.distances:
        return ["distance table incomplete: 0 rows"] if "distances" in out.lines else []
    if len(out.distance_nodes) == len(out.distances):
        return []
    if not out.distance_nodes and all(len(r) == len(out.distances) for r in out.distances):
        out.distance_nodes = sorted(out.nodes)[: len(out.distances)]
        return []
    return _drop_distances(out)


def _drop_distances(out: NumactlHardware) -> list[str]:
    """Drop a distance table whose rows and labels disagree; what it lost."""
    rows, labels = len(out.distances), len(out.distance_nodes)
    out.distance_nodes, out.distances = [], []
    if rows < labels:
        return [f"distance table incomplete: {rows} of {labels} rows"]
    return ["distance table unreadable: rows and header disagree"]


def _missing_nodes(out: NumactlHardware) -> list[str]:
    """The start of the output or nodes a torn paste lost."""
    missing = _cut_at_start(out) if out.available is None else []
    if out.available and len(out.nodes) < out.available and out.nodes:
        missing.append(f"nodes incomplete: {len(out.nodes)} of {out.available} nodes listed")
    return missing


def _cut_at_start(out: NumactlHardware) -> list[str]:
    """The paste starts below "available:": that, and the nodes (the first one) that lost their CPU line."""
    missing = ["cut at the start: no 'available:' line"]
    no_cpu_line = [n for n in sorted(out.nodes) if f"node.{n}.cpus" not in out.lines]
    if no_cpu_line:
        missing.append("no 'cpus:' line for node " + ", ".join(map(str, no_cpu_line)))
    return missing


class _Hardware:
    """``numactl -H`` line by line: available, node lines, the distance table, a policy."""

    def __init__(self) -> None:
        self.out = NumactlHardware()
        self.in_distances = False

    def read(self, idx: int, line: str) -> None:
        for reader in (self.available, self.node_line, self.distances_title, self.distance_line):
            if reader(idx, line):
                return
        m = _POLICY.match(line)
        if m:
            self.out.policy = m.group(1)
            self.out.lines["policy"] = idx

    def available(self, idx: int, line: str) -> bool:
        m = _AVAILABLE.match(line)
        if m:
            self.out.available = int(m.group(1))
            self.out.lines["available"] = idx
        return m is not None

    def node_line(self, idx: int, line: str) -> bool:
        """``node N cpus:``, ``node N size:``, ``node N free:``."""
        m = _NODE.match(line)
        if not m:
            return False
        node_id, what, value = int(m.group(1)), m.group(2), m.group(3).strip()
        node = self.out.nodes.setdefault(node_id, NumaNode(node=node_id))
        if what == "cpus":
            node.cpus = _ids(value)
        elif what == "size":
            node.size_mb = _mb(value)
        else:
            node.free_mb = _mb(value)
        self.out.lines[f"node.{node_id}.{what}"] = idx
        return True

    def distances_title(self, idx: int, line: str) -> bool:
        if not line.strip().startswith("node distances"):
            return False
        self.in_distances = True
        self.out.lines["distances"] = idx
        return True

    def distance_line(self, idx: int, line: str) -> bool:
        """A line of the distance table, which a ``node 0 1 ...`` header starts
        when its "node distances:" title was not pasted."""
        out = self.out
        if not self.in_distances and not out.distances and _DIST_HEADER.match(line):
            self.in_distances = True  # the table pasted without its "node distances:" line
            out.lines.setdefault("distances", idx)
        return self.in_distances and self.table_line(line)

    def table_line(self, line: str) -> bool:
        """The distance table's header or a row; False for a line after the table (which ends it)."""
        out = self.out
        if _DIST_HEADER.match(line):
            out.distance_nodes = [int(tok) for tok in line.split()[1:]]
            return True
        m = _DIST_ROW.match(line)
        if m:
            out.distances.append([int(tok) for tok in m.group(2).split()])
            return True
        self.in_distances = False
        return False


@register(
    "numactl_hardware",
    commands=(r"^numactl\s+(-H|--hardware)",),
    paths=(r"sos_commands/numa/numactl_--hardware", r"numactl_-H"),
    prose_lines=(r"node distances:",),
    detect=_detect,
    priority=10,
)
def parse_numactl_hardware(text: str) -> NumactlHardware:
    """Parse ``numactl -H`` (optionally followed by ``numactl --show``).

    Sample input::

        available: 2 nodes (0-1)
        node 0 cpus: 0 2 4 6 8 10
        node 0 size: 32722 MB
        node 0 free: 24803 MB
        node distances:
        node   0   1
          0:  10  20
    """
    reader = _Hardware()
    for idx, line in enumerate(text.splitlines(), start=1):
        reader.read(idx, line)
    out = reader.out
    if out.available is None and not out.nodes and not out.distances:
        if "No NUMA available" in text:
            raise ParseError("numactl reports no NUMA support on this system")
        raise ParseError("not numactl --hardware output (no 'available:' line and no nodes)")
    missing = _incomplete(out)
    if missing:
        # what is complete (nodes, sizes) is kept; the error says what is not
        raise ParseError("; ".join(missing), partial=out)
    return out


# ``numactl --show``: "policy: default", "preferred node: current",
# "physcpubind: 0 1 2", "cpubind: 0 1", "nodebind: 0 1", "membind: 0 1"
_SHOW = re.compile(r"^\s*(policy|preferred node|physcpubind|cpubind|nodebind|membind):[ \t]*(.*?)\s*$")
_SHOW_LISTS = ("physcpubind", "cpubind", "nodebind", "membind")


def _detect_show(head: str) -> bool:
    if "physcpubind:" not in head:
        return False
    keys = {m.group(1) for m in map(_SHOW.match, head.splitlines()[:12]) if m}
    return len(keys) >= 3 and "policy" in keys


def _set_show_field(out: NumaPolicy, key: str, value: str) -> None:
    """A ``*bind:`` list of ids, the policy's name or the preferred node."""
    if key in _SHOW_LISTS:
        setattr(out, key, _ids(value))
    elif key == "policy":
        out.policy = value.split()[0] if value else None
    else:
        out.preferred_node = value or None


@register(
    "numactl_show",
    commands=(r"^numactl\s+(-s|--show)\s*$",),
    detect=_detect_show,
    priority=10,
)
def parse_numactl_show(text: str) -> NumaPolicy:
    """Parse ``numactl --show`` (the policy and binding of the shell that ran it).

    Sample input::

        policy: default
        preferred node: current
        physcpubind: 0 1 2 3 4 5 6 7
        cpubind: 0 1
        nodebind: 0 1
        membind: 0 1

    ``lines`` keys: the field names (``preferred_node`` for "preferred node").
    """
    out = NumaPolicy()
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _SHOW.match(line)
        if not m:
            continue
        key, value = m.group(1).replace(" ", "_"), m.group(2)
        _set_show_field(out, key, value)
        out.lines[key] = idx
    if not out.lines:
        raise ParseError("not numactl --show output (no 'policy:' or '*bind:' line)")
    return out

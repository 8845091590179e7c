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

from collectors.facts import Numastat, ParseError
from collectors.parsers import register

_NUMBER = re.compile(r"^-?\d{1,20}(\.\d{1,6})?$")
_KV = re.compile(r"^\s*([a-z_]{3,40})\s+(\d{1,20})\s*$")
NUMASTAT_COUNTERS = {"numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node"}


def _num(token: str) -> float | None:
    return float(token) if _NUMBER.match(token) else None


def _header_nodes(line: str) -> list[int] | None:
    """Node ids of a table header (``node0 node1`` or ``Node 0 Node 1 Total``)."""
    tokens = line.split()
    if not tokens:
        return None
    if all(re.fullmatch(r"node\d{1,6}", t) for t in tokens):
        return [int(t[4:]) for t in tokens]
    found = re.findall(r"\bNode (\d{1,6})\b", line)
    rest = re.sub(r"\bNode \d{1,6}\b", "", line).split()
    if found and all(t == "Total" for t in rest):
        return [int(n) for n in found]
    return None


def _parse(text: str, node: int | None) -> Numastat:
    if not isinstance(text, str):
        raise ParseError("numastat: not text")
    out = Numastat()
    header: list[int] | None = None
    kv_seen = False
    for idx, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if not stripped or set(stripped) <= set("- "):
            continue
        if "(in MBs)" in stripped:
            out.unit = "MB"
            header = None
            continue
        nodes = _header_nodes(line)
        if nodes is not None:
            header = nodes
            out.lines.setdefault("header", idx)
            for n in nodes:
                out.nodes.setdefault(n, {})
            continue
        tokens = stripped.split()
        if header is not None and len(tokens) >= len(header) + 1:
            values = [_num(t) for t in tokens[1 : len(header) + 1]]
            if all(v is not None for v in values):
                name = tokens[0]
                if name.lower() in NUMASTAT_COUNTERS:
                    name = name.lower()
                for n, v in zip(header, values, strict=True):
                    out.nodes[n][name] = v
                out.lines[name] = idx
                continue
        m = _KV.match(line)
        if m and header is None and m.group(1) in NUMASTAT_COUNTERS:
            target = 0 if node is None else node
            out.nodes.setdefault(target, {})[m.group(1)] = float(int(m.group(2)))
            out.lines[m.group(1)] = idx
            kv_seen = True
    if not any(out.nodes.values()):
        raise ParseError("no numastat counters found")
    if kv_seen:
        out.unit = "pages"
    return out


def _detect(head: str) -> bool:
    if re.search(r"^Node\s+\d+,\s*zone\s", head, re.M):
        return False  # /proc/zoneinfo repeats numa_hit/numa_miss in its per-node stats
    if re.search(r"^\s*numa_hit\s+\d", head, re.M) and re.search(r"^\s*numa_miss\s+\d", head, re.M):
        return True
    return "Per-node numastat info" in head or "Per-node system memory usage" in head


@register(
    "numastat",
    commands=(r"^numastat(\s|$)",),
    paths=(r"^(?!.*node\d+/numastat$).*numastat(_-?\w+)?(\.txt)?$",),
    detect=_detect,
    priority=10,
)
def parse_numastat(text: str, *, node: int | None = None) -> Numastat:
    """Parse any numastat form; ``node`` names the node of a sysfs counters file.

    Sample input (default table; ``-m``/``-n`` and sysfs forms in the module docstring)::

                       node0       node1
        numa_hit    40995736    22924791
        numa_miss   53540664    10471137
    """
    return _parse(text, node)


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
    return _parse(text, node)

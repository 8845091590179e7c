"""``/sys/devices/system/node/nodeN/meminfo`` -> :class:`NodeMeminfo`.

Sample input (one or several nodes in one text, e.g. ``cat node*/meminfo``)::

    Node 1 MemTotal:      402653184 kB
    Node 1 MemFree:      342521148 kB
    Node 1 MemUsed:      60132036 kB
    Node 1 FilePages:     984720 kB
    Node 1 HugePages_Total: 0

Values are kB except ``HugePages_*`` (page counts), keys as printed. Other
lines (shell prompts, ``cat`` commands) are ignored. Any subset of the lines
parses (``grep -i huge /sys/devices/system/node/node*/meminfo``), with or
without grep's file-name prefix::

    /sys/devices/system/node/node0/meminfo:Node 0 HugePages_Total:     0

``lines`` keys: ``N.Key`` (e.g. ``1.MemTotal``).
"""

from __future__ import annotations

import re

from collectors.facts import NodeMeminfo, ParseError
from collectors.parsers import register

_LINE = re.compile(
    r"^\s*(?:\S{0,200}meminfo:)?Node\s+(\d{1,6})\s+([A-Za-z][\w()]{0,40}):\s*(\d{1,20})(?:\s*kB)?\s*$"
)
_DETECT = re.compile(
    r"^[ \t]*(?:\S{0,200}meminfo:)?Node[ \t]+\d{1,6}[ \t]+[A-Za-z][\w()]{0,40}:"
    r"[ \t]*\d{1,20}(?:[ \t]*kB)?[ \t]*$",
    re.M,
)


def _detect(head: str) -> bool:
    return "Node" in head and _DETECT.search(head) is not None


@register(
    "node_meminfo",
    # cat/grep of node0/meminfo, node*/meminfo, node{0,1}/meminfo, from /sys/... or after cd
    commands=(r"(^|[\s|;<])(/sys/devices/system/node/)?node[^/\s]{0,40}/meminfo\b",),
    paths=(r"node/node\d+/meminfo$",),
    detect=_detect,
    priority=20,
)
def parse_node_meminfo(text: str) -> NodeMeminfo:
    """Parse per-node meminfo lines, one or several nodes.

    Sample input::

        Node 1 MemTotal:      402653184 kB
        Node 1 MemFree:      342521148 kB
        Node 1 MemUsed:      60132036 kB
    """
    out = NodeMeminfo()
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line)
        if not m:
            continue
        node, key, value = int(m.group(1)), m.group(2), int(m.group(3))
        out.nodes.setdefault(node, {})[key] = value
        out.lines[f"{node}.{key}"] = idx
    if not out.nodes:
        raise ParseError("no 'Node N Key: value' lines found")
    return out

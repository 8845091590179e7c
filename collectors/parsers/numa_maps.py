"""``/proc/<pid>/numa_maps`` summarised per node -> :class:`ProcessNumaUsage`.

Sample input (one line per mapping: address, policy, then ``key=value`` fields)::

    55d1c7a00000 default file=/usr/bin/cat mapped=6 active=0 N0=6 kernelpagesize_kB=4
    7f2b6c000000 interleave:0-1 anon=262144 dirty=262144 N0=131072 N1=131072 kernelpagesize_kB=4
    7f2b80000000 bind:1 anon=512 dirty=512 N1=512 kernelpagesize_kB=2048

Each ``N<node>=<pages>`` counts pages of that mapping on the node; pages are
``kernelpagesize_kB`` each (4 when absent), so huge-page mappings weigh right.
The result is one :class:`ProcessNuma` (``tool="numa_maps"``) with MiB per node,
the total, and ``categories`` holding MiB per node for each memory policy seen
(``default``, ``interleave``, ``bind``, ``prefer``, ``local``) plus ``huge``
(mappings whose page size is over 4 kB). The file does not name its process:
``pid`` is None unless the text is ``grep -H``/``head`` output naming
``/proc/<pid>/numa_maps``.
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, ProcessNuma, ProcessNumaUsage
from collectors.parsers import register

_ROW = re.compile(r"^(?:\S{0,200}numa_maps:)?([0-9a-f]{6,16})\s+([a-z]{3,12})(?::\S{0,200})?\s+(.*)$")
_NODE = re.compile(r"(?<!\S)N(\d{1,5})=(\d{1,18})(?!\S)")
_PAGE = re.compile(r"kernelpagesize_kB=(\d{1,9})")
_PID = re.compile(r"/proc/(\d{1,10})/numa_maps")


def _detect(head: str) -> bool:
    if "=" not in head or not any(
        p in head for p in ("default", "interleave", "bind", "prefer", "local", "weighted")
    ):
        return False  # a policy word and a "N0=" or "kernelpagesize_kB=" count
    return (
        re.search(
            r"^(?:\S{0,200}numa_maps:)?[0-9a-f]{6,16}[ \t]+(?:default|interleave|bind|prefer|preferred|"
            r"local|weighted)\S{0,200}[ \t][^\n]*(?:N\d{1,5}=\d|kernelpagesize_kB=)",
            head,
            re.M,
        )
        is not None
    )


@register(
    "numa_maps",
    commands=(r"/proc/[^/]{1,100}/numa_maps\b",),
    paths=(r"(^|/)proc/\d+/numa_maps$", r"(^|/)numa_maps(\.txt)?$"),
    detect=_detect,
    priority=10,
)
def parse_numa_maps(text: str) -> ProcessNumaUsage:
    """Sum a process's ``numa_maps`` per node (MiB).

    Sample input::

        7f2b6c000000 interleave:0-1 anon=262144 dirty=262144 N0=131072 N1=131072 kernelpagesize_kB=4
    """
    kb: dict[int, int] = {}
    categories: dict[str, dict[int, float]] = {}
    first: int | None = None
    pid: int | None = None
    rows = 0
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _ROW.match(line.strip())
        if not m:
            continue
        rows += 1
        first = first or idx
        if pid is None:
            p = _PID.search(line)
            pid = int(p.group(1)) if p else None
        _add_mapping(kb, categories, m.group(2), m.group(3))
    if not rows:
        raise ParseError("no numa_maps lines (address policy N<node>=<pages> ...) found")
    return ProcessNumaUsage(processes=[_process(pid, first, kb, categories)])


def _process(
    pid: int | None, first: int | None, kb: dict[int, int], categories: dict[str, dict[int, float]]
) -> ProcessNuma:
    """The process's MiB per node, in all and per category, as numastat -p gives them."""
    return ProcessNuma(
        pid=pid,
        node_mb={n: round(v / 1024, 2) for n, v in sorted(kb.items())},
        total_mb=round(sum(kb.values()) / 1024, 2),
        categories={c: {n: round(v, 2) for n, v in sorted(per.items())} for c, per in categories.items()},
        tool="numa_maps",
        line=first,
    )


def _add_mapping(
    kb: dict[int, int], categories: dict[str, dict[int, float]], policy: str, fields: str
) -> None:
    """One mapping's pages per node, in kB per node and in MiB per node under its
    policy (and ``huge`` for huge pages)."""
    page = _PAGE.search(fields)
    page_kb = int(page.group(1)) if page else 4
    policy = "prefer" if policy == "preferred" else policy
    for node_s, pages_s in _NODE.findall(fields):
        node, size = int(node_s), int(pages_s) * page_kb
        kb[node] = kb.get(node, 0) + size
        for cat in (policy, "huge") if page_kb > 4 else (policy,):
            per = categories.setdefault(cat, {})
            per[node] = per.get(node, 0.0) + size / 1024

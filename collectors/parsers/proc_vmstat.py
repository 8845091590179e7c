"""``/proc/vmstat`` (whole, sorted, or some of its lines) -> :class:`ProcVmstat`.

Sample input (``grep -E 'allocstall|pgscan|compact_' /proc/vmstat``, Linux 5.x)::

    allocstall_dma 0
    allocstall_normal 1532
    pgscan_kswapd 41886563
    pgscan_direct 802341
    compact_stall 4310
    compact_fail 3907

Read with jc's ``proc_vmstat`` (``name value`` per line, every value an
integer); a line jc would not take (a prompt's echo, prose) ends the
artifact's reading there and is reported. Older kernels count per zone
(``allocstall`` alone before 4.8, ``pgscan_direct_normal`` ... before 4.8);
:func:`collectors.derived.memory` sums them. ``lines`` keys: the counter
names.
"""

from __future__ import annotations

import re

import jc

from collectors.facts import ParseError, ProcVmstat
from collectors.parsers import UnreadLines, register

_ROW = re.compile(r"^([a-z][a-z0-9_]{1,63})[ \t]+(-?\d{1,20})[ \t]*$")
# counters every /proc/vmstat has since 2.6; a text holding two of them is one
_KNOWN = re.compile(
    r"^(nr_free_pages|nr_dirty|pgpgin|pgpgout|pswpin|pswpout|pgfault|pgmajfault|allocstall(?:_\w+)?|"
    r"pgscan_(?:kswapd|direct)\w*|compact_stall|compact_fail)[ \t]+\d+[ \t]*$",
    re.M,
)


def _detect(head: str) -> bool:
    return len(_KNOWN.findall(head)) >= 2 and "/proc/vmstat" not in head.split("\n", 1)[0]


@register(
    "proc_vmstat",
    commands=(r"/proc/vmstat\b",),
    paths=(r"(^|/)proc/vmstat$",),
    detect=_detect,
    needles=("nr_", "pg", "pswp", "allocstall", "compact_"),  # (each name of _KNOWN holds one)
    priority=5,
)
def parse_proc_vmstat(text: str) -> ProcVmstat:
    """Parse ``/proc/vmstat`` or a grep of it (see the module docstring).

    Sample input::

        allocstall 3281736
        compact_stall 6559780
        compact_fail 6550462
    """
    out = ProcVmstat()
    unread = UnreadLines("/proc/vmstat: line not in 'name value' form")
    rows: list[str] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        m = _ROW.match(line.strip())
        if m is None:
            unread.add(number, line)
            continue
        out.lines.setdefault(m.group(1), number)
        rows.append(f"{m.group(1)} {m.group(2)}")
    if not rows:
        raise ParseError("no 'counter value' lines of /proc/vmstat found")
    parsed = jc.parse("proc_vmstat", "\n".join(rows), quiet=True)
    if not isinstance(parsed, dict):
        raise ParseError("/proc/vmstat: jc returned no mapping")
    out.values = {str(k): int(v) for k, v in parsed.items() if isinstance(v, int)}
    out.errors = unread.errors()
    return out

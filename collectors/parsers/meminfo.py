"""``/proc/meminfo`` -> :class:`Meminfo`.

Sample input::

    MemTotal:        8009912 kB
    MemFree:          538760 kB
    HugePages_Total:       0
    HugePages_Free:        0
    Hugepagesize:       2048 kB

Values are kB, except ``HugePages_*`` which are page counts, keys as printed.
Anything else in the text is skipped, so pt-summary's ``memory`` file (``free -b``
output followed by /proc/meminfo) parses too. ``lines`` keys: the meminfo keys.
"""

from __future__ import annotations

import re

from collectors.facts import Meminfo, ParseError
from collectors.parsers import register

_LINE = re.compile(r"^([A-Za-z][\w()]{0,40}):\s*(\d{1,20})(?:\s*kB)?\s*$")


def _detect(head: str) -> bool:
    return re.search(r"^MemTotal:\s+\d+\s*kB", head, re.M) is not None


@register(
    "meminfo",
    commands=(r"cat\s+/proc/meminfo",),
    paths=(r"proc/meminfo$",),
    detect=_detect,
    priority=10,
)
def parse_meminfo(text: str) -> Meminfo:
    """Parse ``/proc/meminfo``.

    Sample input::

        MemTotal:        8009912 kB
        MemFree:          538760 kB
        HugePages_Total:       0
    """
    if not isinstance(text, str):
        raise ParseError("meminfo: not text")
    out = Meminfo()
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _LINE.match(line.strip())
        if not m:
            continue
        key = m.group(1)
        if key in out.values:
            continue
        out.values[key] = int(m.group(2))
        out.lines[key] = idx
    if "MemTotal" not in out.values:
        raise ParseError("no MemTotal line: not /proc/meminfo")
    return out

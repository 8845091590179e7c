"""``/proc/zoneinfo`` -> :class:`Zoneinfo` (free pages and watermarks per node and zone).

Sample input (per-zone counters and the per-node stats block trimmed)::

    Node 0, zone   Normal
      pages free     3840
            boost    0
            min      52
            low      65
            high     78
            spanned  4095

All values are pages. Zones that print no ``pages free`` (empty zones on some
kernels) are kept with ``None`` values. ``lines`` keys: ``N.Zone`` -> the
zone's header line.
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, Zoneinfo, ZoneWatermarks
from collectors.parsers import register

_ZONE = re.compile(r"^\s*Node\s+(\d{1,6}),\s*zone\s+(\S{1,40})\s*$")
_FREE = re.compile(r"^\s*pages free\s+(\d{1,20})\s*$")
_MARK = re.compile(r"^\s*(min|low|high)\s+(\d{1,20})\s*$")


def _detect(head: str) -> bool:
    return "zone" in head and re.search(r"^Node\s+\d+,\s*zone\s+\S+", head, re.M) is not None


def _read_watermark(zone: ZoneWatermarks, line: str) -> bool:
    """A ``min``/``low``/``high`` line under ``pages free`` (the first of each
    wins); whether the pages block goes on (an indented line does)."""
    m = _MARK.match(line)
    if m is None:
        return line.startswith("        ")
    if getattr(zone, m.group(1)) is None:
        setattr(zone, m.group(1), int(m.group(2)))
    return True


@register(
    "zoneinfo",
    commands=(r"cat\s+/proc/zoneinfo",),
    paths=(r"proc/zoneinfo$",),
    prose_lines=(r"per-node stats", r"pagesets"),
    detect=_detect,
    priority=20,
)
def parse_zoneinfo(text: str) -> Zoneinfo:
    """Parse ``/proc/zoneinfo`` watermarks.

    Sample input::

        Node 0, zone   Normal
          pages free     3840
                min      52
                low      65
                high     78
    """
    out = Zoneinfo()
    zone: ZoneWatermarks | None = None
    in_pages = False
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _ZONE.match(line)
        if m:
            zone = ZoneWatermarks(node=int(m.group(1)), zone=m.group(2))
            out.zones.append(zone)
            out.lines[f"{zone.node}.{zone.zone}"] = idx
            in_pages = False
            continue
        if zone is None:
            continue
        m = _FREE.match(line)
        if m:
            zone.free_pages = int(m.group(1))
            in_pages = True
            continue
        if in_pages:
            in_pages = _read_watermark(zone, line)
    if not out.zones:
        raise ParseError("no 'Node N, zone X' headers: not /proc/zoneinfo")
    return out

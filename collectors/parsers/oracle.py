"""Oracle Database: the alert log's "Large Pages Information" block and the
instance parameters (the alert log's "System parameters with non-default
values", or SQL*Plus ``show parameter``) -> :class:`ServiceLog` (kind
``oracle``).

Sample input (an 11.2.0.3 alert log at start-up, as Tanel Poder published it)::

    Starting ORACLE instance (normal)
    ****************** Large Pages Information *****************
    Total Shared Global Region in Large Pages = 1024 MB (85%)
    Large Pages used by this instance: 512 (1024 MB)
    Large Pages unused system wide = 0 (0 KB) (alloc incr 16 MB)
    Large Pages configured system wide = 512 (1024 MB)
    Large Page size = 2048 KB
      Total Shared Global Region size is 1202 MB. For optimal performance,

``settings`` keys: ``sga_in_large_pages_pct``, ``sga_in_large_pages`` (the
size as printed), ``sga_size`` ("1202 MB"), ``large_pages_configured``,
``large_pages_unused`` (counts), ``large_page_size``, ``memlock_limit``, and
every instance parameter by its lower-case name (``use_large_pages``,
``memory_target``, ``sga_target`` ...), values as printed without quotes.

>>> log = parse_oracle("Total Shared Global Region in Large Pages = 0 KB (0%)\\n"
...     "  Total Shared Global Region size is 3074 MB. For optimal performance,\\n")
>>> log.kind, log.settings["sga_in_large_pages_pct"], log.settings["sga_size"]
('oracle', '0', '3074 MB')
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, ServiceLog
from collectors.parsers import register

_SIZE = r"\d+(?:\.\d+)?\s?[KMGT]?B"
# (setting, pattern with group "v")
_LARGE_PAGES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "sga_in_large_pages",
        re.compile(
            rf"Total (?:Shared Global Region|System Global Area) in [Ll]arge [Pp]ages = (?P<v>{_SIZE}) "
            r"\((?P<pct>\d{1,3})%\)"
        ),
    ),
    ("sga_size", re.compile(rf"Total (?:Shared Global Region|System Global Area) size is (?P<v>{_SIZE})")),
    ("large_pages_used", re.compile(r"Large [Pp]ages used by this instance: (?P<v>\d+)")),
    ("large_pages_unused", re.compile(r"Large [Pp]ages unused system wide = (?P<v>\d+)")),
    ("large_pages_configured", re.compile(r"Large [Pp]ages configured system wide = (?P<v>\d+)")),
    ("large_page_size", re.compile(rf"Large [Pp]age size = (?P<v>{_SIZE})")),
    ("memlock_limit", re.compile(r"memlock \(soft\) limit = (?P<v>UNLIMITED|\d+(?:\.\d+)?\s?[KMGT]?B)")),
    ("use_large_pages", re.compile(r"Parameter use_large_pages = (?P<v>\w+)")),
)
# an instance parameter: the alert log's "  memory_target            = 1536M", or a
# show parameter row "memory_target      big integer 0"
_PARAMETER = re.compile(r"^\s{1,8}(?P<name>[a-z][a-z0-9_]{2,40})\s+= (?P<value>\S.{0,200}?)\s*$")
_SHOW_PARAMETER = re.compile(
    r"^(?P<name>[a-z][a-z0-9_]{2,40})\s+(?:string|big integer|integer|boolean|number)"
    r"\s+(?P<value>\S.{0,200}?)?\s*$"
)
# parameters that say how the SGA is sized and paged
_MEMORY_PARAMETERS = frozenset(
    {
        "use_large_pages",
        "memory_target",
        "memory_max_target",
        "sga_target",
        "sga_max_size",
        "pga_aggregate_target",
    }
)


def _detect(head: str) -> bool:
    if "Large Pages Information" in head or _LARGE_PAGES[0][1].search(head):
        return True
    names = {m.group("name") for m in map(_SHOW_PARAMETER.match, head.splitlines()) if m}
    return len(names & _MEMORY_PARAMETERS) >= 2


def _parameter(line: str) -> tuple[str, str] | None:
    m = _PARAMETER.match(line) or _SHOW_PARAMETER.match(line)
    if m is None or (m["name"] not in _MEMORY_PARAMETERS and not m["name"].startswith(("sga_", "memory_"))):
        return None
    return m["name"], (m["value"] or "").strip().strip("\"'")


@register(
    "oracle_alert",
    commands=(
        r"(?i)\b(?:cat|tail|head|less|more|grep)\b.*\balert_\w+\.log\b",
        r"(?i)^show\s+parameter\b",
    ),
    paths=(r"(?:^|/)alert_\w+\.log$",),
    detect=_detect,
    priority=4,
)
def parse_oracle(text: str) -> ServiceLog:
    """Oracle's large-page report and memory parameters, each with its line."""
    if not isinstance(text, str):
        raise ParseError("Oracle alert log: not text")
    out = ServiceLog(kind="oracle")
    for idx, line in enumerate(text.splitlines(), start=1):
        for name, pattern in _LARGE_PAGES:
            m = pattern.search(line)
            if m is None:
                continue
            # the last start-up in the log is the instance as it runs now
            out.settings[name] = m["v"]
            out.lines[name] = idx
            if name == "sga_in_large_pages":
                out.settings["sga_in_large_pages_pct"] = m["pct"]
                out.lines["sga_in_large_pages_pct"] = idx
        parameter = _parameter(line)
        if parameter is not None:
            out.settings[parameter[0]] = parameter[1]
            out.lines[parameter[0]] = idx
    if not out.settings:
        raise ParseError("Oracle alert log: no large pages report or memory parameter")
    return out

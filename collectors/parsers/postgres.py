"""PostgreSQL settings -> :class:`ServiceLog` (kind ``postgresql``): ``SHOW
ALL`` as psql prints it (aligned or unaligned), a single ``SHOW name``, a
``SELECT name, setting, unit ... FROM pg_settings`` grid, and
``postgresql.conf``.

Sample input (``psql -c 'SHOW ALL'`` on PostgreSQL 15, descriptions cut)::

                      name                  |          setting           |  description
     ----------------------------------------+----------------------------+--------------
      huge_pages                             | try                        | Use of huge pa
      server_version                         | 15.20 (Debian 15.20-0+deb1 | Shows the serv
      shared_buffers                         | 128MB                      | Sets the numbe

``settings`` holds each value as printed (``128MB``, ``try``); a pg_settings
grid's ``setting`` in its ``unit`` (``16384`` of ``8kB``) is written back with
the unit (``16384*8kB``) so it reads like the others
(:func:`collectors.derived.database.pg_setting_bytes`). ``postgresql.conf``
lines that are commented out are left out: the server uses its default there.
``version`` is ``server_version``'s number; ``lines`` keys are the setting names
(and ``version``).

>>> pg = parse_pg_settings("shared_buffers = 16GB\\t\\t# min 128kB\\nhuge_pages = off\\n")
>>> pg.kind, pg.settings, pg.lines
('postgresql', {'shared_buffers': '16GB', 'huge_pages': 'off'}, {'shared_buffers': 1, 'huge_pages': 2})
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, ServiceLog
from collectors.parsers import register

# settings that tell a PostgreSQL output from any other "name | value" grid or
# "name = value" file
_KNOWN = frozenset(
    {
        "shared_buffers",
        "huge_pages",
        "huge_page_size",
        "max_connections",
        "effective_cache_size",
        "work_mem",
        "maintenance_work_mem",
        "wal_buffers",
        "server_version",
        "server_version_num",
        "shared_memory_size",
        "shared_memory_size_in_huge_pages",
        "shared_memory_type",
        "max_wal_size",
        "checkpoint_timeout",
        "random_page_cost",
        "wal_level",
        "autovacuum",
        "listen_addresses",
        "data_directory",
    }
)
_NAME = r"[a-z][a-z0-9_]{1,62}(?:\.[a-z][a-z0-9_]{1,62})?"
_ROW = re.compile(rf"^\s*(?P<name>{_NAME})\s*\|\s*(?P<value>[^|]*?)\s*(?:\|(?P<rest>.*))?$")
_CONF = re.compile(rf"^\s*(?P<name>{_NAME})\s*=\s*(?P<value>'(?:[^']|'')*'|[^#\s]*)\s*(?:#.*)?$")
_RULE = re.compile(r"^\s*-{3,}(?:\+-{3,})*\s*$")
_FOOTER = re.compile(r"^\s*\(\d+ rows?\)\s*$")
_VERSION = re.compile(r"^\s*(\d{1,3}(?:\.\d{1,3}){0,2})")


def _names(text: str) -> set[str]:
    return {m for m in re.findall(rf"^\s*({_NAME})\s*[|=]", text[:8192], re.M)} & _KNOWN


def _detect(head: str) -> bool:
    if len(_names(head)) >= 2:
        return True
    lines = [line for line in head.splitlines()[:4] if line.strip()]
    return len(lines) >= 3 and lines[0].strip() in _KNOWN and _RULE.match(lines[1]) is not None


def _single_show(lines: list[str], out: ServiceLog) -> bool:
    """``SHOW name``: the name as the header, a rule, the value."""
    rows = [(n, line) for n, line in enumerate(lines, start=1) if line.strip()]
    for i in range(len(rows) - 2):
        (_, head), (_, rule), (n, value) = rows[i], rows[i + 1], rows[i + 2]
        if _is_single_show(head, rule, value):
            out.settings.setdefault(head.strip(), value.strip())
            out.lines.setdefault(head.strip(), n)
    return bool(out.settings)


def _is_single_show(head: str, rule: str, value: str) -> bool:
    """Whether three lines are what ``SHOW name`` prints: a known name alone, a rule,
    a value (not a row count)."""
    return head.strip() in _KNOWN and bool(_RULE.match(rule)) and "|" not in head and not _FOOTER.match(value)


def _unit_column(lines: list[str]) -> int | None:
    """The index of the ``unit`` column of a pg_settings grid (None: no such header)."""
    for line in lines[:20]:
        cells = [c.strip() for c in line.split("|")]
        if cells[:2] == ["name", "setting"] and "unit" in cells:
            return cells.index("unit")
    return None


def _with_unit(value: str, rest: str | None, unit_at: int | None) -> str:
    if unit_at is None or rest is None or not value.lstrip("-").isdigit():
        return value
    cells = [c.strip() for c in rest.split("|")]
    unit = cells[unit_at - 2] if 0 <= unit_at - 2 < len(cells) else ""
    return f"{value}*{unit}" if unit else value


def _setting(line: str, unit_at: int | None) -> tuple[str, str] | None:
    """(name, value) of a row of ``SHOW ALL``/``pg_settings`` (with its unit) or
    of a ``name = 'value'`` line of postgresql.conf; None for any other line."""
    m = _ROW.match(line)
    if m is not None and m["name"] not in ("name",):
        return m["name"], _with_unit(m["value"], m["rest"], unit_at)
    m = _CONF.match(line)
    return None if m is None else (m["name"], _unquoted(m["value"]))


def _unquoted(value: str) -> str:
    """A postgresql.conf value without its single quotes (``''`` inside them is a quote)."""
    if value.startswith("'") and value.endswith("'") and len(value) >= 2:
        return value[1:-1].replace("''", "'")
    return value


@register(
    "pg_settings",
    commands=(
        r"(?i)^psql\b.*\bshow\s+(?:all|shared_buffers|huge_pages)\b",
        r"(?i)^psql\b.*\bfrom\s+pg_settings\b",
        r"(?i)^show\s+(?:all|shared_buffers|huge_pages)\s*;?\s*$",
        r"(?i)\b(?:cat|grep|egrep|more|less|head|tail)\b.*postgresql(?:\.auto)?\.conf\b",
    ),
    paths=(r"(?:^|/)postgresql(?:\.auto)?\.conf$", r"(?:^|/)pg_settings(?:\.txt)?$"),
    detect=_detect,
    needles=("|", "=", "---"),
    priority=4,
)
def parse_pg_settings(text: str) -> ServiceLog:
    """PostgreSQL settings, each as printed, with its line."""
    out = ServiceLog(kind="postgresql")
    lines = text.splitlines()
    unit_at = _unit_column(lines)
    for n, raw in enumerate(lines, start=1):
        setting = _setting(raw.replace("\r", ""), unit_at)
        if setting is not None:
            # the server applies the last occurrence of a setting in a file
            name, value = setting
            out.settings[name] = value
            out.lines[name] = n
    if not (set(out.settings) & _KNOWN):
        out.settings, out.lines = {}, {}
        if not _single_show(lines, out):
            raise ParseError("PostgreSQL settings: no known setting (shared_buffers, huge_pages ...)")
    version = _VERSION.match(out.settings.get("server_version", ""))
    if version:
        out.version = version.group(1)
        out.lines["version"] = out.lines["server_version"]
    return out

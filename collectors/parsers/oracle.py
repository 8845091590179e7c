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
from collectors.parsers import UnreadLines, register

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


def _memory_parameter(name: str, value: str | None) -> tuple[str, str] | None:
    """(name, value without quotes) of a parameter that sizes or pages the SGA."""
    if name not in _MEMORY_PARAMETERS and not name.startswith(("sga_", "memory_")):
        return None
    return name, (value or "").strip().strip("\"'")


def _parameter(line: str) -> tuple[str, str] | None:
    m = _PARAMETER.match(line) or _SHOW_PARAMETER.match(line)
    return None if m is None else _memory_parameter(m["name"], m["value"])


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


# a parameter file line: "memory_target=3G", "*.sga_target=1G" (every instance),
# "orcl1.instance_number=1" (one instance), "processes = 150"; an "=" in a value
# only inside quotes ("sga_max_size=sga_target=1970MB" is a note, not a file)
_PFILE_LINE = re.compile(
    r"^[ \t]*(?:(?P<sid>\*|[A-Za-z][\w$#]{0,30})\.)?(?P<name>_{0,2}[A-Za-z][\w$#]{1,60})[ \t]*=[ \t]*"
    r"(?P<value>(?:(?:'[^'\n]*'|\"[^\"\n]*\"|[^'\"=\s])(?:'[^'\n]*'|\"[^\"\n]*\"|[^'\"=\n])*)?)$"
)
# parameters only an Oracle instance has (my.cnf, postgresql.conf and sysctl.conf
# share none of them): a block of name=value lines is a parameter file when it
# names two of them
_PFILE_ONLY = frozenset(
    {
        "db_name",
        "db_unique_name",
        "db_block_size",
        "db_domain",
        "db_cache_size",
        "control_files",
        "compatible",
        "undo_tablespace",
        "undo_management",
        "diagnostic_dest",
        "audit_file_dest",
        "background_dump_dest",
        "user_dump_dest",
        "core_dump_dest",
        "db_recovery_file_dest",
        "db_recovery_file_dest_size",
        "remote_login_passwordfile",
        "log_archive_dest_1",
        "log_archive_format",
        "instance_number",
        "cluster_database",
        "open_cursors",
        "dispatchers",
        "shared_pool_size",
        *_MEMORY_PARAMETERS,
    }
)
_PFILE_MIN_LINES = 3


def _pfile_settings(text: str) -> list[tuple[int, re.Match[str] | None]]:
    """(line number, the parameter or None) of every line but blanks and ``#`` comments."""
    return [
        (idx, _PFILE_LINE.match(line))
        for idx, line in enumerate(text.splitlines(), start=1)
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _pfile_looking(head: str) -> bool:
    """Only parameter lines, at least three, two of them Oracle's own."""
    settings = _pfile_settings(head)
    if len(settings) < _PFILE_MIN_LINES or any(m is None for _, m in settings):
        return False
    return len({m["name"].lower() for _, m in settings if m} & _PFILE_ONLY) >= 2


def _one_instance(m: re.Match[str]) -> bool:
    return m["sid"] not in (None, "*")


@register(
    "oracle_pfile",
    commands=(r"(?i)\b(?:cat|more|less|head|tail|grep|vi|vim|strings)\b.*\b(?:init|spfile)\w*\.ora\b",),
    paths=(r"(?:^|/)(?:init|spfile)\w*\.ora$",),
    detect=_pfile_looking,
    needles=("=",),
    priority=5,
)
def parse_oracle_pfile(text: str) -> ServiceLog:
    """An Oracle instance parameter file (``init<SID>.ora``, ``create pfile``'s
    output, ``strings spfile<SID>.ora``) -> its memory parameters, kept as
    :func:`parse_oracle` keeps them::

        *.db_name='ORCL'
        *.memory_target=3G
        orcl.__sga_target=1258291200
        processes = 150

    A ``SID.`` setting (one instance) wins over a ``*.`` or unprefixed one (every
    instance that reads the file); the ``__name`` component sizes the instance
    writes back are not parameters.

    >>> parse_oracle_pfile("db_name='ORCL'\\nmemory_target=3G\\nprocesses = 150\\n").settings
    {'memory_target': '3G'}
    """
    out = ServiceLog(kind="oracle")
    unread = UnreadLines("not a NAME=VALUE parameter")
    lines = text.splitlines()
    settings = _pfile_settings(text)
    if not any(m for _, m in settings):
        raise ParseError("Oracle parameter file: no NAME=VALUE line")
    per_instance: set[str] = set()
    for idx, m in settings:
        if m is None:
            unread.add(idx, lines[idx - 1])
        else:
            _take_setting(out, per_instance, m, idx)
    out.errors = unread.errors()
    return out


def _take_setting(out: ServiceLog, per_instance: set[str], m: re.Match[str], idx: int) -> None:
    """A memory parameter's value into ``out``, unless it is set for every
    instance and an instance's own (``SID.``) setting of it came first."""
    parameter = _memory_parameter(m["name"].lower(), m["value"])
    if parameter is None or (parameter[0] in per_instance and not _one_instance(m)):
        return
    name, value = parameter
    out.settings[name] = value
    out.lines[name] = idx
    if _one_instance(m):
        per_instance.add(name)

"""Redis and MongoDB start-up logs -> :class:`ServiceLog` (the store, its
version and the warnings it printed about the host's kernel settings).

Both stores read the host's settings themselves when they start and warn about
the ones that hurt them, so their log is evidence of those settings even when
no ``sysctl`` or ``/sys`` output was collected. Sample input (a Redis 3.0 log,
lines cut at 100 characters here)::

    10493:M 06 Jun 17:57:35.569 # WARNING: The TCP backlog setting of 511 cannot be enforced because /p
    10493:M 06 Jun 17:57:35.569 # Server started, Redis version 3.0.7
    10493:M 06 Jun 17:57:35.569 # WARNING overcommit_memory is set to 0! Background save may fail under

and MongoDB's, as its 3.x text log or the shell's "startup warnings" summary
prints them (4.4+ JSON logs carry the same message texts)::

    2015-04-17T16:48:45.059+0000 I CONTROL  [initandlisten] ** WARNING: /sys/kernel/mm/transparent_hu
       2023-07-17T12:32:55.659+00:00: /sys/kernel/mm/transparent_hugepage/enabled is 'always'. We sugg

What each warning means (``ServiceWarning.code``): ``thp_enabled`` (Redis
before 6.0.8 warns whenever THP is not ``[never]``, later versions only on
``always``, and those name ``madvise`` in their advice: such a warning's value
is ``always``; MongoDB prints the value), ``thp_defrag``, ``overcommit_memory``,
``somaxconn`` (the value Redis found, lower than its backlog), ``numa_interleave``
(mongod is not interleaved on a multi-node host: MongoDB read its own
``/proc/self/numa_maps``), ``zone_reclaim``, ``anon_huge_pages`` (Redis
``LATENCY DOCTOR``: the process uses transparent huge pages), ``thp_sysfs``
(MongoDB 8.0 asks to change a THP file: it wants THP ``always``),
``max_map_count`` (MongoDB 5.0+: vm.max_map_count below twice its connection
limit; the JSON log prints ``currentValue``).
``lines`` keys: ``version``.

>>> log = parse_service_log("1:M 09 Nov 2024 09:57:17.203 # WARNING: The TCP backlog setting of 511 "
...     "cannot be enforced because /proc/sys/net/core/somaxconn is set to the lower value of 128.")
>>> log.kind, [(w.code, w.value) for w in log.warnings]
('redis', [('somaxconn', '128')])
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, ServiceLog, ServiceWarning
from collectors.parsers import register

# (kind, code, pattern; group "value" is the setting when the store prints it)
_WARNINGS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    # "you" before Redis 7, "You" from it; "WARNING:" as guides and wrappers quote it
    (
        "redis",
        "thp_enabled",
        re.compile(r"WARNING:? [Yy]ou have Transparent Huge Pages \(THP\) support enabled"),
    ),
    ("redis", "overcommit_memory", re.compile(r"WARNING:? overcommit_memory is set to (?P<value>\d)!")),
    ("redis", "overcommit_memory", re.compile(r"WARNING:? Memory overcommit must be enabled!")),
    # "TCP Backlog" as posts retype it
    (
        "redis",
        "somaxconn",
        re.compile(
            r"TCP [Bb]acklog setting of \d{1,9} cannot be enforced because "
            r"/proc/sys/net/core/somaxconn is set to "
            r"the lower value of (?P<value>\d{1,9})"
        ),
    ),
    ("redis", "anon_huge_pages", re.compile(r"non zero amount of anonymous huge pages used by your process")),
    ("mongodb", "thp_enabled", re.compile(r"transparent_hugepage/enabled is '(?P<value>\w+)'")),
    ("mongodb", "thp_defrag", re.compile(r"transparent_hugepage/defrag is '(?P<value>\w+)'")),
    ("mongodb", "numa_interleave", re.compile(r"You are running on a NUMA machine")),
    ("mongodb", "zone_reclaim", re.compile(r"/proc/sys/vm/zone_reclaim_mode is (?P<value>\d{1,3})")),
    ("mongodb", "overcommit_memory", re.compile(r"/proc/sys/vm/overcommit_memory is (?P<value>\d)")),
    (
        "mongodb",
        "max_map_count",
        re.compile(r"vm\.max_map_count is too low(?:.{0,20}?\"currentValue\":(?P<value>\d{1,12}))?"),
    ),
    (
        "mongodb",
        "thp_sysfs",
        re.compile(
            r"we suggest changing the contents of the following sysfsFile"
            r"(?:.*?\"currentValue\":\"(?P<value>\w+))?"
        ),
    ),
)
_VERSIONS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("redis", re.compile(r"Redis version[= ](?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})")),
    ("redis", re.compile(r"\bRedis (?P<v>\d{1,3}\.\d{1,3}\.\d{1,3}) \(")),
    ("redis", re.compile(r"^redis_version:(?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})", re.M)),
    ("mongodb", re.compile(r"\bdb version v(?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})")),
    ("mongodb", re.compile(r"\"buildInfo\":\{\"version\":\"(?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})")),
    ("mongodb", re.compile(r"MongoDB server version: (?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})")),
    ("mongodb", re.compile(r"Using MongoDB:\s+(?P<v>\d{1,3}\.\d{1,3}\.\d{1,3})")),
)
# Redis >= 6.0.8 warns only when THP is [always], and says so: its advice is
# 'echo madvise' and it counts 'madvise' as disabled (before, 'echo never'); a post retypes the
# quotes as typographic ones
_REDIS_THP_ALWAYS = re.compile(r"echo madvise >|set to ['‘’]madvise['‘’] or ['‘’]never['‘’]")
# a Redis background save: "Saving..." then "Background saving started by pid N"; the gap is the fork
_CLOCK = r"(?P<h>\d\d):(?P<m>\d\d):(?P<s>\d\d)\.(?P<ms>\d{3})"
_SAVING = re.compile(_CLOCK + r" \* .{0,80}\bSaving\.\.")
_SAVE_STARTED = re.compile(_CLOCK + r" \* Background saving started by pid \S+")
# a literal of each of _WARNINGS (none holding a space, which _detect may have
# made of a line break) and of _SAVE_STARTED: _detect fires on none without one
_DETECT_NEEDLES = (
    "Transparent",
    "overcommit",
    "somaxconn",
    "anonymous",
    "transparent_hugepage/",
    "NUMA",
    "zone_reclaim_mode",
    "max_map_count",
    "sysfsFile",
    "Background saving",
)
_DAY_S = 86400.0
_MONGO_HINT = re.compile(r"\[initandlisten\]|\"ctx\":\"initandlisten\"|startup warnings|mongod|MongoDB", re.I)
_REDIS_HINT = re.compile(r"Redis|redis-server|\d{1,9}:[MCSX] \d\d \w{3}")


def _detect(head: str) -> bool:
    # a warning wrapped onto the next line reads as one line
    flat = head.replace("\n", " ")
    return any(pattern.search(flat) for _kind, _code, pattern in _WARNINGS) or (
        _SAVE_STARTED.search(head) is not None
    )


def _implied_value(kind: str, code: str, line: str) -> str | None:
    """The setting a warning implies without printing it: Redis >= 6.0.8's THP
    warning (its advice is ``echo madvise``) is printed only for ``always``.

    >>> _implied_value("redis", "thp_enabled", "# WARNING You have Transparent Huge Pages (THP) "
    ...     "support enabled in your kernel. ... run the command "
    ...     "'echo madvise > /sys/kernel/mm/transparent_hugepage/enabled'")
    'always'
    >>> _implied_value("redis", "thp_enabled", "... the command 'echo never > /sys/kernel/mm/...'") is None
    True
    """
    if kind == "redis" and code == "thp_enabled" and _REDIS_THP_ALWAYS.search(line):
        return "always"
    return None


def _clock_s(m: re.Match[str]) -> float:
    return int(m["h"]) * 3600 + int(m["m"]) * 60 + int(m["s"]) + int(m["ms"]) / 1000


def _add_value(out: ServiceLog, code: str, value: str | None, line: str, idx: int) -> None:
    """A warning seen again with the value its first line lacked (mongosh's
    summary line, then the JSON log line with ``currentValue``): keep the
    value and that line."""
    held = next(w for w in out.warnings if w.code == code)
    if held.value is None and value is not None:
        held.value, held.message, held.line = value, line.strip()[:300], idx
        out.lines[code] = idx


WRAPPED_LINES = 2  # lines after a warning's first that may hold the rest of its text


def _wrapped(pattern: re.Pattern[str], line: str, after: str) -> re.Match[str] | None:
    """``pattern`` over ``line`` and the lines after it, when its match starts on
    ``line`` ("WARNING: The TCP backlog setting of 511 cannot be enforced because" then
    "/proc/sys/net/core/somaxconn is set to the lower value of 128.")."""
    if not after:
        return None
    m = pattern.search(f"{line} {after}")
    return m if m is not None and m.start() < len(line) else None


def _read_warnings(
    out: ServiceLog, line: str, idx: int, kinds: set[str], seen: set[str], after: str = ""
) -> None:
    """The warnings on line ``idx``: each code once (its first line), its value
    taken from a later line when the first one lacked it, or implied by the
    rest of its text (``after``: the next lines, where a wrapped warning goes on)."""
    for kind, code, pattern in _WARNINGS:
        # a warning wrapped by a terminal or a page: it starts on this line
        m = pattern.search(line) or _wrapped(pattern, line, after)
        if m is None:
            continue
        kinds.add(kind)
        value = m.groupdict().get("value") or _implied_value(kind, code, f"{line} {after}")
        if code in seen:
            _add_value(out, code, value, line, idx)
            continue
        seen.add(code)
        out.warnings.append(ServiceWarning(code=code, value=value, message=line.strip()[:300], line=idx))
        out.lines[code] = idx


@register(
    "service_log",
    commands=(
        r"(?i)\b(?:cat|tail|head|less|more|grep|journalctl|docker\s+logs|kubectl\s+logs)\b.*(?:redis|mongo)",
        r"(?i)^redis-cli\b.*latency\s+doctor",
    ),
    paths=(r"(?:^|/)(?:redis[\w.-]*|mongod[\w.-]*)\.log$",),
    detect=_detect,
    needles=_DETECT_NEEDLES,
    priority=3,
)
def parse_service_log(text: str) -> ServiceLog:
    """A Redis or MongoDB log: the store, its version, and each warning about
    a kernel setting once (its first line)."""
    out = ServiceLog()
    kinds: set[str] = set()
    seen: set[str] = set()
    saving: float | None = None
    rows = text.splitlines()
    for idx, line in enumerate(rows, start=1):
        saving = _read_fork(out, line, idx, saving, kinds)
        for kind, pattern in _VERSIONS:
            m = pattern.search(line)
            if m and out.version is None:
                kinds.add(kind)
                out.version = m.group("v")
                out.lines["version"] = idx
        # a warning wrapped by a terminal or a page: its advice on the next lines
        _read_warnings(out, line, idx, kinds, seen, " ".join(rows[idx : idx + WRAPPED_LINES]))
    if not out.warnings and out.version is None and not out.forks:
        raise ParseError("service log: no Redis or MongoDB warning, version or background save")
    out.kind = _store(text, kinds)
    return out


def _read_fork(out: ServiceLog, line: str, idx: int, saving: float | None, kinds: set[str]) -> float | None:
    """Redis's "Background saving started" after a save request: the time the
    fork took, in ms, into ``forks``. The clock of the request not yet started."""
    m_saving = _SAVING.search(line)
    if m_saving:
        saving = _clock_s(m_saving)
    m_started = _SAVE_STARTED.search(line)
    if not m_started:
        return saving
    kinds.add("redis")
    if saving is not None:
        gap = _clock_s(m_started) - saving
        out.forks.append((round((gap + _DAY_S if gap < 0 else gap) * 1000, 1), idx))
    return None


def _store(text: str, kinds: set[str]) -> str:
    """The store the log is of: the one its lines named, else the one its text
    hints at; "" when neither tells."""
    if len(kinds) == 1:
        return next(iter(kinds))
    if _REDIS_HINT.search(text):
        return "redis"
    return "mongodb" if _MONGO_HINT.search(text) else ""


_INFO_LINE = re.compile(r"^(?P<key>[a-z][a-z0-9_]{1,60}):(?P<value>[^\s].{0,400})$")


# INFO, or its memory section alone: "INFO MEMORY" starts with used_memory, then used_memory_human
# (or, quoted in a post, used_memory_rss)
_INFO_HEAD = re.compile(
    r"^(?:redis_version|latest_fork_usec):\S"
    r"|^used_memory:\d+[ \t\r]*\n(?:[a-z_]+:[^\n]*\n){0,2}used_memory_(?:human|rss):",
    re.M,
)


def _detect_info(head: str) -> bool:
    return _INFO_HEAD.search(head) is not None


@register(
    "redis_info",
    commands=(r"(?i)^redis-cli\b.*\binfo\b", r"(?i)^info(\s+\w+)?\s*$"),
    detect=_detect_info,
    needles=("redis_version:", "latest_fork_usec:", "used_memory:"),
    priority=4,
)
def parse_redis_info(text: str) -> ServiceLog:
    """``redis-cli INFO`` (or a section of it) -> the Redis it describes and
    its fields as printed.

    >>> info = parse_redis_info("# Server\\nredis_version:6.2.1\\n# Stats\\nlatest_fork_usec:981432\\n")
    >>> info.kind, info.version, info.settings["latest_fork_usec"], info.lines["latest_fork_usec"]
    ('redis', '6.2.1', '981432', 4)
    """
    out = ServiceLog(kind="redis")
    for idx, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip().replace("\r", "")
        m = _INFO_LINE.match(line)
        if m is None:
            continue
        key, value = m["key"], m["value"].strip()
        out.settings.setdefault(key, value)
        out.lines.setdefault(key, idx)
    if not {"redis_version", "latest_fork_usec", "used_memory"} & set(out.settings):
        raise ParseError("redis INFO: no redis_version, latest_fork_usec or used_memory field")
    out.version = out.settings.get("redis_version")
    if out.version:
        out.lines["version"] = out.lines["redis_version"]
    return out

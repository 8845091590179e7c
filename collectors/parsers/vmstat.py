"""``vmstat [-w] [-t] [-a] [delay [count]]`` -> :class:`Vmstat`.

Sample input (``vmstat 1 3``)::

    procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
     r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
     4  0      0 23503412  14820 544272    0    0  1158  1591  463  915 43  4 52  1  0
     4  0      0 23503412  14820 544272    0    0    16     0  681  593 100  1  0  0  0

Columns are read by their header, so ``-w`` (wide), ``-t`` (a timestamp at the
end), ``-a`` (``inact``/``active`` instead of ``buff``/``cache``) and newer
kernels' ``gu`` column parse alike; the header may repeat every screenful. The
procps of Linux 2.4 prints a ``w`` (swapped-out runnable processes) column
after ``b``, and Oracle's OSWatcher (ExaWatcher) puts a ``HH:MM:SS`` time in
front of every row under its ``--time--`` header: both are read, the time dropped.
Memory columns are kB, or MiB with ``-S M`` (the ``vmstat_mb`` kind, chosen by
the command) or units of 10^6 bytes with ``-S m`` (``vmstat_mb_si``); both are
converted to kB. procps prints the swap columns (si/so) in the same ``-S`` unit,
so they are converted to KiB/s too and ``Vmstat.swap_unit_kb`` records the
unit. A table read without its command (the ``vmstat_table`` kind, found by its
header) has a known unit only when the text shows the command line (OSWatcher's
``Collection Command:`` line, a bare ``vmstat 5`` line above the table) or is
procps 2.0's (the ``w`` column: that vmstat had no ``-S``); otherwise
``swap_unit_kb`` is None and si/so stay as printed. The first row reports averages since boot: rules
should look at ``Vmstat.interval_samples``. ``vmstat -s``/``-d``/``-m`` print other
reports and are not read here. ``lines`` keys: ``header``.
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, Vmstat, VmstatSample
from collectors.parsers import register

_COLUMNS = {
    "r": "r",
    "b": "b",
    "swpd": "swpd_kb",
    "free": "free_kb",
    "buff": "buff_kb",
    "cache": "cache_kb",
    "si": "si",
    "so": "so",
    "bi": "bi",
    "bo": "bo",
    "in": "interrupts",
    "cs": "cs",
    "us": "us",
    "sy": "sy",
    "id": "id",
    "wa": "wa",
    "st": "st",
}
_MEMORY = {"swpd_kb", "free_kb", "buff_kb", "cache_kb"}
_PERCENT = {"us", "sy", "id", "wa", "st"}
_HEADER = re.compile(r"^\s*r\s+b\s+(?:w\s+)?swpd\s+free\s")
_TIME = re.compile(r"^\d{1,2}:\d{2}:\d{2}$")
_INT = re.compile(r"^\d{1,18}$")
_SWAP = {"si", "so"}
# KiB per unit of vmstat -S k / K / m / M (procps: k = 1000 bytes, K = 1024, m = 10^6, M = 2^20)
UNIT_KB = {"k": 1000 / 1024, "K": 1.0, "m": 1_000_000 / 1024, "M": 1024.0}
_COMMAND = re.compile(r"(?:^|[\s/$#>:])vmstat\b(?P<args>[^\n]*)", re.M)
_UNIT_FLAG = re.compile(r"(?:-S\s*|--unit[= ])(?P<unit>[kKmM])\b")


def _unit_in_text(text: str, header_at: int) -> float | None:
    """KiB per si/so unit from what the text shows above the table: a vmstat
    command line (its -S, or the default KiB), or procps 2.0's ``w`` column."""
    lines = text.splitlines()
    head = "\n".join(lines[: max(header_at - 1, 0)])
    commands = list(_COMMAND.finditer(head))
    if commands:
        command = commands[-1]
        flag = _UNIT_FLAG.search(command.group("args"))
        return UNIT_KB[flag.group("unit")] if flag else 1.0
    header = lines[header_at - 1].split() if header_at else []
    return 1.0 if header[2:3] == ["w"] else None


# a header a web page put on one line with the group line before it and the
# samples after it: "procs ---...--- r b swpd free ... wa st 1 0 2048 ..."
_FLAT = re.compile(
    r"(?:^|[ \t])r[ \t]+b[ \t]+(?:w[ \t]+)?swpd[ \t]+free(?:[ \t]+[a-z]{1,6}){8,16}[ \t]+\d", re.M
)


def _lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)``, a line holding the header and its samples (a web
    page dropped the line breaks) given as the header and a row per header's
    width of numbers, on the same line number.

    >>> for _n, line in _lines("procs ---swap-- r b swpd free buff cache si so bi bo in cs "
    ...     "us sy id wa st 1 0 2048 4096 5120 10240 0 0 10 5 100 200 5 2 92 1 0"):
    ...     print(line)
    r b swpd free buff cache si so bi bo in cs us sy id wa st
    1 0 2048 4096 5120 10240 0 0 10 5 100 200 5 2 92 1 0
    """
    out: list[tuple[int, str]] = []
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _FLAT.search(line) if "swpd" in line else None
        if m is None:
            out.append((idx, line))
            continue
        tokens = line[m.start() :].split()
        width = next(i for i, t in enumerate(tokens) if t.isdigit())
        out.append((idx, " ".join(tokens[:width])))
        numbers = tokens[width:]
        out += [(idx, " ".join(numbers[k : k + width])) for k in range(0, len(numbers), width)]
    return out


def _parse(text: str, memory_scale: float, swap_scale: float | None) -> Vmstat:
    out = Vmstat()
    header: list[str] | None = None
    for idx, line in _lines(text):
        if _HEADER.match(line):
            header = line.split()
            out.lines.setdefault("header", idx)
            continue
        if header is None:
            continue
        cells = _sample_cells(header, line.split())
        if cells is not None:
            out.samples.append(_sample(header, cells, idx, memory_scale, swap_scale))
    if not out.samples:
        raise ParseError("no vmstat header (r b swpd free ...) with rows found")
    out.swap_unit_kb = swap_scale
    return out


def _sample_cells(header: list[str], tokens: list[str]) -> list[str] | None:
    """A sample row's cells under ``header`` (OSWatcher's time column dropped);
    None for a row that is no sample."""
    if len(tokens) > len(header) and _TIME.match(tokens[0]):
        tokens = tokens[1:]  # OSWatcher's time column
    if len(tokens) < len(header) - 1:
        return None
    if not all(_INT.match(t) for t in tokens[: min(len(tokens), len(header), 17)]):
        return None
    return tokens


def _sample(
    header: list[str], cells: list[str], idx: int, memory_scale: float, swap_scale: float | None
) -> VmstatSample:
    """One sample, memory columns in kB and si/so in KiB/s when their unit is known."""
    sample = VmstatSample(line=idx)
    for name, token in zip(header, cells, strict=False):
        attr = _COLUMNS.get(name)
        if attr is None or not _INT.match(token):
            continue
        value = int(token)
        if attr in _MEMORY:
            value = round(value * memory_scale)
        elif attr in _SWAP and swap_scale is not None:
            value = round(value * swap_scale)
        setattr(sample, attr, float(value) if attr in _PERCENT else value)
    return sample


def _detect(head: str) -> bool:
    return "swpd" in head and (
        re.search(r"^[ \t]*r[ \t]+b[ \t]+(?:w[ \t]+)?swpd[ \t]+free[ \t]", head, re.M) is not None
        or _FLAT.search(head) is not None
    )


@register("vmstat_mb", commands=(r"^vmstat\s+(?:.*\s)?(?:-S\s*M|--unit[= ]M)\b",))
def parse_vmstat_mb(text: str) -> Vmstat:
    """``vmstat -S M``: memory columns in MiB (converted to kB).

    Sample input::

         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         4  0      0  22366      9    558    0    0  1144  1288  424  794 43  4 52  1  0
    """
    return _parse(text, 1024, UNIT_KB["M"])


@register("vmstat_mb_si", commands=(r"^vmstat\s+(?:.*\s)?(?:-S\s*m|--unit[= ]m)\b",))
def parse_vmstat_mb_si(text: str) -> Vmstat:
    """``vmstat -S m``: memory columns in units of 1,000,000 bytes (converted to kB).

    Sample input::

         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         1  0   2947    779    189  10160    0    0   658    37    3    7 21  8 69  2  0
    """
    return _parse(text, 1_000_000 / 1024, UNIT_KB["m"])


@register("vmstat", commands=(r"^vmstat(?!\s+(?:.*\s)?-[a-zA-Z]*[sdDmfp])(\s|$)",))
def parse_vmstat(text: str) -> Vmstat:
    """Parse ``vmstat [delay [count]]`` given with its command (see the module
    docstring for the variants): si/so in KiB/s, vmstat's default unit.

    Sample input::

        procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         4  0      0 23503412  14820 544272    0    0  1158  1591  463  915 43  4 52  1  0
    """
    return _parse(text, 1, UNIT_KB["K"])


@register("vmstat_table", detect=_detect, priority=10)
def parse_vmstat_table(text: str) -> Vmstat:
    """A vmstat table found by its header, without a command: the unit of
    si/so is read from the text (a command line above it, procps 2.0's ``w``
    column) or left unknown; memory columns are taken as kB.

    Sample input (OSWatcher)::

        # Collection Command:\t/usr/bin/vmstat  5  2
         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         2  0    376 141000624 945216 8464640    0    0     2   806 31414 37894  2  1 97  0  0
    """
    header_at = next((i for i, line in enumerate(text.splitlines(), start=1) if _HEADER.match(line)), 0)
    return _parse(text, 1, _unit_in_text(text, header_at))

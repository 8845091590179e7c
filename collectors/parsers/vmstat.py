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
converted to kB. The first row reports averages since boot: rules
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


def _parse(text: str, memory_scale: float) -> Vmstat:
    if not isinstance(text, str):
        raise ParseError("vmstat: not text")
    out = Vmstat()
    header: list[str] | None = None
    for idx, line in enumerate(text.splitlines(), start=1):
        if _HEADER.match(line):
            header = line.split()
            out.lines.setdefault("header", idx)
            continue
        tokens = line.split()
        if header is not None and len(tokens) > len(header) and _TIME.match(tokens[0]):
            tokens = tokens[1:]  # OSWatcher's time column
        if (
            header is None
            or len(tokens) < len(header) - 1
            or not all(_INT.match(t) for t in tokens[: min(len(tokens), len(header), 17)])
        ):
            continue
        sample = VmstatSample(line=idx)
        for name, token in zip(header, tokens, strict=False):
            attr = _COLUMNS.get(name)
            if attr is None or not _INT.match(token):
                continue
            value = int(token)
            if attr in _MEMORY:
                value = round(value * memory_scale)
            setattr(sample, attr, float(value) if attr in _PERCENT else value)
        out.samples.append(sample)
    if not out.samples:
        raise ParseError("no vmstat header (r b swpd free ...) with rows found")
    return out


def _detect(head: str) -> bool:
    return (
        "swpd" in head
        and re.search(r"^[ \t]*r[ \t]+b[ \t]+(?:w[ \t]+)?swpd[ \t]+free[ \t]", head, re.M) is not None
    )


@register("vmstat_mb", commands=(r"^vmstat\s+(?:.*\s)?(?:-S\s*M|--unit[= ]M)\b",))
def parse_vmstat_mb(text: str) -> Vmstat:
    """``vmstat -S M``: memory columns in MiB (converted to kB).

    Sample input::

         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         4  0      0  22366      9    558    0    0  1144  1288  424  794 43  4 52  1  0
    """
    return _parse(text, 1024)


@register("vmstat_mb_si", commands=(r"^vmstat\s+(?:.*\s)?(?:-S\s*m|--unit[= ]m)\b",))
def parse_vmstat_mb_si(text: str) -> Vmstat:
    """``vmstat -S m``: memory columns in units of 1,000,000 bytes (converted to kB).

    Sample input::

         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         1  0   2947    779    189  10160    0    0   658    37    3    7 21  8 69  2  0
    """
    return _parse(text, 1_000_000 / 1024)


@register(
    "vmstat", commands=(r"^vmstat(?!\s+(?:.*\s)?-[a-zA-Z]*[sdDmfp])(\s|$)",), detect=_detect, priority=10
)
def parse_vmstat(text: str) -> Vmstat:
    """Parse ``vmstat [delay [count]]`` (see the module docstring for the variants).

    Sample input::

        procs -----------memory---------- ---swap-- -----io---- -system-- ------cpu-----
         r  b   swpd   free   buff  cache   si   so    bi    bo   in   cs us sy id wa st
         4  0      0 23503412  14820 544272    0    0  1158  1591  463  915 43  4 52  1  0
    """
    return _parse(text, 1)

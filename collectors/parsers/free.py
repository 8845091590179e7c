"""``free`` (procps) in its old and new layouts -> :class:`Meminfo` (``origin="free"``).

New layout (procps-ng >= 3.3.10; ``-w`` splits ``buff/cache`` into ``buffers`` and ``cache``)::

                   total        used        free      shared  buff/cache   available
    Mem:        24683656      968776    23503412       69604      558992    23714880
    Swap:              0           0           0

Old layout (procps 3.2, RHEL/CentOS 6)::

                 total       used       free     shared    buffers     cached
    Mem:      32827556   32521332     306224          0     195340   28467116
    -/+ buffers/cache:    3858876   28968680
    Swap:     16777208      81484   16695724

Values become /proc/meminfo keys in kB: ``MemTotal``, ``MemFree``, ``MemAvailable``,
``Shmem``, ``Buffers`` and ``Cached`` (when printed separately), ``BuffCache`` (the
sum, or new procps' ``buff/cache`` column, which also counts reclaimable slab),
``SwapTotal``, ``SwapFree``. ``MemUsed`` is ``used`` as printed.

The unit is not in the output unless ``-h`` added suffixes (``23Gi``, ``945Mi``,
``1.5G``, ``0B``), so a prompted command names it: the kinds ``free_mb``
(``-m``/``--mebi``), ``free_mb_si`` (``--mega``: 10^6 bytes), ``free_gb`` (``-g``),
``free_bytes`` (``-b``) and
``free_kb`` (no option, ``-k``, ``-h``). Output without its command (kind ``free``)
is read by magnitude: a ``Mem:`` total under 1,000 is GiB, under 1,000,000 MiB, over
10,000,000,000 bytes, else kB (a host with less than 1 GB or more than 1 TB
would be misread). ``-g``/``-m`` values are rounded by free; they never replace
values read from /proc/meminfo (see ``collectors.assemble``).
``lines`` keys: the meminfo keys set.
"""

from __future__ import annotations

import re

from collectors.facts import Meminfo, ParseError
from collectors.parsers import register
from collectors.sizes import kib

_HUMAN = re.compile(r"^(\d{1,15}(?:[.,]\d{1,6})?)([BKMGTP])(?:i|iB|B)?$")
_PLAIN = re.compile(r"^\d{1,20}$")
_HEADER = re.compile(r"^\s*total\s+used\s+free\b")


def _kb(token: str, scale: float | None) -> tuple[int | None, bool]:
    """(kB, human) for one cell; ``scale`` is kB per unit of plain numbers (None: unknown yet)."""
    m = _HUMAN.match(token)
    if m:
        return round(kib(float(m.group(1).replace(",", ".")), m.group(2))), True
    if _PLAIN.match(token):
        return (round(int(token) * scale) if scale is not None else int(token)), False
    return None, False


def _guess_scale(total: int) -> float:
    if total < 1_000:
        return 1024**2  # GiB
    if total < 1_000_000:
        return 1024  # MiB
    if total > 10_000_000_000:
        return 1 / 1024  # bytes
    return 1


# a column of free's Mem: row -> the /proc/meminfo key it is
_COLUMNS = {
    "total": "MemTotal",
    "used": "MemUsed",
    "free": "MemFree",
    "shared": "Shmem",
    "buffers": "Buffers",
    "cache": "Cached",
    "cached": "Cached",
    "available": "MemAvailable",
    "buff/cache": "BuffCache",
}


def _parse(text: str, scale: float | None) -> Meminfo:
    out = Meminfo(origin="free")
    columns, rows = _table(text, out)
    if columns is None or "mem" not in rows:
        raise ParseError("no free header (total used free ...) and Mem: row found")
    mem_cells, mem_line = rows["mem"]
    if scale is None:
        scale = _scale_of(mem_cells[0] if mem_cells else "")
    _read_mem(out, columns, mem_cells, mem_line, scale)
    if "swap" in rows:
        _read_swap(out, *rows["swap"], scale)
    if "MemTotal" not in out.values:
        raise ParseError("free: Mem: row without a readable total", line=mem_line)
    return out


# where a web page that dropped the line breaks put the next row of free: before
# "Mem:", "Swap:" (glued to the header's last column or to the last value, or not)
_NEXT_ROW = re.compile(r"(?<=\S)[ \t]*(?=(?:Mem|Swap|Low|High|Total|-/\+ buffers/cache):[ \t])")
# a header holding the rows a web page put on its line
_FLAT = re.compile(r"^[ \t]*total[ \t]+used[ \t]+free\b[^\n]*?\S[ \t]*Mem:[ \t]", re.M)


def _lines(text: str) -> list[tuple[int, str]]:
    """``(line number, line)``, a header line holding its rows (a web page
    dropped the line breaks: ``... availableMem: 64Gi ...Swap: 16Gi ...``) given
    as the header and each row, on the same line number.

    >>> [line for _n, line in _lines("total used free shared buff/cache availableMem: 64Gi 50Gi "
    ...     "4Gi 1Gi 10Gi 12GiSwap: 16Gi 2Gi 14G")]
    ['total used free shared buff/cache available', 'Mem: 64Gi 50Gi 4Gi 1Gi 10Gi 12Gi', 'Swap: 16Gi 2Gi 14G']
    """
    out: list[tuple[int, str]] = []
    for idx, line in enumerate(text.splitlines(), start=1):
        if _HEADER.match(line) and _FLAT.match(line):
            out += [(idx, piece) for piece in _NEXT_ROW.split(line)]
        else:
            out.append((idx, line))
    return out


def _table(text: str, out: Meminfo) -> tuple[list[str] | None, dict[str, tuple[list[str], int]]]:
    """The header's columns and the first ``Mem:`` and ``Swap:`` rows after it
    (their cells and line number)."""
    columns: list[str] | None = None
    rows: dict[str, tuple[list[str], int]] = {}
    for idx, line in _lines(text):
        if _HEADER.match(line):
            columns = line.split()
            out.lines.setdefault("header", idx)
            continue
        tokens = line.split()
        if not tokens or columns is None:
            continue
        label = tokens[0].rstrip(":").lower()
        if label in ("mem", "swap") and label not in rows:
            rows[label] = (tokens[1:], idx)
    return columns, rows


def _scale_of(first: str) -> float:
    """kB per unit of plain numbers, by the magnitude of the Mem: total ``first``."""
    if _PLAIN.match(first) and not _HUMAN.match(first):
        return _guess_scale(int(first))
    return 1


def _read_mem(out: Meminfo, columns: list[str], cells: list[str], line: int, scale: float) -> None:
    values: dict[str, int] = {}
    for name, cell in zip(columns, cells, strict=False):
        kb, _human = _kb(cell, scale)
        if kb is not None:
            values[name] = kb
    for column, key in _COLUMNS.items():
        if column in values:
            out.values[key] = values[column]
            out.lines[key] = line
    if "BuffCache" not in out.values and "Buffers" in out.values and "Cached" in out.values:
        out.values["BuffCache"] = out.values["Buffers"] + out.values["Cached"]
        out.lines["BuffCache"] = line


def _read_swap(out: Meminfo, cells: list[str], line: int, scale: float) -> None:
    swap = [kb for c in cells[:3] if (kb := _kb(c, scale)[0]) is not None]
    if len(swap) == 3:
        out.values["SwapTotal"], out.values["SwapFree"] = swap[0], swap[2]
        out.lines["SwapTotal"] = out.lines["SwapFree"] = line


_DETECT = re.compile(r"^[ \t]*total[ \t]+used[ \t]+free\b[^\n]*\n[ \t]*Mem:[ \t]", re.M)


def _detect(head: str) -> bool:
    return "Mem:" in head and (_DETECT.search(head) is not None or _FLAT.search(head) is not None)


def _option(letters: str, longs: str) -> str:
    return rf"^free\s+(?:.*\s)?(?:-[a-z]*[{letters}][a-z]*|--(?:{longs}))(?:\s|$)"


@register("free_mb_si", commands=(r"^free\s+(?:.*\s)?--mega(?:\s|$)",))
def parse_free_mb_si(text: str) -> Meminfo:
    """``free --mega``: plain numbers are units of 1,000,000 bytes.

    Sample input::

                      total        used        free      shared  buff/cache   available
        Mem:          25275        1731       23902          72         614       24150
    """
    return _parse(text, 1_000_000 / 1024)


@register("free_mb", commands=(_option("m", "mebi"),), paths=(r"sos_commands/memory/free_-m$",))
def parse_free_mb(text: str) -> Meminfo:
    """``free -m``: plain numbers are MiB.

    Sample input::

                      total        used        free      shared  buff/cache   available
        Mem:          24105         945       22952          67         545       23159
        Swap:             0           0           0
    """
    return _parse(text, 1024)


@register("free_gb", commands=(_option("g", "giga|gibi"),))
def parse_free_gb(text: str) -> Meminfo:
    """``free -g``: plain numbers are GiB (rounded down by free).

    Sample input::

                      total        used        free      shared  buff/cache   available
        Mem:             23           0          22           0           0          22
    """
    return _parse(text, 1024**2)


@register("free_bytes", commands=(_option("b", "bytes"),))
def parse_free_bytes(text: str) -> Meminfo:
    """``free -b``: plain numbers are bytes.

    Sample input::

                      total        used        free      shared  buff/cache   available
        Mem:    25276063744   992026624 24067493888    71274496   572407808 24284037120
    """
    return _parse(text, 1 / 1024)


@register("free_kb", commands=(r"^free(\s|$)",), paths=(r"sos_commands/memory/free$",))
def parse_free_kb(text: str) -> Meminfo:
    """``free``, ``free -k``, ``free -h``: plain numbers are kB (``-h`` values carry suffixes).

    Sample input::

                      total        used        free      shared  buff/cache   available
        Mem:        24683656      968776    23503412       69604      558992    23714880
    """
    return _parse(text, 1)


@register("free", detect=_detect, priority=9)
def parse_free(text: str) -> Meminfo:
    """A ``free`` table without its command: the unit of plain numbers is guessed
    from their magnitude (module docstring).

    Sample input::

                     total       used       free     shared    buffers     cached
        Mem:      32827556   32521332     306224          0     195340   28467116
        -/+ buffers/cache:    3858876   28968680
        Swap:     16777208      81484   16695724
    """
    return _parse(text, None)

"""``ps`` process lists -> :class:`ProcessList` (``ps -eo pid,psr,pcpu,comm`` and kin).

Sample input::

      PID PSR %CPU COMMAND
        1   1  0.1 systemd
     4180   0 94.2 mysqld

Columns are read by their header, so any ``-o`` list works (``pid,user,psr,pcpu,pmem,args``,
``-L`` with ``TID``/``LWP``, ``ps aux``, ``ps -ef``); the last column (``COMMAND``,
``CMD``, ``ARGS``) takes the rest of the line, spaces included. ``PSR`` is the
CPU the task last ran on, which places busy processes on NUMA nodes. Content
detection needs a ``PID`` and a ``PSR`` column (a list without PSR says nothing
``top`` does not); a prompted ``ps`` command is read whatever its columns.
``lines`` keys: ``header``.

``ps aux | grep qemu`` and ``ps -ef | grep qemu`` lose the header to grep; their
rows are read by shape (BSD ``USER PID %CPU %MEM VSZ RSS TTY STAT START TIME
COMMAND`` or System V ``UID PID PPID C STIME TTY TIME CMD``), and an indented
line that is no row continues the command above it (a long QEMU command line
wrapped by the terminal)::

    root      3293  0.0  0.0   6432   720 pts/0    S+   10:27   0:00 grep --color=auto qemu-kvm
    uuidd    24485  159 17.8 13991760 11778320 ?   SLl  Jul17 36123:46 /usr/libexec/qemu-kvm -name ...
     -cpu host,migratable=on -m 11445 -smp 8,sockets=1,dies=1,cores=8,thre

What a QEMU row's command line says of its guest is read by
``collectors.parsers.qemu_cmdline.domains_of_processes`` (the assembler calls it on
every process list), from the command as joined here.
"""

from __future__ import annotations

import re

from collectors.facts import ParseError, ProcessInfo, ProcessList
from collectors.numbers import ascii_digits
from collectors.parsers import register

_NUM = re.compile(r"^\d{1,10}(?:\.\d{1,4})?$")
# headerless rows: ps aux (USER PID %CPU %MEM VSZ RSS TTY STAT START TIME COMMAND)
_AUX_ROW = re.compile(
    r"^(?P<user>\S+)\s+(?P<pid>\d{1,10})\s+(?P<cpu>\d{1,6}(?:\.\d{1,2})?)\s+(?P<mem>\d{1,3}(?:\.\d{1,2})?)"
    r"\s+\d{1,20}\s+\d{1,20}\s+\S+\s+[A-Za-z<+]\S*\s+\S+\s+\d{1,9}:\d\d(?::\d\d)?\s+(?P<command>\S.*)$"
)
# ... and ps -ef (UID PID PPID C STIME TTY TIME CMD)
_EF_ROW = re.compile(
    r"^(?P<user>\S+)\s+(?P<pid>\d{1,10})\s+\d{1,10}\s+\d{1,4}\s+\S+\s+\S+\s+(?:\d{1,4}-)?\d\d:\d\d:\d\d"
    r"\s+(?P<command>\S.*)$"
)
_LAST = {"COMMAND", "CMD", "ARGS", "COMM", "CMDLINE"}


def _detect(head: str) -> bool:
    if "PID" not in head or "PSR" not in head:
        return False
    return re.search(r"^[ \t]*(?:\S+[ \t]+){0,6}PID\b[^\n]*\bPSR\b[^\n]*$", head, re.M) is not None or (
        re.search(r"^[ \t]*(?:\S+[ \t]+){0,6}PSR\b[^\n]*\bPID\b", head, re.M) is not None
    )


@register(
    "ps", commands=(r"^ps(\s|$)",), paths=(r"sos_commands/process/ps_auxwww$",), detect=_detect, priority=8
)
def parse_ps(text: str) -> ProcessList:
    """Parse a ``ps`` listing with a header line.

    Sample input::

          PID USER     PSR %CPU %MEM COMMAND
        12345 mysql      3 94.2 61.0 /usr/sbin/mysqld --basedir=/usr
    """
    out = ProcessList()
    header: list[str] | None = None
    for idx, line in enumerate(text.splitlines(), start=1):
        tokens = line.split()
        if header is None:
            if "PID" in tokens:
                header = tokens
                out.lines.setdefault("header", idx)
            continue
        process = _row(header, line, tokens, idx)
        if process is not None:
            out.processes.append(process)
    if header is None:
        _headerless(text, out)
    if not out.processes:
        raise ParseError("no ps header (PID ...) with process rows found")
    return out


def _cells(header: list[str], line: str, tokens: list[str]) -> list[str]:
    """A row's cells: its words, or, when the last column is a command (which
    holds spaces), the words before it and the rest of the line."""
    return line.split(None, len(header) - 1) if header[-1] in _LAST else tokens


def _row(header: list[str], line: str, tokens: list[str], idx: int) -> ProcessInfo | None:
    """The process of a row under ``header``, or None (not a process row)."""
    cells = _cells(header, line, tokens)
    if len(cells) < len(header):
        return None
    row = dict(zip(header, cells, strict=False))
    pid = row.get("PID", "")
    if not ascii_digits(pid):
        return None
    psr = row.get("PSR", "")
    command = next((row[c] for c in header[::-1] if c in _LAST), "")  # (a row has every column)
    return ProcessInfo(
        pid=int(pid),
        user=row.get("USER") or row.get("UID") or None,
        cpu_pct=_percent(row.get("%CPU", "")),
        mem_pct=_percent(row.get("%MEM", "")),
        command=command.strip(),
        line=idx,
        psr=int(psr) if ascii_digits(psr) else None,
    )


def _percent(cell: str) -> float | None:
    return float(cell) if _NUM.match(cell) else None


def _headerless(text: str, out: ProcessList) -> None:
    """Rows of ``ps aux`` / ``ps -ef`` whose header grep dropped (see the module docstring)."""
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _AUX_ROW.match(line) or _EF_ROW.match(line)
        if m is not None:
            out.processes.append(_headerless_process(m, idx))
        elif out.processes and _indented(line):
            last = out.processes[-1]
            last.command = f"{last.command} {line.strip()}"  # the command wrapped onto an indented line


def _indented(line: str) -> bool:
    """Whether a line is indented and not blank (a command wrapped onto it)."""
    return line[:1].isspace() and bool(line.strip())


def _headerless_process(m: re.Match[str], idx: int) -> ProcessInfo:
    """The process of a ``ps aux`` (with %CPU and %MEM) or ``ps -ef`` row matched without a header."""
    groups = m.groupdict()
    return ProcessInfo(
        pid=int(groups["pid"]),
        user=groups["user"],
        cpu_pct=float(groups["cpu"]) if groups.get("cpu") else None,
        mem_pct=float(groups["mem"]) if groups.get("mem") else None,
        command=groups["command"].strip(),
        line=idx,
    )

"""Per-CPU utilisation from ``top -bn1``, ``mpstat -P ALL`` and ``sar -u`` / ``sar -P ALL``
-> :class:`CpuUsage`. Three kinds are registered: ``top``, ``mpstat``, ``sar_cpu``.

``top`` (header, per-CPU lines after pressing ``1``, memory, process list)::

    top - 17:19:08 up 47 days, 17:07, 3 users, load average: 22.43, 7.27, 3.81
    Tasks: 1421 total, 2 running, 1419 sleeping, 0 stopped, 0 zombie
    %Cpu0  :  1.7 us,  1.1 sy,  0.0 ni, 96.1 id,  0.0 wa,  0.0 hi,  1.1 si,  0.0 st
    %Cpu(s): 29.7 us, 6.8 sy, 0.0 ni, 62.3 id, 0.0 wa, 0.0 hi, 1.1 si, 0.0 st
    KiB Mem : 79179116+total, 38146384+free, 28456528+used, 12576206+buff/cache
      PID USER      PR  NI    VIRT    RES    SHR S  %CPU %MEM     TIME+ COMMAND
    45497 test      20   0  101.7g  90.8g  68400 S  1329 12.0   2737:33 observer

Two CPUs on one line (``%Cpu0 : ... st %Cpu1 : ... st``) and the older
``Cpu0 : 1.2%us, ...`` style are read too. Memory lines in KiB, MiB, GiB or the
older ``Mem: 32827556k total`` are converted to kB. A value too wide for its
column is printed truncated with a ``+`` (``79179116+total``): the digits are
kept as a lower bound and ``mem_truncated`` is set. Process rows are anchored on
the ``TIME+`` column, so a row missing a column to its left (seed 004 lost a
``PR`` value) still yields its %CPU, %MEM and command. pt-summary's
``processes`` (the process list alone, recognised by top's ``PID USER PR NI VIRT RES
SHR S %CPU %MEM TIME+ COMMAND`` header) and ``uptime`` lines parse too; a process row
cut short by the paste is reported.

``mpstat -P ALL 1 2`` / ``sar -u 1 3`` / ``sar -P ALL``::

    04:47:53     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
    04:47:54     all    0.50    0.00    0.50    0.00    0.00    0.00    0.00    0.00    0.00   99.00
    04:47:54       0    1.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00    0.00   99.00
    Average:     all    0.50    0.00    0.50    0.00    0.00    0.00    0.00    0.00    0.00   99.00

``Average:`` rows give ``per_cpu`` and ``overall``; without them each CPU's
interval rows are averaged. ``samples`` holds the interval rows of ``all``.
OCR-damaged sar tables (seed 002: ``Zuser``, ``%n1ce``, ``%10wa1t``, CPU
``a11``, decimal commas, tabs) are read best effort: column names are
normalised, unreadable cells become ``None``.

``jc`` has mpstat/top parsers, but they give no line numbers for evidence and
reject the OCR'd tables, so one table reader here serves mpstat and sar.

``lines`` keys: ``load_average``, ``tasks_total``, ``mem``, ``overall``,
``processes`` (the header); each CpuUtil/ProcessInfo carries its own ``line``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from collectors.facts import ArtifactError, CpuUsage, CpuUtil, ParseError, ProcessInfo
from collectors.numbers import ascii_digits, decimal, set_means
from collectors.parsers import register
from collectors.sizes import kib

_CPU_LABEL = re.compile(r"%?Cpu(\d{1,6}|\(s\))\s*:")
_CPU_FIELD = re.compile(r"(\d{1,15}(?:[.,]\d{1,6})?)\s*%?\s*(us|sy|ni|id|wa|hi|si|st)\b")
_LOAD = re.compile(r"load average:\s*([\d.,]+),?\s+([\d.,]+),?\s+([\d.,]+)")
_UP_DAYS = re.compile(r"\bup\s+(\d{1,7})\s+days?")
# "任务" is procps' zh_CN "Tasks"
_TASKS = re.compile(r"^\s*(?:Tasks|Threads|任务|线程)[:：]\s*(\d{1,9})\s+total")
# matched against the left-stripped line: "^\s*(KiB)?\s*Mem" backtracks quadratically on blank runs
_MEM_LINE = re.compile(r"^(KiB|MiB|GiB|TiB)?\s*Mem\s*:")
_MEM_FIELD = re.compile(r"(\d{1,15}(?:\.\d{1,6})?)([kmgt])?(\+)?\s*(total|free|used|buff/cache|buffers)")
# top's memory field -> the CpuUsage field that holds it
_MEM_ATTRS = {
    "total": "mem_total_kb",
    "free": "mem_free_kb",
    "used": "mem_used_kb",
    "buff/cache": "mem_cache_kb",
    "buffers": "mem_cache_kb",
}
_TIME_PLUS = re.compile(r"^\d{1,9}:\d{2}(?:\.\d{2})?$")


def _util_from_fields(cpu: str, segment: str, line: int) -> CpuUtil | None:
    util = CpuUtil(cpu=cpu, line=line)
    found = False
    for value, name in _CPU_FIELD.findall(segment):
        number = decimal(value)
        if number is not None and getattr(util, name) is None:
            setattr(util, name, number)
            found = True
    return util if found else None


# --------------------------------------------------------------------- top


def _parse_top(text: str) -> CpuUsage:
    out = CpuUsage(tool="top")
    proc_header: list[str] | None = None
    for idx, line in enumerate(text.splitlines(), start=1):
        if proc_header is not None:
            if _top_process_line(out, line, proc_header, idx):
                continue
            if line.strip():
                proc_header = None
        if _top_summary_line(out, line, idx):
            continue
        tokens = line.split()
        if tokens[:1] == ["PID"] and "COMMAND" in tokens:
            proc_header = tokens
            out.lines["processes"] = idx
    if not _top_read_anything(out):
        raise ParseError("no top header, CPU lines or process list found")
    return out


def _top_read_anything(out: CpuUsage) -> bool:
    """Whether top's header, CPU lines or process list gave anything."""
    return any((out.per_cpu, out.overall, out.processes, out.load_average, out.mem_total_kb, out.tasks_total))


def _top_process_line(out: CpuUsage, line: str, proc_header: list[str], idx: int) -> bool:
    """A row of the process list (or one cut mid-paste, reported); False for
    any other line."""
    proc = _process_row(line, proc_header, idx)
    if proc is not None:
        out.processes.append(proc)
        return True
    first = line.split()[:1]
    if first and ascii_digits(first[0]) and len(first[0]) <= 10:
        # a process row cut mid-paste ("49449 qemu      20")
        out.errors.append(ArtifactError("", f"top: process row {first[0]} cut: {line.strip()[:80]!r}", idx))
        return True
    return False


def _top_summary_line(out: CpuUsage, line: str, idx: int) -> bool:
    """A line of top's summary (load and uptime, tasks, CPU, memory) read into
    ``out``; False for any other line."""
    m = _LOAD.search(line)
    if m and out.load_average is None:
        _top_load(out, line, m, idx)
        return True
    m = _TASKS.match(line)
    if m:
        out.tasks_total = int(m.group(1))
        out.lines["tasks_total"] = idx
        return True
    labels = list(_CPU_LABEL.finditer(line))
    if labels:
        _top_cpus(out, line, labels, idx)
        return True
    m = _MEM_LINE.match(line.lstrip())
    if m and out.mem_total_kb is None:
        _top_memory(out, line, m.group(1), idx)
        return True
    return False


def _top_load(out: CpuUsage, line: str, m: re.Match[str], idx: int) -> None:
    values = [v for g in m.groups() if (v := decimal(g.rstrip(","))) is not None]
    if len(values) == len(m.groups()):
        out.load_average = (values[0], values[1], values[2])
        out.lines["load_average"] = idx
    days = _UP_DAYS.search(line)
    if days:
        out.uptime_days = int(days.group(1))
    elif re.search(r"\bup\s", line):
        out.uptime_days = 0


def _top_cpus(out: CpuUsage, line: str, labels: list[re.Match[str]], idx: int) -> None:
    """``%Cpu(s):`` (all CPUs) or ``%Cpu0 :`` lines, several per line when top prints them side by side."""
    for pos, label in enumerate(labels):
        end = labels[pos + 1].start() if pos + 1 < len(labels) else len(line)
        name = label.group(1)
        cpu = "all" if name == "(s)" else name
        util = _util_from_fields(cpu, line[label.end() : end], idx)
        if util is None:
            continue
        if cpu == "all":
            out.overall = util
            out.lines["overall"] = idx
        else:
            out.per_cpu.append(util)


def _top_memory(out: CpuUsage, line: str, unit: str | None, idx: int) -> None:
    for value, suffix, plus, name in _MEM_FIELD.findall(line):
        # a value's own suffix ("3.9g") wins over the line's unit ("MiB Mem")
        kb = int(kib(float(value), suffix or unit))
        if plus:
            out.mem_truncated = True
        setattr(out, _MEM_ATTRS[name], kb)
    out.lines["mem"] = idx


def _process_row(line: str, header: list[str], idx: int) -> ProcessInfo | None:
    tokens = line.split()
    pid = tokens[0] if tokens else ""
    if len(tokens) < 4 or not ascii_digits(pid) or len(pid) > 10:
        return None
    usage = _cpu_mem_command(tokens, header)
    if usage is None:
        return None
    cpu, mem, command = usage
    return ProcessInfo(
        pid=int(tokens[0]), user=tokens[1], cpu_pct=cpu, mem_pct=mem, command=command, line=idx
    )


def _cpu_mem_command(tokens: list[str], header: list[str]) -> tuple[float | None, float | None, str] | None:
    """%CPU, %MEM and the command of a process row: the two cells before TIME+
    and what follows it, else the header's columns; None when neither places them."""
    time_pos = next((pos for pos in range(2, len(tokens)) if _TIME_PLUS.match(tokens[pos])), None)
    if time_pos is not None and time_pos >= 4:
        return decimal(tokens[time_pos - 2]), decimal(tokens[time_pos - 1]), " ".join(tokens[time_pos + 1 :])
    if len(tokens) >= len(header) and "%CPU" in header and "%MEM" in header:
        cpu, mem = decimal(tokens[header.index("%CPU")]), decimal(tokens[header.index("%MEM")])
        return cpu, mem, " ".join(tokens[len(header) - 1 :])
    return None


# ------------------------------------------------------------ mpstat / sar

_COLUMN_MAP = {
    "usr": "us",
    "user": "us",
    "nice": "ni",
    "sys": "sy",
    "system": "sy",
    "iowait": "wa",
    "irq": "hi",
    "soft": "si",
    "steal": "st",
    "idle": "id",
}


def _column(token: str) -> str | None:
    """Normalise a header cell, forgiving OCR (``Zuser``, ``%n1ce``, ``%10wa1t``)."""
    name = token.lower().lstrip("%z").replace("1", "i").replace("0", "o")
    return _COLUMN_MAP.get(name)


def _cpu_token(token: str) -> str | None:
    low = token.lower()
    if low == "all" or low.replace("1", "l") == "all":
        return "all"
    if ascii_digits(token) and len(token) <= 6:
        return str(int(token))
    return None


def _is_table_header(tokens: list[str]) -> int | None:
    """Index of the CPU column when ``tokens`` is an mpstat/sar CPU header."""
    if "CPU" not in tokens:
        return None
    pos = tokens.index("CPU")
    cols = [_column(t) for t in tokens[pos + 1 :]]
    if sum(c is not None for c in cols) >= 3:
        return pos
    return None


# illumos/Solaris mpstat's header: no softirq, steal or iowait column to read
_SOLARIS_MPSTAT = re.compile(r"^[ \t]*CPU[ \t]+minf[ \t]+mjf[ \t]+xcal[ \t]+intr\b", re.M)


def _parse_table(text: str, tool: str) -> CpuUsage:
    out = CpuUsage(tool=tool)
    averages, series = _rows_by_cpu(text, out)
    if not averages and not series:
        raise _no_rows(text, tool)
    out.samples = series.get("all", [])
    chosen = averages or {cpu: _mean(cpu, rows) for cpu, rows in series.items()}
    out.overall = chosen.pop("all", None)
    if out.overall is not None:
        out.lines["overall"] = out.overall.line or 0
    out.per_cpu = sorted(chosen.values(), key=lambda u: int(u.cpu))
    return out


def _rows_by_cpu(text: str, out: CpuUsage) -> tuple[dict[str, CpuUtil], dict[str, list[CpuUtil]]]:
    """The tables' Average row of each CPU, and each CPU's other rows in order."""
    averages: dict[str, CpuUtil] = {}
    series: dict[str, list[CpuUtil]] = {}
    for average, util in _table_rows(text, out):
        if average:
            averages[util.cpu] = util
        else:
            series.setdefault(util.cpu, []).append(util)
    return averages, series


def _no_rows(text: str, tool: str) -> ParseError:
    """Why a text gave no CPU rows: illumos's mpstat, or no table at all."""
    if _SOLARIS_MPSTAT.search(text):
        return ParseError(
            "illumos/Solaris mpstat (CPU minf mjf xcal intr ...): not Linux sysstat's, not read"
        )
    return ParseError(f"no {tool} CPU table rows found")


def _table_rows(text: str, out: CpuUsage) -> Iterator[tuple[bool, CpuUtil]]:
    """The CPU rows of the mpstat/sar tables of ``text``: (an Average row, its values)."""
    columns: list[str | None] = []
    cpu_pos: int | None = None
    for idx, raw in enumerate(text.splitlines(), start=1):
        tokens = raw.split()
        if not tokens:
            continue
        pos = _is_table_header(tokens)
        if pos is not None:
            cpu_pos = pos
            columns = [_column(t) for t in tokens[pos + 1 :]]
            out.lines.setdefault("header", idx)
        elif _other_header(tokens):
            cpu_pos = None
        elif cpu_pos is not None and (row := _table_row(tokens, cpu_pos, columns, idx)) is not None:
            yield row


def _other_header(tokens: list[str]) -> bool:
    """Whether a line is another table's header (sar -A: "proc/s cswch/s",
    "runq-sz ..."), whose rows are not CPUs: three words or more, no number after the first."""
    return len(tokens) >= 3 and all(decimal(t) is None for t in tokens[1:])


def _table_row(
    tokens: list[str], cpu_pos: int, columns: list[str | None], idx: int
) -> tuple[bool, CpuUtil] | None:
    """A row under a CPU header: (an Average row, its values), or None."""
    # "平均时间" is sysstat's zh_CN "Average"
    average = tokens[0].lower().startswith(("average", "平均时间"))
    at = 1 if average else cpu_pos
    cpu = _cpu_token(tokens[at]) if at < len(tokens) else None
    if cpu is None:
        return None
    util = CpuUtil(cpu=cpu, line=idx)
    return (average, util) if _fill(util, columns, tokens[at + 1 :]) else None


def _fill(util: CpuUtil, columns: list[str | None], cells: list[str]) -> bool:
    """Set the values of ``cells`` in their ``columns``; whether one was a number."""
    got = False
    for name, cell in zip(columns, cells, strict=False):
        if name is None:
            continue  # a column no CpuUtil field holds
        value = decimal(cell)
        if value is not None:
            setattr(util, name, value)
            got = True
    return got


def _mean(cpu: str, rows: list[CpuUtil]) -> CpuUtil:
    util = CpuUtil(cpu=cpu, line=rows[-1].line)
    set_means(util, rows, ("us", "sy", "ni", "id", "wa", "hi", "si", "st"))
    return util


# ---------------------------------------------------------------- register


# top's task table header (ps has no PR/NI/VIRT/RES/SHR nor TIME+): a table pasted
# without top's summary lines is still top's
_TOP_TASK_HEADER = re.compile(
    r"^[ \t]*PID[ \t]+USER[ \t]+PR[ \t]+NI[ \t]+VIRT[ \t]+RES[ \t]+SHR[ \t]+S[ \t]+"
    r"%CPU[ \t]+%MEM[ \t]+TIME\+[ \t]+COMMAND",
    re.M,
)


def _detect_top(head: str) -> bool:
    if "TIME+" in head and _TOP_TASK_HEADER.search(head):
        return True
    if "top - " not in head and "%Cpu" not in head:
        return False
    return re.search(r"^top - \d", head, re.M) is not None or (
        re.search(r"^%Cpu(\d+|\(s\))\s*:", head, re.M) is not None
    )


def _detect_mpstat(head: str) -> bool:
    return "%usr" in head and re.search(r"\sCPU\s+%usr\s+%nice\s+%sys", head) is not None


def _detect_sar(head: str) -> bool:
    return "%system" in head and re.search(r"\sCPU\s+%user\s+%nice\s+%system", head) is not None


def _text(text: str) -> str:
    return text


@register(
    "top",
    commands=(r"^top(\s|$)", r'^pt-summary section "Top Processes"'),
    # sos: sos_commands/process/top_-b_-n_1
    paths=(r"(^|/)top(_-?\w+)*(\.txt)?$", r"(^|/)processes$", r"(^|/)uptime$"),
    detect=_detect_top,
    priority=10,
)
def parse_top(text: str) -> CpuUsage:
    """Parse ``top -bn1`` (header, per-CPU lines, memory, process list).

    Sample input::

        top - 14:07:35 up 58 days, 13:55, 1 user, load average: 2.52, 2.84, 2.62
        %Cpu0 : 45.6 us, 19.3 sy, 0.0 ni, 4.9 id, 0.0 wa, 0.0 hi, 30.2 si, 0.0 st
        KiB Mem : 79179116+total, 38146384+free, 28456528+used, 12576206+buff/cache
    """
    return _parse_top(_text(text))


@register(
    "mpstat",
    # "mpstat -I SUM|CPU|SCPU|ALL" prints interrupt rates, no CPU table (unless -u or -A asks for it)
    commands=(r"^mpstat(?!\s(?:.*\s)?-I\s)(\s|$)", r"^mpstat\s(?:.*\s)?-[uA]\b"),
    paths=(r"(^|/)mpstat(_-?\w+)*(\.txt)?$", r"sos_commands/processor/mpstat"),
    detect=_detect_mpstat,
    priority=10,
)
def parse_mpstat(text: str) -> CpuUsage:
    """Parse ``mpstat -P ALL [interval count]``.

    Sample input::

        04:47:53     CPU    %usr   %nice    %sys %iowait    %irq   %soft  %steal  %guest  %gnice   %idle
        Average:     all    0.50    0.00    0.50    0.00    0.00    0.00    0.00    0.00    0.00   99.00
    """
    return _parse_table(_text(text), "mpstat")


@register(
    "sar_cpu",
    commands=(r"^sar\s+(.*\s)?-(u|P)\b",),
    # /var/log/sa/sarNN is the daily "sar -A" text report: its CPU table is read
    paths=(r"(^|/)sar(_-[uP]\w*)+(\.txt)?$", r"(^|/)sa/sar\d{1,2}$"),
    detect=_detect_sar,
    priority=10,
)
def parse_sar_cpu(text: str) -> CpuUsage:
    """Parse ``sar -u`` / ``sar -P ALL`` (OCR-damaged tables best effort).

    Sample input::

        04:47:55        CPU     %user     %nice   %system   %iowait    %steal     %idle
        04:47:56        all      0.00      0.00      1.00      0.00      0.00     99.00
    """
    return _parse_table(_text(text), "sar")

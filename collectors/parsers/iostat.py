"""Disk latency and utilisation -> :class:`DiskStats`, from ``iostat -x`` or a
tsar-style per-device history.

``iostat -x [interval count]`` (old and new column sets; the LAST report is
used, because the first one averages everything since boot; when the paste ends
inside the last report, a device whose row is cut, or that comes after the cut,
keeps the figures of the report before)::

    Device            r/s     w/s  rkB/s  wkB/s  r_await  w_await  aqu-sz  %util
    vda             50.19   21.54 1113.65 1012.48    0.28     0.35    0.02   0.67

Older sysstat prints ``Device:`` with ``await r_await w_await svctm %util``.
When ``await`` is missing (sysstat >= 12) it is computed from ``r_await`` and
``w_await`` weighted by ``r/s`` and ``w/s``.

tsar-like history (seed 004), one block per device::

    Time ---------------dm-0---------------
    Time rrqms wrqms %rrqm %wrqm rs ws rsecs wsecs rqsize rarqsz warqsz qusize await rawait wawait svctm util
    25/10/21-14:29 0.00 0.00 0.00 0.00 1.97 4.1K 15.73 69.6K 8.57 4.00 8.57 0.00 0.03 0.08 0.03 0.02 8.02

A report whose rows were too wide for a book's page or a terminal shows each
half under the other, header pair then row pairs (the right-hand half's header
holds no device name); the halves are put back side by side::

    Device: rrqm/s wrqm/s r/s w/s rMB/s
    sda 0.00 0.20 1.00 163.40 0.00
    wMB/s avgrq-sz avgqu-sz await r_await w_await svctm %util
    81.09 1010.19 142.74 866.47 97.60 871.17 6.08 100.00

For the tsar form each device gets the MEAN of its rows (a history, not one
report); ``line`` points at the device's title line. ``K``/``M`` suffixed
cells are scaled. ``lines`` keys: the device names.
"""

from __future__ import annotations

import re

from collectors.facts import ArtifactError, DiskStat, DiskStats, ParseError
from collectors.parsers import register

CUT_AT_HEADER = "output of iostat, cut: no device rows"
LAST_REPORT_CUT = "iostat: the last report is cut at its header; the one before it is read"
_CELL = re.compile(r"^(\d{1,15}(?:[.,]\d{1,6})?)([KMG])?$")
_SCALE = {None: 1.0, "K": 1e3, "M": 1e6, "G": 1e9}


def _tsar_device(line: str) -> str | None:
    """``Time ------dm-0------`` -> ``dm-0`` (no regex: a lazy group there backtracks)."""
    tokens = line.split()
    if (
        len(tokens) != 2
        or tokens[0] != "Time"
        or not tokens[1].startswith("-")
        or not tokens[1].endswith("-")
    ):
        return None
    return tokens[1].strip("-") or None


def _cell(token: str) -> float | None:
    m = _CELL.match(token)
    if not m:
        return None
    return float(m.group(1).replace(",", ".")) * _SCALE[m.group(2)]


def _iostat_stat(device: str, header: list[str], cells: list[str], line: int) -> DiskStat:
    values = {name: _cell(cell) for name, cell in zip(header, cells, strict=False)}
    stat = DiskStat(device=device, line=line)
    stat.r_await_ms = values.get("r_await")
    stat.w_await_ms = values.get("w_await")
    stat.await_ms = values.get("await")
    stat.util_pct = values.get("%util")
    if stat.await_ms is None and stat.r_await_ms is not None and stat.w_await_ms is not None:
        reads, writes = values.get("r/s") or 0.0, values.get("w/s") or 0.0
        stat.await_ms = _weighted_await(stat.r_await_ms, stat.w_await_ms, reads, writes)
    return stat


def _weighted_await(r_await: float, w_await: float, reads: float, writes: float) -> float:
    """The await of all requests from the read and write awaits, weighted by their rates (0 when idle)."""
    if reads + writes <= 0:
        return 0.0
    return round((r_await * reads + w_await * writes) / (reads + writes), 2)


# columns only iostat -x prints: a line of such names under the device rows is
# the right-hand half of a header wrapped in two
_RIGHT_HALF = frozenset(
    {"%util", "await", "r_await", "w_await", "svctm", "avgqu-sz", "aqu-sz", "avgrq-sz", "wMB/s", "wkB/s"}
)


def _right_half(line: str) -> bool:
    """Whether ``line`` is the right-hand half of a wrapped iostat header (names only)."""
    tokens = line.split()
    return not any(_cell(t) is not None for t in tokens) and not _RIGHT_HALF.isdisjoint(tokens)


def _rejoined(lines: list[str]) -> list[str]:
    """``lines`` with each report wrapped in two halves (a header and its device
    rows, then the rest of the header and the rows' other cells) put back side
    by side: the whole row on its device's line, its other half's line blank."""
    heads = [i for i, line in enumerate(lines) if line.lstrip().startswith("Device") and "%util" not in line]
    if not heads:
        return lines
    out = list(lines)
    for i in heads:
        _rejoin_at(out, i)
    return out


def _rejoin_at(out: list[str], i: int) -> None:
    """The report whose header is on line ``i`` put back side by side, if wrapped:
    its device rows, then the header's other half, then as many rows of cells."""
    left = i + 1
    while left < len(out) and _is_device_row(out[left].split()):
        left += 1
    rows = left - i - 1
    halves = out[left + 1 : left + 1 + rows]
    if not rows or len(halves) != rows or not _right_half(out[left]) or not all(map(_cells_only, halves)):
        return
    out[i] = f"{out[i]} {out[left].strip()}"
    for k, half in enumerate(halves, start=i + 1):
        out[k] = f"{out[k]} {half.strip()}"
    out[left : left + 1 + rows] = [""] * (rows + 1)


def _cells_only(line: str) -> bool:
    """A row's other half: numbers from its first token."""
    tokens = line.split()
    return bool(tokens) and _cell(tokens[0]) is not None


def _parse_iostat(lines: list[str]) -> DiskStats:
    reports = _Reports()
    for idx, line in enumerate(_rejoined(lines), start=1):
        tokens = line.split()
        if tokens:
            reports.read(tokens, idx)
    return reports.finish()


class _Reports:
    """iostat's reports, line by line: only the last one counts, and one the
    paste cut is completed from the report before it."""

    def __init__(self) -> None:
        self.out = DiskStats()
        self.header: list[str] | None = None  # the current report's columns (None under avg-cpu)
        self.previous: dict[str, DiskStat] = {}  # the devices of the report before
        self.cut: list[str] = []  # the devices whose row the paste cut

    def read(self, tokens: list[str], idx: int) -> None:
        """Read a non-blank line: a report's header, the CPU report's, or a device row."""
        if tokens[0] in ("Device:", "Device") and len(tokens) > 2:
            self.start_report(tokens[1:])
        elif tokens[0].startswith("avg-cpu"):
            self.header = None
        elif self.header is not None and _is_device_row(tokens):
            _add_device_row(self.out, tokens, self.header, idx, self.cut)

    def start_report(self, header: list[str]) -> None:
        """A new report starts: what was read so far becomes the report before."""
        self.header = header
        self.previous = {d.device: d for d in self.out.devices} or self.previous
        self.out.devices, self.out.lines, self.out.errors, self.cut = [], {}, [], []

    def finish(self) -> DiskStats:
        """The last report, completed from the one before when the paste cut it."""
        if self.previous and (self.cut or not self.out.devices):
            _fall_back_to_previous(self.out, self.previous)
        return self.out


def _add_device_row(out: DiskStats, tokens: list[str], header: list[str], idx: int, cut: list[str]) -> None:
    """A device's row of the current report; its device goes to ``cut`` when the paste cut the row."""
    stat = _iostat_stat(tokens[0], header, tokens[1:], idx)
    if _is_cut(out, tokens, header, idx):
        cut.append(stat.device)
    out.devices.append(stat)
    out.lines[stat.device] = idx


def _fall_back_to_previous(out: DiskStats, previous: dict[str, DiskStat]) -> None:
    """The paste ended inside the last report, or at its header: the report
    before it is the latest one whole, and completes it (said when it is all there is)."""
    if not out.devices:
        out.errors.append(ArtifactError("", LAST_REPORT_CUT))
    _complete_from_previous(out, previous)


def _is_device_row(tokens: list[str]) -> bool:
    """A device's name then numbers (not the ``Linux ...`` banner)."""
    return len(tokens) >= 2 and not tokens[0].startswith("Linux") and _cell(tokens[1]) is not None


def _is_cut(out: DiskStats, tokens: list[str], header: list[str], idx: int) -> bool:
    """A row cut mid-paste: what it holds is kept, the missing columns said."""
    if len(tokens) - 1 >= len(header):
        return False
    missing = ", ".join(header[len(tokens) - 1 :][:4])
    out.errors.append(ArtifactError("", f"iostat: row of {tokens[0]} cut mid-paste: no {missing}", idx))
    return True


def _complete_from_previous(out: DiskStats, previous: dict[str, DiskStat]) -> None:
    """The paste ended inside the last report: a device whose row was cut, or that the
    cut came before, keeps the figures of the report before (the latest it has)."""
    seen = {d.device for d in out.devices}
    for stat in out.devices:
        before = previous.get(stat.device)
        if before is not None:
            _fill_missing(stat, before)
    for device, before in previous.items():
        if device not in seen:
            out.devices.append(before)
            if before.line is not None:
                out.lines[device] = before.line


def _fill_missing(stat: DiskStat, before: DiskStat) -> None:
    """The latencies and utilisation ``stat`` lacks, taken from ``before``."""
    for name in ("r_await_ms", "w_await_ms", "await_ms", "util_pct"):
        if getattr(stat, name) is None:
            setattr(stat, name, getattr(before, name))


def _parse_tsar(lines: list[str]) -> DiskStats:
    out = DiskStats()
    device = None
    title_line = 0
    header: list[str] = []
    rows: list[dict[str, float | None]] = []
    for idx, line in enumerate(lines, start=1):
        title = _tsar_device(line)
        if title:
            _add_tsar_device(out, device, title_line, rows)
            device, title_line, header, rows = title, idx, [], []
            continue
        tokens = line.split()
        if not tokens or device is None:
            continue
        if tokens[0] == "Time":
            header = tokens[1:]
            continue
        row = _tsar_row(header, tokens)
        if row is not None:
            rows.append(row)
        elif header and rows:
            # prose after the table ends the device block
            _add_tsar_device(out, device, title_line, rows)
            device, rows = None, []
    _add_tsar_device(out, device, title_line, rows)
    return out


def _tsar_row(header: list[str], tokens: list[str]) -> dict[str, float | None] | None:
    """A time's row under the header (at least half its cells numbers), or None."""
    if not header or len(tokens) != len(header) + 1:
        return None
    cells = [_cell(t) for t in tokens[1:]]
    if sum(c is not None for c in cells) < len(cells) // 2:
        return None
    return dict(zip(header, cells, strict=True))


def _add_tsar_device(
    out: DiskStats, device: str | None, title_line: int, rows: list[dict[str, float | None]]
) -> None:
    """A device's block of tsar rows: the mean of each latency and the utilisation."""
    if device is None or not rows:
        return
    stat = DiskStat(device=device, line=title_line)
    for field, column in (
        ("await_ms", "await"),
        ("r_await_ms", "rawait"),
        ("w_await_ms", "wawait"),
        ("util_pct", "util"),
    ):
        values = [v for r in rows if (v := r.get(column)) is not None]
        if values:
            setattr(stat, field, round(sum(values) / len(values), 2))
    out.devices.append(stat)
    out.lines[device] = title_line


# a header wrapped in two halves: %util a few lines under the Device line
_WRAPPED_HEADER = re.compile(r"^Device:?[ \t][^\n]{0,400}\n(?:[^\n]{0,300}\n){1,16}?[^\n]{0,300}%util", re.M)


def _detect(head: str) -> bool:
    if "Time" in head and any(_tsar_device(line) for line in head.splitlines()):
        return True
    return "Device" in head and (_device_header(head) or _basic_report(head))


def _device_header(head: str) -> bool:
    """An iostat -x header: on one line, or wrapped in two halves (%util a few lines under)."""
    one_line = re.search(r"^Device:?\s.{0,400}?(%util|r_await)", head, re.M) is not None
    return one_line or ("%util" in head and _WRAPPED_HEADER.search(head) is not None)


# iostat's basic report (no -x): "Device: tps Blk_read/s Blk_wrtn/s Blk_read Blk_wrtn" (el6),
# "Device  tps  kB_read/s  kB_wrtn/s ..." (readk)
_BASIC_HEADER = re.compile(r"^Device:?[ \t]+tps[ \t]+(?:Blk|kB|MB)_read/s[ \t]+(?:Blk|kB|MB)_wrtn/s\b", re.M)


def _basic_report(head: str) -> bool:
    r"""The basic report's device header, with a device row under it.

    >>> _basic_report("Device: tps Blk_read/s Blk_wrtn/s Blk_read Blk_wrtn\nsda 2.97 0.53 76.33 8195 1180")
    True
    """
    m = _BASIC_HEADER.search(head)
    if m is None:
        return False
    row = head[m.end() :].split("\n", 2)[1:2]
    return bool(row) and _is_device_row(row[0].split())


@register(
    "iostat",
    commands=(r"^iostat(\s|$)", r"^tsar(\s|$)"),
    paths=(r"(^|/)iostat(_-?\w+)*(\.txt)?$",),
    detect=_detect,
    priority=10,
)
def parse_iostat(text: str) -> DiskStats:
    r"""Parse ``iostat -x`` (last report) or the tsar-style per-device history.

    Sample input::

        Device            r/s     w/s  r_await w_await  aqu-sz  %util
        nvme0n1        100.00  300.00     2.00    6.00    1.00  50.00

    A paste cut at the header of its last report reads the report before it,
    and says so:

    >>> stats = parse_iostat("Device: r/s w/s await %util\nvdb 0.00 3299.50 32.36 98.00\n\n"
    ...     "Device: r/s w/s")
    >>> [(d.device, d.await_ms, d.util_pct) for d in stats.devices], [e.message for e in stats.errors]
    ([('vdb', 32.36, 98.0)], ['iostat: the last report is cut at its header; the one before it is read'])

    Cut at its only header, it is said to be one:

    >>> parse_iostat("Linux 3.10.0-1160.11.1.el7.x86_64 (h) \t08/06/2021 \t_x86_64_\t(16 CPU)\n"
    ...     "\nDevice:            tp")
    Traceback (most recent call last):
    collectors.facts.ParseError: output of iostat, cut: no device rows
    """
    lines = text.splitlines()
    tsar = any(_tsar_device(line) for line in lines)
    out = _parse_tsar(lines) if tsar else _parse_iostat(lines)
    if not out.devices:
        raise _no_devices(lines, tsar=tsar)
    return out


def _no_devices(lines: list[str], *, tsar: bool) -> ParseError:
    """The error of a text without device rows: an iostat report cut at its header, or no table at all."""
    last = next((line for line in reversed(lines) if line.strip()), "")
    if not tsar and last.lstrip().startswith("Device"):
        return ParseError(CUT_AT_HEADER)
    return ParseError("no device rows found (expected iostat -x or a tsar device table)")

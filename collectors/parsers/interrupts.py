"""``/proc/interrupts`` -> :class:`Interrupts` (x86 and aarch64).

Sample input::

               CPU0       CPU1
      0:         45          0   IO-APIC-edge      timer
     10: 3287008667 3310445093     GICv3  27 Level     arch_timer
    NMI:        210         92   Non-maskable interrupts
    IPI0:2768808080 2844211768       Rescheduling interrupts
    ERR:          0
    MIS:          0

The header names the CPU columns. Each row is ``name:`` followed by up to one
count per CPU (``ERR``/``MIS`` carry a single total) and a free-text
description (controller, hwirq, trigger, device names). Rows are read with
``str.split`` only: a 192-CPU, several-MB file is parsed in linear time.
``lines`` keys: the row names (``0``, ``NMI``, ...), and ``header``.
"""

from __future__ import annotations

import re

from collectors.facts import ArtifactError, Interrupts, ParseError, TableCut
from collectors.numbers import ascii_digits
from collectors.parsers import UnreadLines, register

_MAX_DIGITS = 20
# the kernel's softirq vectors (include/linux/interrupt.h): /proc/softirqs has
# the layout of /proc/interrupts, and its rows are exactly these names
SOFTIRQ_NAMES = {
    "HI",
    "TIMER",
    "NET_TX",
    "NET_RX",
    "BLOCK",
    "BLOCK_IOPOLL",
    "IRQ_POLL",
    "TASKLET",
    "SCHED",
    "HRTIMER",
    "RCU",
}


def _detect(head: str) -> bool:
    first = head.lstrip("\n").split("\n", 1)[0].split()
    return bool(first) and first[0] == "CPU0" and all(t.startswith("CPU") for t in first[:4])


# rows that carry one total, not a count per CPU (x86 ERR/MIS, arm64 Err)
_TOTAL_ROWS = frozenset({"ERR", "MIS", "Err"})


def _cut_of(out: Interrupts) -> TableCut:
    if out.cut is None:
        out.cut = TableCut()
    return out.cut


def _cut_row(out: Interrupts, name: str, shown: int, line: int) -> None:
    cut = _cut_of(out)
    cut.rows.append(name)
    cut.shown[name] = shown
    cut.lines[name] = line
    cut.line = cut.line or line


def _header_continued(cpus: list[str], line: str) -> list[str] | None:
    """The header's CPU names when ``line`` goes on with it (a terminal broke it
    at its width, maybe inside a name: ``... CPU5       CPU`` then ``6       CPU7``)."""
    tokens = line.split()
    if not tokens or not all(t.startswith("CPU") or t.isdigit() for t in tokens):
        return None
    if not cpus[-1][3:].isdigit() and not line[:1].isspace():
        return [*cpus[:-1], cpus[-1] + tokens[0], *tokens[1:]]  # the name cut in two
    return [*cpus, *tokens] if tokens[0] == f"CPU{len(cpus)}" else None


def _row_parts(line: str) -> tuple[str, str] | None:
    """``(name, what follows the colon)`` of a ``name: counts ...`` row; None
    for another line (no colon, or no name of one word before it)."""
    name, sep, rest = line.partition(":")
    name = name.strip()
    return (name, rest) if sep and name and " " not in name else None


def parse_counter_table(text: str, out: Interrupts) -> None:
    """Shared by /proc/interrupts and /proc/softirqs: a ``CPUn`` header then ``name: n n ...``.

    A row with fewer counts than the header's CPUs was cut by the paste (or
    wrapped by a terminal): it is left out of ``rows`` and named in ``out.cut``,
    as are the lines that only continue the header or a row."""
    ncpu = 0
    for idx, line in enumerate(text.splitlines(), start=1):
        if not ncpu:
            ncpu = _read_header(out, line, idx)
            continue
        row = _row_parts(line)
        if row is None:
            _continuation(out, line, idx)
            ncpu = len(out.cpus)
        else:
            _read_row(out, row[0], row[1].split(), ncpu, idx)
    if not ncpu:
        raise ParseError("no 'CPU0 CPU1 ...' header line")


def _read_header(out: Interrupts, line: str, idx: int) -> int:
    """The number of CPUs of a ``CPU0 CPU1 ...`` header line, read into ``out``; 0 for another line."""
    tokens = line.split()
    if tokens[:1] != ["CPU0"] or not all(t.startswith("CPU") for t in tokens):
        return 0
    out.cpus = tokens
    out.lines["header"] = idx
    return len(tokens)


def _read_row(out: Interrupts, name: str, tokens: list[str], ncpu: int, idx: int) -> None:
    """``name: n n ... description``: its counts, or the row named as cut when it
    has fewer than the header's CPUs; a row without counts is stray text."""
    counts = _leading_counts(tokens[:ncpu])
    if not counts and tokens:
        return
    if len(counts) < ncpu and name not in _TOTAL_ROWS:
        _cut_row(out, name, len(counts), idx)
        return
    out.rows[name] = counts
    out.lines[name] = idx
    description = " ".join(tokens[len(counts) :])
    if description:
        out.descriptions[name] = description


def _continuation(out: Interrupts, line: str, idx: int) -> None:
    """A line that is no row: the header or a row a terminal wrapped onto it."""
    tokens = line.split()
    header = _header_continued(out.cpus, line) if _before_rows(out) else None
    if header is not None:
        out.cpus = header
    elif not (tokens and all(ascii_digits(t) for t in tokens)):
        return
    cut = _cut_of(out)
    cut.wrapped += 1
    cut.line = cut.line or idx


def _before_rows(out: Interrupts) -> bool:
    """Whether no row was read yet, whole or cut (a line may still go on with the header)."""
    return not out.rows and not (out.cut and out.cut.rows)


def _leading_counts(head: list[str]) -> list[int]:
    """The counts at the start of a row's cells, up to the first that is not one."""
    joined = "".join(head)
    # fast path for the usual full row
    if ascii_digits(joined) and len(joined) <= _MAX_DIGITS * len(head):
        return [int(token) for token in head]
    counts: list[int] = []
    for token in head:
        if not (ascii_digits(token) and len(token) <= _MAX_DIGITS):
            break
        counts.append(int(token))
    return counts


@register(
    "interrupts",
    commands=(r"cat\s+/proc/interrupts",),
    paths=(r"proc/interrupts$",),
    detect=_detect,
    priority=5,
)
def parse_interrupts(text: str) -> Interrupts:
    """Parse ``/proc/interrupts``.

    Sample input::

                   CPU0       CPU1
          0:         45          0   IO-APIC-edge      timer
        NMI:        210         92   Non-maskable interrupts
        ERR:          0
    """
    out = Interrupts()
    parse_counter_table(text, out)
    if not out.rows and out.cut is None:
        raise ParseError("no interrupt rows after the CPU header")
    if out.rows and set(out.rows) <= SOFTIRQ_NAMES:
        raise ParseError("only softirq rows: this is /proc/softirqs, not /proc/interrupts")
    return out


# an interrupt row without the header: "irq: count ... controller ... device", the
# controller named as the kernel prints it (PCI-MSI, IO-APIC, GICv3, ...-edge/-level)
_IRQ_ROW = re.compile(
    r"^[ \t]*\d{1,5}:(?:[ \t]+\d{1,20}){1,512}[ \t]+"
    r"(?:[\w-]*(?:MSI|APIC|GIC|PCI|edge|Edge|level|Level|fasteoi|XICS|XIVE)[\w-]*)\b"
)
# where a web page that dropped the line breaks put the next row: " 126: 987654321 0"
_NEXT_ROW = re.compile(r"(?<=\S)[ \t]+(?=\d{1,5}:[ \t]+\d{1,20}[ \t]+\d)")
NO_HEADER = "no CPU header row: the CPU columns are counted from the rows' width"


def _detect_rows(head: str) -> bool:
    """Interrupt rows pasted without the ``CPU0 CPU1`` header (``grep eth0
    /proc/interrupts``), the first line a row."""
    first = head.lstrip("\n").split("\n", 1)[0]
    return _IRQ_ROW.match(first) is not None and "CPU0" not in head


def _rows(text: str) -> tuple[list[tuple[str, list[str], int]], list[int]]:
    """``(name, tokens, line number)`` of each ``name: ...`` row; a line holding
    several rows (a web page dropped the line breaks) gives each of them. Also
    the numbers of the lines that only continue the row above (a terminal
    wrapped it: its CPU columns are unknown)."""
    rows: list[tuple[str, list[str], int]] = []
    wrapped: list[int] = []
    for number, line in enumerate(text.splitlines(), start=1):
        for piece in _row_pieces(line):
            row = _row_parts(piece)
            if row is not None:
                rows.append((row[0], row[1].split(), number))
            elif rows and _starts_with_count(piece):
                wrapped.append(number)
    return rows, wrapped


def _row_pieces(line: str) -> list[str]:
    """The rows a line holds: several where a web page dropped the line breaks between them."""
    return _NEXT_ROW.split(line) if _IRQ_ROW.match(line) else [line]


def _starts_with_count(piece: str) -> bool:
    """Whether the first word of ``piece`` is a count (the rest of a wrapped row)."""
    words = piece.split(maxsplit=1)
    return bool(words) and ascii_digits(words[0])


def _usual_width(widths: list[int]) -> int:
    """The width most rows have, the widest of equals (0 without rows): a row the
    paste cut has fewer counts and is left out."""
    return max(set(widths), key=lambda w: (widths.count(w), w)) if widths else 0


def _note_wrapped(out: Interrupts, wrapped: list[int]) -> None:
    """Count the lines that only continue a wrapped row as cut, from the first of them."""
    cut = _cut_of(out)
    cut.wrapped = len(wrapped)
    cut.line = min(cut.line or wrapped[0], wrapped[0])


def _add_grepped_row(
    out: Interrupts, name: str, tokens: list[str], ncpu: int, width: int, number: int
) -> None:
    """A grepped row of at least ``ncpu`` counts (its ``width``): the first
    ``ncpu`` of them, and what follows the counts as its description."""
    out.rows[name] = [int(t) for t in tokens[:ncpu]]
    out.lines[name] = number
    description = " ".join(tokens[width:])
    if description:
        out.descriptions[name] = description


def _cut_grepped_row(
    out: Interrupts, unread: UnreadLines, row: tuple[str, list[str], int], grep: str | None
) -> None:
    """A grepped row with fewer counts than the CPUs: cut. When the paste cut it
    before its name (counts only) and the command kept rows of ``grep``, it is
    still read as one of that word's vectors; else its line is not read."""
    name, tokens, number = row
    counts = len(_leading_counts(tokens))
    _cut_row(out, name, counts, number)
    if grep and tokens and counts == len(tokens):
        _name_by_grep(out, name, tokens, grep, number)
    else:
        unread.add(number, f"{name}:")


def _name_by_grep(out: Interrupts, name: str, tokens: list[str], grep: str, number: int) -> None:
    """A row the paste cut before its name (counts only, fewer than the CPUs):
    the command printed only rows holding ``grep``, so the row is one of its
    vectors; kept with the counts it shows, and said to be named by the grep."""
    out.rows[name] = [int(t) for t in tokens]
    out.lines[name] = number
    out.named_by_grep[name] = grep
    out.errors.append(
        ArtifactError(
            "",
            f"/proc/interrupts: row {name} cut after {len(tokens)} of {len(out.cpus)} CPUs, before its name: "
            f"a vector of {grep} (the command prints only rows holding {grep!r})",
            number,
        )
    )


@register(
    "interrupts_grep",
    commands=(r"^(e|f)?grep\s+(-\w+\s+)*\S+\s+/proc/interrupts\s*$",),
    detect=_detect_rows,
    priority=4,
)
def parse_interrupts_grep(text: str, *, grep: str | None = None) -> Interrupts:
    """``grep eth0 /proc/interrupts``: rows without the ``CPUn`` header. The
    CPU columns are the counts every row has (the shortest row's run of
    numbers), named ``CPU0``.. in order, and the result says the header was
    missing. Rows a web page put on one line are read as rows. ``grep`` is the
    word the command kept rows of (``cat /proc/interrupts | grep ens192``): a
    row the paste cut before its name is still one of its vectors.

    Sample input::

         27:  356669796          0          0          0   PCI-MSI 1048577-edge      eth0-TxRx-0
         28:  308170840          0          0          0   PCI-MSI 1048578-edge      eth0-TxRx-1

    >>> i = parse_interrupts_grep("125: 124856789 0 0 0 PCI-MSI 122880-edge eth0-TxRx-0 "
    ...     "126: 987654321 0 0 0 PCI-MSI 122881-edge eth0-TxRx-1")
    >>> i.cpus, i.rows["126"], i.descriptions["125"], i.errors[-1].message == NO_HEADER
    (['CPU0', 'CPU1', 'CPU2', 'CPU3'], [987654321, 0, 0, 0], 'PCI-MSI 122880-edge eth0-TxRx-0', True)
    """
    rows, wrapped = _rows(text)
    widths = [len(_leading_counts(tokens)) for _name, tokens, _n in rows]
    ncpu = _usual_width(widths)
    if ncpu == 0:
        raise ParseError("no 'irq: count count ...' rows")
    out = Interrupts(cpus=[f"CPU{i}" for i in range(ncpu)])
    unread = UnreadLines("/proc/interrupts: row cut (fewer counts than CPUs)")
    for (name, tokens, number), width in zip(rows, widths, strict=True):
        if width < ncpu:
            _cut_grepped_row(out, unread, (name, tokens, number), grep)
        else:
            _add_grepped_row(out, name, tokens, ncpu, width, number)
    if wrapped:
        _note_wrapped(out, wrapped)
    out.errors = [*out.errors, *unread.errors(), ArtifactError("", NO_HEADER, rows[0][2])]
    return out

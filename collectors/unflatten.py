"""Command outputs flattened onto one line, split back into their lines.

A web page that lost its line breaks (a blog's ``<pre>`` rendered as a
paragraph, a translated page, a copied search snippet) shows a command, its
output and often the next prompt on one line::

    # numactl --hardware available: 2 nodes (0-1) node 0 cpus: 0 1 2 3 node 0 size: 8157 MB ...
    [root@CENTOS ~]# cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor conservative [root@CENTOS ~]#

The layout of each command known here says where its lines began (the
``node N size:`` of numactl, the ``Mem:`` and ``Swap:`` rows of free, the
sample times of sar, the labels of lscpu): a line that starts with such a command (bare or behind
a shell prompt) and shows at least the layout's minimum of those places is cut
back into lines there. The pieces keep the original line's number, so every
original line is still accounted for once. A line that shows no layout is left
as it is.

A line that holds several prompts of one session (the same bracketed prompt
again, or a bare ``#``/``$`` before the same program again) is first cut before
each of them, and each piece is then read as above::

    [root@h ~]#lsmod | egrep kvm kvm_intel 162153 0 kvm 525259 1 kvm_intel [root@h ~]#ls /dev/kvm /dev/kvm

A table whose rows were flattened behind its header (iostat's ``Device:``
line) is cut into rows by the header's width: each row is a name and as many
figures as the header has columns.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field

from collectors.parsers import lscpu

# a shell prompt before the command: "[root@h ~]# ", "user@h:~$ ", "# ", "$ "
_PROMPT = r"(?:\[[^\]\n]{1,100}\][#$]|[\w.\-]{1,64}@[\w.\-]{1,64}(?::[^\s#$]{0,200})?[#$]|[#$])[ \t]?"
# a prompt left at the end of a flattened line (the next, empty, prompt of the session)
_TRAILING_PROMPT = re.compile(
    r"(?<![ \t])[ \t]+((?:\[[^\]\n]{1,100}\]|[\w.\-]{1,64}@[\w.\-]{1,64}(?::[^\s#$]{0,200})?)[#$])[ \t]*$"
)
FLAT_MIN_CHARS = 24  # a shorter line holds no command with output


@dataclass(frozen=True)
class Layout:
    """Where a command's output lines begin once its line breaks are lost.

    ``command`` matches the command and stops where its output starts (checked
    by a lookahead at the output's first line); ``breaks`` matches a blank
    before each later line of the output (one blank, so that a long run of
    blanks is not tried from each of its characters) (None: the output is one line); at
    least ``min_breaks`` of them must be seen."""

    name: str
    command: re.Pattern[str]
    breaks: re.Pattern[str] | None
    min_breaks: int
    # a piece that starts with this table header is cut into rows by the header's width
    table: re.Pattern[str] | None = field(default=None)


def _layout(
    name: str,
    command: str,
    output: str,
    breaks: str | None,
    min_breaks: int,
    *,
    bare: bool = False,
    gap: str = r"[ \t]+",
    table: str | None = None,
) -> Layout:
    """``bare``: the output may stand without its command (a page quoting the
    output after a sentence that names the command). ``gap``: what separates
    the command from its output (a page may have lost even the blank)."""
    cmd = rf"(?:(?P<cmd>{command}){gap})?" if bare else rf"(?P<cmd>{command}){gap}"
    return Layout(
        name,
        re.compile(rf"{cmd}(?={output})"),
        re.compile(breaks) if breaks else None,
        min_breaks,
        re.compile(table) if table else None,
    )


_SAR_TIME = r"\d{1,2}:\d\d:[ \t]?\d\d(?:[ \t]?[AP]M)?[ \t]"
_SYSFS_PATH = r"/(?:sys|proc)/[\w.:\-/]{1,300}"

# cpufreq-info's and cpupower frequency-info's lines, in their order
_CPUFREQ_LINES = (
    r"Report errors and bugs to|analyzing CPU \d{1,5}:|driver:|CPUs which (?:run|need)"
    r"|maximum transition latency:|hardware limits:|available (?:frequency steps|cpufreq governors):"
    r"|current policy:|The governor \""
    r"|current CPU frequency is|cpufreq stats:|boost state support:"
)
# iostat's figures: a number, maybe glued to the header before it ("%idle2.22")
_IOSTAT_DEVICE = r"Device:?[ \t]+(?:rrqm/s|r/s|tps|rkB/s)\b"

# the layouts known, tried in order on a line that starts with a command
LAYOUTS: tuple[Layout, ...] = (
    # numactl -H: "available: 2 nodes (0-1) node 0 cpus: ... node distances: node 0 1 0: 10 20 1: 20 10"
    _layout(
        "numactl",
        r"numactl[ \t]+(?:--hardware|-H)",
        r"available:[ \t]*\d{1,4}[ \t]+nodes?\b",
        r"[ \t](?=node \d{1,4} (?:cpus|size|free):|node distances:|\d{1,4}:[ \t]+\d{1,3}(?:[ \t]|$))"
        r"|(?<=distances:)[ \t]{1,8}(?=node \d)",
        3,
    ),
    # free [-h|-m|-g|-k|-w|-t]: "total used free shared buff/cache available Mem: ... Swap: ..."
    _layout(
        "free",
        r"free(?:[ \t]+-[a-z]{1,3})*",
        r"total[ \t]+used[ \t]+free\b",
        r"[ \t](?=Mem:|Swap:|Low:|High:|Total:|-/\+ buffers/cache:)",
        1,
    ),
    # sar -B (and its siblings): "12:00:08 AM pgpgin/s ... 12:10:05 AM 207.55 ... Average: ..."
    _layout(
        "sar",
        r"[Ss]ar(?:[ \t]+-[A-Za-z]{1,3}(?:[ \t]+[A-Z]{2,8})?)*(?:[ \t]+\d{1,5}){0,2}",
        _SAR_TIME,
        rf"[ \t](?={_SAR_TIME}|Average:|\[\.\.\.\])",
        2,
    ),
    # cpupower idle-info: "CPUidle driver: none CPUidle governor: menu analyzing CPU 0: CPU 0: No idle states"
    _layout(
        "cpupower idle-info",
        r"cpupower(?:[ \t]+-c[ \t]+\S{1,40})?[ \t]+idle-info",
        r"CPUidle driver:",
        r"[ \t](?=CPUidle governor:|analyzing CPU \d{1,5}:|CPU \d{1,5}: No idle states|Number of idle states:"
        r"|Available idle states:)",
        2,
    ),
    # cpufreq-info (cpufrequtils) and cpupower frequency-info: "cpufreq-info cpufrequtils 006:
    # cpufreq-info (C) Dominik Brodowski 2004-2009 Report errors ... analyzing CPU 0: driver: ..."
    _layout(
        "cpufreq-info",
        r"(?:sudo[ \t]+)?(?:cpufreq-info(?:[ \t]+-c[ \t]+\d{1,5})?"
        r"|cpupower(?:[ \t]+-c[ \t]+\S{1,40})?[ \t]+frequency-info)",
        r"cpufrequtils \d{1,4}:|analyzing CPU \d{1,5}:",
        rf"[ \t](?={_CPUFREQ_LINES})",
        4,
    ),
    # iostat: "iostat -x 1 Linux 2.6.33 (host) _i686_ (2 CPU) avg-cpu: %user ... %idle 5.47 ... Device: rrqm/s
    # ... %util sda 6.00 ..." (or "iostatLinux 4.18 ...", the blank lost too), or its device table alone
    _layout(
        "iostat",
        r"(?:sudo[ \t]+)?iostat(?:[ \t]+-[A-Za-z]{1,6}(?:[ \t]+[a-z]{2,4})?)*(?:[ \t]+\d{1,6}){0,2}",
        rf"Linux[ \t]?\d|avg-cpu:|{_IOSTAT_DEVICE}",
        rf"[ \t]?(?=avg-cpu:|{_IOSTAT_DEVICE})|(?<=%idle)[ \t]?(?=\d)",
        1,
        bare=True,
        gap=r"[ \t]*",
        table=_IOSTAT_DEVICE,
    ),
    # lscpu's summary, its command maybe left in the sentence above:
    # "Architecture: loongarch64 Byte Order: little endian CPU(s): 8 On-line CPU(s) list: 0-7 ..."
    _layout(
        "lscpu",
        r"lscpu",
        r"Architecture:[ \t]*\S",
        rf"[ \t](?=(?:{'|'.join(lscpu.SUMMARY_LABELS)}):)",
        4,
        bare=True,
    ),
    # cat of one sysfs or procfs value: "cat .../scaling_governor conservative"
    _layout(
        "cat value",
        rf"cat[ \t]+{_SYSFS_PATH}",
        r"\[?[\w.,\-]{1,64}\]?(?:[ \t]+\[?[\w.,\-]{1,64}\]?){0,15}(?:[ \t]+\[[^\]\n]{1,100}\][#$])?[ \t]*$",
        None,
        0,
    ),
)

_COMMAND_START = re.compile(
    rf"(?:{_PROMPT})?[ \t]*"
    r"(?=numactl|free|[Ss]ar|cpupower|cat|lscpu|Architecture:|sudo|cpufreq-info|iostat|Device)"
)


def unflattened(line: str) -> list[str] | None:
    """The lines of a command's output flattened onto ``line`` (the command
    line first, a trailing prompt last), or None when ``line`` shows no known
    layout.

    >>> unflattened("free total used free shared buff/cache available "
    ...     "Mem: 16479408 519496 10584704 854212 5375208 14714912 Swap: 20969464 0 20969464")[1:]
    ['total used free shared buff/cache available', 'Mem: 16479408 519496 10584704 854212 5375208 14714912', \
'Swap: 20969464 0 20969464']
    >>> unflattened("[root@CENTOS ~]# cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor "
    ...     "conservative [root@CENTOS ~]#")[1:]
    ['conservative', '[root@CENTOS ~]#']
    >>> unflattened("# numactl --hardware") is None
    True
    >>> unflattened("Architecture: loongarch64 Byte Order: little endian CPU(s): 8 "
    ...     "On-line CPU(s) list: 0-7 NUMA node(s): 1 NUMA node0 CPU(s): 0-7")
    ['Architecture: loongarch64', 'Byte Order: little endian', 'CPU(s): 8', 'On-line CPU(s) list: 0-7', \
'NUMA node(s): 1', 'NUMA node0 CPU(s): 0-7']
    >>> unflattened("[root@h ~]#lsmod | egrep kvm kvm_intel 162153 0 kvm 525259 1 kvm_intel "
    ...     "[root@h ~]#ls /dev/kvm /dev/kvm")
    ['[root@h ~]#lsmod | egrep kvm kvm_intel 162153 0 kvm 525259 1 kvm_intel', \
'[root@h ~]#ls /dev/kvm /dev/kvm']
    >>> unflattened("[root@server]#iostat -x 1 Linux 2.6.33 (laptop) _i686_ (2 CPU) avg-cpu: %user %nice "
    ...     "%system %iowait %steal %idle 5.47 0.50 8.96 48.26 0.00 36.82 Device: rrqm/s wrqm/s await %util "
    ...     "sda 6.00 273.00 10.57 84.40 sdb 0.00 4.00 1.58 18.80")
    ['[root@server]#iostat -x 1', 'Linux 2.6.33 (laptop) _i686_ (2 CPU)', \
'avg-cpu: %user %nice %system %iowait %steal %idle', '5.47 0.50 8.96 48.26 0.00 36.82', \
'Device: rrqm/s wrqm/s await %util', 'sda 6.00 273.00 10.57 84.40', 'sdb 0.00 4.00 1.58 18.80']
    """
    if len(line) < FLAT_MIN_CHARS:
        return None
    sessions = _cut_at_prompts(line)
    if sessions is None:
        return _unflattened_command(line)
    out: list[str] = []
    for piece in sessions:
        out += _unflattened_command(piece) or [piece]
    return out


def _unflattened_command(line: str) -> list[str] | None:
    """``line``, one command and its output, cut at its layout's places."""
    start = _COMMAND_START.match(line)
    if start is None:
        return None
    for layout in LAYOUTS:
        lines = _unflattened_as(layout, line, start.end())
        if lines is not None:
            return lines
    return None


def _unflattened_as(layout: Layout, line: str, pos: int) -> list[str] | None:
    """The lines of ``line`` when its command (from ``pos``) and output show
    ``layout`` (the command line first); else None."""
    m = layout.command.match(line, pos)
    if m is None:
        return None
    pieces = _cut(line[m.end() :], layout)
    if pieces is None:
        return None
    head = line[: m.end("cmd")] if m.group("cmd") is not None else line[: m.start()].strip()
    return [head, *pieces] if head else pieces


# a line that starts with a prompt: the same prompt again later, behind a blank or glued to the output
# (bracketed, user@host), or a bare "#"/"$" behind a blank before the same program again
_PROMPT_AGAIN = re.compile(
    r"(?P<p>\[[^\]\n]{1,100}\][#$]|[\w.\-]{1,64}@[\w.\-]{1,64}(?::[^\s#$]{0,200})?[#$])[ \t]?(?=[a-z./])"
    r"|(?P<bare>[#$])[ \t](?:sudo[ \t]+)?(?P<prog>[a-z][\w.\-]{0,40})[ \t]"
)


def _cut_at_prompts(line: str) -> list[str] | None:
    """``line`` cut before each repeat of the prompt it starts with; None when
    it holds one prompt only.

    >>> _cut_at_prompts("# sudo cpufreq-info -c 0 -g performance # sudo cpufreq-info -c 1 -g powersave")
    ['# sudo cpufreq-info -c 0 -g performance', '# sudo cpufreq-info -c 1 -g powersave']
    >>> _cut_at_prompts("# cat a.conf # the file") is None
    True
    """
    m = _PROMPT_AGAIN.match(line)
    if m is None:
        return None
    if m.group("p") is not None:
        again = re.escape(m.group("p")) + r"[ \t]?(?=[a-z./])"
    else:
        bare, prog = re.escape(m.group("bare")), re.escape(m.group("prog"))
        again = rf"(?<=[ \t]){bare}[ \t](?=(?:sudo[ \t]+)?{prog}[ \t])"
    starts = [p.start() for p in re.compile(again).finditer(line, m.end())]
    if not starts:
        return None
    bounds = [0, *starts, len(line)]
    pieces = [line[a:b].strip() for a, b in itertools.pairwise(bounds)]
    return [p for p in pieces if p]


def _cut(output: str, layout: Layout) -> list[str] | None:
    """``output`` cut at ``layout``'s breaks (and before a trailing prompt)."""
    output, tail = _without_trailing_prompt(output)
    if layout.breaks is None:
        return [output.strip(), *tail] if output.strip() else None
    pieces = [p.strip() for p in layout.breaks.split(output) if p.strip()]
    if layout.table is not None:
        pieces = [row for p in pieces for row in _table_rows(p, layout.table)]
    if len(pieces) - 1 < layout.min_breaks:
        return None
    return pieces + tail


_FIGURE = re.compile(r"\d{1,15}(?:[.,]\d{1,6})?")
_LAST_FIGURE = re.compile(r"(\d{1,15}(?:[.,]\d{1,6})?)(\|\S*)?")


def _table_rows(piece: str, header: re.Pattern[str]) -> list[str]:
    """``piece`` cut into its header and rows when it starts with ``header`` and
    rows follow the header on the same line: the header's columns after its
    first word say how many figures each row (a name, then figures) holds;
    what follows the last whole row is kept as one more piece.

    >>> _table_rows("Device: r/s w/s %util sda 1.00 2.00 3.00 sdb 0 0 0.5 next", re.compile("Device"))
    ['Device: r/s w/s %util', 'sda 1.00 2.00 3.00', 'sdb 0 0 0.5', 'next']
    >>> _table_rows("Device r/s %util nvme0n1 50.0 95.00| metric | unit |", re.compile("Device"))
    ['Device r/s %util', 'nvme0n1 50.0 95.00', '| metric | unit |']
    """
    if header.match(piece) is None:
        return [piece]
    words = piece.split()
    first = next(
        (
            i
            for i in range(1, len(words) - 1)
            if not _FIGURE.fullmatch(words[i]) and _FIGURE.fullmatch(words[i + 1])
        ),
        None,
    )
    if first is None or first < 2:
        return [piece]
    width = first  # the row's name and one figure per column
    out = [" ".join(words[:first])]
    i = first
    while i + width <= len(words) and not _FIGURE.fullmatch(words[i]):
        row = words[i : i + width]
        if not all(_FIGURE.fullmatch(w) for w in row[1:-1]):
            break
        last = _LAST_FIGURE.fullmatch(row[-1])
        if last is None:
            break
        out.append(" ".join([*row[:-1], last[1]]))
        i += width
        if last[2]:  # the next block's first cell glued to the last figure ("95.00| metric |")
            words[i - 1] = last[2]
            i -= 1
            break
    if i < len(words):
        out.append(" ".join(words[i:]))
    return out


def _without_trailing_prompt(output: str) -> tuple[str, list[str]]:
    """``output`` without the prompt that ends it, and that prompt (``[]``: none)."""
    prompt = _TRAILING_PROMPT.search(output)
    if prompt is None:
        return output, []
    return output[: prompt.start()], [prompt[1]]


# where a flattened line may be: a line that starts (behind a prompt or not)
# with a command of LAYOUTS and goes on with output on the same line (CANDIDATE
# at a line's start, CANDIDATE_NEXT after a newline: the search then skips to
# newlines at C speed)
_CANDIDATE = (
    rf"(?:{_PROMPT})?[ \t]*(?:"
    r"numactl[ \t]+(?:--hardware|-H)[ \t]+available:"
    r"|free\b[^\n]{0,20}total[ \t]+used"
    rf"|[Ss]ar\b[^\n]{{0,40}}?{_SAR_TIME}"
    r"|cpupower\b[^\n]{0,40}idle-info[ \t]+CPUidle"
    r"|(?:lscpu[ \t]+)?Architecture:[ \t]*\S{1,40}[ \t]+(?:CPU op-mode|Byte Order|CPU\(s\)|Address sizes)"
    rf"|cat[ \t]+{_SYSFS_PATH}[ \t]+[\w\[]"
    r"|(?:sudo[ \t]+)?(?:cpufreq-info|cpupower)\b[^\n]{0,40}?(?:cpufrequtils|analyzing CPU)"
    r"|(?:sudo[ \t]+)?iostat(?:\b|(?=Linux))[^\n]{0,40}?(?:Linux[ \t]?\d|avg-cpu:|Device)"
    r"|Device:?[ \t]+(?:rrqm/s|r/s|tps|rkB/s)\b[^\n]{0,400}?[ \t][A-Za-z][\w\-]{0,30}[ \t]\d)"
    # a line holding several prompts of one session (_cut_at_prompts)
    r"|\[[^\]\n]{1,100}\][#$][^\n]{1,2000}?\][#$][ \t]?[a-z./]"
    r"|[\w.\-]{1,64}@[\w.\-]{1,64}(?::[^\s#$]{0,200})?[#$]"
    r"[^\n]{1,2000}?@[\w.\-]{1,64}(?::[^\s#$]{0,200})?[#$][ \t]?[a-z./]"
    r"|[#$][ \t](?:sudo[ \t]+)?[a-z][^\n]{1,2000}?[ \t][#$][ \t][a-z]"
)
CANDIDATE = re.compile(_CANDIDATE)
CANDIDATE_NEXT = re.compile(rf"\n(?:{_CANDIDATE})")

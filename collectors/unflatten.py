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
"""

from __future__ import annotations

import re
from dataclasses import dataclass

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


def _layout(
    name: str, command: str, output: str, breaks: str | None, min_breaks: int, *, bare: bool = False
) -> Layout:
    """``bare``: the output may stand without its command (a page quoting the
    output after a sentence that names the command)."""
    cmd = rf"(?:(?P<cmd>{command})[ \t]+)?" if bare else rf"(?P<cmd>{command})[ \t]+"
    return Layout(name, re.compile(rf"{cmd}(?={output})"), re.compile(breaks) if breaks else None, min_breaks)


_SAR_TIME = r"\d{1,2}:\d\d:[ \t]?\d\d(?:[ \t]?[AP]M)?[ \t]"
_SYSFS_PATH = r"/(?:sys|proc)/[\w.:\-/]{1,300}"

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

_COMMAND_START = re.compile(rf"(?:{_PROMPT})?[ \t]*(?=numactl|free|[Ss]ar|cpupower|cat|lscpu|Architecture:)")


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
    """
    if len(line) < FLAT_MIN_CHARS:
        return None
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


def _cut(output: str, layout: Layout) -> list[str] | None:
    """``output`` cut at ``layout``'s breaks (and before a trailing prompt)."""
    output, tail = _without_trailing_prompt(output)
    if layout.breaks is None:
        return [output.strip(), *tail] if output.strip() else None
    pieces = [p for p in layout.breaks.split(output) if p.strip()]
    if len(pieces) - 1 < layout.min_breaks:
        return None
    return [p.strip() for p in pieces] + tail


def _without_trailing_prompt(output: str) -> tuple[str, list[str]]:
    """``output`` without the prompt that ends it, and that prompt (``[]``: none)."""
    prompt = _TRAILING_PROMPT.search(output)
    if prompt is None:
        return output, []
    return output[: prompt.start()], [prompt[1]]


def unflatten_lines(
    lines: list[str], first: list[int], last: list[int], found: list[int]
) -> tuple[list[str], list[int], list[int]] | None:
    """``lines`` with each flattened line of ``found`` (indexes, ascending) cut
    into its lines; the pieces keep the line's original span. None when no
    line was cut."""
    out_l: list[str] = []
    out_f: list[int] = []
    out_t: list[int] = []
    done = 0
    for i in found:
        pieces = unflattened(lines[i])
        if pieces is None:
            continue
        out_l += lines[done:i]
        out_f += first[done:i]
        out_t += last[done:i]
        out_l += pieces
        out_f += [first[i]] * len(pieces)
        out_t += [last[i]] * len(pieces)
        done = i + 1
    if not done:
        return None
    return out_l + lines[done:], out_f + first[done:], out_t + last[done:]


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
    rf"|cat[ \t]+{_SYSFS_PATH}[ \t]+[\w\[])"
)
CANDIDATE = re.compile(_CANDIDATE)
CANDIDATE_NEXT = re.compile(r"\n" + _CANDIDATE)

"""pt-summary's raw ``summary`` file -> :class:`KernelVersion`,
:class:`IoSchedulers` and the ``vm.swappiness`` :class:`Sysctl`; the sections
of its report.

percona-toolkit's ``pt-summary --save-samples DIR`` (and its test samples)
keeps what it collected in files; ``summary`` holds one ``name    value`` a
line, the report's header and its disk schedulers among them::

    platform    Linux
    kernel    2.6.18-274.el5
    release    CentOS release 5.7 (Final)
    virt    QEmu
    swappiness    60
    internal::disks    dm-0 dm-1 hda hdc md0
    internal::hda    [cfq] 128

Read: ``kernel`` and ``release`` (:mod:`collectors.parsers.kernel`), the
``internal::<device>`` scheduler rows (:mod:`collectors.parsers.sysfs_values`),
``swappiness`` when it has a value. The other rows (hostname, compiler,
threading, dentry-state, ...) are pt-summary's report header, which no rule
reads. The formatted report (``# Disk Schedulers And Queue Size ####``) is
read by section: each ``# <title> ####...`` line names what is printed under
it (:func:`report_section`, read as the command ``pt-summary section "<title>"``):
the header's ``Kernel |`` and ``Release |`` rows by the kernel parser, the
schedulers by the io_scheduler parser, the top processes by the top parser;
a section no parser reads is an output not used (:mod:`collectors.unused`).
"""

from __future__ import annotations

import contextlib
import re
from typing import Any

from collectors.facts import ParseError, Sysctl
from collectors.parsers import register
from collectors.parsers.kernel import parse_kernel
from collectors.parsers.sysfs_values import pt_summary_internal_schedulers

# the file's first row, then (within its first rows) one only pt-summary writes
_SUMMARY = re.compile(
    r"^platform[ \t]+\w[^\n]{0,40}\n(?:[^\n]{0,300}\n){0,40}?(?:internal::disks|OS_ARCH|CPU_ARCH)[ \t]"
)
_SWAPPINESS = re.compile(r"^swappiness[ \t]+(\d{1,3})[ \t]*$", re.M)
# the report's sections (bin/pt-summary's ``section`` calls), each printed as
# "# <title> " padded with "#" to 60 characters and more
REPORT_SECTIONS = frozenset(
    {
        "Percona Toolkit System Summary Report",
        "Processor",
        "Memory",
        "Mounted Filesystems",
        "Disk Schedulers And Queue Size",
        "Disk Partitioning",
        "Kernel Inode State",
        "LVM Volumes",
        "LVM Volume Groups",
        "RAID Controller",
        "Network Config",
        "Interface Statistics",
        "Network Devices",
        "Network Connections",
        "Top Processes",
        "Notable Processes",
        "Simplified and fuzzy rounded vmstat (wait please)",
        "Memory management",
        "Fusion-io Card",
        "The End",
    }
)
_SECTION_LINE = re.compile(r"^# (?P<title>[A-Z][^#\n]{1,60}?) #{4,}[ \t]*$")
SECTION_PREFIX = "pt-summary section "
SECTION_COMMAND = SECTION_PREFIX + '"{}"'


def report_section(line: str) -> str | None:
    """The command a section line of pt-summary's report stands for, or None.

    >>> report_section("# Disk Schedulers And Queue Size #############################")
    'pt-summary section "Disk Schedulers And Queue Size"'
    >>> report_section("# Introduction ####") is None
    True
    """
    m = _SECTION_LINE.match(line) if line.endswith("#") else None
    return SECTION_COMMAND.format(m["title"]) if m and m["title"] in REPORT_SECTIONS else None


def _detect(head: str) -> bool:
    return head.startswith("platform") and _SUMMARY.match(head) is not None


@register("pt_summary", detect=_detect, priority=6)
def parse_pt_summary(text: str) -> list[Any]:
    """Parse pt-summary's ``summary`` file.

    Sample input::

        platform    Linux
        kernel    3.0.0-16-generic
        swappiness    60
        internal::disks    sda sdb
        internal::sda    [cfq] 128

    >>> [type(r).__name__ for r in parse_pt_summary("platform    Linux\\nkernel    3.0.0-16-generic\\n"
    ...     "swappiness    60\\ninternal::disks    sda\\ninternal::sda    [cfq] 128")]
    ['KernelVersion', 'IoSchedulers', 'Sysctl']
    """
    if not _detect(text):
        raise ParseError("not pt-summary's summary file (no 'platform' row first)")
    results: list[Any] = []
    with contextlib.suppress(ParseError):  # no kernel row: the schedulers may still be there
        results.append(parse_kernel(text))
    schedulers = pt_summary_internal_schedulers(text)
    if schedulers.active:
        results.append(schedulers)
    m = _SWAPPINESS.search(text)
    if m is not None:
        line = text.count("\n", 0, m.start()) + 1
        results.append(
            Sysctl(values={"vm.swappiness": m.group(1)}, lines={"vm.swappiness": line}, setting_count=1)
        )
    if not results:
        raise ParseError("pt-summary's summary file without a kernel, scheduler or swappiness row")
    return results

"""``taskset -cp PID`` / ``taskset -p PID`` -> :class:`TaskAffinity` (one per pid line).

Sample input::

    pid 14175's current affinity list: 0,1
    pid 14175's current affinity mask: 3
    pid 2201's new affinity list: 8-15

The ``current`` line is the affinity the process had; after ``taskset -cp LIST
PID`` the ``new`` line is what it has now, and wins. A hex mask (``ff``,
``ffffffff,ffffffff`` on many-CPU hosts) is expanded into CPU ids. A loop over
threads (``for t in /proc/PID/task/*; do taskset -cp ${t##*/}; done``) gives one
result per task. ``lines`` keys: ``cpus``.
"""

from __future__ import annotations

import re

from collectors.cpulist import mask_cpus, parse_cpulist
from collectors.facts import ParseError, TaskAffinity
from collectors.parsers import register

_LINE = re.compile(r"pid (\d{1,10})'s (current|new) affinity (list|mask): ([0-9a-fA-Fx,\-\s]{1,20000})$")


def _mask_cpus(mask: str) -> list[int] | None:
    digits = mask.replace(",", "").strip().lower().removeprefix("0x")
    if not re.fullmatch(r"[0-9a-f]{1,16384}", digits):
        return None
    try:
        return mask_cpus(int(digits, 16))
    except ValueError:  # wider than any machine
        return None


@register(
    "taskset",
    commands=(r"^taskset\s+(?:.*\s)?(?:-\w*p\w*|--pid)\b",),
    detect=lambda head: (
        "affinity" in head
        and re.search(r"^pid \d+'s (current|new) affinity (list|mask): ", head, re.M) is not None
    ),
    priority=10,
)
def parse_taskset(text: str) -> list[TaskAffinity]:
    """One :class:`TaskAffinity` per pid (the ``new`` line wins over ``current``).

    Sample input::

        pid 14175's current affinity list: 0,1
    """
    found: dict[int, TaskAffinity] = {}
    for idx, line in enumerate(text.splitlines(), start=1):
        m = _LINE.search(line.strip())
        if not m:
            continue
        pid, state, form = int(m.group(1)), m.group(2), m.group(3)
        read = _cpus_and_mask(form, m.group(4).strip())
        if read is not None:
            _merge(found, pid, state, read, idx)
    if not found:
        raise ParseError('no "pid N\'s current affinity list" lines found')
    return list(found.values())


def _cpus_and_mask(form: str, value: str) -> tuple[list[int], str | None] | None:
    """The CPUs of an affinity ``list`` or ``mask`` (with the mask); None when unreadable."""
    if form == "list":
        try:
            return parse_cpulist(value), None
        except ValueError:
            return None
    cpus = _mask_cpus(value)
    return None if cpus is None else (cpus, value)


def _replaces(current: TaskAffinity, state: str, mask: str | None) -> bool:
    """Whether a pid's line replaces the one found for it: a ``new`` line, or a
    CPU list where a mask was."""
    return state == "new" or (mask is None and current.mask is not None)


def _merge(
    found: dict[int, TaskAffinity], pid: int, state: str, read: tuple[list[int], str | None], idx: int
) -> None:
    """A pid's line into ``found``: a ``new`` line wins over ``current``, a list over
    a mask (keeping the mask)."""
    cpus, mask = read
    current = found.get(pid)
    if current is None or _replaces(current, state, mask):
        affinity = TaskAffinity(pid=pid, cpus=cpus, mask=mask)
        if current is not None and current.mask and mask is None:
            affinity.mask = current.mask
        affinity.lines["cpus"] = idx
        found[pid] = affinity
    elif mask is not None and current.mask is None:
        current.mask = mask

"""CPU list syntax shared by lscpu, sysfs, libvirt and the kernel command line."""

from __future__ import annotations

from collections.abc import Iterable

MAX_CPU_ID = 65535


def parse_cpulist(text: str) -> list[int]:
    """Expand ``"0-3,8,10-11"`` (also ``"0 - 3"``, ``"^2"`` exclusions and
    lscpu's strides, ``"0-62:2"``) to sorted ids; raises ValueError.

    >>> parse_cpulist("0-3,8,^2")
    [0, 1, 3, 8]
    >>> parse_cpulist("0-6:2")
    [0, 2, 4, 6]
    """
    include: set[int] = set()
    exclude: set[int] = set()
    text = (text or "").replace(" ", "")
    budget = 4 * (MAX_CPU_ID + 1)  # ids expanded: overlapping ranges must not multiply the work
    for part in text.split(","):
        if not part:
            continue
        target = include
        if part.startswith("^"):
            target, part = exclude, part[1:]
        ids = _cpu_range(part)
        budget -= len(ids)
        if budget < 0:
            raise ValueError("CPU list expands to too many ids")
        target.update(ids)
    return sorted(include - exclude)


def _cpu_range(part: str) -> range:
    """``"4"``, ``"0-3"`` or ``"0-62:2"`` as the ids it names."""
    part, step = _stride(part)
    if "-" in part:
        lo_text, hi_text = part.split("-", 1)
        lo, hi = int(lo_text), int(hi_text)
    else:
        lo = hi = int(part)
    if lo > hi or hi > MAX_CPU_ID:
        raise ValueError(f"bad CPU range {part!r}")
    return range(lo, hi + 1, step)


def _stride(part: str) -> tuple[str, int]:
    """``part`` without its stride (``"0-62:2"``), and the stride (1 without one)."""
    if ":" not in part:
        return part, 1
    part, step_text = part.split(":", 1)
    step = int(step_text)
    if step < 1:
        raise ValueError("bad stride")
    return part, step


def mask_cpus(value: int) -> list[int]:
    """The CPU ids of the bits set in ``value`` (an affinity mask read as a
    number); ValueError for a bit past ``MAX_CPU_ID``.

    >>> mask_cpus(0xA03)
    [0, 1, 9, 11]
    """
    if value.bit_length() > MAX_CPU_ID + 1:
        raise ValueError(f"CPU mask wider than {MAX_CPU_ID + 1} CPUs")
    return [i for i in range(value.bit_length()) if value >> i & 1]


def format_cpulist(cpus: Iterable[int]) -> str:
    """Compress ids to ``"0-3,8"``.

    >>> format_cpulist([0, 1, 2, 3, 8])
    '0-3,8'
    """
    runs: list[list[int]] = []  # [first, last] of each run of consecutive ids
    for cpu in sorted(set(cpus)):
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(f"{first}-{last}" if first != last else str(first) for first, last in runs)

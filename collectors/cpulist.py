"""CPU list syntax shared by lscpu, sysfs, libvirt and the kernel command line."""

from __future__ import annotations

from collections.abc import Iterable

MAX_CPU_ID = 65535


def parse_cpulist(text: str) -> list[int]:
    """Expand ``"0-3,8,10-11"`` (also ``"0 - 3"``, ``"^2"`` exclusions) to sorted ids.

    >>> parse_cpulist("0-3,8,^2")
    [0, 1, 3, 8]
    """
    include: set[int] = set()
    exclude: set[int] = set()
    text = (text or "").replace(" ", "")
    if not text:
        return []
    budget = 4 * (MAX_CPU_ID + 1)  # ids expanded: overlapping ranges must not multiply the work
    for part in text.split(","):
        if not part:
            continue
        target = include
        if part.startswith("^"):
            target, part = exclude, part[1:]
        if "-" in part:
            lo_s, hi_s = part.split("-", 1)
            lo, hi = int(lo_s), int(hi_s)
            if lo > hi or hi > MAX_CPU_ID:
                raise ValueError(f"bad CPU range {part!r}")
            budget -= hi - lo + 1
            if budget < 0:
                raise ValueError("CPU list expands to too many ids")
            target.update(range(lo, hi + 1))
        else:
            value = int(part)
            if value > MAX_CPU_ID:
                raise ValueError(f"CPU id too large: {value}")
            target.add(value)
    return sorted(include - exclude)


def format_cpulist(cpus: Iterable[int]) -> str:
    """Compress ids to ``"0-3,8"``.

    >>> format_cpulist([0, 1, 2, 3, 8])
    '0-3,8'
    """
    ids = sorted(set(cpus))
    ranges: list[str] = []
    start: int | None = None
    prev = 0  # read only once ``start`` is set, and set with it
    for cpu in ids:
        if start is None:
            start = prev = cpu
        elif cpu == prev + 1:
            prev = cpu
        else:
            ranges.append(f"{start}-{prev}" if start != prev else str(start))
            start = prev = cpu
    if start is not None:
        ranges.append(f"{start}-{prev}" if start != prev else str(start))
    return ",".join(ranges)
